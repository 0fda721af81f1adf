"""Fused layers (ours, issue 26): a chain of TFLM SQ8 convolutions as ONE user kernel whose
intermediates live only in L1.

``CNN_FusedConvAct_SQ8(Name, Ctrl, InFeat, Width, Height, Layers, AddOper, AddActOper)`` with
``Layers = CNN_FusedLayers(N, CNN_FusedConv(ConvOper, OutFeat, Fcx, Fcy, Scx, Scy, ConvPad, ActOper),
...)`` computes, bit for bit, what the same layers generated one by one with
``CNN_ConvolutionPoolAct_SQ8`` (Scale_DataSize 4, no pooling, no dilation) compute, then with
``AddOper`` KOP_MATADD TFLite's ADD of the last layer's output and a second input ``Res`` of the same
shape (MobileNet v2's inverted residual: ``Res`` is the block's input), clamped by ``AddActOper``.

The user kernel is ``Name(In, Filter0, Bias0, Scale0, ScaleN0, Infos0, ..., [Res, AddInfos,] Out)``
(per layer the constants of :func:`.sq8_gen_tflm_conv.conv_constants`; AddInfos from
:func:`.sq8_gen_tflm_dense.add_infos` with the last layer's output as the first input).

How it tiles (the public API only, so the tiler, the verifier, codegen and the simulator treat it like
any other kernel): one tiled space over the LAST layer's output lines (whole HWC lines, every
channel). Each intermediate ``T<k>`` (layer k's output) is an ``O_BUFF | O_ONETILE`` ``KerArgP``:
one tile of it in L1, never in L2. Going back from the output, each argument's tile is what the layer
reading it needs: along the lines its overlap is ``F - S + S * overlap(next)``, its padding for the
tiling ``pad + S * padding(next)`` (the composition :func:`.cnn_conv.conv_pool_geometry` does for a
convolution and its pooling), so that every tile of every intermediate holds exactly the lines the
next layer reads, padding included. The constants of every layer stay in L1 for the whole kernel
(loaded once).

Overlapping lines, two modes, both declared and tiled; the one with fewer predicted cycles is kept
(recompute on a tie), unless ``LineBuffer`` (an argument of :func:`fused_conv_act`) forces one;
:func:`line_buffer_mode` tells which a kernel uses:

* recompute (``LineBuffer=0``): every tile computes all its lines of each intermediate, the
  overlapping ones again (the tiler's cost of a tile counts them);
* keep, a line buffer (``LineBuffer=1``): the tiler starts no tile but the first in the padding and
  ends none but the last in it, so the first ``overlap`` lines of ``T<k>``'s tile j are the last of its
  tile j - 1. The layer reading ``T<k>`` moves them to the front of its buffer after use, and the
  layer writing it computes, after the first tile, only the others (``KerParConvKeep_TFLM_SQ8``,
  ``KerParConvDWKeep_TFLM_SQ8``: :mod:`.sq8_kernels_tflm_fused`, whose ``Cost=`` counts the lines
  computed and the move). ``T<k>`` stays one O_BUFF | O_ONETILE buffer at a fixed L1 address, which
  nothing else writes between two tiles.

Refused (stated, not silent): dilations, grouped convolutions other than depth wise, poolings inside
the chain, the Ctrl fields the single-layer TFLM generator refuses, an ``AddOper`` other than
KOP_NONE / KOP_MATADD, and a residual whose shape differs from the last layer's output.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..api import (
    AddKernelArgDim,
    AddKernelInfos,
    AT_GetKernelCtrl,
    AT_SetKernelCtrl,
    Bindings,
    Call,
    Calls,
    CArgs,
    CopyAndPopUserKernel,
    Imm,
    IterTiledSpace,
    K_Arg,
    K_ArgOp,
    KerArg,
    KerArgP,
    KerArgs,
    KerArgSpace,
    KernelIterSpace,
    PushBackUserKernel,
    TCArg,
    UserKernel,
)
from ..api.common import counted, describe
from ..constants import (
    AT_KernelInfo_T,
    KernelArgSelect_T,
    KernelCallLocationT,
    KernelIteratorT,
    KernelOper_T,
    Object_Type_T,
    Tile_Orientation_T,
)
from ..model.ir import caller_where
from . import sq8_gen_tflm_conv as TC
from .cnn_checks import Checker
from .sq8_infos import AT_INF_TFLM_DIM
from .sq8_kernels_tflm_fused import KEEP_KERNELS

K = KernelOper_T
S = KernelArgSelect_T
O = Object_Type_T
T0 = KernelIteratorT.KER_ITER_TILE0
LOOP = KernelCallLocationT.LOC_LOOP
PS = TC.PS
SC = "signed char" + PS
FUSED_OPERS = (K.KOP_CONV, K.KOP_CONV_DW)
ADD_OPERS = (K.KOP_NONE, K.KOP_MATADD)
MAX_LAYERS = 16


@dataclass(frozen=True)
class FusedConv:
    """One layer of a fused chain, as given (checked by the generator, which knows its input)."""

    conv_oper: object
    out_feat: object
    fcx: object
    fcy: object
    scx: object
    scy: object
    conv_pad: object
    act_oper: object


def CNN_FusedConv(ConvOper, OutFeat, Fcx, Fcy, Scx, Scy, ConvPad, ActOper) -> FusedConv:
    """Ours: one convolution (KOP_CONV) or depth-wise convolution (KOP_CONV_DW) of a fused chain,
    with CNN_ConvolutionPoolAct_SQ8's meaning of each argument (no dilation, no pooling)."""
    return FusedConv(ConvOper, OutFeat, Fcx, Fcy, Scx, Scy, ConvPad, ActOper)


