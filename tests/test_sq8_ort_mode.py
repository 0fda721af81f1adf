"""onnxruntime's arithmetic (issue 24 §7): the Infos FLAGS word's single rounding and the lookup-table
kernel, C against their numpy twins, and an imported ONNX QDQ model computed that way end to end.

* KerParLinear/Add/Sub/Mul/TensorVectMul_TFLM_SQ8 with ``AT_TFLM_FLAG_SINGLE_ROUNDING`` in the Infos =
  ``sq8_tflm.fully_connected/add/sub/mul(..., rounding="single")``, bit for bit (probe user kernels,
  tests/sq8_probes.py); FLAGS 0 stays TFLM's (tests/test_sq8_kernels.py);
* KerParActLUT_SQ8 (generator CNN_ActLUT_SQ8) = ``sq8_tflm.apply_lookup_table``;
* ``sq8_tflm.ort_lookup_table`` = onnxruntime on single-node QDQ models over all 256 inputs;
* actnet_qdq read with ``arithmetic="onnxruntime"``, imported, generated, run on the simulated chip:
  bit for bit the IR reference, and within issue 24 §7's bound of onnxruntime (100% equal measured);
* the lowering's refusals in that arithmetic (SOFTMAX, AVERAGE_POOL_2D: not supported yet).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from autotiler import Model, command
from autotiler.constants import KOP_AVGPOOL, KOP_CONV, KOP_CONV_DW, KOP_NONE
from autotiler.errors import ImportModelError, ModelError
from autotiler.generators import sq8_gen_tflm_dense as TD
from autotiler.generators import sq8_gen_tflm_ops as TO
from autotiler.generators import sq8_tflm as T
from autotiler.generators.sq8_gen_tflm_conv import conv_constants, ort_avg_pool_infos
from autotiler.generators.sq8_generators import CNN_ActLUT_SQ8
from autotiler.generators.sq8_infos import AT_INF_TFLM_DIM, AT_TFLM_FLAG_SINGLE_ROUNDING, read_tflm_infos, tflm_infos
from autotiler.generators.sq8_kernels_tflm_dense import SOURCES as DENSE_SOURCES
from autotiler.generators.sq8_kernels_tflm_ops import SOURCES as OPS_SOURCES
from autotiler.importers import reference
from autotiler.importers import script as S
from autotiler.importers.ir import Graph
from autotiler.importers.onnx_reader import read_onnx
from autotiler.platforms import get_platform

from .sq8_probes import P as _P
from .sq8_probes import build_probes, check, run
from .test_sq8_gen_tflm_conv import NO_POOL, run_layer
from .test_sq8_gen_tflm_conv import Layer as GenLayer
from .test_sq8_gen_tflm_conv import build as build_layers
from .test_sq8_kernels import ELT_FIELDS, LINEAR_FIELDS, TVM_FIELDS, fc_case, multipliers

ort = pytest.importorskip("onnxruntime")

pytestmark = pytest.mark.usefixtures("private_harness_cache")
SETTINGS = settings(max_examples=15, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
MODELS_DIR = os.path.join(os.path.dirname(__file__), "models", "onnx")
LUT_MAX = 4096
LUT_FIELDS = [("signed char" + _P, "In", LUT_MAX), ("signed char" + _P, "Out", LUT_MAX), ("unsigned int", "N", 0),
              ("signed char" + _P, "Table", 256)]

SM_MAX = 2048
SOFTMAX_FIELDS = [("signed char" + _P, "In", SM_MAX), ("signed char" + _P, "Out", SM_MAX),
                  ("unsigned short int", "Dim", 0), ("unsigned short int", "N", 0), ("int" + _P, "Table", 256),
                  ("signed char" + _P, "Infos", AT_INF_TFLM_DIM)]

GP_PIX, GP_FEAT = 64, 24
GLOBAL_FIELDS = [("signed char" + _P, "In", GP_PIX * GP_FEAT), ("signed char" + _P, "Out", GP_FEAT),
                 ("unsigned int", "Pixels", 0), ("unsigned short int", "Feat", 0),
                 ("signed char" + _P, "Infos", AT_INF_TFLM_DIM)]


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    probes = [("KerParLinear_TFLM_SQ8", "KerLinear_TFLM_SQ8_T", LINEAR_FIELDS),
              ("KerParAdd_TFLM_SQ8", "KerEltwise_TFLM_SQ8_T", ELT_FIELDS),
              ("KerParSub_TFLM_SQ8", "KerEltwise_TFLM_SQ8_T", ELT_FIELDS),
              ("KerParMul_TFLM_SQ8", "KerEltwise_TFLM_SQ8_T", ELT_FIELDS),
              ("KerParTensorVectMul_TFLM_SQ8", "KerTensorVectMul_TFLM_SQ8_T", TVM_FIELDS),
              ("KerParActLUT_SQ8", "KerActLUT_SQ8_T", LUT_FIELDS),
              ("KerParSoftMaxTable_SQ8", "KerSoftMaxTable_SQ8_T", SOFTMAX_FIELDS),
              ("KerParGlobalSumRequant_TFLM_SQ8", "KerGlobalPool_TFLM_SQ8_T", GLOBAL_FIELDS)]
    return build_probes(tmp_path_factory.mktemp("ort_probes"), probes, DENSE_SOURCES + OPS_SOURCES, 8)


def single(infos: np.ndarray) -> np.ndarray:
    """Infos with the FLAGS word's single rounding bit."""
    return tflm_infos(**dict(read_tflm_infos(infos), flags=AT_TFLM_FLAG_SINGLE_ROUNDING))


