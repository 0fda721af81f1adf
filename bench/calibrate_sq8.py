"""The SQ8 TFLM layers of the compute calibration (issue 25 item 3): single layers of every basic
kernel the imported networks run (regular, 1x1 and depth wise convolutions, linear layers,
poolings, adds, global means, softmaxes) over a spread of shapes, each checked bit for bit against
the numpy reference (``sq8_tflm``), and the terms of pulp_open's own ``Cost=`` of each of them.

``bench/calibrate.py --fit-sq8`` runs them (host simulator and GVSoC, forks profiled) at two L1
budgets and fits pulp_open's compute entries; ``--networks`` and ``--ranking`` (this module's
:func:`network_rows`, :func:`ranking_rows`) check the fitted model on the four imported networks,
node by node, and on the tiler's candidate tilings of three layers.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np

import host_harness
from autotiler import (
    KOP_AVGPOOL,
    KOP_CONV,
    KOP_CONV_DW,
    KOP_GLOBAL_AVGPOOL,
    KOP_LINEAR,
    KOP_MATADD,
    KOP_MAXPOOL,
    KOP_NONE,
    KOP_RELU,
    KOP_SOFTMAX,
    CNN_ConvolutionPoolAct_SQ8,
    CNN_GenControl_T,
    CNN_GlobalPoolAct_SQ8,
    CNN_InitGenCtrl,
    CNN_LinearAct_SQ8,
    CNN_MatAddAct_SQ8,
    CNN_PoolAct_SQ8,
    CNN_SetGenCtrl,
    CNN_SoftMax_SQ8,
    Model,
    SetGeneratedFilesNames,
    SetL1MemorySize,
    SetUsedFilesNames,
)
from autotiler.codegen import generate, write_files
from autotiler.errors import AutoTilerError
from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_gen_tflm_conv as TC
from autotiler.generators import sq8_gen_tflm_dense as TD
from autotiler.generators import sq8_gen_tflm_ops as TO
from autotiler.generators import sq8_tflm as T
from autotiler.generators.sq8_library import CNN_SQ8_HEADER, CNN_SQ8_SOURCES, LoadCNN_SQ8_Library
from autotiler.importers import verify as V
from autotiler.importers.script import import_model
from autotiler.objectives import candidates, solve_options

ROOT = Path(__file__).resolve().parents[1]
NETWORKS = ("ds_cnn_kws", "mobilenet_v1_025_96", "resnet8", "autoencoder")
BUDGETS = (48896, 16000)      # L1: pulp_open's whole L1 (the imports' budget), then a third of it
SENTINEL = -99

# ---- pulp_open's own Cost= of each SQ8 kernel: its terms (cycles on the busiest core) ----------

# A regular convolution (CNN_SQ8_Conv.c) shares blocks of 4 chunk channels between G groups of
# cores, G the largest power of two <= min(blocks, ncores) (written for 8 cores: 1 + [B >= 2] +
# 2 [B >= 4] + 4 [B >= 8], with [B >= k] = 1 - 1/(B/k + 1): the grammar has no comparison); a
# group's ncores/G cores share the tile's output pixels. Busiest core: _BLK blocks x _PIX pixels.
_B = "((Chunk + 3)/4)"
_G = f"(1 + (1 - 1/({_B}/2 + 1)) + 2*(1 - 1/({_B}/4 + 1)) + 4*(1 - 1/({_B}/8 + 1)))"
_M = f"(ncores/{_G})"
_BLK = f"(({_B} + {_G} - 1)/{_G})"
_PIX = f"((Ho*Wo + {_M} - 1)/{_M})"
# Interior pixels (every tap inside the tile: the fast block path; the others, the border, test
# each tap): along x from the left pad, along y the tile's lines (its top pad is not a scalar
# argument: a padded first tile counts up to a line too many).
_IX = "((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx)"
_IY = "((H - (Fy - 1)*Dy - 1 + Sy)/Sy)"
# The busiest member's border: the border columns of its lines, and the border lines at one end of
# the tile (a member's pixels are consecutive lines: the first member has the top ones, the last
# the bottom ones); the rest of its pixels are interior.
_BX, _BY, _LINES = f"(Wo - {_IX})", f"(Ho - {_IY})", f"((Ho + {_M} - 1)/{_M})"
_PIX_BORDER = f"({_BX}*{_LINES} + (({_BY} + {_M} - 1)/{_M})*(Wo - {_BX}))"
_PIX_IN = f"({_PIX} - {_PIX_BORDER})"
# Two forms of a block take some layers whole. The quads (at_sq8_conv_quads: 4 pixels x 4 channels):
# ungrouped 1x1 stride 1 layers (flat: every pixel interior, consecutive in the input) of filters of
# whole words and at least AT_SQ8_CONV_QUAD_MIN = 128 bytes, the core's pixels in groups of 4, the
# rest in pairs. The columns (at_sq8_conv_block4_cols): ungrouped first layers whose filter rows are
# one word (Fx GroupIn = 4) and whose filters fit AT_SQ8_CONV_COL_MAX = 128 bytes, every pixel in a
# pair, a border pixel's column built word by word. ([a == 4] = (a/4) (1/(a/5 + 1)), [a >= 128]
# = 1 - 1/(a/128 + 1), [a % 4 == 0] = 1/(a % 4 + 1), ungrouped: 1/(InFeat/GroupIn).)
_FLAT = "(1/(Fx*Fy*Sx*Sy))"             # 1 for a 1x1 stride 1 layer, else 0
_NOT_FLAT = f"(1 - {_FLAT})"
_UNGROUPED = "(1/(InFeat/GroupIn))"
_QUAD = f"{_FLAT}*{_UNGROUPED}*(1 - 1/(GroupIn/128 + 1))*(1/(GroupIn % 4 + 1))"
_QPIX = f"({_QUAD}*4*({_PIX}/4))"
_COLS = f"((Fx*GroupIn)/4)*(1/((Fx*GroupIn)/5 + 1))*{_UNGROUPED}*(1/((4*Fy)/129 + 1))"
_NOT_COLS = f"(1 - {_COLS})"
# the block path: blocks x interior pixels (not in quads); the border path (4 channels, the in-tile
# taps): blocks x border pixels; the general path (one output at a time, each tap tested): the
# Chunk % 4 channels left over from the blocks, every pixel
_BLOCK = f"{_BLK}*({_PIX_IN} - {_QPIX})*{_NOT_COLS}"
_BORDER = f"{_BLK}*{_PIX_BORDER}*{_NOT_COLS}"
_LEFT = f"(Chunk % 4)*{_PIX}"
# depth wise (CNN_SQ8_ConvDW.c), the 3x3 filter of dilation 1 (its fast path: the networks' only
# filter), three forms, tested in this order ([a <= K] = 1/(a/(K + 1) + 1)). The padded plane
# (at_dw_plane_fits): at stride S = 1 or 2 both ways, the plane of S (Wo - 1) + 3 columns and
# S (Ho - 1) + 3 lines, at stride 1 of at most AT_DW_PLANE = 256 bytes, in words with its slack of
# 4 bytes plus a column's Ho + 2 accumulators within AT_DW_PLANE_WORDS = 192; but a plane of at
# most AT_DW_TINY = 16 outputs that the channels-inner form takes (_DW_SMALL, below). The cores
# share the channels (CNN_Chunk); a channel's plane is copied into the buffer, its outputs go
# column by column.
_DW_S1 = "(1/(Sx*Sy))"
_DW_S2 = "((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))"
_DW_BYTES1, _DW_BYTES2 = "((Wo + 2)*(Ho + 2))", "((2*Wo + 1)*(2*Ho + 1))"
_DW_FITS1 = f"{_DW_S1}*(1/({_DW_BYTES1}/257 + 1))*(1/((({_DW_BYTES1} + 7)/4 + Ho + 2)/193 + 1))"
_DW_FITS2 = f"{_DW_S2}*(1/((({_DW_BYTES2} + 7)/4 + Ho + 2)/193 + 1))"
_DW_NOT_TINY = "(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1)))"
_DW_PLANE1 = f"{_DW_FITS1}*{_DW_NOT_TINY}"
_DW_PLANE2 = f"{_DW_FITS2}*{_DW_NOT_TINY}"
_DW_NOT_PLANE = f"(1 - {_DW_PLANE1} - {_DW_PLANE2})"
# The lines form: the (channel, output line) units shared evenly by the cores (CNN_Chunk),
# a core's units channel major, in segments of one channel (_DW_SEGS: at most one per Ho units,
# the busiest core's count)
_UNITS = "((OutFeat*Ho + ncores - 1)/ncores)"
_DW_SEGS = f"(({_UNITS} + Ho - 1)/Ho)"
# a channel's edge lines (the window leaves the tile: the padded first or last line of a tile;
# the tile's top pad is not a scalar argument, the lines' count is: as the convolution's _IY)
_DW_EDGE = "(Ho - (H - 3 + Sy)/Sy)"
# stride 1 with both lines' accumulators in the segment buffer (2 Wo <= AT_DW_SEG = 128): the
# inner lines two at a time (at_dw_seg2_s1), per segment the edge lines and an odd inner line alone
_DW_TWO = "(1/Sx)*(1/(Wo/65 + 1))"
_DW_SINGLE = f"({_DW_SEGS}*({_DW_EDGE} + (Ho - {_DW_EDGE}) % 2))"
_DW_PAIRS = f"({_DW_TWO}*(({_UNITS} - {_DW_SINGLE})/2))"
# its channels-inner form for a small plane (at most AT_DW_SMALL = 36 output pixels) of at least
# AT_DW_SMALL_CHUNK = 8 channels per core ([a <= 36] = 1/(a/37 + 1), [b >= 8 ncores] =
# 1 - 1/(b/(8 ncores) + 1)): the cores share the channels (CNN_Chunk), in runs of AT_DW_RUN = 32
_DW_SMALL = "(1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))"
_DW_SMALL_TAKEN = f"{_DW_NOT_PLANE}*{_DW_SMALL}"
_DW_LINES = f"{_DW_NOT_PLANE}*(1 - {_DW_SMALL})"
_DW_CHANS = "((OutFeat + ncores - 1)/ncores)"
_DW_RUNS = f"(({_DW_CHANS} + 31)/32)"
# pooling (CNN_SQ8_Pooling.c): the (output line, channel) units shared evenly by the cores
_POOL_OUT = "((Ho*C + ncores - 1)/ncores)*Wo"
# linear (CNN_SQ8_Linear.c): a core's outputs, 4 at a time (one input word feeds 4 filter words),
# the rest one by one
_LIN = "((OutDim + ncores - 1)/ncores)"
SHAPES = {
    # the block path per block and interior pixel (in pairs: at_sq8_conv_pairs_fast): the words of
    # each filter row (Fx GroupIn contiguous bytes, a row not of whole words padded to them, or its
    # tail bytes one by one), per row and pixel its loops and tests; per line its interior run's
    # set-up (but in 1x1 stride 1 layers: their pairs run across lines); the border path per block
    # and border pixel: each tap row's words (at most Fy), its rows and taps; the general path
    # (the channels left over from the blocks) per output likewise; per block and pixel the 4
    # requantisations and stores; per block of the core the filter sums and the channels' set-up,
    # the copy of the 4 filters with rows padded to whole words, and per line of an odd interior
    # run the pixel left over from its pairs (paired with the next line's first on the C path).
    # The quads per group of 4 pixels: the words of the filter (a hardware loop step each), the 16
    # requantisations. The columns per pixel: its filter rows (one word each) and its pair's
    # requantisation; per border pixel its column's words
    "KerParConv_TFLM_SQ8": [f"{_BLOCK}*Fy*((Fx*GroupIn + 3)/4)", f"{_BLOCK}*Fy*((Fx*GroupIn) % 4)",
                            f"{_BLOCK}*Fy*(1 - 1/((Fx*GroupIn) % 4 + 1))", _BLOCK,
                            f"{_BLK}*{_LINES}*{_NOT_FLAT}*{_NOT_COLS}",
                            f"{_BORDER}*Fy*((Fx*GroupIn + 3)/4)", f"{_BORDER}*Fy", f"{_BORDER}*Fy*Fx",
                            f"{_LEFT}*Fy*Fx*((GroupIn + 3)/4)", f"{_LEFT}*Fy*Fx", _LEFT, f"{_BLK}*{_PIX}",
                            f"{_BLK}*((Fy*Fx*GroupIn + 3)/4)", _BLK,
                            f"{_BLK}*Fy*((Fx*GroupIn + 3)/4)*(1 - 1/((Fx*GroupIn) % 4 + 1))",
                            f"{_BLK}*{_LINES}*({_IX} % 2)*{_NOT_FLAT}*{_NOT_COLS}",
                            f"{_BLK}*({_QPIX}/4)*(GroupIn/4)", f"{_BLK}*({_QPIX}/4)",
                            f"{_COLS}*{_BLK}*{_PIX}*Fy", f"{_COLS}*{_BLK}*{_PIX}", f"{_COLS}*{_BLK}*{_PIX_BORDER}*Fy"],
    # the lines form: per output of the line pairs (a hardware loop per input column feeding both
    # lines, the pairs' requantisation loop), of the single lines at stride 1 (edge lines, odd
    # ones, lines of more than 64 outputs: C) and at stride 2 (two outputs per hardware loop
    # step); per pair and per single line their set-up, the first columns and the right padding;
    # per segment the channel's weights and requantisation constants. The channels-inner form:
    # per channel of the core and pixel pair at stride 1 (a hardware loop per channel for the
    # sums, one for the requantisation) and at stride 2 (C), per channel and odd last pixel of a
    # line (C), per run and pixel pair or odd pixel its 12 or 15 tap bases, per channel its
    # constants. The plane form: per channel of the core and output column its loop over Ho + 2
    # window lines (a hardware loop step each), its pairs' and odd output's requantisation and
    # its set-up (one line: C); per channel the plane's copy (per byte of the tile, per line) and
    # the channel's constants; per call the buffer's padding. At stride 2 per output and column
    "KerParConvDW_TFLM_SQ8": [f"{_DW_PAIRS}*2*Wo*{_DW_LINES}", f"({_UNITS} - 2*{_DW_PAIRS})*Wo*(1/Sx)*{_DW_LINES}",
                              f"{_UNITS}*Wo*(1 - 1/Sx)*{_DW_LINES}", f"{_DW_PAIRS}*{_DW_LINES}",
                              f"({_UNITS} - 2*{_DW_PAIRS})*(1/Sx)*{_DW_LINES}", f"{_UNITS}*(1 - 1/Sx)*{_DW_LINES}",
                              f"{_DW_SEGS}*{_DW_LINES}",
                              f"{_DW_SMALL_TAKEN}*{_DW_CHANS}*Ho*(Wo/2)*(1/Sx)",
                              f"{_DW_SMALL_TAKEN}*{_DW_CHANS}*Ho*(Wo/2)*(1 - 1/Sx)",
                              f"{_DW_SMALL_TAKEN}*{_DW_CHANS}*Ho*(Wo % 2)", f"{_DW_SMALL_TAKEN}*{_DW_RUNS}*Ho*((Wo + 1)/2)",
                              f"{_DW_SMALL_TAKEN}*{_DW_CHANS}",
                              f"{_DW_PLANE1}*{_DW_CHANS}*Wo*(Ho + 2)", f"{_DW_PLANE1}*{_DW_CHANS}*Wo*(Ho/2)",
                              f"{_DW_PLANE1}*{_DW_CHANS}*Wo*(Ho % 2)", f"{_DW_PLANE1}*{_DW_CHANS}*Wo",
                              f"{_DW_PLANE1}*{_DW_CHANS}*Wo*(1/Ho)", f"{_DW_PLANE1}*{_DW_CHANS}",
                              f"{_DW_PLANE2}*{_DW_CHANS}*Wo*Ho", f"{_DW_PLANE2}*{_DW_CHANS}*Wo", f"{_DW_PLANE2}*{_DW_CHANS}",
                              f"({_DW_PLANE1} + {_DW_PLANE2})*{_DW_CHANS}*H*W",
                              f"({_DW_PLANE1} + {_DW_PLANE2})*{_DW_CHANS}*H",
                              f"({_DW_PLANE1}*{_DW_BYTES1} + {_DW_PLANE2}*{_DW_BYTES2})"],
    "KerParAvgPool_TFLM_SQ8": [f"{_POOL_OUT}*Fy*Fx", _POOL_OUT],
    "KerParMaxPool_TFLM_SQ8": [f"{_POOL_OUT}*Fy*Fx", _POOL_OUT],
    "KerParLinear_TFLM_SQ8": [f"({_LIN}/4)*(InDim/4)", f"({_LIN} % 4)*(InDim/4)", f"{_LIN}*(InDim % 4)", _LIN],
    "KerParSoftMaxItems_TFLM_SQ8": ["((Dim + ncores - 1)/ncores)"],
    "KerParGlobalSumRequant_TFLM_SQ8": ["((Feat + ncores - 1)/ncores)*Pixels", "((Feat + ncores - 1)/ncores)"],
}


# The basic kernels whose fit takes their first calls' cycles (code fetched cold) rather than the
# midpoint of the first and a warm call: in the networks' graphs a node of these always follows a
# node of another kernel (a depth wise convolution a regular one, a pooling, a mean, an add or a
# softmax whatever computed their input), so their code is cold every time. The regular
# convolution and the dense layer follow themselves too (ResNet-8's convolutions, the
# autoencoder's dense layers), as often as not: the midpoint halves the worse of the two errors.
COLD = ("KerParConvDW_TFLM_SQ8", "KerParAvgPool_TFLM_SQ8", "KerParMaxPool_TFLM_SQ8", "KerParAdd_TFLM_SQ8",
        "KerParGlobalSumRequant_TFLM_SQ8", "KerParSoftMaxItems_TFLM_SQ8")


# ---- the layers ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    """One SQ8 layer: ``declare(name)`` declares it in the current model (returns the generator's
    status), ``data(rng)`` gives its arguments and its expected output (numpy, TFLM's arithmetic).
    ``tiling``: the layer runs with the first candidate tiling whose description starts so (its
    tiling forced: the tiler, with every Cost= as written, would choose another; a network's node,
    tiled with the fitted model, often takes it), at the first budget only."""

    label: str
    declare: Callable
    data: Callable
    tiling: str = ""


def whole(layer: Layer) -> Layer:
    """``layer`` in one tile (:class:`Layer`), its label marked."""
    return forced(layer, "1 tile")


def forced(layer: Layer, tiling: str) -> Layer:
    """``layer`` with the tiling that ``tiling`` starts (:class:`Layer`), its label marked."""
    mark = "whole" if tiling == "1 tile" else tiling
    return replace(layer, label=f"{layer.label} {mark}", tiling=tiling)


def _ctrl():
    ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(ctrl)
    CNN_SetGenCtrl(ctrl, "SCALE_DATASIZE", 4)
    return ctrl


def _i8(rng, shape) -> np.ndarray:
    return rng.integers(-128, 128, shape).astype(np.int8)


def _filter_q(rng, n: int) -> T.FilterQParams:
    return T.FilterQParams(tuple(float(s) for s in rng.uniform(0.002, 0.02, n)))


def conv(h: int, w: int, cin: int, cout: int, f: tuple, s: int = 1, dw: bool = False, same: bool = True) -> Layer:
    """A TFLite CONV_2D (or DEPTHWISE_CONV_2D, multiplier 1) with a fused ReLU, filter (fy, fx)."""
    kind = "dw" if dw else "conv"
    label = f"{kind} {h}x{w}x{cin}->{cout} {f[0]}x{f[1]}/{s}{'' if same else ' valid'}"

    def declare(name):
        return CNN_ConvolutionPoolAct_SQ8(name, 0, 4, 4, cin, cout, w, h, KOP_CONV_DW if dw else KOP_CONV, f[1], f[0],
                                          1, 1, s, s, int(same), KOP_NONE, 0, 0, 0, 0, 0, 0, 0, KOP_RELU)

    def data(rng):
        x = _i8(rng, (1, h, w, cin))
        in_q, out_q, w_q = T.QParams(0.05, -3), T.QParams(1.0 if dw else 2.0, 5), _filter_q(rng, cout)
        bias = rng.integers(-(1 << 14), 1 << 14, cout).astype(np.int32)
        kw = dict(stride=(s, s), padding="SAME" if same else "VALID", activation="RELU")
        if dw:
            wt = rng.integers(-127, 128, (1, *f, cout)).astype(np.int8)
            y = T.depthwise_conv2d(x, wt, bias, in_q, w_q, out_q, depth_multiplier=1, **kw)
        else:
            wt = rng.integers(-127, 128, (cout, *f, cin)).astype(np.int8)
            y = T.conv2d(x, wt, bias, in_q, w_q, out_q, **kw)
        scale, scale_n, infos = TC.conv_constants(in_q, w_q, out_q, "RELU", cout)
        return dict(In=x, Filter=wt, Bias=bias, Scale=scale, ScaleN=scale_n, Infos=infos), y
    return Layer(label, declare, data)


def linear(n_in: int, n_out: int, in_zp: int = -128) -> Layer:
    """A FULLY_CONNECTED with a fused ReLU; its input's zero point -128 by default (a ReLU's
    output, the common case: the kernel then skips the filter sums)."""
    def declare(name):
        return CNN_LinearAct_SQ8(name, 0, 4, 4, n_in, n_out, KOP_LINEAR, KOP_RELU)

    def data(rng):
        x, wt = _i8(rng, n_in), _i8(rng, (n_out, n_in))
        bias = rng.integers(-(1 << 16), 1 << 16, n_out).astype(np.int32)
        in_q, out_q, w_q = T.QParams(0.05, in_zp), T.QParams(0.9, 5), _filter_q(rng, n_out)
        k = TD.linear_constants(in_q, w_q, out_q, "RELU", n_out)
        return (dict(In=x, Filter=wt, Bias=bias, Scale=k.scale, ScaleN=k.scale_n, Infos=k.infos),
                T.fully_connected(x, wt, bias, in_q, w_q, out_q, "RELU"))
    return Layer(f"linear {n_in}->{n_out} zp {in_zp}", declare, data)


def pool(h: int, w: int, c: int, f: tuple, s: tuple, avg: bool) -> Layer:
    def declare(name):
        return CNN_PoolAct_SQ8(name, _ctrl(), c, w, h, KOP_AVGPOOL if avg else KOP_MAXPOOL, f[1], f[0], 1, 1, s[1], s[0],
                               0, KOP_NONE)

    def data(rng):
        x, q = _i8(rng, (1, h, w, c)), T.QParams(0.05, -3)
        y = (T.average_pool2d if avg else T.max_pool2d)(x, q, q, f, s, "VALID")
        return dict(In=x, Infos=TC.pool_infos(q)), y
    return Layer(f"{'avg' if avg else 'max'}pool {h}x{w}x{c} {f[0]}x{f[1]}/{s[0]}", declare, data)


def add(h: int, w: int, c: int) -> Layer:
    def declare(name):
        return CNN_MatAddAct_SQ8(name, _ctrl(), c, w, h, KOP_MATADD, KOP_RELU)

    def data(rng):
        q1, q2, qo = T.QParams(0.05, -3), T.QParams(0.08, 7), T.QParams(0.1, -10)
        x1, x2 = _i8(rng, (h, w, c)), _i8(rng, (h, w, c))
        return dict(In1=x1, In2=x2, Infos=TD.add_infos(q1, q2, qo, "RELU")), T.add(x1, x2, q1, q2, qo, "RELU")
    return Layer(f"add {h}x{w}x{c}", declare, data)


def mean(h: int, w: int, c: int) -> Layer:
    def declare(name):
        return CNN_GlobalPoolAct_SQ8(name, _ctrl(), c, w, h, KOP_GLOBAL_AVGPOOL, KOP_NONE)

    def data(rng):
        q_in, q_out = T.QParams(0.05, -3), T.QParams(0.04, 2)
        x = _i8(rng, (1, h, w, c))
        return dict(In=x, Infos=TO.mean_infos(q_in, q_out, h * w)), T.mean_hw(x, q_in, q_out)
    return Layer(f"mean {h}x{w}x{c}", declare, data)


def softmax(dim: int) -> Layer:
    def declare(name):
        return CNN_SoftMax_SQ8(name, _ctrl(), dim, KOP_SOFTMAX)

    def data(rng):
        q = T.QParams(0.1, 3)
        x = _i8(rng, dim)
        return dict(In=x, Infos=TO.softmax_infos(q)), T.softmax(x, q, T.QParams(1 / 256, -128))
    return Layer(f"softmax {dim}", declare, data)


LAYERS = [
    conv(16, 16, 16, 16, (3, 3)), conv(12, 12, 32, 32, (3, 3)), conv(8, 8, 64, 64, (3, 3)),
    conv(24, 24, 3, 8, (3, 3), 2), conv(16, 16, 8, 16, (3, 3), 2), conv(20, 20, 1, 8, (5, 5)),
    conv(25, 10, 1, 16, (10, 4), 2), conv(16, 16, 16, 32, (1, 1)), conv(8, 8, 64, 64, (1, 1)),
    conv(6, 6, 128, 32, (1, 1)), conv(12, 12, 8, 24, (1, 1)), conv(10, 10, 12, 12, (3, 3), 1, same=False),
    conv(14, 14, 24, 20, (3, 3)), conv(10, 10, 16, 6, (3, 3)), conv(20, 20, 4, 16, (3, 3), 2),
    conv(12, 12, 48, 48, (1, 1)), conv(7, 7, 32, 10, (1, 1)), conv(30, 12, 1, 32, (8, 4), 2),
    conv(12, 12, 16, 16, (5, 5)), conv(28, 28, 16, 24, (3, 3)), conv(32, 24, 8, 16, (3, 3)),
    conv(40, 40, 8, 8, (3, 3), 2), conv(64, 64, 3, 8, (3, 3), 2), conv(24, 24, 32, 32, (1, 1)),
    conv(41, 12, 1, 64, (8, 4), 2), conv(33, 10, 1, 48, (10, 4), 2), conv(24, 24, 16, 32, (1, 1), 2),
    conv(12, 12, 32, 48, (1, 1), 2), conv(28, 28, 16, 32, (3, 3), 2), conv(14, 14, 32, 48, (3, 3), 2),
    conv(3, 3, 96, 192, (1, 1)), conv(5, 5, 48, 64, (1, 1)), conv(1, 1, 256, 100, (1, 1)), conv(21, 7, 48, 48, (1, 1)),
    conv(16, 16, 16, 16, (3, 3), dw=True), conv(8, 8, 64, 64, (3, 3), dw=True), conv(24, 24, 8, 8, (3, 3), dw=True),
    conv(16, 16, 32, 32, (3, 3), 2, dw=True), conv(24, 24, 8, 8, (3, 3), 2, dw=True),
    conv(20, 4, 48, 48, (3, 3), dw=True), conv(30, 6, 32, 32, (3, 3), dw=True), conv(40, 40, 16, 16, (3, 3), dw=True),
    conv(48, 48, 8, 8, (3, 3), 2, dw=True), conv(5, 5, 96, 96, (3, 3), dw=True), conv(4, 4, 192, 192, (3, 3), dw=True),
    conv(10, 10, 80, 80, (3, 3), 2, dw=True), conv(7, 7, 160, 160, (3, 3), dw=True),
    linear(64, 12), linear(256, 64), linear(1024, 32), linear(640, 128), linear(130, 9), linear(200, 30, -3),
    linear(96, 160), linear(48, 256), linear(160, 64), linear(24, 128), linear(8, 96),
    pool(16, 16, 16, (2, 2), (2, 2), True), pool(8, 8, 64, (8, 8), (8, 8), True), pool(12, 4, 32, (12, 4), (1, 1), True),
    pool(24, 6, 48, (24, 6), (1, 1), True), pool(24, 24, 8, (3, 3), (3, 3), True),
    pool(16, 16, 16, (2, 2), (2, 2), False), pool(12, 12, 24, (3, 3), (2, 2), False),
    pool(32, 32, 8, (2, 2), (2, 2), False), pool(6, 6, 96, (3, 3), (1, 1), False),
    add(16, 16, 16), add(8, 8, 32), add(32, 32, 8), add(6, 6, 64),
    mean(3, 3, 256), mean(6, 6, 64), mean(12, 12, 16), mean(1, 1, 512),
    softmax(12), softmax(100), softmax(35), softmax(256), softmax(1000),
    # appended (a --refit of an earlier run finds its layers at their indices)
    conv(30, 30, 3, 16, (3, 3)), conv(80, 80, 3, 8, (3, 3), 2), conv(18, 18, 24, 64, (3, 3), 2),
    conv(5, 5, 160, 160, (3, 3), dw=True), conv(6, 6, 144, 144, (3, 3), dw=True),
    conv(8, 8, 128, 128, (3, 3), 2, dw=True), conv(4, 4, 256, 256, (3, 3), dw=True),
    # appended: the layers of the four networks (their convolutions, depth wise ones and dense
    # layers; a layer already above is not repeated), then neighbours of their paths (a depth wise
    # line longer than 64 outputs: single lines at stride 1)
    conv(49, 10, 1, 64, (10, 4), 2), conv(25, 5, 64, 64, (1, 1)), conv(25, 5, 64, 64, (3, 3), dw=True),
    conv(96, 96, 3, 8, (3, 3), 2), conv(48, 48, 8, 8, (3, 3), dw=True), conv(48, 48, 8, 16, (1, 1)),
    conv(48, 48, 16, 16, (3, 3), 2, dw=True), conv(24, 24, 16, 32, (1, 1)), conv(24, 24, 32, 32, (3, 3), dw=True),
    conv(24, 24, 32, 32, (3, 3), 2, dw=True), conv(12, 12, 32, 64, (1, 1)), conv(12, 12, 64, 64, (3, 3), dw=True),
    conv(12, 12, 64, 64, (1, 1)), conv(12, 12, 64, 64, (3, 3), 2, dw=True), conv(6, 6, 64, 128, (1, 1)),
    conv(6, 6, 128, 128, (3, 3), dw=True), conv(6, 6, 128, 128, (1, 1)), conv(6, 6, 128, 128, (3, 3), 2, dw=True),
    conv(3, 3, 128, 256, (1, 1)), conv(3, 3, 256, 256, (3, 3), dw=True), conv(3, 3, 256, 256, (1, 1)),
    conv(1, 1, 256, 2, (1, 1)),
    conv(32, 32, 3, 16, (3, 3)), conv(32, 32, 16, 16, (3, 3)), conv(32, 32, 16, 32, (1, 1), 2, same=False),
    conv(32, 32, 16, 32, (3, 3), 2), conv(16, 16, 32, 32, (3, 3)), conv(16, 16, 32, 64, (3, 3), 2),
    conv(16, 16, 32, 64, (1, 1), 2, same=False),
    linear(64, 10), linear(640, 128, 0), linear(128, 128), linear(128, 8), linear(8, 128), linear(128, 640),
    pool(25, 5, 64, (25, 5), (1, 1), True), add(32, 32, 16), softmax(10), softmax(2),
    conv(12, 72, 8, 8, (3, 3), dw=True), conv(7, 5, 64, 64, (3, 3), dw=True), conv(10, 10, 96, 96, (3, 3), 2, dw=True),
    conv(64, 64, 3, 8, (3, 3), 2, same=False), conv(48, 48, 3, 16, (3, 3), 2),
    # more of the paths only one layer above took (held out, it was predicted from none): a depth
    # wise line of more than 64 outputs, chunks with channels left over from the blocks of 4,
    # planes of one or two pixels, a 5x5 first layer, dense layers of inputs not a multiple of 4
    conv(8, 100, 16, 16, (3, 3), dw=True), conv(12, 12, 16, 10, (3, 3)), conv(8, 8, 32, 7, (1, 1)),
    conv(1, 1, 128, 64, (1, 1)), conv(2, 1, 256, 48, (1, 1)), conv(24, 24, 1, 8, (5, 5)),
    linear(66, 16), linear(257, 40),
    # depth wise layers on the lines form (planes too large, lines shorter than bands take), strides 1 and 2
    conv(20, 20, 16, 16, (3, 3), dw=True), conv(28, 28, 24, 24, (3, 3), dw=True),
    conv(40, 40, 16, 16, (3, 3), 2, dw=True), conv(32, 32, 32, 32, (3, 3), 2, dw=True),
    conv(64, 64, 8, 8, (3, 3), 2, dw=True),
    # the networks' layers in one tile, as their nodes often are (the tiler cuts them here: a tile's
    # lines decide the depth wise form, a plane or lines)
    *[whole(c) for c in (conv(25, 5, 64, 64, (3, 3), dw=True), conv(48, 48, 8, 8, (3, 3), dw=True),
                         conv(48, 48, 16, 16, (3, 3), 2, dw=True), conv(24, 24, 32, 32, (3, 3), dw=True),
                         conv(24, 24, 32, 32, (3, 3), 2, dw=True), conv(12, 12, 64, 64, (3, 3), dw=True),
                         conv(12, 12, 64, 64, (3, 3), 2, dw=True), conv(6, 6, 128, 128, (3, 3), dw=True),
                         conv(20, 20, 16, 16, (3, 3), dw=True), conv(96, 96, 3, 8, (3, 3), 2),
                         conv(32, 32, 16, 16, (3, 3)), conv(16, 16, 32, 32, (3, 3)), conv(32, 32, 3, 16, (3, 3)),
                         conv(24, 24, 32, 32, (1, 1)), conv(48, 48, 8, 16, (1, 1)))],
    # MobileNet's depth wise layers in the tiles their nodes took with an earlier fit (the fit
    # predicted them fast: the tiler picks what the model underrates)
    forced(conv(48, 48, 8, 8, (3, 3), dw=True), "2 tiles of 29 lines"),
    forced(conv(48, 48, 16, 16, (3, 3), 2, dw=True), "4 tiles of 13 lines"),
    forced(conv(24, 24, 32, 32, (3, 3), dw=True), "4 tiles of 9 lines"),
    forced(conv(48, 48, 8, 8, (3, 3), dw=True), "4 tiles of 14 lines"),
]


@dataclass
class Run:
    """A layer's call (bench/calibrate.py's Call: case, kernel, budget, args, expected)."""

    case: str
    kernel: str
    budget: int
    args: dict
    expected: dict
    label: str = ""


KERNELS = "autotiler/generators/cnn_kernels"
GAP_H = "host_harness/runtime/Gap.h"


def kernel_sources(rev, work: Path) -> tuple:
    """(SQ8 sources, include dirs) of the basic kernels: the working tree's (``rev`` None), or
    those of git revision ``rev`` (with its Gap.h, found first: the sources include it from their
    own directory), exported to ``work``: the calibration then measures committed code while
    others edit the tree."""
    if rev is None:
        return list(CNN_SQ8_SOURCES), [CNN_KERNELS_DIR]
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, KERNELS, GAP_H], capture_output=True,
                          check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(work, filter="data")
    kernels = work / KERNELS
    (kernels / "Gap.h").write_bytes((work / GAP_H).read_bytes())
    return [kernels / Path(s).name for s in CNN_SQ8_SOURCES], [kernels]


def revision(rev) -> str:
    """The commit the kernels are measured at (``rev`` or HEAD), and whether the tree differs."""
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", rev or "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    if rev is not None:
        return head
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", KERNELS, GAP_H], capture_output=True,
                           text=True, check=True).stdout.strip()
    return head + (" + uncommitted edits" if dirty else "")


def kind(layer: Layer) -> str:
    """The layer's kind, the first word of its label: one of KINDS."""
    return layer.label.split()[0]


