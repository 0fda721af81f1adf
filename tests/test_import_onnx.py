"""The ONNX front end (issue 24, autotiler/importers/onnx_reader.py): every committed model of
tests/models/onnx/ (built by tests/models/make_onnx_models.py) is read and its IR evaluated
against onnxruntime on the same inputs:

* QDQ models (onnxruntime's quantize_static): the int8 IR's outputs in onnxruntime's arithmetic (read_onnx's
  default) against onnxruntime's, at least 99% of the items equal, none more than 1 LSB apart, the same top-1
  (issue 24 §7; all equal measured), and in TFLM's arithmetic within 3 LSB, the same top-1;
* float models: the float32 IR, evaluated in numpy, equals onnxruntime's float outputs to float
  rounding (this checks the layouts: NCHW -> NHWC, OHWI weights, the flatten order).

Then the refusals, each with its text.
"""

from __future__ import annotations

import json
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from autotiler import command
from autotiler.errors import ImportModelError
from autotiler.generators import sq8_tflm as T
from autotiler.importers import reference
from autotiler.importers.ir import DType, Graph, OpKind
from autotiler.importers.onnx_reader import read_onnx
from autotiler.importers.quantize import quantize_graph

ort = pytest.importorskip("onnxruntime")

pytestmark = pytest.mark.usefixtures("private_harness_cache")

MODELS_DIR = os.path.join(os.path.dirname(__file__), "models", "onnx")
MODELS = ("convnet", "actnet", "kws")
DRAWS = 8


def _read(name: str, arithmetic: str = "onnxruntime") -> Graph:
    path = os.path.join(MODELS_DIR, name + ".onnx")
    with open(path, "rb") as f:
        return read_onnx(path, f.read(), arithmetic=arithmetic)


def _session(name: str):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(os.path.join(MODELS_DIR, name + ".onnx"), opts, providers=["CPUExecutionProvider"])


# ---- an evaluation of the IR (until autotiler.importers.reference.run is written) ------------------


def _qp(graph: Graph, name: str) -> T.QParams:
    q = graph.tensor(name).quant
    return T.QParams(q.scales[0], q.zero_points[0])


def _wq(graph: Graph, name: str) -> T.FilterQParams:
    return T.FilterQParams(graph.tensor(name).quant.scales)


def _int8_op(graph: Graph, op, v: dict) -> np.ndarray:
    """One int8 op by sq8_tflm (TFLite Micro's arithmetic)."""
    k, o = op.kind, op.options
    x = v[op.inputs[0]]
    qi, qo = _qp(graph, op.inputs[0]), _qp(graph, op.outputs[0])
    if k in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D):
        w, b = v[op.inputs[1]], v[op.inputs[2]] if op.inputs[2] else None
        common = dict(stride=o.stride, dilation=o.dilation, padding=o.padding.value, activation=o.activation.value)
        if k == OpKind.CONV_2D:
            return T.conv2d(x, w, b, qi, _wq(graph, op.inputs[1]), qo, **common)
        return T.depthwise_conv2d(x, w, b, qi, _wq(graph, op.inputs[1]), qo, depth_multiplier=o.depth_multiplier,
                                  **common)
    if k == OpKind.FULLY_CONNECTED:
        b = v[op.inputs[2]] if op.inputs[2] else None
        return T.fully_connected(x, v[op.inputs[1]], b, qi, _wq(graph, op.inputs[1]), qo, o.activation.value)
    if k in (OpKind.ADD, OpKind.MUL):
        f = T.add if k == OpKind.ADD else T.mul
        return f(x, v[op.inputs[1]], qi, _qp(graph, op.inputs[1]), qo, o.activation.value)
    if k in (OpKind.MAX_POOL_2D, OpKind.AVERAGE_POOL_2D):
        f = T.max_pool2d if k == OpKind.MAX_POOL_2D else T.average_pool2d
        return f(x, qi, qo, o.filter, o.stride, o.padding.value, o.activation.value)
    if k == OpKind.MEAN:
        return T.mean_hw(x, qi, qo)
    if k == OpKind.CONCATENATION:
        return T.concatenation([v[i] for i in op.inputs], [_qp(graph, i) for i in op.inputs], qo, o.axis)
    if k == OpKind.PAD:
        pads = v[op.inputs[1]]
        return np.pad(x, [tuple(p) for p in pads], constant_values=qo.zero_point)
    if k == OpKind.RESHAPE:
        return x.reshape(graph.tensor(op.outputs[0]).shape)
    if k == OpKind.SOFTMAX:
        return T.softmax(x, qi, qo, o.beta)
    if k == OpKind.LEAKY_RELU:
        return T.leaky_relu(x, qi, qo, o.alpha)
    unary = {OpKind.QUANTIZE: T.quantize, OpKind.RELU: T.relu, OpKind.RELU6: T.relu6, OpKind.LOGISTIC: T.logistic,
             OpKind.TANH: T.tanh, OpKind.HARD_SWISH: T.hard_swish}
    return unary[k](x, qi, qo)


