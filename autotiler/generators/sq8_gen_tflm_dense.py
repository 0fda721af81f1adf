"""The SQ8 generators' implementations for TensorFlow Lite Micro's requantisation (Scale_DataSize 4, HWC): linear, element-wise and matrix products.

Called by :mod:`.sq8_generators` with the generator's :class:`.sq8_common.Sq8Setup` (checker,
control fields, requantisation) then the generator's arguments after ``Ctrl``, in order. Each
declares one user kernel through the public model API and returns 1 (0 when no tiling fits with
AT_KERNEL_NOSOLUTION_ERROR off). The arithmetic is TFLM's, bit for bit (:mod:`.sq8_tflm`; the C in
``cnn_kernels/CNN_SQ8_Linear.c``, ``CNN_SQ8_Eltwise.c``, ``CNN_SQ8_MatMul.c``); every per-layer
constant the kernels read besides the per-channel Scale/ScaleN is a word of the layer's Infos
(:mod:`.sq8_infos`), which the helpers below build from :class:`.sq8_tflm.QParams`:

* ``CNN_LinearAct_SQ8``: TFLite FULLY_CONNECTED. ``Name(In, Filter, Bias, Out, Scale, ScaleN,
  Infos)``, Filter ``[OutDim][InDim]``, int32 Bias, Scale/ScaleN the per-output Q31 multipliers and
  shifts (:func:`linear_constants`); Infos IN_ZP, OUT_ZP, ACT_MIN, ACT_MAX. Output channels in chunks
  with their filter rows (``KerParLinear_TFLM_SQ8``, the input whole); if that does not fit, one
  output at a time with the input in tiles, int32 partial sums per core
  (``KerLinearDP_TFLM_SQ8`` + ``KerLinearReduct_TFLM_SQ8``; Ctrl ``FORCEDPCONV`` 1 asks for it).
* ``CNN_MatAddAct_SQ8`` / ``CNN_MatSubAct_SQ8`` / ``CNN_MatEltMulAct_SQ8``: TFLite ADD / SUB / MUL
  on equal shapes, ``Name(In1, In2, Out, Infos)`` (:func:`add_infos`, :func:`sub_infos`,
  :func:`mul_infos`), tiled over items.
* ``CNN_TensorVectMultAct_SQ8``: TFLite MUL of an HWC ``[H][W][Feat]`` tensor by a ``[Feat]`` vector
  broadcast over the pixels (squeeze-and-excitation), ``Name(In1, In2, Out, Infos)``
  (:func:`mul_infos`), tiled over pixels.
* ``CNN_MatMulAct_SQ8``: ``Out[l][j] = clamp(MBQM(Bias[l] + sum_k In1[l][k] (In2[k][j] - IN2_ZP),
  Scale[l], ScaleN[l]) + OUT_ZP)``: TFLite FULLY_CONNECTED applied to every column of In2 (a 1x1
  convolution whose weights are In1's lines; :func:`mat_mul` is its numpy reference,
  :func:`mat_mul_constants` its constants). The original's user kernel order ``Name(In2, In1, Bias,
  Out, Scale, ScaleN, Infos)``, Bias absent for ``*_NOBIAS*``, Scale/ScaleN for ``*_SCALE_SCALAR*``
  (then Infos MULT/SHIFT); ``*_TRANSPOSED``: In2 given as ``[ColM2][LineM2]``. Tiled over lines of
  In1 and Out with In2 whole in L1; if In2 does not fit, over columns of In2 (lines when transposed)
  and Out with In1 whole. In1 is symmetric (TFLite weights): BATCH_MATMUL's In1 zero point is not
  supported.

The activation is the clamp to Infos's ``[ACT_MIN, ACT_MAX]`` (TFLite fuses no other): ActOper
KOP_NONE, KOP_RELU, KOP_RELUN, KOP_RELUM, KOP_RELUMN all mean "clamp to Infos's range" (the range
comes with the constants: :func:`.sq8_tflm.activation_range`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..api import (
    AddKernelArgDim,
    AddKernelInfos,
    AT_GetKernelCtrl,
    AT_SetKernelCtrl,
    Bindings,
    Call,
    Calls,
    CArgs,
    Imm,
    IterFixedSpace,
    IterParSpace,
    IterTiledSpace,
    K_Arg,
    K_ArgPar,
    Ker_IteratorIndex,
    KerArg,
    KerArgs,
    KerArgSpace,
    KernelIterSpace,
    TCArg,
    UserKernel,
)
from ..constants import (
    AT_GraphCtrl_T,
    AT_KernelInfo_T,
    KernelArgSelect_T,
    KernelCallLocationT,
    KernelIteratorT,
    Object_Type_T,
    Tile_Orientation_T,
)
from ..constants import KernelArgConstraints_T as C
from ..constants import KernelOper_T as K
from . import sq8_tflm as T
from .cnn_ctrl import DEFAULT
from .sq8_infos import AT_INF_TFLM_DIM, tflm_infos

O = Object_Type_T
D0, T0 = KernelIteratorT.KER_ITER_D0, KernelIteratorT.KER_ITER_TILE0
TILE_HOR, TILE_VER = Tile_Orientation_T.TILE_HOR, Tile_Orientation_T.TILE_VER
NOSOLUTION = AT_GraphCtrl_T.AT_KERNEL_NOSOLUTION_ERROR
_TILE, _TILE_W, _TILE_H = KernelArgSelect_T.KER_ARG_TILE, KernelArgSelect_T.KER_ARG_TILE_W, KernelArgSelect_T.KER_ARG_TILE_H
_PARTILE_SIZE = KernelArgSelect_T.KER_ARG_PARTILE_SIZE
_LOOP, _EPILOG = KernelCallLocationT.LOC_LOOP, KernelCallLocationT.LOC_LOOP_EPILOG
USHORT_MAX = 65535
ITEMS_MAX = (1 << 31) - 1
REDUCT_SLOTS = 8            # one int32 partial sum per core (gap_ncore() <= 8)
CLAMPS = (K.KOP_NONE, K.KOP_RELU, K.KOP_RELUN, K.KOP_RELUM, K.KOP_RELUMN)
_SC, _INT = "signed char * __restrict__", "int * __restrict__"
# CNN_MatMulAct_SQ8's opers: (bias, per-line scale, In2 transposed)
MATMUL_OPERS = {
    K.KOP_MATMUL: (True, True, False),
    K.KOP_MATMUL_NOBIAS: (False, True, False),
    K.KOP_MATMUL_SCALE_SCALAR: (True, False, False),
    K.KOP_MATMUL_NOBIAS_SCALE_SCALAR: (False, False, False),
    K.KOP_MATMUL_TRANSPOSED: (True, True, True),
    K.KOP_MATMUL_NOBIAS_TRANSPOSED: (False, True, True),
    K.KOP_MATMUL_SCALE_SCALAR_TRANSPOSED: (True, False, True),
    K.KOP_MATMUL_NOBIAS_SCALE_SCALAR_TRANSPOSED: (False, False, True),
}


# ---------------------------------------------------------------------------------------------
# Constants for callers (from TFLite's quantisation parameters)


@dataclass(frozen=True)
class LinearConstants:
    """A linear layer's (or matrix product's) constants: per-output Q31 multipliers ``scale``
    (int32), shifts ``scale_n`` (int8) and the Infos bytes."""

    scale: np.ndarray
    scale_n: np.ndarray
    infos: np.ndarray


def _multipliers(in_scale: float, w_q: T.FilterQParams, out_q: T.QParams, channels: int) -> tuple:
    """Prepare's per-channel (M, shift): QuantizeMultiplier(double(s_in) s_w[c] / s_out), as
    sq8_tflm.fully_connected computes them."""
    return T.per_channel_multipliers(in_scale, w_q.per_channel(channels), out_q)


def linear_constants(in_q: T.QParams, w_q: T.FilterQParams, out_q: T.QParams, activation: str = "NONE",
                     channels: Optional[int] = None) -> LinearConstants:
    """CNN_LinearAct_SQ8's Scale, ScaleN and Infos (IN_ZP, OUT_ZP, ACT_MIN, ACT_MAX) for TFLite's
    FULLY_CONNECTED with fused ``activation`` ("NONE", "RELU", "RELU6", "RELU_N1_TO_1"); ``channels``
    (default: one per filter scale) repeats a per-tensor multiplier."""
    scale, scale_n = _multipliers(in_q.scale, w_q, out_q, channels or len(w_q.scales))
    lo, hi = T.activation_range(activation, out_q)
    return LinearConstants(scale, scale_n, tflm_infos(in_zp=in_q.zero_point, out_zp=out_q.zero_point, act_min=lo,
                                                      act_max=hi))


def mat_mul_constants(in2_q: T.QParams, w_q: T.FilterQParams, out_q: T.QParams, activation: str = "NONE",
                      lines: Optional[int] = None) -> LinearConstants:
    """CNN_MatMulAct_SQ8's Scale, ScaleN (per line of In1) and Infos (IN2_ZP, OUT_ZP, ACT_MIN,
    ACT_MAX, and MULT/SHIFT = the first line's multiplier, which the ``*_SCALE_SCALAR`` opers read)."""
    scale, scale_n = _multipliers(in2_q.scale, w_q, out_q, lines or len(w_q.scales))
    lo, hi = T.activation_range(activation, out_q)
    return LinearConstants(scale, scale_n, tflm_infos(in2_zp=in2_q.zero_point, out_zp=out_q.zero_point,
                                                      act_min=lo, act_max=hi, mult=int(scale[0]),
                                                      shift=int(scale_n[0])))


