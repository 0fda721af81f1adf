"""Numpy reference of the layers :mod:`autotiler.generators.cnn_conv` generates, bit-exact, on
whole CHW tensors, composed from the basic kernels' references (:mod:`cnn_reference`).

The geometry is computed here the plain way (the convolution over the whole input padded by
``CNN_EdgePaddingValue``, then the pooling over the whole convolution output padded likewise),
not with the generator's trimmed paddings and used extents, so the two are checked against each
other. The arithmetic follows the generator's choice of kernels:

* DP convolution (KOP_CONV_DP, KOP_CONV_DWDP): int32 accumulators = (Bias << NormBias) + sum of
  products (wrapping); reduced with the activation (``Norm = In_Q + Filter_Q - Out_Q``); then
  pooled (clipping again to [LB, UB] for ReLU/ReLUN);
* single precision (KOP_CONV): Out = Bias (as is), updated input feature after input feature by
  ``sat(roundnorm((Out << Norm) + conv, Norm))``; depth wise (KOP_CONV_DW):
  ``sat(roundnorm((Bias << NormBias) + conv, Norm))``; then pooled with the ReLU/ReLUN clip, or
  activated alone (Norm 0, the output's Q in UB for HSIGMOID/HSWISH).
"""

from __future__ import annotations

import numpy as np

from ..constants import KernelOper_T, PadType_T
from . import cnn_reference as R
from .cnn_geometry import CNN_EdgePaddingValue, CNN_LayerOutputDim, CNN_SetUpperLowerBounds

K = KernelOper_T
KACT = {K.KOP_NONE: R.KACT_NONE, K.KOP_RELU: R.KACT_NONE, K.KOP_RELUN: R.KACT_NONE, K.KOP_HSIGMOID: R.KACT_HSIGMOID,
        K.KOP_HSWISH: R.KACT_HSWISH, K.KOP_LEAKYRELU: R.KACT_LEAKY, K.KOP_SIGMOID: R.KACT_SIGMOID,
        K.KOP_TANH: R.KACT_TANH, K.KOP_SWISH: R.KACT_SWISH}
DTYPE = {1: np.int8, 2: np.int16}


def _bounds(act, size: int, relun: int, out_q: int) -> tuple:
    lb, ub = CNN_SetUpperLowerBounds(act, size, act != K.KOP_NONE, relun, out_q)
    if act in (K.KOP_HSIGMOID, K.KOP_HSWISH, K.KOP_SWISH):
        ub = out_q
    return lb, ub


def output_shape(InFeat, OutFeat, Width, Height, ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad, PoolOper, Fpx, Fpy,
                 Dpx, Dpy, Spx, Spy, PoolPad) -> tuple:
    """(OutFeat, Ho, Wo) of a layer."""
    _, _, wo, ho, *_ = CNN_LayerOutputDim(Width, Height, ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad, PoolOper,
                                          Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad)
    return OutFeat, ho, wo


def pool_layer(x, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ReLUOper=K.KOP_NONE, Out_Q: int = 0, ReluN: int = 6,
               PadType=PadType_T.PAD_BALANCED_LEFT) -> np.ndarray:
    """CNN_PoolReLU on x [F, H, W] (int8/int16): the pooling (with the ReLU/ReLUN clip), or with
    PoolOper KOP_NONE the activation alone."""
    x = np.asarray(x)
    size = x.dtype.itemsize
    act = K(ReLUOper)
    if PoolOper == K.KOP_NONE:
        lb, ub = _bounds(act, size, ReluN, Out_Q)
        return R.act_only(x, KACT[act], lb, ub)
    h, w = x.shape[1:]
    _, _, _, _, _, _, ppw, pph = CNN_LayerOutputDim(w, h, K.KOP_NONE, 1, 1, 1, 1, 1, 1, 0, PoolOper, Fpx, Fpy, Dpx,
                                                    Dpy, Spx, Spy, PoolPad)
    pad = CNN_EdgePaddingValue(PadType, ppw, pph)
    clip = act in (K.KOP_RELU, K.KOP_RELUN)
    lb, ub = _bounds(act, size, ReluN, Out_Q) if clip else (0, 0)
    return R.pool(x, (Fpx, Fpy), (Spx, Spy), (Dpx, Dpy), pad, avg=PoolOper == K.KOP_AVGPOOL, relu=clip, lb=lb, ub=ub)


