"""The numpy reference of the original's 1-byte SQ8 arithmetic (autotiler/generators/sq8_original.py).

Primitives against values worked out by hand from the formulas (docs/cnn-sq8-original.md); each
operator against a small hand example and against a plain-loop implementation written here with
Python integers, independent of the vectorised one.
"""

from __future__ import annotations

import numpy as np
import pytest

from autotiler.errors import ModelError
from autotiler.generators import sq8_original as q

# ---------------------------------------------------------------------------------------------
# Scalar helpers for the loop implementations (Python ints, 32-bit C semantics)


def w32(x: int) -> int:
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def rn(x: int, n: int) -> int:
    x = w32(x)
    return w32(x + (1 << (n - 1))) >> n if n else x


def sc(x: int, s: int, n: int) -> int:
    return rn(w32(x * s), n)


def c8(x: int) -> int:
    return max(-128, min(127, x))


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------------------------
# Primitives


def test_at_norm_rounds_half_up():
    assert q.at_norm(5, 1) == 3            # 2.5 -> 3
    assert q.at_norm(-5, 1) == -2          # -2.5 -> -2 (half up, not away from zero)
    assert q.at_norm(-6, 2) == -1          # -1.5 -> -1
    assert q.at_norm(-7, 2) == -2          # -1.75 -> -2
    assert q.at_norm(7, 0) == 7            # no rounding term at shift 0
    assert list(q.at_norm([6, 6, 6], [0, 1, 2])) == [6, 3, 2]


def test_at_norm_wraps_like_c_int():
    assert q.at_norm((1 << 31) - 1, 1) == -(1 << 30)     # the + 1 wraps to INT_MIN before the shift


def test_at_scale_is_a_32_bit_product_then_one_rounding():
    assert q.at_scale(100, 200, 8) == 78         # 20000 / 256 = 78.125
    assert q.at_scale(-3, 1, 1) == -1            # -1.5 -> -1
    assert q.at_scale(3, 1, 1) == 2              # 1.5 -> 2
    assert q.at_scale(1 << 24, 255, 0) == -16777216   # 0xFF000000 as an int
    assert q.at_scale(123, 1, 0) == 123          # identity pair


def test_at_scale_rejects_non_byte_scale_and_bad_shift():
    with pytest.raises(ModelError):
        q.at_scale(1, 256, 0)
    with pytest.raises(ModelError):
        q.at_scale(1, -1, 0)
    with pytest.raises(ModelError):
        q.at_norm(1, 32)


def test_clips():
    assert list(q.clip8([-300, -128, 0, 127, 300])) == [-128, -128, 0, 127, 127]
    assert list(q.clipu([-5, 50, 200], 7)) == [0, 50, 127]
    assert list(q.clip_pos([-5, 3, 10], 6)) == [0, 3, 6]
    assert list(q.out_clip([-200, 200], unsigned=False, n_bits=8)) == [-128, 127]
    assert list(q.out_clip([-200, 300], unsigned=True, n_bits=8)) == [0, 255]


def test_compute_scales_like_nntool():
    sc_, sn = q.compute_scales([0.5, 1.0, 0.1, 3.0, 0.75, 0.999])
    assert sc_.dtype == np.uint8 and sn.dtype == np.int8
    # 0.5 = 1/2; 1.0 = 1/1; 0.1 ~ 205/2048; 3.0 = 3/1; 0.75 = 3/4 (odd multiplier);
    # 0.999: 256/256 overflows, then even multipliers shrink to 1/1
    assert list(sc_) == [1, 1, 205, 3, 3, 1]
    assert list(sn) == [1, 0, 11, 0, 2, 0]


def test_compute_scales_with_fewer_bits():
    s, n = q.compute_scales(0.1, available_bits=7)    # 102/1024 even -> 51/512
    assert (int(s[0]), int(n[0])) == (51, 9)
    assert q.filter_available_bits(3 * 3 * 64) == 7   # 31 - (10 + 14)
    assert q.filter_available_bits(1) == 17