KINDS = ("conv", "dw", "linear", "avgpool", "maxpool", "add", "mean", "softmax")


def _force_tiling(m, name: str, tiling: str) -> bool:
    """Force user kernel ``name``'s tiling to the full grid's first candidate whose description
    starts with ``tiling``; False, and the kernel left out of the model, when there is none."""
    uk = m.kernels[name]
    for t in candidates(uk, replace(solve_options(m, uk), objective="time_exhaustive")):
        if t.describe().startswith(tiling):
            m.tilings[name] = t
            return True
    del m.kernels[name], m.tilings[name]
    return False


def sq8_case(plat, budget: int, rng, layers=None, sources=None, kinds=None) -> tuple:
    """(model, files, calls, sources, include dirs) of the SQ8 layers at L1 ``budget``, for
    bench/calibrate.py's run_case; a layer no tiling fits at that budget is left out.
    ``sources``: :func:`kernel_sources`' (default: the working tree's); ``kinds``: only the
    layers of these kinds (:func:`kind`), named by their index in ``layers`` all the same (a
    --refit finds them)."""
    layers = LAYERS if layers is None else layers
    declared = []
    with Model(plat) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        SetGeneratedFilesNames("Sq8Layers.c", "Sq8Layers.h")
        LoadCNN_SQ8_Library()
        SetL1MemorySize(min(budget, plat.l1_size))
        for i, layer in enumerate(layers):
            if (kinds is not None and kind(layer) not in kinds) or (layer.tiling and budget != BUDGETS[0]):
                continue
            name = f"L{i}_{budget}"
            try:
                if layer.declare(name) and (not layer.tiling or _force_tiling(m, name, layer.tiling)):
                    declared.append((name, layer))
            except AutoTilerError:
                pass
        files = generate(m)
    calls = []
    for name, layer in declared:
        args, expected = layer.data(rng)
        flat = {k: np.ascontiguousarray(v).reshape(-1) for k, v in args.items()}
        expected = np.ascontiguousarray(expected, dtype=np.int8).reshape(-1)
        flat["Out"] = np.full(expected.size, SENTINEL, np.int8)
        calls.append(Run("sq8", name, budget, flat, {"Out": expected}, layer.label))
    srcs, incs = sources or (list(CNN_SQ8_SOURCES), [CNN_KERNELS_DIR])
    return m, files, calls, srcs, incs


