"""Numpy reference of the CNN basic kernels (autotiler/generators/cnn_kernels), bit-exact.

One function per kernel family, on whole tensors in CHW layout (numpy int8/int16/int32 arrays),
taking the parameters the C kernels take. Every function is vectorised; results are numpy arrays
of the C output type. The arithmetic (docs/cnn-fixed-point.md):

* 32-bit quantities wrap modulo 2**32 exactly as the C code's (``wrap32``);
* ``roundnorm(x, n)`` is the original's ``gap_roundnorm``/``AT_NORM``: ``(x + 2**(n-1)) >> n`` on
  32 bits, the addition wrapping, the shift arithmetic (round half up), ``n`` taken mod 32;
* ``sat(x, bits)`` is ``gap_clip(x, bits)``: clip to ``[-2**bits, 2**bits - 1]``.

The lookup tables (sigmoid, exponential) are read from the C sources, so both sides share them.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

KERNELS = Path(__file__).resolve().parent / "cnn_kernels"

# Activation codes: CNN_ActivationOper_T of CNN_BasicKernels.h
KACT_NONE, KACT_RELU, KACT_RELUN, KACT_HSIGMOID, KACT_SIGMOID, KACT_HSWISH, KACT_LEAKY, KACT_TANH, KACT_SWISH = range(9)
LEAK_CONSTANT = 409          # FP2FIX(0.1, 12)
C_SIXTH = (1 << 15) // 6     # 1/6 in Q15
BITS = {np.dtype(np.int8): 7, np.dtype(np.int16): 15, np.dtype(np.int32): 31}


def _table(path: Path, name: str) -> np.ndarray:
    text = path.read_text()
    m = re.search(name + r"\[\d*\]\s*=\s*\{([^}]*)\}", text)
    return np.array([int(v) for v in m.group(1).replace("\n", " ").split(",") if v.strip()], dtype=np.int64)


SIGMOID_LUT = _table(KERNELS / "CNN_Activation.h", "CNN_SigmoidLUT")
EXP_INT = _table(KERNELS / "CNN_ExpQ15.h", "ExpInt")
EXP_FRAC = _table(KERNELS / "CNN_ExpQ15.h", "ExpFrac")
EXP_COEFF = _table(KERNELS / "CNN_ExpQ15.h", "ExpCoeff")

# ---------------------------------------------------------------------------------------------
# Scalar arithmetic, vectorised


def i64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def wrap32(x) -> np.ndarray:
    """Two's complement wrap to int32 (values kept as int64)."""
    return ((i64(x) + 2**31) & 0xFFFFFFFF) - 2**31


def wrap16(x) -> np.ndarray:
    return ((i64(x) + 2**15) & 0xFFFF) - 2**15


def roundnorm(x, n: int) -> np.ndarray:
    """gap_roundnorm_reg: (x + 2^(n-1)) >> n on 32 bits, n mod 32."""
    n = int(n) & 31
    x = wrap32(x)
    return wrap32(x + (1 << (n - 1))) >> n if n else x


def roundnorm64(x, n: int) -> np.ndarray:
    x = i64(x)
    return (x + (1 << (n - 1))) >> n if n else x


def lshift(x, n: int) -> np.ndarray:
    """x << n on 32 bits (wrapping), a negative n an arithmetic right shift."""
    x = wrap32(x)
    return wrap32(x << (n & 31)) if n >= 0 else x >> ((-n) & 31)


def sat(x, bits: int) -> np.ndarray:
    """gap_clip(x, bits): [-2^bits, 2^bits - 1]."""
    return np.clip(i64(x), -(1 << bits), (1 << bits) - 1)


def container(bits: int):
    return {7: np.int8, 15: np.int16, 31: np.int32}[bits]


def bits_of(dtype) -> int:
    return BITS[np.dtype(dtype)]


# ---------------------------------------------------------------------------------------------
# Activations


def sigmoid_q12(x) -> np.ndarray:
    """Sigmoid of x in Q12, in Q15: table entry floor(|x| * 24 / 4096), mirrored for x <= 0."""
    x = i64(x)
    idx = (np.abs(x) * 3) >> 9
    r = np.where(idx > 255, 0xFFFF, SIGMOID_LUT[np.minimum(idx, 255)])
    r = np.where(x <= 0, 65536 - r, r)
    return r >> 1


def tanh_q12(x) -> np.ndarray:
    """tanh of x in Q12, in Q15: 2 sigmoid(2x) - 1 from the same table."""
    x = i64(x)
    idx = (np.abs(x) * 3) >> 8
    r = np.where(idx > 255, 0xFFFF, SIGMOID_LUT[np.minimum(idx, 255)])
    return np.where(x > 0, r - 32768, 32768 - r)


