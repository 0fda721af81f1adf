"""The SQ8 generators' implementations for TensorFlow Lite Micro's requantisation (Scale_DataSize 4, HWC): convolutions and pooling.

Called by :mod:`.sq8_generators` with the generator's :class:`.sq8_common.Sq8Setup` (checker,
control fields, requantisation) then the generator's arguments after ``Ctrl``, in order. Each
layer computes what TFLite Micro computes, bit for bit (:mod:`.sq8_tflm` is the reference:
``conv2d``, ``depthwise_conv2d``, ``max_pool2d``, ``average_pool2d``; ``docs/cnn-sq8.md``).

Contract:

* ``CNN_ConvolutionPoolAct_SQ8`` / ``CNN_GroupedConvolutionPoolAct_SQ8`` make the user kernel
  ``Name(signed char *In, signed char *Filter, int *Bias, signed char *Out, int *Scale,
  signed char *ScaleN, signed char *Infos)`` (all ``__restrict__``, the original's names and order);
  ``CNN_PoolAct_SQ8`` (and ``CNN_ConvolutionPoolAct_SQ8`` with ``ConvOper`` KOP_NONE, as the
  original) ``Name(signed char *In, signed char *Out, signed char *Infos)``.
* Layouts are TFLite's, one image: In ``[Height][Width][InFeat]``, Out ``[Ho][Wo][OutFeat]``;
  Filter OHWI ``[OutFeat][Fcy][Fcx][InFeat]`` (grouped: ``[OutFeat][Fcy][Fcx][GroupIn]``); depth wise
  ``[Fcy][Fcx][OutFeat]`` (TFLite's ``[1][Fcy][Fcx][OutFeat]``) with ``OutFeat = M * InFeat``, any
  depth multiplier M (TFLite allows it; the original requires M = 1: ours). Bias int32
  ``[OutFeat]`` (``Bias_DataSize`` must be 4). Scale: int32 Q31 multipliers per output channel,
  ScaleN: int8 shifts per channel (TFLM's ``QuantizeMultiplier(in_scale * w_scale[c] / out_scale)``;
  a per-tensor layer repeats its value): :func:`conv_constants` makes them. Infos
  (:mod:`.sq8_infos` words): IN_ZP, OUT_ZP, ACT_MIN, ACT_MAX (pooling: ACT_MIN, ACT_MAX;
  :func:`pool_infos`).
* ``ConvPad`` / ``PoolPad`` 1 is TFLite's "SAME" (TensorFlow's total padding, the odd pixel at the
  bottom/right, i.e. PAD_BALANCED_RIGHT; another Ctrl PadType is refused), 0 "VALID". Padded taps
  contribute ``In - IN_ZP = 0`` (they are skipped), as TFLM.
* ``ConvOper`` KOP_CONV, KOP_CONV_DW or KOP_NONE; ``PoolOper`` KOP_NONE, KOP_MAXPOOL, KOP_AVGPOOL:
  the pooling runs on the convolution's int8 output and keeps its quantisation, as TFLite's
  separate pooling operator after the convolution would (no pooling dilation: TFLite has none).
  ``ActOper`` KOP_NONE, KOP_RELU, KOP_RELUN, KOP_RELUM, KOP_RELUMN all mean TFLM's clamp to
  [ACT_MIN, ACT_MAX] of Infos (the caller computes it with ``sq8_tflm.activation_range``).
* The grouped convolution is one user kernel (ours; the original builds a kernel group calling a
  body per group): output channel c reads input channels ``(c / GroupOut) * GroupIn ..``.

Tiling: HWC lines are whole (``Width * InFeat`` bytes), so the layer tiles over lines only
(TILE_HOR): ``In`` is a padded ``KerArgP`` whose tiles overlap by ``CNN_TileOverlap`` lines, ``Out``
follows, a pooling reads ``ConvOut``, one L1 tile of the convolution's output. Regular and grouped
convolutions also iterate over chunks of output channels (``IterParSpace(D1)``, inside the tile
loop, so the output tile is stored once, every channel written): Filter, Bias, Scale and ScaleN
are tiled by chunk. Depth-wise layers and poolings keep every channel. In and Out are double
buffered when that fits the L1 budget, else single buffered (a tile holds whole lines, and a few
lines of a wide, deep layer can fill a small L1: 3 x 56 x 128 bytes for MobileNet's 3x3 layers).

Differences from the original (stated, not silent): the layouts and Filter orders are TFLite's;
depth multipliers other than 1 are accepted; the grouped convolution is one user kernel; refused
rather than approximated: ``KOP_CONV_DP``/``KOP_CONV_DWDP`` (TFLM always accumulates in 32 bits),
activations other than the clamp, pooling dilations, a PadType other than PAD_BALANCED_RIGHT,
ReluN and ForceDPconv in Ctrl; not supported yet: TILE_VER and ParallelFeatures 0 (the kernels
always share work between the cores), filters spanning more than 128 lines or columns.
"""
from __future__ import annotations