def _float_conv(x, w, b, o, depthwise: bool) -> np.ndarray:
    """NHWC float convolution, OHWI (or 1HW(C*M)) weights, TFLite's SAME/VALID."""
    _, h, wd, cin = x.shape
    kh, kw = w.shape[1:3]
    (sh, sw), (dh, dw) = o.stride, o.dilation
    oh = T.compute_out_size(o.padding.value, h, kh, sh, dh)
    ow = T.compute_out_size(o.padding.value, wd, kw, sw, dw)
    pt, pb = T.compute_padding(sh, dh, h, kh, oh)
    pl, pr = T.compute_padding(sw, dw, wd, kw, ow)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    cols = np.stack([np.stack([xp[:, ky * dh:ky * dh + sh * (oh - 1) + 1:sh, kx * dw:kx * dw + sw * (ow - 1) + 1:sw, :]
                               for kx in range(kw)], axis=3) for ky in range(kh)], axis=3)   # 1,oh,ow,kh,kw,cin
    if depthwise:
        out = np.einsum("nyxijc,ijcm->nyxcm", cols, w[0].reshape(kh, kw, cin, -1)).reshape(1, oh, ow, -1)
    else:
        groups = cin // w.shape[3]
        per = w.shape[0] // groups
        out = np.concatenate([np.einsum("nyxijc,oijc->nyxo", cols[..., g * w.shape[3]:(g + 1) * w.shape[3]],
                                        w[g * per:(g + 1) * per]) for g in range(groups)], axis=-1)
    return out + (b if b is not None else 0)


def _float_act(y: np.ndarray, act: str) -> np.ndarray:
    lo, hi = {"NONE": (-np.inf, np.inf), "RELU": (0, np.inf), "RELU6": (0, 6), "RELU_N1_TO_1": (-1, 1)}[act]
    return np.clip(y, lo, hi)


def _float_pool(x, o, kind) -> np.ndarray:
    _, h, wd, _ = x.shape
    (kh, kw), (sh, sw) = o.filter, o.stride
    oh, ow = T.compute_out_size(o.padding.value, h, kh, sh), T.compute_out_size(o.padding.value, wd, kw, sw)
    pt, _ = T.compute_padding(sh, 1, h, kh, oh)
    pl, _ = T.compute_padding(sw, 1, wd, kw, ow)
    out = np.zeros((1, oh, ow, x.shape[3]), np.float64)
    for y in range(oh):
        for xx in range(ow):
            y0, x0 = y * sh - pt, xx * sw - pl
            win = x[:, max(0, y0):y0 + kh, max(0, x0):x0 + kw, :]
            out[:, y, xx] = win.max(axis=(1, 2)) if kind == OpKind.MAX_POOL_2D else win.mean(axis=(1, 2))
    return out


def _float_op(graph: Graph, op, v: dict) -> np.ndarray:
    k, o = op.kind, op.options
    x = v[op.inputs[0]]
    if k in (OpKind.CONV_2D, OpKind.DEPTHWISE_CONV_2D):
        b = v[op.inputs[2]] if op.inputs[2] else None
        return _float_act(_float_conv(x, v[op.inputs[1]], b, o, k == OpKind.DEPTHWISE_CONV_2D), o.activation.value)
    if k == OpKind.FULLY_CONNECTED:
        b = v[op.inputs[2]] if op.inputs[2] else 0
        return _float_act(x @ v[op.inputs[1]].T + b, o.activation.value)
    if k in (OpKind.ADD, OpKind.MUL):
        return _float_act(x + v[op.inputs[1]] if k == OpKind.ADD else x * v[op.inputs[1]], o.activation.value)
    if k in (OpKind.MAX_POOL_2D, OpKind.AVERAGE_POOL_2D):
        return _float_pool(x, o, k)
    if k == OpKind.MEAN:
        return x.mean(axis=o.axes, keepdims=o.keep_dims)
    if k == OpKind.CONCATENATION:
        return np.concatenate([v[i] for i in op.inputs], axis=o.axis)
    if k == OpKind.PAD:
        return np.pad(x, [tuple(p) for p in v[op.inputs[1]]])
    if k == OpKind.RESHAPE:
        return x.reshape(graph.tensor(op.outputs[0]).shape)
    if k == OpKind.SOFTMAX:
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    if k == OpKind.LEAKY_RELU:
        return np.where(x >= 0, x, x * o.alpha)
    unary = {OpKind.RELU: lambda a: np.maximum(a, 0), OpKind.RELU6: lambda a: np.clip(a, 0, 6),
             OpKind.LOGISTIC: lambda a: 1 / (1 + np.exp(-a)), OpKind.TANH: np.tanh,
             OpKind.HARD_SWISH: lambda a: a * np.clip(a + 3, 0, 6) / 6}
    return unary[k](x)


