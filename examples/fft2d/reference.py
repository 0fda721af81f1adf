"""Numpy reference of the 2D FFT example (integer exact), and its twiddle / swap tables.

Interface used by the generic example tests:

* ``KERNEL``: the generated C function to call, the group
  ``FFT2D_128(In, Out, Twiddles, SwapTable)``.
* ``SOURCES``: the hand-written basic kernels to compile with the generated code.
* ``make_args(rng, **sizes)``: every C argument of the group, in C order (it also builds the
  twiddle and bit-reversal tables, which are inputs of the generated code).
* ``expected(args)``: expected final contents of each output array.

Arithmetic (identical to FFT2DBasicKernels.c, see its header):

* Image2Complex: I = pixel << 7, Q = 0 (Q15).
* Radix-2 decimation in frequency, each stage scaled by 1/2 with a floor shift:
  ``a' = (a + b) >> 1``, ``d = (a - b) >> 1`` (per component), then
  ``b' = d * w`` with ``re = (d.I*C - d.Q*S + 2**14) >> 15`` and
  ``im = (d.I*S + d.Q*C + 2**14) >> 15`` (round half up), where ``w = (C, S)`` is the Q15
  twiddle ``(cos(2*pi*k/N), -sin(2*pi*k/N))`` rounded to nearest and clipped to int16.
* Outputs are put back in natural order with the bit-reversal table.

So Out ~= fft2(In) * 2**7 / Dim**2 (each of the 2*log2(Dim) stages halves); ``check_accuracy``
compares with numpy's floating point FFT.
"""

import numpy as np

KERNEL = "FFT2D_128"
SOURCES = ["FFT2DBasicKernels.c"]
SENTINEL = 0x5A5A5A5A          # pre-fills Out, so an unwritten sample is caught
SIZES = {"Dim": 128}


def twiddles(dim):
    """int16 [dim/2][2]: Q15 (cos, -sin) of exp(-2*pi*i*k/dim), k = 0 .. dim/2-1."""
    k = np.arange(dim // 2)
    ang = 2.0 * np.pi * k / dim
    tw = np.stack([np.cos(ang), -np.sin(ang)], axis=1)
    return np.clip(np.round(tw * 32768.0), -32768, 32767).astype(np.int16)


def swap_table(dim):
    """int16 [dim]: the bit reversal of each index over log2(dim) bits."""
    bits = dim.bit_length() - 1
    idx = np.arange(dim)
    rev = np.zeros(dim, dtype=np.int64)
    for b in range(bits):
        rev |= ((idx >> b) & 1) << (bits - 1 - b)
    return rev.astype(np.int16)


def make_args(rng, Dim=128):
    """C arguments of the group:

    * In: uint8 [Dim][Dim] image;
    * Out: int32 [Dim][Dim], pre-filled with the sentinel; each item is one complex sample
      (v2s: I in the low half-word, Q in the high one, little endian);
    * Twiddles: int16 [Dim/2][2] (``twiddles``);
    * SwapTable: int16 [Dim] (``swap_table``).
    """
    if Dim < 2 or Dim & (Dim - 1):
        raise ValueError("Dim must be a power of 2, got %d" % Dim)
    return {
        "In": rng.integers(0, 256, size=(Dim, Dim), dtype=np.uint8),
        "Out": np.full((Dim, Dim), SENTINEL, dtype=np.int32),
        "Twiddles": twiddles(Dim),
        "SwapTable": swap_table(Dim),
    }


def _wrap16(x):
    """C conversion of an int to short (two's complement wrap)."""
    return ((x + 32768) & 0xFFFF) - 32768


def fft_dif_q15(re, im, tw, swap):
    """Fixed point FFT along the last axis of int64 arrays (re, im), natural order output."""
    re = np.array(re, dtype=np.int64, order="C")   # contiguous copies: reshape gives views
    im = np.array(im, dtype=np.int64, order="C")
    n = re.shape[-1]
    lead = re.shape[:-1]
    half, step = n // 2, 1
    while half >= 1:
        shape = lead + (n // (2 * half), 2, half)
        r = re.reshape(shape)
        i = im.reshape(shape)
        ar, br = r[..., 0, :].copy(), r[..., 1, :].copy()
        ai, bi = i[..., 0, :].copy(), i[..., 1, :].copy()
        c = tw[np.arange(half) * step, 0].astype(np.int64)
        s = tw[np.arange(half) * step, 1].astype(np.int64)
        dr = (ar - br) >> 1
        di = (ai - bi) >> 1
        r[..., 0, :] = _wrap16((ar + br) >> 1)
        i[..., 0, :] = _wrap16((ai + bi) >> 1)
        r[..., 1, :] = _wrap16((dr * c - di * s + (1 << 14)) >> 15)
        i[..., 1, :] = _wrap16((dr * s + di * c + (1 << 14)) >> 15)
        half >>= 1
        step <<= 1
    order = swap.astype(np.int64)   # position k holds the sample of frequency order[k]
    return re[..., order], im[..., order]


def fft2d_q15(img, tw, swap):
    """(I, Q) int64 [Dim][Dim] of the whole group: lines, then columns."""
    re = img.astype(np.int64) << 7
    im = np.zeros_like(re)
    re, im = fft_dif_q15(re, im, tw, swap)           # horizontal: each line
    re, im = fft_dif_q15(re.T, im.T, tw, swap)       # vertical: each column
    return re.T, im.T


def pack(re, im):
    """int32 items holding v2s (I low half-word, Q high half-word)."""
    word = (im.astype(np.int64) & 0xFFFF) << 16 | (re.astype(np.int64) & 0xFFFF)
    return word.astype(np.uint32).view(np.int32)


def unpack(out):
    """(I, Q) int16 arrays of packed int32 samples."""
    u = np.asarray(out).astype(np.int32).view(np.uint32)
    return (u & 0xFFFF).astype(np.uint16).view(np.int16), (u >> 16).astype(np.uint16).view(np.int16)


def expected(args):
    """Out = packed fixed point 2D FFT of In."""
    re, im = fft2d_q15(args["In"], args["Twiddles"], args["SwapTable"])
    return {"Out": pack(re, im)}


def check_accuracy(args, out):
    """Max abs difference (in Q15 LSBs) between ``out`` and fft2(In) * 2**7 / Dim**2."""
    dim = args["In"].shape[0]
    ref = np.fft.fft2(args["In"].astype(np.float64)) * 128.0 / (dim * dim)
    re, im = unpack(out)
    return float(np.max(np.abs(re + 1j * im - ref)))