from dataclasses import dataclass

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
    IterParSpace,
    IterTiledSpace,
    K_Arg,
    K_ArgPar,
    KerArg,
    KerArgP,
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
    PadType_T,
    Tile_Orientation_T,
)
from ..errors import ModelError
from . import sq8_tflm as T
from .cnn_conv import ConvPoolGeometry, conv_pool_geometry
from .cnn_ctrl import DEFAULT
from .cnn_geometry import extent
from .sq8_infos import AT_INF_TFLM_DIM, AT_TFLM_FLAG_FLOAT_AVERAGE, tflm_infos

K = KernelOper_T
S = KernelArgSelect_T
O = Object_Type_T
L = KernelCallLocationT
D1, T0 = KernelIteratorT.KER_ITER_D1, KernelIteratorT.KER_ITER_TILE0
NOSOLUTION = AT_GraphCtrl_T.AT_KERNEL_NOSOLUTION_ERROR

CONV_OPERS = (K.KOP_CONV, K.KOP_CONV_DW, K.KOP_NONE)
POOL_OPERS = (K.KOP_NONE, K.KOP_MAXPOOL, K.KOP_AVGPOOL)
ACT_OPERS = (K.KOP_NONE, K.KOP_RELU, K.KOP_RELUN, K.KOP_RELUM, K.KOP_RELUMN)
POOL_KERNELS = {K.KOP_MAXPOOL: "KerParMaxPool_TFLM_SQ8", K.KOP_AVGPOOL: "KerParAvgPool_TFLM_SQ8"}
MAX_EXTENT = 128        # a tile's pad travels in a v4s lane (signed char)
MAX_DIM = 65535         # the kernels' unsigned short fields
PS = " * __restrict__"
MAX_LEFT_SHIFT = 31     # at_tflm_mbqm shifts a uint32 left by at most 31


# ----------------------------------------------------------------------------------------------
# Constants for the caller (the importer, the examples)


def conv_constants(in_q: T.QParams, w_q: T.FilterQParams, out_q: T.QParams, activation: str = "NONE",
                   channels: int | None = None) -> tuple:
    """(Scale int32[OutFeat], ScaleN int8[OutFeat], Infos int8[AT_INF_TFLM_DIM]) of a TFLM
    convolution: ``QuantizeMultiplier(in_scale * w_scale[c] / out_scale)`` per output channel (a
    per-tensor ``w_q`` is repeated ``channels`` times), Infos IN_ZP, OUT_ZP and the activation's
    ACT_MIN, ACT_MAX (``sq8_tflm.activation_range``)."""
    scales = w_q.scales
    if len(scales) == 1:
        if channels is None:
            raise ModelError("conv_constants: a per-tensor filter scale needs channels (the number of output "
                             "channels)", hint="pass channels=OutFeat")
        scales = scales * int(channels)
    elif channels is not None and int(channels) != len(scales):
        raise ModelError(f"conv_constants: {len(scales)} filter scales for channels={channels}",
                         hint="give one scale per output channel, or one for the tensor")
    mults, shifts = T.per_channel_multipliers(in_q.scale, scales, out_q)
    big = [int(e) for e in shifts if e > MAX_LEFT_SHIFT]
    if big:
        raise ModelError(f"conv_constants: a requantisation multiplier needs a left shift of {big[0]} (> "
                         f"{MAX_LEFT_SHIFT}): TFLM's int32 arithmetic cannot apply it",
                         hint="the scales are inconsistent (in_scale * w_scale / out_scale above 2^31)")
    lo, hi = T.activation_range(activation, out_q)
    infos = tflm_infos(in_zp=in_q.zero_point, out_zp=out_q.zero_point, act_min=lo, act_max=hi)
    return mults, shifts, infos


def pool_infos(q: T.QParams, activation: str = "NONE") -> np.ndarray:
    """The Infos of a TFLM pooling (input and output quantisation ``q``): ACT_MIN, ACT_MAX of the
    activation (the zero points too, for the record)."""
    lo, hi = T.activation_range(activation, q)
    return tflm_infos(in_zp=q.zero_point, out_zp=q.zero_point, act_min=lo, act_max=hi)