def CNN_FusedLayers(*args) -> tuple:
    """Ours: the count-prefixed list of a chain's layers, ``CNN_FusedLayers(N, CNN_FusedConv(...), ...)``."""
    return counted("CNN_FusedLayers", args, FusedConv, caller_where())


# ----------------------------------------------------------------------------------------------
# The chain's geometry


@dataclass(frozen=True)
class Stage:
    """A layer of the chain, checked: its single-layer description (:class:`.sq8_gen_tflm_conv.Layer`)
    and, along the lines, what its INPUT argument is tiled with."""

    lay: TC.Layer
    used_in: int        # input lines it reads (all of what the next stages need)
    pad_exec: tuple     # (top, bottom) padding of its input it applies
    pad_tile: tuple     # (top, bottom) padding of its input for the tiling (composed with the next stages)
    overlap: int        # lines shared by adjacent tiles of its input


def _layer(chk, k: int, spec, in_feat: int, width: int, height: int) -> TC.Layer:
    if not isinstance(spec, FusedConv):
        chk.fail(f"layer {k} is not a CNN_FusedConv(...)", "build each layer with CNN_FusedConv")
    chk = Checker(f"{chk.generator}: layer {k}", chk.name, chk.where)     # every message names the layer
    conv = chk.oper(spec.conv_oper, "ConvOper", FUSED_OPERS, "a convolution (KOP_CONV or KOP_CONV_DW)")
    out_feat = TC._dim(chk, spec.out_feat, "OutFeat")
    cwin = TC._conv_window(chk, spec.fcx, spec.fcy, 1, 1, spec.scx, spec.scy, spec.conv_pad)
    TC._features(chk, in_feat, out_feat, conv)
    group_in, group_out = TC._groups(chk, conv, in_feat, out_feat, None)
    act = TC._act(chk, spec.act_oper)
    g = TC._geometry(chk, width, height, conv, cwin, None, None)
    return TC.Layer(in_feat, out_feat, width, height, group_in, group_out, conv, cwin, None, (1, 1, 1, 1, 0), act, g)


def _stages(layers: list) -> tuple:
    """Back from the last output (every line used, no overlap): each layer's input lines, paddings
    and overlap (see the module's documentation)."""
    used, pt_next, pb_next, ov_next = layers[-1].g.ho, 0, 0, 0
    out = []
    for lay in reversed(layers):
        fy, sy = lay.cwin[1], lay.cwin[5]
        top = lay.g.pad_inc[2]
        reach = (used - 1) * sy + fy - top           # input lines [-top, reach) are read
        used_in = min(lay.height, reach)
        bottom = reach - used_in
        stage = Stage(lay, used_in, (top, bottom), (top + sy * pt_next, bottom + sy * pb_next), fy - sy + sy * ov_next)
        out.append(stage)
        used, pt_next, pb_next, ov_next = used_in, stage.pad_tile[0], stage.pad_tile[1], stage.overlap
    return tuple(reversed(out))


# ----------------------------------------------------------------------------------------------
# The user kernel


