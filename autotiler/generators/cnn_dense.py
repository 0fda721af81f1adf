"""The original's non-convolution CNN generators (``CNN_Generators.c``, 16-bit "fp" and 8-bit
"fps" fixed point): ``CNN_LinearReLU``, ``CNN_SoftMax``, ``CNN_MatAdd``, ``CNN_MatAddRelu``,
``CNN_MatAddDynAdjust`` and ``CNN_GlobalPool``, with the original's names, argument orders,
iteration spaces, kernel choices and bindings, made through the public model API exactly as a
hand-written model would (``UserKernel``, ``KerArg``, ``Calls``, ``Bindings``...).

Use them after ``SetUsedFilesNames(0, 1, CNN_HEADER)`` and ``LoadCNNLibrary()``::

    CNN_LinearReLU("LinearLayerReLU_0", 0, 2,2,2,2, 12,12,8,11, 2,2,2,2, 1024, 10, KOP_LINEAR, KOP_NONE)
    CNN_SoftMax("SoftMax_0", 0, 2,2, 15,15, 1,1, 10, KOP_SOFTMAX)

Each returns 1 when the user kernel was generated (the original's ``int``). An impossible
configuration is a :class:`~autotiler.errors.ModelError` naming the model script's line, the
kernel, the parameter, what is wrong and the fix. The arithmetic is the basic kernels'
(``docs/cnn-fixed-point.md``); ``cnn_dense_reference.py`` computes the same layers in numpy.

What each generator does (read from the original's ``CNN_Generators.c``):

* ``CNN_LinearReLU``: first the output-parallel form, ``KerParLinearLayer{ReLU,Hswish,Hsigmoid}_*``
  at LOC_LOOP over ``[D0: OutDim, chunks preferably of 8] x [T0]`` with the input a buffer, the
  filter rows, biases and outputs moved per output chunk. If that does not fit L1, the input-tiled
  form: ``[D0: OutDim outputs, one at a time] x [T0: input tiles]``, ``KerDPLinearLayer_*`` adding
  each tile's dot product to one int32 partial sum per core (``Reduct``), then
  ``KerDPLinearLayerReduct_*`` at LOC_LOOP_EPILOG adding the partial sums to the shifted bias and
  activating; the input is first a whole buffer, then, if that does not fit either, tiled too.
* ``CNN_SoftMax``: the input and output whole in L1, one ``KerParSoftMax_*`` call.
* ``CNN_MatAdd`` / ``CNN_MatAddRelu`` / ``CNN_MatAddDynAdjust``: ``[D0: features, chunks of 8] x
  [T0: lines]``, ``KerParMatAdd*`` per tile.
* ``CNN_GlobalPool``: whole features first (``KerParGlobal{Max,Avg}PoolFullFeat_*``, the features
  tiled); when one feature does not fit L1, the plane is tiled: ``KerParGlobal*PoolDP_*`` keeps
  an int32 per feature over the tiles, ``KerParGlobal*PoolDPReduct_*`` narrows it at
  LOC_LOOP_EPILOG.

Differences from the original (each deliberate, see the messages):

* ``CNN_LinearReLU`` also takes KOP_LEAKYRELU, KOP_SIGMOID, KOP_TANH and KOP_SWISH: the library has
  no output-parallel kernel for them, so the input-tiled form (whose reduction has them) is used
  directly (the original stops with "Can't find a matching basic kernel").
* Impossible Q formats and data sizes are refused instead of producing wrong code: a negative
  ``Norm = In_Q + Filter_Q - Out_Q``, differing Q formats in ``CNN_MatAdd`` (whose kernel ignores
  them; ``CNN_MatAddDynAdjust`` aligns them), ``Out_Q`` other than 15 in ``CNN_SoftMax`` (always
  Q15), ``In_Q != Out_Q`` in ``CNN_GlobalPool`` (its kernels keep the input's Q).
* ``CNN_MatAdd*`` homes ``Out`` in L3 by ``Out_InL3`` (the original reads ``In2_InL3`` for it).
* ``TILE_VER`` is refused by the generators that tile along lines of a 1 x N argument (linear,
  softmax, global pooling), where a vertical tiling cannot cut anything.
"""

from __future__ import annotations

from typing import Optional

from ..api import (
    AT_IGNORE_ARG_BINDING,
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
    KernelOper_T,
    Object_Type_T,
    Tile_Orientation_T,
)
from ..errors import ModelError
from ..model.ir import caller_where
from .cnn_ctrl import gen_control, resolved

KOP = KernelOper_T
O = Object_Type_T
D0, T0 = KernelIteratorT.KER_ITER_D0, KernelIteratorT.KER_ITER_TILE0
TILE_HOR, TILE_VER = Tile_Orientation_T.TILE_HOR, Tile_Orientation_T.TILE_VER
NOSOLUTION = AT_GraphCtrl_T.AT_KERNEL_NOSOLUTION_ERROR
_S, _L = KernelArgSelect_T, KernelCallLocationT
_TILE, _TILE_W, _TILE_H = _S.KER_ARG_TILE, _S.KER_ARG_TILE_W, _S.KER_ARG_TILE_H
_PARTILE_SIZE, _TILEINDEX = _S.KER_ARG_PARTILE_SIZE, _S.KER_ARG_TILEINDEX
_LOC_LOOP, _LOC_LOOP_EPILOG = _L.LOC_LOOP, _L.LOC_LOOP_EPILOG

