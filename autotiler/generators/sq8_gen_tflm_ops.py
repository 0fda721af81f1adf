"""The SQ8 generators' implementations for TensorFlow Lite Micro's requantisation (Scale_DataSize 4, HWC):
activations, global pooling, softmax, channel concatenation; and the permutations (no requantisation).

Called by :mod:`.sq8_generators` with the generator's :class:`.sq8_common.Sq8Setup` (checker,
control fields, requantisation) then the generator's arguments after ``Ctrl``, in order. Each
generator is one user kernel over the public API; its basic kernels (``CNN_SQ8_TFLM_Ops.h``,
declared by :mod:`.sq8_kernels_tflm_ops`) read the layer's ``Infos`` (:mod:`.sq8_infos`), built
by the helpers here from the tensors' :class:`.sq8_tflm.QParams`:

* ``CNN_Act_SQ8`` ``Name(In, Out, Infos)``, ``Feat x Width x Height`` items: ``KOP_ACT_NONE`` /
  ``KOP_NONE`` TFLite's QUANTIZE int8 -> int8, ``KOP_RELU`` RELU, ``KOP_RELUN`` RELU6 (its clamp
  is in the Infos: ``act_infos("RELU6", ...)``), ``KOP_SIGMOID`` LOGISTIC, ``KOP_TANH`` TANH,
  ``KOP_HSWISH`` HARD_SWISH, ``KOP_LEAKYRELU`` LEAKY_RELU; tiled over items.
* ``CNN_GlobalPoolAct_SQ8`` ``Name(In, Out, Infos)``, In ``[Height][Width][Feat]``, Out
  ``[Feat]``: ``KOP_GLOBAL_AVGPOOL`` MEAN over H, W; ``KOP_GLOBAL_SUMPOOL`` SUM;
  ``KOP_GLOBAL_MAXPOOL`` REDUCE_MAX (TFLM requires equal quantisations and does not rescale);
  activation: a clamp to ACT_MIN, ACT_MAX;
  tiled over features (every pixel of a feature in one tile).
* ``CNN_SoftMax_SQ8`` / ``CNN_SoftMax2D_SQ8`` ``Name(In, Out, Infos)``: SOFTMAX over the last
  axis of ``N`` rows of ``Dim`` (1 row for ``CNN_SoftMax_SQ8``); tiled over rows, the rows
  split across the cores (a single row: its items, with a reduction). Where TFLM
  aborts (512 or more items at a row's max put its reciprocal's exponent above 31), ours gives
  the correctly rounded result, -128.
* ``CNN_ConcatChannels_SQ8`` ``Name(In0, ..., Out, Infos)``: 2 to 8 HWC inputs concatenated on
  channels, each requantised to the output's quantisation as TFLite's QUANTIZE does (a copy when
  they are equal). TFLM's int8 CONCATENATION copies the raw values whatever the quantisations
  (concatenation.cc ``EvalUnquantized``), so with equal quantisations, which TFLite's converter
  produces, ours is TFLM's exactly; with different ones ours is QUANTIZE-then-concatenate, which
  TFLM does not compute. Tiled over pixels.
* ``CNN_3DTensorPermute`` / ``CNN_MatTranspose`` ``Name(In, Out)``: copies of Size-byte items,
  tiled over an axis outermost or innermost in both layouts (each argument with its own tile
  orientation, OBJ_CONSTRAINTS_TILE_HOR / _VER, as the original's does).

Differences from the original (Scale_DataSize 1, :mod:`.sq8_gen_original`): HWC tensors and the
int32-word Infos; the softmax's output is int8 at 1/256, -128 (the original's is Q15); the
operators TFLite has no int8 form of (KOP_HSIGMOID, KOP_HTANH, KOP_SWISH, KOP_RELUM, KOP_RELUMN)
are refused; a Ctrl RELUN other than 6 is refused (RELU6 only). The permutations take their input
layout from the operator's name (the original's from the Ctrl field HWC, which, if set, must agree).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, Tuple

import numpy as np

from ..api import (
    AddKernelArgDim,
    AddKernelInfos,
    Bindings,
    Call,
    Calls,
    CArgs,
    Imm,
    IterTiledSpace,
    K_Arg,
    KerArg,
    KerArgs,
    KerArgSpace,
    KernelIterSpace,
    TCArg,
    UserKernel,
)
from ..constants import (
    AT_KernelInfo_T,
    KernelArgConstraints_T,
    KernelArgSelect_T,
    KernelCallLocationT,
    KernelIteratorT,
    KernelOper_T,
    Object_Type_T,
    Tile_Orientation_T,
)
from ..errors import ModelError
from . import sq8_tflm as T
from .cnn_checks import Checker
from .cnn_ctrl import DEFAULT
from .sq8_infos import AT_INF_TFLM_DIM, tflm_infos

C = KernelArgConstraints_T
K = KernelOper_T
S = KernelArgSelect_T
O = Object_Type_T
T0 = KernelIteratorT.KER_ITER_TILE0
HOR, VER = Tile_Orientation_T.TILE_HOR, Tile_Orientation_T.TILE_VER
SC = "signed char * __restrict__"
INFOS_FLAGS = O.O_IN | O.O_BUFF | O.O_NTILED | O.O_CONST
CTYPES = {1: "signed char * __restrict__", 2: "short int * __restrict__", 4: "int * __restrict__"}

# CNN_Act_SQ8's operators: the TFLite operator, its basic kernel
ACT_OPERS = {K.KOP_ACT_NONE: ("QUANTIZE", "KerParActRequant_TFLM_SQ8"),
             K.KOP_NONE: ("QUANTIZE", "KerParActRequant_TFLM_SQ8"),
             K.KOP_RELU: ("RELU", "KerParActRequant_TFLM_SQ8"),
             K.KOP_RELUN: ("RELU6", "KerParActRequant_TFLM_SQ8"),
             K.KOP_SIGMOID: ("LOGISTIC", "KerParLogistic_TFLM_SQ8"),
             K.KOP_TANH: ("TANH", "KerParTanh_TFLM_SQ8"),
             K.KOP_HSWISH: ("HARD_SWISH", "KerParHSwish_TFLM_SQ8"),
             K.KOP_LEAKYRELU: ("LEAKY_RELU", "KerParLeakyRelu_TFLM_SQ8")}
# the original's activations TFLite has no int8 operator for
NO_TFLITE_ACT = (K.KOP_HSIGMOID, K.KOP_HTANH, K.KOP_SWISH, K.KOP_RELUM, K.KOP_RELUMN)
POOL_OPERS = {K.KOP_GLOBAL_AVGPOOL: "KerParGlobalSumRequant_TFLM_SQ8", K.KOP_GLOBAL_SUMPOOL: "KerParGlobalSumRequant_TFLM_SQ8",
              K.KOP_GLOBAL_MAXPOOL: "KerParGlobalMaxPool_TFLM_SQ8"}
CLAMP_ACTS = (K.KOP_NONE, K.KOP_RELU, K.KOP_RELUN)
MAX_CONCAT = 8

# CNN_3DTensorPermute: (input layout, output layout) by operator; an axis order maps layouts
PERMUTATIONS = {K.KOP_MATPERM_CHW2CWH: ("CHW", "CWH"), K.KOP_MATPERM_CHW2HWC: ("CHW", "HWC"),
                K.KOP_MATPERM_CHW2WHC: ("CHW", "WHC"), K.KOP_MATPERM_CHW2WCH: ("CHW", "WCH"),
                K.KOP_MATPERM_CHW2HCW: ("CHW", "HCW"), K.KOP_MATPERM_HWC2HCW: ("HWC", "HCW"),
                K.KOP_MATPERM_HWC2WCH: ("HWC", "WCH"), K.KOP_MATPERM_HWC2WHC: ("HWC", "WHC"),
                K.KOP_MATPERM_HWC2CHW: ("HWC", "CHW"), K.KOP_MATPERM_HWC2CWH: ("HWC", "CWH")}


# ---------------------------------------------------------------------------------------------
# Infos builders (public: callers and tests build a layer's Infos constant with these)


def act_infos(kind: str, in_q: T.QParams, out_q: T.QParams, **op_params) -> np.ndarray:
    """The Infos of ``CNN_Act_SQ8`` for TFLite operator ``kind``: QUANTIZE, RELU, RELU6, LOGISTIC, TANH,
    HARD_SWISH, LEAKY_RELU (``alpha=``). The Prepare arithmetic is sq8_tflm's (same checks, same errors)."""
    if kind in ("QUANTIZE", "RELU"):
        r = T.quantize_multiplier(float(in_q.scale) / float(out_q.scale))
        lo, hi = T.relu_range(out_q) if kind == "RELU" else (T.INT8_MIN, T.INT8_MAX)
        return tflm_infos(in_zp=in_q.zero_point, out_zp=out_q.zero_point, mult=r.multiplier, shift=r.shift,
                          act_min=lo, act_max=hi)
    if kind == "RELU6":       # TFLM clamps the raw values: the identity requantisation
        lo, hi = T.relu6_range(in_q)
        return tflm_infos(in_zp=in_q.zero_point, out_zp=in_q.zero_point, mult=1 << 30, shift=1, act_min=lo,
                          act_max=hi)
    if kind in ("LOGISTIC", "TANH"):
        if kind == "LOGISTIC" and out_q.zero_point != -128:
            raise ModelError("act_infos: int8 LOGISTIC output zero point must be -128 (TFLM's Prepare)",
                             hint="quantise the output at 1/256, -128")
        r, radius = T.logistic_tanh_params(in_q)
        return tflm_infos(in_zp=in_q.zero_point, mult=r.multiplier, shift=r.shift, param=radius)
    if kind == "HARD_SWISH":
        p = T.hard_swish_params(in_q, out_q)
        return tflm_infos(in_zp=in_q.zero_point, out_zp=out_q.zero_point, mult=p.output_multiplier,
                          shift=p.output_exponent, mult2=p.reluish_multiplier, shift2=p.reluish_exponent)
    if kind == "LEAKY_RELU":
        if "alpha" not in op_params:
            raise ModelError("act_infos: LEAKY_RELU needs alpha=", hint="pass the operator's alpha")
        s_in, s_out = float(np.float32(in_q.scale)), float(np.float32(out_q.scale))
        ri = T.quantize_multiplier(s_in / s_out)
        ra = T.quantize_multiplier(s_in * float(np.float32(op_params["alpha"])) / s_out)
        return tflm_infos(in_zp=in_q.zero_point, out_zp=out_q.zero_point, mult=ri.multiplier, shift=ri.shift,
                          mult2=ra.multiplier, shift2=ra.shift)
    raise ModelError(f"act_infos: unknown operator {kind!r}",
                     hint="QUANTIZE, RELU, RELU6, LOGISTIC, TANH, HARD_SWISH or LEAKY_RELU")