def _evaluate(graph: Graph, inputs: dict) -> dict:
    """Every tensor of ``graph`` on ``inputs``: J1's reference when it is written, else ours."""
    try:
        return reference.run(graph, inputs)
    except ImportModelError as e:
        if "not written yet" not in str(e):
            raise
    v = {n: t.data for n, t in graph.tensors.items() if t.is_const}
    v.update(inputs)
    for op in graph.ops:
        f = _float_op if graph.tensor(op.outputs[0]).dtype == DType.FLOAT32 else _int8_op
        v[op.outputs[0]] = f(graph, op, v)
    return v


# ---- against onnxruntime ---------------------------------------------------------------------------


def _nchw_to_ir(a: np.ndarray) -> np.ndarray:
    return a.transpose(0, 2, 3, 1) if a.ndim == 4 else a


def _draws(shape, n: int = DRAWS):
    rng = np.random.default_rng(1234)
    return [rng.normal(0, 1, shape).astype(np.float32) for _ in range(n)]


def _compare_qdq(name: str, arithmetic: str):
    """(equal items, all items, largest |difference| in LSBs, top-1 agreements, draws) of the int8
    IR (in ``arithmetic``) against onnxruntime on the QDQ model ``name``."""
    g = _read(name + "_qdq", arithmetic)
    sess = _session(name + "_qdq")
    (iname,), (oname,) = g.inputs, g.outputs
    qname, oq = g.consumers(iname)[0].outputs[0], g.producer(oname).inputs[0]     # QUANTIZE, DEQUANTIZE
    qi, qo = g.tensor(qname).quant, g.tensor(oq).quant
    equal = total = worst = top1 = 0
    draws = _draws([d for d in sess.get_inputs()[0].shape])
    for x in draws:
        xq = np.clip(np.round(x / np.float32(qi.scales[0])) + qi.zero_points[0], -128, 127).astype(np.int8)
        xf = ((xq.astype(np.float32) - qi.zero_points[0]) * np.float32(qi.scales[0])).astype(np.float32)
        (yf,) = sess.run(None, {iname: xf})
        yq = np.clip(np.round(yf / np.float32(qo.scales[0])) + qo.zero_points[0], -128, 127).astype(np.int64)
        ours = _evaluate(g, {iname: _nchw_to_ir(xf)})[oq].astype(np.int64)
        theirs = _nchw_to_ir(yq)
        equal += int((ours == theirs).sum())
        total += ours.size
        worst = max(worst, int(np.abs(ours - theirs).max()))
        top1 += int(ours.ravel()[np.argmax(theirs)] == ours.max())
    return equal, total, worst, top1, len(draws)


@pytest.mark.parametrize("name", MODELS)
def test_qdq_model_close_to_onnxruntime(name):
    """The whole network: the same top-1 on every draw, at most 3 LSBs apart (measured: convnet 71% of the
    items equal, at most 2 LSBs; actnet 33%, 3; kws 80%, 1). The differences are TFLM's arithmetic, not the
    reading (test_qdq_layers_match_onnxruntime): its double rounding and fixed-point functions, where
    onnxruntime rounds once in float, compound through the layers."""
    equal, total, worst, top1, draws = _compare_qdq(name, "tflm")
    assert top1 == draws, (name, top1, draws)
    assert worst <= 3, (name, worst)


@pytest.mark.parametrize("name", MODELS)
def test_qdq_model_issue_bound(name):
    """Issue 24 §7's ONNX bound (99% of the items equal, at most 1 LSB apart, the same top-1) holds with the
    IR read in onnxruntime's arithmetic (``read_onnx(..., arithmetic="onnxruntime")``): measured 100% equal
    on the three models."""
    equal, total, worst, top1, draws = _compare_qdq(name, "onnxruntime")
    assert worst <= 1 and equal >= 0.99 * total and top1 == draws, (name, equal, total, worst, top1)


