"""The SQ8 generators' implementations for the original's 1-byte requantisation (Scale_DataSize 1,
CHW feature maps): GreenWaves' ``CNN_Generators_SQ8`` as a model script over the public API, so
scripts written for it run unchanged and give its answers (numpy reference:
:mod:`.sq8_original`; facts and sources: ``docs/cnn-sq8-original.md``).

Called by :mod:`.sq8_generators` with the generator's :class:`.sq8_common.Sq8Setup` then the
generator's arguments after ``Ctrl``, in order. Layouts: In ``[InFeat][Height][Width]``, Filter
``[OutFeat][InFeat][Fcy][Fcx]`` (depth wise ``[InFeat][Fcy][Fcx]``), Out ``[OutFeat][Ho][Wo]``;
``Scale`` (unsigned char) and ``ScaleN`` (signed char, read unsigned) per output feature; the byte
``Infos`` vector of ``AT_INF_DIM + 1`` bytes (PRENORM at byte 12 is read by the reductions; the
original declares ``AT_INF_DIM`` and reads one past it).

How a convolution is made (the original's chain, the fp generators' iteration spaces, see
:mod:`.cnn_conv`): output features in chunks (D1) > tiles (T0) > input features in chunks of 4
(D0); depth wise, features (D0) > tiles. ``KerParSetBias{B8,B16,B32}_SQ8`` at ``LOC_D0_PROLOG``
(``Bias << Infos[AT_INF_BIASN]`` into the int32 ``ConvOut``), ``KerParConvNxMDxDyStrideSxSy_SQ8``
at ``LOC_D0``, then at ``LOC_D0_EPILOG`` ``KerParReduct_CC_<Act>_SQ8`` (channel scale and
activation) or, with a pooling, ``KerParReductIO_CC_SQ8`` (in place, no activation) then
``KerPar{Max,Avg}PoolNxMStrideSxSy_<Act>_SQ8`` (it fuses none/ReLU/ReLUN; any other activation
runs after it as ``Ker_<Act>_SQ8`` on the output tile). Depth wise: the convolution takes the bias
itself, everything at ``LOC_LOOP``.

The other generators: pooling and activation alone (``CNN_PoolAct_SQ8``, ``CNN_Act_SQ8``:
features > tiles), grouped convolutions (a kernel group over ``NameBody``), linear layers (outputs
in chunks with the input whole, else one output at a time over input tiles), global pooling
(whole features, else tiles of the plane), MatAdd and tensor x vector (features > tiles), matrix
products (bands of lines of In1/Out outside bands of columns of In2), softmax (whole, Q15 out). Each function's
docstring names its kernels; ``docs/cnn-sq8-original.md`` ("Our generators") sums them up.

Differences from the original (stated, not silent): one generic NxM kernel for every geometry;
TILE_HOR unless Ctrl's TileOrientation says otherwise (the original tries both and keeps the
cheaper); the HWC, im2col and 1x1-on-1x1-as-linear paths are not taken (the CHW kernels give the
same values); the set-bias and depth-wise kernels read NormBias from ``Infos`` themselves (a
``K_TileOper`` '@' binding is evaluated before Infos' DMA lands); refused as not supported yet:
ParallelFeatures 0, KOP_SIGMOID/KOP_TANH (the original's sigmoid table is GreenWaves' data, not
copied, and no formula reproduces it), pooling dilations, MatMul's scalar-scale / transposed forms
and strides, KOP_GLOBAL_SUMPOOL.
"""

from __future__ import annotations

from ..api import (
    AT_IGNORE_ARG_BINDING,
    AddKernelArgDim,
    AddKernelInfos,
    AT_GetKernelCtrl,
    AT_SetKernelCtrl,
    Bindings,
    C_Arg,
    Call,
    Calls,
    CArgs,
    CloseKernelGroup,
    Imm,
    IterFixedSpace,
    IterParSpace,
    IterTiledSpace,
    K_Arg,
    K_ArgPar,
    Ker_IteratorIndex,
    KerArg,
    KerArgP,
    KerArgs,
    KerArgSpace,
    KerGroupArg,
    KernelIterSpace,
    KG_ArgOper,
    OpenKernelGroup,
    TCArg,
    UserKernel,
    UserKernelCall,
    UserKernelGroupK,
)
from ..constants import (
    AT_GraphCtrl_T,
    AT_KernelInfo_T,
    KernelArgConstraints_T,
    KernelArgSelect_T,
    KernelCallLocationT,
    KernelIteratorT,
    KernelOper_T,
    Object_Type_T,
    PadType_T,
    Tile_Orientation_T,
)
from ..model.session import current_model
from .cnn_conv import conv_pool_geometry
from .cnn_ctrl import resolved
from .cnn_geometry import CNN_LayerOutputDim, CNN_TotalPaddingValue, extent
from .sq8_original import AT_INF_DIM

K = KernelOper_T
S = KernelArgSelect_T
O = Object_Type_T
L = KernelCallLocationT
D0, D1, T0, T1 = (KernelIteratorT.KER_ITER_D0, KernelIteratorT.KER_ITER_D1, KernelIteratorT.KER_ITER_TILE0,
                  KernelIteratorT.KER_ITER_TILE1)
IGNORE = AT_IGNORE_ARG_BINDING
INFOS_SIZE = AT_INF_DIM + 1
REDUCT_SLOTS = 8        # the input-tiled linear layer's int32 partial sums: one per core (gap_ncore() <= 8)
SC, UC = "signed char * __restrict__", "unsigned char * __restrict__"
BIAS_CTYPES = {1: SC, 2: "short int * __restrict__", 4: "int * __restrict__"}
BIAS_NAMES = {1: "B8", 2: "B16", 4: "B32"}
# activation -> the name in the basic kernels' names
ACT_NAMES = {K.KOP_NONE: "ActNone", K.KOP_ACT_NONE: "ActNone", K.KOP_RELU: "ReLU", K.KOP_RELUN: "ReLUN",
             K.KOP_RELUM: "ReLUM", K.KOP_RELUMN: "ReLUMN", K.KOP_HSIGMOID: "HSigmoid", K.KOP_HSWISH: "HSwish",
             K.KOP_LEAKYRELU: "LeakyReLU"}
POOL_FUSED = ("ActNone", "ReLU", "ReLUN")          # what the pooling kernels apply themselves
MATADD_ACTS = ("ActNone", "ReLU", "ReLUN", "HSigmoid", "HSwish", "LeakyReLU")   # the MatAdd kernels
CONV_OPERS = (K.KOP_NONE, K.KOP_CONV, K.KOP_CONV_DW)
POOL_OPERS = (K.KOP_NONE, K.KOP_MAXPOOL, K.KOP_AVGPOOL)
MATMUL_OPERS = (K.KOP_MATMUL, K.KOP_MATMUL_NOBIAS, K.KOP_MATMUL_SCALE_SCALAR, K.KOP_MATMUL_NOBIAS_SCALE_SCALAR,
                K.KOP_MATMUL_TRANSPOSED, K.KOP_MATMUL_NOBIAS_TRANSPOSED, K.KOP_MATMUL_SCALE_SCALAR_TRANSPOSED,
                K.KOP_MATMUL_NOBIAS_SCALE_SCALAR_TRANSPOSED)
NO_ORIGINAL = "has no 1-byte form in the original"
NO_ORIGINAL_HINT = "use Scale_DataSize 4 (Ctrl SCALE_DATASIZE)"


# ----------------------------------------------------------------------------------------------
# Shared checks


