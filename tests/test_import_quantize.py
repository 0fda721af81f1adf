"""Float models quantised the way TFLite's converter does (autotiler/importers/quantize.py, issue 24
§4): hand-built float graphs, and J4's float TFLite models against TF 2.21's own int8 conversion of
the same network with the same representative data (tests/models/import/NAME_float.* and NAME.tflite)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autotiler.errors import ImportModelError
from autotiler.importers import reference
from autotiler.importers.ir import (
    Activation,
    ActivationOptions,
    ConvOptions,
    DType,
    Graph,
    Op,
    OpKind,
    Padding,
    PoolOptions,
    Quant,
    SoftmaxOptions,
    Tensor,
)
from autotiler.importers.onnx_reader import read_onnx
from autotiler.importers.quantize import (
    asymmetric_quant,
    is_float,
    load_calibration,
    quantize_bias,
    quantize_graph,
    quantize_weights,
    sqnr_db,
)
from autotiler.importers.tflite_reader import read_tflite

pytestmark = pytest.mark.usefixtures("private_harness_cache")

MODELS = Path(__file__).resolve().parent / "models" / "import"
FLOAT_MODELS = ["concat_branches", "fused_activations", "activations_mix", "mean", "ds_cnn_kws", "squeeze",
                "pad_conv_sym", "pad_conv_same", "reshape_dynamic", "float_interface"]
F32 = DType.FLOAT32


# ---- a hand-built float network ----------------------------------------------------------------------


def _const(name, array):
    a = np.asarray(array, np.float32)
    a.setflags(write=False)
    return Tensor(name, a.shape, F32, None, a)


def _net(rng) -> Graph:
    """x [1,8,8,3] -> conv 3x3 ReLU -> {dw 3x3 ReLU6, conv 1x1} -> ADD -> max pool -> {avg pool, max pool}
    -> CONCATENATION -> RESHAPE -> FC -> SOFTMAX."""
    t = {}

    def act(name, shape):
        t[name] = Tensor(name, shape, F32)

    def const(name, a):
        t[name] = _const(name, a)

    act("x", (1, 8, 8, 3))
    const("w1", rng.normal(0, 0.4, (8, 3, 3, 3)))
    const("b1", rng.normal(0, 0.1, 8))
    act("c1", (1, 8, 8, 8))
    const("wd", rng.normal(0, 0.4, (1, 3, 3, 8)))
    const("bd", rng.normal(0, 0.1, 8))
    act("d", (1, 8, 8, 8))
    const("w2", rng.normal(0, 0.4, (8, 1, 1, 8)))
    const("b2", rng.normal(0, 0.1, 8))
    act("c2", (1, 8, 8, 8))
    act("s", (1, 8, 8, 8))
    act("p", (1, 4, 4, 8))
    act("a", (1, 2, 2, 8))
    act("m", (1, 2, 2, 8))
    act("cat", (1, 2, 2, 16))
    t["shape"] = Tensor("shape", (2,), DType.INT32, None, np.array([1, 64], np.int32))
    act("flat", (1, 64))
    const("wf", rng.normal(0, 0.3, (10, 64)))
    const("bf", rng.normal(0, 0.1, 10))
    act("logits", (1, 10))
    act("y", (1, 10))
    conv = ConvOptions(padding=Padding.SAME, activation=Activation.RELU)
    pool = PoolOptions((2, 2), (2, 2))
    ops = [Op(OpKind.CONV_2D, 0, "0 (CONV_2D)", ("x", "w1", "b1"), ("c1",), conv),
           Op(OpKind.DEPTHWISE_CONV_2D, 1, "1 (DEPTHWISE_CONV_2D)", ("c1", "wd", "bd"), ("d",),
              ConvOptions(padding=Padding.SAME, activation=Activation.RELU6)),
           Op(OpKind.CONV_2D, 2, "2 (CONV_2D)", ("c1", "w2", "b2"), ("c2",), ConvOptions()),
           Op(OpKind.ADD, 3, "3 (ADD)", ("d", "c2"), ("s",), ActivationOptions()),
           Op(OpKind.MAX_POOL_2D, 4, "4 (MAX_POOL_2D)", ("s",), ("p",), pool),
           Op(OpKind.AVERAGE_POOL_2D, 5, "5 (AVERAGE_POOL_2D)", ("p",), ("a",), pool),
           Op(OpKind.MAX_POOL_2D, 6, "6 (MAX_POOL_2D)", ("p",), ("m",), pool),
           Op(OpKind.CONCATENATION, 7, "7 (CONCATENATION)", ("a", "m"), ("cat",), ActivationOptions(axis=3)),
           Op(OpKind.RESHAPE, 8, "8 (RESHAPE)", ("cat", "shape"), ("flat",)),
           Op(OpKind.FULLY_CONNECTED, 9, "9 (FULLY_CONNECTED)", ("flat", "wf", "bf"), ("logits",), ActivationOptions()),
           Op(OpKind.SOFTMAX, 10, "10 (SOFTMAX)", ("logits",), ("y",), SoftmaxOptions())]
    return Graph("net.tflite", "tflite", "NHWC", t, tuple(ops), ("x",), ("y",)).check()


@pytest.fixture(scope="module")
def net():
    rng = np.random.default_rng(5)
    g = _net(rng)
    cal = {"x": rng.normal(0.3, 1.0, (24, 8, 8, 3)).astype(np.float32)}
    q, lines = quantize_graph(g, cal)
    return g, cal, q, lines


def test_the_hand_built_network_is_quantised_as_the_converter_does(net):
    g, cal, q, _ = net
    assert is_float(g) and not is_float(q)
    for name in ("x", "c1", "d", "c2", "s", "p", "a", "m", "cat", "flat", "logits", "y"):
        assert q.tensor(name).dtype is DType.INT8 and q.tensor(name).quant.per_tensor
    # weights: per output channel (axis 0; depth wise: the last), max|w| / 127, zero point 0
    for w, axis in (("w1", 0), ("wd", 3), ("w2", 0), ("wf", 0)):
        t, f = q.tensor(w), g.tensor(w).data
        half = np.abs(np.moveaxis(f, axis, 0).reshape(f.shape[axis], -1)).max(axis=1)
        assert t.quant.axis == axis and np.allclose(t.quant.scales, half / 127, rtol=1e-6)
        assert set(t.quant.zero_points) == {0} and t.data.dtype == np.int8 and np.abs(t.data).max() == 127
    # biases: int32 at s_in * s_w[c]
    for b, x, w in (("b1", "x", "w1"), ("bd", "c1", "wd"), ("bf", "flat", "wf")):
        expect = np.float32(q.tensor(x).quant.scales[0]) * np.asarray(q.tensor(w).quant.scales, np.float32)
        assert q.tensor(b).dtype is DType.INT32 and np.allclose(q.tensor(b).quant.scales, expect, rtol=1e-6)
        assert np.allclose(q.tensor(b).data * expect, g.tensor(b).data, atol=float(expect.max()))
    # fixed output; one quantisation through pools, concatenation and reshape: the concatenation's
    # output range, pushed back through the pools to the ADD (TF's backward propagation)
    assert q.tensor("y").quant == Quant((1 / 256,), (-128,))
    runs = [reference.run(g, {"x": x[None]}) for x in cal["x"]]

    def span(*names):
        return (min(float(r[n].min()) for r in runs for n in names), max(float(r[n].max()) for r in runs for n in names))
    for n in ("s", "p", "a", "m", "cat", "flat"):
        assert q.tensor(n).quant == asymmetric_quant(*span("cat")), n
    # ADD's first input, read by it only, is recorded with the ADD's output too (TF's in-place calibration)
    assert q.tensor("d").quant == asymmetric_quant(*span("d", "s")) != asymmetric_quant(*span("d"))
    assert q.tensor("c2").quant == asymmetric_quant(*span("c2"))
    assert q.tensor("x").quant == asymmetric_quant(float(cal["x"].min()), float(cal["x"].max()))
    assert q.tensor("shape").dtype is DType.INT32 and list(q.tensor("shape").data) == [1, 64]


def test_the_quantised_network_follows_the_float_one(net):
    g, cal, q, lines = net
    outs = []
    for x in cal["x"]:
        xf = x[None]
        qx = np.clip(np.round(xf / q.tensor("x").quant.scales[0]) + q.tensor("x").quant.zero_points[0], -128, 127)
        yq = reference.run(q, {"x": qx.astype(np.int8)})["y"]
        yq = (yq.astype(np.float64) + 128) / 256
        outs.append((reference.run(g, {"x": xf})["y"], yq))
    f = np.concatenate([a for a, _ in outs])
    r = np.concatenate([b for _, b in outs])
    assert sqnr_db(f, r) >= 25
    assert (f.argmax(1) == r.argmax(1)).mean() >= 0.9
    assert lines[0].startswith("quantisation: 24 calibration input(s); SQNR of the int8 network")
    assert any(line.startswith("  0 (CONV_2D)") for line in lines)
    assert lines[-1].startswith("output y: SQNR ") and "top-1 equal to the float model's on" in lines[-1]


def test_the_calibration_may_omit_the_batch_of_one(net):
    g, cal, q, _ = net
    q2, _ = quantize_graph(g, {"x": cal["x"][:, None]})
    assert q2.tensor("c1").quant == q.tensor("c1").quant


# ---- TFLite's formulas ---------------------------------------------------------------------------------


@pytest.mark.parametrize("lo, hi, scale, zp", [
    (-1.0, 1.0, 2 / 255, -1),          # -128 + 127.5 = -0.5 rounds away from zero
    (0.0, 2.55, 0.01, -128),
    (0.5, 2.55, 0.01, -128),           # widened to include 0
    (-2.55, -0.5, 0.01, 127),
    (0.0, 0.0, 1.0, -128),             # zero everywhere: scale 1 (TFLite would give 0)
])
def test_asymmetric_activation_quantisation(lo, hi, scale, zp):
    q = asymmetric_quant(lo, hi)
    assert q.scales[0] == pytest.approx(scale, rel=1e-6) and q.zero_points == (zp,)


def test_weights_and_bias_formulas():
    w = np.array([[1.27, -0.5, 0.004], [0.0, 0.0, 0.0]], np.float32)
    scales, q = quantize_weights(w, 0, 0.1)
    assert scales[0] == pytest.approx(0.01) and scales[1] == pytest.approx(1 / 127)    # all-zero channel
    assert q.tolist() == [[127, -50, 0], [0, 0, 0]]
    bs, qb = quantize_bias(np.array([1.0, -0.26], np.float32), 0.1, scales)
    assert bs[0] == pytest.approx(0.001) and qb.tolist() == [1000, -330]          # -0.26 / (0.1 / 127) = -330.2
    # a bias too large for int32 at s_in * s_w widens the weight scale (AdjustWeightsForBiasScale)
    scales, _ = quantize_weights(np.array([[1e-9, 0.0]], np.float32), 0, 1e-3, np.array([1.0], np.float32))
    assert 1.0 / (1e-3 * scales[0]) < 2**31 - 1


def test_sqnr():
    assert sqnr_db([1.0, 2.0], [1.0, 2.0]) == float("inf")
    assert sqnr_db([0.0, 0.0], [1.0, 0.0]) == 0.0
    assert sqnr_db([1.0, 1.0], [1.1, 0.9]) == pytest.approx(20.0)


# ---- J4's float TFLite models against TF 2.21's own int8 conversion -------------------------------------


def _read(name: str) -> Graph:
    path = MODELS / f"{name}.tflite"
    return read_tflite(str(path), path.read_bytes())


@pytest.fixture(scope="module")
def imported():
    cache = {}

    def get(name):
        if name not in cache:
            fg = _read(f"{name}_float")
            cal = dict(np.load(MODELS / f"{name}_float.npz"))
            cache[name] = (fg, _read(name), cal, *quantize_graph(fg, cal))
        return cache[name]
    return get


@pytest.mark.parametrize("name", FLOAT_MODELS)
def test_the_quantisation_is_the_converters(imported, name):
    """Every zero point, int8 weight and int32 bias equal to TF 2.21's, every scale within 1e-6
    (the float32 ranges differ in their last bits: TFLite's float kernels sum in another order)."""
    _, tf, _, q, _ = imported(name)
    ops = [op for op in tf.ops if op.kind not in (OpKind.QUANTIZE, OpKind.DEQUANTIZE)]
    assert [op.kind for op in q.ops] == [op.kind for op in ops]
    for ours, theirs in zip(q.ops, ops):
        for a, b in zip(ours.inputs + ours.outputs, theirs.inputs + theirs.outputs):
            if a is None or q.tensor(a).quant is None:
                continue
            qa, qb = q.tensor(a).quant, tf.tensor(b).quant
            assert qa.zero_points == qb.zero_points and qa.axis == qb.axis, (ours.label, a)
            assert np.allclose(qa.scales, qb.scales, rtol=1e-6, atol=0), (ours.label, a)
            if q.tensor(a).is_const:
                assert np.array_equal(q.tensor(a).data, tf.tensor(b).data), (ours.label, a)


@pytest.mark.parametrize("name", FLOAT_MODELS)
def test_the_quantised_model_follows_the_float_model(imported, name):
    """>= 25 dB SQNR at the output over the calibration set (issue §7); top-1 agreement is printed
    (random weights give near-uniform scores, so it is a figure, bounded loosely)."""
    _, _, _, _, lines = imported(name)
    out = lines[-1]
    assert float(out.split("SQNR ")[1].split(" dB")[0]) >= 25, out
    if " on " in out:
        agree, count = (int(v) for v in out.split(" on ")[1].split(" ")[0].split("/"))
        assert agree >= 0.8 * count, out


def test_an_int8_model_with_a_float_interface_is_not_float():
    assert not is_float(_read("float_interface")) and is_float(_read("float_interface_float"))


def test_the_quantised_model_computes_what_tflms_int8_model_does(imported):
    """Same quantisation, same arithmetic (the reference is TFLM's): the outputs of our int8 graph and of
    the converter's int8 model on the same int8 inputs; the scales' last bits may move a rounding."""
    for name in ("concat_branches", "ds_cnn_kws", "activations_mix"):
        _, tf, cal, q, _ = imported(name)
        x_name, tf_x = q.inputs[0], tf.inputs[0]
        qin = q.tensor(x_name).quant
        for x in cal[x_name][:8]:
            xi = np.clip(np.round(x / qin.scales[0]) + qin.zero_points[0], -128, 127).astype(np.int8)[None]
            ours = reference.run(q, {x_name: xi})[q.outputs[0]].astype(np.int64)
            theirs = reference.run(tf, {tf_x: xi})[tf.outputs[0]].astype(np.int64)
            assert np.abs(ours - theirs).max() <= 1 and (ours == theirs).mean() >= 0.9, name


# ---- errors --------------------------------------------------------------------------------------------


def _err(fn, *args) -> str:
    with pytest.raises(ImportModelError) as e:
        fn(*args)
    return str(e.value)


def test_calibration_of_the_wrong_shape_names_the_input(net):
    g = net[0]
    assert _err(quantize_graph, g, {"x": np.zeros((4, 8, 8), np.float32)}) == (
        "net.tflite: argument 'x': calibration data for input 'x' has shape [4, 8, 8]; expected [N, 1, 8, 8, 3] "
        "or [N, 8, 8, 3] with N >= 1 (give --calibration FILE.npz: one float array per graph input name, shape "
        "[N, *input shape])")
    assert "has shape [0, 8, 8, 3]" in _err(quantize_graph, g, {"x": np.zeros((0, 8, 8, 3), np.float32)})


@pytest.mark.parametrize("cal, message", [
    ({}, "net.tflite: argument 'x': calibration data has no array for input 'x'"),
    ({"x": np.zeros((2, 8, 8, 3)), "z": np.zeros(3)},
     "net.tflite: argument 'z': calibration data has an array 'z' that is no input of the model (inputs: x)"),
    ({"x": np.full((2, 8, 8, 3), np.nan)},
     "net.tflite: argument 'x': calibration data for input 'x' holds NaN or infinite values"),
    ({"x": np.full((2, 8, 8, 3), "a")}, "net.tflite: argument 'x': calibration data for input 'x' is <U1, not real"),
])
def test_bad_calibration_data_is_refused(net, cal, message):
    assert _err(quantize_graph, net[0], cal).startswith(message)


def test_an_int8_model_needs_no_calibration(net):
    assert _err(quantize_graph, net[2], {"x": np.zeros((1, 8, 8, 3))}) == (
        "net.tflite: the model is not a float model: it is imported as it is, without calibration (give no "
        "--calibration for an int8 model)")


def test_quantize_in_a_float_model_is_not_supported_yet():
    q8 = Quant((0.1,), (0,))
    t = {"x": Tensor("x", (1, 4), F32), "r": Tensor("r", (1, 4), F32), "y": Tensor("y", (1, 4), DType.INT8, q8),
         "z": Tensor("z", (1, 4), F32)}
    ops = (Op(OpKind.RELU, 0, "0 (RELU)", ("x",), ("r",)), Op(OpKind.QUANTIZE, 1, "1 (QUANTIZE)", ("r",), ("y",)),
           Op(OpKind.DEQUANTIZE, 2, "2 (DEQUANTIZE)", ("y",), ("z",)))
    g = Graph("m.tflite", "tflite", "NHWC", t, ops, ("x",), ("z",)).check()
    assert _err(quantize_graph, g, {"x": np.zeros((1, 4))}) == (
        "m.tflite: operator 1 (QUANTIZE): argument 'y': QUANTIZE in a float model is not supported yet (the importer "
        "quantises a float model as a whole) (convert the model to float32 throughout, or to int8 with TFLite's "
        "converter)")


def test_a_calibration_file_that_is_not_an_npz_is_refused(tmp_path):
    npy = tmp_path / "c.npy"
    np.save(npy, np.zeros(3))
    assert _err(load_calibration, str(npy)).startswith(
        f"{npy}: calibration data must be a .npz file (numpy.savez), not a single .npy array")
    bad = tmp_path / "c.npz"
    bad.write_bytes(b"PK\x03\x04 broken")
    assert _err(load_calibration, str(bad)).startswith(f"{bad}: cannot read calibration data")
    assert _err(load_calibration, str(tmp_path / "missing.npz")).startswith(
        f"{tmp_path / 'missing.npz'}: cannot read calibration data")
    good = tmp_path / "ok.npz"
    np.savez(good, x=np.ones((2, 3)))
    assert load_calibration(str(good))["x"].shape == (2, 3)


def _small(ops, extra, inputs=("x",), outputs=("r",)) -> Graph:
    t = {"x": Tensor("x", (1, 4), F32), "r": Tensor("r", (1, 4), F32), **{e.name: e for e in extra}}
    ops = (Op(OpKind.RELU, 0, "0 (RELU)", ("x",), ("r",)), *ops)
    return Graph("m.tflite", "tflite", "NHWC", t, ops, inputs, outputs).check()


def test_a_model_mixing_float_and_integer_activations_is_refused():
    k = Tensor("k", (1, 4), DType.INT8, Quant((0.1,), (0,)))
    k2 = Tensor("k2", (1, 4), DType.INT8, Quant((0.1,), (0,)))
    g = _small([Op(OpKind.RELU, 1, "1 (RELU)", ("k",), ("k2",))], [k, k2], ("x", "k"), ("r", "k2"))
    assert _err(quantize_graph, g, {"x": np.zeros((1, 4)), "k": np.zeros((1, 4))}) == (
        "m.tflite: operator 1 (RELU): argument 'k': tensor 'k' is int8 in a float model: a model that mixes float "
        "and integer activations is not supported yet (convert the model to float32 throughout)")


def test_a_constant_float_input_where_no_converter_puts_one_is_refused():
    c = _const("c", np.ones((1, 4)))
    g = _small([Op(OpKind.SOFTMAX, 1, "1 (SOFTMAX)", ("c",), ("s",), SoftmaxOptions())],
               [c, Tensor("s", (1, 4), F32)], outputs=("r", "s"))
    assert _err(quantize_graph, g, {"x": np.zeros((1, 4))}) == (
        "m.tflite: operator 1 (SOFTMAX): argument 'c': a constant float input 'c' of SOFTMAX is not supported yet")


def test_two_fixed_quantisations_joined_by_a_concatenation_are_refused():
    g = _small([Op(OpKind.SOFTMAX, 1, "1 (SOFTMAX)", ("r",), ("s",), SoftmaxOptions()),
                Op(OpKind.TANH, 2, "2 (TANH)", ("r",), ("h",)),
                Op(OpKind.CONCATENATION, 3, "3 (CONCATENATION)", ("s", "h"), ("y",), ActivationOptions(axis=1))],
               [Tensor("s", (1, 4), F32), Tensor("h", (1, 4), F32), Tensor("y", (1, 8), F32)], outputs=("y",))
    assert _err(quantize_graph, g, {"x": np.ones((2, 4))}) == (
        "m.tflite: operator 2 (TANH): argument 'h': TANH's fixed output quantisation meets SOFTMAX's through "
        "operators that keep their input's quantisation: not supported yet")


def test_weights_that_are_not_constant_are_refused():
    w = Tensor("w", (2, 4), F32)
    g = _small([Op(OpKind.FULLY_CONNECTED, 1, "1 (FULLY_CONNECTED)", ("r", "w", None), ("y",), ActivationOptions())],
               [w, Tensor("y", (1, 2), F32)], ("x", "w"), ("y",))
    assert _err(quantize_graph, g, {"x": np.ones((2, 4)), "w": np.ones((2, 2, 4))}) == (
        "m.tflite: operator 1 (FULLY_CONNECTED): argument 'w': the weights 'w' of a float FULLY_CONNECTED must be a "
        "float32 constant (convert the model with constant weights)")
    b = Tensor("b", (2,), F32)
    g = _small([Op(OpKind.FULLY_CONNECTED, 1, "1 (FULLY_CONNECTED)", ("r", "w", "b"), ("y",), ActivationOptions())],
               [_const("w", np.ones((2, 4))), b, Tensor("y", (1, 2), F32)], ("x", "b"), ("y",))
    assert _err(quantize_graph, g, {"x": np.ones((2, 4)), "b": np.ones((2, 2))}) == (
        "m.tflite: operator 1 (FULLY_CONNECTED): argument 'b': the bias 'b' of a float FULLY_CONNECTED must be a "
        "float32 constant")


def test_an_onnx_float_model_takes_calibration_in_its_own_nchw_layout():
    path = Path(__file__).resolve().parent / "models" / "onnx" / "kws.onnx"
    g = read_onnx(str(path), path.read_bytes())
    assert g.source_layout == "NCHW" and g.tensor("input").shape == (1, 49, 10, 1)
    nhwc = np.random.default_rng(3).normal(0, 1, (6, 49, 10, 1)).astype(np.float32)
    nchw = nhwc.transpose(0, 3, 1, 2)
    q1, lines1 = quantize_graph(g, {"input": nchw})
    q2, lines2 = quantize_graph(g, {"input": nhwc[:, None]})
    assert lines1 == lines2 and all(q1.tensor(n).quant == q2.tensor(n).quant for n in q1.tensors)
    assert float(lines1[-1].split("SQNR ")[1].split(" dB")[0]) >= 25
    assert _err(quantize_graph, g, {"input": nhwc[:, :, :5]}) == (
        f"{path}: argument 'input': calibration data for input 'input' has shape [6, 49, 5, 1]; expected "
        "[N, 1, 1, 49, 10] (NCHW) or [N, 1, 49, 10] (NCHW) or [N, 1, 49, 10, 1] or [N, 49, 10, 1] with N >= 1 "
        "(give --calibration FILE.npz: one float array per graph input name, shape [N, *input shape])")


def test_a_bias_shared_at_different_scales_is_refused():
    b = _const("b", [0.5, -0.5])
    w = _const("w", np.ones((2, 4)))
    fc = ActivationOptions()
    g = _small([Op(OpKind.FULLY_CONNECTED, 1, "1 (FULLY_CONNECTED)", ("r", "w", "b"), ("y",), fc),
                Op(OpKind.FULLY_CONNECTED, 2, "2 (FULLY_CONNECTED)", ("x", "w", "b"), ("z",), fc)],
               [w, b, Tensor("y", (1, 2), F32), Tensor("z", (1, 2), F32)], outputs=("y", "z"))
    assert _err(quantize_graph, g, {"x": np.linspace(-1, 2, 8).reshape(2, 4)}) == (
        "m.tflite: operator 2 (FULLY_CONNECTED): argument 'b': the bias 'b' is shared by operators whose input and "
        "weight scales differ: not supported yet (give each operator a bias of its own)")
