"""The original's convolution and pooling CNN generators (``CNN_Generators.c``, 16-bit "fp" and
8-bit "fps" fixed point), written as a model script would write them: every layer is one user
kernel declared through the public API (``UserKernel``, ``KerArgP``, ``Call``, ``K_Arg`` ...),
tiled, scheduled and generated like any other.

* :func:`CNN_ConvolutionPoolReLU` -- convolution (``KOP_CONV``, ``KOP_CONV_DP``, ``KOP_CONV_DW``,
  ``KOP_CONV_DWDP``), then an optional pooling (``KOP_MAXPOOL``, ``KOP_AVGPOOL``), then an
  optional activation. ``Name(In, Filter, Bias, Out)``.
* :func:`CNN_PoolReLU` -- pooling and/or activation. ``Name(In, Out)``.
* :func:`CNN_GroupedConvolutionPoolReLU` -- a kernel group running the convolution of each
  group of features (``NameBody``) ``InFeat / GroupIn`` times. ``Name(In, Filter, Bias, Out)``.

The basic kernels are those of :func:`autotiler.generators.LoadCNNLibrary` (call it first) and
the arithmetic is ``docs/cnn-fixed-point.md``'s; :mod:`autotiler.generators.cnn_conv_reference`
computes whole layers the same way in numpy.

How a layer is made (the original's pattern):

* spaces: output features in chunks (``IterParSpace(D1, OutFeat, 8)``) > tiles (T0) > input
  features in chunks (``IterParSpace(D0, InFeat, InTileCons)``, 4 for bytes, 2 for halves);
  depth wise ``IterParSpace(D0, InFeat, 8)`` > T0. ``ParallelFeatures`` 0 makes the feature
  spaces ``IterFixedSpace`` and picks the one-feature ``Ker*`` kernels (lines split over the
  cores) instead of the feature-parallel ``KerPar*`` ones;
* arguments: ``In`` a padded ``KerArgP`` over (D0, T0) whose tiles overlap by
  ``CNN_TileOverlap``; ``Bias`` over the output features, ``Filter`` over (output, input)
  features (items of ``Fcx*Fcy``); ``Out`` over (output features, T0); with a pooling or a DP
  accumulation, ``ConvOut``, one L1 tile of the convolution's output (``O_BUFF|O_ONETILE``,
  32-bit for DP), padded for the pooling;
* calls: set bias at ``LOC_D0_PROLOG``, the convolution at ``LOC_D0``, the DP reduction (with
  the activation), the activation alone or the pooling (with ReLU) at ``LOC_D0_EPILOG``; depth
  wise, all at ``LOC_LOOP`` and no set bias (the convolution adds it);
* who activates: a DP reduction applies every activation (in place, ``KerDP_IO*``, when a pooling
  follows; the pooling then only clips again for ReLU/ReLUN); without DP, the pooling kernel
  clips for ReLU/ReLUN, and without pooling a ``KerParReLU``/``Hswish``/``Hsigmoid``/
  ``Leakyrelu`` kernel runs on the output tile;
* ``In_InL3`` ... ``Out_InL3`` home the argument in L3 (``O_L2DB``).

Differences from the original (stated, not silent):

* the pooling's ReLU bit is set for ``KOP_RELUN`` too (the original's ``CNN_EncodePoolOperation``
  sets it for ``KOP_RELU`` only, leaving ReLUN unclipped after a pooling);
* the one-feature convolutions and reductions get ``InFeatures = 1`` where the original leaves
  the field unbound (its one-feature kernels do not read it; ours loop over it);
* ``KG_ArgOper`` offsets of the grouped convolution are in items (autotiler's ``KG_ArgOper`` is C
  pointer arithmetic on the typed argument), where the original passes bytes;
* the original's 1D swap (``KOP_CONV_DP`` on a one-column input), im2col (``EnableIm2Col``) and
  HWCE paths are not taken: the generic kernels compute the same results;
* refused instead of generating something meaningless: mixed data sizes (the kernels are fp or
  fps), a negative ``Norm`` (unsigned in the kernels), ``KOP_SIGMOID``/``KOP_TANH`` with an
  ``Out_Q`` other than 15 (fp) / 7 (fps) (their tables give Q15), a pooling or an activation-only
  layer changing the Q format (``CNN_PoolReLU`` with ``In_Q != Out_Q``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..api import (
    AT_IGNORE_ARG_BINDING,
    AddKernelArgDim,
    AddKernelInfos,
    Bindings,
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
    AT_KernelInfo_T,
    KernelArgSelect_T,
    KernelCallLocationT,
    KernelIteratorT,
    KernelOper_T,
    Object_Type_T,
    PadType_T,
    Tile_Orientation_T,
)
from ..model.ir import caller_where
from ..model.session import current_model
from .cnn_checks import FP_LOADER, Checker
from .cnn_ctrl import gen_control, resolved
from .cnn_geometry import (
    CNN_EdgePaddingValue,
    CNN_EncodePoolOperation,
    CNN_LayerOutputDim,
    CNN_Scm,
    CNN_SetUpperLowerBounds,
    CNN_TileOverlap,
    CNN_TotalPaddingValue,
    CNN_UsedInputDimension,
    extent,
)
from .cnn_library import CONV_GEOMETRIES

K = KernelOper_T
S = KernelArgSelect_T
O = Object_Type_T
L = KernelCallLocationT
D0, D1, T0 = KernelIteratorT.KER_ITER_D0, KernelIteratorT.KER_ITER_D1, KernelIteratorT.KER_ITER_TILE0
IGNORE = AT_IGNORE_ARG_BINDING

CONV_OPERS = (K.KOP_CONV, K.KOP_CONV_DP, K.KOP_CONV_DW, K.KOP_CONV_DWDP)
POOL_OPERS = (K.KOP_NONE, K.KOP_MAXPOOL, K.KOP_AVGPOOL)
# activation -> suffix of its DP reduction kernel (KerDP{suffix}_fp) and of its activation-only
# kernel (KerPar{name}_fp; None: there is none)
ACTIVATIONS = {
    K.KOP_NONE: ("", None), K.KOP_RELU: ("", "ReLU"), K.KOP_RELUN: ("", "ReLU"),
    K.KOP_HSIGMOID: ("_hsigmoid", "Hsigmoid"), K.KOP_HSWISH: ("_hswish", "Hswish"),
    K.KOP_LEAKYRELU: ("_leakyrelu", "Leakyrelu"), K.KOP_SIGMOID: ("_sigmoid", None), K.KOP_TANH: ("_tanh", None),
    K.KOP_SWISH: ("_swish", None),
}
# activations that take the output's Q in UB
UB_IS_Q = (K.KOP_HSIGMOID, K.KOP_HSWISH, K.KOP_SWISH)
SUFFIX = {1: "_fps", 2: "_fp"}


# ----------------------------------------------------------------------------------------------
# Basic kernels (the original's CNN_FindMatchingKernel: the most specific name that fits)


def _fits(forced, value: int, alias=None) -> bool:
    """A fixed-geometry name's entry (None: read from the argument; "N"/"S": equal to the x one)
    against the layer's value (alias: the x value for "N"/"S")."""
    if forced is None:
        return True
    if isinstance(forced, str):
        return value == alias
    return value == forced