def ort_avg_pool_infos(q: T.QParams, activation: str = "NONE") -> np.ndarray:
    """The Infos of an AVERAGE_POOL_2D in onnxruntime's arithmetic (:func:`.sq8_tflm.ort_average_pool2d`):
    :func:`pool_infos` with FLAGS ``AT_TFLM_FLAG_FLOAT_AVERAGE`` and the float32 bits of the scale in MULT (in)
    and MULT2 (out)."""
    bits = int(np.array(q.scale, np.float32).view(np.int32))
    lo, hi = T.activation_range(activation, q)
    return tflm_infos(in_zp=q.zero_point, out_zp=q.zero_point, act_min=lo, act_max=hi, mult=bits, mult2=bits,
                      flags=AT_TFLM_FLAG_FLOAT_AVERAGE)


# ----------------------------------------------------------------------------------------------
# Checks


@dataclass(frozen=True)
class Layer:
    """A checked layer: features, plane, the convolution (conv None: a pooling alone), the
    pooling (pool None: none), the activation and the geometry."""

    in_feat: int
    out_feat: int
    width: int
    height: int
    group_in: int
    group_out: int
    conv: K | None          # KOP_CONV or KOP_CONV_DW
    cwin: tuple             # (Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad)
    pool: K | None          # KOP_MAXPOOL or KOP_AVGPOOL
    pwin: tuple             # (Fpx, Fpy, Spx, Spy, PoolPad)
    act: K
    g: ConvPoolGeometry

    @property
    def dw(self) -> bool:
        return self.conv == K.KOP_CONV_DW


def _check_ctrl(setup) -> None:
    chk, ctrl = setup.chk, setup.ctrl
    if ctrl.pad_type not in (DEFAULT, PadType_T.PAD_BALANCED_RIGHT):
        chk.fail(f"PadType {PadType_T(ctrl.pad_type).name} is not TFLite's SAME padding: TensorFlow puts the odd "
                 "padded pixel at the bottom/right (PAD_BALANCED_RIGHT), and this requantisation computes TFLite's "
                 "layers bit for bit", "leave PadType unset or set PAD_BALANCED_RIGHT")
    if ctrl.tile_orientation not in (DEFAULT, Tile_Orientation_T.TILE_HOR):
        chk.fail("TileOrientation TILE_VER is not supported yet with HWC feature maps (tiles are whole lines)",
                 "leave TileOrientation unset or set TILE_HOR")
    if ctrl.parallel_features not in (DEFAULT, 1):
        chk.fail("ParallelFeatures 0 is not supported yet with this requantisation (the kernels share channels or "
                 "lines between the cores)", "leave ParallelFeatures unset or set 1")
    if ctrl.force_dp_conv not in (DEFAULT, 0):
        chk.fail("ForceDPconv is not supported with this requantisation: TFLM's convolutions accumulate in 32 bits "
                 "already", "leave ForceDPconv unset")
    if ctrl.relun != DEFAULT:
        chk.fail("ReluN is not read with this requantisation: the clamp is Infos' ACT_MIN, ACT_MAX "
                 "(sq8_tflm.activation_range computes it)", "leave ReluN unset")


def _dim(chk, value, param: str) -> int:
    return chk.integer(value, param, 1, MAX_DIM)


def _window(chk, what: str, f: int, d: int, axis: str, param: str) -> None:
    if extent(f, d) > MAX_EXTENT:
        chk.fail(f"the {what} spans {extent(f, d)} {axis} ({param} = {f} with its dilation): more than "
                 f"{MAX_EXTENT} is not supported yet (a tile's padding is a signed char)",
                 f"use a {what} spanning at most {MAX_EXTENT}")


def _conv_window(chk, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad) -> tuple:
    fcx, fcy = chk.integer(Fcx, "Fcx", 1, 255), chk.integer(Fcy, "Fcy", 1, 255)
    dcx = chk.integer(Dcx, "Dcx", 1, 255, " (dilation)", "a dilation is 1 (none) or more")
    dcy = chk.integer(Dcy, "Dcy", 1, 255, " (dilation)", "a dilation is 1 (none) or more")
    scx = chk.integer(Scx, "Scx", 1, 255, " (stride)", "a stride is 1 or more")
    scy = chk.integer(Scy, "Scy", 1, 255, " (stride)", "a stride is 1 or more")
    _window(chk, "convolution filter", fcx, dcx, "columns", "Fcx")
    _window(chk, "convolution filter", fcy, dcy, "lines", "Fcy")
    return fcx, fcy, dcx, dcy, scx, scy, chk.flag(ConvPad, "ConvPad")