# ---- the FLAGS word: single rounding ----------------------------------------------------------------


@SETTINGS
@given(cin=st.integers(1, 300), cout=st.integers(1, 40), per_channel=st.booleans(), in_zp=st.integers(-128, 127),
       out_zp=st.integers(-128, 127), activation=st.sampled_from(T.ACTIVATIONS),
       bits=st.tuples(st.integers(0, 8), st.integers(0, 7), st.integers(0, 31)), seed=st.integers(0, 2**32 - 1))
def test_linear_single_rounding(prog, cin, cout, per_channel, in_zp, out_zp, activation, bits, seed):
    rng = np.random.default_rng(seed)
    x, w, bias, in_q, w_q, out_q = fc_case(rng, cin, cout, per_channel, in_zp, out_zp, bits)
    expected = T.fully_connected(x, w, bias, in_q, w_q, out_q, activation, rounding="single").reshape(-1)
    lo, hi = T.activation_range(activation, out_q)
    mult, shift = multipliers(in_q, w_q, out_q, cout)
    infos = single(tflm_infos(in_zp=in_zp, out_zp=out_zp, act_min=lo, act_max=hi))
    out = run(prog, "KerParLinear_TFLM_SQ8", LINEAR_FIELDS, In=x, Filter=w, Bias=bias, InDim=cin, OutDim=cout,
              Scale=mult, ScaleN=shift, Infos=infos)["Out"]
    check(out, expected)


ELTWISE = {"add": ("KerParAdd_TFLM_SQ8", T.add, TD.add_infos), "sub": ("KerParSub_TFLM_SQ8", T.sub, TD.sub_infos),
           "mul": ("KerParMul_TFLM_SQ8", T.mul, TD.mul_infos)}


@SETTINGS
@pytest.mark.parametrize("op", sorted(ELTWISE))
@given(n=st.integers(1, 200), log_scales=st.tuples(*[st.floats(-4, 1)] * 3), zps=st.tuples(*[st.integers(-128, 127)] * 3),
       activation=st.sampled_from(T.ACTIVATIONS), seed=st.integers(0, 2**32 - 1))
def test_eltwise_single_rounding(prog, op, n, log_scales, zps, activation, seed):
    kernel, ref, make_infos = ELTWISE[op]
    rng = np.random.default_rng(seed)
    x1, x2 = (rng.integers(-128, 128, n).astype(np.int8) for _ in range(2))
    qs = tuple(T.QParams(float(10.0 ** e), zp) for e, zp in zip(log_scales, zps))
    out = run(prog, kernel, ELT_FIELDS, In1=x1, In2=x2, N=n, Infos=single(make_infos(*qs, activation)))["Out"]
    check(out, ref(x1, x2, *qs, activation, rounding="single"))