def test_compute_scales_rejects_what_no_kernel_can_apply():
    with pytest.raises(ModelError):
        q.compute_scales(300.0)         # needs a left shift
    with pytest.raises(ModelError):
        q.compute_scales(-0.5)


def test_compute_scales_error_is_small():
    s = np.geomspace(1e-4, 0.99, 200)
    a, n = q.compute_scales(s)
    rel = np.abs(q.scale_value(a, n) / s - 1)
    assert rel.max() < 1 / 128 + 1e-9        # at most 8 significant bits


def test_sigmoid_and_tanh_tables():
    lut = q.default_sigmoid_lut()
    assert lut[0] == 32768 and lut[24] == 47911      # round(65536 * sigmoid(1))
    assert q.sigmoid_table(0) == 16384               # x <= 0: (65536 - 32768) >> 1
    assert q.sigmoid_table(4096) == 47911 >> 1       # x = 1.0 in Q12 -> index 24
    assert q.sigmoid_table(-4096) == (65536 - 47911) >> 1
    assert q.sigmoid_table(1 << 20) == 0xFFFF >> 1   # past the table
    assert q.tanh_table(0) == 0
    assert q.tanh_table(2048) == 47911 - 32768       # tanh(0.5) = 2 sigmoid(1) - 1
    assert q.tanh_table(-2048) == 32768 - 47911
    other = lut.copy()
    other[24] = 40000
    assert q.sigmoid_table(4096, lut=other) == 20000


# ---------------------------------------------------------------------------------------------
# Activations


def test_act_switch_relu_family():
    P = q.ActParams
    assert list(q.act_switch([-5, 10], "relu", P(3, 1))) == [0, 15]
    assert list(q.act_switch([-5, 3, 10], "relun", P(1, 0, a0=6))) == [0, 3, 6]
    assert list(q.act_switch([-5, 2], "relum", P(1, 0, a0=-3))) == [-3, 2]
    assert list(q.act_switch([-5, 2, 9], "relumn", P(1, 0, a0=-3, b0=4))) == [-3, 2, 4]
    assert list(q.act_switch([-5, 9], "none", P(0, 0))) == [-5, 9]      # no scaling at all
    assert list(q.act_switch([-5, 9], "htanh", P(7, 3))) == [-5, 9]     # the macro does nothing
    assert list(q.act_switch([5], "relu", P(0, 0))) == [0]               # ActScale 0 multiplies by 0


def test_act_switch_hard_sigmoid_and_swish_add_c0():
    p = q.ActParams(10, 3, a0=12, b0=6, c0=2)
    # clip_pos(acc + 6, 12) = [0, 6, 9, 12]; * 10 >> 3 rounded = [0, 8, 11, 15]; + 2
    assert list(q.act_switch([-10, 0, 3, 20], "hsigmoid", p)) == [2, 10, 13, 17]
    p = q.ActParams(1, 2, a0=12, b0=6, c0=2)
    # [0, 6, 9, 12] * acc = [0, 0, 27, 240]; >> 2 rounded = [0, 0, 7, 60]; + 2
    assert list(q.act_switch([-10, 0, 3, 20], "hswish", p)) == [2, 2, 9, 62]


def test_act_switch_leaky_relu():
    # -100 * 13 = -1300, (-1300 + 64) >> 7 = -10; positive side unchanged; then + B0
    assert list(q.act_switch([-100, 50], "leakyrelu", q.ActParams(1, 0, a0=13))) == [-10, 50]
    assert list(q.act_switch([-100, 50], "leakyrelu", q.ActParams(1, 0, a0=13, b0=3))) == [-7, 53]


def test_act_switch_sigmoid_tanh_input_shift():
    p = q.ActParams(1, 8)
    # 8-bit input: 16 << 8 = 4096 (1.0 in Q12) -> 23955 -> (23955 + 128) >> 8 = 94
    assert q.act_switch(16, "sigmoid", p, in_bits=8) == 94
    assert q.act_switch(4096, "sigmoid", p, in_bits=32) == 94     # no shift after a reduction
    assert q.act_switch(16, "sigmoid", p, in_bits=32) == (16384 + 128) >> 8
    t = q.act_switch(8, "tanh", p, in_bits=8)                     # 0.5 in Q12
    assert t == (15143 + 128) >> 8
    assert q.act_switch(8, "tanh", q.ActParams(1, 8, a0=5), in_bits=8, unsigned=True) == t + 5