CTYPE = {1: "signed char", 2: "short int", 4: "int"}
SUFFIX = {1: "fps", 2: "fp"}
BITS = {1: 7, 2: 15, 4: 31}
USHORT_MAX = 65535
REDUCT_SLOTS = 8       # int32 partial sums of the input-tiled linear layer: one per core (gap_ncore() <= 8)
MAX_DP_TILES = 256     # KerDPLinearLayer's Tile is an unsigned char: Tile == 0 restarts the sums

# Activation codes of CNN_BasicKernels.h (CNN_ActivationOper_T), the original's CNN_EncodeActivation
KACT = {KOP.KOP_NONE: 0, KOP.KOP_RELU: 1, KOP.KOP_RELUN: 2, KOP.KOP_HSIGMOID: 3, KOP.KOP_SIGMOID: 4,
        KOP.KOP_HSWISH: 5, KOP.KOP_LEAKYRELU: 6, KOP.KOP_TANH: 7, KOP.KOP_SWISH: 8}
CLIP_ACTS = (KOP.KOP_NONE, KOP.KOP_RELU, KOP.KOP_RELUN)
O_IN_UB = (KOP.KOP_HSIGMOID, KOP.KOP_HSWISH, KOP.KOP_SWISH)   # UB carries Out_Q ("o is passed in Arg->UB")

# Output-parallel linear kernels: (In, Filter, Bias, Out) bytes -> (suffix, activations)
_ALL_PAR = (*CLIP_ACTS, KOP.KOP_HSWISH, KOP.KOP_HSIGMOID)
LINEAR_PAR = {(2, 2, 2, 2): ("fp", _ALL_PAR), (1, 1, 1, 1): ("fps", _ALL_PAR),
              (2, 1, 2, 2): ("fp_fps_fp", CLIP_ACTS), (1, 1, 2, 2): ("fps_fps_fp", CLIP_ACTS),
              (1, 1, 1, 4): ("fps_fps_fpd", CLIP_ACTS), (2, 2, 2, 4): ("fp_fp_fpd", CLIP_ACTS)}
# Input-tiled linear: KerDPLinearLayer by (In, Filter), KerDPLinearLayerReduct by (Bias, Out)
LINEAR_DP = {(2, 2): "fp", (2, 1): "fp_fps", (1, 1): "fps"}
LINEAR_REDUCT = {(2, 2): "fp", (1, 1): "fps"}
LINEAR_ACTS = tuple(KACT)


def _name(op) -> str:
    try:
        return KOP(op).name
    except ValueError:
        return repr(op)