def conv_kernel(par: bool, dw: bool, dp: bool, size: int, fx: int, fy: int, dx: int, dy: int, sx: int,
                sy: int) -> tuple:
    """(name, (needN, needS, needD, needNy, needSy, needDy)): the convolution kernel for this
    geometry, and which geometry fields it reads from its argument (the others it forces)."""
    pre = ("KerPar" if par else "Ker") + "Conv" + ("DWDP" if dw and dp else "DW" if dw else "")
    post = ("_DP" if dp and not dw else "") + SUFFIX[size]
    for geom, gn, gny, gs, gsy in CONV_GEOMETRIES:
        dilated = geom == "NxMDxDyStrideSxSy"
        if (dx, dy) != (1, 1) and not dilated:
            continue
        if _fits(gn, fx) and _fits(gny, fy, fx) and _fits(gs, sx) and _fits(gsy, sy, sx):
            return pre + geom + post, (gn is None, gs is None, dilated, gny is None, gsy is None, dilated)
    raise AssertionError("NxMDxDyStrideSxSy fits every geometry")


def pool_kernel(par: bool, size: int, fx: int, fy: int, dx: int, dy: int, sx: int, sy: int) -> tuple:
    """(name, needs) of the pooling kernel, as conv_kernel."""
    pre, post = ("KerParPool" if par else "KerPool"), SUFFIX[size]
    if (dx, dy) == (1, 1) and (fx, fy, sx, sy) == (2, 2, 2, 2):
        return pre + "2x2Stride2" + post, (False,) * 6
    if (dx, dy) == (1, 1) and fx == fy and sx == sy:
        return pre + "NxNStrideS" + post, (True, True, False, False, False, False)
    return pre + "NxMStrideSxSy" + post, (True,) * 6


def _geom_bindings(needs: tuple, values: tuple) -> list:
    """Imm(value) for the fields a kernel reads, AT_IGNORE_ARG_BINDING for those it forces."""
    return [Imm(v) if n else IGNORE for n, v in zip(needs, values)]


# ----------------------------------------------------------------------------------------------
# Layer geometry


@dataclass(frozen=True)
class ConvPoolGeometry:
    """What CNN_ConvolutionPoolReLU computes before declaring its kernel (the original's
    variables): paddings, the convolution's output Wc x Hc (the part the pooling reads), the
    layer's output Wo x Ho, the input actually read, overlaps and the tile constraint."""

    pad_inc: tuple      # convolution padding (left, right, top, bottom), right/bottom trimmed to what is read
    pad_inp: tuple      # pooling padding, likewise
    pad_inc_t: tuple    # the input's padding for the tiling: pad_inp * stride + pad_inc
    wc: int
    hc: int
    wo: int
    ho: int
    used_w: int         # input columns read
    used_h: int         # input lines read
    overlap_c: int
    overlap_p: int
    tile_cons: int


def conv_pool_geometry(Width, Height, ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad, PoolOper, Fpx, Fpy, Dpx,
                       Dpy, Spx, Spy, PoolPad, PadType, TileOrientation) -> ConvPoolGeometry:
    """The geometry of a convolution (ConvOper KOP_NONE: none) followed by a pooling (PoolOper
    KOP_NONE: none), the original's way: a padding that the outputs never reach is dropped from
    the right/bottom, and the convolution's output is only what the pooling reads."""
    if PoolOper == K.KOP_NONE:
        Fpx = Fpy = Dpx = Dpy = Spx = Spy = 1
    if ConvOper == K.KOP_NONE:
        Fcx = Fcy = Dcx = Dcy = Scx = Scy = 1
    wc, hc, wo, ho, pcw, pch, ppw, pph = CNN_LayerOutputDim(Width, Height, ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy,
                                                            ConvPad, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad)
    pad_inc = list(CNN_EdgePaddingValue(PadType, pcw, pch))
    pad_inp = list(CNN_EdgePaddingValue(PadType, ppw, pph))

    def used():
        uwc = CNN_UsedInputDimension(wo, Fpx, Spx, Dpx, pad_inp[0] + pad_inp[1])
        uhc = CNN_UsedInputDimension(ho, Fpy, Spy, Dpy, pad_inp[2] + pad_inp[3])
        return (uwc, uhc, CNN_UsedInputDimension(uwc, Fcx, Scx, Dcx, pad_inc[0] + pad_inc[1]),
                CNN_UsedInputDimension(uhc, Fcy, Scy, Dcy, pad_inc[2] + pad_inc[3]))

    uwc, uhc, uw, uh = used()
    pad_inc[1] = max(0, pad_inc[1] - (Width - uw))
    pad_inc[3] = max(0, pad_inc[3] - (Height - uh))
    pad_inp[1] = max(0, pad_inp[1] - (wc - uwc))
    pad_inp[3] = max(0, pad_inp[3] - (hc - uhc))
    uwc, uhc, uw, uh = used()
    pad_inc_t = (pad_inp[0] * Scx + pad_inc[0], pad_inp[1] * Scx + pad_inc[1], pad_inp[2] * Scy + pad_inc[2],
                 pad_inp[3] * Scy + pad_inc[3])
    overlap_c, overlap_p = CNN_TileOverlap(TileOrientation, Fcx, Fcy, Dcx, Dcy, Scx, Scy, Fpx, Fpy, Dpx, Dpy, Spx, Spy)
    hor = TileOrientation == Tile_Orientation_T.TILE_HOR
    tile_cons = CNN_Scm(Scy, Spy) if hor else CNN_Scm(Scx, Spx)
    return ConvPoolGeometry(tuple(pad_inc), tuple(pad_inp), pad_inc_t, uwc, uhc, wo, ho, uw, uh, overlap_c, overlap_p,
                            tile_cons)