def add_infos(in1_q: T.QParams, in2_q: T.QParams, out_q: T.QParams, activation: str = "NONE") -> np.ndarray:
    """CNN_MatAddAct_SQ8's Infos for TFLite's ADD: IN_ZP, IN2_ZP, OUT_ZP, ACT_MIN/MAX, LEFT_SHIFT (20),
    MULT2/SHIFT2 (input 1), MULT3/SHIFT3 (input 2), MULT/SHIFT (output), from Prepare
    (:func:`.sq8_tflm.add_params`)."""
    p = T.add_params(in1_q, in2_q, out_q)
    lo, hi = T.activation_range(activation, out_q)
    return tflm_infos(in_zp=in1_q.zero_point, in2_zp=in2_q.zero_point, out_zp=out_q.zero_point, act_min=lo,
                      act_max=hi, left_shift=p.left_shift, mult2=p.input1.multiplier, shift2=p.input1.shift,
                      mult3=p.input2.multiplier, shift3=p.input2.shift, mult=p.output.multiplier,
                      shift=p.output.shift)


def sub_infos(in1_q: T.QParams, in2_q: T.QParams, out_q: T.QParams, activation: str = "NONE") -> np.ndarray:
    """CNN_MatSubAct_SQ8's Infos for TFLite's SUB: the words of :func:`add_infos` (SUB's Prepare is ADD's)."""
    return add_infos(in1_q, in2_q, out_q, activation)