class _Gen:
    """One generator call: its name, the user kernel's name, the script's line; typed errors."""

    def __init__(self, generator: str, name, where: str):
        self.generator, self.where = generator, where
        if not isinstance(name, str) or not name:
            raise ModelError(f"{generator}: the kernel name must be a non-empty string, got {name!r}", where=where,
                             hint=f'e.g. {generator}("Layer0", 0, ...)')
        self.name = name

    def error(self, message: str, param: Optional[str] = None, hint: Optional[str] = None) -> ModelError:
        return ModelError(f"{self.generator}: {message}", where=self.where, kernel=self.name, arg=param, hint=hint)

    def integer(self, value, param: str, lo: int, hi: Optional[int] = None, hint: Optional[str] = None) -> int:
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= lo and (hi is None or value <= hi)
        if not ok:
            span = f"at least {lo}" if hi is None else f"in [{lo}, {hi}]"
            raise self.error(f"{param} must be an integer {span}, got {value!r}", param, hint)
        return int(value)

    def data_size(self, value, param: str, allowed=(1, 2, 4)) -> int:
        if value not in allowed or isinstance(value, bool):
            what = ", ".join({1: "1 (byte)", 2: "2 (half word)", 4: "4 (word)"}[a] for a in allowed)
            raise self.error(f"{param} is {value!r}: a data size must be {what}", param,
                             hint="16-bit fixed point is 2, 8-bit is 1")
        return int(value)

    def q(self, value, param: str, hi: int = 31) -> int:
        return self.integer(value, param, 0, hi, hint="a Q format is the number of fractional bits")

    def l3(self, value, param: str) -> int:
        """An InL3 flag: 0 (L2) or any other integer (L3, as the original's ``InL3?O_L2DB:0``)."""
        if not isinstance(value, int):
            raise self.error(f"{param} must be 0 (in L2) or 1 (in L3), got {value!r}", param)
        return int(O.O_L2DB) if value else 0

    def oper(self, value, param: str, allowed, hint: str) -> KOP:
        try:
            op = KOP(value)
        except ValueError:
            op = None
        if op not in allowed:
            raise self.error(f"{param} {_name(value)} is not supported: expected "
                             + ", ".join(_name(a) for a in allowed), param, hint)
        return op

    def control(self, Ctrl, orientation: bool = True, parallel: Optional[int] = 1):
        """The Ctrl fields this generator reads: (orientation, ReluN)."""
        c = gen_control(Ctrl, self.generator, self.name, self.where)
        orient = resolved(c.tile_orientation, int(TILE_HOR))
        if not orientation and orient != int(TILE_HOR):
            raise self.error("TileOrientation TILE_VER is not supported: this generator tiles the lines of 1 x N "
                             "arguments, which a vertical tiling cannot cut", "Ctrl",
                             hint='leave "TILEORIENTATION" at -1 or TILE_HOR')
        par = resolved(c.parallel_features, parallel)
        if par != parallel:
            kind = "feature-parallel (KerPar*)" if par else "single-feature"
            raise self.error(f"ParallelFeatures {par}: the CNN library has no {kind} kernel for this layer", "Ctrl",
                             hint=f'leave "PARALLELFEATURES" at -1 or {parallel}')
        return Tile_Orientation_T(orient), resolved(c.relun, 6)

    def bounds(self, oper: KOP, out_size: int, relun: int, out_q: int) -> tuple:
        """(LB, UB) as the original's CNN_SetUpperLowerBounds, UB = Out_Q for the activations
        that take o in UB; a ReLUN bound the output cannot hold is refused."""
        bits = BITS[out_size]
        lo, hi = -(1 << bits), (1 << bits) - 1
        if oper == KOP.KOP_RELU:
            return 0, hi
        if oper == KOP.KOP_RELUN:
            ub = relun << out_q
            if ub > hi:
                raise self.error(f"KOP_RELUN: the bound ReluN << Out_Q = {relun} << {out_q} = {ub} cannot be "
                                 f"represented on {bits} bits", "Out_Q",
                                 hint="lower Out_Q or ReluN (CNN_SetGenCtrl(Ctrl, \"RELUN\", N))")
            return 0, ub
        if oper in O_IN_UB:
            return lo, out_q
        return lo, hi

    def solve(self, attempts: list):
        """Declare the user kernel with each builder of ``attempts`` in turn, with
        AT_KERNEL_NOSOLUTION_ERROR off for all but the last (the original's fallbacks); the
        script's own setting is restored. Returns the tiling."""
        saved = AT_GetKernelCtrl(NOSOLUTION)
        try:
            for i, build in enumerate(attempts):
                last = i == len(attempts) - 1
                AT_SetKernelCtrl(NOSOLUTION, saved if last else 0)
                tiling = build()
                if tiling is not None:
                    return tiling
        finally:
            AT_SetKernelCtrl(NOSOLUTION, saved)
        return None


def _ptr(size: int) -> str:
    return CTYPE[size] + " * __restrict__"


# ---------------------------------------------------------------------------------------------
# Linear layers