@pytest.mark.parametrize("op", ["add", "mul"])
def test_eltwise_single_rounding_all_pairs_differs_from_double(prog, op):
    """Every int8 pair: the flag's result is the single rounding's, and it is not TFLM's (the flag is read)."""
    kernel, ref, make_infos = ELTWISE[op]
    x1, x2 = (a.astype(np.int8).reshape(-1) for a in np.meshgrid(np.arange(-128, 128), np.arange(-128, 128)))
    qs = (T.QParams(0.05, 3), T.QParams(0.031, -7), T.QParams(0.07 if op == "mul" else 0.7, 10))
    out = run(prog, kernel, ELT_FIELDS, In1=x1, In2=x2, N=x1.size, Infos=single(make_infos(*qs)))["Out"]
    check(out, ref(x1, x2, *qs, rounding="single"))
    assert (ref(x1, x2, *qs, rounding="single") != ref(x1, x2, *qs)).any()


@SETTINGS
@given(pix=st.integers(1, 64), feat=st.integers(1, 40), log_scales=st.tuples(*[st.floats(-4, 1)] * 3),
       zps=st.tuples(*[st.integers(-128, 127)] * 3), seed=st.integers(0, 2**32 - 1))
def test_tensor_vect_mul_single_rounding(prog, pix, feat, log_scales, zps, seed):
    rng = np.random.default_rng(seed)
    x1 = rng.integers(-128, 128, (pix, feat)).astype(np.int8)
    x2 = rng.integers(-128, 128, feat).astype(np.int8)
    qs = tuple(T.QParams(float(10.0 ** e), zp) for e, zp in zip(log_scales, zps))
    out = run(prog, "KerParTensorVectMul_TFLM_SQ8", TVM_FIELDS, In1=x1, In2=x2, NPix=pix, Feat=feat,
              Infos=single(TD.mul_infos(*qs)))["Out"]
    check(out, T.mul(x1, x2, *qs, rounding="single"))


@SETTINGS
@given(pix=st.integers(1, GP_PIX), feat=st.integers(1, GP_FEAT), log_scales=st.tuples(st.floats(-3, 0), st.floats(-3, 0)),
       zps=st.tuples(st.integers(-128, 127), st.integers(-128, 127)), seed=st.integers(0, 2**32 - 1))