# ---- the networks, node by node -------------------------------------------------------------------


def _graph_run(prog, d, x: dict) -> tuple:
    """(outputs {name: array}, counters) of one Construct + run + Destruct of the import's graph."""
    outs, counters = V.run_graph(prog, d, [x])
    return outs[0], counters


def network_rows(name: str, work: Path, sources=None, fusion: str = "none") -> dict:
    """Import tests/models/import/``name``.tflite for pulp_open (``fusion``: the importer's mode;
    "none", one user kernel per layer, by default: the per-node check of issue 25), generate, run
    the graph on the host simulator and on GVSoC on one input (``sources``: :func:`kernel_sources`',
    default the working tree's), both checked against tflite-micro: per node the predicted (host
    simulator) and GVSoC cycles. ``{"network", "fusion", "nodes": [...], "total", "equal"}``."""
    imp, gen = work / "imp", work / "gen"
    import_model(str(ROOT / "tests" / "models" / "import" / f"{name}.tflite"), str(imp), name="net",
                 platform="pulp_open", check=False, fusion=fusion)
    d = V.read_import_dir(imp)
    V.generate(d, str(gen))
    runs = V.make_inputs(d, 1, {})
    want = V.run_source(d, runs)
    srcs, incs = sources or (list(CNN_SQ8_SOURCES), [CNN_KERNELS_DIR])
    builds = {b: host_harness.build(str(gen), sources=srcs, include_dirs=incs, platform="pulp_open", backend=b)
              for b in ("host", "gvsoc")}
    try:
        (y_host, host), (y_gv, gv) = (_graph_run(builds[b], d, runs[0]) for b in ("host", "gvsoc"))
    finally:
        builds["gvsoc"].close()
    equal = all(V.compare(p, [want[0][p.name]], [y[p.name]]).equal == int(np.prod(p.shape))
                for p in d.outputs for y in (y_host, y_gv))
    result = {"network": name, "fusion": fusion, "nodes": [], "equal": bool(equal), "error": None}
    for h, g in zip(host["nodes"], gv["nodes"]):
        result["nodes"].append({"node": h["name"], "predicted": h["cycles"], "gvsoc": g["cycles"],
                                "compute": h["compute_cycles"], "dma": h["dma_busy_cycles"]["cluster"],
                                "err": h["cycles"] / g["cycles"] - 1})
    result["total"] = {"predicted": host["cycles"], "gvsoc": gv["cycles"], "err": host["cycles"] / gv["cycles"] - 1}
    return result