# ----------------------------------------------------------------------------------------------
# Shared checks


def _common_ctrl(chk: Checker, Ctrl, generator: str, Name, where: str):
    ctrl = gen_control(Ctrl, generator, Name if isinstance(Name, str) else None, where)
    orient = Tile_Orientation_T(resolved(ctrl.tile_orientation, Tile_Orientation_T.TILE_HOR))
    par = resolved(ctrl.parallel_features, 1) == 1
    pad_type = PadType_T(resolved(ctrl.pad_type, PadType_T.PAD_BALANCED_LEFT))
    relun = resolved(ctrl.relun, 6)
    return ctrl, orient, par, pad_type, relun


def _check_window(chk: Checker, what: str, dim_name: str, dim: int, f_name: str, f: int, d: int, pad: int,
                  pad_param: str) -> None:
    """The filter (window) must fit in the padded plane."""
    ext = extent(f, d)
    if ext > dim + pad:
        padded = f"{dim} + {pad} of padding" if pad else f"{dim}"
        chk.fail(f"the {what} ({f_name} = {f}, spanning {ext} with its dilation) is larger than the padded "
                 f"{dim_name} ({padded}): it has no output",
                 f"use a smaller {what}, or pad ({pad_param} = 1) to keep at least one output")


def _pool_window(chk: Checker, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad) -> tuple:
    """(Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad) of a pooling, checked."""
    fpx, fpy = chk.integer(Fpx, "Fpx", 1, 255), chk.integer(Fpy, "Fpy", 1, 255)
    dpx = chk.integer(Dpx, "Dpx", 1, 255, " (dilation)", "a dilation is 1 (none) or more")
    dpy = chk.integer(Dpy, "Dpy", 1, 255, " (dilation)", "a dilation is 1 (none) or more")
    spx = chk.integer(Spx, "Spx", 1, 255, " (stride)", "a stride is 1 or more")
    spy = chk.integer(Spy, "Spy", 1, 255, " (stride)", "a stride is 1 or more")
    return fpx, fpy, dpx, dpy, spx, spy, chk.flag(PoolPad, "PoolPad")


def _bounds(chk: Checker, ReLUOper, size: int, do_relu: bool, relun: int, out_q: int) -> tuple:
    b = CNN_SetUpperLowerBounds(ReLUOper, size, do_relu, relun, out_q)
    if b is None:
        bits = 8 * size - 1
        chk.fail(f"KOP_RELUN's bound {relun} in Q{out_q} ({relun << out_q}) does not fit the {bits + 1}-bit output",
                 "lower Out_Q, or the ReluN of the CNN_GenControl_T")
    lb, ub = b
    if ReLUOper in UB_IS_Q:
        ub = out_q      # the kernels read the output's Q in UB
    return lb, ub


def _check_q(chk: Checker, q: int, param: str, size: int) -> int:
    return chk.integer(q, param, 0, 8 * size - 1, hint=f"a Q format of a {8 * size}-bit container is 0..{8 * size - 1}")


def _l3(flag: int) -> int:
    return int(O.O_L2DB) if flag else 0


def _ctype(size: int) -> str:
    return {1: "signed char * __restrict__", 2: "short int * __restrict__"}[size]


# ----------------------------------------------------------------------------------------------
# CNN_ConvolutionPoolReLU


def CNN_ConvolutionPoolReLU(Name, Ctrl, In_DataSize, Filter_DataSize, Bias_DataSize, Out_DataSize,
                            In_Q, Filter_Q, Bias_Q, Out_Q, In_InL3, Filter_InL3, Bias_InL3, Out_InL3,
                            InFeat, OutFeat, Width, Height,
                            ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad,
                            PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad,
                            ReLUOper) -> int:
    """A convolution, an optional pooling and an optional activation as one user kernel
    ``Name(In, Filter, Bias, Out)`` (In: [InFeat][Height][Width], Filter:
    [OutFeat][InFeat][Fcy][Fcx] (depth wise [InFeat][Fcy][Fcx]), Bias: [OutFeat], Out:
    [OutFeat][Ho][Wo]). Returns 1 when the kernel is tiled, 0 when no tiling fits and
    AT_KERNEL_NOSOLUTION_ERROR is off (else a TilingError); refuses impossible layers with a
    ModelError. See the module's documentation."""
    return _conv_pool_relu("CNN_ConvolutionPoolReLU", caller_where(), Name, Ctrl, In_DataSize, Filter_DataSize,
                           Bias_DataSize, Out_DataSize, In_Q, Filter_Q, Bias_Q, Out_Q, In_InL3, Filter_InL3, Bias_InL3,
                           Out_InL3, InFeat, OutFeat, Width, Height, ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad,
                           PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ReLUOper)