@pytest.mark.parametrize("name", MODELS)
def test_qdq_layers_in_onnxruntimes_arithmetic_equal_onnxruntime(name):
    """Op by op, fed onnxruntime's own int8 inputs (its Q outputs exposed), the IR in onnxruntime's arithmetic
    gives onnxruntime's output on every item (single rounding, tables, QLinearSoftmax), but for AveragePool:
    onnxruntime computes it two ways. In the whole network it is DQ -> float AveragePool -> QuantizeLinear,
    ``nearbyint(y / s) + zp`` (ours); with its Q output exposed it fuses QLinearAveragePool,
    ``nearbyint(y / s + zp)``, the float addition rounding first (10% of convnet's items 1 LSB off)."""
    for label, (equal, total, worst) in _per_layer(name, arithmetic="onnxruntime").items():
        if "(AveragePool)" in label:
            assert worst <= 1, (name, label, worst)
        else:
            assert equal == total, (name, label, equal, total, worst)


def test_onnxruntime_arithmetic_graph_has_no_requantisation_after_fixed_output_ops():
    """In onnxruntime's arithmetic a Sigmoid, Tanh or Softmax writes the model's own quantisation (a table, or
    QLinearSoftmax): no QUANTIZE after it, unlike TFLM's fixed 1/256 and 1/128 outputs."""
    tflm, ort_ = _read("actnet_qdq", "tflm"), _read("actnet_qdq")
    assert tflm.arithmetic == "tflm" and ort_.arithmetic == "onnxruntime"
    count = lambda g: sum(op.kind == OpKind.QUANTIZE for op in g.ops)   # noqa: E731
    assert count(tflm) == count(ort_) + 2            # after Sigmoid_10 and Tanh_15
    assert _read("convnet").arithmetic == "tflm"     # a float model is quantised by us, TFLM's way


#: ONNX operators whose TFLM arithmetic rounds as onnxruntime's but for TFLM's double rounding (a few
#: tenths of a percent of the items here): 99% equal. The others are held to 1 LSB: TFLM's fixed-point
#: Softmax, Sigmoid, Tanh, HardSwish; averages rounded half away from zero where onnxruntime rounds half
#: to even; Gemm/MatMul, MEAN, Mul and LeakyRelu rounded twice with a small shift (2% of Gemm's items in kws).
_ROUNDS_AS_ORT = ("Conv", "Add", "MaxPool", "Pad", "Concat", "Reshape")


@pytest.mark.parametrize("name", MODELS)
def test_qdq_layers_match_onnxruntime(name):
    """Each op of the IR fed onnxruntime's own int8 inputs gives onnxruntime's output within 1 LSB, and
    99% of the items equal where TFLM's arithmetic rounds as onnxruntime does: the reading (layouts,
    quantisations, fused activations, folds) is right op by op."""
    for label, (equal, total, worst) in _per_layer(name).items():
        assert worst <= 1, (name, label, worst)
        if label.split("(")[-1].rstrip(")") in _ROUNDS_AS_ORT:
            assert equal >= 0.99 * total, (name, label, equal, total)


@pytest.mark.parametrize("name", MODELS)
def test_float_model_matches_onnxruntime(name):
    g = _read(name)
    sess = _session(name)
    (iname,), (oname,) = g.inputs, g.outputs
    assert g.source_format == "onnx" and g.source_layout == "NCHW"
    assert all(t.dtype in (DType.FLOAT32, DType.INT32) for t in g.tensors.values())
    for x in _draws([d for d in sess.get_inputs()[0].shape], 3):
        (yf,) = sess.run(None, {iname: x})
        ours = _evaluate(g, {iname: _nchw_to_ir(x)})[oname]
        np.testing.assert_allclose(ours, _nchw_to_ir(yf), rtol=1e-3, atol=1e-5)


def _to_ir(graph: Graph, name: str, a: np.ndarray) -> np.ndarray:
    """onnxruntime's value of IR tensor ``name`` in the IR's layout: NHWC, and a flatten of an NCHW feature
    map in NHWC order."""
    op = graph.producer(name)
    src = graph.tensor(op.inputs[0]).shape if op is not None and op.kind == OpKind.RESHAPE else ()
    if len(src) == 4 and a.ndim == 2:
        return a.reshape(1, src[3], src[1], src[2]).transpose(0, 2, 3, 1).reshape(a.shape)
    return _nchw_to_ir(a).reshape(graph.tensor(name).shape)