def format_networks(results: list) -> str:
    lines = []
    for r in results:
        lines.append(f"\n{r['network']}" + (f": not run on GVSoC ({r['error']})" if r["error"] else ""))
        if r["error"]:
            continue
        lines.append(f"{'node':28} {'predicted':>10} {'gvsoc':>10} {'err%':>7}")
        for n in r["nodes"]:
            lines.append(f"{n['node']:28} {n['predicted']:>10} {n['gvsoc']:>10} {100 * n['err']:>+7.1f}")
        t = r["total"]
        lines.append(f"{'total (runner)':28} {t['predicted']:>10} {t['gvsoc']:>10} {100 * t['err']:>+7.1f}"
                     f"   outputs {'equal to tflite-micro' if r['equal'] else 'DIFFER from tflite-micro'}")
    return "\n".join(lines)


def networks_markdown(results: list) -> str:
    """The per-node tables (bench/results/calibration_networks.md)."""
    lines = ["# Predicted (host simulator, pulp_open) vs GVSoC cycles per node", "",
             "`bench/calibrate.py --networks`; each network imported with fusion "
             f"\"{results[0].get('fusion', 'fit') if results else 'none'}\" (one user kernel per layer when "
             "\"none\"); err% = predicted / GVSoC - 1.", ""]
    for r in results:
        lines.append(f"## {r['network']}")
        lines.append("")
        if r["error"]:
            lines += [f"Not run on GVSoC: {r['error']}", ""]
            continue
        lines += ["| node | predicted | GVSoC | err% |", "|------|----------:|------:|-----:|"]
        for n in r["nodes"]:
            lines.append(f"| {n['node']} | {n['predicted']} | {n['gvsoc']} | {100 * n['err']:+.1f} |")
        t = r["total"]
        within = sum(abs(n["err"]) <= 0.15 for n in r["nodes"])
        lines += [f"| runner | {t['predicted']} | {t['gvsoc']} | {100 * t['err']:+.1f} |", "",
                  f"{within}/{len(r['nodes'])} nodes within 15 %; the outputs of both "
                  f"{'equal' if r['equal'] else 'DIFFER from'} tflite-micro's.", ""]
    return "\n".join(lines)