def _conv_pool_relu(generator, where, Name, Ctrl, In_DataSize, Filter_DataSize, Bias_DataSize, Out_DataSize,
                    In_Q, Filter_Q, Bias_Q, Out_Q, In_InL3, Filter_InL3, Bias_InL3, Out_InL3,
                    InFeat, OutFeat, Width, Height, ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad,
                    PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ReLUOper) -> int:
    chk = Checker(generator, Name, where)
    ctrl, orient, par, pad_type, relun = _common_ctrl(chk, Ctrl, generator, Name, where)
    sizes = [chk.data_size(v, p) for v, p in ((In_DataSize, "In_DataSize"), (Filter_DataSize, "Filter_DataSize"),
                                                (Bias_DataSize, "Bias_DataSize"), (Out_DataSize, "Out_DataSize"))]
    if len(set(sizes)) != 1:
        chk.fail(f"mixed data sizes (In {sizes[0]}, Filter {sizes[1]}, Bias {sizes[2]}, Out {sizes[3]}) are not "
                 "supported: the convolution kernels are fp (2, 2, 2, 2) or fps (1, 1, 1, 1)",
                 "give the four arguments the same data size")
    size = sizes[0]
    in_q, filter_q, bias_q, out_q = [_check_q(chk, q, p, size) for q, p in
                                     ((In_Q, "In_Q"), (Filter_Q, "Filter_Q"), (Bias_Q, "Bias_Q"), (Out_Q, "Out_Q"))]
    l3 = [chk.flag(v, p) for v, p in ((In_InL3, "In_InL3"), (Filter_InL3, "Filter_InL3"), (Bias_InL3, "Bias_InL3"),
                                      (Out_InL3, "Out_InL3"))]
    in_feat = chk.integer(InFeat, "InFeat", 1)
    out_feat = chk.integer(OutFeat, "OutFeat", 1)
    width = chk.integer(Width, "Width", 1)
    height = chk.integer(Height, "Height", 1)
    conv_oper = chk.oper(ConvOper, "ConvOper", CONV_OPERS, "a convolution")
    pool_oper = chk.oper(PoolOper, "PoolOper", POOL_OPERS, "a pooling (KOP_NONE, KOP_MAXPOOL or KOP_AVGPOOL)")
    act = chk.oper(ReLUOper, "ReLUOper", tuple(ACTIVATIONS), "an activation this generator supports")
    fcx, fcy = chk.integer(Fcx, "Fcx", 1, 255), chk.integer(Fcy, "Fcy", 1, 255)
    dcx = chk.integer(Dcx, "Dcx", 1, 255, " (dilation)", "a dilation is 1 (none) or more")
    dcy = chk.integer(Dcy, "Dcy", 1, 255, " (dilation)", "a dilation is 1 (none) or more")
    scx = chk.integer(Scx, "Scx", 1, 255, " (stride)", "a stride is 1 or more")
    scy = chk.integer(Scy, "Scy", 1, 255, " (stride)", "a stride is 1 or more")
    conv_pad = chk.flag(ConvPad, "ConvPad")
    if pool_oper != K.KOP_NONE:
        fpx, fpy, dpx, dpy, spx, spy, pool_pad = _pool_window(chk, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad)
    else:
        fpx = fpy = dpx = dpy = spx = spy = 1
        pool_pad = 0

    # Ctrl: ForceDPconv turns the single precision convolutions into DP ones (or back)
    force = ctrl.force_dp_conv
    if force == 1:
        conv_oper = {K.KOP_CONV: K.KOP_CONV_DP, K.KOP_CONV_DW: K.KOP_CONV_DWDP}.get(conv_oper, conv_oper)
    elif force == 0:
        conv_oper = {K.KOP_CONV_DP: K.KOP_CONV, K.KOP_CONV_DWDP: K.KOP_CONV_DW}.get(conv_oper, conv_oper)
    dp = conv_oper in (K.KOP_CONV_DP, K.KOP_CONV_DWDP)
    dw = conv_oper in (K.KOP_CONV_DW, K.KOP_CONV_DWDP)
    pool = pool_oper != K.KOP_NONE
    if dw and in_feat != out_feat:
        chk.fail(f"a depth wise convolution ({conv_oper.name}) needs InFeat == OutFeat, got InFeat {in_feat} and "
                 f"OutFeat {out_feat}", "use KOP_CONV/KOP_CONV_DP to change the number of features")

    # Fixed point: Norm (accumulator Q i+w to Out_Q) is an unsigned shift in the kernels
    bits = 8 * size - 1
    norm = in_q + filter_q - out_q
    norm_bias = in_q + filter_q - bias_q
    if act in (K.KOP_SIGMOID, K.KOP_TANH) and out_q != bits:
        chk.fail(f"{act.name} gives Q{bits} results, but Out_Q is {out_q}", f"set Out_Q to {bits}")
    if norm < 0:
        chk.fail(f"In_Q + Filter_Q - Out_Q = {in_q} + {filter_q} - {out_q} = {norm} is negative: the kernels shift "
                 "the accumulator right by this Norm and cannot shift it left",
                 f"use an Out_Q of at most {in_q + filter_q}")
    # Which kernel activates
    conv_do_relu = act != K.KOP_NONE and not pool
    pool_do_relu = act != K.KOP_NONE and pool
    dp_suffix, act_name = ACTIVATIONS[act]
    if not dp:
        if pool and act not in (K.KOP_NONE, K.KOP_RELU, K.KOP_RELUN):
            chk.fail(f"{act.name} after a pooling of a single precision convolution ({conv_oper.name}): the pooling "
                     "kernels only clip (KOP_RELU, KOP_RELUN)",
                     "use a DP convolution (KOP_CONV_DP / KOP_CONV_DWDP), whose reduction applies it before the "
                     "pooling")
        if conv_do_relu and act_name is None:
            chk.fail(f"{act.name} after a single precision convolution ({conv_oper.name}): no activation kernel "
                     "exists for it alone", "use a DP convolution (KOP_CONV_DP / KOP_CONV_DWDP)")
        if conv_do_relu and not par and act not in (K.KOP_RELU, K.KOP_RELUN):
            chk.fail(f"{act.name} with ParallelFeatures 0 after a single precision convolution: only the ReLU "
                     "kernels have a one-feature form", "use ParallelFeatures 1 or a DP convolution")

    # Geometry
    pcw = CNN_TotalPaddingValue(width, fcx, scx, dcx) if conv_pad else 0
    pch = CNN_TotalPaddingValue(height, fcy, scy, dcy) if conv_pad else 0
    _check_window(chk, "convolution filter", "width", width, "Fcx", fcx, dcx, pcw, "ConvPad")
    _check_window(chk, "convolution filter", "height", height, "Fcy", fcy, dcy, pch, "ConvPad")
    wc0, hc0, _, _, _, _, ppw, pph = CNN_LayerOutputDim(width, height, conv_oper, fcx, fcy, dcx, dcy, scx, scy,
                                                        conv_pad, pool_oper, fpx, fpy, dpx, dpy, spx, spy, pool_pad)
    if pool:
        _check_window(chk, "pooling window", "convolution output width", wc0, "Fpx", fpx, dpx, ppw, "PoolPad")
        _check_window(chk, "pooling window", "convolution output height", hc0, "Fpy", fpy, dpy, pph, "PoolPad")
    g = conv_pool_geometry(width, height, conv_oper, fcx, fcy, dcx, dcy, scx, scy, conv_pad, pool_oper, fpx, fpy,
                           dpx, dpy, spx, spy, pool_pad, pad_type, orient)
    out_lb, out_ub = _bounds(chk, act, size, conv_do_relu or pool_do_relu, relun, out_q)

    # Basic kernels
    suffix = SUFFIX[size]
    set_bias = None if dw else ("KerPar" if par else "Ker") + "SetBias" + ("_DP" if dp else "") + suffix
    conv_name, conv_needs = conv_kernel(par, dw, dp, size, fcx, fcy, dcx, dcy, scx, scy)
    reduct = ("KerDP" + ("_IO" if pool else "") + dp_suffix + suffix) if dp else None
    pool_name, pool_needs = pool_kernel(par, size, fpx, fpy, dpx, dpy, spx, spy) if pool else (None, None)
    relu_name = None
    if conv_do_relu and not dp:
        relu_name = ("KerPar" + act_name if par else "KerReLU") + suffix
    chk.declared((set_bias, conv_name, reduct, pool_name, relu_name), FP_LOADER)

    # Arguments
    os_ = D0 if dw else D1
    conv_out = pool or dp
    conv_out_size = 4 if dp else size
    tgt = "ConvOut" if conv_out else "Out"
    in_tile_cons = {1: 4, 2: 2}[size]
    in_l3, filter_l3, bias_l3, out_l3 = (_l3(f) for f in l3)
    kargs = [KerArgP("In", KerArgSpace(2, D0, T0), O.O_IN | O.O_DB | in_l3, width, height, g.used_w, g.used_h,
                     g.pad_inc_t, g.pad_inc, size, g.overlap_c, 0, g.tile_cons, "In")]
    if dw:
        kargs += [KerArg("Bias", KerArgSpace(1, D0), O.O_IN | O.O_DB | O.O_CONST | bias_l3, 1, 1, size, 0, 0, 0,
                         "Bias"),
                  KerArg("Filter", KerArgSpace(1, D0), O.O_IN | O.O_DB | O.O_CONST | filter_l3, 1, 1, fcx * fcy * size,
                         0, 0, 0, "Filter"),
                  KerArg("Out", KerArgSpace(2, D0, T0), O.O_OUT | O.O_DB | out_l3, g.wo, g.ho, size, 0, 0, 0, "Out")]
    else:
        kargs += [KerArg("Bias", KerArgSpace(1, D1), O.O_IN | O.O_DB | O.O_CONST | bias_l3, 1, 1, size, 0, 0, 0,
                         "Bias"),
                  KerArg("Filter", KerArgSpace(2, D1, D0), O.O_IN | O.O_DB | O.O_CONST | filter_l3, 1, 1,
                         fcx * fcy * size, 0, 0, 0, "Filter"),
                  KerArg("Out", KerArgSpace(2, D1, T0), O.O_OUT | O.O_DB | out_l3, g.wo, g.ho, size, 0, 0, 0, "Out")]
    if conv_out:
        space = KerArgSpace(2, os_, T0) if par else KerArgSpace(1, T0)
        kargs.append(KerArgP("ConvOut", space, O.O_BUFF | O.O_ONETILE, g.wc, g.hc, g.wc, g.hc, g.pad_inp, g.pad_inp,
                             conv_out_size, g.overlap_p, 0, 0, ""))

    # Calls
    loc_conv = L.LOC_LOOP if dw else L.LOC_D0
    loc_after = L.LOC_LOOP if dw else L.LOC_D0_EPILOG
    orientation = Imm(1 if orient == Tile_Orientation_T.TILE_HOR else 0)
    feats = (lambda arg: K_ArgPar(arg, S.KER_ARG_PARTILE_SIZE, os_)) if par else (lambda arg: IGNORE)
    calls = []
    if set_bias:
        calls.append(Call(set_bias, L.LOC_D0_PROLOG, Bindings(6,
            K_Arg(tgt, S.KER_ARG_TILE),                             # Out: the tile of the accumulators
            K_Arg(tgt, S.KER_ARG_TILE_W),                           # W
            K_Arg(tgt, S.KER_ARG_TILE_H),                           # H
            feats(tgt),                                             # OutFeatures of this chunk
            K_Arg("Bias", S.KER_ARG_TILE),                          # Bias of this chunk
            Imm(norm_bias) if dp else IGNORE)))                     # NormBias: DP only
    if par:
        in_feats = K_ArgPar("Filter", S.KER_ARG_PARTILE_SIZE, D0)
        total_in = Imm(norm_bias) if dw else K_ArgPar("Filter", S.KER_ARG_LOADEDPARTILE_SIZE, D0)
    else:
        in_feats = IGNORE if dw else Imm(1)
        total_in = Imm(norm_bias) if dw else IGNORE
    calls.append(Call(conv_name, loc_conv, Bindings(20,
        K_Arg("In", S.KER_ARG_TILE),                                # In: this chunk of input features' tile
        K_Arg("In", S.KER_ARG_TILE_W),                              # W
        K_Arg("In", S.KER_ARG_TILE_USEDW),                          # UsedW
        K_Arg("In", S.KER_ARG_TILE_H),                              # H
        K_Arg("In", S.KER_ARG_TILE_USEDH),                          # UsedH
        in_feats,                                                   # InFeatures of this chunk
        feats(tgt),                                                 # OutFeatures of this chunk
        K_Arg("Filter", S.KER_ARG_TILE),                            # Filter
        K_Arg("Bias", S.KER_ARG_TILE) if dw else IGNORE,            # Bias: depth wise only
        K_Arg(tgt, S.KER_ARG_TILE),                                 # Out
        Imm(norm),                                                  # Norm: w + i - o
        total_in,                                                   # TotalInFeatures (depth wise: NormBias)
        K_Arg("In", S.KER_ARG_TILE_PAD),                            # Pad of this tile
        orientation,                                                # Orientation
        *_geom_bindings(conv_needs, (fcx, scx, dcx, fcy, scy, dcy)))))
    if reduct:
        red_out = "ConvOut" if pool else "Out"
        calls.append(Call(reduct, loc_after, Bindings(10,
            K_Arg("ConvOut", S.KER_ARG_TILE),                       # In: the int32 accumulators
            K_Arg("ConvOut", S.KER_ARG_TILE_W),                     # W
            K_Arg("ConvOut", S.KER_ARG_TILE_H),                     # H
            K_Arg(red_out, S.KER_ARG_TILE),                         # Out (in place before a pooling)
            Imm(norm),                                              # Norm
            IGNORE,                                                 # NormBias: unused
            K_ArgPar(red_out, S.KER_ARG_PARTILE_SIZE, os_) if par else Imm(1),   # InFeatures
            Imm(out_lb),                                            # LB
            Imm(out_ub),                                            # UB (the output's Q for some activations)
            IGNORE)))                                               # MulBias: unused
    if relu_name:
        calls.append(Call(relu_name, loc_after, Bindings(18,
            K_Arg("Out", S.KER_ARG_TILE), K_Arg("Out", S.KER_ARG_TILE_W), K_Arg("Out", S.KER_ARG_TILE_USEDW),
            K_Arg("Out", S.KER_ARG_TILE_H), K_Arg("Out", S.KER_ARG_TILE_USEDH),
            feats("Out"),                                           # OutFeatures of this chunk
            K_Arg("Out", S.KER_ARG_TILE),                           # Out: in place
            *[IGNORE] * 9,                                          # pooling only: Pad, M, S, Orientation, Oper, ...
            Imm(out_lb), Imm(out_ub))))
    if pool:
        calls.append(Call(pool_name, loc_after, Bindings(18,
            K_Arg("ConvOut", S.KER_ARG_TILE), K_Arg("ConvOut", S.KER_ARG_TILE_W),
            K_Arg("ConvOut", S.KER_ARG_TILE_USEDW), K_Arg("ConvOut", S.KER_ARG_TILE_H),
            K_Arg("ConvOut", S.KER_ARG_TILE_USEDH),
            feats("ConvOut"),                                       # OutFeatures of this chunk
            K_Arg("Out", S.KER_ARG_TILE),                           # Out
            K_Arg("ConvOut", S.KER_ARG_TILE_PAD),                   # Pad of this tile
            *_geom_bindings(pool_needs[:2], (fpx, spx)),            # M, S
            orientation,                                            # Orientation
            Imm(CNN_EncodePoolOperation(pool_oper, act)),           # Oper: average?, clip?
            *_geom_bindings(pool_needs[2:], (dpx, fpy, spy, dpy)),  # D, My, Sy, Dy
            Imm(out_lb), Imm(out_ub))))

    if par:
        space = (KernelIterSpace(2, IterParSpace(D0, in_feat, 8), IterTiledSpace(T0)) if dw else
                 KernelIterSpace(3, IterParSpace(D1, out_feat, 8), IterTiledSpace(T0),
                                 IterParSpace(D0, in_feat, in_tile_cons)))
    else:
        space = (KernelIterSpace(2, IterFixedSpace(D0, in_feat), IterTiledSpace(T0)) if dw else
                 KernelIterSpace(3, IterFixedSpace(D1, out_feat), IterTiledSpace(T0), IterFixedSpace(D0, in_feat)))
    ctype = _ctype(size)
    kernel = UserKernel(Name, space, orient,
                        CArgs(4, TCArg(ctype, "In"), TCArg(ctype, "Filter"), TCArg(ctype, "Bias"), TCArg(ctype, "Out")),
                        Calls(len(calls), *calls), KerArgs(len(kargs), *kargs))
    if kernel:
        op = g.wc * g.hc * fcx * fcy * out_feat * (1 if dw else in_feat)
        if pool:
            op += out_feat * g.wo * g.ho * fpx * fpy
        if act != K.KOP_NONE:
            op += out_feat * g.wo * g.ho
        bandwidth = (width * height * size * in_feat * (1 if dw else out_feat) + g.wo * g.ho * size * out_feat
                     + fcx * fcy * size * in_feat * (1 if dw else out_feat) + size * out_feat)
        AddKernelInfos(Name, AT_KernelInfo_T.AT_KERINFO_OPER, op, 0)
        AddKernelInfos(Name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, bandwidth, 0)
        AddKernelArgDim(Name, "In", 4, in_feat, height, width, size)
        if dw:
            AddKernelArgDim(Name, "Filter", 4, in_feat, fcy, fcx, size)
        else:
            AddKernelArgDim(Name, "Filter", 5, out_feat, in_feat, fcy, fcx, size)
        AddKernelArgDim(Name, "Bias", 2, out_feat, size)
        AddKernelArgDim(Name, "Out", 4, out_feat, g.ho, g.wo, size)
    return 1 if kernel else 0


