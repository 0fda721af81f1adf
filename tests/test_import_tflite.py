"""The TFLite front end (autotiler/importers/tflite_reader.py) and the IR reference
(autotiler/importers/reference.py) against TensorFlow Lite Micro.

Every committed TFLite model (tests/models/sq8: one operator each; tests/models/import_tflite_bad:
small networks, made by its make_models.py; tests/models/import when present) is read, checked,
and the reference's outputs equal the ``tflite-micro`` interpreter's byte for byte on random
inputs and on the extremes (float32 networks: to float rounding). Models the front end must
refuse are made here by rewriting committed ones with the schema's object API (tflite-micro's
``schema_py_generated``), and each refusal's text is matched.
"""

from __future__ import annotations

import json
from pathlib import Path

import flatbuffers
import numpy as np
import pytest
import tflite
from hypothesis import given, settings
from hypothesis import strategies as st

from autotiler.errors import ImportModelError
from autotiler.importers import reference
from autotiler.importers.ir import Activation, DType, OpKind, Padding
from autotiler.importers.tflite_reader import SUPPORTED, read_tflite

runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime",
                              reason="tflite-micro is in the test extra: pip install tflite-micro")
schema = pytest.importorskip("tflite_micro.tensorflow.lite.micro.python.schema_py_generated")

pytestmark = pytest.mark.usefixtures("private_harness_cache")

MODELS = Path(__file__).resolve().parent / "models"
SQ8 = sorted((MODELS / "sq8").glob("*.tflite"))
OWN = MODELS / "import_tflite_bad"
UNSUPPORTED_SQ8 = {"REDUCE_MAX", "SUM", "TRANSPOSE"}
RUNNABLE = [p for p in SQ8 if json.loads(p.with_suffix(".json").read_text())["op"] not in UNSUPPORTED_SQ8] + \
    [p for p in sorted(OWN.glob("*.tflite")) if "dynamic" not in p.stem and "float16" not in p.stem] + \
    [p for p in sorted((MODELS / "import").glob("*.tflite")) if p.stem != "int16_activations"]
SEEDS = 4


def _read(path: Path):
    return read_tflite(str(path), path.read_bytes())


def _draws(graph):
    """Random inputs per seed, then every int8 input all -128 and all 127."""
    ts = [graph.tensor(n) for n in graph.inputs]
    for seed in range(SEEDS):
        rng = np.random.default_rng(seed)
        yield [rng.integers(-128, 128, size=t.shape).astype(np.int8) if t.dtype == DType.INT8
               else rng.uniform(-3.0, 4.0, size=t.shape).astype(np.float32) for t in ts]
    if all(t.dtype == DType.INT8 for t in ts):
        yield [np.full(t.shape, -128, np.int8) for t in ts]
        yield [np.full(t.shape, 127, np.int8) for t in ts]


def _tflm(data: bytes, xs, preserve: bool = False):
    config = runtime.InterpreterConfig.kPreserveAllTensors if preserve else runtime.InterpreterConfig.kAllocationRecording
    interp = runtime.Interpreter.from_bytes(data, arena_size=1 << 22, intrepreter_config=config)
    for i, x in enumerate(xs):
        interp.set_input(x, i)
    interp.invoke()
    return interp


def _tensor_indices(data: bytes) -> dict:
    """{tensor name: index} of the model's first subgraph (first occurrence of a name)."""
    g = tflite.Model.GetRootAsModel(data, 0).Subgraphs(0)
    out: dict = {}
    for i in range(g.TensorsLength()):
        out.setdefault(g.Tensors(i).Name().decode(), i)
    return out


@pytest.mark.parametrize("path", RUNNABLE, ids=[f"{p.parent.name}/{p.stem}" for p in RUNNABLE])
def test_reference_equals_tflm(path: Path):
    """Every tensor an operator computes, not only the outputs: TFLM keeps them all
    (kPreserveAllTensors)."""
    graph = _read(path)
    data = path.read_bytes()
    index = _tensor_indices(data)
    floating = all(graph.tensor(n).dtype == DType.FLOAT32 and graph.tensor(n).quant is None
                   for n in (*graph.inputs, *(op.outputs[0] for op in graph.ops)))
    for k, xs in enumerate(_draws(graph)):
        interp = _tflm(data, xs, preserve=True)
        got = reference.run(graph, dict(zip(graph.inputs, xs)))
        for i, name in enumerate(graph.outputs):
            assert got[name].tobytes() == interp.get_output(i).tobytes() or floating, (path.stem, k, name)
        for op in graph.ops:
            name = op.outputs[0]
            want = interp.GetTensor(index[name], 0)["tensor_data"]
            assert got[name].dtype == want.dtype and got[name].shape == want.shape, (name, got[name].shape, want.shape)
            if floating:
                np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-5)
                continue
            bad = np.flatnonzero(got[name] != want)
            assert bad.size == 0, (f"{path.stem} draw {k} operator {op.label} output {name}: {bad.size}/{want.size} "
                                   f"differ, first at {bad[0]}: ref {got[name].flat[bad[0]]} tflm {want.flat[bad[0]]}")