def test_act_c0_mul_multiplies_by_c0():
    p = q.ActParams(1, 8, a0=6, b0=3, c0=43)
    # clip_pos(3 + 3, 6) * 43 = 258 -> (258 + 128) >> 8 = 1
    assert q.act_c0_mul(3, "hsigmoid", p) == 1
    assert q.act_c0_mul(3, "hswish", p) == (258 * 3 + 128) >> 8
    assert list(q.act_c0_mul([-4, 9], "relun", q.ActParams(1, 0, a0=6))) == [0, 6]
    with pytest.raises(ModelError):
        q.act_c0_mul(1, "sigmoid")


def test_standalone_activation_clips_to_int8():
    x = np.array([[[-128, -1, 0, 127]]], dtype=np.int8)
    out = q.activation(x, "relu", q.ActParams(3, 0))
    assert out.dtype == np.int8 and list(out.ravel()) == [0, 0, 0, 127]
    with pytest.raises(ModelError):
        q.activation(x, "gelu")


# ---------------------------------------------------------------------------------------------
# Infos


def test_infos_bytes_and_signedness():
    info = q.Infos(act_scale=200, act_scale_n=9, a0=-3, b0=100, c0=-128, scale=17, scale_n=4,
                   out_scale=250, out_scale_n=30, prenorm=2)
    b = info.to_bytes()
    assert b.size == q.AT_INF_DIM + 1 and b.dtype == np.uint8
    assert (b[q.AT_INF_A0], b[q.AT_INF_A0 + 1]) == (253, 255)       # little-endian int16 -3
    assert b[q.AT_INF_OUTSCALEN] == 30 and b[q.AT_INF_PRENORM] == 2
    assert q.read_infos(b, signed_params=True) == info
    u = q.read_infos(b, signed_params=False)
    assert (u.a0, u.b0, u.c0) == (253, 100, 128)
    assert q.read_infos(b[:q.AT_INF_DIM], True).prenorm == 0
    with pytest.raises(ModelError):
        q.read_infos(b[:5], True)


def test_infos_indices():
    assert (q.AT_INF_ACTSCALE, q.AT_INF_ACTSCALEN, q.AT_INF_A0, q.AT_INF_B0, q.AT_INF_C0) == (0, 1, 2, 4, 6)
    assert q.AT_INF_BIASN == q.AT_INF_IN1SCALE == q.AT_INF_SCALE == 8
    assert q.AT_INF_SCALEN == q.AT_INF_IN1SCALEN == 9
    assert q.AT_INF_OUTSCALE == q.AT_INF_OUTZEROPOINT == 10 and q.AT_INF_OUTSCALEN == 11
    assert q.AT_INF_DIM == q.AT_INF_PRENORM == 12


# ---------------------------------------------------------------------------------------------
# Convolution


def conv_loop(inp, filt, bias, scale, scale_n, stride, dilation, pad, depthwise, norm_bias, prenorm, act, p):
    cin, h, w = inp.shape
    fy, fx = filt.shape[-2:]
    pl, pr, pt, pb = pad
    wo = (w + pl + pr - (dilation[0] * (fx - 1) + 1)) // stride[0] + 1
    ho = (h + pt + pb - (dilation[1] * (fy - 1) + 1)) // stride[1] + 1
    cout = filt.shape[0]
    out = np.zeros((cout, ho, wo), dtype=np.int64)
    for o in range(cout):
        for y in range(ho):
            for x in range(wo):
                acc = w32(int(bias[o]) << norm_bias)
                chans = [o] if depthwise else range(cin)
                for c in chans:
                    for i in range(fy):
                        for j in range(fx):
                            iy = y * stride[1] - pt + i * dilation[1]
                            ix = x * stride[0] - pl + j * dilation[0]
                            if 0 <= iy < h and 0 <= ix < w:
                                k = filt[o, i, j] if depthwise else filt[o, c, i, j]
                                acc = w32(acc + int(inp[c, iy, ix]) * int(k))
                v = sc(rn(acc, prenorm), int(scale[o]), int(scale_n[o]))
                if act == "relu":
                    v = sc(max(0, v), p.act_scale, p.act_scale_n)
                elif act == "relun":
                    v = sc(max(0, min(v, p.a0)), p.act_scale, p.act_scale_n)
                out[o, y, x] = c8(v)
    return out