# ----------------------------------------------------------------------------------------------
# CNN_PoolReLU


def CNN_PoolReLU(Name, Ctrl, In_DataSize, Out_DataSize, In_Q, Out_Q, In_InL3, Out_InL3, InFeat, OutFeat, Width,
                 Height, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ReLUOper) -> int:
    """A pooling (KOP_MAXPOOL, KOP_AVGPOOL) with an optional ReLU/ReLUN, or an activation alone
    (PoolOper KOP_NONE: KOP_RELU, KOP_RELUN, KOP_HSIGMOID, KOP_HSWISH, KOP_LEAKYRELU), as one user
    kernel ``Name(In, Out)`` (In: [InFeat][Height][Width], Out: [OutFeat][Ho][Wo], InFeat ==
    OutFeat). Returns 1 when tiled, 0 when no tiling fits and AT_KERNEL_NOSOLUTION_ERROR is off."""
    generator, where = "CNN_PoolReLU", caller_where()
    chk = Checker(generator, Name, where)
    ctrl, orient, par, pad_type, relun = _common_ctrl(chk, Ctrl, generator, Name, where)
    size = chk.data_size(In_DataSize, "In_DataSize")
    if chk.data_size(Out_DataSize, "Out_DataSize") != size:
        chk.fail(f"In_DataSize {size} and Out_DataSize {Out_DataSize} differ: pooling and activations keep the data "
                 "size", "give In and Out the same data size")
    in_q, out_q = _check_q(chk, In_Q, "In_Q", size), _check_q(chk, Out_Q, "Out_Q", size)
    if in_q != out_q:
        chk.fail(f"In_Q {in_q} and Out_Q {out_q} differ: pooling and activations keep the fixed-point format",
                 f"set Out_Q to {in_q}")
    l3 = [chk.flag(In_InL3, "In_InL3"), chk.flag(Out_InL3, "Out_InL3")]
    in_feat = chk.integer(InFeat, "InFeat", 1)
    out_feat = chk.integer(OutFeat, "OutFeat", 1)
    if in_feat != out_feat:
        chk.fail(f"InFeat {in_feat} != OutFeat {out_feat}: pooling and activations keep the features",
                 "pass the same number of features")
    width, height = chk.integer(Width, "Width", 1), chk.integer(Height, "Height", 1)
    pool_oper = chk.oper(PoolOper, "PoolOper", POOL_OPERS, "a pooling (KOP_NONE, KOP_MAXPOOL or KOP_AVGPOOL)")
    pool = pool_oper != K.KOP_NONE
    if pool:
        act = chk.oper(ReLUOper, "ReLUOper", (K.KOP_NONE, K.KOP_RELU, K.KOP_RELUN),
                       "an activation the pooling kernels apply (they only clip)")
        fpx, fpy, dpx, dpy, spx, spy, pool_pad = _pool_window(chk, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad)
    else:
        alone = (K.KOP_RELU, K.KOP_RELUN) + ((K.KOP_HSIGMOID, K.KOP_HSWISH, K.KOP_LEAKYRELU) if par else ())
        act = chk.oper(ReLUOper, "ReLUOper", alone, "an activation with a kernel of its own"
                       + ("" if par else " in its one-feature form (ParallelFeatures 0)"))
        fpx = fpy = dpx = dpy = spx = spy = 1
        pool_pad = 0
    if pool:
        ppw = CNN_TotalPaddingValue(width, fpx, spx, dpx) if pool_pad else 0
        pph = CNN_TotalPaddingValue(height, fpy, spy, dpy) if pool_pad else 0
        _check_window(chk, "pooling window", "width", width, "Fpx", fpx, dpx, ppw, "PoolPad")
        _check_window(chk, "pooling window", "height", height, "Fpy", fpy, dpy, pph, "PoolPad")
    g = conv_pool_geometry(width, height, K.KOP_NONE, 1, 1, 1, 1, 1, 1, 0, pool_oper, fpx, fpy, dpx, dpy, spx, spy,
                           pool_pad, pad_type, orient)
    out_lb, out_ub = _bounds(chk, act, size, act in (K.KOP_RELU, K.KOP_RELUN), relun, out_q)
    suffix = SUFFIX[size]
    if pool:
        kname, needs = pool_kernel(par, size, fpx, fpy, dpx, dpy, spx, spy)
    else:
        kname = ("KerPar" + ACTIVATIONS[act][1] if par else "KerReLU") + suffix
    chk.declared((kname,), FP_LOADER)
    in_l3, out_l3 = _l3(l3[0]), _l3(l3[1])
    kargs = KerArgs(2,
        KerArgP("In", KerArgSpace(2, D0, T0), O.O_IN | O.O_DB | in_l3, width, height, g.used_w, g.used_h, g.pad_inp,
                g.pad_inp, size, g.overlap_p, 0, g.tile_cons, "In"),
        KerArg("Out", KerArgSpace(2, D0, T0), O.O_OUT | O.O_DB | out_l3, g.wo, g.ho, size, 0, 0, 0, "Out"))
    orientation = Imm(1 if orient == Tile_Orientation_T.TILE_HOR else 0)
    feats = K_ArgPar("Out", S.KER_ARG_PARTILE_SIZE, D0) if par else IGNORE
    head = [K_Arg("In", S.KER_ARG_TILE), K_Arg("In", S.KER_ARG_TILE_W), K_Arg("In", S.KER_ARG_TILE_USEDW),
            K_Arg("In", S.KER_ARG_TILE_H), K_Arg("In", S.KER_ARG_TILE_USEDH), feats, K_Arg("Out", S.KER_ARG_TILE)]
    if pool:
        binds = head + [K_Arg("In", S.KER_ARG_TILE_PAD), *_geom_bindings(needs[:2], (fpx, spx)), orientation,
                        Imm(CNN_EncodePoolOperation(pool_oper, act)),
                        *_geom_bindings(needs[2:], (dpx, fpy, spy, dpy)), Imm(out_lb), Imm(out_ub)]
    else:
        binds = head + [IGNORE] * 9 + [Imm(out_lb), Imm(out_ub)]
    space = (KernelIterSpace(2, IterParSpace(D0, in_feat, 8), IterTiledSpace(T0)) if par else
             KernelIterSpace(2, IterFixedSpace(D0, in_feat), IterTiledSpace(T0)))
    ctype = _ctype(size)
    kernel = UserKernel(Name, space, orient, CArgs(2, TCArg(ctype, "In"), TCArg(ctype, "Out")),
                        Calls(1, Call(kname, L.LOC_LOOP, Bindings(18, *binds))), kargs)
    if kernel:
        op = (out_feat * g.wo * g.ho * fpx * fpy if pool else 0) + (out_feat * g.wo * g.ho if act else 0)
        AddKernelInfos(Name, AT_KernelInfo_T.AT_KERINFO_OPER, op, 0)
        AddKernelInfos(Name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH,
                       width * height * size * in_feat + g.wo * g.ho * size * out_feat, 0)
        AddKernelArgDim(Name, "In", 4, in_feat, height, width, size)
        AddKernelArgDim(Name, "Out", 4, out_feat, g.ho, g.wo, size)
    return 1 if kernel else 0