def _act(setup, ActOper) -> str:
    """The activation's name in the basic kernels (KOP_SIGMOID/KOP_TANH refused)."""
    chk = setup.chk
    if ActOper in (K.KOP_SIGMOID, K.KOP_TANH, "KOP_SIGMOID", "KOP_TANH"):
        name = K[ActOper].name if isinstance(ActOper, str) else K(ActOper).name
        chk.fail(f"ActOper {name} with Scale_DataSize 1 is not supported yet: the original's sigmoid table "
                 "(SIGMOID_LUT_uint16) is GreenWaves' data, not copied here, and no formula reproduces it; a "
                 "stand-in would give plausible but wrong values",
                 "use Scale_DataSize 4 (TensorFlow Lite Micro's LOGISTIC / TANH)")
    act = chk.oper(ActOper, "ActOper", tuple(ACT_NAMES), "an activation of the original's SQ8 kernels")
    return ACT_NAMES[act]


def _bias_size(chk, Bias_DataSize) -> int:
    size = chk.integer(Bias_DataSize, "Bias_DataSize")
    if size not in BIAS_CTYPES:
        chk.fail(f"Bias_DataSize {size} is not supported: the bias is 1, 2 or 4 bytes", "use 1, 2 or 4")
    return size


def _tiling(setup) -> tuple:
    """(orientation, pad type) from Ctrl; ParallelFeatures 0 refused."""
    ctrl, chk = setup.ctrl, setup.chk
    if resolved(ctrl.parallel_features, 1) != 1:
        chk.fail("ParallelFeatures 0 (one feature at a time, lines split over the cores) is not supported yet with "
                 "Scale_DataSize 1", "leave ParallelFeatures unset (the feature-parallel kernels give the same values)")
    orient = Tile_Orientation_T(resolved(ctrl.tile_orientation, Tile_Orientation_T.TILE_HOR))
    return orient, PadType_T(resolved(ctrl.pad_type, PadType_T.PAD_BALANCED_LEFT))


def _window(chk, what: str, dim_name: str, dim: int, f_name: str, f: int, d: int, pad: int, pad_param: str) -> None:
    """The filter (window) must fit in the padded plane."""
    if extent(f, d) > dim + pad:
        chk.fail(f"the {what} ({f_name} = {f}, spanning {extent(f, d)}) is larger than the padded {dim_name} "
                 f"({dim} + {pad} of padding): it has no output",
                 f"use a smaller {what}, or pad ({pad_param} = 1) to keep at least one output")


def _geom(chk, f_names: str, F, D, S_, pad, pad_name: str) -> tuple:
    """(fx, fy, dx, dy, sx, sy, pad) checked; f_names 'c' (convolution) or 'p' (pooling)."""
    fx, fy = chk.integer(F[0], f"F{f_names}x", 1, 255), chk.integer(F[1], f"F{f_names}y", 1, 255)
    dx = chk.integer(D[0], f"D{f_names}x", 1, 255, " (dilation)", "a dilation is 1 (none) or more")
    dy = chk.integer(D[1], f"D{f_names}y", 1, 255, " (dilation)", "a dilation is 1 (none) or more")
    sx = chk.integer(S_[0], f"S{f_names}x", 1, 255, " (stride)", "a stride is 1 or more")
    sy = chk.integer(S_[1], f"S{f_names}y", 1, 255, " (stride)", "a stride is 1 or more")
    return fx, fy, dx, dy, sx, sy, chk.flag(pad, pad_name)


def _pool_window(chk, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad) -> tuple:
    g = _geom(chk, "p", (Fpx, Fpy), (Dpx, Dpy), (Spx, Spy), PoolPad, "PoolPad")
    if g[2:4] != (1, 1):
        chk.fail(f"a pooling dilation (Dpx {g[2]}, Dpy {g[3]}) is not supported yet with Scale_DataSize 1: the "
                 "original's SQ8 pooling kernels ignore it", "use Dpx = Dpy = 1")
    return g


def _solve(attempts: list):
    """Declare the user kernel with each builder of ``attempts`` in turn, AT_KERNEL_NOSOLUTION_ERROR
    off for all but the last (the original's fallbacks); the script's own setting is restored."""
    saved = AT_GetKernelCtrl(AT_GraphCtrl_T.AT_KERNEL_NOSOLUTION_ERROR)
    try:
        for i, build in enumerate(attempts):
            AT_SetKernelCtrl(AT_GraphCtrl_T.AT_KERNEL_NOSOLUTION_ERROR, saved if i == len(attempts) - 1 else 0)
            kernel = build()
            if kernel:
                return kernel
    finally:
        AT_SetKernelCtrl(AT_GraphCtrl_T.AT_KERNEL_NOSOLUTION_ERROR, saved)
    return None


def _libs(chk, *names) -> None:
    chk.declared(names)


def _infos_arg():
    return KerArg("Infos", KerArgSpace(1, T0), O.O_IN | O.O_BUFF | O.O_NTILED | O.O_CONST, 1, 1, INFOS_SIZE, 0, 0, 0,
                  "Infos")


def _infos_dims(name: str) -> None:
    AddKernelArgDim(name, "Infos", 2, INFOS_SIZE, 1)


def _pool_call(kind: str, act_name: str, src: str, feats, do_scale: int, window: tuple, loc) -> Call:
    """The pooling of src's tile into Out's."""
    fpx, fpy, spx, spy = window
    return Call(f"KerPar{kind}PoolNxMStrideSxSy_{act_name}_SQ8", loc, Bindings(14,
        K_Arg(src, S.KER_ARG_TILE),                                 # In
        K_Arg(src, S.KER_ARG_TILE_W),                               # W
        K_Arg(src, S.KER_ARG_TILE_USEDW),                           # UsedW
        K_Arg(src, S.KER_ARG_TILE_H),                               # H
        K_Arg(src, S.KER_ARG_TILE_USEDH),                           # UsedH
        feats,                                                      # Feat of this chunk
        K_Arg("Out", S.KER_ARG_TILE),                               # Out
        K_Arg(src, S.KER_ARG_TILE_PAD),                             # Pad of this tile
        Imm(fpx), Imm(fpy), Imm(spx), Imm(spy),                     # FS, FSy, S, Sy
        Imm(do_scale),                                              # DoScale: ActScale without activation
        K_Arg("Infos", S.KER_ARG_TILE)))


def _act_call(act_name: str, src: str, feats, loc) -> Call:
    """The standalone activation of src's tile into Out's (in place when src is Out)."""
    return Call(f"Ker_{act_name}_SQ8", loc, Bindings(6,
        K_Arg(src, S.KER_ARG_TILE), K_Arg("Out", S.KER_ARG_TILE),
        K_Arg("Out", S.KER_ARG_TILE_W), K_Arg("Out", S.KER_ARG_TILE_H), feats, K_Arg("Infos", S.KER_ARG_TILE)))


def _pool_kind(pool_oper) -> str:
    return "Max" if pool_oper == K.KOP_MAXPOOL else "Avg"


# ----------------------------------------------------------------------------------------------
# Convolution, pooling, activation