def to_q12(x, q: int) -> np.ndarray:
    """x in Q q to Q12: rounded right shift, or left shift of x clamped to +-2^18."""
    if q >= 12:
        return roundnorm(x, q - 12)
    return np.clip(i64(x), -(1 << 18), 1 << 18) << (12 - q)


def activation(acc, norm: int, oper: int, lb: int = -(1 << 15), ub: int = (1 << 15) - 1, bits: int = 15):
    """CNN_Activation: the int32 accumulator acc (Q i+w) normalised by norm (to Q o) and
    activated; ub is o for HSIGMOID/HSWISH/SWISH; saturated to `bits` (int64 result)."""
    acc = wrap32(acc)
    x = roundnorm(acc, norm)
    if oper in (KACT_HSIGMOID, KACT_HSWISH, KACT_SWISH):
        o = int(ub)
        xs = np.clip(x, -(1 << 24), 1 << 24)
        r6 = np.clip(xs + (3 << o), 0, 6 << o)
        if oper == KACT_HSIGMOID:
            y = roundnorm64(r6 * C_SIXTH, 15)
        elif oper == KACT_HSWISH:
            y = roundnorm64(roundnorm64(r6 * xs, o) * C_SIXTH, 15)
        else:
            y = roundnorm64(xs * sigmoid_q12(to_q12(xs, o)), 15)
    elif oper == KACT_LEAKY:
        y = np.where(x < 0, roundnorm64(x * LEAK_CONSTANT, 12), x)
    elif oper in (KACT_SIGMOID, KACT_TANH):
        x12 = to_q12(acc, norm + bits)
        r = sigmoid_q12(x12) if oper == KACT_SIGMOID else tanh_q12(x12)
        y = r if bits == 15 else roundnorm(r, 15 - bits)
    else:
        y = np.clip(x, lb, ub)
    return sat(y, bits)


def relu_bounds(oper: int, bits: int, relun: int = 6, out_q: int = 0) -> tuple:
    """(LB, UB) the original's CNN_SetUpperLowerBounds gives NONE, RELU, RELUN."""
    lo, hi = -(1 << bits), (1 << bits) - 1
    if oper == KACT_RELU:
        return 0, hi
    if oper == KACT_RELUN:
        return 0, min(relun << out_q, hi)
    return lo, hi


# ---------------------------------------------------------------------------------------------
# Set bias


def set_bias(bias, w: int, h: int, norm_bias: int = 0, dp: bool = False) -> np.ndarray:
    """KerParSetBias_*: [F, H, W] planes of Bias[f] (single precision) or Bias[f] << NormBias
    (DP, int32)."""
    b = i64(bias)
    if dp:
        return np.broadcast_to(lshift(b, norm_bias)[:, None, None], (len(b), h, w)).astype(np.int32)
    return np.broadcast_to(b[:, None, None], (len(b), h, w)).astype(np.asarray(bias).dtype)


# ---------------------------------------------------------------------------------------------
# Convolutions


def out_dim(used: int, f: int, s: int, d: int, pad_before: int, pad_after: int) -> int:
    """Outputs along one dimension: (Used - (D*(F-1)+1) + pads) / S + 1."""
    return (used - (d * (f - 1) + 1) + pad_before + pad_after) // s + 1


def conv_taps(inp, used_w: int, used_h: int, fx: int, fy: int, sx: int, sy: int, dx: int, dy: int, pad) -> np.ndarray:
    """[C, Fy, Fx, Ho, Wo] int64: the input item each tap of each output reads (zero outside
    [0, UsedH) x [0, UsedW)); pad = (left, right, top, bottom)."""
    inp = i64(inp)
    c = inp.shape[0]
    pl, pr, pt, pb = pad
    wo, ho = out_dim(used_w, fx, sx, dx, pl, pr), out_dim(used_h, fy, sy, dy, pt, pb)
    big = np.zeros((c, pt + used_h + dy * fy + sy * ho + 1, pl + used_w + dx * fx + sx * wo + 1), dtype=np.int64)
    big[:, pt:pt + used_h, pl:pl + used_w] = inp[:, :used_h, :used_w]
    taps = np.empty((c, fy, fx, ho, wo), dtype=np.int64)
    for i in range(fy):
        for j in range(fx):
            taps[:, i, j] = big[:, i * dy:i * dy + sy * ho:sy, j * dx:j * dx + sx * wo:sx][:, :ho, :wo]
    return taps