def _sidecar(path: Path) -> dict:
    return json.loads(path.with_suffix(".json").read_text())


SUPPORTED_SQ8 = [p for p in SQ8 if _sidecar(p)["op"] not in UNSUPPORTED_SQ8]


@pytest.mark.parametrize("path", SUPPORTED_SQ8, ids=[p.stem for p in SUPPORTED_SQ8])
def test_graph_matches_the_sidecar(path: Path):
    """Options, shapes, quantisation and constant data as the converter wrote them (the sidecar was
    written from TensorFlow's own schema reader)."""
    side, graph = _sidecar(path), _read(path)
    assert len(graph.ops) == 1 and graph.ops[0].kind.value == side["op"]
    op, o, so = graph.ops[0], graph.ops[0].options, side["options"]
    assert op.label == f"0 ({side['op']})" and graph.source_format == "tflite" and graph.source_layout == "NHWC"
    for name, t in zip(op.inputs, side["inputs"]):
        if t is None or name is None or (op.kind == OpKind.MEAN and name != op.inputs[0]):
            continue
        ten = graph.tensor(name)
        assert list(ten.shape) == t["shape"] and list(ten.quant.scales) == pytest.approx(t["scales"], rel=1e-7)
        assert list(ten.quant.zero_points) == t["zero_points"]
        if "data" in t:
            assert ten.is_const and not ten.data.flags.writeable
            assert ten.data.tolist() == np.asarray(t["data"]).reshape(t["shape"]).tolist()
    assert list(graph.tensor(op.outputs[0]).shape) == side["outputs"][0]["shape"]
    if "strideH" in so:
        assert o.stride == (so["strideH"], so["strideW"]) and o.padding == Padding(so["padding"])
    if "dilationHFactor" in so:
        assert o.dilation == (so["dilationHFactor"], so["dilationWFactor"])
    if "depthMultiplier" in so:
        assert o.depth_multiplier == so["depthMultiplier"]
    if "filterHeight" in so:
        assert o.filter == (so["filterHeight"], so["filterWidth"])
    if "fusedActivationFunction" in so:
        assert o.activation == Activation(so["fusedActivationFunction"])
    if op.kind == OpKind.CONCATENATION:
        assert o.axis == so["axis"] % 4
    if op.kind == OpKind.MEAN:
        assert o.axes == (1, 2) and o.keep_dims == so["keepDims"] and len(op.inputs) == 1
    if op.kind == OpKind.SOFTMAX:
        assert o.beta == pytest.approx(so["beta"])
    if op.kind == OpKind.LEAKY_RELU:
        assert o.alpha == pytest.approx(so["alpha"])


@pytest.mark.parametrize("path", [p for p in SQ8 if _sidecar(p)["op"] in UNSUPPORTED_SQ8],
                         ids=lambda p: p.stem)
def test_unsupported_operators_are_refused_by_name(path: Path):
    side = _sidecar(path)
    with pytest.raises(ImportModelError) as e:
        _read(path)
    text = str(e.value)
    assert f"{path}: operator 0 ({side['op']}): operator {side['op']} is not supported (operator 0, inputs " \
           "'serving_default_x:0'" in text
    assert "outputs 'PartitionedCall:0')" in text and f"supported TFLite operators: {', '.join(SUPPORTED)}" in text


IMPORT = [p for p in sorted((MODELS / "import").glob("*.tflite")) if p.stem != "int16_activations"]
FOLDED = {"SHAPE", "STRIDED_SLICE", "PACK"}