def mul_infos(in1_q: T.QParams, in2_q: T.QParams, out_q: T.QParams, activation: str = "NONE") -> np.ndarray:
    """CNN_MatEltMulAct_SQ8's / CNN_TensorVectMultAct_SQ8's Infos for TFLite's MUL: IN_ZP, IN2_ZP, OUT_ZP,
    ACT_MIN/MAX, MULT/SHIFT = QuantizeMultiplier(double(s1) s2 / s_out) (as :func:`.sq8_tflm.mul`)."""
    r = T.quantize_multiplier(float(in1_q.scale) * float(in2_q.scale) / float(out_q.scale))
    lo, hi = T.activation_range(activation, out_q)
    return tflm_infos(in_zp=in1_q.zero_point, in2_zp=in2_q.zero_point, out_zp=out_q.zero_point, act_min=lo,
                      act_max=hi, mult=r.multiplier, shift=r.shift)


def mat_mul(in1: np.ndarray, in2: np.ndarray, bias: Optional[np.ndarray], in2_q: T.QParams, w_q: T.FilterQParams,
            out_q: T.QParams, activation: str = "NONE", transposed: bool = False) -> np.ndarray:
    """CNN_MatMulAct_SQ8's numpy reference: In1 ``[L][K]`` int8 (symmetric), In2 ``[K][C]`` (``[C][K]``
    transposed), ``Out[l][j] = clamp(MBQM(Bias[l] + sum_k In1[l][k] (In2[k][j] - zp2), M_l, s_l) + zp_out)``
    with ``M_l, s_l`` = QuantizeMultiplier(double(s2) s_w[l] / s_out): TFLite's FULLY_CONNECTED of each
    column of In2 by the weights In1 (``fully_connected(In2.T, In1, ...)`` transposed)."""
    a = np.asarray(in1).astype(np.int64)
    b = np.asarray(in2).astype(np.int64)
    b = b.T if transposed else b
    acc = T.wrap32(a @ (b - int(in2_q.zero_point)))
    if bias is not None:
        acc = T.wrap32(acc + np.asarray(bias, np.int64)[:, None])
    mult, shift = _multipliers(in2_q.scale, w_q, out_q, a.shape[0])
    res = T.multiply_by_quantized_multiplier(acc, T.i64(mult)[:, None], T.i64(shift)[:, None]) + int(out_q.zero_point)
    lo, hi = T.activation_range(activation, out_q)
    return np.clip(res, lo, hi).astype(np.int8)