def conv(inp, filt, out, mode: str, norm: int = 0, pad=(0, 0, 0, 0), stride=(1, 1), dilation=(1, 1),
         used=None, bias=None, norm_bias: int = 0) -> np.ndarray:
    """The convolution kernels on whole tensors.

    inp: [InFeat, H, W] (UsedW x UsedH read, ``used=(UsedW, UsedH)``, default the whole plane);
    filt: [OutFeat, InFeat, Fy, Fx] (regular) or [Feat, Fy, Fx] (depth wise); stride (Sx, Sy),
    dilation (Dx, Dy), pad (left, right, top, bottom). ``mode``:

    * ``"sp"``: out (narrow, [OutFeat, Ho, Wo], e.g. from set_bias) updated input feature after
      input feature: out = sat(roundnorm((out << norm) + conv_if, norm));
    * ``"dp"``: out (int32) + sum over inputs of the convolutions, wrapping;
    * ``"dw"``: sat(roundnorm((bias << norm_bias) + conv_f, norm)), narrow (out unused);
    * ``"dwdp"``: (bias << norm_bias) + conv_f, int32 (out unused).
    """
    inp = np.asarray(inp)
    filt_ = i64(filt)
    used_w, used_h = used if used is not None else (inp.shape[2], inp.shape[1])
    fy, fx = filt_.shape[-2:]
    taps = conv_taps(inp, used_w, used_h, fx, fy, stride[0], stride[1], dilation[0], dilation[1], pad)
    bits = bits_of(inp.dtype)
    if mode in ("dw", "dwdp"):
        sums = wrap32(np.einsum("cijhw,cij->chw", taps, filt_))
        acc = wrap32(sums + lshift(i64(bias), norm_bias)[:, None, None])
        if mode == "dwdp":
            return acc.astype(np.int32)
        return sat(roundnorm(acc, norm), bits).astype(inp.dtype)
    res = i64(out).copy()
    if mode == "dp":
        sums = np.einsum("cijhw,ocij->ohw", taps, filt_)
        return wrap32(res + sums).astype(np.int32)
    for c in range(taps.shape[0]):
        sums = np.einsum("ijhw,oij->ohw", taps[c], filt_[:, c])
        res = sat(roundnorm(wrap32(sums + lshift(res, norm)), norm), bits)
    return res.astype(np.asarray(out).dtype)


# ---------------------------------------------------------------------------------------------
# DP reduction with activation


def dp_reduct(acc, norm: int, oper: int = KACT_NONE, lb: int = None, ub: int = None, out_dtype=np.int16):
    """KerDP*_fp/_fps (and the _IO forms): every int32 item activated (CNN_Activation)."""
    bits = bits_of(out_dtype)
    lb = -(1 << bits) if lb is None else lb
    ub = (1 << bits) - 1 if ub is None else ub
    return activation(acc, norm, oper, lb, ub, bits).astype(out_dtype)


# ---------------------------------------------------------------------------------------------
# Pooling