def CNN_LinearReLU(Name, Ctrl, In_DataSize, Filter_DataSize, Bias_DataSize, Out_DataSize, In_Q, Filter_Q, Bias_Q,
                   Out_Q, In_InL3, Filter_InL3, Bias_InL3, Out_InL3, InDim, OutDim, LinearOper, ReLUOper) -> int:
    """A fully connected layer ``Out[i] = act(Bias[i] << (In_Q+Filter_Q-Bias_Q) + sum_j In[j] *
    Filter[i][j])`` normalised to Out_Q: ``Name(In, Filter, Bias, Out)``, Filter ``[OutDim][InDim]``.

    Data sizes (In, Filter, Bias, Out): (2,2,2,2), (1,1,1,1), (2,1,2,2), (1,1,2,2), (1,1,1,4),
    (2,2,2,4). ReLUOper: KOP_NONE, KOP_RELU, KOP_RELUN (N from Ctrl "RELUN", 6 by default),
    KOP_HSWISH, KOP_HSIGMOID ((2,2,2,2) and (1,1,1,1)); KOP_LEAKYRELU, KOP_SIGMOID, KOP_TANH,
    KOP_SWISH through the input-tiled form (Out 1 or 2 bytes, not (1,1,1,4)/(2,2,2,4))."""
    g = _Gen("CNN_LinearReLU", Name, caller_where())
    orient, relun = g.control(Ctrl, orientation=False, parallel=1)
    sizes = tuple(g.data_size(v, p) for v, p in ((In_DataSize, "In_DataSize"), (Filter_DataSize, "Filter_DataSize"),
                                                  (Bias_DataSize, "Bias_DataSize"), (Out_DataSize, "Out_DataSize")))
    in_q, filter_q, bias_q, out_q = (g.q(v, p) for v, p in ((In_Q, "In_Q"), (Filter_Q, "Filter_Q"),
                                                           (Bias_Q, "Bias_Q"), (Out_Q, "Out_Q")))
    l3 = {p: g.l3(v, p) for v, p in ((In_InL3, "In_InL3"), (Filter_InL3, "Filter_InL3"), (Bias_InL3, "Bias_InL3"),
                                      (Out_InL3, "Out_InL3"))}
    in_dim = g.integer(InDim, "InDim", 1, USHORT_MAX, hint="the basic kernels take sizes as unsigned short")
    out_dim = g.integer(OutDim, "OutDim", 1, USHORT_MAX, hint="the basic kernels take sizes as unsigned short")
    g.oper(LinearOper, "LinearOper", (KOP.KOP_LINEAR,), "CNN_LinearReLU always takes KOP_LINEAR")
    act = g.oper(ReLUOper, "ReLUOper", LINEAR_ACTS, "the activations the CNN library's linear kernels have")
    in_size, filter_size, bias_size, out_size = sizes

    par = LINEAR_PAR.get(sizes)
    dp, reduct = LINEAR_DP.get((in_size, filter_size)), LINEAR_REDUCT.get((bias_size, out_size))
    par_ok = par is not None and act in par[1]
    dp_ok = dp is not None and reduct is not None
    if not par_ok and not dp_ok:
        combos = ", ".join(str(k) for k in LINEAR_PAR)
        if par is None:
            raise g.error(f"no basic kernel takes data sizes (In, Filter, Bias, Out) = {sizes}", "Out_DataSize",
                          hint=f"the CNN library has {combos}")
        raise g.error(f"no basic kernel applies {_name(act)} to data sizes {sizes}: "
                      f"KerParLinearLayerReLU_{par[0]} clips only", "ReLUOper",
                      hint="use KOP_NONE, KOP_RELU or KOP_RELUN, or Out_DataSize 2 (the reduction applies "
                           "every activation)")
    norm, norm_bias = in_q + filter_q - out_q, in_q + filter_q - bias_q
    if norm < 0:
        raise g.error(f"In_Q + Filter_Q - Out_Q = {in_q} + {filter_q} - {out_q} = {norm} is a negative shift: the "
                      "kernels only shift the accumulator right (Norm is unsigned)", "Out_Q",
                      hint=f"Out_Q at most In_Q + Filter_Q = {in_q + filter_q}")
    if norm > 31 or abs(norm_bias) > 31:
        raise g.error(f"shifts of {norm} (Norm) and {norm_bias} (NormBias) bits: a 32-bit accumulator takes at most "
                      "31", "Bias_Q" if abs(norm_bias) > 31 else "Out_Q", hint="bring the Q formats closer together")
    bits = BITS[out_size]
    if act in (KOP.KOP_SIGMOID, KOP.KOP_TANH) and out_q != bits:
        raise g.error(f"{_name(act)} outputs Q{bits} on {out_size} byte(s), but Out_Q is {out_q}", "Out_Q",
                      hint=f"Out_Q {bits}")
    lb, ub = g.bounds(act, out_size, relun, out_q)
    in_l3, filter_l3, bias_l3, out_l3 = l3["In_InL3"], l3["Filter_InL3"], l3["Bias_InL3"], l3["Out_InL3"]
    cargs = CArgs(4, TCArg(_ptr(in_size), "In"), TCArg(_ptr(filter_size), "Filter"), TCArg(_ptr(bias_size), "Bias"),
                  TCArg(_ptr(out_size), "Out"))

    def output_parallel():
        kernel = {KOP.KOP_HSWISH: "Hswish", KOP.KOP_HSIGMOID: "Hsigmoid"}.get(act, "ReLU")
        return UserKernel(Name,
            KernelIterSpace(2, IterParSpace(D0, out_dim, 8), IterTiledSpace(T0)),
            orient,
            cargs,
            Calls(1,
                Call(f"KerParLinearLayer{kernel}_{par[0]}", _LOC_LOOP,
                    Bindings(11,
                        K_Arg("In", _TILE),                          # the whole input
                        Imm(in_dim),                                 # inputs
                        Imm(in_dim),                                 # row length of Filter
                        K_ArgPar("Out", _PARTILE_SIZE, D0),          # outputs of this chunk
                        K_Arg("Filter", _TILE),                      # their filter rows
                        K_Arg("Bias", _TILE),                        # their biases
                        K_Arg("Out", _TILE),                         # outputs
                        Imm(norm),                                   # accumulator Q (i+w) to Out_Q
                        Imm(norm_bias),                              # Bias_Q to i+w
                        Imm(lb),
                        Imm(ub)))),                                  # upper bound, or Out_Q (hswish, hsigmoid)
            KerArgs(4,
                KerArg("In", KerArgSpace(1, T0), O.O_IN | O.O_BUFF | O.O_NTILED | in_l3, 1, 1, in_dim * in_size,
                       0, 0, 0, "In"),
                KerArg("Filter", KerArgSpace(1, D0), O.O_IN | O.O_DB | O.O_CONST | filter_l3, 1, 1,
                       in_dim * filter_size, 0, 0, 0, "Filter"),
                KerArg("Bias", KerArgSpace(1, D0), O.O_IN | O.O_DB | O.O_CONST | bias_l3, 1, 1, bias_size,
                       0, 0, 0, "Bias"),
                KerArg("Out", KerArgSpace(1, D0), O.O_OUT | O.O_DB | out_l3, 1, 1, out_size, 0, 0, 0, "Out")))

    def input_tiled(in_buffer: bool):
        def build():
            in_type = (O.O_IN | O.O_BUFF | O.O_TILED) if in_buffer else (O.O_IN | O.O_DB)
            return UserKernel(Name,
                KernelIterSpace(2, IterFixedSpace(D0, out_dim), IterTiledSpace(T0)),
                orient,
                cargs,
                Calls(2,
                    Call(f"KerDPLinearLayer_{dp}", _LOC_LOOP,
                        Bindings(5,
                            K_Arg("In", _TILE),                      # input tile
                            K_Arg("Filter", _TILE),                  # the matching part of the filter row
                            K_Arg("Reduct", _TILE),                  # one int32 partial sum per core
                            K_Arg("Filter", _TILE_H),                # inputs in this tile
                            Ker_IteratorIndex(T0))),                 # tile index (0: start the sums)
                    Call(f"KerDPLinearLayerReduct_{reduct}", _LOC_LOOP_EPILOG,
                        Bindings(8,
                            K_Arg("Reduct", _TILE),                  # the partial sums
                            K_Arg("Bias", _TILE),                    # this output's bias
                            K_Arg("Out", _TILE),                     # this output
                            Imm(lb),
                            Imm(ub),                                 # upper bound, or Out_Q
                            Imm(norm),
                            Imm(norm_bias),
                            Imm(KACT[act])))),                       # the activation
                KerArgs(5,
                    KerArg("In", KerArgSpace(1, T0), in_type | in_l3, 1, in_dim, in_size, 0, 0, 0, "In"),
                    KerArg("Filter", KerArgSpace(2, D0, T0), O.O_IN | O.O_DB | O.O_CONST | filter_l3, 1, in_dim,
                           filter_size, 0, 0, 0, "Filter"),
                    KerArg("Bias", KerArgSpace(1, D0), O.O_IN | O.O_BUFF | O.O_CONST | bias_l3, 1, 1, bias_size,
                           0, 0, 0, "Bias"),
                    KerArg("Out", KerArgSpace(1, D0), O.O_OUT | O.O_BUFF | out_l3, 1, 1, out_size, 0, 0, 0, "Out"),
                    KerArg("Reduct", KerArgSpace(1, T0), O.O_BUFF | O.O_NTILED, REDUCT_SLOTS, 1, 4, 0, 0, 0, "")))
        return build

    attempts = ([output_parallel] if par_ok else []) + ([input_tiled(True), input_tiled(False)] if dp_ok else [])
    tiling = g.solve(attempts)
    if tiling is None:
        return 0
    if any(a.name == "Reduct" for a in tiling.args) and tiling.count(T0) > MAX_DP_TILES:
        raise g.error(f"the input-tiled form needs {tiling.count(T0)} input tiles under this L1 budget, more than the "
                      f"{MAX_DP_TILES} KerDPLinearLayer's Tile (an unsigned char) can number", "InDim",
                      hint="give the layer more L1 (SetL1MemorySize)")
    AddKernelInfos(Name, AT_KernelInfo_T.AT_KERINFO_OPER, in_dim * out_dim + (out_dim if act != KOP.KOP_NONE else 0),
                   0)
    AddKernelInfos(Name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH,
                   in_dim * out_dim * in_size + out_dim * out_size + in_dim * out_dim * filter_size
                   + out_dim * bias_size, 0)
    AddKernelArgDim(Name, "In", 2, in_dim, in_size)
    AddKernelArgDim(Name, "Filter", 3, out_dim, in_dim, filter_size)
    AddKernelArgDim(Name, "Bias", 2, out_dim, bias_size)
    AddKernelArgDim(Name, "Out", 2, out_dim, out_size)
    return 1