def _const_args(k: int, lay: TC.Layer) -> list:
    flags = O.O_IN | O.O_CONST | O.O_BUFF | O.O_NTILED
    filt = lay.cwin[0] * lay.cwin[1] * (lay.out_feat if lay.dw else lay.group_in) * (1 if lay.dw else lay.out_feat)
    space = KerArgSpace(1, T0)
    return [KerArg(f"Filter{k}", space, flags, 1, 1, filt, 0, 0, 0, f"Filter{k}"),
            KerArg(f"Bias{k}", space, flags, 1, 1, 4 * lay.out_feat, 0, 0, 0, f"Bias{k}"),
            KerArg(f"Scale{k}", space, flags, 1, 1, 4 * lay.out_feat, 0, 0, 0, f"Scale{k}"),
            KerArg(f"ScaleN{k}", space, flags, 1, 1, lay.out_feat, 0, 0, 0, f"ScaleN{k}"),
            KerArg(f"Infos{k}", space, flags, 1, 1, AT_INF_TFLM_DIM, 0, 0, 0, f"Infos{k}")]


def _line_arg(name: str, st: Stage, flags, cname: str):
    """The input of stage ``st`` (In, or an intermediate T<k>), tiled over whole lines."""
    lay = st.lay
    row = lay.width * lay.in_feat
    return KerArgP(name, KerArgSpace(1, T0), flags, row, lay.height, row, st.used_in, (0, 0) + st.pad_tile,
                   (0, 0) + st.pad_exec, 1, st.overlap, 0, 0, cname)


def _call(k: int, lay: TC.Layer, src: str, tgt: str, keep_out: int = 0, keep_in: int = 0) -> Call:
    """Layer k: KerParConv(DW)_TFLM_SQ8 from src's tile into tgt's, every output channel; with a line
    buffer (keep_out: lines of tgt the previous tile left at its front, keep_in: lines of src to move
    to its front for the next tile) the Keep form of the kernel."""
    kernel = "KerParConvDW_TFLM_SQ8" if lay.dw else "KerParConv_TFLM_SQ8"
    conv = TC.conv_bindings(lay, src, tgt, TC.every_channel(lay), str(k))
    if not keep_out and not keep_in:
        return Call(kernel, LOOP, Bindings(len(conv), *conv))
    keep = (Imm(keep_out), Imm(keep_in),                        # KeepOut, KeepIn
            K_Arg(tgt, S.KER_ARG_TILEINDEX),                    # TileIndex: 0 keeps nothing
            K_Arg(tgt, S.KER_ARG_TILELAST))                     # TileLast: no next tile to keep lines for
    return Call(KEEP_KERNELS[kernel], LOOP, Bindings(len(conv) + len(keep), *conv, *keep))


RES_SECOND, RES_FIRST = 1, 2      # the ADD's operands: (chain, Res) or (Res, chain), as its Infos say


def _add_call(src: str, items: int, order: int) -> Call:
    first, second = (src, "Res") if order == RES_SECOND else ("Res", src)
    return Call("KerParAdd_TFLM_SQ8", LOOP, Bindings(5,
        K_Arg(first, S.KER_ARG_TILE),                           # In1: the last layer's output (or the residual)
        K_Arg(second, S.KER_ARG_TILE),                          # In2: the other one, the same lines
        K_Arg("Out", S.KER_ARG_TILE),
        K_ArgOp("Out", S.KER_ARG_TILE_H, "*", items),           # items of this tile
        K_Arg("AddInfos", S.KER_ARG_TILE)))


def _keeps(stages: tuple, k: int, keep: bool) -> tuple:
    """(KeepOut, KeepIn) of layer k: the overlaps of its output and input when they are L1
    intermediates kept from tile to tile (the line buffer), else 0."""
    if not keep:
        return 0, 0
    out = stages[k + 1].overlap if k + 1 < len(stages) else 0
    return max(out, 0), max(stages[k].overlap, 0) if k > 0 else 0     # < 0: a gap between tiles, none shared


