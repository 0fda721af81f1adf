"""``CNN_Pad_SQ8`` (ours: the original has no pad generator): TensorFlow Lite's int8 PAD of an HWC
tensor, for the PADs an importer cannot fold into the SAME padding of the convolution they feed
(asymmetric pads, pads before a pooling or an element-wise operator, pads on channels).

``Name(signed char *In, signed char *Out, signed char *Infos)``: In ``[Height][Width][Feat]``, Out
``[Height + PadTop + PadBottom][Width + PadLeft + PadRight][Feat + PadFront + PadBack]``, the input
at ``[PadTop][PadLeft][PadFront]``, every other item the Infos' ``OUT_ZP`` word. TFLM's int8 PAD
(``pad.cc``) pads with the output zero point (PADV2: its constant, raw) and copies the input raw:
TFLite's converter gives PAD the quantisation of its input, so nothing is requantised.
:func:`pad_infos` builds the Infos, :func:`pad` is the numpy reference (the twin of
``autotiler.importers.reference``'s PAD, both proven against tflite-micro by
``tests/test_sq8_gen_tflm_pad.py``).

Arguments after ``Ctrl``: ``Feat, Width, Height, PadTop, PadBottom, PadLeft, PadRight`` then,
optional, ``PadFront, PadBack`` (channels before / after, default 0). Pads are >= 0; PadTop and
PadBottom at most 127 (the tile's pads reach the basic kernel in a ``v4s``), the others and every
output dimension at most 65535 (``unsigned short`` fields).

Tiling: over output lines (TILE_HOR, whole HWC lines). ``In`` is a ``KerArgP`` with PadTop /
PadBottom lines of padding, so tile ``i`` of ``Out`` is tile ``i`` of the padded input: the first
tile starts with the top pad, the last ends with the bottom pad, and the basic kernel
``KerParPad_TFLM_SQ8`` (``CNN_SQ8_TFLM_Pad.h``) writes the tile's padded lines and columns, the
cores sharing its lines. Every tile holds at least one input line (the tiler's rule for padded
arguments), so the first tile has at least PadTop + 1 output lines and the last PadBottom + 1: the
smallest L1 budget grows with the pads. In and Out are double buffered when that fits, else single
buffered. With the original's requantisation (Scale_DataSize 1, CHW) the generator refuses: not
supported yet.
"""

from __future__ import annotations

from typing import Optional, Sequence

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
    IterTiledSpace,
    K_Arg,
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
    Object_Type_T,
    Tile_Orientation_T,
)
from ..errors import ModelError
from . import sq8_tflm as T
from .cnn_ctrl import DEFAULT
from .sq8_infos import AT_INF_TFLM_DIM, tflm_infos

O = Object_Type_T
S = KernelArgSelect_T
T0 = KernelIteratorT.KER_ITER_TILE0
SC = "signed char * __restrict__"
KERNEL = "KerParPad_TFLM_SQ8"
MAX_FIELD = 65535           # unsigned short fields of KerPad_TFLM_SQ8_T
MAX_LINE_PAD = 127          # PadTop / PadBottom travel in the tile's v4s Pad
NOSOLUTION = AT_GraphCtrl_T.AT_KERNEL_NOSOLUTION_ERROR
PAD_NAMES = ("PadTop", "PadBottom", "PadLeft", "PadRight", "PadFront", "PadBack")


# ---------------------------------------------------------------------------------------------
# Infos and the numpy reference


def pad_infos(q: T.QParams, value: Optional[int] = None) -> np.ndarray:
    """The Infos of ``CNN_Pad_SQ8`` for a PAD whose input and output are quantised ``q``: IN_ZP and
    OUT_ZP the zero point; the kernel pads with OUT_ZP. ``value``: PADV2's constant (raw int8, its
    quantisation the output's, as TFLM's Prepare requires) padded instead of the zero point."""
    fill = q.zero_point if value is None else value
    if not T.INT8_MIN <= int(fill) <= T.INT8_MAX:
        raise ModelError(f"pad_infos: the padded value {int(fill)} is not an int8",
                         hint="an int8 PAD pads with its output zero point or an int8 constant")
    return tflm_infos(in_zp=q.zero_point, out_zp=int(fill))


def pad(x: np.ndarray, paddings: Sequence[Sequence[int]], q: T.QParams, value: Optional[int] = None) -> np.ndarray:
    """TFLM's int8 PAD (pad.cc): ``x`` with ``paddings[d] = (before, after)`` items added along axis d,
    each the output zero point ``q.zero_point`` (or PADV2's raw constant ``value``); the input copied."""
    x = np.asarray(x, dtype=np.int8)
    p = np.asarray(paddings, dtype=np.int64).reshape(-1, 2)
    if p.shape[0] != x.ndim:
        raise ModelError(f"pad: {p.shape[0]} (before, after) pairs for a tensor of rank {x.ndim}",
                         hint="give one pair per axis")
    if (p < 0).any():
        raise ModelError(f"pad: negative paddings {p.tolist()}", hint="TFLite's PAD only adds items")
    fill = q.zero_point if value is None else value
    return np.pad(x, p, constant_values=np.int8(fill))


# ---------------------------------------------------------------------------------------------
# The generator


def _check_ctrl(setup) -> None:
    chk, ctrl = setup.chk, setup.ctrl
    if ctrl.tile_orientation not in (DEFAULT, Tile_Orientation_T.TILE_HOR):
        chk.fail("TileOrientation TILE_VER is not supported yet with HWC feature maps (tiles are whole lines)",
                 "leave TileOrientation unset or set TILE_HOR")
    for field, value in (("PadType", ctrl.pad_type), ("ReluN", ctrl.relun)):
        if value != DEFAULT:
            chk.fail(f"{field} is not read by CNN_Pad_SQ8: the pads are its arguments, nothing is activated",
                     f"leave {field} unset")