# ---------------------------------------------------------------------------------------------
# Shared checks


def _oper(setup, value, param: str) -> K:
    """Any KernelOper_T (member, value or name)."""
    return setup.chk.oper(value, param, tuple(K), "a KernelOper_T")


def _act(setup, ActOper) -> K:
    """The activation: a clamp to Infos's range; the others TFLite does not fuse."""
    act = _oper(setup, ActOper, "ActOper")
    if act not in CLAMPS:
        setup.chk.fail(f"ActOper {act.name}: TFLite has no fused {act.name} for this operator (its fused "
                       "activations are clamps, to Infos's ACT_MIN, ACT_MAX)",
                       "generate CNN_Act_SQ8 after, or use one of " + ", ".join(a.name for a in CLAMPS))
    return act


def _ctrl(setup, force_dp: bool = False) -> None:
    """The Ctrl fields these generators read (FORCEDPCONV: the linear layer, ``force_dp``); refuse the
    others set."""
    c = setup.ctrl
    if not force_dp and c.force_dp_conv != DEFAULT:
        setup.chk.fail("ForceDPconv does not apply: only CNN_LinearAct_SQ8 has a 32-bit partial-sum form",
                       'leave "FORCEDPCONV" at -1')
    if c.tile_orientation not in (DEFAULT, int(TILE_HOR)):
        setup.chk.fail("TileOrientation TILE_VER is not supported yet with TensorFlow Lite Micro's requantisation: "
                       "these kernels tile lines of HWC data", 'leave "TILEORIENTATION" at -1 or TILE_HOR')
    if c.parallel_features == 0:
        setup.chk.fail("ParallelFeatures 0 is not supported yet with TensorFlow Lite Micro's requantisation: the "
                       "kernels share outputs, items or lines between the cores", 'leave "PARALLELFEATURES" at -1 or 1')
    if c.pad_type != DEFAULT:
        setup.chk.fail("PadType does not apply: this layer has no padding", 'leave "PADTYPE" at -1')
    if c.relun != DEFAULT:
        setup.chk.fail("ReluN is not read with TensorFlow Lite Micro's requantisation: the clamp is Infos's ACT_MIN, "
                       "ACT_MAX", 'leave "RELUN" at -1 and build the Infos with the activation\'s range')


def _dim(setup, value, param: str, hint: str = "the basic kernels take sizes as unsigned short") -> int:
    return setup.chk.integer(value, param, 1, USHORT_MAX, hint=hint)


def _solve(attempts: list):
    """Declare the user kernel with each builder in turn, AT_KERNEL_NOSOLUTION_ERROR off for all but
    the last (the script's own setting restored). Returns the tiling, or None."""
    saved = AT_GetKernelCtrl(NOSOLUTION)
    try:
        for i, build in enumerate(attempts):
            AT_SetKernelCtrl(NOSOLUTION, saved if i == len(attempts) - 1 else 0)
            tiling = build()
            if tiling is not None:
                return tiling
    finally:
        AT_SetKernelCtrl(NOSOLUTION, saved)
    return None


def _infos_arg(space_iter=T0) -> KerArg:
    """The layer's Infos: one constant buffer, whole in L1."""
    return KerArg("Infos", KerArgSpace(1, space_iter), O.O_IN | O.O_BUFF | O.O_NTILED | O.O_CONST, 1, 1,
                  AT_INF_TFLM_DIM, 0, 0, 0, "Infos")


def _whole(name: str, items: int, size: int, flags=O.O_IN) -> KerArg:
    """An argument whole in L1 (a buffer), loaded once."""
    return KerArg(name, KerArgSpace(1, T0), flags | O.O_BUFF | O.O_NTILED, 1, 1, items * size, 0, 0, 0, name)


# ---------------------------------------------------------------------------------------------
# Linear