def _pool_window(chk, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad) -> tuple:
    fpx, fpy = chk.integer(Fpx, "Fpx", 1, 255), chk.integer(Fpy, "Fpy", 1, 255)
    dpx = chk.integer(Dpx, "Dpx", 1, 255, " (dilation)", "a dilation is 1 (none) or more")
    dpy = chk.integer(Dpy, "Dpy", 1, 255, " (dilation)", "a dilation is 1 (none) or more")
    if (dpx, dpy) != (1, 1):
        chk.fail(f"a pooling dilation (Dpx {dpx}, Dpy {dpy}) is not supported: TFLite's pooling has none",
                 "set Dpx = Dpy = 1")
    spx = chk.integer(Spx, "Spx", 1, 255, " (stride)", "a stride is 1 or more")
    spy = chk.integer(Spy, "Spy", 1, 255, " (stride)", "a stride is 1 or more")
    _window(chk, "pooling window", fpx, 1, "columns", "Fpx")
    _window(chk, "pooling window", fpy, 1, "lines", "Fpy")
    return fpx, fpy, spx, spy, chk.flag(PoolPad, "PoolPad")


def _act(chk, ActOper, param: str = "ActOper") -> K:
    oper = chk.oper(ActOper, param, tuple(K), "a KernelOper_T")
    if oper not in ACT_OPERS:
        chk.fail(f"{param}: TFLite has no fused {oper.name}: its convolutions and poolings only clamp (KOP_NONE, "
                 "KOP_RELU, KOP_RELUN, KOP_RELUM, KOP_RELUMN, all the clamp [ACT_MIN, ACT_MAX] of Infos)",
                 "generate CNN_Act_SQ8 after this layer")
    return oper


def _tflite_axis(chk, what: str, axis: str, size: int, f: int, s: int, d: int, pad: int, param: str) -> tuple:
    """TFLite's output size and padding before (top/left) along one axis (ComputeOutSize,
    ComputePaddingWithOffset), refusing an empty output."""
    padding = "SAME" if pad else "VALID"
    out = T.compute_out_size(padding, size, f, s, d)
    if out <= 0:
        chk.fail(f"the {what} (spanning {extent(f, d)}) is larger than the {axis} {size} with VALID padding: it has "
                 "no output", f"use a smaller {what}, or SAME padding ({param} = 1)")
    return out, T.compute_padding(s, d, size, f, out)[0]


def _geometry(chk, width, height, conv, cwin, pool, pwin) -> ConvPoolGeometry:
    """The layer's geometry: cnn_conv's (which also trims the padding no output reads and gives
    the tiles' overlaps), with TFLite's SAME split (PAD_BALANCED_RIGHT); its output sizes and
    leading pads are TFLite's (checked)."""
    fcx, fcy, dcx, dcy, scx, scy, cpad = cwin if conv else (1, 1, 1, 1, 1, 1, 0)
    fpx, fpy, spx, spy, ppad = pwin if pool else (1, 1, 1, 1, 0)
    wc, left_c = _tflite_axis(chk, "convolution filter", "width", width, fcx, scx, dcx, cpad, "ConvPad")
    hc, top_c = _tflite_axis(chk, "convolution filter", "height", height, fcy, scy, dcy, cpad, "ConvPad")
    wo, left_p = _tflite_axis(chk, "pooling window", "width", wc, fpx, spx, 1, ppad, "PoolPad")
    ho, top_p = _tflite_axis(chk, "pooling window", "height", hc, fpy, spy, 1, ppad, "PoolPad")
    g = conv_pool_geometry(width, height, conv or K.KOP_NONE, fcx, fcy, dcx, dcy, scx, scy, cpad,
                           pool or K.KOP_NONE, fpx, fpy, 1, 1, spx, spy, ppad, PadType_T.PAD_BALANCED_RIGHT,
                           Tile_Orientation_T.TILE_HOR)
    ours = (g.wo, g.ho, g.pad_inc[0], g.pad_inc[2], g.pad_inp[0], g.pad_inp[2])
    if ours != (wo, ho, left_c, top_c, left_p, top_p):
        raise AssertionError(f"geometry (Wo, Ho, conv left/top pad, pool left/top pad) {ours} is not TFLite's "
                             f"{(wo, ho, left_c, top_c, left_p, top_p)}")
    return g


def _features(chk, InFeat, OutFeat, conv) -> tuple:
    in_feat, out_feat = _dim(chk, InFeat, "InFeat"), _dim(chk, OutFeat, "OutFeat")
    if conv == K.KOP_CONV_DW and out_feat % in_feat:
        chk.fail(f"a depth wise convolution needs OutFeat a multiple of InFeat (TFLite's depth multiplier), got "
                 f"InFeat {in_feat} and OutFeat {out_feat}", "use KOP_CONV to mix the features")
    if conv is None and in_feat != out_feat:
        chk.fail(f"InFeat {in_feat} != OutFeat {out_feat}: a pooling keeps the features",
                 "pass the same number of features")
    return in_feat, out_feat