def _ort_all_quantized(name: str, x: np.ndarray, graph: Graph, optimize: bool = True) -> dict:
    """{IR tensor name: onnxruntime's int8 value, IR layout} of every tensor a QuantizeLinear writes in the QDQ
    model ``name`` (the outputs of the Q nodes made graph outputs), on the float input ``x``."""
    model = onnx.load(os.path.join(MODELS_DIR, name + "_qdq.onnx"))
    quantized = {}
    for n in model.graph.node:
        if n.op_type != "QuantizeLinear":
            continue
        ir = n.output[0] if n.input[0] in graph.inputs else n.input[0]
        if ir in graph.tensors:
            quantized[n.output[0]] = ir
            model.graph.output.append(helper.make_tensor_value_info(n.output[0], TensorProto.INT8, None))
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    res = dict(zip(names, sess.run(None, {graph.inputs[0]: x})))
    return {ir: _to_ir(graph, ir, res[q]) for q, ir in quantized.items()}


def _ort_op(graph: Graph, op, v: dict) -> np.ndarray:
    """One int8 op by the reference in the graph's arithmetic."""
    return reference._int8(graph, op, [None if n is None else v[n] for n in op.inputs])


def _per_layer(name: str, optimize: bool = True, arithmetic: str = "tflm") -> dict:
    """{source node label: (equal items, items, largest |difference|)} of each op of the QDQ model's IR (TFLM's
    arithmetic by sq8_tflm here, or the reference in ``arithmetic``), fed onnxruntime's own int8 inputs, against
    onnxruntime's int8 output."""
    g = _read(name + "_qdq", arithmetic)
    op_of = _int8_op if arithmetic == "tflm" else _ort_op
    qi = g.tensor(g.consumers(g.inputs[0])[0].outputs[0]).quant
    stats: dict = {}
    for x in _draws([d for d in _session(name + "_qdq").get_inputs()[0].shape], 16):
        xq = np.clip(np.round(x / np.float32(qi.scales[0])) + qi.zero_points[0], -128, 127)
        xf = ((xq - qi.zero_points[0]) * np.float32(qi.scales[0])).astype(np.float32)
        theirs = _ort_all_quantized(name, xf, g, optimize)
        v = {n: t.data for n, t in g.tensors.items() if t.is_const}
        v.update(theirs)
        for op in g.ops[1:-1]:                         # between the QUANTIZE and DEQUANTIZE at the edge
            out = op.outputs[0]
            ours = op_of(g, op, v)
            if out in theirs:
                e, n, w = stats.get(op.label, (0, 0, 0))
                d = np.abs(ours.astype(np.int64) - theirs[out].astype(np.int64))
                stats[op.label] = (e + int((d == 0).sum()), n + d.size, max(w, int(d.max())))
            else:
                v[out] = ours
    return stats


@pytest.mark.parametrize("name,sqnr_db,top1_misses", [("convnet", 25, 1), ("kws", 25, 1), ("actnet", 20, 8)])
def test_float_model_quantised_keeps_onnxruntimes_answers(name, sqnr_db, top1_misses):
    """A float ONNX model read as float32 IR and quantised by :func:`quantize_graph` (calibrated on draws of the
    input's distribution): for the classifiers, top-1 equal to onnxruntime's float model on nearly every input
    and at least 25 dB SQNR at the output (issue 24 §7). actnet's 6 raw outputs after Tanh at TFLite's fixed
    1/128 scale, two MatMul: 24.4 dB here (20 dB asked), its top-1 of a regression output not checked."""
    g = _read(name)
    sess = _session(name)
    shape = [d for d in sess.get_inputs()[0].shape]
    rng = np.random.default_rng(7)
    calibration = np.stack([_nchw_to_ir(rng.normal(0, 1, shape).astype(np.float32))[0] for _ in range(64)])
    q, _ = quantize_graph(g, {g.inputs[0]: calibration})
    qi, qo = q.tensor(q.inputs[0]).quant, q.tensor(q.outputs[0]).quant
    signal = noise = top1 = 0.0
    draws = _draws(shape, 8)
    for x in draws:
        (yf,) = sess.run(None, {g.inputs[0]: x})
        xq = np.clip(np.round(_nchw_to_ir(x) / np.float32(qi.scales[0])) + qi.zero_points[0], -128, 127)
        yq = reference.run(q, {q.inputs[0]: xq.astype(np.int8)})[q.outputs[0]]
        y = (yq.astype(np.float64) - qo.zero_points[0]) * qo.scales[0]
        signal += float((yf.astype(np.float64) ** 2).sum())
        noise += float(((_nchw_to_ir(yf) - y) ** 2).sum())
        top1 += int(np.argmax(y) == np.argmax(yf))
    assert 10 * np.log10(signal / noise) >= sqnr_db, (name, 10 * np.log10(signal / noise))
    assert top1 >= len(draws) - top1_misses, (name, top1)