def linear_act(setup, Bias_DataSize, Scale_DataSize, InDim, OutDim, LinearOper, ActOper) -> int:
    """CNN_LinearAct_SQ8, TFLM: ``Name(In, Filter, Bias, Out, Scale, ScaleN, Infos)``."""
    chk = setup.chk
    _ctrl(setup, force_dp=True)
    bias_size = chk.integer(Bias_DataSize, "Bias_DataSize")
    if bias_size != 4:
        chk.fail(f"Bias_DataSize {bias_size} is not supported with TensorFlow Lite Micro's requantisation: TFLite's "
                 "int8 FULLY_CONNECTED has int32 biases", "use Bias_DataSize 4")
    in_dim, out_dim = _dim(setup, InDim, "InDim"), _dim(setup, OutDim, "OutDim")
    chk.oper(LinearOper, "LinearOper", (K.KOP_LINEAR,), "a linear layer")
    _act(setup, ActOper)
    name = chk.name
    cargs = CArgs(7, TCArg(_SC, "In"), TCArg(_SC, "Filter"), TCArg(_INT, "Bias"), TCArg(_SC, "Out"),
                  TCArg(_INT, "Scale"), TCArg(_SC, "ScaleN"), TCArg(_SC, "Infos"))

    def per_output(arg: str, size: int, flags) -> KerArg:
        return KerArg(arg, KerArgSpace(1, D0), flags, 1, 1, size, 0, 0, 0, arg)

    def output_parallel():
        return UserKernel(name,
            KernelIterSpace(2, IterParSpace(D0, out_dim, 8), IterTiledSpace(T0)),
            TILE_HOR,
            cargs,
            Calls(1,
                Call("KerParLinear_TFLM_SQ8", _LOOP,
                    Bindings(9,
                        K_Arg("In", _TILE),                          # the whole input
                        K_Arg("Filter", _TILE),                      # this chunk's filter rows
                        K_Arg("Bias", _TILE),
                        K_Arg("Out", _TILE),
                        Imm(in_dim),                                 # InDim
                        K_ArgPar("Out", _PARTILE_SIZE, D0),          # outputs in this chunk
                        K_Arg("Scale", _TILE),                       # their multipliers
                        K_Arg("ScaleN", _TILE),                      # and shifts
                        K_Arg("Infos", _TILE)))),
            KerArgs(7,
                _whole("In", in_dim, 1),
                per_output("Filter", in_dim, O.O_IN | O.O_DB | O.O_CONST),
                per_output("Bias", 4, O.O_IN | O.O_DB | O.O_CONST),
                per_output("Out", 1, O.O_OUT | O.O_DB),
                per_output("Scale", 4, O.O_IN | O.O_DB | O.O_CONST),
                per_output("ScaleN", 1, O.O_IN | O.O_DB | O.O_CONST),
                _infos_arg()))

    def input_tiled(in_buffer: bool):
        def build():
            in_flags = (O.O_IN | O.O_BUFF | O.O_TILED) if in_buffer else (O.O_IN | O.O_DB)
            return UserKernel(name,
                KernelIterSpace(2, IterFixedSpace(D0, out_dim), IterTiledSpace(T0)),
                TILE_HOR,
                cargs,
                Calls(2,
                    Call("KerLinearDP_TFLM_SQ8", _LOOP,
                        Bindings(6,
                            K_Arg("In", _TILE),                      # input tile
                            K_Arg("Filter", _TILE),                  # the matching part of the filter row
                            K_Arg("Reduct", _TILE),                  # one int32 partial sum per core
                            K_Arg("Filter", _TILE_H),                # inputs in this tile
                            Ker_IteratorIndex(T0),                   # tile index (0: start the sums)
                            K_Arg("Infos", _TILE))),
                    Call("KerLinearReduct_TFLM_SQ8", _EPILOG,
                        Bindings(6,
                            K_Arg("Reduct", _TILE),
                            K_Arg("Bias", _TILE),                    # this output's bias
                            K_Arg("Out", _TILE),
                            K_Arg("Scale", _TILE),
                            K_Arg("ScaleN", _TILE),
                            K_Arg("Infos", _TILE)))),
                KerArgs(8,
                    KerArg("In", KerArgSpace(1, T0), in_flags, 1, in_dim, 1, 0, 0, 0, "In"),
                    KerArg("Filter", KerArgSpace(2, D0, T0), O.O_IN | O.O_DB | O.O_CONST, 1, in_dim, 1, 0, 0, 0,
                           "Filter"),
                    per_output("Bias", 4, O.O_IN | O.O_BUFF | O.O_CONST),
                    per_output("Out", 1, O.O_OUT | O.O_BUFF),
                    per_output("Scale", 4, O.O_IN | O.O_BUFF | O.O_CONST),
                    per_output("ScaleN", 1, O.O_IN | O.O_BUFF | O.O_CONST),
                    _infos_arg(),
                    KerArg("Reduct", KerArgSpace(1, T0), O.O_BUFF | O.O_NTILED, REDUCT_SLOTS, 1, 4, 0, 0, 0, "")))
        return build

    forced = setup.ctrl.force_dp_conv == 1
    attempts = ([] if forced else [output_parallel]) + [input_tiled(True), input_tiled(False)]
    if _solve(attempts) is None:
        return 0
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, in_dim * out_dim + out_dim, 0)
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, in_dim + out_dim * (in_dim + 4 + 1 + 4 + 1), 0)
    AddKernelArgDim(name, "In", 2, in_dim, 1)
    AddKernelArgDim(name, "Filter", 3, out_dim, in_dim, 1)
    AddKernelArgDim(name, "Bias", 2, out_dim, 4)
    AddKernelArgDim(name, "Out", 2, out_dim, 1)
    AddKernelArgDim(name, "Scale", 2, out_dim, 4)
    AddKernelArgDim(name, "ScaleN", 2, out_dim, 1)
    AddKernelArgDim(name, "Infos", 2, AT_INF_TFLM_DIM, 1)
    return 1