# ---- the tiler's candidates against GVSoC --------------------------------------------------------


RANKED = {   # label: (layer, L1 budget)
    "1x1 conv 24x24x32->64": (conv(24, 24, 32, 64, (1, 1)), 20000),
    "3x3 conv 24x24x16->32": (conv(24, 24, 16, 32, (3, 3)), 20000),
    "3x3 depth wise 48x48x32": (conv(48, 48, 32, 32, (3, 3), dw=True), 44000),
}


def _spread(ranked: list, k: int) -> list:
    """``k`` candidates of a list sorted by prediction: the first 3, then evenly over the rest."""
    if len(ranked) <= k:
        return list(range(len(ranked)))
    head = [0, 1, 2]
    rest = np.linspace(3, len(ranked) - 1, k - 3).round().astype(int).tolist()
    return sorted(set(head + rest))


def ranking_rows(plat, work: Path, per_layer: int = 10, sources=None) -> list:
    """Per layer of RANKED: ``per_layer`` of the tiler's candidate tilings (the full grid's, each
    scheduled and predicted: the best three, then evenly over the rest) and the tiling the time
    objective chose, forced one at a time and run on GVSoC (bit-exact with numpy):
    [{"layer", "chosen", "rows": [{"tiling", "predicted", "gvsoc"}]}]."""
    out = []
    rng = np.random.default_rng(1)
    for label, (layer, budget) in RANKED.items():
        with Model(plat) as m:
            SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
            SetGeneratedFilesNames("Ranked.c", "Ranked.h")
            LoadCNN_SQ8_Library()
            SetL1MemorySize(budget)
            layer.declare("R")
            uk, chosen = m.kernels["R"], m.tilings["R"]
            # every candidate of the full grid, scheduled and predicted (the time objective predicts
            # only its best estimates exactly), one per distinct tiling
            every = candidates(uk, replace(solve_options(m, uk), objective="time_exhaustive"))
            cands = sorted({t.describe(): t for t in every}.values(), key=lambda t: t.predicted.cycles)
            picks = [cands[i] for i in _spread(cands, per_layer)]
            if all(t.describe() != chosen.describe() for t in picks):
                picks.insert(0, chosen)
            rows = []
            for j, t in enumerate(picks):
                m.tilings["R"] = t
                files = generate(m)
                gen = work / f"rank{len(out)}_{j}"
                write_files(files, str(gen))
                rows.append({"tiling": t.describe(), "predicted": t.predicted.cycles, "gen": gen,
                             "chosen": t.describe() == chosen.describe()})
        args, expected = layer.data(rng)
        flat = {k: np.ascontiguousarray(v).reshape(-1) for k, v in args.items()}
        expected = np.ascontiguousarray(expected, np.int8).reshape(-1)
        srcs, incs = sources or (list(CNN_SQ8_SOURCES), [CNN_KERNELS_DIR])
        for r in rows:
            prog = host_harness.build(r.pop("gen"), sources=srcs, include_dirs=incs, platform=plat, backend="gvsoc")
            try:
                o = np.full(expected.size, SENTINEL, np.int8)
                r["gvsoc"] = prog.call("R", Out=o, **flat)["cycles"]
            finally:
                prog.close()
            if not np.array_equal(o, expected):
                raise RuntimeError(f"{label}, tiling {r['tiling']}: GVSoC's output differs from numpy")
        out.append({"layer": label, "budget": budget, "candidates": len(cands), "rows": rows})
    return out