def conv_pool_relu(In, Filter, Bias, In_Q, Filter_Q, Bias_Q, Out_Q, ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad,
                   PoolOper=K.KOP_NONE, Fpx=1, Fpy=1, Dpx=1, Dpy=1, Spx=1, Spy=1, PoolPad=0, ReLUOper=K.KOP_NONE,
                   ReluN: int = 6, PadType=PadType_T.PAD_BALANCED_LEFT, ForceDPconv: int = -1) -> np.ndarray:
    """CNN_ConvolutionPoolReLU on In [InFeat, H, W], Filter [OutFeat, InFeat, Fcy, Fcx] (depth
    wise [Feat, Fcy, Fcx]), Bias [OutFeat]: Out [OutFeat, Ho, Wo], int8 or int16 as In."""
    In, Filter, Bias = np.asarray(In), np.asarray(Filter), np.asarray(Bias)
    size = In.dtype.itemsize
    conv = K(ConvOper)
    if ForceDPconv == 1:
        conv = {K.KOP_CONV: K.KOP_CONV_DP, K.KOP_CONV_DW: K.KOP_CONV_DWDP}.get(conv, conv)
    elif ForceDPconv == 0:
        conv = {K.KOP_CONV_DP: K.KOP_CONV, K.KOP_CONV_DWDP: K.KOP_CONV_DW}.get(conv, conv)
    dp, dw = conv in (K.KOP_CONV_DP, K.KOP_CONV_DWDP), conv in (K.KOP_CONV_DW, K.KOP_CONV_DWDP)
    act, pool = K(ReLUOper), K(PoolOper) != K.KOP_NONE
    h, w = In.shape[1:]
    _, _, _, _, pcw, pch, _, _ = CNN_LayerOutputDim(w, h, conv, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad, K.KOP_NONE,
                                                    1, 1, 1, 1, 1, 1, 0)
    pad = CNN_EdgePaddingValue(PadType, pcw, pch)
    geo = dict(pad=pad, stride=(Scx, Scy), dilation=(Dcx, Dcy))
    norm, norm_bias = In_Q + Filter_Q - Out_Q, In_Q + Filter_Q - Bias_Q
    lb, ub = _bounds(act, size, ReluN, Out_Q)
    if dp:
        if dw:
            acc = R.conv(In, Filter, None, "dwdp", bias=Bias, norm_bias=norm_bias, **geo)
        else:
            ho, wo = [R.out_dim(n, f, s, d, a, b) for n, f, s, d, a, b in
                      ((h, Fcy, Scy, Dcy, pad[2], pad[3]), (w, Fcx, Scx, Dcx, pad[0], pad[1]))]
            acc = R.conv(In, Filter, R.set_bias(Bias, wo, ho, norm_bias, dp=True), "dp", **geo)
        y = R.dp_reduct(acc, norm, KACT[act], lb, ub, In.dtype)
    else:
        if dw:
            y = R.conv(In, Filter, None, "dw", norm=norm, bias=Bias, norm_bias=norm_bias, **geo)
        else:
            ho, wo = [R.out_dim(n, f, s, d, a, b) for n, f, s, d, a, b in
                      ((h, Fcy, Scy, Dcy, pad[2], pad[3]), (w, Fcx, Scx, Dcx, pad[0], pad[1]))]
            y = R.conv(In, Filter, R.set_bias(Bias, wo, ho), "sp", norm=norm, **geo)
        if act != K.KOP_NONE and not pool:
            y = R.act_only(y, KACT[act], lb, ub)
    if pool:
        clip_act = act if act in (K.KOP_RELU, K.KOP_RELUN) else K.KOP_NONE
        y = pool_layer(y, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, clip_act, Out_Q, ReluN, PadType)
    return y


def grouped_conv_pool_relu(In, Filter, Bias, GroupIn: int, GroupOut: int, **layer) -> np.ndarray:
    """CNN_GroupedConvolutionPoolReLU: each group of GroupIn input features through its filters
    (Filter [NGroups*GroupOut, GroupIn, Fcy, Fcx]) into GroupOut output features."""
    In, Filter, Bias = np.asarray(In), np.asarray(Filter), np.asarray(Bias)
    groups = In.shape[0] // GroupIn
    outs = [conv_pool_relu(In[g * GroupIn:(g + 1) * GroupIn], Filter[g * GroupOut:(g + 1) * GroupOut],
                           Bias[g * GroupOut:(g + 1) * GroupOut], **layer) for g in range(groups)]
    return np.concatenate(outs, axis=0)


__all__ = ["conv_pool_relu", "pool_layer", "grouped_conv_pool_relu", "output_shape", "DTYPE"]