# ---------------------------------------------------------------------------------------------
# Element-wise


def _shape(setup, Feat, Width, Height, feat_max: int = ITEMS_MAX) -> tuple:
    """(Feat, Width, Height): the element-wise kernels count items in an unsigned int, the tensor by
    vector product its features in an unsigned short (``feat_max``)."""
    feat = setup.chk.integer(Feat, "Feat", 1, feat_max)
    width = setup.chk.integer(Width, "Width", 1, ITEMS_MAX)
    height = setup.chk.integer(Height, "Height", 1, ITEMS_MAX)
    if feat * width * height > ITEMS_MAX:
        setup.chk.fail(f"Feat x Width x Height = {feat * width * height} items, more than the {ITEMS_MAX} an L2 "
                       "tensor can hold", "split the layer")
    return feat, width, height


def _eltwise(setup, kernel: str, feat: int, width: int, height: int) -> int:
    """Out = kernel(In1, In2) over the Height x Width x Feat items, tiled over items."""
    name, n = setup.chk.name, feat * width * height

    def items(arg: str, flags) -> KerArg:
        return KerArg(arg, KerArgSpace(1, T0), flags | O.O_DB, 1, n, 1, 0, 0, 0, arg)

    tiling = UserKernel(name,
        KernelIterSpace(1, IterTiledSpace(T0)),
        TILE_HOR,
        CArgs(4, TCArg(_SC, "In1"), TCArg(_SC, "In2"), TCArg(_SC, "Out"), TCArg(_SC, "Infos")),
        Calls(1,
            Call(kernel, _LOOP,
                Bindings(5,
                    K_Arg("In1", _TILE),
                    K_Arg("In2", _TILE),
                    K_Arg("Out", _TILE),
                    K_Arg("In1", _TILE_H),                           # items in this tile
                    K_Arg("Infos", _TILE)))),
        KerArgs(4, items("In1", O.O_IN), items("In2", O.O_IN), items("Out", O.O_OUT), _infos_arg()))
    if tiling is None:
        return 0
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, n, 0)
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, 3 * n, 0)
    for arg in ("In1", "In2", "Out"):
        AddKernelArgDim(name, arg, 4, height, width, feat, 1)
    AddKernelArgDim(name, "Infos", 2, AT_INF_TFLM_DIM, 1)
    return 1


def mat_add_act(setup, Feat, Width, Height, AddMatOper, ActOper) -> int:
    """CNN_MatAddAct_SQ8, TFLM (TFLite ADD, equal shapes): ``Name(In1, In2, Out, Infos)``."""
    _ctrl(setup)
    feat, width, height = _shape(setup, Feat, Width, Height)
    setup.chk.oper(AddMatOper, "AddMatOper", (K.KOP_MATADD,), "an element-wise addition")
    _act(setup, ActOper)
    return _eltwise(setup, "KerParAdd_TFLM_SQ8", feat, width, height)


def mat_sub_act(setup, Feat, Width, Height, ActOper) -> int:
    """CNN_MatSubAct_SQ8 (ours, TFLite SUB, equal shapes): ``Name(In1, In2, Out, Infos)``."""
    _ctrl(setup)
    feat, width, height = _shape(setup, Feat, Width, Height)
    _act(setup, ActOper)
    return _eltwise(setup, "KerParSub_TFLM_SQ8", feat, width, height)


def mat_elt_mul_act(setup, Feat, Width, Height, ActOper) -> int:
    """CNN_MatEltMulAct_SQ8 (ours, TFLite MUL, equal shapes): ``Name(In1, In2, Out, Infos)``."""
    _ctrl(setup)
    feat, width, height = _shape(setup, Feat, Width, Height)
    _act(setup, ActOper)
    return _eltwise(setup, "KerParMul_TFLM_SQ8", feat, width, height)