def _groups(chk, conv, in_feat: int, out_feat: int, groups) -> tuple:
    """(GroupIn, GroupOut) the kernel reads: the grouped generator's, checked; a regular
    convolution is one group; depth wise, each input feature is a group of M outputs."""
    if groups is None:
        return (1, out_feat // in_feat) if conv == K.KOP_CONV_DW else (in_feat, out_feat)
    group_in, group_out = groups
    if in_feat % group_in or out_feat % group_out or in_feat // group_in != out_feat // group_out:
        chk.fail(f"cannot divide InFeat {in_feat} / OutFeat {out_feat} into groups of GroupIn {group_in} / "
                 f"GroupOut {group_out}", "InFeat / GroupIn and OutFeat / GroupOut must be the same whole number")
    return group_in, group_out


# ----------------------------------------------------------------------------------------------
# The user kernels


def _lib(chk, *kernels) -> None:
    chk.declared(kernels)


def _line_pads(pads: tuple) -> tuple:
    """(0, 0, top, bottom): tiles are whole HWC lines, the kernels take the left pad as a constant."""
    return (0, 0, pads[2], pads[3])


def _infos_arg():
    return KerArg("Infos", KerArgSpace(1, T0), O.O_IN | O.O_BUFF | O.O_NTILED | O.O_CONST, 1, 1, AT_INF_TFLM_DIM,
                  0, 0, 0, "Infos")


def _pool_call(lay: Layer, src: str, loc) -> Call:
    """The pooling of src (In, or ConvOut after a convolution) into Out."""
    g = lay.g
    fpx, fpy, spx, spy, _ = lay.pwin
    return Call(POOL_KERNELS[lay.pool], loc, Bindings(14,
        K_Arg(src, S.KER_ARG_TILE),                             # In: this tile's lines, every channel
        K_Arg("Out", S.KER_ARG_TILE),                           # Out
        K_Arg("Infos", S.KER_ARG_TILE),                         # Infos: ACT_MIN, ACT_MAX
        Imm(g.wc if src == "ConvOut" else lay.width),          # W: the pooled plane's columns
        K_Arg(src, S.KER_ARG_TILE_H),                           # H: lines of this tile
        Imm(lay.out_feat),                                      # C
        Imm(g.wo),                                              # Wo
        K_Arg("Out", S.KER_ARG_TILE_H),                         # Ho: output lines of this tile
        Imm(fpx), Imm(fpy), Imm(spx), Imm(spy),                 # Fx, Fy, Sx, Sy
        Imm(g.pad_inp[0]),                                      # PadLeft
        K_Arg(src, S.KER_ARG_TILE_PAD)))                        # Pad: this tile's, [2] read


def conv_bindings(lay: Layer, src: str, tgt: str, chunk: tuple, k: str = "") -> tuple:
    """The bindings of KerParConv(DW)_TFLM_SQ8 computing tgt's tile from src's, with the constants
    Filter<k>, Bias<k>, Scale<k>, ScaleN<k>, Infos<k>; chunk: its Chunk, ChunkIndex, NChunks."""
    g = lay.g
    fcx, fcy, dcx, dcy, scx, scy, _ = lay.cwin
    return (K_Arg(src, S.KER_ARG_TILE),                         # In: this tile's lines, every channel
            K_Arg(f"Filter{k}", S.KER_ARG_TILE),                # Filter: this chunk's rows
            K_Arg(f"Bias{k}", S.KER_ARG_TILE),
            K_Arg(tgt, S.KER_ARG_TILE),                         # Out: this tile's lines
            K_Arg(f"Scale{k}", S.KER_ARG_TILE),
            K_Arg(f"ScaleN{k}", S.KER_ARG_TILE),
            K_Arg(f"Infos{k}", S.KER_ARG_TILE),
            Imm(lay.width),                                     # W
            K_Arg(src, S.KER_ARG_TILE_H),                       # H: input lines of this tile
            Imm(lay.in_feat),                                   # InFeat
            Imm(g.wc),                                          # Wo: the convolution's columns
            K_Arg(tgt, S.KER_ARG_TILE_H),                       # Ho: its lines in this tile
            Imm(lay.out_feat),                                  # OutFeat
            Imm(lay.group_in), Imm(lay.group_out),              # GroupIn, GroupOut
            *chunk,
            Imm(fcx), Imm(fcy), Imm(scx), Imm(scy), Imm(dcx), Imm(dcy),
            Imm(g.pad_inc[0]),                                  # PadLeft
            K_Arg(src, S.KER_ARG_TILE_PAD))                     # Pad: this tile's, [2] read


def every_channel(lay: Layer) -> tuple:
    """Chunk, ChunkIndex, NChunks of one call computing every output channel."""
    return Imm(lay.out_feat), Imm(0), Imm(1)


def _conv_call(lay: Layer, tgt: str, loc) -> Call:
    """The convolution of In into tgt (Out, or ConvOut before a pooling)."""
    if lay.dw:
        kernel, chunk = "KerParConvDW_TFLM_SQ8", every_channel(lay)
    else:
        kernel = "KerParConv_TFLM_SQ8"
        chunk = (K_ArgPar("Filter", S.KER_ARG_PARTILE_SIZE, D1),    # Chunk: output channels of this chunk
                 K_ArgPar("Filter", S.KER_ARG_TILEINDEX, D1),       # ChunkIndex
                 K_ArgPar("Filter", S.KER_ARG_PARTILE_DIM, D1))     # NChunks
    return Call(kernel, loc, Bindings(26, *conv_bindings(lay, "In", tgt, chunk)))


def _conv_kernel(name: str, lay: Layer, db: int):
    """The convolution's user kernel (see the module's documentation); db: O_DB to double buffer
    In and Out, 0 for one buffer each."""
    g = lay.g
    fcx, fcy = lay.cwin[0], lay.cwin[1]
    row = lay.in_feat * lay.width
    args = [KerArgP("In", KerArgSpace(1, T0), O.O_IN | db, row, lay.height, row, g.used_h,
                    _line_pads(g.pad_inc_t), _line_pads(g.pad_inc), 1, g.overlap_c, 0, g.tile_cons, "In")]
    chan = KerArgSpace(1, T0) if lay.dw else KerArgSpace(1, D1)
    chans = lay.out_feat if lay.dw else 1       # depth wise: every channel in one item
    filt = fcx * fcy * (lay.out_feat if lay.dw else lay.group_in)
    const = O.O_IN | O.O_CONST | (O.O_BUFF | O.O_NTILED if lay.dw else O.O_DB)
    args += [KerArg("Filter", chan, const, 1, 1, filt, 0, 0, 0, "Filter"),
             KerArg("Bias", chan, const, 1, 1, 4 * chans, 0, 0, 0, "Bias"),
             KerArg("Scale", chan, const, 1, 1, 4 * chans, 0, 0, 0, "Scale"),
             KerArg("ScaleN", chan, const, 1, 1, chans, 0, 0, 0, "ScaleN"),
             _infos_arg(),
             KerArg("Out", KerArgSpace(1, T0), O.O_OUT | db, g.wo * lay.out_feat, g.ho, 1, 0, 0, 0, "Out")]
    loc_conv, loc_pool = (L.LOC_LOOP, L.LOC_LOOP) if lay.dw else (L.LOC_D1, L.LOC_D1_EPILOG)
    calls = [_conv_call(lay, "ConvOut" if lay.pool else "Out", loc_conv)]
    if lay.pool:
        crow = g.wc * lay.out_feat
        args.append(KerArgP("ConvOut", KerArgSpace(1, T0), O.O_BUFF | O.O_ONETILE, crow, g.hc, crow, g.hc,
                            _line_pads(g.pad_inp), _line_pads(g.pad_inp), 1, g.overlap_p, 0, 0, ""))
        calls.append(_pool_call(lay, "ConvOut", loc_pool))
    space = (KernelIterSpace(1, IterTiledSpace(T0)) if lay.dw else
             KernelIterSpace(2, IterTiledSpace(T0), IterParSpace(D1, lay.out_feat, 1)))
    sc = "signed char" + PS
    return UserKernel(name, space, Tile_Orientation_T.TILE_HOR,
                      CArgs(7, TCArg(sc, "In"), TCArg(sc, "Filter"), TCArg("int" + PS, "Bias"), TCArg(sc, "Out"),
                            TCArg("int" + PS, "Scale"), TCArg(sc, "ScaleN"), TCArg(sc, "Infos")),
                      Calls(len(calls), *calls), KerArgs(len(args), *args))


def _pool_kernel(name: str, lay: Layer, db: int):
    """The pooling's user kernel; db as _conv_kernel."""
    g = lay.g
    row = lay.in_feat * lay.width
    args = [KerArgP("In", KerArgSpace(1, T0), O.O_IN | db, row, lay.height, row, g.used_h,
                    _line_pads(g.pad_inp), _line_pads(g.pad_inp), 1, g.overlap_p, 0, g.tile_cons, "In"),
            _infos_arg(),
            KerArg("Out", KerArgSpace(1, T0), O.O_OUT | db, g.wo * lay.out_feat, g.ho, 1, 0, 0, 0, "Out")]
    sc = "signed char" + PS
    return UserKernel(name, KernelIterSpace(1, IterTiledSpace(T0)), Tile_Orientation_T.TILE_HOR,
                      CArgs(3, TCArg(sc, "In"), TCArg(sc, "Out"), TCArg(sc, "Infos")),
                      Calls(1, _pool_call(lay, "In", L.LOC_LOOP)), KerArgs(len(args), *args))


def conv_const_dims(name: str, lay: Layer, k: str = "") -> None:
    """The dimensions of a convolution's Filter<k> (OHWI, depth wise HWC), Bias<k>, Scale<k>, ScaleN<k>."""
    fcx, fcy = lay.cwin[0], lay.cwin[1]
    if lay.dw:
        AddKernelArgDim(name, f"Filter{k}", 4, fcy, fcx, lay.out_feat, 1)
    else:
        AddKernelArgDim(name, f"Filter{k}", 5, lay.out_feat, fcy, fcx, lay.group_in, 1)
    AddKernelArgDim(name, f"Bias{k}", 2, lay.out_feat, 4)
    AddKernelArgDim(name, f"Scale{k}", 2, lay.out_feat, 4)
    AddKernelArgDim(name, f"ScaleN{k}", 2, lay.out_feat, 1)


def _infos(name: str, lay: Layer) -> None:
    """Operations, bandwidth and the arguments' dimensions (HWC) of the tiled kernel."""
    g = lay.g
    op = 0
    if lay.conv:
        fcx, fcy = lay.cwin[0], lay.cwin[1]
        op += g.wc * g.hc * lay.out_feat * fcx * fcy * (1 if lay.dw else lay.group_in)
    if lay.pool:
        op += g.wo * g.ho * lay.out_feat * lay.pwin[0] * lay.pwin[1]
    bandwidth = lay.width * lay.height * lay.in_feat + g.wo * g.ho * lay.out_feat
    AddKernelArgDim(name, "In", 4, lay.height, lay.width, lay.in_feat, 1)
    if lay.conv:
        fcx, fcy = lay.cwin[0], lay.cwin[1]
        filt = fcx * fcy * lay.out_feat * (1 if lay.dw else lay.group_in)
        bandwidth += filt + 9 * lay.out_feat
        conv_const_dims(name, lay)
    AddKernelArgDim(name, "Infos", 2, AT_INF_TFLM_DIM, 1)
    AddKernelArgDim(name, "Out", 4, g.ho, g.wo, lay.out_feat, 1)
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, op, 0)
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, bandwidth, 0)


