"""Numpy reference of TensorFlow Lite Micro's int8 arithmetic, bit-exact (docs/cnn-sq8.md).

This is the one semantics the SQ8 basic kernels and generators with ``Scale_DataSize == 4`` are
tested against, as CMSIS-NN is tested against TFLM's reference kernels. Written from TFLM's
reference kernels (``tensorflow/lite/kernels/internal/reference/integer_ops/*.h``, ``common.h``,
``common.cc``, ``quantization_util.cc``, ``micro/kernels/*_common.cc``) and gemmlowp's
``fixedpoint/fixedpoint.h``; the code is ours.

Conventions:

* tensors are numpy ``int8`` arrays in TFLite's NHWC layout; conv filters are OHWI, depthwise
  filters ``1 x KH x KW x (Cin*M)``, fully-connected weights ``Cout x Cin``; biases ``int32``;
* every 32-bit quantity is carried in ``int64`` arrays and wrapped to int32 where the C++ code
  wraps (``wrap32``), so the numpy arithmetic never overflows silently;
* requantisation is TFLM's default build: **double rounding** (``TFLITE_SINGLE_ROUNDING`` unset):
  ``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x << left, M), right)``; the first rounds half up,
  the second half away from zero;
* the ``Prepare`` computations follow the tflite-micro package: multipliers in double from the float32
  scales, the fused-activation range in float32 (tests/models/sq8/*_prepare pin each choice);
* misuse (a shape or a parameter TFLM's Prepare refuses) raises
  :class:`autotiler.errors.ModelError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np

from autotiler.errors import ModelError

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT8_MIN = -128
INT8_MAX = 127

ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
PADDINGS = ("SAME", "VALID")


def f32(x: float) -> float:
    """Round a Python float to float32 and back (TFLite stores scales as float32)."""
    return float(np.float32(x))


def _err(message: str, hint: Optional[str] = None) -> ModelError:
    return ModelError(message, kernel="sq8_tflm", hint=hint)


# ---------------------------------------------------------------------------------------------
# Quantisation parameters


@dataclass(frozen=True)
class QParams:
    """Per-tensor affine quantisation: ``real = scale * (q - zero_point)``. The scale is rounded to float32 on
    construction: TFLite stores float32 scales and every Prepare starts from them."""

    scale: float
    zero_point: int

    def __post_init__(self) -> None:
        if not (self.scale > 0 and math.isfinite(self.scale)):
            raise _err(f"scale {self.scale!r} must be finite and > 0")
        object.__setattr__(self, "scale", f32(self.scale))
        if not self.scale > 0 or not math.isfinite(self.scale):
            raise _err("scale is 0 or infinite in float32")
        if not INT8_MIN <= int(self.zero_point) <= INT8_MAX:
            raise _err(f"int8 zero point {self.zero_point} outside [-128, 127]")


@dataclass(frozen=True)
class FilterQParams:
    """Symmetric int8 weights: one scale per output channel (or one for the tensor), zero point 0."""

    scales: Tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.scales) == 0:
            raise _err("filter quantisation needs at least one scale")
        for s in self.scales:
            if not (s > 0 and math.isfinite(s)):
                raise _err(f"filter scale {s!r} must be finite and > 0")
        object.__setattr__(self, "scales", tuple(f32(s) for s in self.scales))

    def per_channel(self, channels: int) -> Tuple[float, ...]:
        if len(self.scales) == 1:
            return self.scales * channels
        if len(self.scales) != channels:
            raise _err(f"{len(self.scales)} filter scales for {channels} output channels")
        return self.scales


@dataclass(frozen=True)
class Requant:
    """A quantised multiplier: ``real ~= multiplier * 2**(shift - 31)``, multiplier in [2^30, 2^31)."""

    multiplier: int
    shift: int


# ---------------------------------------------------------------------------------------------
# Scalar preparation (Prepare-time)


def tflite_round(x: float) -> float:
    """``TfLiteRound`` = ``std::round``: round half away from zero."""
    return math.copysign(math.floor(abs(x) + 0.5), x) if abs(x) < 2.0**52 else x


def quantize_multiplier(real: float) -> Requant:
    """``QuantizeMultiplier`` (quantization_util.cc): ``q, shift = frexp(real)``; ``M = round(q * 2^31)``;
    ``M == 2^31`` -> ``M /= 2, shift += 1``; ``shift < -31`` -> ``M = 0, shift = 0``; ``real == 0`` -> ``(0, 0)``.
    Double-rounding build: no saturation of shifts above 30."""
    real = float(real)
    if real == 0.0:
        return Requant(0, 0)
    if not math.isfinite(real):
        raise _err(f"multiplier {real!r} is not finite")
    q, shift = math.frexp(real)
    q_fixed = int(tflite_round(q * 2.0**31))
    if q_fixed > 2**31:
        raise _err(f"QuantizeMultiplier({real!r}) overflows (TFLITE_CHECK)")
    if q_fixed == 2**31:
        q_fixed //= 2
        shift += 1
    if shift < -31:
        shift, q_fixed = 0, 0
    if q_fixed > INT32_MAX or q_fixed < INT32_MIN:
        raise _err(f"QuantizeMultiplier({real!r}) out of int32 (TFLITE_CHECK)")
    return Requant(q_fixed, shift)


def quantize_multiplier_smaller_than_one_exp(real: float) -> Requant:
    """``QuantizeMultiplierSmallerThanOneExp``: ``QuantizeMultiplier`` checked for ``0 < real < 1``, shift <= 0."""
    if not 0.0 < real < 1.0:
        raise _err(f"multiplier {real!r} must be in (0, 1) (QuantizeMultiplierSmallerThanOneExp)")
    r = quantize_multiplier(real)
    if r.shift > 0:
        raise _err(f"multiplier {real!r} gives a positive shift")
    return r


def quantize_multiplier_greater_than_one(real: float) -> Requant:
    """``QuantizeMultiplierGreaterThanOne``: ``QuantizeMultiplier`` checked for ``real > 1``, shift >= 0."""
    if not real > 1.0:
        raise _err(f"multiplier {real!r} must be > 1 (QuantizeMultiplierGreaterThanOne)")
    r = quantize_multiplier(real)
    if r.shift < 0:
        raise _err(f"multiplier {real!r} gives a negative shift")
    return r


def frexp_multiplier(real: float) -> Requant:
    """LOGISTIC/TANH Prepare: ``q, shift = frexp(real)``; ``M = (int32) round(q * 2^31)``, without
    QuantizeMultiplier's ``2^31`` fix-up (a cast of 2^31 would give INT32_MIN on x86; refused here)."""
    q, shift = math.frexp(float(real))
    m = int(tflite_round(q * 2.0**31))
    if m > INT32_MAX:
        raise _err(f"input multiplier {real!r} rounds to 2^31 (TFLM's int32 cast overflows)")
    return Requant(m, shift)


def calculate_input_radius(input_integer_bits: int, input_left_shift: int, total_signed_bits: int = 31) -> int:
    """``CalculateInputRadius``: ``floor((2^ib - 1) * 2^(tsb - ib) / 2^left_shift)`` in double."""
    v = 1.0 * ((1 << input_integer_bits) - 1) * float(1 << (total_signed_bits - input_integer_bits)) / float(
        1 << input_left_shift)
    return int(math.floor(v))


def activation_range(activation: str, out: QParams) -> Tuple[int, int]:
    """``CalculateActivationRangeQuantized`` for int8: ``quantize(f) = zp + (int) round(f / scale)`` in float32;
    RELU ``[max(-128, q(0)), 127]``; RELU6 ``[max(-128, q(0)), min(127, q(6))]``; RELU_N1_TO_1 ``q(-1), q(1)``."""
    def q(f: float) -> int:
        return int(out.zero_point) + int(tflite_round(float(np.float32(f) / np.float32(out.scale))))

    if activation == "NONE":
        return INT8_MIN, INT8_MAX
    if activation == "RELU":
        return max(INT8_MIN, q(0.0)), INT8_MAX
    if activation == "RELU6":
        return max(INT8_MIN, q(0.0)), min(INT8_MAX, q(6.0))
    if activation == "RELU_N1_TO_1":
        return max(INT8_MIN, q(-1.0)), min(INT8_MAX, q(1.0))
    raise _err(f"unknown fused activation {activation!r}", hint=f"one of {', '.join(ACTIVATIONS)}")