def ranking_summary(entry: dict) -> dict:
    """Spearman's rho of predicted vs GVSoC over the run candidates, the pairwise agreement, and
    how far the tiler's choice is from GVSoC's best (0: it is the best)."""
    p = np.array([r["predicted"] for r in entry["rows"]], float)
    g = np.array([r["gvsoc"] for r in entry["rows"]], float)
    rank_p, rank_g = p.argsort().argsort(), g.argsort().argsort()
    rho = float(np.corrcoef(rank_p, rank_g)[0, 1]) if len(p) > 2 else 1.0
    pairs = [(i, j) for i in range(len(p)) for j in range(i + 1, len(p))]
    agree = sum((p[i] - p[j]) * (g[i] - g[j]) >= 0 for i, j in pairs)
    chosen = [r["gvsoc"] for r in entry["rows"] if r["chosen"]]
    return {"spearman": rho, "pairs": len(pairs), "agree": int(agree),
            "chosen_vs_best": (chosen[0] / g.min() - 1) if chosen else None,
            "worst_err": float(np.max(np.abs(p / g - 1)))}


def ranking_markdown(entries: list) -> str:
    """The ranking tables (bench/results/calibration_ranking.md)."""
    lines = ["# The tiler's candidate tilings: predicted vs GVSoC", "",
             "`bench/calibrate.py --ranking`; * the tiling the time objective chose; err% = predicted / GVSoC - 1.", ""]
    for e in entries:
        s = ranking_summary(e)
        lines += [f"## {e['layer']} (L1 {e['budget']} B, {e['candidates']} candidates, {len(e['rows'])} run)", "",
                  f"Spearman {s['spearman']:.2f}, pairs in the same order {s['agree']}/{s['pairs']}, the chosen "
                  f"tiling {100 * s['chosen_vs_best']:+.1f} % from GVSoC's best.", "",
                  "| tiling | predicted | GVSoC | err% |", "|--------|----------:|------:|-----:|"]
        for r in e["rows"]:
            lines.append(f"| {r['tiling']}{' *' if r['chosen'] else ''} | {r['predicted']} | {r['gvsoc']} | "
                         f"{100 * (r['predicted'] / r['gvsoc'] - 1):+.1f} |")
        lines.append("")
    return "\n".join(lines)


def format_ranking(entries: list) -> str:
    lines = []
    for e in entries:
        s = ranking_summary(e)
        lines.append(f"\n{e['layer']} (L1 {e['budget']} B, {e['candidates']} candidates, {len(e['rows'])} run): "
                     f"Spearman {s['spearman']:.2f}, pairs {s['agree']}/{s['pairs']}, chosen vs GVSoC's best "
                     f"{100 * s['chosen_vs_best']:+.1f}%")
        lines.append(f"  {'tiling':70} {'predicted':>10} {'gvsoc':>10} {'err%':>7}")
        for r in e["rows"]:
            mark = " *" if r["chosen"] else ""
            lines.append(f"  {r['tiling'][:70]:70} {r['predicted']:>10} {r['gvsoc']:>10} "
                         f"{100 * (r['predicted'] / r['gvsoc'] - 1):>+7.1f}{mark}")
    return "\n".join(lines)


__all__ = ["SHAPES", "COLD", "LAYERS", "BUDGETS", "NETWORKS", "KINDS", "kind", "sq8_case", "network_rows", "format_networks",
           "networks_markdown", "ranking_rows", "ranking_summary", "format_ranking"]