@pytest.mark.parametrize("path", IMPORT, ids=[p.stem for p in IMPORT])
def test_interface_and_operators_match_the_import_sidecars(path: Path):
    """The whole-network models' interface as the converter wrote it (names, shapes, dtypes, scales,
    zero points, in order), and their operators less the folded shape computations."""
    side, graph = _sidecar(path), _read(path)
    for names, want in ((graph.inputs, side["inputs"]), (graph.outputs, side["outputs"])):
        assert list(names) == [w["name"] for w in want]
        for name, w in zip(names, want):
            t = graph.tensor(name)
            assert list(t.shape) == w["shape"] and t.dtype.value == w["dtype"]
            if w["scale"] is None:
                assert t.quant is None
            else:
                assert t.quant.scales == (pytest.approx(w["scale"], rel=1e-7),) and t.quant.zero_points == (w["zero_point"],)
    assert [op.kind.value for op in graph.ops] == [k for k in side["operators"] if k not in FOLDED]
    assert [op.label for op in graph.ops] == [f"{i} ({k})" for i, k in enumerate(side["operators"]) if k not in FOLDED]


def test_int16_model_refused_by_name():
    path = MODELS / "import" / "int16_activations.tflite"
    if not path.exists():
        pytest.skip("tests/models/import not committed")
    with pytest.raises(ImportModelError) as e:
        _read(path)
    assert str(e.value) == (f"{path}: operator 0 (CONV_2D): argument 'input_0': int16 activations (tensor 'input_0') "
                            "are not supported yet: import an int8 model (TFLite's converter with int8 full-integer "
                            "quantisation)")


# ---- shape-computing subgraphs, float models -----------------------------------------------------


@pytest.mark.parametrize("name", ["conv_pool_fc_int8", "mixed_float_io"])
def test_shape_subgraph_folds_to_the_static_graph(name: str):
    """The dynamic-batch twin holds SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE and placeholder shapes
    ([1, 1]) after it, which TFLM cannot run: folded and shaped, it computes what the static model
    computes (TFLM's answers, by test_reference_equals_tflm)."""
    static, dynamic = _read(OWN / f"{name}.tflite"), _read(OWN / f"{name}_dynamic.tflite")
    assert {op.kind for op in dynamic.ops} <= {op.kind for op in static.ops} | {OpKind.RESHAPE, OpKind.SQUEEZE}
    assert not any("Shape" == n or "strided_slice" in n or n == "stack" for n in dynamic.tensors)
    reshape = next(op for op in dynamic.ops if op.kind == OpKind.RESHAPE)
    assert len(reshape.inputs) == 1
    assert [dynamic.tensor(n).shape for n in dynamic.outputs] == [static.tensor(n).shape for n in static.outputs]
    for xs in _draws(static):
        a = reference.run(static, dict(zip(static.inputs, xs)))
        b = reference.run(dynamic, dict(zip(dynamic.inputs, xs)))
        for sa, sb in zip(static.outputs, dynamic.outputs):
            assert a[sa].tobytes() == b[sb].tobytes()


def test_float32_model_is_read_as_float():
    graph = _read(OWN / "mixed_float32.tflite")
    for t in graph.tensors.values():
        assert t.dtype in (DType.FLOAT32, DType.INT32) and t.quant is None
    assert graph.tensor(graph.inputs[0]).shape == (1, 7, 6, 3)
    kinds = [op.kind for op in graph.ops]
    assert OpKind.QUANTIZE not in kinds and OpKind.DEPTHWISE_CONV_2D in kinds


def test_float16_weights_fold_to_float32():
    """DEQUANTIZE of float16 constants (TFLite's float16 quantisation; TFLM cannot run it) folds: the graph
    is the float32 one with the weights rounded to float16."""
    f16, f32 = _read(OWN / "mixed_float16.tflite"), _read(OWN / "mixed_float32.tflite")
    assert [op.kind for op in f16.ops] == [op.kind for op in f32.ops]
    for op16, op32 in zip(f16.ops, f32.ops):
        for a, b in zip(op16.inputs, op32.inputs):
            if f32.tensor(b).is_const and f32.tensor(b).dtype == DType.FLOAT32:
                assert f16.tensor(a).data.dtype == np.float32
                assert f16.tensor(a).data.tolist() == f32.tensor(b).data.astype(np.float16).astype(np.float32).tolist()
    x = np.random.default_rng(0).uniform(-2, 3, (1, 7, 6, 3)).astype(np.float32)
    a = reference.run(f16, {f16.inputs[0]: x})[f16.outputs[0]]
    b = reference.run(f32, {f32.inputs[0]: x})[f32.outputs[0]]
    np.testing.assert_allclose(a, b, atol=1e-2)