# ---------------------------------------------------------------------------------------------
# Vectorised fixed-point primitives (int32 values carried in int64 arrays)


def i64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def wrap32(x) -> np.ndarray:
    """Two's complement wrap to int32 (C++'s int32 overflow as the hardware does it)."""
    return ((i64(x) + 2**31) & 0xFFFFFFFF) - 2**31


def _trunc_div_pow2(x: np.ndarray, n: int) -> np.ndarray:
    """C++ ``x / 2^n`` (truncation toward zero) on int64."""
    return np.where(x >= 0, x >> n, -((-x) >> n))


def saturating_rounding_doubling_high_mul(a, b) -> np.ndarray:
    """gemmlowp ``SaturatingRoundingDoublingHighMul`` (int32): ``(a*b + nudge) / 2^31`` truncating, with
    ``nudge = 2^30`` if ``a*b >= 0`` else ``1 - 2^30``. That is ``floor((a*b + 2^30) / 2^31)``: round half
    *up* (a negative tie goes toward zero, e.g. -0.5 -> 0), not half away from zero. ``a == b == INT32_MIN``
    gives INT32_MAX."""
    a, b = i64(a), i64(b)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    res = _trunc_div_pow2(ab + nudge, 31)
    return np.where((a == INT32_MIN) & (b == INT32_MIN), INT32_MAX, res)


def rounding_divide_by_pot(x, exponent) -> np.ndarray:
    """gemmlowp ``RoundingDivideByPOT``: ``(x >> e) + (rem > thr)`` with ``mask = 2^e - 1``, ``rem = x & mask``,
    ``thr = (mask >> 1) + (x < 0)``: division by ``2^e`` rounding half away from zero. ``0 <= e <= 31``."""
    x, e = i64(x), i64(exponent)
    if np.any((e < 0) | (e > 31)):
        raise _err("RoundingDivideByPOT exponent outside [0, 31]")
    mask = (np.int64(1) << e) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> e) + (remainder > threshold)


def multiply_by_quantized_multiplier(x, multiplier, shift) -> np.ndarray:
    """``MultiplyByQuantizedMultiplier`` (common.cc, double rounding, TFLM's default build):
    ``RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x * 2^max(shift,0), M), max(-shift,0))``;
    the left shift wraps on int32 as the C++ does."""
    shift = i64(shift)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(wrap32(i64(x) << left), multiplier), right)


def multiply_by_quantized_multiplier_smaller_than_one_exp(x, multiplier, left_shift) -> np.ndarray:
    """``MultiplyByQuantizedMultiplierSmallerThanOneExp``: ``RoundingDivideByPOT(SRDHM(x, M), -left_shift)``."""
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, multiplier), -i64(left_shift))


def multiply_by_quantized_multiplier_greater_than_one(x, multiplier, left_shift) -> np.ndarray:
    """``MultiplyByQuantizedMultiplierGreaterThanOne``: ``SRDHM(x * 2^left_shift, M)`` (the product wraps)."""
    return saturating_rounding_doubling_high_mul(wrap32(i64(x) << i64(left_shift)), multiplier)


def single_rounding_multiply(x, multiplier, shift) -> np.ndarray:
    """The ``TFLITE_SINGLE_ROUNDING`` variant (TFLM does not build it by default; onnxruntime's arithmetic,
    ``rounding="single"``, takes it): ``(x * M + 2^(30 - shift)) >> (31 - shift)`` on int64."""
    total = 31 - i64(shift)
    return (i64(x) * i64(multiplier) + (np.int64(1) << (total - 1))) >> total


#: ``rounding=`` of the linear operators: TFLM's double rounding (the default) or onnxruntime's single one.
ROUNDINGS = ("double", "single")


def _multiply(rounding: str):
    """The requantisation of ``rounding`` (looked up when called: tests swap the module's functions)."""
    if rounding not in ROUNDINGS:
        raise _err(f"rounding {rounding!r} is not one of {', '.join(ROUNDINGS)}")
    return multiply_by_quantized_multiplier if rounding == "double" else single_rounding_multiply


def saturating_rounding_multiply_by_pot(x, exponent: int) -> np.ndarray:
    """gemmlowp ``SaturatingRoundingMultiplyByPOT<e>``: ``e > 0`` saturating left shift (``|x| > 2^(31-e) - 1``
    saturates), ``e < 0`` ``RoundingDivideByPOT(x, -e)``, ``e == 0`` identity."""
    x = i64(x)
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    return np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, x << exponent))


def rounding_half_sum(a, b) -> np.ndarray:
    """gemmlowp ``RoundingHalfSum`` (int32): ``(a + b + sign) / 2`` truncating, ``sign = +-1`` as ``a + b``."""
    s = i64(a) + i64(b)
    s = s + np.where(s >= 0, 1, -1)
    return np.where(s >= 0, s >> 1, -((-s) >> 1))


def _mul(a, b) -> np.ndarray:
    return saturating_rounding_doubling_high_mul(a, b)


def exp_on_interval_between_negative_one_quarter_and_0_excl(a) -> np.ndarray:
    """gemmlowp, Q0.31: Taylor expansion of ``exp`` around -1/8: ``x = a + 1/8``;
    ``c + c * (x + (((x^4/4 + x^3) * 1/3) + x^2) / 2)``, ``c = exp(-1/8)`` (1895147668), 1/3 = 715827883."""
    constant_term = 1895147668
    one_third = 715827883
    x = wrap32(i64(a) + (1 << 28))
    x2 = _mul(x, x)
    x3 = _mul(x2, x)
    x4 = _mul(x2, x2)
    x4_over_4 = saturating_rounding_multiply_by_pot(x4, -2)
    poly = saturating_rounding_multiply_by_pot(wrap32(_mul(wrap32(x4_over_4 + x3), one_third) + x2), -1)
    return wrap32(constant_term + _mul(constant_term, wrap32(x + poly)))


_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535), (3, 720401),
               (4, 242))


def exp_on_negative_values(a, integer_bits: int) -> np.ndarray:
    """gemmlowp ``exp_on_negative_values`` of a Q(ib).(31-ib) value ``a <= 0``, result Q0.31:
    ``exp(a mod 1/4 - 1/4)`` by Taylor, then one multiplier ``exp(-2^k)`` per set bit ``k`` of the remainder
    (k = -2..4, while ``ib > k``); ``a < -32`` gives 0 when ``ib > 5``; ``a == 0`` gives INT32_MAX."""
    a = i64(a)
    frac_bits = 31 - integer_bits
    one_quarter = 1 << (frac_bits - 2)
    mask = one_quarter - 1
    a_mod = wrap32((a & mask) - one_quarter)
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        saturating_rounding_multiply_by_pot(a_mod, integer_bits))
    remainder = wrap32(a_mod - a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            bit = 1 << (frac_bits + exponent)
            result = np.where((remainder & bit) != 0, _mul(result, multiplier), result)
    if integer_bits > 5:
        clamp = -(1 << (36 - integer_bits))
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, INT32_MAX, result)


def _newton_reciprocal_f2(a) -> np.ndarray:
    """The shared Newton-Raphson of gemmlowp's ``one_over_one_plus_x`` / ``one_minus_x_over_one_plus_x``:
    ``d = RoundingHalfSum(a, 1)``; ``x = 48/17 - 32/17 * d`` (Q2.29); three times
    ``x += Rescale<2>(x * (1 - d * x))``. Returns ``x`` ~ ``1/d`` in Q2.29."""
    half_denominator = rounding_half_sum(a, INT32_MAX)
    x = wrap32(1515870810 + _mul(half_denominator, -1010580540))
    one_f2 = 1 << 29
    for _ in range(3):
        one_minus = wrap32(one_f2 - _mul(half_denominator, x))
        x = wrap32(x + saturating_rounding_multiply_by_pot(_mul(x, one_minus), 2))
    return x


def one_over_one_plus_x_for_x_in_0_1(a) -> np.ndarray:
    """gemmlowp: ``1 / (1 + a)`` for Q0.31 ``a`` in [0, 1): ``Rescale<0>(x / 2)`` of the Newton result."""
    return saturating_rounding_multiply_by_pot(_newton_reciprocal_f2(a), 1)