# ---------------------------------------------------------------------------------------------
# Softmax


def CNN_SoftMax(Name, Ctrl, In_DataSize, Out_DataSize, In_Q, Out_Q, In_InL3, Out_InL3, Dim, SoftMaxOper) -> int:
    """``Out = softmax(In)``, In in Q In_Q (1 or 2 bytes), Out Q15 on 2 bytes: ``Name(In, Out)``.
    Input and output are whole in L1 (the original's buffers); one ``KerParSoftMax_*`` call."""
    g = _Gen("CNN_SoftMax", Name, caller_where())
    orient, _ = g.control(Ctrl, orientation=False, parallel=0)
    in_size = g.data_size(In_DataSize, "In_DataSize", (1, 2))
    out_size = g.data_size(Out_DataSize, "Out_DataSize", (2,))
    in_q = g.q(In_Q, "In_Q", 15)
    out_q = g.q(Out_Q, "Out_Q")
    if out_q != 15:
        raise g.error(f"the output is always Q15, but Out_Q is {out_q}", "Out_Q", hint="Out_Q 15")
    in_l3, out_l3 = g.l3(In_InL3, "In_InL3"), g.l3(Out_InL3, "Out_InL3")
    dim = g.integer(Dim, "Dim", 1, USHORT_MAX, hint="KerParSoftMax takes N as an unsigned short")
    g.oper(SoftMaxOper, "SoftMaxOper", (KOP.KOP_SOFTMAX,), "CNN_SoftMax always takes KOP_SOFTMAX")
    tiling = UserKernel(Name,
        KernelIterSpace(1, IterTiledSpace(T0)),
        orient,
        CArgs(2, TCArg(_ptr(in_size), "In"), TCArg(_ptr(out_size), "Out")),
        Calls(1,
            Call(f"KerParSoftMax_{SUFFIX[in_size]}", _LOC_LOOP,
                Bindings(4,
                    K_Arg("In", _TILE),                              # the inputs
                    K_Arg("In", _TILE_H),                            # how many
                    Imm(in_q),                                       # their Q
                    K_Arg("Out", _TILE)))),                          # Q15 probabilities
        KerArgs(2,
            KerArg("In", KerArgSpace(1, T0), O.O_IN | O.O_BUFF | O.O_NTILED | in_l3, 1, dim, in_size, 0, 0, 8, "In"),
            KerArg("Out", KerArgSpace(1, T0), O.O_OUT | O.O_BUFF | O.O_NTILED | out_l3, 1, dim, out_size, 0, 0, 0,
                   "Out")))
    if tiling is None:
        return 0
    AddKernelInfos(Name, AT_KernelInfo_T.AT_KERINFO_OPER, dim, 0)
    AddKernelInfos(Name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, dim * in_size + dim * out_size, 0)
    AddKernelArgDim(Name, "In", 2, dim, in_size)
    AddKernelArgDim(Name, "Out", 2, dim, out_size)
    return 1