def _solve(attempts: list):
    """Declare the user kernel with each builder in turn, AT_KERNEL_NOSOLUTION_ERROR off for all
    but the last (the script's own setting restored): double buffered In and Out first, then
    single buffered, which a whole HWC line (Width * InFeat bytes) per buffer can need in a small
    L1. Returns the tiling, or None."""
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


def _generate(setup, lay: Layer) -> int:
    name = setup.chk.name
    kernels = [POOL_KERNELS[lay.pool]] if lay.pool else []
    if lay.conv:
        kernels.append("KerParConvDW_TFLM_SQ8" if lay.dw else "KerParConv_TFLM_SQ8")
    _lib(setup.chk, *kernels)
    make = _pool_kernel if lay.conv is None else _conv_kernel
    kernel = _solve([lambda: make(name, lay, O.O_DB), lambda: make(name, lay, 0)])
    if kernel:
        _infos(name, lay)
    return 1 if kernel else 0


# ----------------------------------------------------------------------------------------------
# The generators


def _layer(setup, Bias_DataSize, InFeat, OutFeat, Width, Height, ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad,
           PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper, groups=None) -> Layer | None:
    """The checked layer; None when ConvOper is KOP_NONE (a pooling alone)."""
    chk = setup.chk
    _check_ctrl(setup)
    conv = chk.oper(ConvOper, "ConvOper", CONV_OPERS, "a convolution of this requantisation (KOP_CONV, KOP_CONV_DW, "
                    "or KOP_NONE for a pooling alone)")
    if conv == K.KOP_NONE:
        return None
    bias = chk.integer(Bias_DataSize, "Bias_DataSize")
    if bias != 4:
        chk.fail(f"Bias_DataSize {bias} is not supported with Scale_DataSize 4: TFLM's biases are int32",
                 "use Bias_DataSize 4")
    if groups is not None and conv == K.KOP_CONV_DW:
        chk.fail("ConvOper KOP_CONV_DW in a grouped convolution: the groups already say which features mix",
                 "use KOP_CONV with GroupIn = GroupOut = 1 per group, or CNN_ConvolutionPoolAct_SQ8 with KOP_CONV_DW")
    in_feat, out_feat = _features(chk, InFeat, OutFeat, conv)
    group_in, group_out = _groups(chk, conv, in_feat, out_feat, groups)
    width, height = _dim(chk, Width, "Width"), _dim(chk, Height, "Height")
    cwin = _conv_window(chk, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad)
    pool_oper = chk.oper(PoolOper, "PoolOper", POOL_OPERS, "a pooling (KOP_NONE, KOP_MAXPOOL or KOP_AVGPOOL)")
    pool = None if pool_oper == K.KOP_NONE else pool_oper
    pwin = _pool_window(chk, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad) if pool else (1, 1, 1, 1, 0)
    act = _act(chk, ActOper)
    g = _geometry(chk, width, height, conv, cwin, pool, pwin)
    return Layer(in_feat, out_feat, width, height, group_in, group_out, conv, cwin, pool, pwin, act, g)