def mean_infos(in_q: T.QParams, out_q: T.QParams, count: int, activation: str = "NONE") -> np.ndarray:
    """The Infos of a global average pooling (TFLite's MEAN over H, W) of ``count = H * W`` pixels: the mean
    multiplier with 1 / count folded in (sq8_tflm.mean_multiplier), zero points, the activation's clamp."""
    r = T.mean_multiplier(in_q, out_q, int(count))
    lo, hi = T.activation_range(activation, out_q)
    return tflm_infos(in_zp=in_q.zero_point, out_zp=out_q.zero_point, mult=r.multiplier, shift=r.shift,
                      act_min=lo, act_max=hi)


def sum_infos(in_q: T.QParams, out_q: T.QParams, activation: str = "NONE") -> np.ndarray:
    """The Infos of a global sum pooling (TFLite's SUM over H, W): QuantizeMultiplier(s_in / s_out)
    (sq8_tflm.sum_hw), zero points, the activation's clamp."""
    r = T.quantize_multiplier(float(in_q.scale) / float(out_q.scale))
    lo, hi = T.activation_range(activation, out_q)
    return tflm_infos(in_zp=in_q.zero_point, out_zp=out_q.zero_point, mult=r.multiplier, shift=r.shift,
                      act_min=lo, act_max=hi)