# ----------------------------------------------------------------------------------------------
# CNN_GroupedConvolutionPoolReLU


def CNN_GroupedConvolutionPoolReLU(Name, Ctrl, GroupIn, GroupOut, In_DataSize, Filter_DataSize, Bias_DataSize,
                                   Out_DataSize, In_Q, Filter_Q, Bias_Q, Out_Q, In_InL3, Filter_InL3, Bias_InL3,
                                   Out_InL3, InFeat, OutFeat, Width, Height,
                                   ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad,
                                   PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad,
                                   ReLUOper) -> int:
    """A grouped convolution: ``InFeat / GroupIn`` groups, each convolving GroupIn input features
    into GroupOut output features. The original's form: a user kernel ``NameBody`` (a
    CNN_ConvolutionPoolReLU of one group) in a kernel group ``Name(In, Filter, Bias, Out)`` that
    calls it once per group (``UserKernelGroupK``), the arguments offset by the group's size
    (Filter: [NGroups][GroupOut][GroupIn][Fcy][Fcx]). Returns 1, or 0 when the body has no tiling
    and AT_KERNEL_NOSOLUTION_ERROR is off."""
    generator, where = "CNN_GroupedConvolutionPoolReLU", caller_where()
    chk = Checker(generator, Name, where)
    group_in, group_out = chk.integer(GroupIn, "GroupIn", 1), chk.integer(GroupOut, "GroupOut", 1)
    in_feat, out_feat = chk.integer(InFeat, "InFeat", 1), chk.integer(OutFeat, "OutFeat", 1)
    if in_feat % group_in or out_feat % group_out or in_feat // group_in != out_feat // group_out:
        chk.fail(f"cannot divide InFeat {in_feat} / OutFeat {out_feat} into groups of GroupIn {group_in} / "
                 f"GroupOut {group_out}", "InFeat / GroupIn and OutFeat / GroupOut must be the same whole number")
    if not isinstance(Name, str):
        chk.fail(f"the name must be a string, got {Name!r}", "e.g. \"GroupedConv0\"")
    ngroups = in_feat // group_in
    body = Name + "Body"
    OpenKernelGroup(Name)
    try:
        ok = _conv_pool_relu(generator, where, body, Ctrl, In_DataSize, Filter_DataSize, Bias_DataSize, Out_DataSize,
                             In_Q, Filter_Q, Bias_Q, Out_Q, In_InL3, Filter_InL3, Bias_InL3, Out_InL3, group_in,
                             group_out, Width, Height, ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad, PoolOper, Fpx,
                             Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ReLUOper)
    finally:
        CloseKernelGroup()
    if not ok:
        return 0
    uk = current_model().kernels[body]
    out_arg = uk.kerarg("Out")
    wo, ho = out_arg.w, out_arg.h
    fcx, fcy = int(Fcx), int(Fcy)
    size = int(In_DataSize)
    dw = chk.oper(ConvOper, "ConvOper", CONV_OPERS, "a convolution") in (K.KOP_CONV_DW, K.KOP_CONV_DWDP)
    filters = group_out * (1 if dw else group_in) * fcx * fcy
    ctype = _ctype(size)
    group = UserKernelGroupK(
        Name, ngroups,
        CArgs(4, TCArg(ctype, "In"), TCArg(ctype, "Filter"), TCArg(ctype, "Bias"), TCArg(ctype, "Out")),
        0,
        Calls(1, UserKernelCall(body, L.LOC_GROUP, Bindings(4,
            KG_ArgOper("In", "*", group_in * int(Width) * int(Height)),     # items (see the module's documentation)
            KG_ArgOper("Filter", "*", filters),
            KG_ArgOper("Bias", "*", group_out),
            KG_ArgOper("Out", "*", group_out * wo * ho)))),
        KerArgs(4,
            KerGroupArg("In", O.O_IN, ngroups * group_in * int(Width) * int(Height), size, "In"),
            KerGroupArg("Filter", O.O_IN, ngroups * filters, size, "Filter"),
            KerGroupArg("Bias", O.O_IN, ngroups * group_out, size, "Bias"),
            KerGroupArg("Out", O.O_OUT, ngroups * group_out * wo * ho, size, "Out")))
    return 1 if group else 0


__all__ = ["CNN_ConvolutionPoolReLU", "CNN_PoolReLU", "CNN_GroupedConvolutionPoolReLU", "ConvPoolGeometry",
           "conv_pool_geometry", "conv_kernel", "pool_kernel"]