def conv_pool_act(setup, Bias_DataSize, Scale_DataSize, InFeat, OutFeat, Width, Height, ConvOper, Fcx, Fcy, Dcx, Dcy,
                  Scx, Scy, ConvPad, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper) -> int:
    """``CNN_ConvolutionPoolAct_SQ8``: ``Name(In, Filter, Bias, Out, Scale, ScaleN, Infos)``; with
    ConvOper KOP_NONE, the original's fallback to ``CNN_PoolAct_SQ8`` / ``CNN_Act_SQ8``
    (``Name(In, Out, Infos)``)."""
    chk = setup.chk
    conv_oper = chk.oper(ConvOper, "ConvOper", CONV_OPERS, "a convolution of the original's SQ8 generator")
    if conv_oper == K.KOP_NONE:
        in_feat, out_feat = chk.integer(InFeat, "InFeat", 1), chk.integer(OutFeat, "OutFeat", 1)
        if in_feat != out_feat:
            chk.fail(f"ConvOper KOP_NONE with InFeat {in_feat} != OutFeat {out_feat}: without a convolution the "
                     "features pass through", "pass the same number of features")
        if chk.oper(PoolOper, "PoolOper", POOL_OPERS, "a pooling") == K.KOP_NONE:
            return act(setup, InFeat, Width, Height, ActOper)
        return pool_act(setup, InFeat, Width, Height, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper)
    return _conv(setup, setup.chk.name, Bias_DataSize, InFeat, OutFeat, Width, Height, conv_oper, Fcx, Fcy, Dcx,
                 Dcy, Scx, Scy, ConvPad, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper)


def _conv(setup, name, Bias_DataSize, InFeat, OutFeat, Width, Height, conv_oper, Fcx, Fcy, Dcx, Dcy, Scx, Scy,
          ConvPad, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper) -> int:
    chk = setup.chk
    orient, pad_type = _tiling(setup)
    bias_size = _bias_size(chk, Bias_DataSize)
    in_feat, out_feat = chk.integer(InFeat, "InFeat", 1), chk.integer(OutFeat, "OutFeat", 1)
    width, height = chk.integer(Width, "Width", 1), chk.integer(Height, "Height", 1)
    pool_oper = chk.oper(PoolOper, "PoolOper", POOL_OPERS, "a pooling (KOP_NONE, KOP_MAXPOOL or KOP_AVGPOOL)")
    act_name = _act(setup, ActOper)
    fcx, fcy, dcx, dcy, scx, scy, conv_pad = _geom(chk, "c", (Fcx, Fcy), (Dcx, Dcy), (Scx, Scy), ConvPad, "ConvPad")
    pool = pool_oper != K.KOP_NONE
    if pool:
        fpx, fpy, dpx, dpy, spx, spy, pool_pad = _pool_window(chk, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad)
    else:
        fpx = fpy = dpx = dpy = spx = spy = 1
        pool_pad = 0
    dw = conv_oper == K.KOP_CONV_DW
    if dw and in_feat != out_feat:
        chk.fail(f"a depth wise convolution (KOP_CONV_DW) needs InFeat == OutFeat, got InFeat {in_feat} and OutFeat "
                 f"{out_feat}", "use KOP_CONV to change the number of features")

    pcw = CNN_TotalPaddingValue(width, fcx, scx, dcx) if conv_pad else 0
    pch = CNN_TotalPaddingValue(height, fcy, scy, dcy) if conv_pad else 0
    _window(chk, "convolution filter", "width", width, "Fcx", fcx, dcx, pcw, "ConvPad")
    _window(chk, "convolution filter", "height", height, "Fcy", fcy, dcy, pch, "ConvPad")
    wc0, hc0, _, _, _, _, ppw, pph = CNN_LayerOutputDim(width, height, conv_oper, fcx, fcy, dcx, dcy, scx, scy,
                                                        conv_pad, pool_oper, fpx, fpy, dpx, dpy, spx, spy, pool_pad)
    if pool:
        _window(chk, "pooling window", "convolution output width", wc0, "Fpx", fpx, dpx, ppw, "PoolPad")
        _window(chk, "pooling window", "convolution output height", hc0, "Fpy", fpy, dpy, pph, "PoolPad")
    g = conv_pool_geometry(width, height, conv_oper, fcx, fcy, dcx, dcy, scx, scy, conv_pad, pool_oper, fpx, fpy,
                           dpx, dpy, spx, spy, pool_pad, pad_type, orient)

    # Basic kernels
    bname = BIAS_NAMES[bias_size]
    set_bias = None if dw else f"KerParSetBias{bname}_SQ8"
    conv_name = f"KerParConvDWNxMDxDyStrideSxSy{bname}_SQ8" if dw else "KerParConvNxMDxDyStrideSxSy_SQ8"
    reduct = "KerParReductIO_CC_SQ8" if pool else f"KerParReduct_CC_{act_name}_SQ8"
    pool_act_name = act_name if act_name in POOL_FUSED else "ActNone"
    pool_name = f"KerPar{_pool_kind(pool_oper)}PoolNxMStrideSxSy_{pool_act_name}_SQ8" if pool else None
    alone = f"Ker_{act_name}_SQ8" if pool and act_name not in POOL_FUSED else None
    _libs(chk, set_bias, conv_name, reduct, pool_name, alone)

    # Arguments
    os_ = D0 if dw else D1
    const = O.O_IN | O.O_DB | O.O_CONST
    kargs = [KerArgP("In", KerArgSpace(2, D0, T0), O.O_IN | O.O_DB, width, height, g.used_w, g.used_h, g.pad_inc_t,
                     g.pad_inc, 1, g.overlap_c, 0, g.tile_cons, "In"),
             KerArg("Bias", KerArgSpace(1, os_), const, 1, 1, bias_size, 0, 0, 0, "Bias"),
             KerArg("Scale", KerArgSpace(1, os_), const, 1, 1, 1, 0, 0, 0, "Scale"),
             KerArg("ScaleN", KerArgSpace(1, os_), const, 1, 1, 1, 0, 0, 0, "ScaleN"),
             KerArg("Filter", KerArgSpace(1, D0) if dw else KerArgSpace(2, D1, D0), const, 1, 1, fcx * fcy, 0, 0, 0,
                    "Filter"),
             KerArg("Out", KerArgSpace(2, os_, T0), O.O_OUT | O.O_DB, g.wo, g.ho, 1, 0, 0, 0, "Out"),
             KerArgP("ConvOut", KerArgSpace(2, os_, T0), O.O_BUFF | O.O_ONETILE, g.wc, g.hc, g.wc, g.hc, g.pad_inp,
                     g.pad_inp, 4, g.overlap_p, 0, 0, ""),
             _infos_arg()]

    # Calls
    loc_conv = L.LOC_LOOP if dw else L.LOC_D0
    loc_after = L.LOC_LOOP if dw else L.LOC_D0_EPILOG
    # NormBias is Infos[AT_INF_BIASN]: the kernels read it from Infos (a K_TileOper '@' binding is
    # evaluated with the invariant fields, before Infos' DMA lands)
    norm_bias = K_Arg("Infos", S.KER_ARG_TILE)
    feats = K_ArgPar("ConvOut", S.KER_ARG_PARTILE_SIZE, os_)
    calls = []
    if set_bias:
        calls.append(Call(set_bias, L.LOC_D0_PROLOG, Bindings(6,
            K_Arg("ConvOut", S.KER_ARG_TILE),                       # Out: the int32 accumulators
            K_Arg("ConvOut", S.KER_ARG_TILE_W),                     # W
            K_Arg("ConvOut", S.KER_ARG_TILE_H),                     # H
            feats,                                                  # Feat of this chunk
            K_Arg("Bias", S.KER_ARG_TILE),                          # Bias
            norm_bias)))                                            # Infos (NormBias)
    calls.append(Call(conv_name, loc_conv, Bindings(20,
        K_Arg("In", S.KER_ARG_TILE),                                # In: this chunk of input features' tile
        K_Arg("In", S.KER_ARG_TILE_W),                              # W
        K_Arg("In", S.KER_ARG_TILE_USEDW),                          # UsedW
        K_Arg("In", S.KER_ARG_TILE_H),                              # H
        K_Arg("In", S.KER_ARG_TILE_USEDH),                          # UsedH
        IGNORE if dw else K_ArgPar("Filter", S.KER_ARG_PARTILE_SIZE, D0),          # InFeatures of this chunk
        feats,                                                      # OutFeatures of this chunk
        IGNORE if dw else K_ArgPar("Filter", S.KER_ARG_LOADEDPARTILE_SIZE, D0),    # TotalInFeatures
        K_Arg("Filter", S.KER_ARG_TILE),                            # Filter
        K_Arg("Bias", S.KER_ARG_TILE) if dw else IGNORE,            # Bias: depth wise only
        K_Arg("ConvOut", S.KER_ARG_TILE),                           # Out: the int32 accumulators
        K_Arg("In", S.KER_ARG_TILE_PAD),                            # Pad of this tile
        norm_bias if dw else IGNORE,                                # Infos (NormBias): depth wise only
        Imm(1 if orient == Tile_Orientation_T.TILE_HOR else 0),     # Orientation
        Imm(fcx), Imm(scx), Imm(dcx), Imm(fcy), Imm(scy), Imm(dcy))))
    calls.append(Call(reduct, loc_after, Bindings(8,
        K_Arg("ConvOut", S.KER_ARG_TILE),                           # In
        IGNORE if pool else K_Arg("Out", S.KER_ARG_TILE),           # Out (the IO form writes In)
        feats,                                                      # Feat
        K_Arg("ConvOut", S.KER_ARG_TILE_W), K_Arg("ConvOut", S.KER_ARG_TILE_H),
        K_Arg("Scale", S.KER_ARG_TILE), K_Arg("ScaleN", S.KER_ARG_TILE), K_Arg("Infos", S.KER_ARG_TILE))))
    if pool:
        calls.append(_pool_call(_pool_kind(pool_oper), pool_act_name, "ConvOut", feats,
                                int(act_name == "ActNone"), (fpx, fpy, spx, spy), loc_after))
    if alone:
        calls.append(_act_call(act_name, "Out", K_ArgPar("Out", S.KER_ARG_PARTILE_SIZE, os_), loc_after))

    space = (KernelIterSpace(2, IterParSpace(D0, in_feat, 8), IterTiledSpace(T0)) if dw else
             KernelIterSpace(3, IterParSpace(D1, out_feat, 8), IterTiledSpace(T0), IterParSpace(D0, in_feat, 4)))
    kernel = UserKernel(name, space, orient,
                        CArgs(7, TCArg(SC, "In"), TCArg(SC, "Filter"), TCArg(BIAS_CTYPES[bias_size], "Bias"),
                              TCArg(SC, "Out"), TCArg(UC, "Scale"), TCArg(SC, "ScaleN"), TCArg(SC, "Infos")),
                        Calls(len(calls), *calls), KerArgs(len(kargs), *kargs))
    if kernel:
        op = g.wc * g.hc * fcx * fcy * out_feat * (1 if dw else in_feat)
        if pool:
            op += out_feat * g.wo * g.ho * fpx * fpy
        if act_name != "ActNone":
            op += out_feat * g.wo * g.ho
        bandwidth = (width * height * in_feat * (1 if dw else out_feat) + g.wo * g.ho * out_feat
                     + fcx * fcy * in_feat * (1 if dw else out_feat) + (bias_size + 2) * out_feat)
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, op, 0)
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, bandwidth, 0)
        AddKernelArgDim(name, "In", 4, in_feat, height, width, 1)
        if dw:
            AddKernelArgDim(name, "Filter", 4, in_feat, fcy, fcx, 1)
        else:
            AddKernelArgDim(name, "Filter", 5, out_feat, in_feat, fcy, fcx, 1)
        AddKernelArgDim(name, "Bias", 2, out_feat, bias_size)
        AddKernelArgDim(name, "Out", 4, out_feat, g.ho, g.wo, 1)
        AddKernelArgDim(name, "Scale", 2, out_feat, 1)
        AddKernelArgDim(name, "ScaleN", 2, out_feat, 1)
        _infos_dims(name)
    return 1 if kernel else 0