def one_minus_x_over_one_plus_x_for_x_in_0_1(a) -> np.ndarray:
    """gemmlowp: ``(1 - a) / (1 + a)``: ``Rescale<0>(x - 1)`` of the Newton result."""
    return saturating_rounding_multiply_by_pot(wrap32(_newton_reciprocal_f2(a) - (1 << 29)), 2)


def fixed_logistic(a, integer_bits: int) -> np.ndarray:
    """gemmlowp ``logistic`` of Q(ib) ``a``, Q0.31 result: ``r = 1 / (1 + exp(-|a|))``; ``a > 0`` -> r,
    ``a < 0`` -> ``1 - r``, ``a == 0`` -> 2^30."""
    a = i64(a)
    positive = a > 0
    abs_input = np.where(positive, a, wrap32(-a))
    r = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(wrap32(-abs_input), integer_bits))
    res = np.where(positive, r, wrap32(INT32_MAX - r))
    return np.where(a == 0, 1 << 30, res)


def fixed_tanh(a, integer_bits: int) -> np.ndarray:
    """gemmlowp ``tanh`` of Q(ib) ``a``, Q0.31 result: ``t = (1 - e) / (1 + e)``, ``e = exp(-2|a|)``
    (``ExactMulByPot<1>``: the same raw value read with one more integer bit); sign restored, 0 -> 0."""
    a = i64(a)
    negative = a < 0
    n = np.where(negative, a, wrap32(-a))
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, integer_bits + 1))
    res = np.where(negative, wrap32(-t), t)
    return np.where(a == 0, 0, res)


def count_leading_zeros32(x) -> np.ndarray:
    """``CountLeadingZeros(uint32)``; 32 for 0."""
    u = i64(x) & 0xFFFFFFFF
    out = np.full(u.shape, 32, dtype=np.int64)
    nz = u != 0
    # bit_length via float log2 is unsafe near powers of two: count with shifts instead
    bl = np.zeros(u.shape, dtype=np.int64)
    v = u.copy()
    for s in (16, 8, 4, 2, 1):
        big = v >= (np.int64(1) << s)
        bl = bl + np.where(big, s, 0)
        v = np.where(big, v >> s, v)
    bl = bl + (v > 0)
    return np.where(nz, 32 - bl, out)


def get_reciprocal(x, x_integer_digits: int) -> Tuple[np.ndarray, np.ndarray]:
    """``GetReciprocal`` (common.h): ``h = clz(x)``; ``num_bits_over_unit = digits - h``;
    ``one_over_one_plus_x((x << h) - 2^31)`` (uint32 arithmetic)."""
    x = i64(x)
    h = count_leading_zeros32(x)
    shifted = wrap32(((x & 0xFFFFFFFF) << h) - (1 << 31))
    return one_over_one_plus_x_for_x_in_0_1(shifted), x_integer_digits - h


# ---------------------------------------------------------------------------------------------
# Helpers


def _check_int8(x: np.ndarray, name: str) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype != np.int8:
        raise _err(f"{name} must be an int8 array, got {x.dtype}")
    return x


def _check_act(activation: str) -> None:
    if activation not in ACTIVATIONS:
        raise _err(f"unknown fused activation {activation!r}", hint=f"one of {', '.join(ACTIVATIONS)}")


def _check_pool_quant(op: str, in_q: QParams, out_q: QParams) -> None:
    """pooling_common.cc: ``|s_in - s_out| <= 1e-6`` and equal zero points (the kernel does not rescale)."""
    if abs(float(in_q.scale) - float(out_q.scale)) > 1.0e-6 or in_q.zero_point != out_q.zero_point:
        raise _err(f"{op} needs the output quantisation of its input (TFLM's Prepare: scale within 1e-6, "
                   "same zero point)")


def _clamp8(x: np.ndarray, lo: int = INT8_MIN, hi: int = INT8_MAX) -> np.ndarray:
    return np.clip(x, lo, hi).astype(np.int8)


def compute_out_size(padding: str, image: int, filter_size: int, stride: int, dilation: int = 1) -> int:
    """``ComputeOutSize`` (padding.h): SAME ``ceil(image / stride)``; VALID
    ``(image + stride - ((filter - 1) * dilation + 1)) / stride``."""
    if padding not in PADDINGS:
        raise _err(f"unknown padding {padding!r}", hint="SAME or VALID")
    if stride < 1 or dilation < 1 or filter_size < 1:
        raise _err("stride, dilation and filter size must be >= 1")
    eff = (filter_size - 1) * dilation + 1
    if padding == "SAME":
        return (image + stride - 1) // stride
    return (image + stride - eff) // stride


def compute_padding(stride: int, dilation: int, in_size: int, filter_size: int, out_size: int) -> Tuple[int, int]:
    """``ComputePaddingWithOffset``: ``total = max(0, (out - 1) * stride + eff - in)``; returns
    ``(before, after) = (total // 2, total - total // 2)``: the odd pixel goes at the bottom/right."""
    eff = (filter_size - 1) * dilation + 1
    total = max(0, (out_size - 1) * stride + eff - in_size)
    return total // 2, total - total // 2


def _windows(x: np.ndarray, kh: int, kw: int, sh: int, sw: int, dh: int, dw: int, oh: int, ow: int) -> np.ndarray:
    """``[N, OH, OW, KH, KW, C]`` view of a padded NHWC tensor."""
    n, _, _, c = x.shape
    out = np.empty((n, oh, ow, kh, kw, c), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, :, i, j, :] = x[:, i * dh: i * dh + (oh - 1) * sh + 1: sh, j * dw: j * dw + (ow - 1) * sw + 1: sw, :]
    return out


def _pad_geometry(h: int, w: int, kh: int, kw: int, stride: Tuple[int, int], dilation: Tuple[int, int],
                  padding: str):
    sh, sw = stride
    dh, dw = dilation
    oh = compute_out_size(padding, h, kh, sh, dh)
    ow = compute_out_size(padding, w, kw, sw, dw)
    if oh <= 0 or ow <= 0:
        raise _err(f"output {oh}x{ow} is empty for input {h}x{w}, filter {kh}x{kw}")
    pt, pb = compute_padding(sh, dh, h, kh, oh)
    pl, pr = compute_padding(sw, dw, w, kw, ow)
    return oh, ow, (pt, pb), (pl, pr)


def per_channel_multipliers(input_scale: float, filter_scales: Sequence[float], out: QParams) -> tuple:
    """(multipliers int32, shifts int8), one per output channel: ``QuantizeMultiplier(double(s_in) *
    double(s_w[c]) / double(s_out))`` (``PopulateConvolutionQuantizationParams``), what the kernels'
    Scale and ScaleN arrays hold."""
    rs = [quantize_multiplier(float(input_scale) * float(s) / float(out.scale)) for s in filter_scales]
    return np.array([r.multiplier for r in rs], np.int32), np.array([r.shift for r in rs], np.int8)


def _requantize_per_channel(acc: np.ndarray, bias: Optional[np.ndarray], input_scale: float,
                            filter_scales: Sequence[float], out: QParams, activation: str,
                            rounding: str = "double") -> np.ndarray:
    """Bias (int32, wrapping), per-channel ``MultiplyByQuantizedMultiplier`` with
    ``M_c = QuantizeMultiplier(double(s_in) * double(s_w[c]) / double(s_out))``, ``+ zp_out``, clamp."""
    channels = acc.shape[-1]
    acc = wrap32(acc)
    if bias is not None:
        bias = np.asarray(bias)
        if bias.dtype != np.int32:
            raise _err(f"bias must be an int32 array for int8 operators, got {bias.dtype}")
        if bias.shape != (channels,):
            raise _err(f"bias shape {bias.shape} != ({channels},)")
        acc = wrap32(acc + bias.astype(np.int64))
    m, sh = per_channel_multipliers(input_scale, filter_scales, out)
    res = _multiply(rounding)(acc, i64(m), i64(sh)) + int(out.zero_point)
    lo, hi = activation_range(activation, out)
    return _clamp8(res, lo, hi)


# ---------------------------------------------------------------------------------------------
# Operators