def max_infos(in_q: T.QParams, out_q: T.QParams, activation: str = "NONE") -> np.ndarray:
    """The Infos of a global max pooling (TFLite's REDUCE_MAX over H, W): TFLM requires equal quantisations;
    only the activation's clamp is read."""
    if np.float32(in_q.scale) != np.float32(out_q.scale) or in_q.zero_point != out_q.zero_point:
        raise ModelError("max_infos: int8 REDUCE_MAX needs the output quantisation of its input (TFLM's Eval)",
                         hint="give the output the input's scale and zero point")
    lo, hi = T.activation_range(activation, out_q)
    return tflm_infos(in_zp=in_q.zero_point, out_zp=out_q.zero_point, act_min=lo, act_max=hi)


def softmax_infos(in_q: T.QParams, beta: float = 1.0) -> np.ndarray:
    """The Infos of a softmax: MULT = input_beta_multiplier, LEFT_SHIFT = input_left_shift, PARAM = diff_min
    (sq8_tflm.softmax_params); the output is at 1/256, -128."""
    p = T.softmax_params(in_q, beta)
    return tflm_infos(in_zp=in_q.zero_point, out_zp=-128, mult=p.multiplier, left_shift=p.left_shift,
                      param=p.diff_min)


def concat_infos(in_qs: Sequence[T.QParams], out_q: T.QParams) -> np.ndarray:
    """The Infos of a concatenation: one block per input (QUANTIZE's multiplier from the input's quantisation
    to the output's, zero points), ``AT_INF_TFLM_DIM`` bytes each, in input order."""
    return np.concatenate([act_infos("QUANTIZE", q, out_q) for q in in_qs])


# ---------------------------------------------------------------------------------------------
# Shared pieces of the user kernels