def grouped_conv_pool_act(setup, GroupIn, GroupOut, Bias_DataSize, Scale_DataSize, InFeat, OutFeat, Width, Height,
                          ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy,
                          PoolPad, ActOper) -> int:
    """``CNN_GroupedConvolutionPoolAct_SQ8``: a kernel group ``Name(In, Filter, Bias, Out, Scale,
    ScaleN, Infos)`` calling ``NameBody`` (the convolution of one group: GroupIn -> GroupOut
    features) ``InFeat / GroupIn`` times, the arguments offset by the group (Filter
    ``[NGroups][GroupOut][GroupIn][Fcy][Fcx]``; Infos shared)."""
    chk = setup.chk
    name = chk.name
    group_in, group_out = chk.integer(GroupIn, "GroupIn", 1), chk.integer(GroupOut, "GroupOut", 1)
    in_feat, out_feat = chk.integer(InFeat, "InFeat", 1), chk.integer(OutFeat, "OutFeat", 1)
    if in_feat % group_in or out_feat % group_out or in_feat // group_in != out_feat // group_out:
        chk.fail(f"cannot divide InFeat {in_feat} / OutFeat {out_feat} into groups of GroupIn {group_in} / "
                 f"GroupOut {group_out}", "InFeat / GroupIn and OutFeat / GroupOut must be the same whole number")
    chk.oper(ConvOper, "ConvOper", (K.KOP_CONV,), "KOP_CONV (the original's grouped convolution)")
    bias_size = _bias_size(chk, Bias_DataSize)
    width, height = chk.integer(Width, "Width", 1), chk.integer(Height, "Height", 1)
    ngroups = in_feat // group_in
    body = name + "Body"
    OpenKernelGroup(name)
    try:
        ok = _conv(setup, body, bias_size, group_in, group_out, width, height, K.KOP_CONV, Fcx, Fcy, Dcx, Dcy, Scx,
                   Scy, ConvPad, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper)
    finally:
        CloseKernelGroup()
    if not ok:
        return 0
    out_arg = current_model().kernels[body].kerarg("Out")
    wo, ho = out_arg.w, out_arg.h
    filters = group_out * group_in * int(Fcx) * int(Fcy)
    group = UserKernelGroupK(
        name, ngroups,
        CArgs(7, TCArg(SC, "In"), TCArg(SC, "Filter"), TCArg(BIAS_CTYPES[bias_size], "Bias"), TCArg(SC, "Out"),
              TCArg(UC, "Scale"), TCArg(SC, "ScaleN"), TCArg(SC, "Infos")),
        0,
        Calls(1, UserKernelCall(body, L.LOC_GROUP, Bindings(7,
            KG_ArgOper("In", "*", group_in * width * height),       # items (C pointer arithmetic)
            KG_ArgOper("Filter", "*", filters),
            KG_ArgOper("Bias", "*", group_out),
            KG_ArgOper("Out", "*", group_out * wo * ho),
            KG_ArgOper("Scale", "*", group_out),
            KG_ArgOper("ScaleN", "*", group_out),
            C_Arg("Infos")))),                                      # one Infos for every group
        KerArgs(7,
            KerGroupArg("In", O.O_IN, in_feat * width * height, 1, "In"),
            KerGroupArg("Filter", O.O_IN, ngroups * filters, 1, "Filter"),
            KerGroupArg("Bias", O.O_IN, out_feat, bias_size, "Bias"),
            KerGroupArg("Out", O.O_OUT, out_feat * wo * ho, 1, "Out"),
            KerGroupArg("Scale", O.O_IN, out_feat, 1, "Scale"),
            KerGroupArg("ScaleN", O.O_IN, out_feat, 1, "ScaleN"),
            KerGroupArg("Infos", O.O_IN, INFOS_SIZE, 1, "Infos")))
    return 1 if group else 0