def test_conv_hand_example():
    inp = np.array([[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], dtype=np.int8)
    filt = np.array([[[[1, 0], [0, -1]]]], dtype=np.int8)     # x[i][j] - x[i+1][j+1] = -4 everywhere
    out = q.conv(inp, filt, [10], [3], [1])                    # (10 - 4) * 3 / 2 = 9
    assert out.dtype == np.int8 and out.tolist() == [[[9, 9], [9, 9]]]
    out = q.conv(inp, filt, [0], [1], [0], pad=(1, 0, 1, 0))   # top/left padding reads 0
    assert out.tolist() == [[[-1, -2, -3], [-4, -4, -4], [-7, -4, -4]]]


def test_conv_bias_shift_and_prenorm():
    inp = np.zeros((1, 1, 1), dtype=np.int8)
    filt = np.ones((2, 1, 1, 1), dtype=np.int8)
    out = q.conv(inp, filt, [3, -3], [1, 1], [0, 0], norm_bias=4)          # bias << 4
    assert out.ravel().tolist() == [48, -48]
    out = q.conv(inp, filt, [3, -3], [1, 1], [0, 0], norm_bias=4, prenorm=3)   # then >> 3 rounded
    assert out.ravel().tolist() == [6, -6]


@pytest.mark.parametrize("case", [
    dict(stride=(1, 1), dilation=(1, 1), pad=(1, 1, 1, 1), depthwise=False, act="none"),
    dict(stride=(2, 2), dilation=(1, 1), pad=(0, 1, 0, 1), depthwise=False, act="relu"),
    dict(stride=(1, 2), dilation=(2, 1), pad=(2, 1, 0, 2), depthwise=False, act="relun"),
    dict(stride=(2, 1), dilation=(1, 1), pad=(1, 1, 1, 1), depthwise=True, act="relu"),
    dict(stride=(1, 1), dilation=(2, 2), pad=(2, 2, 2, 2), depthwise=True, act="none"),
])
def test_conv_against_loop(case):
    r = rng(hash(str(case)) % 1000)
    cin, h, w = 3, 6, 7
    cout = cin if case["depthwise"] else 4
    inp = r.integers(-128, 128, (cin, h, w)).astype(np.int8)
    fshape = (cout, 3, 3) if case["depthwise"] else (cout, cin, 3, 3)
    filt = r.integers(-128, 128, fshape).astype(np.int8)
    bias = r.integers(-2000, 2000, cout).astype(np.int32)
    scale, scale_n = r.integers(1, 256, cout), r.integers(8, 16, cout)
    p = q.ActParams(int(r.integers(1, 256)), int(r.integers(5, 9)), a0=90)
    got = q.conv(inp, filt, bias, scale, scale_n, stride=case["stride"], dilation=case["dilation"], pad=case["pad"],
                 depthwise=case["depthwise"], norm_bias=2, prenorm=1, act=case["act"], p=p)
    want = conv_loop(inp, filt, bias, scale, scale_n, case["stride"], case["dilation"], case["pad"],
                     case["depthwise"], 2, 1, case["act"], p)
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, want)