def test_float_interface_around_an_int8_body():
    graph = _read(OWN / "mixed_float_io.tflite")
    assert graph.ops[0].kind == OpKind.QUANTIZE and graph.ops[-1].kind == OpKind.DEQUANTIZE
    assert graph.tensor(graph.inputs[0]).dtype == DType.FLOAT32 and graph.tensor(graph.outputs[0]).dtype == DType.FLOAT32
    pad = next(op for op in graph.ops if op.kind == OpKind.PAD)
    assert graph.tensor(pad.inputs[1]).data.tolist() == [[0, 0], [1, 2], [2, 1], [0, 0]]
    dw = next(op for op in graph.ops if op.kind == OpKind.DEPTHWISE_CONV_2D)
    assert dw.options.depth_multiplier == 2 and graph.tensor(dw.inputs[1]).quant.axis == 3
    mean = next(op for op in graph.ops if op.kind == OpKind.MEAN)
    assert mean.options.axes == (1, 2) and not mean.options.keep_dims


# ---- rewritten models ----------------------------------------------------------------------------


def _load(path: Path):
    return schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(path.read_bytes(), 0))


def _pack(model) -> bytes:
    b = flatbuffers.Builder(1024)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def _set_opcode(model, code: int, custom: bytes | None = None) -> None:
    oc = model.operatorCodes[model.subgraphs[0].operators[0].opcodeIndex]
    oc.builtinCode, oc.deprecatedBuiltinCode, oc.customCode = code, min(code, 127), custom


def _mean_rewritten(axes, keep_dims: bool):
    """mean_7x9x5 reducing ``axes`` instead of H, W (the axes constant, the output shape and the
    option rewritten): TFLM runs it."""
    model = _load(MODELS / "sq8" / "mean_7x9x5.tflite")
    g = model.subgraphs[0]
    op = g.operators[0]
    axes_t = g.tensors[op.inputs[1]]
    model.buffers[axes_t.buffer].data = np.asarray(axes, "<i4").view(np.uint8)
    axes_t.shape = np.asarray([len(axes)], np.int32)
    shape = list(g.tensors[op.inputs[0]].shape)
    out = [1 if i in axes else d for i, d in enumerate(shape)] if keep_dims else \
        [d for i, d in enumerate(shape) if i not in axes]
    g.tensors[op.outputs[0]].shape = np.asarray(out, np.int32)
    g.tensors[op.outputs[0]].shapeSignature = None
    op.builtinOptions.keepDims = keep_dims
    return _pack(model)


@pytest.mark.parametrize("axes, keep_dims", [((3,), True), ((1,), False), ((1, 2), False), ((2, 3), True),
                                             ((1, 2, 3), False)])
def test_mean_over_other_axes_equals_tflm(axes, keep_dims):
    data = _mean_rewritten(axes, keep_dims)
    graph = read_tflite("mean.tflite", data)
    assert graph.ops[0].options.axes == axes and graph.ops[0].options.keep_dims == keep_dims
    for xs in _draws(graph):
        want = _tflm(data, xs).get_output(0)
        got = reference.run(graph, {graph.inputs[0]: xs[0]})[graph.outputs[0]]
        assert got.shape == want.shape and got.tobytes() == want.tobytes()


class _Net:
    """A TFLite model written with the schema's object API: graphs the converter does not emit."""

    DTYPES = {schema.TensorType.INT8: "i1", schema.TensorType.INT32: "<i4", schema.TensorType.INT64: "<i8",
              schema.TensorType.FLOAT32: "<f4"}

    def __init__(self):
        self.model = schema.ModelT()
        self.model.version, self.model.buffers, self.model.operatorCodes = 3, [schema.BufferT()], []
        self.g = schema.SubGraphT()
        self.g.tensors, self.g.operators = [], []
        self.model.subgraphs = [self.g]

    def tensor(self, name, shape, ttype=schema.TensorType.INT32, data=None, quant=None) -> int:
        t = schema.TensorT()
        t.name, t.shape, t.type, t.buffer = name, np.asarray(shape, np.int32), ttype, 0
        if data is not None:
            b = schema.BufferT()
            b.data = np.asarray(data).astype(self.DTYPES[ttype]).reshape(-1).view(np.uint8)
            self.model.buffers.append(b)
            t.buffer = len(self.model.buffers) - 1
        if quant is not None:
            t.quantization = schema.QuantizationParametersT()
            t.quantization.scale, t.quantization.zeroPoint = [quant[0]], [quant[1]]
        self.g.tensors.append(t)
        return len(self.g.tensors) - 1

    def const(self, name, values, ttype=schema.TensorType.INT32) -> int:
        values = np.asarray(values)
        return self.tensor(name, values.shape, ttype, values)

    def op(self, code, inputs, outputs, options=None) -> None:
        codes = [c.builtinCode for c in self.model.operatorCodes]
        if code not in codes:
            oc = schema.OperatorCodeT()
            oc.builtinCode, oc.deprecatedBuiltinCode, oc.version = code, min(code, 127), 1
            self.model.operatorCodes.append(oc)
            codes.append(code)
        o = schema.OperatorT()
        o.opcodeIndex, o.inputs, o.outputs = codes.index(code), list(inputs), list(outputs)
        if options is not None:
            o.builtinOptionsType = getattr(schema.BuiltinOptions, type(options).__name__[:-1])
            o.builtinOptions = options
        self.g.operators.append(o)

    def pack(self, inputs, outputs) -> bytes:
        self.g.inputs, self.g.outputs = list(inputs), list(outputs)
        return _pack(self.model)