def _kernel(name: str, stages: tuple, add: bool, db: int, keep: bool = False):
    """The fused user kernel; db: O_DB to double buffer In, Res and Out, 0 for one buffer each;
    keep: the line-buffer mode (every intermediate's overlap kept from tile to tile)."""
    last = stages[-1].lay
    out_row = last.g.wo * last.out_feat
    n = len(stages)
    args = [_line_arg("In", stages[0], O.O_IN | db, "In")]
    cargs = [TCArg(SC, "In")]
    calls = []
    for k, st in enumerate(stages):
        args += _const_args(k, st.lay)
        cargs += [TCArg(SC, f"Filter{k}"), TCArg("int" + PS, f"Bias{k}"), TCArg("int" + PS, f"Scale{k}"),
                  TCArg(SC, f"ScaleN{k}"), TCArg(SC, f"Infos{k}")]
        src = "In" if k == 0 else f"T{k - 1}"
        tgt = "Out" if k == n - 1 and not add else f"T{k}"
        if k < n - 1:
            args.append(_line_arg(f"T{k}", stages[k + 1], O.O_BUFF | O.O_ONETILE, ""))
        calls.append(_call(k, st.lay, src, tgt, *_keeps(stages, k, keep)))
    if add:
        args += [KerArg(f"T{n - 1}", KerArgSpace(1, T0), O.O_BUFF | O.O_ONETILE, out_row, last.g.ho, 1, 0, 0, 0, ""),
                 KerArg("Res", KerArgSpace(1, T0), O.O_IN | db, out_row, last.g.ho, 1, 0, 0, 0, "Res"),
                 KerArg("AddInfos", KerArgSpace(1, T0), O.O_IN | O.O_CONST | O.O_BUFF | O.O_NTILED, 1, 1,
                        AT_INF_TFLM_DIM, 0, 0, 0, "AddInfos")]
        cargs += [TCArg(SC, "Res"), TCArg(SC, "AddInfos")]
        calls.append(_add_call(f"T{n - 1}", out_row, add))
    args.append(KerArg("Out", KerArgSpace(1, T0), O.O_OUT | db, out_row, last.g.ho, 1, 0, 0, 0, "Out"))
    cargs.append(TCArg(SC, "Out"))
    return UserKernel(name, KernelIterSpace(1, IterTiledSpace(T0)), Tile_Orientation_T.TILE_HOR,
                      CArgs(len(cargs), *cargs), Calls(len(calls), *calls), KerArgs(len(args), *args))


def _infos(name: str, stages: tuple, add: bool) -> None:
    """Operations (each layer's MACs once, the recomputed lines not counted), bandwidth (In, Out,
    Res and the constants: what crosses L2) and the arguments' dimensions (HWC)."""
    first, last = stages[0].lay, stages[-1].lay
    op = bandwidth = 0
    for k, st in enumerate(stages):
        lay = st.lay
        fcx, fcy = lay.cwin[0], lay.cwin[1]
        per_out = fcx * fcy * (1 if lay.dw else lay.group_in)
        op += lay.g.wc * lay.g.hc * lay.out_feat * per_out
        bandwidth += per_out * lay.out_feat + 9 * lay.out_feat + AT_INF_TFLM_DIM
        TC.conv_const_dims(name, lay, str(k))
        AddKernelArgDim(name, f"Infos{k}", 2, AT_INF_TFLM_DIM, 1)
    out_items = last.g.wo * last.g.ho * last.out_feat
    bandwidth += first.width * first.height * first.in_feat + out_items * (3 if add else 1)
    AddKernelArgDim(name, "In", 4, first.height, first.width, first.in_feat, 1)
    if add:
        op += out_items
        AddKernelArgDim(name, "Res", 4, last.g.ho, last.g.wo, last.out_feat, 1)
        AddKernelArgDim(name, "AddInfos", 2, AT_INF_TFLM_DIM, 1)
    AddKernelArgDim(name, "Out", 4, last.g.ho, last.g.wo, last.out_feat, 1)
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, op, 0)
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, bandwidth, 0)


def _declare(name: str, stages: tuple, add: bool, keep: bool, probe: bool):
    """Declare the user kernel in one mode (double buffered first) and take it out of the model:
    its tiling, or None. probe: no tiling returns None whatever the script's
    AT_KERNEL_NOSOLUTION_ERROR (another mode is tried), else that setting decides.

    Any tiling suits the line buffer: the tiler starts no tile but the first in the padding and
    ends none but the last in it (tiler/geometry.py, valid_tiling), so the first ``overlap`` lines
    of an intermediate's tile j > 0 are the last of its tile j - 1, and its last tile holds them."""
    saved = AT_GetKernelCtrl(TC.NOSOLUTION)
    try:
        if probe:
            AT_SetKernelCtrl(TC.NOSOLUTION, 0)
        tiling = TC._solve([lambda: _kernel(name, stages, add, O.O_DB, keep),
                            lambda: _kernel(name, stages, add, 0, keep)])
    finally:
        AT_SetKernelCtrl(TC.NOSOLUTION, saved)
    if tiling is not None:
        CopyAndPopUserKernel(name)
    return tiling


