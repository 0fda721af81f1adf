"""autotiler.generators.sq8_tflm against TensorFlow Lite Micro's own kernels, bit for bit.

Each single-operator int8 model of tests/models/sq8 (made by tests/models/make_sq8_models.py with
TensorFlow's converter; TensorFlow never runs here) is run by the ``tflite-micro`` package on random
int8 inputs (several seeds, plus all -128 and all 127), and the numpy reference, called with the
parameters of the model's JSON sidecar, must give the same bytes. Property tests check the
fixed-point primitives against plain Python integers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autotiler.errors import ModelError
from autotiler.generators import sq8_tflm as R

MODELS = Path(__file__).resolve().parent / "models" / "sq8"
SIDECARS = sorted(MODELS.glob("*.json"))
SEEDS = 12

runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime",
                              reason="tflite-micro is in the test extra: pip install tflite-micro")


def _q(t: dict) -> R.QParams:
    return R.QParams(t["scales"][0], t["zero_points"][0])


def _arr(t: dict, dtype) -> np.ndarray:
    return np.asarray(t["data"], dtype=dtype).reshape(t["shape"])


def reference(side: dict, inputs: list) -> np.ndarray:
    """Call the reference for the model described by ``side`` on its graph inputs."""
    op, o, ins, out = side["op"], side["options"], side["inputs"], side["outputs"][0]
    oq = _q(out)
    act = o.get("fusedActivationFunction", "NONE")
    x = inputs[0]
    if op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
        w = _arr(ins[1], np.int8)
        b = _arr(ins[2], np.int32) if len(ins) > 2 and ins[2] is not None else None
        wq = R.FilterQParams(tuple(ins[1]["scales"]))
        if op == "FULLY_CONNECTED":
            return R.fully_connected(x, w, b, _q(ins[0]), wq, oq, act).reshape(out["shape"])
        kw = dict(stride=(o["strideH"], o["strideW"]), dilation=(o["dilationHFactor"], o["dilationWFactor"]),
                  padding=o["padding"], activation=act)
        if op == "CONV_2D":
            return R.conv2d(x, w, b, _q(ins[0]), wq, oq, **kw)
        return R.depthwise_conv2d(x, w, b, _q(ins[0]), wq, oq, depth_multiplier=o["depthMultiplier"], **kw)
    if op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        f = R.average_pool2d if op == "AVERAGE_POOL_2D" else R.max_pool2d
        return f(x, _q(ins[0]), oq, (o["filterHeight"], o["filterWidth"]), (o["strideH"], o["strideW"]),
                 o["padding"], act)
    if op in ("ADD", "SUB", "MUL"):
        f = {"ADD": R.add, "SUB": R.sub, "MUL": R.mul}[op]
        return f(inputs[0], inputs[1], _q(ins[0]), _q(ins[1]), oq, act)
    if op == "SOFTMAX":
        return R.softmax(x, _q(ins[0]), oq, o["beta"])
    if op == "MEAN":
        assert sorted(ins[1]["data"]) == [1, 2] and o["keepDims"]
        return R.mean_hw(x, _q(ins[0]), oq)
    if op == "LEAKY_RELU":
        return R.leaky_relu(x, _q(ins[0]), oq, o["alpha"])
    if op == "SUM":
        assert sorted(ins[1]["data"]) == [1, 2] and o["keepDims"]
        return R.sum_hw(x, _q(ins[0]), oq)
    if op == "REDUCE_MAX":
        assert sorted(ins[1]["data"]) == [1, 2] and o["keepDims"]
        return R.reduce_max_hw(x, _q(ins[0]), oq)
    if op == "CONCATENATION":
        return R.concatenation(inputs, [_q(t) for t in ins], oq, o["axis"])
    if op == "TRANSPOSE":
        return np.transpose(x, ins[1]["data"])
    f = {"LOGISTIC": R.logistic, "TANH": R.tanh, "HARD_SWISH": R.hard_swish, "QUANTIZE": R.quantize, "RELU": R.relu,
         "RELU6": R.relu6}[op]
    return f(x, _q(ins[0]), oq)


def draws(side: dict):
    """Random int8 inputs per seed, then all -128, all 127, and a ramp over the whole int8 range."""
    shapes = [side["inputs"][side["op_inputs"].index(g)]["shape"] for g in side["graph_inputs"]]
    for seed in range(SEEDS):
        rng = np.random.default_rng(seed)
        yield [rng.integers(-128, 128, size=s, dtype=np.int16).astype(np.int8) for s in shapes]
    yield [np.full(s, -128, np.int8) for s in shapes]
    yield [np.full(s, 127, np.int8) for s in shapes]
    yield [((np.arange(int(np.prod(s))) * (k + 3)) % 256 - 128).astype(np.int8).reshape(s)
           for k, s in enumerate(shapes)]
    if len(shapes) == 2:  # every int8 pair, cyclically (all 65536 when the inputs have that many values)
        yield [((np.arange(int(np.prod(s))) >> (8 * (1 - k))) % 256 - 128).astype(np.int8).reshape(s)
               for k, s in enumerate(shapes)]


@pytest.mark.parametrize("sidecar", SIDECARS, ids=[p.stem for p in SIDECARS])
def test_reference_equals_tflm(sidecar: Path):
    side = json.loads(sidecar.read_text())
    interp = runtime.Interpreter.from_file(str(sidecar.with_suffix(".tflite")), arena_size=1 << 20)
    for k, xs in enumerate(draws(side)):
        for i, x in enumerate(xs):
            interp.set_input(x, i)
        interp.invoke()
        want = interp.get_output(0)
        got = reference(side, [xs[side["graph_inputs"].index(t)] for t in side["op_inputs"]
                               if t in side["graph_inputs"]])
        assert got.dtype == np.int8 and got.shape == want.shape, (got.shape, want.shape)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, (f"{side['name']} draw {k}: {bad.size}/{want.size} differ, first at {bad[0]}: "
                               f"ref {got.flat[bad[0]]} tflm {want.flat[bad[0]]}")


def test_every_operator_has_a_model():
    ops = {json.loads(p.read_text())["op"] for p in SIDECARS}
    assert ops >= {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D", "MAX_POOL_2D", "ADD",
                   "SUB", "MUL", "SOFTMAX", "MEAN", "LOGISTIC", "TANH", "HARD_SWISH", "LEAKY_RELU", "QUANTIZE",
                   "RELU", "RELU6", "REDUCE_MAX", "SUM", "CONCATENATION", "TRANSPOSE"}


# ---------------------------------------------------------------------------------------------
# Primitives against plain Python integers

I32 = st.integers(-(2**31), 2**31 - 1)


def py_srdhm(a: int, b: int) -> int:
    if a == b == -(2**31):
        return 2**31 - 1
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    v = ab + nudge
    return v // 2**31 if v >= 0 else -((-v) // 2**31)


def py_rdbpot(x: int, e: int) -> int:
    """Round x / 2^e half away from zero, exactly."""
    if e == 0:
        return x
    q, r = divmod(abs(x), 1 << e)
    if 2 * r >= (1 << e):
        q += 1
    return q if x >= 0 else -q


@settings(max_examples=400, deadline=None)
@given(I32, I32)
def test_srdhm_full_int32_range(a, b):
    assert int(R.saturating_rounding_doubling_high_mul(a, b)) == py_srdhm(a, b)
    # it is floor((a * b + 2^30) / 2^31): round half UP (a negative tie goes toward zero), not away from zero
    if not a == b == -(2**31):
        assert py_srdhm(a, b) == (a * b + 2**30) >> 31


def test_srdhm_rounds_half_up():
    assert int(R.saturating_rounding_doubling_high_mul(2, -(2**29))) == 0  # -0.5 -> 0
    assert int(R.saturating_rounding_doubling_high_mul(2, 2**29)) == 1  # +0.5 -> 1
    assert int(R.saturating_rounding_doubling_high_mul(6, -(2**29))) == -1  # -1.5 -> -1


def test_srdhm_corners():
    c = [-(2**31), -(2**31) + 1, -1, 0, 1, 2**30, 2**31 - 1]
    a, b = np.meshgrid(c, c)
    got = R.saturating_rounding_doubling_high_mul(a, b)
    assert [int(v) for v in got.ravel()] == [py_srdhm(int(x), int(y)) for x, y in zip(a.ravel(), b.ravel())]


@pytest.mark.parametrize("e", range(32))
def test_rounding_divide_by_pot_every_exponent(e):
    rng = np.random.default_rng(e)
    xs = np.concatenate([rng.integers(-(2**31), 2**31, 2000), [-(2**31), 2**31 - 1, 0, -1, 1],
                         np.array([k << e for k in (-3, -1, 1, 3)]) // 2 if e else [0]])
    xs = np.clip(xs, -(2**31), 2**31 - 1)
    got = R.rounding_divide_by_pot(xs, e)
    assert [int(v) for v in got] == [py_rdbpot(int(x), e) for x in xs]


def test_rounding_divide_by_pot_ties_away_from_zero():
    assert [int(v) for v in R.rounding_divide_by_pot([5, -5, 6, -6, 7, -7], 1)] == [3, -3, 3, -3, 4, -4]
    with pytest.raises(ModelError):
        R.rounding_divide_by_pot(1, 32)


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e-10, max_value=1e10, allow_nan=False, allow_infinity=False))
def test_quantize_multiplier(real):
    r = R.quantize_multiplier(real)
    if r.multiplier == 0:
        assert real < 2.0**-31 and r.shift == 0
        return
    assert 2**30 <= r.multiplier < 2**31
    # M * 2^(shift - 31) is real rounded to 31 significant bits
    approx = r.multiplier * 2.0 ** (r.shift - 31)
    assert abs(approx - real) <= real * 2.0**-31
    m, e = math.frexp(real)
    assert r.shift in (e, e + 1)


def test_quantize_multiplier_special_cases():
    assert R.quantize_multiplier(0.0) == R.Requant(0, 0)
    assert R.quantize_multiplier(1.0) == R.Requant(2**30, 1)
    assert R.quantize_multiplier(0.5) == R.Requant(2**30, 0)
    # frexp mantissa rounding up to 1.0 -> M = 2^30, shift + 1
    assert R.quantize_multiplier(1.0 - 2.0**-40) == R.Requant(2**30, 1)
    assert R.quantize_multiplier(2.0**-40) == R.Requant(0, 0)  # shift < -31 flushes to zero
    assert R.quantize_multiplier(2.0**-31) == R.Requant(2**30, -30)
    with pytest.raises(ModelError):
        R.quantize_multiplier_smaller_than_one_exp(1.5)
    with pytest.raises(ModelError):
        R.quantize_multiplier_greater_than_one(0.5)


@settings(max_examples=300, deadline=None)
@given(st.integers(-(2**31), 2**31 - 1), st.integers(2**30, 2**31 - 1), st.integers(-31, 8))
def test_multiply_by_quantized_multiplier_double_rounding(x, m, shift):
    left, right = max(shift, 0), max(-shift, 0)
    xl = ((x << left) + 2**31) % 2**32 - 2**31
    assert int(R.multiply_by_quantized_multiplier(x, m, shift)) == py_rdbpot(py_srdhm(xl, m), right)


def test_double_and_single_rounding_differ():
    # x * M / 2^31 = 0.75 exactly after the first rounding half: double rounding rounds twice
    m, shift = 2**30 + 1, -1
    xs = np.arange(-5000, 5000)
    d = R.multiply_by_quantized_multiplier(xs, m, shift)
    s = R.single_rounding_multiply(xs, m, shift)
    assert np.any(d != s) and np.all(np.abs(d - s) <= 1)


def test_exp_on_negative_values_is_exp():
    a = np.arange(-(31 << 26), 1, 1 << 18)
    got = R.exp_on_negative_values(a, 5) / 2.0**31
    assert np.max(np.abs(got - np.exp(a / 2.0**26))) < 2e-8 * 2**5
    assert int(R.exp_on_negative_values(0, 5)) == 2**31 - 1


def test_logistic_tanh_fixed_point_shape():
    a = np.arange(-(15 << 27), 15 << 27, 1 << 20)
    lg = R.fixed_logistic(a, 4) / 2.0**31
    th = R.fixed_tanh(a, 4) / 2.0**31
    xs = a / 2.0**27
    assert np.max(np.abs(lg - 1 / (1 + np.exp(-xs)))) < 1e-6
    assert np.max(np.abs(th - np.tanh(xs))) < 1e-6


def test_misuse_is_refused():
    q = R.QParams(0.1, 0)
    x = np.zeros((1, 4, 4, 3), np.int8)
    with pytest.raises(ModelError):
        R.QParams(0.0, 0)
    with pytest.raises(ModelError):
        R.QParams(0.1, 200)
    with pytest.raises(ModelError):
        R.conv2d(x, np.zeros((2, 3, 3, 2), np.int8), None, q, R.FilterQParams((0.1,)), q)
    with pytest.raises(ModelError):
        R.conv2d(x.astype(np.int16), np.zeros((2, 3, 3, 3), np.int8), None, q, R.FilterQParams((0.1,)), q)
    with pytest.raises(ModelError):
        R.depthwise_conv2d(x, np.zeros((1, 3, 3, 5), np.int8), None, q, R.FilterQParams((0.1,)), q, 2)
    with pytest.raises(ModelError):
        R.softmax(x, q, R.QParams(1 / 256, 0))
    with pytest.raises(ModelError):
        R.conv2d(x, np.zeros((2, 3, 3, 3), np.int8), None, q, R.FilterQParams((0.1, 0.2, 0.3)), q)
    with pytest.raises(ModelError):
        R.average_pool2d(x, q, R.QParams(0.2, 0), (2, 2), (2, 2))
    with pytest.raises(ModelError):
        R.conv2d(x, np.zeros((2, 3, 3, 3), np.int8), None, q, R.FilterQParams((0.1,)), q, padding="FULL")
    with pytest.raises(ModelError):
        R.add(x, np.zeros((1, 3, 4, 3), np.int8), q, q, q)
    with pytest.raises(ModelError):
        R.conv2d(x, np.zeros((2, 3, 3, 3), np.int8), np.zeros(2, np.int64), q, R.FilterQParams((0.1,)), q)
    with pytest.raises(ModelError):
        R.max_pool2d(x, q, R.QParams(0.1, 1), (2, 2), (2, 2))
    with pytest.raises(ModelError):
        R.logistic(x, q, R.QParams(1 / 256, 0))
    assert R.QParams(0.1, 0).scale == float(np.float32(0.1))


def test_tflm_uses_double_rounding(monkeypatch):
    """Swapping the requantisation for TFLITE_SINGLE_ROUNDING's breaks bit-exactness on the models: the
    tflite-micro build (like TFLM's default) rounds twice."""
    side = json.loads((MODELS / "conv_3x3_32ch_valid.json").read_text())
    interp = runtime.Interpreter.from_file(str(MODELS / "conv_3x3_32ch_valid.tflite"), arena_size=1 << 20)
    differ = 0
    monkeypatch.setattr(R, "multiply_by_quantized_multiplier", R.single_rounding_multiply)
    for xs in draws(side):
        interp.set_input(xs[0], 0)
        interp.invoke()
        differ += int(np.sum(reference(side, xs) != interp.get_output(0)))
    assert differ > 0


# ---------------------------------------------------------------------------------------------
# Operators against a direct transcription of TFLM's loops (geometry: strides, dilations, paddings)


def loop_conv(x, w, bias, zp_in, mults, zp_out, stride, dilation, padding, lo, hi, depthwise=False, dm=1):
    n, h, wd, cin = x.shape
    if depthwise:
        _, kh, kw, cout = w.shape
    else:
        cout, kh, kw, cf = w.shape
    oh = R.compute_out_size(padding, h, kh, stride[0], dilation[0])
    ow = R.compute_out_size(padding, wd, kw, stride[1], dilation[1])
    pt, _ = R.compute_padding(stride[0], dilation[0], h, kh, oh)
    pl, _ = R.compute_padding(stride[1], dilation[1], wd, kw, ow)
    out = np.zeros((n, oh, ow, cout), np.int8)
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                for oc in range(cout):
                    acc = 0
                    for ky in range(kh):
                        for kx in range(kw):
                            iy = oy * stride[0] - pt + dilation[0] * ky
                            ix = ox * stride[1] - pl + dilation[1] * kx
                            if not (0 <= iy < h and 0 <= ix < wd):
                                continue  # "zero padding by omitting the areas outside the image"
                            if depthwise:
                                acc += int(w[0, ky, kx, oc]) * (int(x[b, iy, ix, oc // dm]) - zp_in)
                            else:
                                for ci in range(cf):
                                    acc += int(w[oc, ky, kx, ci]) * (int(x[b, iy, ix, ci]) - zp_in)
                    acc += int(bias[oc])
                    m = mults[oc]
                    v = int(R.multiply_by_quantized_multiplier(acc, m.multiplier, m.shift)) + zp_out
                    out[b, oy, ox, oc] = min(max(v, lo), hi)
    return out


geometry = st.fixed_dictionaries({
    "h": st.integers(1, 7), "w": st.integers(1, 7), "cin": st.integers(1, 3), "cout": st.integers(1, 3),
    "kh": st.integers(1, 3), "kw": st.integers(1, 3), "sh": st.integers(1, 3), "sw": st.integers(1, 3),
    "dh": st.integers(1, 2), "dw": st.integers(1, 2), "padding": st.sampled_from(R.PADDINGS),
    "zp_in": st.integers(-128, 127), "zp_out": st.integers(-128, 127), "seed": st.integers(0, 2**16),
    "act": st.sampled_from(R.ACTIVATIONS), "depthwise": st.booleans(),
})


@settings(max_examples=60, deadline=None)
@given(geometry)
def test_conv_and_depthwise_against_tflm_loops(g):
    if R.compute_out_size(g["padding"], g["h"], g["kh"], g["sh"], g["dh"]) < 1 or \
            R.compute_out_size(g["padding"], g["w"], g["kw"], g["sw"], g["dw"]) < 1:
        return
    rng = np.random.default_rng(g["seed"])
    x = rng.integers(-128, 128, (1, g["h"], g["w"], g["cin"])).astype(np.int8)
    cout = g["cin"] * g["cout"] if g["depthwise"] else g["cout"]
    wshape = (1, g["kh"], g["kw"], cout) if g["depthwise"] else (cout, g["kh"], g["kw"], g["cin"])
    w = rng.integers(-127, 128, wshape).astype(np.int8)
    bias = rng.integers(-(2**16), 2**16, cout).astype(np.int32)
    in_q, out_q = R.QParams(0.02, g["zp_in"]), R.QParams(float(rng.uniform(0.01, 2.0)), g["zp_out"])
    wq = R.FilterQParams(tuple(float(v) for v in rng.uniform(1e-4, 1e-2, cout)))
    mults = [R.quantize_multiplier(in_q.scale * s / out_q.scale) for s in wq.scales]
    lo, hi = R.activation_range(g["act"], out_q)
    kw = dict(stride=(g["sh"], g["sw"]), dilation=(g["dh"], g["dw"]), padding=g["padding"], activation=g["act"])
    if g["depthwise"]:
        got = R.depthwise_conv2d(x, w, bias, in_q, wq, out_q, depth_multiplier=g["cout"], **kw)
    else:
        got = R.conv2d(x, w, bias, in_q, wq, out_q, **kw)
    want = loop_conv(x, w, bias, g["zp_in"], mults, g["zp_out"], kw["stride"], kw["dilation"], g["padding"], lo, hi,
                     depthwise=g["depthwise"], dm=g["cout"])
    assert np.array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(geometry)
def test_average_pool_against_tflm_loops(g):
    h, w, kh, kw, sh, sw = g["h"], g["w"], g["kh"], g["kw"], g["sh"], g["sw"]
    oh, ow = R.compute_out_size(g["padding"], h, kh, sh), R.compute_out_size(g["padding"], w, kw, sw)
    if oh < 1 or ow < 1:
        return
    x = np.random.default_rng(g["seed"]).integers(-128, 128, (1, h, w, g["cin"])).astype(np.int8)
    q = R.QParams(0.05, g["zp_in"])
    pt, _ = R.compute_padding(sh, 1, h, kh, oh)
    pl, _ = R.compute_padding(sw, 1, w, kw, ow)
    lo, hi = R.activation_range(g["act"], q)
    want = np.zeros((1, oh, ow, g["cin"]), np.int8)
    want_max = np.zeros_like(want)
    for oy in range(oh):
        for ox in range(ow):
            for c in range(g["cin"]):
                vals = [int(x[0, oy * sh - pt + i, ox * sw - pl + j, c]) for i in range(kh) for j in range(kw)
                        if 0 <= oy * sh - pt + i < h and 0 <= ox * sw - pl + j < w]
                acc, n = sum(vals), len(vals)
                avg = (acc + n // 2) // n if acc > 0 else -((-(acc - n // 2)) // n)
                want[0, oy, ox, c] = min(max(avg, lo), hi)
                want_max[0, oy, ox, c] = min(max(max(vals), lo), hi)
    assert np.array_equal(R.average_pool2d(x, q, q, (kh, kw), (sh, sw), g["padding"], g["act"]), want)
    assert np.array_equal(R.max_pool2d(x, q, q, (kh, kw), (sh, sw), g["padding"], g["act"]), want_max)