def _options(cls, **fields):
    o = cls()
    for k, v in fields.items():
        setattr(o, k, v)
    return o


def test_shape_computations_fold():
    """SHAPE, STRIDED_SLICE, REDUCE_PROD, CAST, MUL, FLOOR_DIV, GATHER, PACK, UNPACK, EXPAND_DIMS, FILL,
    CONCATENATION, SLICE, SUB, ADD on shapes and constants fold to the RESHAPEs' new shapes; the shapes the
    model records after them ([1, 1, 1]) are replaced by the inferred ones."""
    B, T = schema.BuiltinOperator, schema.TensorType
    n = _Net()
    q = (0.05, 3)
    x = n.tensor("x", [1, 4, 6, 2], T.INT8, quant=q)
    shape = n.tensor("shape", [4])
    n.op(B.SHAPE, [x], [shape], _options(schema.ShapeOptionsT, outType=T.INT32))
    hw = n.tensor("hw", [2])
    n.op(B.STRIDED_SLICE, [shape, n.const("b", [1]), n.const("e", [3]), n.const("s", [1])], [hw],
         _options(schema.StridedSliceOptionsT))
    count = n.tensor("count", [])
    n.op(B.REDUCE_PROD, [hw, n.const("ax", [0])], [count], _options(schema.ReducerOptionsT, keepDims=False))
    c64, c32 = n.tensor("c64", [], T.INT64), n.tensor("c32", [])
    n.op(B.CAST, [count], [c64], _options(schema.CastOptionsT, inDataType=T.INT32, outDataType=T.INT64))
    n.op(B.CAST, [c64], [c32], _options(schema.CastOptionsT, inDataType=T.INT64, outDataType=T.INT32))
    m, two, first = n.tensor("m", []), n.tensor("two", []), n.tensor("first", [])
    n.op(B.MUL, [c32, n.const("one", 1)], [m], _options(schema.MulOptionsT))
    n.op(B.FLOOR_DIV, [n.const("five", 5), n.const("two_", 2)], [two])
    n.op(B.GATHER, [shape, n.const("zero", 0)], [first], _options(schema.GatherOptionsT, axis=0))
    packed = n.tensor("packed", [3])
    n.op(B.PACK, [first, m, two], [packed], _options(schema.PackOptionsT, valuesCount=3, axis=0))
    y, z = n.tensor("y", [1, 1, 1], T.INT8, quant=q), n.tensor("z", [1, 1, 1], T.INT8, quant=q)
    n.op(B.RESHAPE, [x, packed], [y], _options(schema.ReshapeOptionsT))
    n.op(B.RELU, [y], [z])
    parts = [n.tensor(f"part{i}", []) for i in range(3)]
    n.op(B.UNPACK, [packed], parts, _options(schema.UnpackOptionsT, num=3, axis=0))
    e, f, g1 = n.tensor("e", [1]), n.tensor("f", [1]), n.tensor("g1", [1])
    n.op(B.EXPAND_DIMS, [parts[1], n.const("axis0", [0])], [e])
    n.op(B.FILL, [n.const("dims", [1]), parts[2]], [f])
    n.op(B.GATHER, [shape, n.const("idx", [0])], [g1], _options(schema.GatherOptionsT, axis=0))
    cat, sl, sub, add = (n.tensor(k, [3]) for k in ("cat", "sl", "sub", "add"))
    n.op(B.CONCATENATION, [g1, e, f], [cat], _options(schema.ConcatenationOptionsT, axis=0))
    n.op(B.SLICE, [cat, n.const("sb", [0]), n.const("ss", [-1])], [sl])
    n.op(B.SUB, [sl, n.const("zeros", [0, 0, 0])], [sub], _options(schema.SubOptionsT))
    n.op(B.ADD, [sub, n.const("zeros2", [0, 0, 0])], [add], _options(schema.AddOptionsT))
    w = n.tensor("w", [1, 1, 1], T.INT8, quant=q)
    n.op(B.RESHAPE, [z, add], [w], _options(schema.ReshapeOptionsT))
    graph = read_tflite("fold.tflite", n.pack([x], [w]))
    assert [op.label for op in graph.ops] == ["9 (RESHAPE)", "10 (RELU)", "19 (RESHAPE)"]
    assert set(graph.tensors) == {"x", "y", "z", "w"}
    assert graph.tensor("y").shape == graph.tensor("z").shape == graph.tensor("w").shape == (1, 24, 2)
    xs = np.random.default_rng(0).integers(-128, 128, (1, 4, 6, 2)).astype(np.int8)
    got = reference.run(graph, {"x": xs})["w"]
    assert got.tobytes() == np.maximum(xs, 3).reshape(1, 24, 2).tobytes()