# ---------------------------------------------------------------------------------------------
# Matrix additions


def _mat_add(g: _Gen, Name, Ctrl, In1_DataSize, In2_DataSize, Out_DataSize, In1_Q, In2_Q, Out_Q, In1_InL3, In2_InL3,
             Out_InL3, InFeat, OutFeat, Width, Height, kind: str) -> int:
    orient, _ = g.control(Ctrl, orientation=True, parallel=1)
    sizes = tuple(g.data_size(v, p, (1, 2)) for v, p in ((In1_DataSize, "In1_DataSize"),
                                                         (In2_DataSize, "In2_DataSize"),
                                                         (Out_DataSize, "Out_DataSize")))
    if len(set(sizes)) != 1:
        raise g.error(f"no basic kernel adds data sizes (In1, In2, Out) = {sizes}", "Out_DataSize",
                      hint="the CNN library has (2, 2, 2) and (1, 1, 1)")
    size = sizes[0]
    bits = BITS[size]
    qs = tuple(g.q(v, p, bits) for v, p in ((In1_Q, "In1_Q"), (In2_Q, "In2_Q"), (Out_Q, "Out_Q")))
    if kind != "dyn" and len(set(qs)) != 1:
        raise g.error(f"In1_Q, In2_Q and Out_Q differ ({qs[0]}, {qs[1]}, {qs[2]}) but KerParMatAdd adds the items as "
                      "they are", "In2_Q", hint="use CNN_MatAddDynAdjust to align the Q formats")
    l3 = [g.l3(v, p) for v, p in ((In1_InL3, "In1_InL3"), (In2_InL3, "In2_InL3"), (Out_InL3, "Out_InL3"))]
    feat = g.integer(InFeat, "InFeat", 1, USHORT_MAX)
    if OutFeat != feat:
        raise g.error(f"OutFeat ({OutFeat!r}) must equal InFeat ({feat})", "OutFeat", hint=f"OutFeat {feat}")
    width = g.integer(Width, "Width", 1, USHORT_MAX)
    height = g.integer(Height, "Height", 1, USHORT_MAX)
    lb, ub = -(1 << bits), (1 << bits) - 1
    kernel = {"add": "KerParMatAdd", "relu": "KerParMatAddReLU", "dyn": "KerParMatAddDynAdjust"}[kind]
    q_binds = [Imm(q) for q in qs] if kind == "dyn" else [AT_IGNORE_ARG_BINDING] * 3
    tiling = UserKernel(Name,
        KernelIterSpace(2, IterParSpace(D0, feat, 8), IterTiledSpace(T0)),
        orient,
        CArgs(3, TCArg(_ptr(size), "In1"), TCArg(_ptr(size), "In2"), TCArg(_ptr(size), "Out")),
        Calls(1,
            Call(f"{kernel}_{SUFFIX[size]}", _LOC_LOOP,
                Bindings(11,
                    K_Arg("In1", _TILE),
                    K_Arg("In2", _TILE),
                    K_Arg("Out", _TILE),
                    K_Arg("In1", _TILE_W),                           # tile width
                    K_Arg("In1", _TILE_H),                           # tile height
                    K_ArgPar("In1", _PARTILE_SIZE, D0),              # features in this chunk
                    Imm(lb),
                    Imm(ub),
                    *q_binds))),                                     # In1_Q, In2_Q, Out_Q (DynAdjust only)
        KerArgs(3,
            KerArg("In1", KerArgSpace(2, D0, T0), O.O_IN | O.O_DB | l3[0], width, height, size, 0, 0, 0, "In1"),
            KerArg("In2", KerArgSpace(2, D0, T0), O.O_IN | O.O_DB | l3[1], width, height, size, 0, 0, 0, "In2"),
            KerArg("Out", KerArgSpace(2, D0, T0), O.O_OUT | O.O_DB | l3[2], width, height, size, 0, 0, 0, "Out")))
    if tiling is None:
        return 0
    AddKernelInfos(Name, AT_KernelInfo_T.AT_KERINFO_OPER, feat * width * height, 0)
    AddKernelInfos(Name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, 3 * width * height * size * feat, 0)
    for arg in ("In1", "In2", "Out"):
        AddKernelArgDim(Name, arg, 4, feat, height, width, size)
    return 1