def conv_pool_act(setup, Bias_DataSize, Scale_DataSize, InFeat, OutFeat, Width, Height, ConvOper, Fcx, Fcy, Dcx, Dcy,
                  Scx, Scy, ConvPad, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper) -> int:
    """CNN_ConvolutionPoolAct_SQ8 with TFLM's requantisation (see the module's documentation):
    1 when tiled, 0 when no tiling fits and AT_KERNEL_NOSOLUTION_ERROR is off."""
    lay = _layer(setup, Bias_DataSize, InFeat, OutFeat, Width, Height, ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy,
                 ConvPad, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper)
    if lay is None:
        if setup.chk.oper(PoolOper, "PoolOper", POOL_OPERS, "a pooling") == K.KOP_NONE:
            setup.chk.fail("ConvOper and PoolOper are both KOP_NONE: nothing to compute",
                           "generate CNN_Act_SQ8 for an activation alone")
        return pool_act(setup, InFeat, Width, Height, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper,
                        OutFeat)
    return _generate(setup, lay)


def grouped_conv_pool_act(setup, GroupIn, GroupOut, Bias_DataSize, Scale_DataSize, InFeat, OutFeat, Width, Height,
                          ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy, ConvPad, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy,
                          PoolPad, ActOper) -> int:
    """CNN_GroupedConvolutionPoolAct_SQ8 with TFLM's requantisation: one user kernel, Filter
    ``[OutFeat][Fcy][Fcx][GroupIn]`` (TFLite's grouped CONV_2D)."""
    chk = setup.chk
    groups = (chk.integer(GroupIn, "GroupIn", 1), chk.integer(GroupOut, "GroupOut", 1))
    if chk.oper(ConvOper, "ConvOper", CONV_OPERS, "a convolution") == K.KOP_NONE:
        chk.fail("ConvOper KOP_NONE in a grouped convolution: there is no convolution to group",
                 "use KOP_CONV, or CNN_PoolAct_SQ8 for a pooling alone")
    lay = _layer(setup, Bias_DataSize, InFeat, OutFeat, Width, Height, ConvOper, Fcx, Fcy, Dcx, Dcy, Scx, Scy,
                 ConvPad, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper, groups)
    return _generate(setup, lay)


def pool_act(setup, Feat, Width, Height, PoolOper, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad, ActOper,
             OutFeat=None) -> int:
    """CNN_PoolAct_SQ8 with TFLM's requantisation: ``Name(In, Out, Infos)`` (OutFeat: the
    convolution generator's, which must equal Feat)."""
    chk = setup.chk
    _check_ctrl(setup)
    feat = _dim(chk, Feat, "InFeat" if OutFeat is not None else "Feat")
    if OutFeat is not None:
        _features(chk, feat, OutFeat, None)
    pool = chk.oper(PoolOper, "PoolOper", (K.KOP_MAXPOOL, K.KOP_AVGPOOL), "a pooling (KOP_MAXPOOL or KOP_AVGPOOL)")
    width, height = _dim(chk, Width, "Width"), _dim(chk, Height, "Height")
    pwin = _pool_window(chk, Fpx, Fpy, Dpx, Dpy, Spx, Spy, PoolPad)
    act = _act(chk, ActOper)
    g = _geometry(chk, width, height, None, None, pool, pwin)
    lay = Layer(feat, feat, width, height, feat, feat, None, (1, 1, 1, 1, 1, 1, 0), pool, pwin, act, g)
    return _generate(setup, lay)