def test_conv_misuse():
    inp = np.zeros((2, 3, 3), dtype=np.int8)
    with pytest.raises(ModelError):
        q.conv(inp, np.zeros((1, 3, 1, 1)), [0], [1], [0])          # Cin mismatch
    with pytest.raises(ModelError):
        q.conv(inp, np.zeros((1, 2, 1, 1)), [0, 0], [1], [0])       # two biases for one channel
    with pytest.raises(ModelError):
        q.conv(inp, np.zeros((1, 2, 5, 5)), [0], [1], [0])          # window does not fit
    with pytest.raises(ModelError):
        q.conv(inp[0], np.zeros((1, 2, 1, 1)), [0], [1], [0])       # not CHW


def test_reduct_does_not_clip_before_the_activation():
    # 2000 stays 2000 after the channel scale (a clip to 127 there, as the pre-2023 library did,
    # would give 127 -> 8 - 20 = -12): clip_pos(2000, 255) = 255, 255/16 -> 16, + C0 = -4
    p = q.ActParams(1, 4, a0=255, b0=0, c0=-20)
    acc = np.array([[2000]], dtype=np.int64)
    assert q.reduct(acc, [1], [0], "hsigmoid", p).tolist() == [[-4]]


# ---------------------------------------------------------------------------------------------
# Linear and MatMul


def test_linear_against_loop():
    r = rng(7)
    x = r.integers(-128, 128, 37).astype(np.int8)
    wts = r.integers(-128, 128, (5, 37)).astype(np.int8)
    bias = r.integers(-30000, 30000, 5).astype(np.int16)
    s, n = r.integers(1, 256, 5), r.integers(10, 18, 5)
    p = q.ActParams(200, 8)
    got = q.linear(x, wts, bias, s, n, norm_bias=3, act="relu", p=p)
    want = []
    for i in range(5):
        acc = w32(int(bias[i]) << 3)
        for j in range(37):
            acc = w32(acc + int(x[j]) * int(wts[i, j]))
        want.append(c8(sc(max(0, sc(acc, int(s[i]), int(n[i]))), 200, 8)))
    assert got.tolist() == want


def test_matmul_hand_example():
    a = np.array([[1, 2], [3, 4]], dtype=np.int8)
    b = np.array([[5, 6, 7], [8, 9, 10]], dtype=np.int8)
    out = q.matmul(a, b, [0, 1], [1, 1], [0, 1])
    # row 0: [21, 24, 27], scale 1/1; row 1: [47, 54, 61] + bias 1 = [48, 55, 62], / 2 half up
    assert out.tolist() == [[21, 24, 27], [24, 28, 31]]
    with pytest.raises(ModelError):
        q.matmul(a, b.T, [0, 0], [1, 1], [0, 0])


# ---------------------------------------------------------------------------------------------
# Pooling


def test_max_pool_border_windows_start_from_zero():
    inp = np.array([[[-5, -6], [-7, -8]]], dtype=np.int8)
    assert q.pool(inp, "max", (2, 2), (2, 2)).tolist() == [[[-5]]]
    # every window touches the padding: max(0, in-image taps) = 0
    assert q.pool(inp, "max", (2, 2), (2, 2), pad=(1, 1, 1, 1)).tolist() == [[[0, 0], [0, 0]]]


def test_avg_pool_divides_by_the_full_window():
    inp = np.array([[[4, 8], [12, 16]]], dtype=np.int8)
    assert q.pool(inp, "avg", (2, 2), (2, 2)).tolist() == [[[10]]]
    assert q.pool(inp, "avg", (2, 2), (2, 2), pad=(1, 1, 1, 1)).tolist() == [[[1, 2], [3, 4]]]
    nine = np.full((1, 3, 3), 100, dtype=np.int8)          # 900 * 7281 -> 100.49 -> 100
    assert q.pool(nine, "avg", (3, 3), (1, 1)).tolist() == [[[100]]]
    nine = np.full((1, 3, 3), 127, dtype=np.int8)
    assert q.pool(nine, "avg", (3, 3), (1, 1)).tolist() == [[[127]]]
    minus = np.array([[[-1, -2], [-2, -1]]], dtype=np.int8)   # -6/4 = -1.5 -> -1 (half up)
    assert q.pool(minus, "avg", (2, 2), (2, 2)).tolist() == [[[-1]]]