def _infos_arg(blocks: int = 1):
    return KerArg("Infos", KerArgSpace(1, T0), INFOS_FLAGS, 1, AT_INF_TFLM_DIM * blocks, 1, 0, 0, 0, "Infos")


def _need(chk: Checker, kernels) -> None:
    chk.declared(kernels)


def _infos_and_dims(name: str, op: int, bandwidth: int, dims: dict) -> None:
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, op, 0)
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, bandwidth, 0)
    for arg, shape in dims.items():
        AddKernelArgDim(name, arg, len(shape) + 1, *shape, 1)


def _check_relun(setup, oper) -> None:
    """KOP_RELUN is TFLite's RELU6 here, its bounds in the Infos: a Ctrl RELUN other than 6 would be ignored."""
    if oper == K.KOP_RELUN and setup.ctrl.relun not in (DEFAULT, 6):
        setup.chk.fail(f"KOP_RELUN with the Ctrl field RELUN {setup.ctrl.relun} is not supported with "
                       "Scale_DataSize 4: TensorFlow Lite's only ReLU-N is RELU6, its clamp is the Infos' ACT_MIN, "
                       "ACT_MAX", "leave RELUN unset (or 6), and build the Infos with act_infos('RELU6', ...)")


def _hwc(chk: Checker, Feat, Width, Height) -> Tuple[int, int, int]:
    return chk.integer(Feat, "Feat", 1), chk.integer(Width, "Width", 1), chk.integer(Height, "Height", 1)


# ---------------------------------------------------------------------------------------------
# CNN_Act_SQ8


def act(setup, Feat, Width, Height, ActOper) -> int:
    """``CNN_Act_SQ8`` with TFLM's arithmetic: ``Name(In, Out, Infos)`` on ``Height x Width x Feat`` items,
    tiled over items (any number per tile)."""
    chk = setup.chk
    feat, width, height = _hwc(chk, Feat, Width, Height)
    if chk.oper(ActOper, "ActOper", tuple(K), "a KernelOper_T") in NO_TFLITE_ACT:
        chk.fail(f"ActOper {K(ActOper).name} has no TensorFlow Lite int8 operator to reproduce with Scale_DataSize 4",
                 "use KOP_ACT_NONE (QUANTIZE), KOP_RELU, KOP_RELUN (RELU6), KOP_SIGMOID, KOP_TANH, KOP_HSWISH or "
                 "KOP_LEAKYRELU")
    oper = chk.oper(ActOper, "ActOper", tuple(ACT_OPERS), "an activation with TensorFlow Lite's int8 arithmetic")
    _check_relun(setup, oper)
    kname = ACT_OPERS[oper][1]
    _need(chk, [kname])
    n = feat * width * height
    kargs = KerArgs(3,
        KerArg("In", KerArgSpace(1, T0), O.O_IN | O.O_DB, 1, n, 1, 0, 0, 0, "In"),
        KerArg("Out", KerArgSpace(1, T0), O.O_OUT | O.O_DB, 1, n, 1, 0, 0, 0, "Out"),
        _infos_arg())
    binds = Bindings(4, K_Arg("In", S.KER_ARG_TILE), K_Arg("Out", S.KER_ARG_TILE), K_Arg("In", S.KER_ARG_TILE_H),
                     K_Arg("Infos", S.KER_ARG_TILE))
    kernel = UserKernel(chk.name, KernelIterSpace(1, IterTiledSpace(T0)), HOR,
                        CArgs(3, TCArg(SC, "In"), TCArg(SC, "Out"), TCArg(SC, "Infos")),
                        Calls(1, Call(kname, KernelCallLocationT.LOC_LOOP, binds)), kargs)
    if kernel:
        _infos_and_dims(chk.name, n, 2 * n, {"In": (height, width, feat), "Out": (height, width, feat)})
    return 1 if kernel else 0


# ---------------------------------------------------------------------------------------------
# CNN_ActLUT_SQ8 (ours)

LUT_SIZE = 256