# ---- refusals ----------------------------------------------------------------------------------------


def _raises(data: bytes, text: str, path: str = "bad.onnx") -> ImportModelError:
    with pytest.raises(ImportModelError) as e:
        read_onnx(path, data)
    assert text in str(e.value), str(e.value)
    assert str(e.value).startswith(path), str(e.value)
    return e.value


def _tiny(nodes, inits=(), in_shape=(1, 2, 4, 4), opset: int = 17, in_dims=None) -> bytes:
    """A float model of ``nodes`` reading ``x`` and writing ``y``."""
    dims = in_dims if in_dims is not None else list(in_shape)
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model.SerializeToString()


def _model_bytes(name: str) -> bytes:
    with open(os.path.join(MODELS_DIR, name + ".onnx"), "rb") as f:
        return f.read()


def test_refuses_empty_file():
    _raises(b"", "the file is empty, not an ONNX model")


def test_refuses_bytes_that_are_not_onnx():
    _raises(b"hello world, not a model at all", "not an ONNX model: its bytes do not parse as an ONNX protobuf "
            "(another format, or a truncated file)")
    _raises(b"\x08\x07\x12\x05hello", "not an ONNX model (no graph, no nodes or no IR version)")


@pytest.mark.parametrize("keep", [0.5, 0.98])
def test_refuses_truncated_model(keep):
    data = _model_bytes("convnet_qdq")
    e = _raises(data[:int(len(data) * keep)], "not an ONNX model")
    assert "truncated" in str(e)


def test_refuses_tflite_bytes_named_onnx():
    with open(os.path.join(os.path.dirname(__file__), "models", "sq8", "add_7x9x5.tflite"), "rb") as f:
        _raises(f.read(), "this is a TFLite model, not an ONNX one (name it .tflite)")


def test_refuses_unsupported_operator_by_name():
    data = _tiny([helper.make_node("LRN", ["x"], ["y"], name="lrn0", size=3)])
    e = _raises(data, "ONNX operator LRN (node 'lrn0', inputs ['x'], outputs ['y']) is not supported; supported: "
                "Conv, Relu, Clip, LeakyRelu, HardSwish, Sigmoid, Tanh, MaxPool, AveragePool, GlobalAveragePool, "
                "Gemm, MatMul, Add, Mul, Concat, Reshape, Flatten, Pad, Softmax, QuantizeLinear, DequantizeLinear")
    assert "operator lrn0 (LRN)" in str(e) and e.arg == "y"


def test_refuses_dynamic_shapes():
    data = _tiny([helper.make_node("Relu", ["x"], ["y"])], in_dims=["N", 2, 4, 4])
    _raises(data, "argument 'x': graph input 'x' has a dynamic shape ('?', 2, 4, 4); the importer needs fixed sizes "
            "(export the model with fixed input sizes (batch 1))")


def test_refuses_batch_above_one():
    _raises(_tiny([helper.make_node("Relu", ["x"], ["y"])], in_shape=(2, 2, 4, 4)),
            "graph input 'x' has batch 2: only batch 1 is supported")


def test_refuses_old_opset():
    _raises(_tiny([helper.make_node("Relu", ["x"], ["y"])], opset=9),
            "ONNX opset 9 is too old: the importer reads ai.onnx opset 11 and later (convert it with "
            "onnx.version_converter.convert_version(model, 13))")


def test_refuses_uint8_activations():
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q0"),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["y"], name="dq0")]
    data = _tiny(nodes, [("s", np.float32(0.1)), ("z", np.uint8(128))])
    _raises(data, "operator q0 (QuantizeLinear): argument 'xq': uint8 activations are not supported: the importer "
            "reads int8 QDQ models (quantise with activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)")


def test_refuses_int16_activations():
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q0"),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["y"], name="dq0")]
    _raises(_tiny(nodes, [("s", np.float32(0.1)), ("z", np.int16(0))], opset=21),
            "operator q0 (QuantizeLinear): argument 'xq': int16 activations are not supported")


def test_refuses_pool_with_ceil_mode_unlike_same():
    nodes = [helper.make_node("MaxPool", ["x"], ["y"], name="mp", kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1,
                              pads=[1, 1, 1, 1])]
    _raises(_tiny(nodes, in_shape=(1, 2, 5, 5)), "operator mp (MaxPool): argument 'x': MaxPool pads [1, 1, 1, 1] "
            "with ceil_mode=1 are neither TFLite's SAME nor VALID")


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pool_ceil_mode_is_same_padding(op, tmp_path):
    """ceil_mode's clipped last windows are TFLite's SAME (5 x 5, 2 x 2 windows, stride 2): equal to onnxruntime."""
    data = _tiny([helper.make_node(op, ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)],
                 in_shape=(1, 2, 5, 5))
    g = read_onnx("m.onnx", data)
    assert g.ops[0].options.padding.value == "SAME" and g.tensor("y").shape == (1, 3, 3, 2)
    x = np.random.default_rng(0).normal(0, 1, (1, 2, 5, 5)).astype(np.float32)
    (yf,) = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(_evaluate(g, {"x": _nchw_to_ir(x)})["y"], _nchw_to_ir(yf), rtol=1e-5, atol=1e-6)