def pool_act(setup, Feat, Width, Height, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper) -> int:
    """``CNN_PoolAct_SQ8``: ``Name(In, Out, Infos)``; PoolOper KOP_NONE is ``CNN_Act_SQ8``."""
    chk = setup.chk
    pool_oper = chk.oper(PoolOper, "PoolOper", POOL_OPERS, "a pooling (KOP_NONE, KOP_MAXPOOL or KOP_AVGPOOL)")
    if pool_oper == K.KOP_NONE:
        return act(setup, Feat, Width, Height, ActOper)
    name = chk.name
    orient, pad_type = _tiling(setup)
    feat = chk.integer(Feat, "Feat", 1)
    width, height = chk.integer(Width, "Width", 1), chk.integer(Height, "Height", 1)
    act_name = _act(setup, ActOper)
    fpx, fpy, dpx, dpy, spx, spy, pool_pad = _pool_window(chk, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad)
    ppw = CNN_TotalPaddingValue(width, fpx, spx, dpx) if pool_pad else 0
    pph = CNN_TotalPaddingValue(height, fpy, spy, dpy) if pool_pad else 0
    _window(chk, "pooling window", "width", width, "Fpx", fpx, dpx, ppw, "PoolPad")
    _window(chk, "pooling window", "height", height, "Fpy", fpy, dpy, pph, "PoolPad")
    g = conv_pool_geometry(width, height, K.KOP_NONE, 1, 1, 1, 1, 1, 1, 0, pool_oper, fpx, fpy, dpx, dpy, spx, spy,
                           pool_pad, pad_type, orient)
    pool_act_name = act_name if act_name in POOL_FUSED else "ActNone"
    kind = _pool_kind(pool_oper)
    alone = None if act_name in POOL_FUSED else f"Ker_{act_name}_SQ8"
    _libs(chk, f"KerPar{kind}PoolNxMStrideSxSy_{pool_act_name}_SQ8", alone)
    kargs = KerArgs(3,
        KerArgP("In", KerArgSpace(2, D0, T0), O.O_IN | O.O_DB, width, height, g.used_w, g.used_h, g.pad_inp,
                g.pad_inp, 1, g.overlap_p, 0, g.tile_cons, "In"),
        KerArg("Out", KerArgSpace(2, D0, T0), O.O_OUT | O.O_DB, g.wo, g.ho, 1, 0, 0, 0, "Out"),
        _infos_arg())
    feats = K_ArgPar("Out", S.KER_ARG_PARTILE_SIZE, D0)
    calls = [_pool_call(kind, pool_act_name, "In", feats, int(act_name == "ActNone"), (fpx, fpy, spx, spy),
                        L.LOC_LOOP)]
    if alone:
        calls.append(_act_call(act_name, "Out", feats, L.LOC_LOOP))
    kernel = UserKernel(name, KernelIterSpace(2, IterParSpace(D0, feat, 8), IterTiledSpace(T0)), orient,
                        CArgs(3, TCArg(SC, "In"), TCArg(SC, "Out"), TCArg(SC, "Infos")),
                        Calls(len(calls), *calls), kargs)
    if kernel:
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER,
                       feat * g.wo * g.ho * (fpx * fpy + (act_name != "ActNone")), 0)
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, feat * (width * height + g.wo * g.ho), 0)
        AddKernelArgDim(name, "In", 4, feat, height, width, 1)
        AddKernelArgDim(name, "Out", 4, feat, g.ho, g.wo, 1)
        _infos_dims(name)
    return 1 if kernel else 0


def act(setup, Feat, Width, Height, ActOper) -> int:
    """``CNN_Act_SQ8``: ``Name(In, Out, Infos)``, ``Out = gap_clip(ACT_SWITCH(In), 7)``."""
    chk = setup.chk
    name = chk.name
    orient, _ = _tiling(setup)
    feat = chk.integer(Feat, "Feat", 1)
    width, height = chk.integer(Width, "Width", 1), chk.integer(Height, "Height", 1)
    act_name = _act(setup, ActOper)
    _libs(chk, f"Ker_{act_name}_SQ8")
    kargs = KerArgs(3,
        KerArg("In", KerArgSpace(2, D0, T0), O.O_IN | O.O_DB, width, height, 1, 0, 0, 0, "In"),
        KerArg("Out", KerArgSpace(2, D0, T0), O.O_OUT | O.O_DB, width, height, 1, 0, 0, 0, "Out"),
        _infos_arg())
    call = _act_call(act_name, "In", K_ArgPar("Out", S.KER_ARG_PARTILE_SIZE, D0), L.LOC_LOOP)
    kernel = UserKernel(name, KernelIterSpace(2, IterParSpace(D0, feat, 8), IterTiledSpace(T0)), orient,
                        CArgs(3, TCArg(SC, "In"), TCArg(SC, "Out"), TCArg(SC, "Infos")), Calls(1, call), kargs)
    if kernel:
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, feat * width * height, 0)
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, 2 * feat * width * height, 0)
        AddKernelArgDim(name, "In", 4, feat, height, width, 1)
        AddKernelArgDim(name, "Out", 4, feat, height, width, 1)
        _infos_dims(name)
    return 1 if kernel else 0


# ----------------------------------------------------------------------------------------------
# Not yet / not in the original