def CNN_MatAdd(Name, Ctrl, In1_DataSize, In2_DataSize, Out_DataSize, In1_Q, In2_Q, Out_Q, In1_InL3, In2_InL3,
               Out_InL3, InFeat, OutFeat, Width, Height, AddMatOper) -> int:
    """``Out = sat(In1 + In2)`` over InFeat features of Width x Height (all in one Q; KOP_MATADD,
    or KOP_MATADD_RELU for ``max(., 0)``): ``Name(In1, In2, Out)``."""
    g = _Gen("CNN_MatAdd", Name, caller_where())
    op = g.oper(AddMatOper, "AddMatOper", (KOP.KOP_MATADD, KOP.KOP_MATADD_RELU),
                "CNN_MatAddDynAdjust aligns different Q formats; CNN_MatAddRelu adds a ReLU")
    return _mat_add(g, Name, Ctrl, In1_DataSize, In2_DataSize, Out_DataSize, In1_Q, In2_Q, Out_Q, In1_InL3, In2_InL3,
                    Out_InL3, InFeat, OutFeat, Width, Height, "relu" if op == KOP.KOP_MATADD_RELU else "add")


def CNN_MatAddRelu(Name, Ctrl, In1_DataSize, In2_DataSize, Out_DataSize, In1_Q, In2_Q, Out_Q, In1_InL3, In2_InL3,
                   Out_InL3, InFeat, OutFeat, Width, Height, AddMatOper, ReLUOper) -> int:
    """``CNN_MatAdd`` followed by ReLUOper (KOP_NONE or KOP_RELU): ``Name(In1, In2, Out)``."""
    g = _Gen("CNN_MatAddRelu", Name, caller_where())
    g.oper(AddMatOper, "AddMatOper", (KOP.KOP_MATADD,), "CNN_MatAddRelu takes KOP_MATADD")
    act = g.oper(ReLUOper, "ReLUOper", (KOP.KOP_NONE, KOP.KOP_RELU), "the CNN library has KerParMatAddReLU only")
    return _mat_add(g, Name, Ctrl, In1_DataSize, In2_DataSize, Out_DataSize, In1_Q, In2_Q, Out_Q, In1_InL3, In2_InL3,
                    Out_InL3, InFeat, OutFeat, Width, Height, "relu" if act == KOP.KOP_RELU else "add")


def CNN_MatAddDynAdjust(Name, Ctrl, In1_DataSize, In2_DataSize, Out_DataSize, In1_Q, In2_Q, Out_Q, In1_InL3,
                        In2_InL3, Out_InL3, InFeat, OutFeat, Width, Height, AddMatOper) -> int:
    """``Out = ((A >> |In1_Q - In2_Q|) + B) << (Out_Q - min(In1_Q, In2_Q))`` (A the input of the
    larger Q; a negative shift is a right shift), saturated: ``Name(In1, In2, Out)``."""
    g = _Gen("CNN_MatAddDynAdjust", Name, caller_where())
    g.oper(AddMatOper, "AddMatOper", (KOP.KOP_MATADD_DYNADJUST, KOP.KOP_MATADD),
           "CNN_MatAddDynAdjust takes KOP_MATADD_DYNADJUST")
    return _mat_add(g, Name, Ctrl, In1_DataSize, In2_DataSize, Out_DataSize, In1_Q, In2_Q, Out_Q, In1_InL3, In2_InL3,
                    Out_InL3, InFeat, OutFeat, Width, Height, "dyn")


# ---------------------------------------------------------------------------------------------
# Global pooling


