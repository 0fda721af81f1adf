"""The CNN generators' geometry helpers, with the original's names and arithmetic
(``CNN_Generator_Util.c``): output dimensions, padding, tile overlaps, used input extents, and
the output bounds of the activations.

Conventions: a filter of ``F`` taps with dilation ``D`` spans ``D*(F-1)+1`` items (its *extent*);
pads are ``(left, right, top, bottom)`` tuples (the original's ``v4s``).
"""

from __future__ import annotations

from math import gcd

from ..constants import KernelOper_T, PadType_T, Tile_Orientation_T

K = KernelOper_T


def extent(f: int, d: int) -> int:
    """Items one filter of f taps, dilation d, spans."""
    return d * (f - 1) + 1


def CNN_Scm(a: int, b: int) -> int:
    """Smallest common multiple."""
    return a * b // gcd(a, b)


def CNN_UsedInputDimension(Dim: int, F: int, S: int, D: int, Pad: int) -> int:
    """Input items that Dim outputs of a filter F, stride S, dilation D read, Pad being the sum of
    both sides' padding."""
    return (Dim - 1) * S + extent(F, D) - Pad


def CNN_TotalPaddingValue(Dim: int, F: int, S: int, D: int) -> int:
    """Padding (both sides together) giving ceil(Dim / S) outputs ("same" padding)."""
    if Dim % S == 0:
        return max(extent(F, D) - S, 0)
    return max(extent(F, D) - Dim % S, 0)


def CNN_EdgePaddingValue(PadType: int, Padw: int, Padh: int) -> tuple:
    """(left, right, top, bottom) of total paddings Padw x Padh: PAD_LEFT and PAD_RIGHT put all
    of it on one side, the balanced types the odd item on the left/top (BALANCED_LEFT) or the
    right/bottom (BALANCED_RIGHT)."""
    if PadType == PadType_T.PAD_LEFT:
        return (Padw, 0, Padh, 0)
    if PadType == PadType_T.PAD_RIGHT:
        return (0, Padw, 0, Padh)
    if PadType == PadType_T.PAD_BALANCED_LEFT:
        return (Padw - Padw // 2, Padw // 2, Padh - Padh // 2, Padh // 2)
    if PadType == PadType_T.PAD_BALANCED_RIGHT:
        return (Padw // 2, Padw - Padw // 2, Padh // 2, Padh - Padh // 2)
    raise ValueError(f"unknown padding type {PadType!r}")


def CNN_LayerOutputDim(Width: int, Height: int, ConvOper, Fcx: int, Fcy: int, Dcx: int, Dcy: int, Scx: int, Scy: int,
                       ConvPad: int, PoolOper, Fpx: int, Fpy: int, Dpx: int, Dpy: int, Spx: int, Spy: int,
                       PoolPad: int) -> tuple:
    """(Wc, Hc, Wo, Ho, PadCw, PadCh, PadPw, PadPh): the convolution's output (Width x Height when
    there is no convolution), the pooling's output (the convolution's without pooling), and the
    total paddings of each."""
    if ConvOper == K.KOP_NONE:
        Fcx = Dcx = Scx = Fcy = Dcy = Scy = 1
    if PoolOper == K.KOP_NONE:
        Fpx = Dpx = Spx = Fpy = Dpy = Spy = 1
    pcw = pch = ppw = pph = 0
    if ConvOper != K.KOP_NONE and ConvPad:
        pcw, pch = CNN_TotalPaddingValue(Width, Fcx, Scx, Dcx), CNN_TotalPaddingValue(Height, Fcy, Scy, Dcy)
    wc = (Width - extent(Fcx, Dcx) + pcw) // Scx + 1
    hc = (Height - extent(Fcy, Dcy) + pch) // Scy + 1
    if PoolOper != K.KOP_NONE and PoolPad:
        ppw, pph = CNN_TotalPaddingValue(wc, Fpx, Spx, Dpx), CNN_TotalPaddingValue(hc, Fpy, Spy, Dpy)
    wo = (wc - extent(Fpx, Dpx) + ppw) // Spx + 1
    ho = (hc - extent(Fpy, Dpy) + pph) // Spy + 1
    return wc, hc, wo, ho, pcw, pch, ppw, pph


def CNN_TileOverlap(TileOrientation, Fcx: int, Fcy: int, Dcx: int, Dcy: int, Scx: int, Scy: int,
                    Fpx: int = 1, Fpy: int = 1, Dpx: int = 1, Dpy: int = 1, Spx: int = 1, Spy: int = 1) -> tuple:
    """(OverlapC, OverlapP) along the tiled direction: lines (columns) shared by two adjacent
    input tiles of the convolution (followed by the pooling), and by two adjacent tiles of the
    convolution's output that the pooling reads."""
    hor = TileOrientation == Tile_Orientation_T.TILE_HOR
    f, d, s = (Fcy, Dcy, Scy) if hor else (Fcx, Dcx, Scx)
    fp, dp, sp = (Fpy, Dpy, Spy) if hor else (Fpx, Dpx, Spx)
    overlap_p = extent(fp, dp) - sp
    return extent(f, d) + s * (extent(fp, dp) - sp - 1), overlap_p


def CNN_SetUpperLowerBounds(ReLUOper, DataSize: int, DoReLU: bool, ReluN: int, Precision: int):
    """(LB, UB) the results are clipped to, or None when ReLUN's bound does not fit the
    container: the container's range; [0, max] with KOP_RELU; [0, ReluN << Precision] with
    KOP_RELUN. Other activations get (0, 0), as the original (the generators then pass the
    output Q in UB where the kernel wants it)."""
    bits = 8 * DataSize - 1
    lo, hi = -(1 << bits), (1 << bits) - 1
    if not DoReLU:
        return lo, hi
    if ReLUOper == K.KOP_RELU:
        return 0, hi
    if ReLUOper == K.KOP_RELUN:
        ub = ReluN << Precision
        return (0, ub) if 0 <= ub <= hi else None
    return 0, 0


def CNN_EncodePoolOperation(PoolOper, ReLUOper) -> int:
    """The pooling kernels' Oper: bit 1 average (else max), bit 0 clip to [LB, UB] (KOP_RELU and
    KOP_RELUN; the original sets it for KOP_RELU only, which leaves KOP_RELUN unclipped)."""
    avg = 1 if PoolOper in (K.KOP_AVGPOOL, K.KOP_GLOBAL_AVGPOOL) else 0
    relu = 1 if ReLUOper in (K.KOP_RELU, K.KOP_RELUN) else 0
    return (avg << 1) | relu


__all__ = ["CNN_Scm", "CNN_UsedInputDimension", "CNN_TotalPaddingValue", "CNN_EdgePaddingValue",
           "CNN_LayerOutputDim", "CNN_TileOverlap", "CNN_SetUpperLowerBounds", "CNN_EncodePoolOperation", "extent"]