def pool(inp, size=(2, 2), stride=(2, 2), dilation=(1, 1), pad=(0, 0, 0, 0), avg: bool = False,
         relu: bool = False, lb: int = 0, ub: int = None, used=None) -> np.ndarray:
    """KerParPool*/KerPool*: max (or average: roundnorm(sum * (65536 // (Mx*My)), 16)) over the
    zero-padded window; with relu the result is clipped to [lb, ub]."""
    inp = np.asarray(inp)
    used_w, used_h = used if used is not None else (inp.shape[2], inp.shape[1])
    taps = conv_taps(inp, used_w, used_h, size[0], size[1], stride[0], stride[1], dilation[0], dilation[1], pad)
    if avg:
        v = roundnorm(taps.sum(axis=(1, 2)) * ((1 << 16) // (size[0] * size[1])), 16)
    else:
        v = taps.max(axis=(1, 2))
    if relu:
        v = np.clip(v, lb, (1 << bits_of(inp.dtype)) - 1 if ub is None else ub)
    return v.astype(inp.dtype)


def act_only(inp, oper: int, lb: int = None, ub: int = None) -> np.ndarray:
    """KerParReLU/Hswish/Hsigmoid/Leakyrelu: the activation of items already in Q o (Norm 0)."""
    return dp_reduct(inp, 0, oper, lb, ub, np.asarray(inp).dtype)


def _div_round(s, n: int) -> np.ndarray:
    return (2 * i64(s) + n) // (2 * n)


def global_pool(inp, avg: bool) -> np.ndarray:
    """KerParGlobal{Max,Avg}Pool*: per feature the max, or the mean rounded half up."""
    inp = np.asarray(inp)
    flat = i64(inp).reshape(inp.shape[0], -1)
    v = _div_round(flat.sum(axis=1), flat.shape[1]) if avg else flat.max(axis=1)
    return sat(v, bits_of(inp.dtype)).astype(inp.dtype)


def global_pool_dp(inp, avg: bool, acc=None) -> np.ndarray:
    """KerParGlobal*PoolDP: the int32 running max / wrapping sum of one more tile [F, h, w]."""
    flat = i64(inp).reshape(np.asarray(inp).shape[0], -1)
    if avg:
        return wrap32(flat.sum(axis=1) + (0 if acc is None else i64(acc))).astype(np.int32)
    m = flat.max(axis=1)
    return (m if acc is None else np.maximum(m, i64(acc))).astype(np.int32)


def global_pool_reduct(acc, count: int, avg: bool, out_dtype) -> np.ndarray:
    v = _div_round(acc, count) if avg else i64(acc)
    return sat(v, bits_of(out_dtype)).astype(out_dtype)


# ---------------------------------------------------------------------------------------------
# Linear layers


def linear(inp, filt, bias, norm: int, norm_bias: int, oper: int = KACT_NONE, lb: int = None, ub: int = None,
           out_dtype=np.int16) -> np.ndarray:
    """KerParLinearLayer*: Out[i] = act((Bias[i] << NormBias) + sum_j In[j] * Filter[i][j]);
    filt [OutSize, InSize] (rows of TotalInSize: pass filt[:, :InSize])."""
    acc = wrap32(i64(filt) @ i64(inp) + lshift(i64(bias), norm_bias))
    return dp_reduct(acc, norm, oper, lb, ub, out_dtype)


# ---------------------------------------------------------------------------------------------
# Matrix addition


def mat_add(in1, in2, mode: str = "add", in1_q: int = 0, in2_q: int = 0, out_q: int = 0, lb: int = None,
            ub: int = None) -> np.ndarray:
    """KerParMatAdd ("add": sat(In1 + In2)), KerParMatAddReLU ("relu"), KerParMatAddDynAdjust
    ("dyn": ((A >> |Q1-Q2|) + B) << (Out_Q - min(Q1, Q2)), A the input of larger Q, clipped to
    [lb, ub])."""
    in1_ = np.asarray(in1)
    a, b = i64(in1), i64(in2)
    bits = bits_of(in1_.dtype)
    if mode == "dyn":
        hi, lo = (a, b) if in1_q >= in2_q else (b, a)
        s = (hi >> abs(in1_q - in2_q)) + lo
        v = np.clip(lshift(s, out_q - min(in1_q, in2_q)), -(1 << bits) if lb is None else lb,
                    (1 << bits) - 1 if ub is None else ub)
        return wrap16(v).astype(in1_.dtype) if bits == 15 else (((v + 128) & 0xFF) - 128).astype(in1_.dtype)
    v = sat(a + b, bits)
    if mode == "relu":
        v = np.maximum(v, 0)
    return v.astype(in1_.dtype)


# ---------------------------------------------------------------------------------------------
# Softmax


def exp_q15(x) -> np.ndarray:
    """Exp_fp_17_15 of CNN_SoftMax.c for x <= 0 in Q15: e^x in Q15 (uint32 values, int64)."""
    x = i64(x)
    y = -x
    intx = y >> 15
    fr = y & 0x7FFF
    up = (fr & 0x4000) != 0
    fr = np.where(up, fr - 0x8000, fr)
    intx = intx + up
    big = intx >= 12
    k = np.minimum(intx, 11)
    z = fr.copy()
    s = np.zeros_like(x)
    for i in range(1, 9):
        s = s + z * EXP_COEFF[i]
        z = wrap16(roundnorm(wrap16(z) * wrap16(fr), 15))
    r = (roundnorm(s, 15) + EXP_COEFF[0]) & 0xFFFF
    r = (((r * EXP_FRAC[k] + (1 << 14)) & 0xFFFFFFFF) >> 15) + r * EXP_INT[k]
    r &= 0xFFFFFFFF
    out = np.where(r != 0, (0x7FFFFFFF // np.maximum(r, 1)) >> 1, 0)
    out = np.where(big, 0, out)
    return np.where(x == 0, 0x8000, out)


def softmax(inp, norm: int) -> np.ndarray:
    """KerParSoftMax_fp/_fps: int16 Q15 probabilities of In (Q norm, 0..15)."""
    x = i64(inp)
    d = x - x.max()
    arg = wrap32(d << (15 - norm)) if norm <= 15 else d >> (norm - 15)
    e = exp_q15(arg)
    inv = (32767 << 15) // int(wrap32(e.sum()))
    return np.abs(roundnorm(wrap16(e) * inv, 15)).astype(np.int16)
