"""Numpy reference of the original's SQ8 arithmetic with 1-byte scales (``Scale_DataSize`` 1).

This is what GreenWaves' ``CNN_Libraries_SQ8`` basic kernels compute (gap_sdk, read at commit
5132ebf unless a function says otherwise) and how NNTool turns a float scale into the 8-bit
``Scale``/``ScaleN`` pair. ``docs/cnn-sq8-original.md`` holds the facts, with their sources, and
where they differ from TensorFlow Lite Micro's requantisation. Nothing here is bit-exact with
TFLite; it is bit-exact with the original's formulas as read.

Conventions:

* tensors are CHW numpy arrays; int8 in, int8 out (softmax: int16 Q15);
* every C ``int`` quantity is held in int64 and wrapped to 32 bits where the C code would wrap
  (products and sums of ``int``), exactly like :func:`wrap32`;
* ``Scale`` is an unsigned byte (0..255), ``ScaleN`` a shift 0..31; a scale of 0 means "skip" only
  in the kernels that test it (MatAdd, pooling, global max pool); :func:`act_switch` and the
  conv/linear reduction always multiply (``ActScale`` 0 gives 0; identity is ``Scale=1, ScaleN=0``).

Where a detail of a basic kernel was not read, or differs between SDK versions, the function's
docstring says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from autotiler.errors import ModelError

from .cnn_reference import exp_q15

# ---------------------------------------------------------------------------------------------
# The Infos byte vector (CNN_Libraries_SQ8/CNN_Infos_SQ8.h)

AT_INF_BIASL_SM = 0           # softmax: left shift of (In - max)
AT_INF_ACTSCALE = 0
AT_INF_ACTSCALEN = 1
AT_INF_A0 = 2                 # 2 bytes reserved, the SQ8 kernels read the first one
AT_INF_B0 = 4
AT_INF_C0 = 6
AT_INF_BIASN = 8              # = AT_INF_IN1SCALE = AT_INF_SCALE = AT_INF_GLOBAL_SUM_SCALE
AT_INF_IN1SCALE = 8
AT_INF_SCALE = 8
AT_INF_GLOBAL_SUM_SCALE = 8
AT_INF_SCALEN = 9             # = AT_INF_IN1SCALEN = AT_INF_GLOBAL_SUM_SCALEN
AT_INF_IN1SCALEN = 9
AT_INF_GLOBAL_SUM_SCALEN = 9
AT_INF_OUTSCALE = 10          # = AT_INF_OUTZEROPOINT
AT_INF_OUTZEROPOINT = 10
AT_INF_OUTSCALEN = 11
AT_INF_DIM = 12               # size of the Infos kernel argument the SQ8 generators declare
AT_INF_PRENORM = 12           # read by the conv/linear reductions: one past AT_INF_DIM
AT_INF_ADD_BIAS = 12          # int16, unsigned MatAdd only
AT_INF_SQ16_DIM = 13
AT_INF_ASYM_ADD_DIM = 14

# CNN_ActivationOper_T of CNN_BasicKernels_SQ8.h (newest order, with ACT_HTANH)
ACTIVATIONS = ("none", "relu", "relun", "hsigmoid", "htanh", "hswish", "leakyrelu", "sigmoid", "tanh", "relum",
               "relumn")

INT32_MIN = -(1 << 31)


# ---------------------------------------------------------------------------------------------
# 32-bit C arithmetic


def i64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def wrap32(x) -> np.ndarray:
    """Two's complement wrap to int32 (values kept as int64), what a C ``int`` does on GAP."""
    return ((i64(x) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _shift(n, name: str) -> np.ndarray:
    n = i64(n)
    if np.any((n < 0) | (n > 31)):
        raise ModelError(f"{name} must be a shift in 0..31, got {n.min() if n.size else n}",
                         hint="ScaleN/Norm are unsigned bytes used as shift counts")
    return n


def _byte(x, name: str) -> np.ndarray:
    x = i64(x)
    if np.any((x < 0) | (x > 255)):
        raise ModelError(f"{name} must be an unsigned byte 0..255", hint="SQ8 scales are unsigned char")
    return x


def at_norm(x, n) -> np.ndarray:
    """``AT_NORM(x, n)`` = ``gap_roundnorm_reg(x, n)``: ``(x + 2^(n-1)) >> n`` on 32 bits.

    Round half up (towards +inf): the addition wraps like C ``int``, the shift is arithmetic;
    ``n = 0`` returns x unchanged (no rounding term). ``n`` may be an array (per channel).
    """
    n = _shift(n, "AT_NORM shift")
    x = wrap32(x)
    half = np.where(n > 0, np.left_shift(1, np.maximum(n - 1, 0)), 0)
    return wrap32(x + half) >> n


def at_scale(x, scale, scale_n) -> np.ndarray:
    """``AT_SCALE(X, Scale, ScaleN)`` = ``AT_NORM(X * Scale, ScaleN)``.

    The product is a 32-bit C ``int`` product (it wraps, it is never widened to 64 bits), then one
    rounding half up by ``2^ScaleN``. ``Scale`` is an unsigned byte.
    """
    return at_norm(wrap32(i64(x) * _byte(scale, "Scale")), scale_n)


def clip8(x) -> np.ndarray:
    """``gap_clip(x, 7)``: saturate to [-128, 127]."""
    return np.clip(i64(x), -128, 127)


def clipu(x, n: int) -> np.ndarray:
    """``gap_clipu(x, n)`` (``AT_CLIP_POS_IMM``): saturate to [0, 2^n - 1]."""
    return np.clip(i64(x), 0, (1 << n) - 1)


def clip_pos(x, bound) -> np.ndarray:
    """``AT_CLIP_POS(x, n)`` = ``gap_clipur(x, n)``: ``Max(0, Min(x, n))``, n a register value."""
    return np.maximum(0, np.minimum(i64(x), i64(bound)))


def out_clip(x, unsigned: bool = False, n_bits: int = 8) -> np.ndarray:
    """``OUT_CLIP(acc, is_unsigned, n_bits)``: ``gap_clipu(acc, n_bits)`` or ``gap_clip(acc, n_bits-1)``."""
    if unsigned:
        return clipu(x, n_bits)
    return np.clip(i64(x), -(1 << (n_bits - 1)), (1 << (n_bits - 1)) - 1)


# ---------------------------------------------------------------------------------------------
# NNTool: float scale -> (Scale, ScaleN)


def compute_scales(scale, available_bits: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """NNTool's ``compute_scales`` (quantization/multiplicative/utils/scale.py) for uint8 scales.

    ``m, e = frexp(scale)`` (m stored as float32), then starting at ``bits = min(8, available_bits)``:
    ``Scale = floor(m * 2^bits + 0.5)``, ``ScaleN = bits - e``; while a channel's ``Scale >= 2^max_bits``,
    or ``ScaleN > 24``, or ``Scale`` is even, and ``ScaleN > 0`` and ``bits > 0``, that channel retries
    with one bit less. So every multiplier has at most 8 significant bits and is odd (or the loop
    ran out of shift). Returns (Scale uint8, ScaleN int8), one per element of ``scale``.

    A scale of 2^8 or more ends with a negative ``ScaleN``, which no SQ8 kernel can apply: it
    raises. (NNTool keeps a scale of exactly 1.0 as ``(1, 0)`` without calling this; the loop gives
    the same pair.)
    """
    s = np.atleast_1d(np.asarray(scale, dtype=np.float64))
    if np.any(~np.isfinite(s)) or np.any(s < 0):
        raise ModelError("a scale must be a finite float >= 0")
    max_bits = min(8, int(available_bits))
    if max_bits < 1:
        raise ModelError(f"available_bits must be >= 1, got {available_bits}")
    mant = np.array([np.float32(math.frexp(float(v))[0]) for v in s], dtype=np.float64)
    expo = np.array([math.frexp(float(v))[1] for v in s], dtype=np.int64)
    bits = np.full(s.shape, max_bits, dtype=np.int64)
    max_val = 1 << max_bits
    while True:
        qb = np.floor(mant * np.power(2.0, bits) + 0.5)
        qn = bits - expo
        move = (qb >= max_val) | (qn > 24) | (qb % 2 == 0)
        can = (qn > 0) & (bits > 0)
        over = move & can
        if not over.any():
            break
        bits[over] -= 1
    if np.any(qn < 0) or np.any(qb > 255):
        raise ModelError(f"scale {s.max()} is too large for an 8-bit multiplier and a right shift",
                         hint="the original's SQ8 kernels only shift right")
    return qb.astype(np.uint8), qn.astype(np.int8)


def filter_available_bits(filter_size: int) -> int:
    """NNTool's ``MultMulBiasScaleQType.from_filter`` budget: ``31 - (ceil(log2(sz)) + 7 + 7)``.

    ``sz`` is NNTool's ``params.filter_dim.sz``; whether that counts the output-channel dimension
    was not checked (docs/cnn-sq8-original.md, open questions). The result is then capped at 8.
    """
    if filter_size < 1:
        raise ModelError("filter_size must be >= 1")
    return 31 - (math.ceil(math.log2(filter_size)) + 7 + 7)


def scale_value(scale, scale_n) -> np.ndarray:
    """The real number a (Scale, ScaleN) pair stands for: ``Scale / 2^ScaleN``."""
    return i64(scale) / np.power(2.0, i64(scale_n))


# ---------------------------------------------------------------------------------------------
# Sigmoid / tanh tables


def default_sigmoid_lut() -> np.ndarray:
    """``round(65536 * sigmoid(i / 24))`` for i in 0..255, capped at 65535.

    The original's ``SIGMOID_LUT_uint16`` (CNN_Activation_SQ8.c) is the same function but not the
    same rounding (e.g. entry 4 is 35493 there, 35492 here; entry 255 is 65535 there): pass the
    original's table as ``lut`` to be bit-exact with it.
    """
    i = np.arange(256, dtype=np.float64)
    return np.minimum(np.floor(65536.0 / (1.0 + np.exp(-i / 24.0)) + 0.5), 65535).astype(np.int64)


def _lut(lut) -> np.ndarray:
    t = default_sigmoid_lut() if lut is None else i64(lut)
    if t.shape != (256,):
        raise ModelError("a sigmoid table has 256 entries")
    return t


def sigmoid_table(x, lut=None) -> np.ndarray:
    """``SigmoidTable(x, SIGMOID_LUT_uint16)`` (NEAREST): x in Q12, result in Q15.

    ``i = (|x| * 3) >> 9`` (|x|/4096 in steps of 1/24); ``r = lut[i]`` or 0xFFFF past the table;
    ``r = 65536 - r`` unless x > 0; result ``r >> 1``.
    """
    t = _lut(lut)
    x = wrap32(x)
    idx = (np.abs(x) * 3) >> 9
    r = np.where(idx > 255, 0xFFFF, t[np.minimum(idx, 255)])
    r = np.where(x > 0, r, 65536 - r)
    return r >> 1


def tanh_table(x, lut=None) -> np.ndarray:
    """``TanhTable(x, SIGMOID_LUT_uint16)`` (NEAREST): x in Q12, result in Q15.

    ``i = (|x| * 3) >> 8``; ``r = lut[i]`` or 0xFFFF; ``r - 32768`` if x > 0 else ``32768 - r``.
    """
    t = _lut(lut)
    x = wrap32(x)
    idx = (np.abs(x) * 3) >> 8
    r = np.where(idx > 255, 0xFFFF, t[np.minimum(idx, 255)])
    return np.where(x > 0, r - 32768, 32768 - r)


# ---------------------------------------------------------------------------------------------
# Activations


@dataclass(frozen=True)
class ActParams:
    """The activation part of Infos: ``ActScale``/``ActScaleN`` (unsigned bytes) and A0, B0, C0.

    A0/B0/C0 occupy 2 bytes each in Infos but the SQ8 kernels read one byte: as ``unsigned char``
    in the conv/linear reductions and the standalone activation (``arr_at_as(Infos, .., unsigned
    char)``), as ``signed char`` in the full-feature linear, tensor-vector, MatAdd and pooling
    (``KerParPoolActivation``) kernels. Give
    them here as the integers the kernel ends up with (see :func:`read_infos`).
    """

    act_scale: int = 1
    act_scale_n: int = 0
    a0: int = 0
    b0: int = 0
    c0: int = 0


def _check_act(oper: str) -> str:
    if oper not in ACTIVATIONS:
        raise ModelError(f"unknown activation {oper!r}", hint="one of " + ", ".join(ACTIVATIONS))
    return oper


def act_switch(acc, oper: str, p: ActParams = ActParams(), in_bits: int = 32, unsigned: bool = False,
               lut=None) -> np.ndarray:
    """``ACT_SWITCH`` of CNN_BasicKernels_SQ8.h on an already channel-scaled accumulator (unclipped).

    With ``S(v) = AT_SCALE(v, ActScale, ActScaleN)``:

    * none: acc; htanh: acc (the macro does nothing);
    * relu: ``S(Max(0, acc))``; relun: ``S(AT_CLIP_POS(acc, A0))``; relum: ``S(Max(A0, acc))``;
      relumn: ``S(Max(A0, Min(acc, B0)))``;
    * hsigmoid: ``S(AT_CLIP_POS(acc + B0, A0)) + C0``; hswish: ``S(AT_CLIP_POS(acc + B0, A0) * acc) + C0``;
    * leakyrelu: ``S(acc < 0 ? AT_NORM(acc * A0, 7) : acc) + B0`` (A0 the leak in Q7);
    * sigmoid: ``S(Sigmoid(acc << (in_bits == 8 ? 8 : 0)))``, tanh the same with Tanh, ``+ A0`` if the
      output is unsigned. Sigmoid/Tanh take Q12 and give Q15 (:func:`sigmoid_table`).

    ``in_bits`` is the macro's ``in_n_bits``: 32 in the conv reductions, 8 in the standalone
    activation, 0 in linear/tensor-vector. The caller clips (:func:`out_clip`).
    """
    _check_act(oper)
    acc = wrap32(acc)
    s, n = p.act_scale, p.act_scale_n
    if oper in ("none", "htanh"):
        return acc
    if oper == "relu":
        return at_scale(np.maximum(0, acc), s, n)
    if oper == "relun":
        return at_scale(clip_pos(acc, p.a0), s, n)
    if oper == "relum":
        return at_scale(np.maximum(p.a0, acc), s, n)
    if oper == "relumn":
        return at_scale(np.maximum(p.a0, np.minimum(acc, p.b0)), s, n)
    if oper == "hsigmoid":
        return wrap32(at_scale(clip_pos(wrap32(acc + p.b0), p.a0), s, n) + p.c0)
    if oper == "hswish":
        return wrap32(at_scale(wrap32(clip_pos(wrap32(acc + p.b0), p.a0) * acc), s, n) + p.c0)
    if oper == "leakyrelu":
        neg = at_norm(wrap32(acc * p.a0), 7)
        return wrap32(at_scale(np.where(acc < 0, neg, acc), s, n) + p.b0)
    x = wrap32(acc << (8 if in_bits == 8 else 0))
    if oper == "sigmoid":
        return at_scale(sigmoid_table(x, lut), s, n)
    y = at_scale(tanh_table(x, lut), s, n)
    return wrap32(y + p.a0) if unsigned else y


def act_c0_mul(acc, oper: str, p: ActParams = ActParams()) -> np.ndarray:
    """The older activation form still used by the SQ8 pooling kernels and MatAdd's HSigmoid/HSwish.

    ``S(v) = AT_SCALE(v, ActScale, ActScaleN)``; none: ``S(acc)``; relu: ``S(Max(0, acc))``;
    relun: ``S(Min(A0, Max(0, acc)))``; hsigmoid: ``S(AT_CLIP_POS(acc + B0, A0) * C0)``; hswish:
    ``S(AT_CLIP_POS(acc + B0, A0) * C0 * acc)``; leakyrelu: ``S(acc < 0 ? AT_NORM(acc * A0, 7) : acc)``.
    C0 multiplies here, where :func:`act_switch` adds it. Unclipped.
    """
    acc = wrap32(acc)
    s, n = p.act_scale, p.act_scale_n
    if oper == "none":
        return at_scale(acc, s, n)
    if oper == "relu":
        return at_scale(np.maximum(0, acc), s, n)
    if oper == "relun":
        return at_scale(np.minimum(p.a0, np.maximum(0, acc)), s, n)
    if oper == "hsigmoid":
        return at_scale(wrap32(clip_pos(wrap32(acc + p.b0), p.a0) * p.c0), s, n)
    if oper == "hswish":
        return at_scale(wrap32(wrap32(clip_pos(wrap32(acc + p.b0), p.a0) * p.c0) * acc), s, n)
    if oper == "leakyrelu":
        return at_scale(np.where(acc < 0, at_norm(wrap32(acc * p.a0), 7), acc), s, n)
    raise ModelError(f"activation {oper!r} has no form in the pooling/MatAdd kernels",
                     hint="none, relu, relun, hsigmoid, hswish, leakyrelu")


def activation(inp, oper: str, p: ActParams = ActParams(), lut=None) -> np.ndarray:
    """``CNN_Act_SQ8`` (Ker_*_SQ8, ``KER_ACT``): int8 in, ``gap_clip(ACT_SWITCH(In, in_bits=8), 7)`` out."""
    return clip8(act_switch(i64(inp), oper, p, in_bits=8, lut=lut)).astype(np.int8)


# ---------------------------------------------------------------------------------------------
# Infos


@dataclass(frozen=True)
class Infos:
    """The fields of the SQ8 Infos vector, as integers (see the AT_INF_* constants)."""

    act_scale: int = 0
    act_scale_n: int = 0
    a0: int = 0
    b0: int = 0
    c0: int = 0
    scale: int = 0          # AT_INF_BIASN / IN1SCALE / SCALE / GLOBAL_SUM_SCALE
    scale_n: int = 0        # AT_INF_SCALEN / IN1SCALEN / GLOBAL_SUM_SCALEN
    out_scale: int = 0      # AT_INF_OUTSCALE / OUTZEROPOINT
    out_scale_n: int = 0
    prenorm: int = 0

    def to_bytes(self, size: int = AT_INF_DIM + 1) -> np.ndarray:
        """The byte vector (uint8), A0/B0/C0 as little-endian int16; ``size`` 13 keeps PRENORM."""
        b = np.zeros(max(size, AT_INF_DIM), dtype=np.uint8)
        b[AT_INF_ACTSCALE] = self.act_scale & 0xFF
        b[AT_INF_ACTSCALEN] = self.act_scale_n & 0xFF
        for off, v in ((AT_INF_A0, self.a0), (AT_INF_B0, self.b0), (AT_INF_C0, self.c0)):
            b[off] = v & 0xFF
            b[off + 1] = (v >> 8) & 0xFF
        b[AT_INF_SCALE] = self.scale & 0xFF
        b[AT_INF_SCALEN] = self.scale_n & 0xFF
        b[AT_INF_OUTSCALE] = self.out_scale & 0xFF
        b[AT_INF_OUTSCALEN] = self.out_scale_n & 0xFF
        if b.size > AT_INF_PRENORM:
            b[AT_INF_PRENORM] = self.prenorm & 0xFF
        return b


def read_infos(buf, signed_params: bool) -> Infos:
    """Infos as a kernel reads them: scales as unsigned bytes, A0/B0/C0 as ONE byte each, read as
    ``signed char`` (``signed_params``: linear, tensor-vector, MatAdd, pooling) or ``unsigned char``
    (reductions, standalone activation); PRENORM (byte 12) 0 when the vector stops at AT_INF_DIM."""
    b = np.asarray(buf, dtype=np.uint8)
    if b.size < AT_INF_DIM:
        raise ModelError(f"an SQ8 Infos vector has at least {AT_INF_DIM} bytes, got {b.size}")

    def p(off: int) -> int:
        v = int(b[off])
        return v - 256 if signed_params and v > 127 else v

    return Infos(int(b[AT_INF_ACTSCALE]), int(b[AT_INF_ACTSCALEN]), p(AT_INF_A0), p(AT_INF_B0), p(AT_INF_C0),
                 int(b[AT_INF_SCALE]), int(b[AT_INF_SCALEN]), int(b[AT_INF_OUTSCALE]), int(b[AT_INF_OUTSCALEN]),
                 int(b[AT_INF_PRENORM]) if b.size > AT_INF_PRENORM else 0)


def act_params(info: Infos) -> ActParams:
    return ActParams(info.act_scale, info.act_scale_n, info.a0, info.b0, info.c0)


# ---------------------------------------------------------------------------------------------
# Geometry


def _chw(x, name: str) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 3:
        raise ModelError(f"{name} must be a CHW tensor, got shape {x.shape}")
    return x


def _taps(inp, fx: int, fy: int, sx: int, sy: int, dx: int, dy: int, pad) -> tuple[np.ndarray, np.ndarray]:
    """([C, Fy, Fx, Ho, Wo] values with 0 outside the image, same-shape bool mask of in-image taps)."""
    inp = i64(inp)
    c, h, w = inp.shape
    pl, pr, pt, pb = (int(v) for v in pad)
    if min(fx, fy, sx, sy, dx, dy) < 1 or min(pl, pr, pt, pb) < 0:
        raise ModelError("filter, stride and dilation must be >= 1 and pads >= 0")
    wo = (w + pl + pr - (dx * (fx - 1) + 1)) // sx + 1
    ho = (h + pt + pb - (dy * (fy - 1) + 1)) // sy + 1
    if wo < 1 or ho < 1:
        raise ModelError(f"the window does not fit the {w}x{h} input")
    big = np.zeros((c, pt + h + pb + dy * fy + sy * ho, pl + w + pr + dx * fx + sx * wo), dtype=np.int64)
    valid = np.zeros(big.shape[1:], dtype=bool)
    big[:, pt:pt + h, pl:pl + w] = inp
    valid[pt:pt + h, pl:pl + w] = True
    taps = np.empty((c, fy, fx, ho, wo), dtype=np.int64)
    mask = np.empty((fy, fx, ho, wo), dtype=bool)
    for i in range(fy):
        for j in range(fx):
            taps[:, i, j] = big[:, i * dy:i * dy + sy * ho:sy, j * dx:j * dx + sx * wo:sx][:, :ho, :wo]
            mask[i, j] = valid[i * dy:i * dy + sy * ho:sy, j * dx:j * dx + sx * wo:sx][:ho, :wo]
    return taps, np.broadcast_to(mask, taps.shape)


def _per_channel(v, n: int, name: str) -> np.ndarray:
    v = i64(v)
    if v.ndim == 0:
        v = np.full(n, int(v), dtype=np.int64)
    if v.shape != (n,):
        raise ModelError(f"{name} must have one entry per output channel ({n}), got shape {v.shape}")
    return v


# ---------------------------------------------------------------------------------------------
# Operators


def reduct(acc, scale, scale_n, oper: str = "none", p: ActParams = ActParams(), prenorm: int = 0,
           lut=None) -> np.ndarray:
    """``KerParReduct_CC_*_SQ8`` (``KER_PAR_REDUCT_ACT_CHW``): int32 [C, ...] accumulators to int8.

    ``Out = gap_clip(ACT_SWITCH(AT_SCALE(AT_NORM(Acc, Prenorm), Scale[c], ScaleN[c]), in_bits=32), 7)``.
    No clip between the channel scaling and the activation (the pre-2023 library clipped there and
    applied ReLU/ReLUN without ActScale; docs/cnn-sq8-original.md).
    """
    acc = wrap32(acc)
    c = acc.shape[0]
    shape = (c,) + (1,) * (acc.ndim - 1)
    sc = _per_channel(scale, c, "Scale").reshape(shape)
    sn = _per_channel(scale_n, c, "ScaleN").reshape(shape)
    x = at_scale(at_norm(acc, prenorm), sc, sn)
    return clip8(act_switch(x, oper, p, in_bits=32, lut=lut)).astype(np.int8)


def conv_acc(inp, filt, bias, *, stride=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0), depthwise: bool = False,
             norm_bias: int = 0) -> np.ndarray:
    """The int32 accumulators of ``KerParSetBias*_SQ8`` + ``KerParConv*_SQ8`` / ``KerParConvDW*_SQ8``.

    ``Acc[o] = (Bias[o] << NormBias) + sum over in-image taps of In * Filter`` (32-bit, wrapping);
    out-of-image taps are skipped, i.e. padding is 0 (SQ8 tensors are symmetric, zero point 0).
    inp [Cin, H, W] int8; filt [Cout, Cin, Fy, Fx] or, depthwise, [C, Fy, Fx]; stride/dilation
    (x, y); pad (left, right, top, bottom); bias int8/16/32 (``Bias_DataSize``).
    """
    inp = _chw(inp, "In")
    f = i64(filt)
    fy, fx = f.shape[-2:]
    taps, _ = _taps(inp, fx, fy, stride[0], stride[1], dilation[0], dilation[1], pad)
    if depthwise:
        if f.ndim != 3 or f.shape[0] != inp.shape[0]:
            raise ModelError(f"depthwise filter must be [C={inp.shape[0]}, Fy, Fx], got {f.shape}")
        s = np.einsum("cijhw,cij->chw", taps, f)
    else:
        if f.ndim != 4 or f.shape[1] != inp.shape[0]:
            raise ModelError(f"filter must be [Cout, Cin={inp.shape[0]}, Fy, Fx], got {f.shape}")
        s = np.einsum("cijhw,ocij->ohw", taps, f)
    b = _per_channel(bias, s.shape[0], "Bias")
    return wrap32(s + wrap32(b << _shift(norm_bias, "NormBias"))[:, None, None])


def conv(inp, filt, bias, scale, scale_n, *, stride=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0),
         depthwise: bool = False, norm_bias: int = 0, prenorm: int = 0, act: str = "none",
         p: ActParams = ActParams(), lut=None) -> np.ndarray:
    """``CNN_ConvolutionPoolAct_SQ8`` without pooling: :func:`conv_acc` then :func:`reduct`."""
    acc = conv_acc(inp, filt, bias, stride=stride, dilation=dilation, pad=pad, depthwise=depthwise,
                   norm_bias=norm_bias)
    return reduct(acc, scale, scale_n, act, p, prenorm, lut)


def linear(inp, weights, bias, scale, scale_n, *, norm_bias: int = 0, act: str = "none",
           p: ActParams = ActParams(), lut=None) -> np.ndarray:
    """``KerParLinearLayerFullFeatB{8,16,32}_*_SQ8`` (CNN_Bias_Linear_SQ8.c).

    ``Acc = (Bias[i] << NormBias) + sum_j In[j] * W[i][j]``; ``Out[i] = gap_clip(ACT_SWITCH(
    AT_SCALE(Acc, Scale[i], ScaleN[i]), in_bits=0), 7)``. No PRENORM here; A0/B0/C0 are read as
    signed bytes. (The tiled fallback, SetBias + KerParLinearLayer_SQ8 + KerParReduct_CC, applies
    PRENORM and reads them unsigned.)
    """
    x = i64(inp).reshape(-1)
    w = i64(weights)
    if w.ndim != 2 or w.shape[1] != x.size:
        raise ModelError(f"weights must be [OutDim, InDim={x.size}], got {w.shape}")
    n = w.shape[0]
    acc = wrap32(w @ x + wrap32(_per_channel(bias, n, "Bias") << _shift(norm_bias, "NormBias")))
    y = at_scale(acc, _per_channel(scale, n, "Scale"), _per_channel(scale_n, n, "ScaleN"))
    return clip8(act_switch(y, act, p, in_bits=0, lut=lut)).astype(np.int8)


def matmul(in1, in2, bias, scale, scale_n, *, norm_bias: int = 0, act: str = "none",
           p: ActParams = ActParams(), lut=None) -> np.ndarray:
    """``CNN_MatMulAct_SQ8`` (KOP_MATMUL, unit strides): In1 [LineM1, ColM1] x In2 [ColM1, ColM2].

    ``Out[l][c] = gap_clip(ACT_SWITCH(AT_SCALE((Bias[l] << NormBias) + sum_k In1[l][k] In2[k][c],
    Scale[l], ScaleN[l]), in_bits=0), 7)``. Read from the no-bias per-layer kernel
    (KerParMatMulNoBias_PL_SQ8: same steps with one Scale); the bias initialisation of the B32
    kernels is inferred from SetBias, not read.
    """
    a, b = i64(in1), i64(in2)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ModelError(f"matmul needs [L, K] x [K, C], got {a.shape} x {b.shape}")
    n = a.shape[0]
    acc = wrap32(a @ b + wrap32(_per_channel(bias, n, "Bias") << _shift(norm_bias, "NormBias"))[:, None])
    y = at_scale(acc, _per_channel(scale, n, "Scale")[:, None], _per_channel(scale_n, n, "ScaleN")[:, None])
    return clip8(act_switch(y, act, p, in_bits=0, lut=lut)).astype(np.int8)


def pool(inp, kind: str, size=(2, 2), stride=(2, 2), pad=(0, 0, 0, 0), *, act: str = "none",
         p: ActParams = ActParams(), do_scale: bool = True) -> np.ndarray:
    """``KerParPool*_SQ8`` (CNN_Pooling_SQ8.c, version read: the one with ``KerParPoolActivation``).

    Max: windows entirely inside the image start from INT_MIN; windows that touch the padding
    start from 0 (so a border output is ``max(0, in-image taps)``). Average: ``Sum`` of the
    in-image taps times ``PoolFactor = 65536 // (Fx*Fy)``, ``gap_roundnorm(., 16)``: the divisor is
    always the full window, border windows included (clipped to int8 at the border).
    Then ``KerParPoolActivation``: if ``ActScale != 0``, :func:`act_c0_mul` with act none (only
    when ``do_scale``, the generator's ``ActOper == KOP_NONE``), relu or relun; if ``ActScale == 0``,
    relu ``Max(0, x)``, relun ``Min(A0, Max(0, x))``, none unchanged. Other activations run as a
    standalone :func:`activation` after an unscaled pool (the generator's fallback). Dilation is
    not supported by these kernels as read.
    """
    if kind not in ("max", "avg"):
        raise ModelError(f"pool kind must be 'max' or 'avg', got {kind!r}")
    if act not in ("none", "relu", "relun"):
        raise ModelError(f"the SQ8 pooling kernels fuse none, relu or relun, not {act!r}",
                         hint="pool with act='none', do_scale=False, then activation()")
    inp = _chw(inp, "In")
    fx, fy = size
    taps, mask = _taps(inp, fx, fy, stride[0], stride[1], 1, 1, pad)
    inside = mask.all(axis=(1, 2))
    if kind == "max":
        vals = np.where(mask, taps, INT32_MIN).max(axis=(1, 2))
        v = np.where(inside, vals, np.maximum(vals, 0))
    else:
        v = at_norm(wrap32(np.where(mask, taps, 0).sum(axis=(1, 2)) * ((1 << 16) // (fx * fy))), 16)
        v = np.where(inside, v, clip8(v))
    if p.act_scale:
        if act != "none" or do_scale:
            v = clip8(act_c0_mul(v, act, p))
    elif act == "relu":
        v = np.maximum(0, v)
    elif act == "relun":
        v = np.minimum(p.a0, np.maximum(0, v))
    return clip8(v).astype(np.int8)


def global_pool(inp, kind: str, *, scale: int = 1, scale_n: int = 7, act_scale: int = 0,
                act_scale_n: int = 0) -> np.ndarray:
    """``CNN_GlobalPoolAct_SQ8``, full-feature kernels, per channel ([C, H, W] -> [C, 1, 1]).

    Average: ``gap_clip(AT_SCALE((Sum << 7) / (W*H), Scale, ScaleN), 7)``, the division a C integer
    division (truncates towards 0), Scale/ScaleN from AT_INF_GLOBAL_SUM_SCALE(N). The defaults
    (1, 7) give the older kernel, ``gap_roundnorm_reg((Sum << 7) / (W*H), 7)``. Max: the maximum
    (start -128), then ``AT_SCALE(m, ActScale, ActScaleN)`` if ``act_scale`` (DoScale and ActScale
    set). Activations other than none run as a standalone :func:`activation` after.
    """
    inp = _chw(inp, "In")
    flat = i64(inp).reshape(inp.shape[0], -1)
    if kind == "avg":
        num = wrap32(wrap32(flat.sum(axis=1)) << 7)
        q = np.sign(num) * (np.abs(num) // flat.shape[1])
        v = clip8(at_scale(q, scale, scale_n))
    elif kind == "max":
        v = np.maximum(flat.max(axis=1), -128)
        if act_scale:
            v = clip8(at_scale(v, act_scale, act_scale_n))
    else:
        raise ModelError(f"global pool kind must be 'max' or 'avg', got {kind!r}")
    return v.reshape(-1, 1, 1).astype(np.int8)


def matadd(in1, in2, *, in1_scale: int = 0, in1_scale_n: int = 0, out_scale: int = 0, out_scale_n: int = 0,
           act: str = "none", p: ActParams = ActParams()) -> np.ndarray:
    """``KerMatAdd*_SQ8`` (CNN_MatAlgebra_SQ8.c), element-wise on two same-shape int8 tensors.

    ``X = (In1Scale ? AT_SCALE(In1, In1Scale, In1ScaleN) : In1) + In2``; ``Y = OutScale ?
    AT_SCALE(X, OutScale, OutScaleN) : X`` (a 0 scale skips the step: In1 is brought to In2's scale,
    then the sum to the output's; no zero points). Then:

    * none: ``gap_clip(Y, 7)``;
    * relu: ``gap_clipu(ActScale ? AT_SCALE(Y, ActScale, ActScaleN) : Y, 7)`` (0..127);
    * relun: ``gap_clip(ActScale ? AT_SCALE(AT_CLIP_POS(Y, A0), ActScale, ActScaleN) :
      AT_CLIP_POS(Y, A0), 7)``; but with ActScale set and neither In1Scale nor OutScale the kernel
      scales by (OutScale, OutScaleN) = 0 instead, so the output is 0 (reproduced);
    * hsigmoid/hswish/leakyrelu: ``gap_clip(act_c0_mul(gap_clip(Y, 7)), 7)`` (:func:`act_c0_mul`, C0
      multiplies; leakyrelu ``AT_SCALE(y < 0 ? AT_NORM(y * A0, 7) : y, ActScale, ActScaleN)`` on the
      clipped sum, its sign the bit 31 test of ``KerParMatAdd_LeakyReLU_SQ8``, read in
      CNN_MatAlgebra_SQ8.c, index id 14164475150).

    A0/B0/C0 are signed bytes here.
    """
    a, b = i64(in1), i64(in2)
    if a.shape != b.shape:
        raise ModelError(f"MatAdd inputs differ in shape: {a.shape} vs {b.shape}")
    x = wrap32((at_scale(a, in1_scale, in1_scale_n) if in1_scale else a) + b)
    y = at_scale(x, out_scale, out_scale_n) if out_scale else x
    if act == "none":
        r = clip8(y)
    elif act == "relu":
        r = clipu(at_scale(y, p.act_scale, p.act_scale_n) if p.act_scale else y, 7)
    elif act == "relun":
        if p.act_scale and not in1_scale and not out_scale:
            r = clip8(at_scale(clip_pos(x, p.a0), out_scale, out_scale_n))
        elif p.act_scale:
            r = clip8(at_scale(clip_pos(y, p.a0), p.act_scale, p.act_scale_n))
        else:
            r = clip8(clip_pos(y, p.a0))
    elif act in ("hsigmoid", "hswish", "leakyrelu"):
        r = clip8(act_c0_mul(clip8(y), act, p))
    else:
        raise ModelError(f"MatAdd with activation {act!r} is not covered by this reference",
                         hint="none, relu, relun, hsigmoid, hswish, leakyrelu")
    return r.astype(np.int8)


def tensor_vect_mult(in1, in2, *, scale: int, scale_n: int, act: str = "none", p: ActParams = ActParams(),
                     lut=None) -> np.ndarray:
    """``KerParMatVectMul*_SQ8`` (CNN_TensorVectMultAct_SQ8): In1 [C, H, W] times In2 [C].

    ``P = AT_NORM(In1 * Scale * In2[c], ScaleN)`` when ``Scale != 0``, ``AT_NORM(In1 * In2[c], ScaleN)``
    when 0 (32-bit products, one rounding); ``Out = gap_clip(ACT_SWITCH(P, in_bits=0), 7)``;
    Scale/ScaleN from AT_INF_SCALE/SCALEN, A0/B0/C0 signed bytes.
    """
    a = i64(_chw(in1, "In1"))
    v = i64(in2).reshape(-1)
    if v.size != a.shape[0]:
        raise ModelError(f"In2 must have one entry per channel ({a.shape[0]}), got {v.size}")
    prod = wrap32(a * _byte(scale, "Scale")) if scale else a
    y = at_norm(wrap32(prod * v[:, None, None]), scale_n)
    return clip8(act_switch(y, act, p, in_bits=0, lut=lut)).astype(np.int8)


def softmax_q15(inp, norm: int) -> np.ndarray:
    """``KerParSoftMax_SQ8`` (and NNTool's ``softmax_sq8``): int8 in, int16 Q15 out, per row.

    ``M = max(In)``; ``E = Exp_fp_17_15((In - M) << Norm)`` (Norm = AT_INF_BIASL_SM, set by NNTool to
    ``15 + ceil(log2(in_scale))`` so the difference is in Q15); ``InvSum = (32767 << 15) / sum(E)``;
    ``Out = |(E * InvSum + 2^14) >> 15|``. Exp_fp_17_15 is the fp library's (:func:`exp_q15`); the
    SQ8 copy was not compared line by line. ``inp`` [..., N]: the last axis is the softmax axis.
    """
    x = i64(inp)
    if x.ndim == 0:
        raise ModelError("softmax needs at least one dimension")
    n = _shift(norm, "Norm")
    d = wrap32((x - x.max(axis=-1, keepdims=True)) << n)
    e = exp_q15(d)
    inv = ((32767 << 15) // wrap32(e.sum(axis=-1, keepdims=True)))
    return np.abs((wrap32(e * inv) + (1 << 14)) >> 15).astype(np.int16)