def global_pool_act(setup, Feat, Width, Height, PoolOper, ActOper) -> int:
    """``CNN_GlobalPoolAct_SQ8``: ``Name(In, Out, Infos)``. First whole features in L1
    (``KerParGlobal{Max,Avg}PoolFullFeat_SQ8``, In seen as [Feat][Width*Height]); if one feature
    does not fit, features in chunks (D0) > tiles of the plane (T0), an int32 per feature across the
    tiles (``KerParGlobal*Pool_SQ8``) narrowed after the last (``KerParGlobal*PoolReduct_SQ8``).
    Then ``Ker_<Act>_SQ8`` for an activation."""
    chk = setup.chk
    name = chk.name
    orient, _ = _tiling(setup)
    feat = chk.integer(Feat, "Feat", 1)
    width, height = chk.integer(Width, "Width", 1), chk.integer(Height, "Height", 1)
    pool_oper = chk.oper(PoolOper, "PoolOper", (K.KOP_GLOBAL_MAXPOOL, K.KOP_GLOBAL_AVGPOOL, K.KOP_GLOBAL_SUMPOOL),
                         "a global pooling")
    if pool_oper == K.KOP_GLOBAL_SUMPOOL:
        chk.fail("PoolOper KOP_GLOBAL_SUMPOOL is not supported yet with Scale_DataSize 1: its kernel was not read",
                 "use KOP_GLOBAL_AVGPOOL, or Scale_DataSize 4")
    act_name = _act(setup, ActOper)
    kind = "Max" if pool_oper == K.KOP_GLOBAL_MAXPOOL else "Avg"
    full, tile, reduct = (f"KerParGlobal{kind}PoolFullFeat_SQ8", f"KerParGlobal{kind}Pool_SQ8",
                          f"KerParGlobal{kind}PoolReduct_SQ8")
    alone = None if act_name == "ActNone" else f"Ker_{act_name}_SQ8"
    _libs(chk, full, tile, reduct, alone)
    do_scale = Imm(int(act_name == "ActNone"))                  # DoScale (max pool)
    cargs = CArgs(3, TCArg(SC, "In"), TCArg(SC, "Out"), TCArg(SC, "Infos"))

    def full_features():
        calls = [Call(full, L.LOC_LOOP, Bindings(7,
            K_Arg("In", S.KER_ARG_TILE),                            # whole features
            Imm(width), Imm(height),
            K_Arg("Out", S.KER_ARG_TILE_H),                         # features in this tile
            K_Arg("Out", S.KER_ARG_TILE), do_scale, K_Arg("Infos", S.KER_ARG_TILE)))]
        if alone:
            calls.append(_act_call(act_name, "Out", Imm(1), L.LOC_LOOP))
        return UserKernel(name, KernelIterSpace(1, IterTiledSpace(T0)), Tile_Orientation_T.TILE_HOR, cargs,
                          Calls(len(calls), *calls),
                          KerArgs(3,
                              KerArg("In", KerArgSpace(1, T0), O.O_IN | O.O_DB, width * height, feat, 1, 0, 0, 0, "In"),
                              KerArg("Out", KerArgSpace(1, T0), O.O_OUT | O.O_DB, 1, feat, 1, 0, 0, 0, "Out"),
                              _infos_arg()))

    def tiled_plane():
        feats = K_ArgPar("In", S.KER_ARG_PARTILE_SIZE, D0)
        calls = [Call(tile, L.LOC_LOOP, Bindings(6,
                     K_Arg("In", S.KER_ARG_TILE), K_Arg("In", S.KER_ARG_TILE_W), K_Arg("In", S.KER_ARG_TILE_H), feats,
                     K_Arg("Acc", S.KER_ARG_TILE), Ker_IteratorIndex(T0))),          # 0 starts the accumulators
                 Call(reduct, L.LOC_LOOP_EPILOG, Bindings(6,
                     K_Arg("Acc", S.KER_ARG_TILE), feats, Imm(width * height), K_Arg("Out", S.KER_ARG_TILE), do_scale,
                     K_Arg("Infos", S.KER_ARG_TILE)))]
        if alone:
            calls.append(_act_call(act_name, "Out", feats, L.LOC_LOOP_EPILOG))
        return UserKernel(name, KernelIterSpace(2, IterParSpace(D0, feat, 8), IterTiledSpace(T0)), orient, cargs,
                          Calls(len(calls), *calls),
                          KerArgs(4,
                              KerArg("In", KerArgSpace(2, D0, T0), O.O_IN | O.O_DB, width, height, 1, 0, 0, 0, "In"),
                              KerArg("Acc", KerArgSpace(1, D0), O.O_BUFF, 1, 1, 4, 0, 0, 0, ""),
                              KerArg("Out", KerArgSpace(1, D0), O.O_OUT | O.O_DB, 1, 1, 1, 0, 0, 0, "Out"),
                              _infos_arg()))

    kernel = _solve([full_features, tiled_plane])
    if kernel:
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, feat * width * height, 0)
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, feat * (width * height + 1), 0)
        AddKernelArgDim(name, "In", 4, feat, height, width, 1)
        AddKernelArgDim(name, "Out", 4, feat, 1, 1, 1)
        _infos_dims(name)
    return 1 if kernel else 0


def softmax_2d(setup, Dim, N, SoftMaxOper) -> int:
    """``CNN_SoftMax2D_SQ8`` with the original's requantisation: not written yet."""
    setup.chk.fail("CNN_SoftMax2D_SQ8 is not supported yet with Scale_DataSize 1 (N rows of a Q15 softmax)",
                   "call CNN_SoftMax_SQ8 once per row, or use Scale_DataSize 4 (Ctrl SCALE_DATASIZE)")


def softmax(setup, Dim, SoftMaxOper) -> int:
    """``CNN_SoftMax_SQ8``: ``Name(In, Out, Infos)``, int8 in, ``short int`` Q15 out, both whole in
    L1 (``KerParSoftMax_SQ8``; the shift to Q15 is ``Infos[AT_INF_BIASL_SM]``)."""
    chk = setup.chk
    name = chk.name
    _tiling(setup)
    dim = chk.integer(Dim, "Dim", 1, 65535)
    chk.oper(SoftMaxOper, "SoftMaxOper", (K.KOP_SOFTMAX,), "KOP_SOFTMAX")
    _libs(chk, "KerParSoftMax_SQ8")
    kernel = UserKernel(name, KernelIterSpace(1, IterTiledSpace(T0)), Tile_Orientation_T.TILE_HOR,
        CArgs(3, TCArg(SC, "In"), TCArg("short int * __restrict__", "Out"), TCArg(SC, "Infos")),
        Calls(1, Call("KerParSoftMax_SQ8", L.LOC_LOOP, Bindings(4,
            K_Arg("In", S.KER_ARG_TILE), Imm(dim), K_Arg("Out", S.KER_ARG_TILE), K_Arg("Infos", S.KER_ARG_TILE)))),
        KerArgs(3,
            KerArg("In", KerArgSpace(1, T0), O.O_IN | O.O_BUFF | O.O_NTILED, 1, dim, 1, 0, 0, 0, "In"),
            KerArg("Out", KerArgSpace(1, T0), O.O_OUT | O.O_BUFF | O.O_NTILED, 1, dim, 2, 0, 0, 0, "Out"),
            _infos_arg()))
    if kernel:
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, dim, 0)
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, 3 * dim, 0)
        AddKernelArgDim(name, "In", 2, dim, 1)
        AddKernelArgDim(name, "Out", 2, dim, 2)
        _infos_dims(name)
    return 1 if kernel else 0