def act_lut(setup, Feat, Width, Height) -> int:
    """``CNN_ActLUT_SQ8`` (ours): ``Name(In, Out, Table)``, ``Out = Table[In + 128]`` on
    ``Height x Width x Feat`` int8 items (any layout), tiled over items; ``Table`` is 256 int8 (an imported
    ONNX QDQ model's unary operators in onnxruntime's arithmetic, :func:`.sq8_tflm.ort_lookup_table`)."""
    chk = setup.chk
    feat, width, height = _hwc(chk, Feat, Width, Height)
    _need(chk, ["KerParActLUT_SQ8"])
    n = feat * width * height
    kargs = KerArgs(3,
        KerArg("In", KerArgSpace(1, T0), O.O_IN | O.O_DB, 1, n, 1, 0, 0, 0, "In"),
        KerArg("Out", KerArgSpace(1, T0), O.O_OUT | O.O_DB, 1, n, 1, 0, 0, 0, "Out"),
        KerArg("Table", KerArgSpace(1, T0), INFOS_FLAGS, 1, LUT_SIZE, 1, 0, 0, 0, "Table"))
    binds = Bindings(4, K_Arg("In", S.KER_ARG_TILE), K_Arg("Out", S.KER_ARG_TILE), K_Arg("In", S.KER_ARG_TILE_H),
                     K_Arg("Table", S.KER_ARG_TILE))
    kernel = UserKernel(chk.name, KernelIterSpace(1, IterTiledSpace(T0)), HOR,
                        CArgs(3, TCArg(SC, "In"), TCArg(SC, "Out"), TCArg(SC, "Table")),
                        Calls(1, Call("KerParActLUT_SQ8", KernelCallLocationT.LOC_LOOP, binds)), kargs)
    if kernel:
        _infos_and_dims(chk.name, n, 2 * n, {"In": (height, width, feat), "Out": (height, width, feat)})
    return 1 if kernel else 0


# ---------------------------------------------------------------------------------------------
# CNN_GlobalPoolAct_SQ8


def global_pool_act(setup, Feat, Width, Height, PoolOper, ActOper) -> int:
    """``CNN_GlobalPoolAct_SQ8`` with TFLM's arithmetic: ``Name(In, Out, Infos)``, In ``[Height][Width][Feat]``
    seen as ``Height*Width`` lines of ``Feat``, tiled vertically (over features)."""
    chk = setup.chk
    feat, width, height = _hwc(chk, Feat, Width, Height)
    pool = chk.oper(PoolOper, "PoolOper", tuple(POOL_OPERS), "a global pooling with TensorFlow Lite's int8 arithmetic")
    _check_relun(setup, chk.oper(ActOper, "ActOper", CLAMP_ACTS, "an activation a global pooling applies (a clamp "
                                 "to the Infos' ACT_MIN, ACT_MAX)"))
    kname = POOL_OPERS[pool]
    _need(chk, [kname])
    pixels = width * height
    kargs = KerArgs(3,
        KerArg("In", KerArgSpace(1, T0), O.O_IN | O.O_DB, feat, pixels, 1, 0, 0, 0, "In"),
        KerArg("Out", KerArgSpace(1, T0), O.O_OUT | O.O_DB, feat, 1, 1, 0, 0, 0, "Out"),
        _infos_arg())
    binds = Bindings(5, K_Arg("In", S.KER_ARG_TILE), K_Arg("Out", S.KER_ARG_TILE), Imm(pixels),
                     K_Arg("In", S.KER_ARG_TILE_W), K_Arg("Infos", S.KER_ARG_TILE))
    kernel = UserKernel(chk.name, KernelIterSpace(1, IterTiledSpace(T0)), VER,
                        CArgs(3, TCArg(SC, "In"), TCArg(SC, "Out"), TCArg(SC, "Infos")),
                        Calls(1, Call(kname, KernelCallLocationT.LOC_LOOP, binds)), kargs)
    if kernel:
        _infos_and_dims(chk.name, feat * pixels, feat * pixels + feat,
                        {"In": (height, width, feat), "Out": (1, 1, feat)})
    return 1 if kernel else 0


# ---------------------------------------------------------------------------------------------
# CNN_SoftMax_SQ8, CNN_SoftMax2D_SQ8


SOFTMAX_SLOTS = 16          # AT_SQ8_SOFTMAX_SLOTS: per-core maxima and sums of a single row (gap_ncore() <= 8)