def test_reshape_from_options_and_minus_one():
    T = schema.TensorType
    n = _Net()
    x = n.tensor("x", [1, 3, 4, 2], T.INT8, quant=(0.1, 0))
    y = n.tensor("y", [1], T.INT8, quant=(0.1, 0))
    n.op(schema.BuiltinOperator.RESHAPE, [x], [y], _options(schema.ReshapeOptionsT, newShape=[1, -1, 8]))
    graph = read_tflite("r.tflite", n.pack([x], [y]))
    assert graph.tensor("y").shape == (1, 3, 8) and graph.ops[0].inputs == ("x",)
    n.g.operators[0].builtinOptions.newShape = [1, -1, 5]
    assert _refusal(n.pack([x], [y])) == ("bad.tflite: operator 0 (RESHAPE): invalid RESHAPE: new shape [1, -1, 5] "
                                          "does not hold 24 values")


def test_dynamic_range_quantisation_refused():
    T = schema.TensorType
    n = _Net()
    x = n.tensor("x", [1, 4, 4, 2], T.FLOAT32)
    w = n.tensor("w", [3, 1, 1, 2], T.INT8, np.ones((3, 1, 1, 2)), quant=(0.1, 0))
    y = n.tensor("y", [1, 4, 4, 3], T.FLOAT32)
    n.op(schema.BuiltinOperator.CONV_2D, [x, w, -1], [y],
         _options(schema.Conv2DOptionsT, padding=schema.Padding.VALID, strideH=1, strideW=1))
    assert _refusal(n.pack([x], [y])) == (
        "bad.tflite: operator 0 (CONV_2D): argument 'w': CONV_2D takes float32 activations through INT8 weights 'w' "
        "(dynamic-range quantisation): not supported; convert with a representative dataset (full int8) or without "
        "quantisation (float32, then --calibration)")


def _refusal(data: bytes, name: str = "bad.tflite") -> str:
    with pytest.raises(ImportModelError) as e:
        read_tflite(name, data)
    return str(e.value)


def test_empty_random_and_onnx_bytes_are_not_tflite():
    assert _refusal(b"") == "bad.tflite: the file is empty, not a TFLite model"
    not_tflite = ("bad.tflite: not a TFLite model: no 'TFL3' flatbuffer identifier at bytes 4..7 (give a .tflite "
                  "file written by TensorFlow Lite's converter)")
    assert _refusal(np.random.default_rng(1).integers(0, 256, 300, dtype=np.uint8).tobytes()) == not_tflite
    assert _refusal(b"TFL3") == not_tflite
    # the start of an ONNX ModelProto: ir_version 8, producer_name "pytorch", opset ...
    assert _refusal(b"\x08\x08\x12\x07pytorch\x1a\x052.1.0:\x8a\x01\n\x1c\n\x05input") == not_tflite