def test_mean_single_rounding(prog, pix, feat, log_scales, zps, seed):
    """KerParGlobalSumRequant_TFLM_SQ8 (MEAN) with the flag = sq8_tflm.mean_hw(..., rounding="single")."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (1, pix, 1, feat)).astype(np.int8)
    in_q, out_q = (T.QParams(float(10 ** e), zp) for e, zp in zip(log_scales, zps))
    out = run(prog, "KerParGlobalSumRequant_TFLM_SQ8", GLOBAL_FIELDS, In=x, Pixels=pix, Feat=feat,
              Infos=single(TO.mean_infos(in_q, out_q, pix)))["Out"]
    check(out, T.mean_hw(x, in_q, out_q, rounding="single").reshape(-1))


# ---- the lookup table -------------------------------------------------------------------------------


@SETTINGS
@given(n=st.integers(1, LUT_MAX - 64), seed=st.integers(0, 2**32 - 1))
def test_lookup_table_kernel(prog, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, n).astype(np.int8)
    table = rng.integers(-128, 128, 256).astype(np.int8)
    out = run(prog, "KerParActLUT_SQ8", LUT_FIELDS, In=x, N=n, Table=table)["Out"]
    check(out, T.apply_lookup_table(x, table))


@SETTINGS
@given(dim=st.integers(2, 300), rows=st.integers(1, 6), log_scales=st.tuples(st.floats(-3, 0), st.floats(-2.4, -1)),
       out_zp=st.integers(-128, 127), spread=st.integers(0, 255), seed=st.integers(0, 2**32 - 1))
def test_softmax_table_kernel(prog, dim, rows, log_scales, out_zp, spread, seed):
    """KerParSoftMaxTable_SQ8 = sq8_tflm.ort_softmax (onnxruntime's QLinearSoftmax), any output quantisation,
    inputs within ``spread`` of each other (a probability near 1 wraps as onnxruntime's store does)."""
    rng = np.random.default_rng(seed)
    lo = int(rng.integers(-128, 128 - spread)) if spread < 255 else -128
    x = rng.integers(lo, lo + spread + 1, (rows, dim)).astype(np.int8)
    in_q, out_q = T.QParams(float(10 ** log_scales[0]), 0), T.QParams(float(10 ** log_scales[1]), out_zp)
    table, infos = TO.ort_softmax_constants(in_q, out_q, dim)
    out = run(prog, "KerParSoftMaxTable_SQ8", SOFTMAX_FIELDS, In=x, Dim=dim, N=rows, Table=table, Infos=infos)["Out"]
    check(out, T.ort_softmax(x, in_q, out_q).reshape(-1))


def _qdq_unary(op_type: str, in_q: T.QParams, out_q: T.QParams, **attrs) -> bytes:
    """x (float) -> Q -> DQ -> op -> Q -> DQ -> y, a [256] tensor: onnxruntime fuses what it fuses."""
    inits = [numpy_helper.from_array(np.array(in_q.scale, np.float32), "si"),
             numpy_helper.from_array(np.array(in_q.zero_point, np.int8), "zi"),
             numpy_helper.from_array(np.array(out_q.scale, np.float32), "so"),
             numpy_helper.from_array(np.array(out_q.zero_point, np.int8), "zo")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "si", "zi"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "si", "zi"], ["xf"]),
             helper.make_node(op_type, ["xf"], ["yf"], **attrs),
             helper.make_node("QuantizeLinear", ["yf", "so", "zo"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "so", "zo"], ["y"])]
    g = helper.make_graph(nodes, "u", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.mark.parametrize("op_type,kind,attrs", [("Sigmoid", "LOGISTIC", {}), ("Tanh", "TANH", {}),
                                                 ("HardSwish", "HARD_SWISH", {}),
                                                 ("LeakyRelu", "LEAKY_RELU", {"alpha": 0.1}),
                                                 ("Relu", "RELU", {}), ("Identity", "IDENTITY", {})])
@pytest.mark.parametrize("in_q,out_q", [(T.QParams(0.05, 3), T.QParams(1 / 256, -128)),
                                         (T.QParams(0.031, -20), T.QParams(0.02, 5))])
def test_ort_lookup_table_is_onnxruntimes(op_type, kind, attrs, in_q, out_q):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(_qdq_unary(op_type, in_q, out_q, **attrs), opts, providers=["CPUExecutionProvider"])
    xq = np.arange(-128, 128)
    x = ((xq - in_q.zero_point) * np.float32(in_q.scale)).astype(np.float32).reshape(1, 256)
    (y,) = sess.run(None, {"x": x})
    theirs = np.round(y.ravel() / np.float32(out_q.scale)) + out_q.zero_point
    table = T.ort_lookup_table(kind, in_q, out_q, attrs.get("alpha", 0.0))
    np.testing.assert_array_equal(table.astype(np.int64), theirs.astype(np.int64))


# ---- an imported model in onnxruntime's arithmetic --------------------------------------------------


def _read_ort(path: str):
    with open(path, "rb") as f:
        return read_onnx(path, f.read(), arithmetic="onnxruntime")


def test_actnet_end_to_end_in_onnxruntimes_arithmetic(tmp_path, capsys, monkeypatch):
    """actnet_qdq (Conv, LeakyRelu, Pad, Sigmoid, Mul, Tanh, MatMul, Add) read in onnxruntime's arithmetic,
    imported, generated and run: the IR reference bit for bit, and onnxruntime's outputs on every item."""
    script = _end_to_end("actnet", tmp_path, capsys, monkeypatch)
    assert "CNN_ActLUT_SQ8" in script and "CNN_Act_SQ8" not in script


def _end_to_end(name: str, tmp_path, capsys, monkeypatch) -> str:
    """Import (in onnxruntime's arithmetic), generate, run 3 draws: equal to the reference and to onnxruntime.
    Returns the model script."""
    monkeypatch.setattr(S, "read_model", _read_ort)
    model = os.path.join(MODELS_DIR, name + "_qdq.onnx")
    imp, gen = tmp_path / "imp", tmp_path / "gen"
    assert command.main(["import", model, "-o", str(imp), "--name", name]) == 0, capsys.readouterr().err
    script = (imp / f"{name}.py").read_text()
    desc = json.loads((imp / f"{name}.json").read_text())
    (port_in,), (port_out,) = desc["inputs"], desc["outputs"]
    assert command.main(["generate", str(imp / f"{name}.py"), "-o", str(gen), "-q"]) == 0, capsys.readouterr().err
    g = _read_ort(model)
    oq = g.producer(g.outputs[0]).inputs[0]
    qi = g.tensor(g.consumers(g.inputs[0])[0].outputs[0]).quant
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    for k in range(3):
        x = rng.normal(0, 1, port_in["source"]["shape"]).astype(np.float32)
        xq = np.clip(np.round(x / np.float32(qi.scales[0])) + qi.zero_points[0], -128, 127).astype(np.int8)
        xf = ((xq.astype(np.float32) - qi.zero_points[0]) * np.float32(qi.scales[0])).astype(np.float32)
        xin, yout = tmp_path / f"x{k}.npy", tmp_path / f"y{k}.npy"
        np.save(xin, xq.reshape(port_in["shape"]))
        assert command.main(["run", str(gen), "--graph", desc["graph"], "--input", f"{port_in['name']}={xin}",
                             "--output", f"{port_out['name']}={yout}"]) == 0, capsys.readouterr().err
        ours = np.load(yout)
        xir = xf.transpose(0, 2, 3, 1) if xf.ndim == 4 else xf
        np.testing.assert_array_equal(ours.reshape(g.tensor(oq).shape), reference.run(g, {g.inputs[0]: xir})[oq])
        (yf,) = sess.run(None, {g.inputs[0]: xf})
        theirs = np.round(yf / np.float32(port_out["scale"])) + port_out["zero_point"]
        np.testing.assert_array_equal(ours.astype(np.int64).ravel(), theirs.astype(np.int64).ravel())
    return script


@pytest.mark.parametrize("name", ["convnet", "kws"])
def test_end_to_end_in_onnxruntimes_arithmetic(name, tmp_path, capsys, monkeypatch):
    """convnet (Conv, depthwise, Add, MaxPool, AveragePool, Concat, HardSwish, GlobalAveragePool, Gemm, Softmax)
    and kws (Conv, depthwise, AveragePool, Gemm, Softmax) in onnxruntime's arithmetic, end to end."""
    _end_to_end(name, tmp_path, capsys, monkeypatch)


# ---- convolutions and average pooling through the generators ----------------------------------------


def _conv_layer(name: str, rng, dw: bool, h: int, w: int, cin: int, k: int, stride: int, same: bool, budget):
    cout = cin if dw else int(rng.integers(1, 12))
    in_q, out_q = T.QParams(float(10 ** rng.uniform(-2, 0)), int(rng.integers(-20, 20))), T.QParams(
        float(10 ** rng.uniform(-2, 0)), int(rng.integers(-20, 20)))
    w_q = T.FilterQParams(tuple(float(s) for s in 10 ** rng.uniform(-3, -1, cout)))
    x = rng.integers(-128, 128, (1, h, w, cin)).astype(np.int8)
    filt = rng.integers(-127, 128, (1, k, k, cout) if dw else (cout, k, k, cin)).astype(np.int8)
    bias = rng.integers(-5000, 5000, cout).astype(np.int32)
    scale, scale_n, infos = conv_constants(in_q, w_q, out_q, "NONE", cout)
    padding = "SAME" if same else "VALID"
    f = T.depthwise_conv2d if dw else T.conv2d
    expected = f(x, filt, bias, in_q, w_q, out_q, stride=(stride, stride), padding=padding, rounding="single")
    args = (4, 4, cin, cout, w, h, KOP_CONV_DW if dw else KOP_CONV, k, k, 1, 1, stride, stride, int(same), *NO_POOL,
            KOP_NONE)
    inputs = dict(In=x, Filter=filt, Bias=bias, Scale=scale, ScaleN=scale_n, Infos=single(infos))
    return GenLayer(name, "conv", args, lambda: (inputs, expected[0]), budget)


def _avg_layer(name: str, rng, h: int, w: int, c: int, k: int, stride: int, same: bool, budget):
    q = T.QParams(float(10 ** rng.uniform(-3, 0)), int(rng.integers(-128, 128)))
    x = rng.integers(-128, 128, (1, h, w, c)).astype(np.int8)
    expected = T.ort_average_pool2d(x, q, q, (k, k), (stride, stride), "SAME" if same else "VALID")
    args = (c, w, h, KOP_AVGPOOL, k, k, 1, 1, stride, stride, int(same), KOP_NONE)
    return GenLayer(name, "pool", args, lambda: (dict(In=x, Infos=ort_avg_pool_infos(q)), expected[0]), budget)


def test_conv_and_average_pool_in_onnxruntimes_arithmetic(tmp_path):
    """CNN_ConvolutionPoolAct_SQ8 (KOP_CONV, KOP_CONV_DW) with the single rounding flag = sq8_tflm's
    ``rounding="single"``; CNN_PoolAct_SQ8 KOP_AVGPOOL with FLOAT_AVERAGE (ort_avg_pool_infos) =
    ``sq8_tflm.ort_average_pool2d``: whole, and at the smallest budget that tiles them (tiles of lines)."""
    rng = np.random.default_rng(24)
    layers = []
    for i, (h, w, c, k, s, same) in enumerate([(9, 7, 5, 3, 1, True), (12, 10, 8, 3, 2, True), (8, 8, 3, 2, 2, False),
                                               (11, 6, 16, 5, 1, True)]):
        for budget in (48000, "min"):
            tag = f"{i}_{'min' if budget == 'min' else 'all'}"
            layers.append(_avg_layer(f"OrtAvg{tag}", rng, h, w, c, k, s, same, budget))
            layers.append(_conv_layer(f"OrtConv{tag}", rng, False, h, w, c, k, s, same, budget))
            layers.append(_conv_layer(f"OrtConvDw{tag}", rng, True, h, w, c, k, s, same, budget))
    prog, tilings, _ = build_layers(tmp_path, layers)
    for layer in layers:
        run_layer(prog, tilings, layer)


def test_softmax_table_refuses_an_overflowing_output_scale():
    with pytest.raises(ModelError, match=r"onnxruntime's softmax of 1 items at output scale 0.001 overflows float32"):
        TO.ort_softmax_constants(T.QParams(0.1, 0), T.QParams(0.001, 0), 1)


# ---- refusals ---------------------------------------------------------------------------------------


def test_refusals_of_the_numpy_side():
    with pytest.raises(ModelError, match="rounding 'half' is not one of double, single"):
        T.conv2d(np.zeros((1, 1, 1, 1), np.int8), np.zeros((1, 1, 1, 1), np.int8), None, T.QParams(0.1, 0),
                 T.FilterQParams((0.1,)), T.QParams(0.1, 0), rounding="half")
    with pytest.raises(ModelError, match="no onnxruntime table for SOFTMAX"):
        T.ort_lookup_table("SOFTMAX", T.QParams(0.1, 0), T.QParams(0.1, 0))
    with pytest.raises(ModelError, match=r"a lookup table has 256 entries, got shape \(255,\)"):
        T.apply_lookup_table(np.zeros(3, np.int8), np.zeros(255, np.int8))


def test_graph_refuses_an_unknown_arithmetic():
    g = _read_ort(os.path.join(MODELS_DIR, "kws_qdq.onnx"))
    with pytest.raises(ImportModelError, match="arithmetic 'gemmlowp' is not one of tflm, onnxruntime"):
        Graph(g.source, g.source_format, g.source_layout, g.tensors, g.ops, g.inputs, g.outputs, "gemmlowp")


def test_act_lut_generator_needs_the_library():
    with Model(get_platform("gap8")):
        with pytest.raises(ModelError, match="basic kernel 'KerParActLUT_SQ8' is not declared"):
            CNN_ActLUT_SQ8("Lut", 0, 4, 4, 4)


# ---- other QDQ models: single operators of random quantisations against onnxruntime -----------------


def _qdq_pair(t: str, q: str) -> list:
    return [helper.make_node("QuantizeLinear", [t, q + "_s", q + "_z"], [t + "_q"]),
            helper.make_node("DequantizeLinear", [t + "_q", q + "_s", q + "_z"], [t + "_dq"])]


def _qparams_init(q: str, p: T.QParams) -> list:
    return [numpy_helper.from_array(np.array(p.scale, np.float32), q + "_s"),
            numpy_helper.from_array(np.array(p.zero_point, np.int8), q + "_z")]


def _random_qdq_model(kind: str, rng, c: int = 8, hw: int = 9):
    """x (and x2) -> Q -> DQ -> one float op -> Q -> DQ: (model bytes, {input: its quantisation}, output's)."""
    rq = lambda: T.QParams(float(np.float32(10 ** rng.uniform(-2, 0))), int(rng.integers(-30, 30)))  # noqa: E731
    qs = {"x": rq()}
    out_q = rq()
    nodes, inits = _qdq_pair("x", "x"), []
    if kind in ("Add", "Mul"):
        qs["x2"] = rq()
        nodes += _qdq_pair("x2", "x2")
        nodes.append(helper.make_node(kind, ["x_dq", "x2_dq"], ["y"]))
    elif kind == "Conv":
        w = rng.integers(-127, 128, (c, c, 3, 3)).astype(np.int8)
        ws = (10 ** rng.uniform(-3, -1, c)).astype(np.float32)
        inits += [numpy_helper.from_array(w, "w"), numpy_helper.from_array(ws, "ws"),
                  numpy_helper.from_array(np.zeros(c, np.int8), "wz"),
                  numpy_helper.from_array(rng.integers(-3000, 3000, c).astype(np.int32), "b"),
                  numpy_helper.from_array((np.float32(qs["x"].scale) * ws).astype(np.float32), "bs"),
                  numpy_helper.from_array(np.zeros(c, np.int32), "bz")]
        nodes += [helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=0),
                  helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"], axis=0),
                  helper.make_node("Conv", ["x_dq", "wf", "bf"], ["y"], pads=[1, 1, 1, 1])]
    elif kind == "AveragePool":
        out_q = qs["x"]
        nodes.append(helper.make_node(kind, ["x_dq"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    else:
        nodes.append(helper.make_node(kind, ["x_dq"], ["y"]))
    nodes += _qdq_pair("y", "y")
    inits += [i for name, p in {**qs, "y": out_q}.items() for i in _qparams_init(name, p)]
    out_shape = [1, c, 1, 1] if kind == "GlobalAveragePool" else [1, c, hw, hw]
    g = helper.make_graph(nodes, kind, [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, c, hw, hw]) for n in qs],
                          [helper.make_tensor_value_info("y_dq", TensorProto.FLOAT, out_shape)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString(), qs, out_q


@pytest.mark.parametrize("kind", ["Conv", "Add", "Mul", "GlobalAveragePool", "Sigmoid", "Tanh", "HardSwish",
                                  "AveragePool"])
def test_single_operator_qdq_models_against_onnxruntime(kind):
    """12 single-operator QDQ models per operator, random scales and zero points: the reference in
    onnxruntime's arithmetic gives onnxruntime's int8 output on at least 99.9% of the items, never more than 1
    LSB away (measured: all equal but 1 item in 12960 of Add). AveragePool alone: onnxruntime fuses it into
    QLinearAveragePool, whose rounding we do not reproduce exactly (97% equal, 1 LSB; in convnet it is not
    fused and equal): held to 1 LSB."""
    rng = np.random.default_rng(2024)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    equal = total = worst = 0
    for _ in range(12):
        data, qs, out_q = _random_qdq_model(kind, rng)
        sess = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
        g = read_onnx(f"{kind}.onnx", data)
        feeds = {n: ((rng.integers(-128, 128, (1, 8, 9, 9)) - q.zero_point) * np.float32(q.scale)).astype(np.float32)
                 for n, q in qs.items()}
        (y,) = sess.run(None, feeds)
        theirs = (np.round(y / np.float32(out_q.scale)) + out_q.zero_point).transpose(0, 2, 3, 1)
        oq = g.producer(g.outputs[0]).inputs[0]
        ours = reference.run(g, {n: a.transpose(0, 2, 3, 1) for n, a in feeds.items()})[oq]
        d = np.abs(ours.astype(np.int64) - theirs.reshape(ours.shape).astype(np.int64))
        equal, total, worst = equal + int((d == 0).sum()), total + d.size, max(worst, int(d.max()))
    assert worst <= 1, (kind, worst)
    if kind != "AveragePool":
        assert equal >= 0.999 * total, (kind, equal, total)