def softmax(setup, Dim, SoftMaxOper, N=1) -> int:
    """``CNN_SoftMax_SQ8`` (N = 1) and ``CNN_SoftMax2D_SQ8`` with TFLM's arithmetic: ``Name(In, Out, Infos)``,
    N rows of Dim items, tiled over rows (whole rows per tile), the rows split across the cores; a single
    row has its items split across the cores instead (partial maxima and sums in an L1 buffer)."""
    chk = setup.chk
    dim = chk.integer(Dim, "Dim", 1, 65535)
    rows = chk.integer(N, "N", 1, 65535)
    chk.oper(SoftMaxOper, "SoftMaxOper", (K.KOP_SOFTMAX,), "a softmax")
    kname = "KerParSoftMax_TFLM_SQ8" if rows > 1 else "KerParSoftMaxItems_TFLM_SQ8"
    _need(chk, [kname])
    kargs = [KerArg("In", KerArgSpace(1, T0), O.O_IN | O.O_DB, dim, rows, 1, 0, 0, 0, "In"),
             KerArg("Out", KerArgSpace(1, T0), O.O_OUT | O.O_DB, dim, rows, 1, 0, 0, 0, "Out"), _infos_arg()]
    if rows > 1:
        binds = Bindings(5, K_Arg("In", S.KER_ARG_TILE), K_Arg("Out", S.KER_ARG_TILE), Imm(dim),
                         K_Arg("In", S.KER_ARG_TILE_H), K_Arg("Infos", S.KER_ARG_TILE))
    else:
        kargs.append(KerArg("Reduct", KerArgSpace(1, T0), O.O_BUFF | O.O_NTILED, SOFTMAX_SLOTS, 1, 4, 0, 0, 0, ""))
        binds = Bindings(5, K_Arg("In", S.KER_ARG_TILE), K_Arg("Out", S.KER_ARG_TILE), Imm(dim),
                         K_Arg("Reduct", S.KER_ARG_TILE), K_Arg("Infos", S.KER_ARG_TILE))
    kernel = UserKernel(chk.name, KernelIterSpace(1, IterTiledSpace(T0)), HOR,
                        CArgs(3, TCArg(SC, "In"), TCArg(SC, "Out"), TCArg(SC, "Infos")),
                        Calls(1, Call(kname, KernelCallLocationT.LOC_LOOP, binds)), KerArgs(len(kargs), *kargs))
    if kernel:
        _infos_and_dims(chk.name, rows * dim, 2 * rows * dim, {"In": (rows, dim), "Out": (rows, dim)})
    return 1 if kernel else 0


# ---------------------------------------------------------------------------------------------
# CNN_ConcatChannels_SQ8


def concat_channels(setup, Width, Height, InFeats) -> int:
    """``CNN_ConcatChannels_SQ8``: ``Name(In0, ..., In{n-1}, Out, Infos)``, one call of the concatenation
    kernel per input at its channel offset, tiled over pixels."""
    chk = setup.chk
    width, height = chk.integer(Width, "Width", 1), chk.integer(Height, "Height", 1)
    if not isinstance(InFeats, (list, tuple)) or not 2 <= len(InFeats) <= MAX_CONCAT:
        chk.fail(f"InFeats must be a list of 2 to {MAX_CONCAT} feature counts, got {InFeats!r}",
                 "e.g. [16, 32] for two inputs")
    feats = [chk.integer(f, "InFeats", 1, what=f"[{i}]") for i, f in enumerate(InFeats)]
    total = sum(feats)
    if total > 65535:
        chk.fail(f"the output has {total} channels, more than the kernel's 65535", "split the concatenation")
    _need(chk, ["KerParConcat_TFLM_SQ8"])
    pixels, n = width * height, len(feats)
    ins = [f"In{i}" for i in range(n)]
    kargs = [KerArg(a, KerArgSpace(1, T0), O.O_IN | O.O_DB, f, pixels, 1, 0, 0, 0, a) for a, f in zip(ins, feats)]
    kargs += [KerArg("Out", KerArgSpace(1, T0), O.O_OUT | O.O_DB, total, pixels, 1, 0, 0, 0, "Out"), _infos_arg(n)]
    calls, offset = [], 0
    for i, (a, f) in enumerate(zip(ins, feats)):
        binds = Bindings(8, K_Arg(a, S.KER_ARG_TILE), K_Arg("Out", S.KER_ARG_TILE), K_Arg(a, S.KER_ARG_TILE_H),
                         Imm(f), Imm(total), Imm(offset), Imm(i), K_Arg("Infos", S.KER_ARG_TILE))
        calls.append(Call("KerParConcat_TFLM_SQ8", KernelCallLocationT.LOC_LOOP, binds))
        offset += f
    cargs = [TCArg(SC, a) for a in ins + ["Out", "Infos"]]
    kernel = UserKernel(chk.name, KernelIterSpace(1, IterTiledSpace(T0)), HOR, CArgs(len(cargs), *cargs),
                        Calls(len(calls), *calls), KerArgs(len(kargs), *kargs))
    if kernel:
        dims = {a: (height, width, f) for a, f in zip(ins, feats)}
        _infos_and_dims(chk.name, pixels * total, 2 * pixels * total, dict(dims, Out=(height, width, total)))
    return 1 if kernel else 0


# ---------------------------------------------------------------------------------------------
# CNN_3DTensorPermute, CNN_MatTranspose


@dataclass(frozen=True)
class Permutation:
    """A permutation as the basic kernel reads it: the input's dims in memory order and, for each
    output axis, the input axis it is."""

    dims: Tuple[int, int, int]
    axes: Tuple[int, int, int]

    @property
    def code(self) -> int:
        return self.axes[0] * 9 + self.axes[1] * 3 + self.axes[2]

    @property
    def out_dims(self) -> Tuple[int, int, int]:
        return tuple(self.dims[a] for a in self.axes)