@pytest.mark.parametrize("cut", [8, 24, 0.25, 0.5, 0.9])
def test_truncated_models_are_refused(cut):
    data = (OWN / "conv_pool_fc_int8.tflite").read_bytes()
    n = cut if isinstance(cut, int) else int(len(data) * cut)
    text = _refusal(data[:n])
    assert text.startswith("bad.tflite: ") and "truncated or corrupt" in text, text


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.data())
def test_damaged_files_end_in_one_import_error(data):
    """A cut or a few overwritten bytes anywhere: an ImportModelError, or a graph that checks and the
    reference runs (never another exception)."""
    path = data.draw(st.sampled_from([OWN / "mixed_float_io_dynamic.tflite", OWN / "conv_pool_fc_int8.tflite",
                                      MODELS / "sq8" / "dw_3x3_s2_same_m2_asym.tflite"]))
    raw = bytearray(path.read_bytes())
    if data.draw(st.booleans()):
        raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
    else:
        for _ in range(data.draw(st.integers(1, 6))):
            raw[data.draw(st.integers(8, len(raw) - 1))] = data.draw(st.integers(0, 255))
    try:
        graph = read_tflite("damaged.tflite", bytes(raw))
    except ImportModelError as e:
        assert str(e).startswith("damaged.tflite")
        return
    if sum(int(np.prod(t.shape)) for t in graph.tensors.values()) > 1 << 20:
        return  # a corrupted shape may be huge; reading it is all this checks
    try:
        reference.run(graph, {n: np.zeros(graph.tensor(n).shape, graph.tensor(n).dtype.numpy) for n in graph.inputs})
    except ImportModelError as e:
        assert str(e).startswith("damaged.tflite")


def test_unsupported_and_custom_operators_named():
    model = _load(MODELS / "sq8" / "logistic_7x9x5.tflite")
    _set_opcode(model, schema.BuiltinOperator.EXP)
    text = _refusal(_pack(model))
    assert text.startswith("bad.tflite: operator 0 (EXP): operator EXP is not supported (operator 0, inputs "
                           "'serving_default_x:0', outputs 'PartitionedCall:0') (supported TFLite operators: CONV_2D, ")
    _set_opcode(model, schema.BuiltinOperator.CUSTOM, b"MyOp")
    assert "operator CUSTOM(MyOp) is not supported" in _refusal(_pack(model))


def _retyped(path: Path, ttype: int) -> bytes:
    model = _load(path)
    for t in model.subgraphs[0].tensors:
        if t.type == schema.TensorType.INT8:
            t.type = ttype
    return _pack(model)


def test_int16_and_uint8_refused_by_name():
    relu = MODELS / "sq8" / "relu_7x9x5.tflite"
    assert _refusal(_retyped(relu, schema.TensorType.INT16)) == (
        "bad.tflite: operator 0 (RELU): argument 'serving_default_features:0': int16 activations (tensor "
        "'serving_default_features:0') are not supported yet: import an int8 model (TFLite's converter with int8 "
        "full-integer quantisation)")
    assert _refusal(_retyped(relu, schema.TensorType.UINT8)) == (
        "bad.tflite: operator 0 (RELU): argument 'serving_default_features:0': uint8 tensors (tensor "
        "'serving_default_features:0') are not supported: TFLite's uint8 quantisation is deprecated; convert the "
        "model with int8 quantisation")
    assert "of type COMPLEX64 is not supported (int8, int32, int64, float32 are)" in \
        _refusal(_retyped(relu, schema.TensorType.COMPLEX64))


def test_int8_tensors_need_per_tensor_quantisation():
    model = _load(MODELS / "sq8" / "relu_7x9x5.tflite")
    g = model.subgraphs[0]
    out = g.tensors[g.outputs[0]]
    out.quantization.scale, out.quantization.zeroPoint = [0.1, 0.2], [0, 0]
    assert _refusal(_pack(model)) == (
        "bad.tflite: operator 0 (RELU): argument 'PartitionedCall:0': activation 'PartitionedCall:0' is quantised per "
        "channel (2 scales): TFLite's int8 activations have one scale and zero point")
    out.quantization = None
    assert _refusal(_pack(model)) == ("bad.tflite: operator 0 (RELU): argument 'PartitionedCall:0': int8 tensor "
                                      "'PartitionedCall:0' has no quantisation parameters (scale, zero point)")


def _reshaped_input(shape, signature) -> bytes:
    model = _load(MODELS / "sq8" / "relu_7x9x5.tflite")
    g = model.subgraphs[0]
    t = g.tensors[g.inputs[0]]
    t.shape = np.asarray(shape, np.int32)
    t.shapeSignature = None if signature is None else np.asarray(signature, np.int32)
    return _pack(model)