def CNN_GlobalPool(Name, Ctrl, In_DataSize, Out_DataSize, In_Q, Out_Q, In_InL3, Out_InL3, InFeat, OutFeat, Width,
                   Height, PoolOper) -> int:
    """Per feature the max (KOP_GLOBAL_MAXPOOL) or the mean rounded half up (KOP_GLOBAL_AVGPOOL)
    of its Width x Height plane, in the input's Q: ``Name(In, Out)``, Out ``[OutFeat]``."""
    g = _Gen("CNN_GlobalPool", Name, caller_where())
    op = g.oper(PoolOper, "PoolOper", (KOP.KOP_GLOBAL_MAXPOOL, KOP.KOP_GLOBAL_AVGPOOL),
                "CNN_PoolReLU does windowed pooling")
    orient, _ = g.control(Ctrl, orientation=False, parallel=1)
    in_size = g.data_size(In_DataSize, "In_DataSize", (1, 2))
    out_size = g.data_size(Out_DataSize, "Out_DataSize", (1, 2))
    if in_size != out_size:
        raise g.error(f"no basic kernel pools data size {in_size} into {out_size}", "Out_DataSize",
                      hint=f"Out_DataSize {in_size}")
    in_q, out_q = g.q(In_Q, "In_Q", BITS[in_size]), g.q(Out_Q, "Out_Q", BITS[out_size])
    if in_q != out_q:
        raise g.error(f"the result keeps the input's Q{in_q}, but Out_Q is {out_q}", "Out_Q", hint=f"Out_Q {in_q}")
    in_l3, out_l3 = g.l3(In_InL3, "In_InL3"), g.l3(Out_InL3, "Out_InL3")
    feat = g.integer(InFeat, "InFeat", 1, USHORT_MAX)
    if OutFeat != feat:
        raise g.error(f"OutFeat ({OutFeat!r}) must equal InFeat ({feat})", "OutFeat", hint=f"OutFeat {feat}")
    width = g.integer(Width, "Width", 1, USHORT_MAX)
    height = g.integer(Height, "Height", 1, USHORT_MAX)
    kind = "Max" if op == KOP.KOP_GLOBAL_MAXPOOL else "Avg"
    s = SUFFIX[in_size]
    cargs = CArgs(2, TCArg(_ptr(in_size), "In"), TCArg(_ptr(out_size), "Out"))

    def full_features():
        return UserKernel(Name,
            KernelIterSpace(1, IterTiledSpace(T0)),
            orient,
            cargs,
            Calls(1,
                Call(f"KerParGlobal{kind}PoolFullFeat_{s}", _LOC_LOOP,
                    Bindings(6,
                        K_Arg("In", _TILE),                          # whole features
                        Imm(width),
                        Imm(height),
                        K_Arg("Out", _TILE_H),                       # features in this tile
                        Imm(out_q),                                  # unused
                        K_Arg("Out", _TILE)))),
            KerArgs(2,
                KerArg("In", KerArgSpace(1, T0), O.O_IN | O.O_DB | in_l3, width * height, feat, in_size, 0, 0, 8,
                       "In"),
                KerArg("Out", KerArgSpace(1, T0), O.O_OUT | O.O_DB | out_l3, 1, feat, out_size, 0, 0, 0, "Out")))

    def tiled_plane():
        if kind == "Avg" and width * height > (1 << (31 - BITS[in_size])):
            raise g.error(f"a feature of {width} x {height} does not fit L1, and the tiled form's int32 sum of "
                          f"{width * height} items of {in_size} byte(s) can overflow", "Width",
                          hint="give the layer more L1 so that a whole feature fits")
        return UserKernel(Name,
            KernelIterSpace(2, IterParSpace(D0, feat, 8), IterTiledSpace(T0)),
            orient,
            cargs,
            Calls(2,
                Call(f"KerParGlobal{kind}PoolDP_{s}", _LOC_LOOP,
                    Bindings(6,
                        K_Arg("In", _TILE),                          # a tile of a chunk of features
                        K_Arg("In", _TILE_W),
                        K_Arg("In", _TILE_H),
                        K_ArgPar("In", _PARTILE_SIZE, D0),           # features in this chunk
                        K_Arg("In", _TILEINDEX),                     # 0: start the accumulators
                        K_Arg("DPOut", _TILE))),                     # one int32 per feature
                Call(f"KerParGlobal{kind}PoolDPReduct_{s}", _LOC_LOOP_EPILOG,
                    Bindings(6,
                        K_Arg("DPOut", _TILE),
                        Imm(width),                                  # the whole plane
                        Imm(height),
                        K_ArgPar("In", _PARTILE_SIZE, D0),
                        Imm(out_q),                                  # unused
                        K_Arg("Out", _TILE)))),
            KerArgs(3,
                KerArg("In", KerArgSpace(2, D0, T0), O.O_IN | O.O_DB | in_l3, width, height, in_size, 0, 0, 0, "In"),
                KerArg("DPOut", KerArgSpace(1, D0), O.O_BUFF, 1, 1, 4, 0, 0, 0, ""),
                KerArg("Out", KerArgSpace(1, D0), O.O_OUT | O.O_DB | out_l3, 1, 1, out_size, 0, 0, 0, "Out")))

    tiling = g.solve([full_features, tiled_plane])
    if tiling is None:
        return 0
    AddKernelInfos(Name, AT_KernelInfo_T.AT_KERINFO_OPER, feat * width * height, 0)
    AddKernelInfos(Name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, width * height * in_size * feat + out_size * feat, 0)
    AddKernelArgDim(Name, "In", 4, feat, height, width, in_size)
    AddKernelArgDim(Name, "Out", 4, feat, 1, 1, out_size)
    return 1


__all__ = ["CNN_LinearReLU", "CNN_SoftMax", "CNN_MatAdd", "CNN_MatAddRelu", "CNN_MatAddDynAdjust", "CNN_GlobalPool"]