def test_refuses_nchw_flatten_not_read_by_a_matmul():
    nodes = [helper.make_node("Flatten", ["x"], ["f"], name="flat"), helper.make_node("Relu", ["f"], ["y"])]
    _raises(_tiny(nodes), "operator flat (Flatten): argument 'x': a flatten of the NCHW feature map (1, 2, 4, 4) is "
            "read by other than Gemm/MatMul: NHWC flattens in another order")


def test_refuses_clip_range_without_tflite_form():
    nodes = [helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip0")]
    _raises(_tiny(nodes, [("lo", np.float32(-2)), ("hi", np.float32(2))]),
            "Clip(-2, 2) is not supported on its own: only Clip(0, 6) and Clip(0, inf)")


def test_refuses_pool_pads_neither_same_nor_valid():
    nodes = [helper.make_node("MaxPool", ["x"], ["y"], name="mp", kernel_shape=[2, 2], strides=[2, 2],
                              pads=[1, 1, 1, 1])]
    _raises(_tiny(nodes), "operator mp (MaxPool): argument 'x': MaxPool pads [1, 1, 1, 1] are neither TFLite's "
            "SAME nor VALID")


def test_float_model_reads_as_float32_and_refuses_nothing_it_takes():
    """A Conv whose pads are not SAME becomes PAD + VALID CONV_2D; a float Clip(0, 6) after it fuses."""
    w = np.ones((3, 2, 3, 3), np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[0, 2, 1, 0]),
             helper.make_node("Clip", ["c", "lo", "hi"], ["y"])]
    g = read_onnx("m.onnx", _tiny(nodes, [("w", w), ("lo", np.float32(0)), ("hi", np.float32(6))]))
    assert [op.kind for op in g.ops] == [OpKind.PAD, OpKind.CONV_2D]
    assert g.ops[1].options.activation.value == "RELU6"
    assert g.tensor(g.ops[1].inputs[1]).shape == (3, 3, 3, 2)
    assert g.tensor("y").shape == (1, 3, 4, 3) and g.tensor("y").dtype == DType.FLOAT32
    assert g.ops[0].label == "#0 (Conv)"


# ---- end to end: autotiler import, generate, run ------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_end_to_end_equals_the_reference_and_is_close_to_onnxruntime(name, tmp_path, capsys):
    """``autotiler import`` of the QDQ model, ``autotiler generate``, ``autotiler run`` on the simulated chip:
    the int8 output equals the IR's reference (onnxruntime's arithmetic, read_onnx's default) bit for bit, and
    onnxruntime's output on every item (issue 24 §7 asks 99%, 1 LSB)."""
    model = os.path.join(MODELS_DIR, name + "_qdq.onnx")
    imp, gen = tmp_path / "imp dir é", tmp_path / "gen"
    assert command.main(["import", model, "-o", str(imp), "--name", name]) == 0, capsys.readouterr().err
    desc = json.loads((imp / f"{name}.json").read_text())
    (port_in,), (port_out,) = desc["inputs"], desc["outputs"]
    assert port_in["dtype"] == "int8" and port_in["source"]["dtype"] == "float32"
    assert command.main(["generate", str(imp / f"{name}.py"), "-o", str(gen), "-q"]) == 0, capsys.readouterr().err
    g = _read(name + "_qdq")
    qname, oq = g.consumers(g.inputs[0])[0].outputs[0], g.producer(g.outputs[0]).inputs[0]
    qi = g.tensor(qname).quant
    sess = _session(name + "_qdq")
    for k, x in enumerate(_draws(port_in["source"]["shape"], 3)):
        xq = np.clip(np.round(x / np.float32(qi.scales[0])) + qi.zero_points[0], -128, 127).astype(np.int8)
        xf = ((xq.astype(np.float32) - qi.zero_points[0]) * np.float32(qi.scales[0])).astype(np.float32)
        xin, yout = tmp_path / f"x{k}.npy", tmp_path / f"y{k}.npy"
        np.save(xin, xq.reshape(port_in["shape"]))
        assert command.main(["run", str(gen), "--graph", desc["graph"], "--input", f"{port_in['name']}={xin}",
                             "--output", f"{port_out['name']}={yout}"]) == 0, capsys.readouterr().err
        ours = np.load(yout)
        assert ours.dtype == np.int8 and list(ours.shape) == port_out["shape"]
        expected = _evaluate(g, {g.inputs[0]: _nchw_to_ir(xf)})[oq]
        np.testing.assert_array_equal(_nchw_to_ir(ours), expected)
        (yf,) = sess.run(None, {g.inputs[0]: xf})
        theirs = np.round(yf / np.float32(port_out["scale"])) + port_out["zero_point"]
        np.testing.assert_array_equal(ours.astype(np.int64), theirs.astype(np.int64))