def tensor_vect_mult_act(setup, Feat, Width, Height, MatOper, ActOper) -> int:
    """CNN_TensorVectMultAct_SQ8, TFLM (TFLite MUL of [H][W][Feat] by [Feat]): ``Name(In1, In2, Out, Infos)``."""
    _ctrl(setup)
    feat, width, height = _shape(setup, Feat, Width, Height, USHORT_MAX)
    setup.chk.oper(MatOper, "MatOper", (K.KOP_MATVECTMUL,), "a tensor by vector product")
    _act(setup, ActOper)
    name, pixels = setup.chk.name, width * height

    def pixels_arg(arg: str, flags) -> KerArg:
        return KerArg(arg, KerArgSpace(1, T0), flags | O.O_DB, feat, pixels, 1, 0, 0, 0, arg)

    tiling = UserKernel(name,
        KernelIterSpace(1, IterTiledSpace(T0)),
        TILE_HOR,
        CArgs(4, TCArg(_SC, "In1"), TCArg(_SC, "In2"), TCArg(_SC, "Out"), TCArg(_SC, "Infos")),
        Calls(1,
            Call("KerParTensorVectMul_TFLM_SQ8", _LOOP,
                Bindings(6,
                    K_Arg("In1", _TILE),
                    K_Arg("In2", _TILE),                             # the whole vector
                    K_Arg("Out", _TILE),
                    K_Arg("In1", _TILE_H),                           # pixels in this tile
                    Imm(feat),
                    K_Arg("Infos", _TILE)))),
        KerArgs(4, pixels_arg("In1", O.O_IN), _whole("In2", feat, 1), pixels_arg("Out", O.O_OUT), _infos_arg()))
    if tiling is None:
        return 0
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, feat * pixels, 0)
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, 2 * feat * pixels + feat, 0)
    AddKernelArgDim(name, "In1", 4, height, width, feat, 1)
    AddKernelArgDim(name, "In2", 2, feat, 1)
    AddKernelArgDim(name, "Out", 4, height, width, feat, 1)
    AddKernelArgDim(name, "Infos", 2, AT_INF_TFLM_DIM, 1)
    return 1


# ---------------------------------------------------------------------------------------------
# Matrix product


def _mat_mul_dims(setup, ColM1, LineM1, ColM2, LineM2, Width, Height, Scx, Scy) -> tuple:
    """(ColM1, LineM1, ColM2) checked as the original's: ColM1 == LineM2, Width x Height == ColM2
    (Width and Height 0: ColM2 x 1); strides other than 1 refused."""
    chk = setup.chk
    col1, line1, col2, line2 = (_dim(setup, v, p) for v, p in ((ColM1, "ColM1"), (LineM1, "LineM1"),
                                                              (ColM2, "ColM2"), (LineM2, "LineM2")))
    if col1 != line2:
        chk.fail(f"ColM1 ({col1}) must equal LineM2 ({line2}): In1 [LineM1 x ColM1] times In2 [LineM2 x ColM2]",
                 f"LineM2 {col1}")
    width = chk.integer(Width, "Width", 0, USHORT_MAX)
    height = chk.integer(Height, "Height", 0, USHORT_MAX)
    if (width, height) != (0, 0) and width * height != col2:
        chk.fail(f"Width x Height = {width} x {height} must equal ColM2 ({col2}): In2's columns are the pixels",
                 "pass Width x Height = ColM2, or 0, 0")
    for value, param in ((Scx, "Scx"), (Scy, "Scy")):
        if chk.integer(value, param, 1) != 1:
            chk.fail(f"{param} {value} is not supported yet with TensorFlow Lite Micro's requantisation (strided "
                     "matrix products)", f"use {param} 1, or subsample In2 first")
    return col1, line1, col2