def conv2d(x: np.ndarray, w: np.ndarray, bias: Optional[np.ndarray], in_q: QParams, w_q: FilterQParams,
           out_q: QParams, stride: Tuple[int, int] = (1, 1), dilation: Tuple[int, int] = (1, 1),
           padding: str = "SAME", activation: str = "NONE", rounding: str = "double") -> np.ndarray:
    """CONV_2D (reference_integer_ops/conv.h ``ConvPerChannel``): for each output pixel and channel ``oc``,
    ``acc = sum w[oc,ky,kx,ci] * (x[y,x,g*Cf+ci] - zp_in)`` over in-image taps only (padding is real 0);
    groups ``g = oc / (Cout / (Cin / Cf))``; then ``_requantize_per_channel``. ``w`` is OHWI int8."""
    x, w = _check_int8(x, "input"), _check_int8(w, "filter")
    _check_act(activation)
    if x.ndim != 4 or w.ndim != 4:
        raise _err("conv2d needs a 4D NHWC input and a 4D OHWI filter")
    n, h, wd, cin = x.shape
    cout, kh, kw, cf = w.shape
    if cin % cf != 0 or cout % (cin // cf) != 0:
        raise _err(f"input depth {cin} is not a multiple of filter depth {cf} with {cout} outputs")
    groups = cin // cf
    oh, ow, (pt, pb), (pl, pr) = _pad_geometry(h, wd, kh, kw, stride, dilation, padding)
    xc = x.astype(np.int64) - int(in_q.zero_point)  # padding with zp_in == skipping the tap
    xp = np.pad(xc, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    win = _windows(xp, kh, kw, stride[0], stride[1], dilation[0], dilation[1], oh, ow)
    per_group = cout // groups
    acc = np.empty((n, oh, ow, cout), dtype=np.int64)
    for g in range(groups):
        wg = w[g * per_group:(g + 1) * per_group].astype(np.int64)
        acc[..., g * per_group:(g + 1) * per_group] = np.tensordot(
            win[..., g * cf:(g + 1) * cf], wg, axes=([3, 4, 5], [1, 2, 3]))
    return _requantize_per_channel(acc, bias, in_q.scale, w_q.per_channel(cout), out_q, activation, rounding)


def depthwise_conv2d(x: np.ndarray, w: np.ndarray, bias: Optional[np.ndarray], in_q: QParams,
                     w_q: FilterQParams, out_q: QParams, depth_multiplier: int = 1,
                     stride: Tuple[int, int] = (1, 1), dilation: Tuple[int, int] = (1, 1), padding: str = "SAME",
                     activation: str = "NONE", rounding: str = "double") -> np.ndarray:
    """DEPTHWISE_CONV_2D (reference_integer_ops/depthwise_conv.h ``DepthwiseConvPerChannel``): output channel
    ``oc = ic * M + m``, ``acc = sum w[0,ky,kx,oc] * (x[y,x,ic] - zp_in)`` over in-image taps; then
    ``_requantize_per_channel``. ``w`` is ``1 x KH x KW x Cin*M``."""
    x, w = _check_int8(x, "input"), _check_int8(w, "filter")
    _check_act(activation)
    if x.ndim != 4 or w.ndim != 4 or w.shape[0] != 1:
        raise _err("depthwise_conv2d needs a 4D NHWC input and a 1xKHxKWxC filter")
    n, h, wd, cin = x.shape
    _, kh, kw, cout = w.shape
    if depth_multiplier < 1 or cout != cin * depth_multiplier:
        raise _err(f"filter has {cout} channels, expected input depth {cin} x depth multiplier {depth_multiplier}")
    oh, ow, (pt, pb), (pl, pr) = _pad_geometry(h, wd, kh, kw, stride, dilation, padding)
    xc = x.astype(np.int64) - int(in_q.zero_point)
    xp = np.pad(xc, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    win = _windows(xp, kh, kw, stride[0], stride[1], dilation[0], dilation[1], oh, ow)
    win = np.repeat(win, depth_multiplier, axis=-1)  # channel ic*M+m reads input channel ic
    acc = np.einsum("nhwijc,ijc->nhwc", win, w[0].astype(np.int64))
    return _requantize_per_channel(acc, bias, in_q.scale, w_q.per_channel(cout), out_q, activation, rounding)


def fully_connected(x: np.ndarray, w: np.ndarray, bias: Optional[np.ndarray], in_q: QParams, w_q: FilterQParams,
                    out_q: QParams, activation: str = "NONE", rounding: str = "double") -> np.ndarray:
    """FULLY_CONNECTED (reference_integer_ops/fully_connected.h, integer path as TFLM calls it):
    ``acc = sum w[o,i] * (x[b,i] - zp_in)`` (weights symmetric), ``+ bias``, ``MultiplyByQuantizedMultiplier``
    with ``QuantizeMultiplier(double(s_in) * double(s_w[o]) / double(s_out))`` (per tensor: one ``s_w``),
    ``+ zp_out``, clamp. ``x`` is ``[..., Cin]`` (flattened to ``[-1, Cin]``), ``w`` is ``Cout x Cin``."""
    x, w = _check_int8(x, "input"), _check_int8(w, "weights")
    _check_act(activation)
    if w.ndim != 2:
        raise _err("fully_connected weights must be 2D (Cout x Cin)")
    cout, cin = w.shape
    if x.size % cin != 0:
        raise _err(f"input of {x.size} values is not a multiple of {cin} weights per output")
    xb = x.reshape(-1, cin).astype(np.int64) - int(in_q.zero_point)
    acc = xb @ w.astype(np.int64).T
    return _requantize_per_channel(acc, bias, in_q.scale, w_q.per_channel(cout), out_q, activation, rounding)


def _pool_prologue(op: str, x: np.ndarray, in_q: QParams, out_q: QParams, filter_size: Tuple[int, int],
                   stride: Tuple[int, int], padding: str, activation: str) -> tuple:
    """A pooling's checks and geometry: (x as int8, output height, width, np.pad widths of NHWC)."""
    x = _check_int8(x, "input")
    _check_act(activation)
    _check_pool_quant(op, in_q, out_q)
    oh, ow, (pt, pb), (pl, pr) = _pad_geometry(x.shape[1], x.shape[2], *filter_size, stride, (1, 1), padding)
    return x, oh, ow, ((0, 0), (pt, pb), (pl, pr), (0, 0))


def average_pool2d(x: np.ndarray, in_q: QParams, out_q: QParams, filter_size: Tuple[int, int],
                   stride: Tuple[int, int], padding: str = "VALID", activation: str = "NONE") -> np.ndarray:
    """AVERAGE_POOL_2D (reference_integer_ops/pooling.h ``AveragePool``): sum of the in-image taps, divided by
    their count ``n`` rounding half away from zero: ``acc > 0 ? (acc + n/2) / n : (acc - n/2) / n`` (C
    truncating division); clamp to the activation range. No rescale: TFLM requires the same quantisation
    (scales within 1e-6)."""
    x, oh, ow, pads = _pool_prologue("AVERAGE_POOL_2D", x, in_q, out_q, filter_size, stride, padding, activation)
    kh, kw = filter_size
    xp = np.pad(x.astype(np.int64), pads)
    ones = np.pad(np.ones((1, *x.shape[1:3], 1), dtype=np.int64), pads)
    acc = _windows(xp, kh, kw, stride[0], stride[1], 1, 1, oh, ow).sum(axis=(3, 4))
    cnt = _windows(ones, kh, kw, stride[0], stride[1], 1, 1, oh, ow).sum(axis=(3, 4))
    half = cnt // 2
    num = np.where(acc > 0, acc + half, acc - half)
    q = np.abs(num) // cnt
    res = np.where(num >= 0, q, -q)
    lo, hi = activation_range(activation, out_q)
    return _clamp8(res, lo, hi)


def max_pool2d(x: np.ndarray, in_q: QParams, out_q: QParams, filter_size: Tuple[int, int],
               stride: Tuple[int, int], padding: str = "VALID", activation: str = "NONE") -> np.ndarray:
    """MAX_POOL_2D (reference_integer_ops/pooling.h ``MaxPool``): max over the in-image taps, clamp."""
    x, oh, ow, pads = _pool_prologue("MAX_POOL_2D", x, in_q, out_q, filter_size, stride, padding, activation)
    kh, kw = filter_size
    xp = np.pad(x.astype(np.int64), pads, constant_values=-(2**40))
    res = _windows(xp, kh, kw, stride[0], stride[1], 1, 1, oh, ow).max(axis=(3, 4))
    lo, hi = activation_range(activation, out_q)
    return _clamp8(res, lo, hi)


@dataclass(frozen=True)
class AddParams:
    """ADD/SUB Prepare (add_common.cc, sub_common.cc), in double from the float32 scales:
    ``t = 2 * max(s1, s2)``; ``m1 = s1 / t``, ``m2 = s2 / t``, ``m_out = t / (2^20 * s_out)``, each by
    ``QuantizeMultiplierSmallerThanOneExp``. (Some TFLM versions of sub_common.cc compute these in float32;
    the tflite-micro package computes both in double: tests/models/sq8/*_all_pairs_prepare tell them apart.)"""

    left_shift: int
    input1: Requant
    input2: Requant
    output: Requant


def add_params(in1: QParams, in2: QParams, out: QParams) -> AddParams:
    s1, s2, so = float(np.float32(in1.scale)), float(np.float32(in2.scale)), float(np.float32(out.scale))
    twice_max = 2.0 * max(s1, s2)
    return AddParams(20, quantize_multiplier_smaller_than_one_exp(s1 / twice_max),
                     quantize_multiplier_smaller_than_one_exp(s2 / twice_max),
                     quantize_multiplier_smaller_than_one_exp(twice_max / (float(1 << 20) * so)))


def add_params_float32(in1: QParams, in2: QParams, out: QParams) -> AddParams:
    """The float32 form of ADD/SUB's Prepare (older sub_common.cc), for comparison only: it disagrees with
    tflite-micro on 1 of the 65536 pairs of each ``*_all_pairs_prepare`` model."""
    s1, s2, so = np.float32(in1.scale), np.float32(in2.scale), np.float32(out.scale)
    twice_max = np.float32(2) * max(s1, s2)
    return AddParams(20, quantize_multiplier_smaller_than_one_exp(float(np.float32(s1 / twice_max))),
                     quantize_multiplier_smaller_than_one_exp(float(np.float32(s2 / twice_max))),
                     quantize_multiplier_smaller_than_one_exp(float(np.float32(twice_max / (np.float32(1 << 20) * so)))))


def _add_sub(x1: np.ndarray, x2: np.ndarray, in1: QParams, in2: QParams, out: QParams, activation: str,
             sign: int, rounding: str = "double") -> np.ndarray:
    x1, x2 = _check_int8(x1, "input1"), _check_int8(x2, "input2")
    _check_act(activation)
    try:
        np.broadcast_shapes(x1.shape, x2.shape)
    except ValueError as e:
        raise _err(f"shapes {x1.shape} and {x2.shape} do not broadcast") from e
    p = add_params(in1, in2, out)
    a = (x1.astype(np.int64) - int(in1.zero_point)) << p.left_shift
    b = (x2.astype(np.int64) - int(in2.zero_point)) << p.left_shift
    mbqm = _multiply(rounding)      # the shifts are <= 0: MBQM is MBQMSmallerThanOneExp
    sa = mbqm(a, p.input1.multiplier, p.input1.shift)
    sb = mbqm(b, p.input2.multiplier, p.input2.shift)
    raw = wrap32(sa + sign * sb)
    res = mbqm(raw, p.output.multiplier, p.output.shift)
    lo, hi = activation_range(activation, out)
    return _clamp8(res + int(out.zero_point), lo, hi)


def add(x1: np.ndarray, x2: np.ndarray, in1: QParams, in2: QParams, out: QParams,
        activation: str = "NONE", rounding: str = "double") -> np.ndarray:
    """ADD (reference_integer_ops/add.h): ``x_i' = (x_i - zp_i) << 20``; ``s_i = MBQMSmallerThanOneExp(x_i', m_i)``;
    ``out = MBQMSmallerThanOneExp(s_1 + s_2, m_out) + zp_out``, clamp. Broadcasting as numpy."""
    return _add_sub(x1, x2, in1, in2, out, activation, +1, rounding)


def sub(x1: np.ndarray, x2: np.ndarray, in1: QParams, in2: QParams, out: QParams,
        activation: str = "NONE", rounding: str = "double") -> np.ndarray:
    """SUB (reference/sub.h): as ADD with ``s_1 - s_2``."""
    return _add_sub(x1, x2, in1, in2, out, activation, -1, rounding)


def mul(x1: np.ndarray, x2: np.ndarray, in1: QParams, in2: QParams, out: QParams,
        activation: str = "NONE", rounding: str = "double") -> np.ndarray:
    """MUL (reference_integer_ops/mul.h): ``MultiplyByQuantizedMultiplier((x1 - zp1) * (x2 - zp2), M) + zp_out``,
    clamp; ``M = QuantizeMultiplier(double(s1) * double(s2) / double(s_out))`` (mul_common.cc)."""
    x1, x2 = _check_int8(x1, "input1"), _check_int8(x2, "input2")
    _check_act(activation)
    try:
        np.broadcast_shapes(x1.shape, x2.shape)
    except ValueError as e:
        raise _err(f"shapes {x1.shape} and {x2.shape} do not broadcast") from e
    r = quantize_multiplier(float(in1.scale) * float(in2.scale) / float(out.scale))
    prod = (x1.astype(np.int64) - int(in1.zero_point)) * (x2.astype(np.int64) - int(in2.zero_point))
    res = _multiply(rounding)(prod, r.multiplier, r.shift) + int(out.zero_point)
    lo, hi = activation_range(activation, out)
    return _clamp8(res, lo, hi)


@dataclass(frozen=True)
class SoftmaxParams:
    """SOFTMAX Prepare (softmax_common.cc): ``PreprocessSoftmaxScaling(beta, s_in, 5)``:
    ``M, left = QuantizeMultiplierGreaterThanOne(min(beta * s_in * 2^26, 2^31 - 1))``;
    ``diff_min = -CalculateInputRadius(5, left)``."""

    multiplier: int
    left_shift: int
    diff_min: int


def softmax_params(in_q: QParams, beta: float = 1.0) -> SoftmaxParams:
    real = min(float(np.float32(beta)) * float(in_q.scale) * float(1 << 26), float(2**31 - 1))
    r = quantize_multiplier_greater_than_one(real)
    return SoftmaxParams(r.multiplier, r.shift, -calculate_input_radius(5, r.shift))


def softmax(x: np.ndarray, in_q: QParams, out_q: QParams, beta: float = 1.0) -> np.ndarray:
    """SOFTMAX int8 -> int8 (reference/softmax.h, TFLM's LUT-free gemmlowp path) over the last axis:
    ``d = x - max``; taps with ``d >= diff_min``: ``e = exp_on_negative_values(SRDHM(d << left, M))`` (Q5.26 in,
    Q0.31 out); ``sum = sum RoundingDivideByPOT(e, 12)`` (Q12.19); ``r, nb = GetReciprocal(sum, 12)``;
    ``out = RoundingDivideByPOT(SRDHM(r, e), nb + 23) - 128``, clamp; taps below ``diff_min`` give -128.
    TFLM requires the output quantisation ``1/256, -128``."""
    x = _check_int8(x, "input")
    if out_q.zero_point != -128 or np.float32(out_q.scale) != np.float32(1.0 / 256):
        raise _err("int8 SOFTMAX output must have scale 1/256 and zero point -128 (TFLM's Prepare)")
    p = softmax_params(in_q, beta)
    xi = x.astype(np.int64)
    diff = xi - xi.max(axis=-1, keepdims=True)
    valid = diff >= p.diff_min
    scaled = multiply_by_quantized_multiplier_greater_than_one(np.where(valid, diff, 0), p.multiplier, p.left_shift)
    e = exp_on_negative_values(scaled, 5)
    contrib = np.where(valid, saturating_rounding_multiply_by_pot(e, -12), 0)
    total = wrap32(contrib.sum(axis=-1, keepdims=True))
    recip, nbits = get_reciprocal(total, 12)
    exponent = nbits + 31 - 8
    if np.any((exponent < 0) | (exponent > 31)):
        raise _err("softmax reciprocal exponent outside [0, 31] (TFLITE_CHECK)")
    out = rounding_divide_by_pot(_mul(recip, e), exponent) - 128
    return np.where(valid, np.clip(out, INT8_MIN, INT8_MAX), INT8_MIN).astype(np.int8)


def mean_multiplier(in_q: QParams, out_q: QParams, count: int) -> Requant:
    """MEAN's multiplier with ``1/count`` folded in (reference/reduce.h ``QuantizedMeanOrSum``):
    ``M, e = QuantizeMultiplier(double(s_in) / double(s_out))``; ``k = min(floor(log2(count)), 32, 31 + e)``;
    ``M' = (M << k) / count`` (int64, truncating), ``e' = e - k``."""
    if count < 1:
        raise _err("MEAN over an empty axis")
    r = quantize_multiplier(float(in_q.scale) / float(out_q.scale))
    k = min(count.bit_length() - 1, 32, 31 + r.shift)
    m = (r.multiplier << k) // count if k >= 0 else r.multiplier >> -k
    return Requant(int(wrap32(m)), r.shift - k)


def mean_hw(x: np.ndarray, in_q: QParams, out_q: QParams, rounding: str = "double") -> np.ndarray:
    """MEAN over H and W, keep dims (reduce_common.cc ``EvalIntegerMean`` -> reference/reduce.h
    ``QuantizedMeanOrSum``): ``sum`` of the raw int8 values (int32);
    ``MBQM(sum - zp_in * n, mean_multiplier) + zp_out``, clamp. The tflite-micro package takes this path
    even when input and output quantisations are equal (some TFLM versions then take ``reference_ops::Mean``,
    a truncating ``sum / n``, which disagrees: tests/models/sq8/mean_equal_quantisation)."""
    x = _check_int8(x, "input")
    if x.ndim != 4:
        raise _err("MEAN over H, W needs a 4D NHWC input")
    n_el = x.shape[1] * x.shape[2]
    s = wrap32(x.astype(np.int64).sum(axis=(1, 2), keepdims=True))
    r = mean_multiplier(in_q, out_q, n_el)
    shifted = wrap32(s - int(in_q.zero_point) * n_el)
    return _clamp8(_multiply(rounding)(shifted, r.multiplier, r.shift) + int(out_q.zero_point))


def sum_hw(x: np.ndarray, in_q: QParams, out_q: QParams) -> np.ndarray:
    """SUM over H and W, keep dims (reduce_common.cc ``EvalSumHelper`` -> reference/reduce.h
    ``QuantizedMeanOrSum`` with ``compute_sum``, the integer form the tflite-micro package takes):
    ``MBQM(sum - zp_in * n, QuantizeMultiplier(double(s_in) / double(s_out))) + zp_out``, clamp. (Older TFLite
    computed it in float32 without clamping: tests/models/sq8/sum_* tell them apart.)"""
    x = _check_int8(x, "input")
    if x.ndim != 4:
        raise _err("SUM over H, W needs a 4D NHWC input")
    n_el = x.shape[1] * x.shape[2]
    s = wrap32(x.astype(np.int64).sum(axis=(1, 2), keepdims=True))
    r = quantize_multiplier(float(in_q.scale) / float(out_q.scale))
    shifted = wrap32(s - int(in_q.zero_point) * n_el)
    return _clamp8(multiply_by_quantized_multiplier(shifted, r.multiplier, r.shift) + int(out_q.zero_point))


def mean_hw_float(x: np.ndarray, in_q: QParams, out_q: QParams) -> np.ndarray:
    """MEAN as TensorFlow Lite's older ``QuantizedMeanOrSum`` computed it, in float32: ``mean = sum / n``,
    ``round(mean * s_in / s_out - zp_in * s_in / s_out) + zp_out``. Not TFLM's current arithmetic (kept to
    show the difference: it disagrees by one on a few draws of tests/models/sq8/mean_*)."""
    x = _check_int8(x, "input")
    n_el = x.shape[1] * x.shape[2]
    s = wrap32(x.astype(np.int64).sum(axis=(1, 2), keepdims=True))
    scale = np.float32(in_q.scale) / np.float32(out_q.scale)
    bias = np.float32(-int(in_q.zero_point)) * scale
    v = (s.astype(np.float32) / np.float32(n_el) * scale + bias).astype(np.float32)
    r = np.sign(v) * np.floor(np.abs(v) + np.float32(0.5)) + np.float32(out_q.zero_point)
    return np.clip(r, INT8_MIN, INT8_MAX).astype(np.int8)


def logistic_tanh_params(in_q: QParams) -> Tuple[Requant, int]:
    """LOGISTIC/TANH's input multiplier and radius (public name of :func:`_logistic_tanh_params`)."""
    return _logistic_tanh_params(in_q)


def _logistic_tanh_params(in_q: QParams) -> Tuple[Requant, int]:
    """LOGISTIC/TANH int8 Prepare: ``M, left = frexp(double(s_in) * 2^27)`` (4 integer bits);
    ``radius = CalculateInputRadius(4, left, 31)``."""
    r = frexp_multiplier(float(in_q.scale) * float(1 << 27))
    return r, calculate_input_radius(4, r.shift, 31)


def logistic(x: np.ndarray, in_q: QParams, out_q: QParams) -> np.ndarray:
    """LOGISTIC int8 (reference_integer_ops/logistic.h): ``d = x - zp_in``; ``d <= -radius`` -> -128,
    ``d >= radius`` -> 127; else ``RoundingDivideByPOT(logistic_Q4(MBQM(d, M, left)), 23) - 128``, clamp.
    TFLM requires output zero point -128 (the scale 1/256 is implied by the arithmetic)."""
    x = _check_int8(x, "input")
    if out_q.zero_point != -128:
        raise _err("int8 LOGISTIC output zero point must be -128 (TFLM's Prepare)")
    r, radius = _logistic_tanh_params(in_q)
    d = x.astype(np.int64) - int(in_q.zero_point)
    inside = (d > -radius) & (d < radius)
    q4 = multiply_by_quantized_multiplier(np.where(inside, d, 0), r.multiplier, r.shift)
    y = np.clip(rounding_divide_by_pot(fixed_logistic(q4, 4), 23) - 128, INT8_MIN, INT8_MAX)
    return np.where(d <= -radius, INT8_MIN, np.where(d >= radius, INT8_MAX, y)).astype(np.int8)


def tanh(x: np.ndarray, in_q: QParams, out_q: QParams) -> np.ndarray:
    """TANH int8 (reference_integer_ops/tanh.h): as LOGISTIC with gemmlowp ``tanh`` and
    ``RoundingDivideByPOT(., 24)``, no output offset (output quantisation 1/128, 0 is implied)."""
    x = _check_int8(x, "input")
    r, radius = _logistic_tanh_params(in_q)
    d = x.astype(np.int64) - int(in_q.zero_point)
    inside = (d > -radius) & (d < radius)
    q4 = multiply_by_quantized_multiplier(np.where(inside, d, 0), r.multiplier, r.shift)
    y = np.clip(rounding_divide_by_pot(fixed_tanh(q4, 4), 24), INT8_MIN, INT8_MAX)
    return np.where(d <= -radius, INT8_MIN, np.where(d >= radius, INT8_MAX, y)).astype(np.int8)


# --- HARD_SWISH: 16-bit fixed point


def _srdhm16(a, b) -> np.ndarray:
    """gemmlowp ``SaturatingRoundingDoublingHighMul`` on int16: ``(a*b + (ab >= 0 ? 2^14 : 1 - 2^14)) / 2^15``
    truncating, i.e. ``floor((a*b + 2^14) / 2^15)`` (half up); ``a == b == -32768`` gives 32767."""
    a, b = i64(a), i64(b)
    ab = a * b
    res = _trunc_div_pow2(ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14)), 15)
    return np.where((a == -32768) & (b == -32768), 32767, res)


def _sdhm16(a, b) -> np.ndarray:
    """``SaturatingDoublingHighMul`` (hard_swish.h, like SQDMULH): ``a*b / 2^15`` truncating toward zero;
    -32768^2 -> 32767."""
    a, b = i64(a), i64(b)
    res = _trunc_div_pow2(a * b, 15)
    return np.where((a == -32768) & (b == -32768), 32767, res)


def _sat_left_shift16(v, amount: int) -> np.ndarray:
    return np.clip(i64(v) * (1 << amount), -32768, 32767)


def _wrap16(x) -> np.ndarray:
    return ((i64(x) + 2**15) & 0xFFFF) - 2**15


def _downscale_to_int16(m: int) -> int:
    """``DownScaleInt32ToInt16Multiplier``: ``m >= INT32_MAX - 2^15`` -> 32767, else ``(m + 2^15) >> 16``."""
    if m >= INT32_MAX - (1 << 15):
        return 32767
    return (m + (1 << 15)) >> 16


@dataclass(frozen=True)
class HardSwishParams:
    """HARD_SWISH Prepare (hard_swish_common.cc), in double from the float32 scales: ``hires = s_in / 128``;
    output multiplier ``hires / s_out``, reluish multiplier ``hires / (3 / 32768)``, each
    ``QuantizeMultiplier`` then rounded to 16 bits. (Some TFLM versions compute the ratios in float32; the
    tflite-micro package does not: tests/models/sq8/hard_swish_prepare tells them apart.)"""

    output_multiplier: int
    output_exponent: int
    reluish_multiplier: int
    reluish_exponent: int


def hard_swish_params(in_q: QParams, out_q: QParams) -> HardSwishParams:
    hires = float(np.float32(in_q.scale)) / 128.0
    om = quantize_multiplier(hires / float(np.float32(out_q.scale)))
    if om.shift > 0:
        raise _err("HARD_SWISH output multiplier exponent must be <= 0 (TFLM's Prepare)")
    rm = quantize_multiplier(hires / (3.0 / 32768.0))
    if -om.shift > 15 or -rm.shift > 15:
        raise _err("HARD_SWISH shift outside the 16-bit range the reference handles")
    return HardSwishParams(_downscale_to_int16(om.multiplier), om.shift, _downscale_to_int16(rm.multiplier), rm.shift)


def hard_swish(x: np.ndarray, in_q: QParams, out_q: QParams) -> np.ndarray:
    """HARD_SWISH int8 (reference/hard_swish.h), 16-bit fixed point: ``v = (x - zp_in) * 128``;
    ``o = SRDHM16(v, M_out)``; reluish ``r`` = ``v`` rescaled by ``M_relu * 2^e`` so that 3.0 -> 32768
    (left shift ``e - 1`` saturating, SRDHM16, left shift 1 saturating; or RoundingDivideByPOT for e < 0);
    ``r = (r + 2^15) >> 1``; ``out = RoundingDivideByPOT(SDHM16(r, o), -e_out) + zp_out``, clamp."""
    x = _check_int8(x, "input")
    p = hard_swish_params(in_q, out_q)
    v = _wrap16((x.astype(np.int64) - int(in_q.zero_point)) * 128)
    pre_out = _srdhm16(v, p.output_multiplier)
    r = v
    if p.reluish_exponent > 0:
        r = _sat_left_shift16(r, p.reluish_exponent - 1)
    r = _srdhm16(r, p.reluish_multiplier)
    if p.reluish_exponent > 0:
        r = _sat_left_shift16(r, 1)
    if p.reluish_exponent < 0:
        r = rounding_divide_by_pot(r, -p.reluish_exponent)
    r = (r + (1 << 15)) >> 1
    o = _sdhm16(r, pre_out)
    o = _wrap16(rounding_divide_by_pot(o, -p.output_exponent) + int(out_q.zero_point))
    return _clamp8(o)


def leaky_relu(x: np.ndarray, in_q: QParams, out_q: QParams, alpha: float) -> np.ndarray:
    """LEAKY_RELU int8 (reference/leaky_relu.h ``QuantizeLeakyRelu``): ``d = x - zp_in``;
    ``d >= 0``: ``zp_out + MBQM(d, QuantizeMultiplier(s_in / s_out))``; else
    ``zp_out + MBQM(d, QuantizeMultiplier(s_in * alpha / s_out))``, both in double from the float32 scales and
    alpha (tests/models/sq8/leaky_relu_prepare rules out the float32 form of some TFLM versions); clamp."""
    x = _check_int8(x, "input")
    s_in, s_out, a = float(np.float32(in_q.scale)), float(np.float32(out_q.scale)), float(np.float32(alpha))
    ra = quantize_multiplier(s_in * a / s_out)
    ri = quantize_multiplier(s_in / s_out)
    d = x.astype(np.int64) - int(in_q.zero_point)
    pos = multiply_by_quantized_multiplier(d, ri.multiplier, ri.shift)
    neg = multiply_by_quantized_multiplier(d, ra.multiplier, ra.shift)
    return _clamp8(np.where(d >= 0, pos, neg) + int(out_q.zero_point))


def quantize(x: np.ndarray, in_q: QParams, out_q: QParams) -> np.ndarray:
    """QUANTIZE int8 -> int8 (quantize_common.cc -> reference/requantize.h ``Requantize``):
    ``MBQM(x - zp_in, QuantizeMultiplier(double(s_in) / double(s_out))) + zp_out``, clamp."""
    x = _check_int8(x, "input")
    r = quantize_multiplier(float(in_q.scale) / float(out_q.scale))
    d = x.astype(np.int64) - int(in_q.zero_point)
    return _clamp8(multiply_by_quantized_multiplier(d, r.multiplier, r.shift) + int(out_q.zero_point))


def relu_range(out_q: QParams) -> Tuple[int, int]:
    """RELU's clamp (activations_common.cc ``CalculateReluOpData``): ``[max(-128, zp_out + roundf(0 / s_out)),
    127]``."""
    return max(INT8_MIN, int(out_q.zero_point)), INT8_MAX


def relu(x: np.ndarray, in_q: QParams, out_q: QParams) -> np.ndarray:
    """Standalone RELU int8 (activations.cc ``ReluQuantized``): requantise then clamp:
    ``clamp(zp_out + MBQM(x - zp_in, QuantizeMultiplier(double(s_in) / double(s_out))), relu_range)``."""
    x = _check_int8(x, "input")
    r = quantize_multiplier(float(in_q.scale) / float(out_q.scale))
    d = x.astype(np.int64) - int(in_q.zero_point)
    lo, hi = relu_range(out_q)
    return _clamp8(wrap32(multiply_by_quantized_multiplier(d, r.multiplier, r.shift) + int(out_q.zero_point)), lo, hi)


def relu6_range(in_q: QParams) -> Tuple[int, int]:
    """RELU6's clamp (``Relu6Prepare``): ``zero = zp_in``, ``six = FloatToQuantizedType<int8>(6, s_in, zp_in)`` =
    ``clamp(round_f32(6.0f / s_in) + zp_in)`` (float32 division, round half away from zero)."""
    six = int(tflite_round(float(np.float32(6.0) / np.float32(in_q.scale)))) + int(in_q.zero_point)
    return int(in_q.zero_point), min(INT8_MAX, max(INT8_MIN, six))


def relu6(x: np.ndarray, in_q: QParams, out_q: QParams) -> np.ndarray:
    """Standalone RELU6 int8 (activations.cc ``Relu6Quantized``): ``clamp(x, zero, six)`` of :func:`relu6_range`,
    no rescale (TFLM reads the input's quantisation only: the output is taken to have it)."""
    x = _check_int8(x, "input")
    lo, hi = relu6_range(in_q)
    return np.minimum(np.maximum(x.astype(np.int64), lo), hi).astype(np.int8)


def reduce_max_hw(x: np.ndarray, in_q: QParams, out_q: QParams) -> np.ndarray:
    """REDUCE_MAX over H and W, keep dims (reduce_common.cc ``EvalMaxHelper``, int8): TFLM requires the same
    scale and zero point in and out and takes the max of the raw values."""
    x = _check_int8(x, "input")
    if x.ndim != 4:
        raise _err("REDUCE_MAX over H, W needs a 4D NHWC input")
    if np.float32(in_q.scale) != np.float32(out_q.scale) or in_q.zero_point != out_q.zero_point:
        raise _err("int8 REDUCE_MAX needs the output quantisation of its input (TFLM's Eval)")
    return x.max(axis=(1, 2), keepdims=True)


def concatenation(xs: Sequence[np.ndarray], in_qs: Sequence[QParams], out_q: QParams, axis: int = -1) -> np.ndarray:
    """CONCATENATION int8 (concatenation.cc ``EvalUnquantized``): the raw values, whatever the quantisations (TFLM
    does not rescale). Ours (CNN_ConcatChannels_SQ8) first brings each input to the output's quantisation with
    :func:`quantize`: equal quantisations give exactly this."""
    del in_qs, out_q
    return np.concatenate([_check_int8(x, "input") for x in xs], axis=axis)


# ---------------------------------------------------------------------------------------------
# onnxruntime's arithmetic (issue 24 §7): the mode an imported ONNX QDQ model is computed in
# (autotiler/importers, ``Graph.arithmetic == "onnxruntime"``; docs/cnn-sq8.md §5). onnxruntime
# 1.32's CPU kernels after its QDQ fusions (QLinearConv, QLinearMatMul, QLinearAdd, QLinearMul,
# QLinearGlobalAveragePool: MLAS requantisation ``MlasRequantizeOutput``, one rounding of the
# scaled accumulator) round once where TFLM rounds twice: the linear operators take
# ``single_rounding_multiply`` in place of ``multiply_by_quantized_multiplier`` (same M and
# shift). Unary operators (QLinearSigmoid, QLinearLeakyRelu, the tables of QLinearConcat, and
# DQ -> float op -> Q for HardSwish and Tanh) are a function of one int8 value: a 256-entry table
# built in float32 as onnxruntime builds it. Softmax is QLinearSoftmax's float computation.

ORT_UNARY = ("IDENTITY", "LOGISTIC", "TANH", "HARD_SWISH", "LEAKY_RELU", "RELU", "RELU6")


def _ort_function(kind: str, f: np.ndarray, alpha: float) -> np.ndarray:
    """The float32 function of one unary operator as onnxruntime computes it."""
    one, zero = np.float32(1), np.float32(0)
    with np.errstate(over="ignore"):
        if kind == "LOGISTIC":
            return (one / (one + np.exp(-f))).astype(np.float32)
        if kind == "TANH":
            return np.tanh(f).astype(np.float32)
    if kind == "HARD_SWISH":     # ONNX HardSwish: x * max(0, min(1, x / 6 + 1/2))
        return (f * np.clip(f * np.float32(1.0 / 6.0) + np.float32(0.5), zero, one)).astype(np.float32)
    if kind == "LEAKY_RELU":
        return np.where(f >= 0, f, f * np.float32(alpha)).astype(np.float32)
    if kind == "RELU":
        return np.maximum(f, zero)
    if kind == "RELU6":
        return np.clip(f, zero, np.float32(6))
    return f


def ort_quantize_float(f: np.ndarray, out_q: QParams) -> np.ndarray:
    """onnxruntime's QuantizeLinear (MLAS ``MlasQuantizeLinear``): ``x / scale`` in float32, rounded half to
    even, ``+ zp``, clamp to int8."""
    v = np.asarray(f, np.float32) / np.float32(out_q.scale)
    return _clamp8(np.clip(np.rint(v), -1e9, 1e9).astype(np.int64) + int(out_q.zero_point))


def ort_lookup_table(kind: str, in_q: QParams, out_q: QParams, alpha: float = 0.0) -> np.ndarray:
    """The 256 int8 outputs of a unary operator for inputs -128..127 (``table[x + 128]``), built as
    onnxruntime's ``QlinearBuildLookupTable`` builds them: dequantise in float32
    (``(x - zp_in) * s_in``), the float32 function, :func:`ort_quantize_float`. ``IDENTITY`` is a
    requantisation (QLinearConcat's inputs, DQ -> Q)."""
    if kind not in ORT_UNARY:
        raise _err(f"no onnxruntime table for {kind}", hint="tables: " + ", ".join(ORT_UNARY))
    x = np.arange(INT8_MIN, INT8_MAX + 1, dtype=np.int64)
    f = (x - int(in_q.zero_point)).astype(np.float32) * np.float32(in_q.scale)
    return ort_quantize_float(_ort_function(kind, f, alpha), out_q)


def apply_lookup_table(x: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``table[x + 128]`` elementwise (the CNN_ActLUT_SQ8 kernel)."""
    x = _check_int8(x, "input")
    table = np.asarray(table)
    if table.shape != (256,):
        raise _err(f"a lookup table has 256 entries, got shape {table.shape}")
    return table.astype(np.int8)[x.astype(np.int64) + 128]


def ort_softmax_table(in_q: QParams, depth: int) -> np.ndarray:
    """QLinearSoftmax's float32 exponentials (qlinear_softmax.cc ``QlinearBuildLookupTableUint32``), indexed by
    ``d + 255`` for ``d = x - max`` in [-255, 0]: ``exp((d + b) * s_in)`` in double rounded to float32, where
    ``b = max(0, ln(FLT_MAX / depth) - 5) / s_in`` keeps the row's sum finite."""
    flt_max = float(np.finfo(np.float32).max)
    b = max(0.0, float(np.log(float(np.float32(flt_max / depth)))) - 5.0) / float(np.float32(in_q.scale))
    i = np.arange(256, dtype=np.float64)
    return np.exp((i - 255.0 + b) * float(np.float32(in_q.scale))).astype(np.float32)


def ort_softmax(x: np.ndarray, in_q: QParams, out_q: QParams) -> np.ndarray:
    """QLinearSoftmax int8 over the last axis (qlinear_softmax.cc ``QlinearSoftmaxCPU<int8_t>``):
    ``e = table[x - max + 255]``; ``sum`` of ``e`` in float32, in order; ``y = (int)nearbyintf(e * Y / sum) + zp``
    with ``Y = floor(1.0f / s_out)`` (float32); the int8 store wraps (a probability of 1 at scale 1/256, zero
    point -128, gives -128: onnxruntime's behaviour, kept)."""
    x = _check_int8(x, "input")
    depth = x.shape[-1]
    table = ort_softmax_table(in_q, depth)
    d = x.astype(np.int64) - x.max(axis=-1, keepdims=True).astype(np.int64)
    e = table[d + 255]
    total = np.zeros(x.shape[:-1], np.float32)
    for k in range(depth):
        total = (total + e[..., k]).astype(np.float32)
    y_scale = np.float32(np.floor(np.float32(1.0) / np.float32(out_q.scale)))
    with np.errstate(divide="ignore", invalid="ignore"):
        v = (e * y_scale).astype(np.float32) / total[..., None]
    q = np.rint(v).astype(np.int64) + int(out_q.zero_point)
    return ((q + 128) % 256 - 128).astype(np.int8)


def ort_average_pool2d(x: np.ndarray, in_q: QParams, out_q: QParams, filter_size: Tuple[int, int],
                       stride: Tuple[int, int], padding: str = "VALID", activation: str = "NONE") -> np.ndarray:
    """AveragePool (count_include_pad 0) as onnxruntime computes a QDQ one (DQ -> float AveragePool -> Q; the
    same as its QLinearAveragePool but for the last rounding): each in-image tap dequantised in float32
    (``s_in * (x - zp_in)``), summed in order (rows, then columns), divided by the taps' count,
    :func:`ort_quantize_float` (ties to even, where :func:`average_pool2d` rounds half away from zero), clamp
    to the activation range."""
    x, oh, ow, pads = _pool_prologue("AVERAGE_POOL_2D", x, in_q, out_q, filter_size, stride, padding, activation)
    kh, kw = filter_size
    f = ((x.astype(np.int64) - int(in_q.zero_point)).astype(np.float32) * np.float32(in_q.scale)).astype(np.float32)
    fp = np.pad(f, pads)
    inside = np.pad(np.ones((1, *x.shape[1:3], 1), dtype=bool), pads)
    taps = _windows(fp, kh, kw, stride[0], stride[1], 1, 1, oh, ow)          # N, OH, OW, KH, KW, C
    valid = _windows(inside, kh, kw, stride[0], stride[1], 1, 1, oh, ow)
    acc = np.zeros(taps.shape[:3] + taps.shape[5:], np.float32)
    for i in range(kh):
        for j in range(kw):
            acc = np.where(valid[:, :, :, i, j, :], (acc + taps[:, :, :, i, j, :]).astype(np.float32), acc)
    cnt = valid.sum(axis=(3, 4)).astype(np.float32)
    lo, hi = activation_range(activation, out_q)
    return np.clip(ort_quantize_float((acc / cnt).astype(np.float32), out_q), lo, hi).astype(np.int8)