def _pads(chk, pads) -> tuple:
    """The six pads, checked: >= 0, PadTop / PadBottom <= 127, the others <= 65535."""
    out = []
    for name, value in zip(PAD_NAMES, pads):
        v = chk.integer(value, name, 0, hint="a pad is a count of items added, 0 or more")
        if name in ("PadTop", "PadBottom") and v > MAX_LINE_PAD:
            chk.fail(f"{name} {v} is more than the kernel's {MAX_LINE_PAD}: a tile's top and bottom pads reach it "
                     "in a v4s", "pad in two layers")
        if v > MAX_FIELD:
            chk.fail(f"{name} {v} is more than the kernel's {MAX_FIELD} (an unsigned short field)", "pad in two layers")
        out.append(v)
    return tuple(out)


def _kernel(name: str, feat: int, width: int, height: int, pads: tuple, db: int):
    top, bottom, left, right, front, back = pads
    out_feat, out_w, out_h = feat + front + back, width + left + right, height + top + bottom
    row, out_row = width * feat, out_w * out_feat
    line_pads = (0, 0, top, bottom)
    kargs = KerArgs(3,
        KerArgP("In", KerArgSpace(1, T0), O.O_IN | db, row, height, row, height, line_pads, line_pads, 1, 0, 0, 0,
                "In"),
        KerArg("Out", KerArgSpace(1, T0), O.O_OUT | db, out_row, out_h, 1, 0, 0, 0, "Out"),
        KerArg("Infos", KerArgSpace(1, T0), O.O_IN | O.O_BUFF | O.O_NTILED | O.O_CONST, 1, 1, AT_INF_TFLM_DIM, 0, 0,
               0, "Infos"))
    binds = Bindings(12,
        K_Arg("In", S.KER_ARG_TILE),            # In: this tile's input lines
        K_Arg("Out", S.KER_ARG_TILE),           # Out: this tile's output lines
        K_Arg("Infos", S.KER_ARG_TILE),         # Infos: OUT_ZP
        Imm(width),                             # W
        K_Arg("In", S.KER_ARG_TILE_H),          # H: input lines of this tile
        Imm(feat),                              # Feat
        K_Arg("Out", S.KER_ARG_TILE_H),         # Ho: output lines of this tile
        Imm(left), Imm(right), Imm(front), Imm(back),
        K_Arg("In", S.KER_ARG_TILE_PAD))        # Pad: this tile's, [2] and [3] read
    return UserKernel(name, KernelIterSpace(1, IterTiledSpace(T0)), Tile_Orientation_T.TILE_HOR,
                      CArgs(3, TCArg(SC, "In"), TCArg(SC, "Out"), TCArg(SC, "Infos")),
                      Calls(1, Call(KERNEL, KernelCallLocationT.LOC_LOOP, binds)), kargs)


def _solve(attempts: list):
    """Each builder in turn, AT_KERNEL_NOSOLUTION_ERROR off for all but the last (the script's own
    setting restored): double buffered first, then single buffered. The tiling, or None."""
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


def pad_tflm(setup, Feat, Width, Height, PadTop, PadBottom, PadLeft, PadRight, PadFront=0, PadBack=0) -> int:
    """``CNN_Pad_SQ8`` with TFLM's semantics (see the module's documentation): 1 when generated, 0
    when no tiling fits and AT_KERNEL_NOSOLUTION_ERROR is off."""
    chk = setup.chk
    _check_ctrl(setup)
    feat, width, height = (chk.integer(v, p, 1, MAX_FIELD) for v, p in
                           ((Feat, "Feat"), (Width, "Width"), (Height, "Height")))
    pads = _pads(chk, (PadTop, PadBottom, PadLeft, PadRight, PadFront, PadBack))
    top, bottom, left, right, front, back = pads
    for what, size in (("lines", height + top + bottom), ("columns", width + left + right),
                       ("channels", feat + front + back)):
        if size > MAX_FIELD:
            chk.fail(f"the output has {size} {what}, more than the kernel's {MAX_FIELD}",
                     "pad less, or split the layer")
    chk.declared((KERNEL,))
    name = chk.name
    kernel = _solve([lambda: _kernel(name, feat, width, height, pads, O.O_DB),
                     lambda: _kernel(name, feat, width, height, pads, 0)])
    if not kernel:
        return 0
    out = (height + top + bottom, width + left + right, feat + front + back)
    AddKernelArgDim(name, "In", 4, height, width, feat, 1)
    AddKernelArgDim(name, "Out", 4, *out, 1)
    AddKernelArgDim(name, "Infos", 2, AT_INF_TFLM_DIM, 1)
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_OPER, 0, 0)
    AddKernelInfos(name, AT_KernelInfo_T.AT_KERINFO_BANDWIDTH, height * width * feat + out[0] * out[1] * out[2], 0)
    return 1


def pad_original(setup, *args) -> int:
    """``CNN_Pad_SQ8`` with the original's requantisation (Scale_DataSize 1, CHW): refused."""
    setup.chk.fail("CNN_Pad_SQ8 with the original's requantisation (Scale_DataSize 1, CHW feature maps) is not "
                   "supported yet", "set the Ctrl field SCALE_DATASIZE to 4 (HWC, TensorFlow Lite Micro's int8 PAD)")
    return 0