def mat_mul_act(setup, Bias_DataSize, Scale_DataSize, ColM1, LineM1, ColM2, LineM2, Width, Height, Scx, Scy,
                MatMulOper, ActOper) -> int:
    """CNN_MatMulAct_SQ8, TFLM: ``Name(In2, In1, [Bias], Out, [Scale, ScaleN], Infos)``."""
    chk = setup.chk
    _ctrl(setup)
    col1, line1, col2 = _mat_mul_dims(setup, ColM1, LineM1, ColM2, LineM2, Width, Height, Scx, Scy)
    oper = chk.oper(MatMulOper, "MatMulOper", tuple(MATMUL_OPERS), "a matrix product")
    has_bias, per_line, transposed = MATMUL_OPERS[oper]
    if has_bias:
        bias_size = chk.integer(Bias_DataSize, "Bias_DataSize")
        if bias_size != 4:
            chk.fail(f"Bias_DataSize {bias_size} is not supported with TensorFlow Lite Micro's requantisation: "
                     "the accumulator's bias is an int32", "use Bias_DataSize 4")
    _act(setup, ActOper)
    name = chk.name
    cargs = [TCArg(_SC, "In2"), TCArg(_SC, "In1")] + ([TCArg(_INT, "Bias")] if has_bias else []) + \
        [TCArg(_SC, "Out")] + ([TCArg(_INT, "Scale"), TCArg(_SC, "ScaleN")] if per_line else []) + \
        [TCArg(_SC, "Infos")]
    absent = Imm(0)           # a null pointer: the kernel reads Infos instead, or adds no bias
    kernel = "KerParMatMulTransposed_TFLM_SQ8" if transposed else "KerParMatMul_TFLM_SQ8"

    def declare(orient, kargs: list, lines_binding, width_binding):
        return UserKernel(name,
            KernelIterSpace(1, IterTiledSpace(T0)),
            orient,
            CArgs(len(cargs), *cargs),
            Calls(1,
                Call(kernel, _LOOP,
                    Bindings(10,
                        K_Arg("In1", _TILE),                         # In1's lines (of this tile)
                        K_Arg("In2", _TILE),                         # In2's columns (of this tile)
                        K_Arg("Bias", _TILE) if has_bias else absent,
                        K_Arg("Out", _TILE),                         # the tile of Out
                        Imm(col1),                                   # ColM1
                        lines_binding,                               # lines in this tile
                        width_binding,                               # columns in this tile
                        K_Arg("Scale", _TILE) if per_line else absent,
                        K_Arg("ScaleN", _TILE) if per_line else absent,
                        K_Arg("Infos", _TILE)))),
            KerArgs(len(kargs), *kargs))

    def per_line_args(make) -> list:
        return ([make("Bias", 4)] if has_bias else []) + ([make("Scale", 4), make("ScaleN", 1)] if per_line else [])

    def lines_tiled():
        """In1's lines (with their bias and scales) and Out's in tiles, In2 whole."""
        def lines(arg: str, w: int, size: int, flags) -> KerArg:
            return KerArg(arg, KerArgSpace(1, T0), flags | O.O_DB, w, line1, size, 0, 0, 0, arg)

        kargs = [lines("In1", col1, 1, O.O_IN | O.O_CONST), _whole("In2", col1 * col2, 1),
                 lines("Out", col2, 1, O.O_OUT), _infos_arg(),
                 *per_line_args(lambda a, size: lines(a, 1, size, O.O_IN | O.O_CONST))]
        return declare(TILE_HOR, kargs, K_Arg("In1", _TILE_H), Imm(col2))

    def columns_tiled():
        """In2's and Out's columns in tiles, In1 whole. Transposed, In2's columns are its lines: that
        argument is tiled horizontally (its own orientation), Out vertically."""
        def columns(arg: str, h: int, flags) -> KerArg:
            return KerArg(arg, KerArgSpace(1, T0), flags | O.O_DB, col2, h, 1, 0, C.OBJ_CONSTRAINTS_TILE_VER, 0,
                          arg)

        in2 = KerArg("In2", KerArgSpace(1, T0), O.O_IN | O.O_DB, col1, col2, 1, 0, C.OBJ_CONSTRAINTS_TILE_HOR, 0,
                     "In2") if transposed else columns("In2", col1, O.O_IN)
        kargs = [_whole("In1", line1 * col1, 1, O.O_IN | O.O_CONST), in2,
                 columns("Out", line1, O.O_OUT), _infos_arg(),
                 *per_line_args(lambda a, size: _whole(a, line1, size, O.O_IN | O.O_CONST))]
        return declare(TILE_VER, kargs, Imm(line1), K_Arg("Out", _TILE_W))

    if _solve([lines_tiled, columns_tiled]) is None:
        return 0
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, line1 * col1 * col2, 0)
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, line1 * col1 + col1 * col2 + line1 * col2, 0)
    AddKernelArgDim(name, "In1", 3, line1, col1, 1)
    AddKernelArgDim(name, "In2", 3, *((col2, col1) if transposed else (col1, col2)), 1)
    AddKernelArgDim(name, "Out", 3, line1, col2, 1)
    return 1