def test_dynamic_shapes_and_batches_refused():
    assert _refusal(_reshaped_input([1, 7, 9, 5], [1, -1, 9, 5])) == (
        "bad.tflite: argument 'serving_default_features:0': graph input 'serving_default_features:0' has a dynamic "
        "shape [1, -1, 9, 5] (-1 beyond the batch): give the model fixed input dimensions")
    assert _refusal(_reshaped_input([2, 7, 9, 5], None)) == (
        "bad.tflite: argument 'serving_default_features:0': graph input 'serving_default_features:0' has a batch of 2 "
        "(shape [2, 7, 9, 5]): only one image per inference is supported; convert with batch 1")
    graph = read_tflite("ok.tflite", _reshaped_input([1, 7, 9, 5], [-1, 7, 9, 5]))   # a dynamic batch is one image
    assert graph.tensor(graph.inputs[0]).shape == (1, 7, 9, 5)


def test_control_flow_refused():
    model = _load(MODELS / "sq8" / "logistic_7x9x5.tflite")
    model.subgraphs.append(model.subgraphs[0])
    _set_opcode(model, schema.BuiltinOperator.WHILE)
    assert _refusal(_pack(model)) == ("bad.tflite: operator 0 (WHILE): WHILE calls another subgraph (the model has "
                                      "2): control flow is not supported, only a model of one subgraph")


def test_unsupported_fused_activation_refused():
    model = _load(MODELS / "sq8" / "conv_3x3_same.tflite")
    model.subgraphs[0].operators[0].builtinOptions.fusedActivationFunction = schema.ActivationFunctionType.TANH
    assert _refusal(_pack(model)) == ("bad.tflite: operator 0 (CONV_2D): fused activation TANH is not supported "
                                      "(NONE, RELU, RELU6, RELU_N1_TO_1 are)")


def test_computed_bias_refused():
    model = _load(MODELS / "sq8" / "conv_3x3_same.tflite")
    g = model.subgraphs[0]
    bias = g.operators[0].inputs[2]
    g.inputs = np.asarray(list(g.inputs) + [bias], np.int32)
    model.buffers[g.tensors[bias].buffer].data = None
    assert _refusal(_pack(model)) == (
        "bad.tflite: operator 0 (CONV_2D): argument 'conv2d_1/BiasAdd;conv2d_1/convolution;conv2d_1/Squeeze': input 2 "
        "('conv2d_1/BiasAdd;conv2d_1/convolution;conv2d_1/Squeeze') of CONV_2D must be constant (a computed filter, "
        "bias, padding, axis or shape is not supported)")


def test_duplicate_tensor_names_made_unique():
    model = _load(MODELS / "sq8" / "relu_7x9x5.tflite")
    g = model.subgraphs[0]
    g.tensors[g.outputs[0]].name = g.tensors[g.inputs[0]].name
    graph = read_tflite("dup.tflite", _pack(model))
    assert len(set(graph.inputs + graph.outputs)) == 2 and graph.outputs[0].startswith("serving_default_features:0_")


# ---- the reference's own errors ------------------------------------------------------------------


def test_reference_checks_its_inputs():
    graph = _read(MODELS / "sq8" / "relu_7x9x5.tflite")
    name = graph.inputs[0]
    with pytest.raises(ImportModelError, match=r"graph input 'serving_default_features:0' takes int8 \[1, 7, 9, 5\], "
                                               r"got float32 \[1, 7, 9, 5\]"):
        reference.run(graph, {name: np.zeros((1, 7, 9, 5), np.float32)})
    with pytest.raises(ImportModelError, match=r"takes int8 \[1, 7, 9, 5\], got int8 \[7, 9, 5\]"):
        reference.run(graph, {name: np.zeros((7, 9, 5), np.int8)})
    with pytest.raises(ImportModelError, match="no value given for graph input 'serving_default_features:0'"):
        reference.run(graph, {})
    with pytest.raises(ImportModelError, match="'x' is not an input of the graph"):
        reference.run(graph, {name: np.zeros((1, 7, 9, 5), np.int8), "x": np.zeros(1)})
    values = reference.run(graph, {name: np.zeros((1, 7, 9, 5), np.int8)})
    assert set(values) == {name, graph.outputs[0]}


def test_reference_names_the_operator_tflm_would_refuse():
    model = _load(MODELS / "sq8" / "softmax_10.tflite")
    g = model.subgraphs[0]
    g.tensors[g.outputs[0]].quantization.zeroPoint = np.asarray([0], np.int64)
    graph = read_tflite("sm.tflite", _pack(model))
    with pytest.raises(ImportModelError, match=r"^sm.tflite: operator 0 \(SOFTMAX\): the reference cannot compute "
                                               r"this operator: int8 SOFTMAX output must have scale 1/256"):
        reference.run(graph, {graph.inputs[0]: np.zeros(graph.tensor(graph.inputs[0]).shape, np.int8)})