def linear_act(setup, Bias_DataSize, Scale_DataSize, InDim, OutDim, LinearOper, ActOper) -> int:
    """``CNN_LinearAct_SQ8``: ``Name(In, Filter, Bias, Out, Scale, ScaleN, Infos)``. First the
    output-parallel form: outputs in chunks (D0), the input whole in L1
    (``KerParLinearLayerFullFeatB*_<Act>_SQ8``); if that does not fit, the input-tiled form, one
    output at a time (D0) over tiles of the input (T0): ``KerParLinearLayerTile_SQ8`` partial sums,
    then ``KerLinearReductB*_<Act>_SQ8`` (the original's SetBias + KerParLinearLayer +
    KerParReduct_CC fallback: PRENORM applied, A0/B0/C0 read unsigned)."""
    chk = setup.chk
    name = chk.name
    orient, _ = _tiling(setup)
    bias_size = _bias_size(chk, Bias_DataSize)
    in_dim, out_dim = chk.integer(InDim, "InDim", 1, 65535), chk.integer(OutDim, "OutDim", 1, 65535)
    chk.oper(LinearOper, "LinearOper", (K.KOP_LINEAR,), "KOP_LINEAR")
    act_name = _act(setup, ActOper)
    bname = BIAS_NAMES[bias_size]
    full, tile, reduct = (f"KerParLinearLayerFullFeat{bname}_{act_name}_SQ8", "KerParLinearLayerTile_SQ8",
                          f"KerLinearReduct{bname}_{act_name}_SQ8")
    _libs(chk, full, tile, reduct)
    const = O.O_IN | O.O_DB | O.O_CONST
    cargs = CArgs(7, TCArg(SC, "In"), TCArg(SC, "Filter"), TCArg(BIAS_CTYPES[bias_size], "Bias"), TCArg(SC, "Out"),
                  TCArg(UC, "Scale"), TCArg(SC, "ScaleN"), TCArg(SC, "Infos"))

    def output_parallel():
        return UserKernel(name, KernelIterSpace(2, IterParSpace(D0, out_dim, 8), IterTiledSpace(T0)), orient, cargs,
            Calls(1, Call(full, L.LOC_LOOP, Bindings(9,
                K_Arg("In", S.KER_ARG_TILE),                        # the whole input
                K_Arg("Filter", S.KER_ARG_TILE),                    # the rows of this chunk
                K_Arg("Bias", S.KER_ARG_TILE),
                K_Arg("Out", S.KER_ARG_TILE),
                Imm(in_dim),                                        # InDim
                K_ArgPar("Out", S.KER_ARG_PARTILE_SIZE, D0),        # OutDim of this chunk
                K_Arg("Scale", S.KER_ARG_TILE), K_Arg("ScaleN", S.KER_ARG_TILE), K_Arg("Infos", S.KER_ARG_TILE)))),
            KerArgs(7,
                KerArg("In", KerArgSpace(1, T0), O.O_IN | O.O_BUFF | O.O_NTILED, 1, 1, in_dim, 0, 0, 0, "In"),
                KerArg("Filter", KerArgSpace(1, D0), const, 1, 1, in_dim, 0, 0, 0, "Filter"),
                KerArg("Bias", KerArgSpace(1, D0), const, 1, 1, bias_size, 0, 0, 0, "Bias"),
                KerArg("Out", KerArgSpace(1, D0), O.O_OUT | O.O_DB, 1, 1, 1, 0, 0, 0, "Out"),
                KerArg("Scale", KerArgSpace(1, D0), const, 1, 1, 1, 0, 0, 0, "Scale"),
                KerArg("ScaleN", KerArgSpace(1, D0), const, 1, 1, 1, 0, 0, 0, "ScaleN"),
                _infos_arg()))

    def input_tiled():
        one = O.O_IN | O.O_BUFF | O.O_CONST
        return UserKernel(name, KernelIterSpace(2, IterFixedSpace(D0, out_dim), IterTiledSpace(T0)),
            Tile_Orientation_T.TILE_HOR, cargs,
            Calls(2,
                Call(tile, L.LOC_LOOP, Bindings(5,
                    K_Arg("In", S.KER_ARG_TILE),                    # a tile of the input
                    K_Arg("Filter", S.KER_ARG_TILE),                # the matching part of the row
                    K_Arg("Reduct", S.KER_ARG_TILE),                # one partial sum per core
                    K_Arg("Filter", S.KER_ARG_TILE_H),              # inputs in this tile
                    Ker_IteratorIndex(T0))),                        # 0 starts the sums
                Call(reduct, L.LOC_LOOP_EPILOG, Bindings(6,
                    K_Arg("Reduct", S.KER_ARG_TILE), K_Arg("Bias", S.KER_ARG_TILE), K_Arg("Out", S.KER_ARG_TILE),
                    K_Arg("Scale", S.KER_ARG_TILE), K_Arg("ScaleN", S.KER_ARG_TILE), K_Arg("Infos", S.KER_ARG_TILE)))),
            KerArgs(8,
                KerArg("In", KerArgSpace(1, T0), O.O_IN | O.O_DB, 1, in_dim, 1, 0, 0, 0, "In"),
                KerArg("Filter", KerArgSpace(2, D0, T0), const, 1, in_dim, 1, 0, 0, 0, "Filter"),
                KerArg("Bias", KerArgSpace(1, D0), one, 1, 1, bias_size, 0, 0, 0, "Bias"),
                KerArg("Out", KerArgSpace(1, D0), O.O_OUT | O.O_BUFF, 1, 1, 1, 0, 0, 0, "Out"),
                KerArg("Scale", KerArgSpace(1, D0), one, 1, 1, 1, 0, 0, 0, "Scale"),
                KerArg("ScaleN", KerArgSpace(1, D0), one, 1, 1, 1, 0, 0, 0, "ScaleN"),
                KerArg("Reduct", KerArgSpace(1, T0), O.O_BUFF | O.O_NTILED, REDUCT_SLOTS, 1, 4, 0, 0, 0, ""),
                _infos_arg()))

    kernel = _solve([output_parallel, input_tiled])
    if kernel:
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, in_dim * out_dim, 0)
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, in_dim + in_dim * out_dim + out_dim * (3 + bias_size),
                       0)
        AddKernelArgDim(name, "In", 2, in_dim, 1)
        AddKernelArgDim(name, "Filter", 3, out_dim, in_dim, 1)
        AddKernelArgDim(name, "Bias", 2, out_dim, bias_size)
        AddKernelArgDim(name, "Out", 2, out_dim, 1)
        AddKernelArgDim(name, "Scale", 2, out_dim, 1)
        AddKernelArgDim(name, "ScaleN", 2, out_dim, 1)
        _infos_dims(name)
    return 1 if kernel else 0


def _mat3(setup, generator_kernel: str, Feat, Width, Height, in2_per_feature: bool) -> int:
    """MatAdd (In2 a tensor like In1) or tensor x vector (In2 one item per feature):
    ``Name(In1, In2, Out, Infos)``, features in chunks (D0) > tiles (T0)."""
    chk = setup.chk
    name = chk.name
    orient, _ = _tiling(setup)
    feat = chk.integer(Feat, "Feat", 1)
    width, height = chk.integer(Width, "Width", 1), chk.integer(Height, "Height", 1)
    _libs(chk, generator_kernel)
    in2 = (KerArg("In2", KerArgSpace(1, D0), O.O_IN | O.O_DB, 1, 1, 1, 0, 0, 0, "In2") if in2_per_feature else
           KerArg("In2", KerArgSpace(2, D0, T0), O.O_IN | O.O_DB, width, height, 1, 0, 0, 0, "In2"))
    kernel = UserKernel(name, KernelIterSpace(2, IterParSpace(D0, feat, 8), IterTiledSpace(T0)), orient,
        CArgs(4, TCArg(SC, "In1"), TCArg(SC, "In2"), TCArg(SC, "Out"), TCArg(SC, "Infos")),
        Calls(1, Call(generator_kernel, L.LOC_LOOP, Bindings(7,
            K_Arg("In1", S.KER_ARG_TILE), K_Arg("In2", S.KER_ARG_TILE), K_Arg("Out", S.KER_ARG_TILE),
            K_Arg("In1", S.KER_ARG_TILE_W), K_Arg("In1", S.KER_ARG_TILE_H),
            K_ArgPar("In1", S.KER_ARG_PARTILE_SIZE, D0),            # features of this chunk
            K_Arg("Infos", S.KER_ARG_TILE)))),
        KerArgs(4,
            KerArg("In1", KerArgSpace(2, D0, T0), O.O_IN | O.O_DB, width, height, 1, 0, 0, 0, "In1"),
            in2,
            KerArg("Out", KerArgSpace(2, D0, T0), O.O_OUT | O.O_DB, width, height, 1, 0, 0, 0, "Out"),
            _infos_arg()))
    if kernel:
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, feat * width * height, 0)
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH,
                       feat * width * height * (2 if in2_per_feature else 3) + (feat if in2_per_feature else 0), 0)
        AddKernelArgDim(name, "In1", 4, feat, height, width, 1)
        if in2_per_feature:
            AddKernelArgDim(name, "In2", 2, feat, 1)
        else:
            AddKernelArgDim(name, "In2", 4, feat, height, width, 1)
        AddKernelArgDim(name, "Out", 4, feat, height, width, 1)
        _infos_dims(name)
    return 1 if kernel else 0


def mat_add_act(setup, Feat, Width, Height, AddMatOper, ActOper) -> int:
    """``CNN_MatAddAct_SQ8``: ``Name(In1, In2, Out, Infos)`` (``KerParMatAdd_<Act>_SQ8``)."""
    chk = setup.chk
    chk.oper(AddMatOper, "AddMatOper", (K.KOP_MATADD,), "KOP_MATADD")
    act_name = _act(setup, ActOper)
    if act_name not in MATADD_ACTS:
        chk.fail(f"ActOper {K[ActOper].name if isinstance(ActOper, str) else K(ActOper).name} after a MatAdd has no "
                 "kernel in the original's SQ8 library", "use KOP_NONE, KOP_RELU, KOP_RELUN, KOP_HSIGMOID, KOP_HSWISH "
                 "or KOP_LEAKYRELU, or CNN_Act_SQ8 after the add")
    return _mat3(setup, f"KerParMatAdd_{act_name}_SQ8", Feat, Width, Height, False)