def _cycles(tiling) -> int:
    return tiling.predicted.cycles if tiling.predicted is not None else 0


def _choose(chk, stages: tuple, add: bool, line_buffer):
    """The tiling of the chain in the mode with fewer predicted cycles (recompute on a tie), or the
    forced one; put back in the model. None: no tiling (AT_KERNEL_NOSOLUTION_ERROR off)."""
    name = chk.name
    modes = [False, True] if line_buffer is None else [bool(line_buffer)]
    if not any(st.overlap > 0 for st in stages[1:]):
        modes = [False]         # no intermediate overlaps: both modes are the same kernel
    found = {}
    for keep in modes:
        tiling = _declare(name, stages, add, keep, probe=keep and line_buffer is None)
        if tiling is not None:
            found[keep] = tiling
    if not found:
        return None
    best = min(found, key=lambda keep: (_cycles(found[keep]), keep))
    PushBackUserKernel(found[best])
    return found[best]


def line_buffer_mode(tiling) -> str:
    """How a CNN_FusedConvAct_SQ8 kernel computes the overlaps of its intermediates: "keep" (line
    buffer: it calls the Keep kernels) or "recompute" (each tile computes them again)."""
    return "keep" if any(c.name in KEEP_KERNELS.values() for c in tiling.kernel.calls) else "recompute"


def fused_conv_act(setup, InFeat, Width, Height, Layers, AddOper, AddActOper, ResidualFirst=0, LineBuffer=None) -> int:
    """CNN_FusedConvAct_SQ8 (see the module's documentation). ResidualFirst 1: the ADD's first operand
    (its Infos' IN_ZP, MULT2, SHIFT2) is Res, the chain's output the second. LineBuffer: None chooses
    between the two modes by predicted cycles, 0 forces recomputing the overlaps, 1 keeping them."""
    chk = setup.chk
    TC._check_ctrl(setup)
    if LineBuffer not in (None, 0, 1) or isinstance(LineBuffer, float):
        chk.fail(f"LineBuffer must be None, 0 or 1, got {LineBuffer!r}",
                 "None: the mode with fewer predicted cycles; 0: recompute the overlaps; 1: keep them in L1")
    in_feat, width, height = TC._dim(chk, InFeat, "InFeat"), TC._dim(chk, Width, "Width"), TC._dim(chk, Height, "Height")
    specs = Layers if isinstance(Layers, (tuple, list)) else None
    if not specs:
        chk.fail(f"Layers must be a non-empty CNN_FusedLayers(N, CNN_FusedConv(...), ...), got {describe(Layers)}",
                 "list the chain's layers with CNN_FusedLayers")
    if len(specs) > MAX_LAYERS:
        chk.fail(f"{len(specs)} layers in one fused kernel: at most {MAX_LAYERS} are supported",
                 "split the chain into several fused kernels")
    add = chk.oper(AddOper, "AddOper", ADD_OPERS, "KOP_NONE or KOP_MATADD") == K.KOP_MATADD
    TC._act(chk, AddActOper, "AddActOper")
    if chk.integer(ResidualFirst, "ResidualFirst", 0, 1, hint="0: the chain's output is the ADD's first operand, "
                   "1: the residual is") and add:
        add = RES_FIRST
    if len(specs) < 2 and not add:
        chk.fail("a fused chain of one layer without a residual ADD fuses nothing",
                 "use CNN_ConvolutionPoolAct_SQ8 for a single layer")
    layers = []
    for k, spec in enumerate(specs):
        lay = _layer(chk, k, spec, in_feat, width, height)
        layers.append(lay)
        in_feat, width, height = lay.out_feat, lay.g.wo, lay.g.ho
    convs = {"KerParConvDW_TFLM_SQ8" if lay.dw else "KerParConv_TFLM_SQ8" for lay in layers}
    TC._lib(chk, "KerParAdd_TFLM_SQ8" if add else None, *convs,
            *(KEEP_KERNELS[c] for c in convs if LineBuffer != 0))
    stages = _stages(layers)
    kernel = _choose(chk, stages, add, LineBuffer)
    if kernel:
        _infos(chk.name, stages, add)
    return 1 if kernel else 0


__all__ = ["CNN_FusedConv", "CNN_FusedLayers", "FusedConv", "fused_conv_act", "line_buffer_mode"]