def permutation(in_layout: str, out_layout: str, feat: int, width: int, height: int) -> Permutation:
    """The permutation from ``in_layout`` to ``out_layout`` (letters C, H, W, outermost first) of a tensor of
    ``feat`` channels, ``height`` lines, ``width`` columns."""
    size = {"C": feat, "H": height, "W": width}
    return Permutation(tuple(size[a] for a in in_layout), tuple(in_layout.index(a) for a in out_layout))


def _size(chk: Checker, Size) -> int:
    size = chk.integer(Size, "Size")
    if size not in CTYPES:
        chk.fail(f"Size {size} is not supported: items are 1, 2 or 4 bytes", "use 1, 2 or 4")
    return size


def tiled_axis(in_layout: str, out_layout: str) -> str:
    """The axis a permutation is tiled over: one that is outermost or innermost in both layouts, so a
    chunk of it is a 2D tile of the input and of the output (every permutation of 3 axes has one)."""
    return next(a for a in in_layout if in_layout.index(a) != 1 and out_layout.index(a) != 1)


def _tile_arg(name: str, flags: int, dims: Tuple[int, int, int], pos: int, size: int):
    """A 3D tensor as the 2D argument tiled over its axis ``pos`` (0: lines of a [d0][d1*d2] matrix, 2:
    columns of a [d0*d1][d2] one)."""
    if pos == 0:
        return KerArg(name, KerArgSpace(1, T0), flags, dims[1] * dims[2], dims[0], size, 0,
                      C.OBJ_CONSTRAINTS_TILE_HOR, 0, name)
    return KerArg(name, KerArgSpace(1, T0), flags, dims[2], dims[0] * dims[1], size, 0, C.OBJ_CONSTRAINTS_TILE_VER,
                  0, name)


def _copy_kernel(chk: Checker, size: int, in_layout: str, out_layout: str, perm: Permutation) -> int:
    """One user kernel moving the tensor tile by tile: each tile is a chunk of the tiled axis, permuted
    whole by the basic kernel (its dims: the input's, the tiled one being the tile's)."""
    _need(chk, ["KerParPermute"])
    if max(perm.dims) > 65535:
        chk.fail(f"a dimension of {max(perm.dims)} is more than the kernel's 65535", "split the tensor")
    axis = tiled_axis(in_layout, out_layout)
    pin, pout = in_layout.index(axis), out_layout.index(axis)
    kargs = KerArgs(2, _tile_arg("In", O.O_IN | O.O_DB, perm.dims, pin, size),
                    _tile_arg("Out", O.O_OUT | O.O_DB, perm.out_dims, pout, size))
    tiled = K_Arg("In", S.KER_ARG_TILE_H if pin == 0 else S.KER_ARG_TILE_W)
    dims = [tiled if k == pin else Imm(d) for k, d in enumerate(perm.dims)]
    binds = Bindings(7, K_Arg("In", S.KER_ARG_TILE), K_Arg("Out", S.KER_ARG_TILE), *dims, Imm(perm.code), Imm(size))
    ctype = CTYPES[size]
    kernel = UserKernel(chk.name, KernelIterSpace(1, IterTiledSpace(T0)), HOR if pin == 0 else VER,
                        CArgs(2, TCArg(ctype, "In"), TCArg(ctype, "Out")),
                        Calls(1, Call("KerParPermute", KernelCallLocationT.LOC_LOOP, binds)), kargs)
    if kernel:
        n = perm.dims[0] * perm.dims[1] * perm.dims[2]
        _infos_and_dims(chk.name, 0, 2 * n * size, {"In": perm.dims, "Out": perm.out_dims})
    return 1 if kernel else 0


def tensor_permute(chk: Checker, ctrl, Size, InFeat, Width, Height, MatPermOper) -> int:
    """``CNN_3DTensorPermute``: ``Name(In, Out)``; the dims are named for the input's layout (CHW2*: In
    ``[InFeat][Height][Width]``, HWC2*: In ``[Height][Width][InFeat]``), the operator names the output's."""
    size = _size(chk, Size)
    feat, width, height = chk.integer(InFeat, "InFeat", 1), chk.integer(Width, "Width", 1), chk.integer(
        Height, "Height", 1)
    oper = chk.oper(MatPermOper, "MatPermOper", tuple(PERMUTATIONS), "a 3D permutation (KOP_MATPERM_*)")
    in_layout, out_layout = PERMUTATIONS[oper]
    if ctrl.hwc not in (DEFAULT, int(in_layout == "HWC")):
        chk.fail(f"MatPermOper {oper.name} permutes a {in_layout} tensor but the Ctrl field HWC says "
                 f"{'HWC' if ctrl.hwc else 'CHW'}", "leave HWC unset (the operator names the layout) or match it")
    return _copy_kernel(chk, size, in_layout, out_layout, permutation(in_layout, out_layout, feat, width, height))