def tensor_vect_mult_act(setup, Feat, Width, Height, MatOper, ActOper) -> int:
    """``CNN_TensorVectMultAct_SQ8``: ``Name(In1, In2, Out, Infos)``, In2 one item per feature
    (``KerParMatVectMul_<Act>_SQ8``)."""
    setup.chk.oper(MatOper, "MatOper", (K.KOP_MATVECTMUL,), "KOP_MATVECTMUL")
    return _mat3(setup, f"KerParMatVectMul_{_act(setup, ActOper)}_SQ8", Feat, Width, Height, True)


def mat_mul_act(setup, Bias_DataSize, Scale_DataSize, ColM1, LineM1, ColM2, LineM2, Width, Height, Scx, Scy,
                MatMulOper, ActOper) -> int:
    """``CNN_MatMulAct_SQ8``: ``Name(In2, In1, Bias, Out, Scale, ScaleN, Infos)`` (KOP_MATMUL) or
    without Bias (KOP_MATMUL_NOBIAS). The original's tiling: bands of lines of In1 [LineM1][ColM1]
    and Out [LineM1][ColM2] (T1) outside bands of columns of In2 [LineM2][ColM2] (T0),
    ``KerParMatMul{B8,B16,B32,NoBias}_<Act>_SQ8`` writing Out's lines from the band's column."""
    chk = setup.chk
    name = chk.name
    _tiling(setup)
    bias_size = _bias_size(chk, Bias_DataSize)
    col1, line1 = chk.integer(ColM1, "ColM1", 1, 65535), chk.integer(LineM1, "LineM1", 1, 65535)
    col2, line2 = chk.integer(ColM2, "ColM2", 1, 65535), chk.integer(LineM2, "LineM2", 1, 65535)
    width, height = chk.integer(Width, "Width", 0), chk.integer(Height, "Height", 0)
    scx, scy = chk.integer(Scx, "Scx", 1), chk.integer(Scy, "Scy", 1)
    oper = chk.oper(MatMulOper, "MatMulOper", MATMUL_OPERS, "a matrix product")
    if oper not in (K.KOP_MATMUL, K.KOP_MATMUL_NOBIAS):
        chk.fail(f"MatMulOper {oper.name} is not supported yet with Scale_DataSize 1",
                 "use KOP_MATMUL or KOP_MATMUL_NOBIAS")
    if col1 != line2:
        chk.fail(f"ColM1 {col1} != LineM2 {line2}: In1's lines and In2's columns have different lengths",
                 "In1 [LineM1 x ColM1] x In2 [LineM2 x ColM2] needs ColM1 == LineM2")
    if width * height not in (0, col2):
        chk.fail(f"Width x Height = {width} x {height} is not ColM2 {col2}", "pass Width = Height = 0, or a W x H "
                 "whose product is ColM2")
    if (scx, scy) != (1, 1):
        chk.fail(f"strides (Scx {scx}, Scy {scy}) are not supported yet with Scale_DataSize 1", "use Scx = Scy = 1")
    act_name = _act(setup, ActOper)
    bias = oper == K.KOP_MATMUL
    kname = f"KerParMatMul{BIAS_NAMES[bias_size] if bias else 'NoBias'}_{act_name}_SQ8"
    _libs(chk, kname)
    const = O.O_IN | O.O_DB | O.O_CONST
    cargs = [TCArg(SC, "In2"), TCArg(SC, "In1")] + ([TCArg(BIAS_CTYPES[bias_size], "Bias")] if bias else []) + [
        TCArg(SC, "Out"), TCArg(UC, "Scale"), TCArg(SC, "ScaleN"), TCArg(SC, "Infos")]
    # the original's: bands of lines of In1 and Out (T1) outside bands of columns of In2 (T0)
    kargs = [KerArg("In1", KerArgSpace(1, T1), O.O_IN | O.O_DB, col1, line1, 1, 0, 0, 0, "In1"),
             KerArg("In2", KerArgSpace(1, T0), O.O_IN | O.O_DB, col2, line2, 1, 0,
                    KernelArgConstraints_T.OBJ_CONSTRAINTS_TILE_VER, 0, "In2"),
             KerArg("Out", KerArgSpace(1, T1), O.O_OUT | O.O_DB, col2, line1, 1, 0, 0, 0, "Out"),
             KerArg("Scale", KerArgSpace(1, T1), const, 1, line1, 1, 0, 0, 0, "Scale"),
             KerArg("ScaleN", KerArgSpace(1, T1), const, 1, line1, 1, 0, 0, 0, "ScaleN"),
             _infos_arg()]
    if bias:
        kargs.append(KerArg("Bias", KerArgSpace(1, T1), const, 1, line1, bias_size, 0, 0, 0, "Bias"))
    kernel = UserKernel(name, KernelIterSpace(2, IterTiledSpace(T1), IterTiledSpace(T0)), Tile_Orientation_T.TILE_HOR,
        CArgs(len(cargs), *cargs),
        Calls(1, Call(kname, L.LOC_LOOP, Bindings(12,
            K_Arg("In1", S.KER_ARG_TILE), Imm(col1), K_Arg("In1", S.KER_ARG_TILE_H),    # a band of lines
            K_Arg("In2", S.KER_ARG_TILE), K_Arg("In2", S.KER_ARG_TILE_W),                # a band of columns
            K_Arg("Bias", S.KER_ARG_TILE) if bias else IGNORE,
            K_Arg("Scale", S.KER_ARG_TILE), K_Arg("ScaleN", S.KER_ARG_TILE),
            K_Arg("Out", S.KER_ARG_TILE), Imm(col2),                                     # full lines of Out
            K_Arg("In2", S.KER_ARG_TILE_BASE),                                           # OutFirstCol
            K_Arg("Infos", S.KER_ARG_TILE)))),
        KerArgs(len(kargs), *kargs))
    if kernel:
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, line1 * col1 * col2, 0)
        AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, line1 * col1 + line2 * col2 + line1 * col2, 0)
        AddKernelArgDim(name, "In1", 3, line1, col1, 1)
        AddKernelArgDim(name, "In2", 3, line2, col2, 1)
        AddKernelArgDim(name, "Out", 3, line1, col2, 1)
        if bias:
            AddKernelArgDim(name, "Bias", 2, line1, bias_size)
        AddKernelArgDim(name, "Scale", 2, line1, 1)
        AddKernelArgDim(name, "ScaleN", 2, line1, 1)
        _infos_dims(name)
    return 1 if kernel else 0


def _no_original(setup) -> int:
    setup.chk.fail(f"{NO_ORIGINAL}: {NO_ORIGINAL_HINT}",
                   "Scale_DataSize 4 selects TensorFlow Lite Micro's requantisation (HWC), which has it")


def mat_sub_act(setup, *args) -> int:
    """Ours (TFLite's SUB): the original has no such generator."""
    return _no_original(setup)


def mat_elt_mul_act(setup, *args) -> int:
    """Ours (TFLite's MUL on equal shapes): the original has no such generator."""
    return _no_original(setup)


def concat_channels(setup, *args) -> int:
    """Ours (TFLite's CONCATENATION): the original has none (NNTool forces one scale on a concat)."""
    return _no_original(setup)