def test_pool_activation_and_scale():
    inp = np.array([[[-9, 5], [7, 2]]], dtype=np.int8)
    assert q.pool(inp, "max", (1, 1), (1, 1), act="relu", p=q.ActParams(0, 0)).tolist() == [[[0, 5], [7, 2]]]
    assert q.pool(inp, "max", (1, 1), (1, 1), act="relun", p=q.ActParams(0, 0, a0=6)).tolist() == [[[0, 5], [6, 2]]]
    # ActScale set: scaled (3/2) when DoScale, untouched when not
    assert q.pool(inp, "max", (1, 1), (1, 1), p=q.ActParams(3, 1)).tolist() == [[[-13, 8], [11, 3]]]
    assert q.pool(inp, "max", (1, 1), (1, 1), p=q.ActParams(3, 1), do_scale=False).tolist() == inp.tolist()
    with pytest.raises(ModelError):
        q.pool(inp, "max", act="hswish")
    with pytest.raises(ModelError):
        q.pool(inp, "min")


def test_pool_against_loop():
    r = rng(3)
    inp = r.integers(-128, 128, (2, 7, 8)).astype(np.int8)
    for kind in ("max", "avg"):
        for size, stride, pad in (((3, 3), (2, 2), (1, 1, 1, 1)), ((2, 3), (1, 2), (0, 1, 1, 0))):
            got = q.pool(inp, kind, size, stride, pad)
            fx, fy = size
            pl, pr, pt, pb = pad
            wo = (8 + pl + pr - fx) // stride[0] + 1
            ho = (7 + pt + pb - fy) // stride[1] + 1
            for c in range(2):
                for y in range(ho):
                    for x in range(wo):
                        vals, inside = [], True
                        for i in range(fy):
                            for j in range(fx):
                                iy, ix = y * stride[1] - pt + i, x * stride[0] - pl + j
                                if 0 <= iy < 7 and 0 <= ix < 8:
                                    vals.append(int(inp[c, iy, ix]))
                                else:
                                    inside = False
                        if kind == "max":
                            v = max(vals) if inside else max([0] + vals)
                        else:
                            v = rn(sum(vals) * (65536 // (fx * fy)), 16)
                            v = v if inside else c8(v)
                        assert got[c, y, x] == v, (kind, size, c, y, x)


def test_global_pool():
    # mean -3.5: (-7 << 7) / 2 = -448, (-448 + 64) >> 7 = -3
    assert q.global_pool(np.array([[[-3, -4]]], dtype=np.int8), "avg").tolist() == [[[-3]]]
    # C division truncates: -66 * 128 / 130 = -64.98 -> -64 -> 0 (a floor division would give -1)
    x = np.zeros((1, 10, 13), dtype=np.int8)
    x.ravel()[:66] = -1
    assert q.global_pool(x, "avg").tolist() == [[[0]]]
    # Scale/ScaleN from Infos: 2 * 100 rounded back with shift 8 -> 100 * 2 / 2 = 100
    y = np.full((2, 2, 2), 100, dtype=np.int8)
    assert q.global_pool(y, "avg", scale=2, scale_n=8).ravel().tolist() == [100, 100]
    z = np.array([[[-100, -120]], [[5, 60]]], dtype=np.int8)
    assert q.global_pool(z, "max").ravel().tolist() == [-100, 60]
    assert q.global_pool(z, "max", act_scale=3, act_scale_n=1).ravel().tolist() == [-128, 90]


# ---------------------------------------------------------------------------------------------
# MatAdd, tensor x vector, softmax


def test_matadd_hand_examples():
    a = np.array([10, -10], dtype=np.int8)
    b = np.array([5, 5], dtype=np.int8)
    # In1 * 3/2 = [15, -15]; + In2 = [20, -10]; * 1/2 rounded half up = [10, -5]
    kw = dict(in1_scale=3, in1_scale_n=1, out_scale=1, out_scale_n=1)
    assert q.matadd(a, b, **kw).tolist() == [10, -5]
    assert q.matadd(a, b, **kw, act="relu", p=q.ActParams(0, 0)).tolist() == [10, 0]
    assert q.matadd(a, b, **kw, act="relun", p=q.ActParams(0, 0, a0=6)).tolist() == [6, 0]
    assert q.matadd(a, b).tolist() == [15, -5]                     # both scales 0: plain sum
    big = np.array([100], dtype=np.int8)
    assert q.matadd(big, big).tolist() == [127]
    # the kernel's quirk: ActScale set, no In1/Out scale -> scaled by OutScale = 0
    assert q.matadd(a, b, act="relun", p=q.ActParams(1, 0, a0=6)).tolist() == [0, 0]
    with pytest.raises(ModelError):
        q.matadd(a, b[:1])
    with pytest.raises(ModelError):
        q.matadd(a, b, act="sigmoid")


def test_matadd_against_loop():
    r = rng(11)
    a = r.integers(-128, 128, (3, 4, 5)).astype(np.int8)
    b = r.integers(-128, 128, (3, 4, 5)).astype(np.int8)
    p = q.ActParams(150, 7, a0=10, b0=3, c0=21)
    for act in ("none", "relu", "relun", "hsigmoid", "hswish", "leakyrelu"):
        got = q.matadd(a, b, in1_scale=77, in1_scale_n=6, out_scale=190, out_scale_n=8, act=act, p=p)
        for x, y, g in zip(a.ravel().tolist(), b.ravel().tolist(), got.ravel().tolist()):
            s = sc(sc(x, 77, 6) + y, 190, 8)
            if act == "none":
                v = c8(s)
            elif act == "relu":
                v = max(0, min(127, sc(s, 150, 7)))
            elif act == "relun":
                v = c8(sc(max(0, min(s, 10)), 150, 7))
            elif act == "leakyrelu":
                t = c8(s)
                v = c8(sc(rn(t * 10, 7) if t < 0 else t, 150, 7))
            else:
                t = c8(s)
                m = max(0, min(t + 3, 10)) * 21
                v = c8(sc(m if act == "hsigmoid" else m * t, 150, 7))
            assert g == v, act


def test_tensor_vect_mult():
    x = np.array([[[10, -10]]], dtype=np.int8)
    # 10 * 5 * 3 = 150 -> 150 / 16 = 9.375 -> 9; -150 / 16 = -9.375 -> -9
    assert q.tensor_vect_mult(x, [3], scale=5, scale_n=4).tolist() == [[[9, -9]]]
    # Scale 0: no multiplier, 30 / 4 = 7.5 -> 8
    assert q.tensor_vect_mult(x, [3], scale=0, scale_n=2).tolist() == [[[8, -7]]]
    r = rng(5)
    t = r.integers(-128, 128, (3, 2, 3)).astype(np.int8)
    v = r.integers(-128, 128, 3).astype(np.int8)
    got = q.tensor_vect_mult(t, v, scale=37, scale_n=11, act="relu", p=q.ActParams(1, 0))
    for c in range(3):
        for i, e in enumerate(t[c].ravel().tolist()):
            assert got[c].ravel()[i] == c8(max(0, rn(w32(e * 37 * int(v[c])), 11)))
    with pytest.raises(ModelError):
        q.tensor_vect_mult(t, v[:2], scale=1, scale_n=0)


def test_softmax_q15():
    assert q.softmax_q15(np.array([0, 0], dtype=np.int8), 0).tolist() == [16383, 16383]
    assert q.softmax_q15(np.array([5], dtype=np.int8), 0).tolist() == [32767]
    r = rng(9)
    x = r.integers(-128, 128, (4, 10)).astype(np.int8)
    out = q.softmax_q15(x, 11)
    assert out.dtype == np.int16 and out.shape == (4, 10)
    assert np.all(np.abs(out.astype(np.int64).sum(axis=1) - 32767) <= 10)
    # argmax preserved, row by row independent
    assert np.array_equal(out.argmax(axis=1), x.argmax(axis=1))
    np.testing.assert_array_equal(out[1], q.softmax_q15(x[1], 11))
    with pytest.raises(ModelError):
        q.softmax_q15(x, 40)