def mat_transpose(chk: Checker, ctrl, Size, InFeat, Width, Height, MatTranspOper) -> int:
    """``CNN_MatTranspose``: ``Name(In, Out)``, each of InFeat ``[Height][Width]`` matrices transposed."""
    size = _size(chk, Size)
    feat, width, height = chk.integer(InFeat, "InFeat", 1), chk.integer(Width, "Width", 1), chk.integer(
        Height, "Height", 1)
    chk.oper(MatTranspOper, "MatTranspOper", (K.KOP_MATTRANSP,), "a transpose (KOP_MATTRANSP)")
    return _copy_kernel(chk, size, "CHW", "CWH", permutation("CHW", "CWH", feat, width, height))


def softmax_table(setup, Dim, N) -> int:
    """``CNN_SoftMaxTable_SQ8(Name, Ctrl, Dim, N)`` (ours): onnxruntime's QLinearSoftmax,
    ``Name(In, Out, Table, Infos)``, N rows of Dim items tiled over rows, the rows split across the cores;
    ``Table`` 256 int32 (the float32 bits of :func:`.sq8_tflm.ort_softmax_table`), Infos OUT_ZP and PARAM
    (:func:`ort_softmax_infos`)."""
    chk = setup.chk
    dim = chk.integer(Dim, "Dim", 1, 65535)
    rows = chk.integer(N, "N", 1, 65535)
    _need(chk, ["KerParSoftMaxTable_SQ8"])
    kargs = KerArgs(4,
        KerArg("In", KerArgSpace(1, T0), O.O_IN | O.O_DB, dim, rows, 1, 0, 0, 0, "In"),
        KerArg("Out", KerArgSpace(1, T0), O.O_OUT | O.O_DB, dim, rows, 1, 0, 0, 0, "Out"),
        KerArg("Table", KerArgSpace(1, T0), INFOS_FLAGS, 1, LUT_SIZE, 4, 0, 0, 0, "Table"),
        _infos_arg())
    binds = Bindings(6, K_Arg("In", S.KER_ARG_TILE), K_Arg("Out", S.KER_ARG_TILE), Imm(dim),
                     K_Arg("In", S.KER_ARG_TILE_H), K_Arg("Table", S.KER_ARG_TILE), K_Arg("Infos", S.KER_ARG_TILE))
    kernel = UserKernel(chk.name, KernelIterSpace(1, IterTiledSpace(T0)), HOR,
                        CArgs(4, TCArg(SC, "In"), TCArg(SC, "Out"), TCArg(CTYPES[4], "Table"), TCArg(SC, "Infos")),
                        Calls(1, Call("KerParSoftMaxTable_SQ8", KernelCallLocationT.LOC_LOOP, binds)), kargs)
    if kernel:
        _infos_and_dims(chk.name, rows * dim, 2 * rows * dim, {"In": (rows, dim), "Out": (rows, dim)})
    return 1 if kernel else 0


def ort_softmax_constants(in_q: T.QParams, out_q: T.QParams, dim: int) -> Tuple[np.ndarray, np.ndarray]:
    """(Table, Infos) of ``CNN_SoftMaxTable_SQ8``: the float32 bits (int32) of
    :func:`.sq8_tflm.ort_softmax_table`, and Infos OUT_ZP, PARAM = ``floor(1.0f / s_out)``."""
    exps = T.ort_softmax_table(in_q, dim)
    y_scale = np.floor(np.float32(1.0) / np.float32(out_q.scale))
    with np.errstate(over="ignore"):
        top = np.float32(exps[-1]) * np.float32(y_scale)
    if not np.isfinite(top) or y_scale >= 2**24:
        raise ModelError(f"onnxruntime's softmax of {dim} items at output scale {out_q.scale:g} overflows float32 "
                         f"(largest exponential {float(exps[-1]):g} times floor(1 / scale) = {float(y_scale):g}) "
                         "and is not supported", hint="an output scale of 1/256 or more, rows of 2 items or more")
    return exps.view(np.int32).copy(), tflm_infos(out_zp=out_q.zero_point, param=int(y_scale))


def softmax_2d(setup, Dim, N, SoftMaxOper) -> int:
    """``CNN_SoftMax2D_SQ8(Name, Ctrl, Dim, N, SoftMaxOper)`` (the original's argument order): N rows."""
    return softmax(setup, Dim, SoftMaxOper, N)