def test_qdq_bias_at_another_scale_is_rescaled_to_input_times_weight():
    """A hand-made QDQ conv whose int32 bias is at scale 1e-3, not s_in s_w = 5e-3: the IR's bias is
    rescaled (rounding) and its output is onnxruntime's."""
    rng = np.random.default_rng(3)
    w = rng.integers(-127, 128, (4, 2, 3, 3)).astype(np.int8)
    b = rng.integers(-20000, 20000, 4).astype(np.int32)
    inits = [("s_x", np.float32(0.1)), ("z", np.int8(0)), ("w_q", w), ("s_w", np.float32(0.05)),
             ("b_q", b), ("s_b", np.float32(1e-3)), ("z32", np.int32(0)), ("s_y", np.float32(0.5))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s_x", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s_x", "z"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w_q", "s_w", "z"], ["wd"]),
             helper.make_node("DequantizeLinear", ["b_q", "s_b", "z32"], ["bd"]),
             helper.make_node("Conv", ["xd", "wd", "bd"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("QuantizeLinear", ["c", "s_y", "z"], ["cq"]),
             helper.make_node("DequantizeLinear", ["cq", "s_y", "z"], ["y"])]
    data = _tiny(nodes, inits)
    g = read_onnx("m.onnx", data)
    conv = next(op for op in g.ops if op.kind == OpKind.CONV_2D)
    bias = g.tensor(conv.inputs[2])
    np.testing.assert_array_equal(bias.data, np.round(b * 1e-3 / np.float64(np.float32(0.1) * np.float32(0.05))))
    assert bias.quant.scales[0] == pytest.approx(5e-3)
    x = ((rng.integers(-128, 128, (1, 2, 4, 4))) * np.float32(0.1)).astype(np.float32)
    (yf,) = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    ours = _evaluate(g, {"x": _nchw_to_ir(x)})[conv.outputs[0]].astype(np.int64)
    assert np.abs(ours - np.round(_nchw_to_ir(yf) / np.float32(0.5))).max() <= 1


def test_shape_subgraph_of_a_reshape_is_left_out():
    """PyTorch's ``x.view(x.size(0), -1)`` after a global pool (Shape -> Gather -> Unsqueeze -> Concat ->
    Reshape) reads as one RESHAPE, equal to onnxruntime."""
    rng = np.random.default_rng(4)
    inits = [("w", rng.normal(0, 1, (3, 2, 3, 3)).astype(np.float32)), ("i0", np.array(0, np.int64)),
             ("ax", np.array([0], np.int64)), ("m1", np.array([-1], np.int64)),
             ("fc", rng.normal(0, 1, (5, 3)).astype(np.float32))]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("GlobalAveragePool", ["c"], ["p"]),
             helper.make_node("Shape", ["p"], ["s"]), helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "ax"], ["nu"]),
             helper.make_node("Concat", ["nu", "m1"], ["shape"], axis=0),
             helper.make_node("Reshape", ["p", "shape"], ["r"]), helper.make_node("Gemm", ["r", "fc"], ["y"], transB=1)]
    data = _tiny(nodes, inits)
    g = read_onnx("m.onnx", data)
    assert [op.kind for op in g.ops] == [OpKind.CONV_2D, OpKind.MEAN, OpKind.RESHAPE, OpKind.FULLY_CONNECTED]
    x = rng.normal(0, 1, (1, 2, 4, 4)).astype(np.float32)
    (yf,) = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(_evaluate(g, {"x": _nchw_to_ir(x)})["y"], yf, rtol=1e-4, atol=1e-5)


def test_shape_computation_feeding_other_than_a_reshape_is_refused_by_name():
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape0"), helper.make_node("Cast", ["s"], ["y"], to=1)]
    _raises(_tiny(nodes), "ONNX operator Shape (node 'shape0', inputs ['x'], outputs ['s']) is not supported")
