"""The SQ8 linear, element-wise and matrix-product generators with TensorFlow Lite Micro's requantisation
(autotiler/generators/sq8_gen_tflm_dense.py: CNN_LinearAct_SQ8, CNN_MatAddAct_SQ8, CNN_MatSubAct_SQ8,
CNN_MatEltMulAct_SQ8, CNN_TensorVectMultAct_SQ8, CNN_MatMulAct_SQ8 with Scale_DataSize 4) against
sq8_tflm (itself bit-exact against tflite-micro), bit for bit, on the simulated cluster; then against
the tflite-micro interpreter itself on the committed single-operator models tests/models/sq8/fc_*,
add_*, sub_*, mul_* (their constants built with the module's helpers from the JSON sidecars); then every
error the generators raise, matched with the script's line, the kernel and the text.

Layer configurations are drawn by hypothesis (derandomized) when the module is collected: shapes,
zero points, per-channel and per-tensor multipliers of real value 1e-6 .. 1e2 (shifts both ways),
fused activations, and L1 budgets small enough to force the tiled forms (linear: the input-tiled
form with its partial sums, the input whole or tiled; element-wise: items in tiles; matrix product:
lines in tiles), which each test checks in the tiling. Every configuration is one user kernel of
a single model, built once; outputs are pre-filled with a sentinel, and the simulated cycles are
the predicted ones.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import ModelError
from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_gen_tflm_dense as TD
from autotiler.generators import sq8_tflm as T
from autotiler.generators.sq8_library import CNN_SQ8_HEADER, CNN_SQ8_SOURCES, LoadCNN_SQ8_Library
from autotiler.platforms import get_platform

pytestmark = pytest.mark.usefixtures("private_harness_cache")
THIS = "test_sq8_gen_tflm_dense.py"
PLATFORM = get_platform("gap8")
BIG = 48000
SENTINEL = -99
T0, D0 = KER_ITER_TILE0, KER_ITER_D0
MODELS = Path(__file__).resolve().parent / "models" / "sq8"
# every fc/add/sub/mul model but ADD broadcast over channels (CNN_MatAddAct_SQ8 adds equal shapes)
SIDECARS = [p for pat in ("fc_*", "add_*", "sub_*", "mul_*") for p in sorted(MODELS.glob(pat + ".json"))
            if p.stem != "add_broadcast_c"]
ELT_GEN = {"add": CNN_MatAddAct_SQ8, "sub": CNN_MatSubAct_SQ8, "mul": CNN_MatEltMulAct_SQ8}
ELT_REF = {"add": (T.add, TD.add_infos), "sub": (T.sub, TD.sub_infos), "mul": (T.mul, TD.mul_infos)}
CLAMP_OPERS = [KOP_NONE, KOP_RELU, KOP_RELUN, KOP_RELUM, KOP_RELUMN]


def a4(n: int) -> int:
    return (n + 3) // 4 * 4


def draw(strategy, n: int) -> list:
    """n examples of a strategy, derandomized (the same list at every run), spread over 4n draws."""
    out = []

    @settings(max_examples=4 * n + 2, derandomize=True, database=None, phases=[Phase.generate], deadline=None)
    @given(strategy)
    def collect(x):
        out.append(x)

    collect()
    return out[:2] + out[2::max(1, (len(out) - 2) // (n - 2))][:n - 2]


def ctrl(**fields):
    c = CNN_GenControl_T()
    CNN_InitGenCtrl(c)
    for k, v in fields.items():
        CNN_SetGenCtrl(c, k, v)
    return c


# ---- configurations -------------------------------------------------------------------------

@st.composite
def linear_cfg(draw_):
    form = draw_(st.sampled_from(["par", "par", "dp_buf", "dp_tiled", "forced"]))
    in_dim = draw_(st.integers(1, 300) if form in ("par", "forced") else st.integers(120, 500))
    out_dim = draw_(st.integers(1, 40) if form == "par" else st.integers(1, 6))
    rest = 64 + a4(4 * 8) + 2 * (a4(out_dim * 4) * 2 + a4(out_dim) * 2)
    budget = {"par": BIG, "forced": BIG, "dp_buf": a4(in_dim) + rest + 2 * a4(in_dim // 4),
              "dp_tiled": rest + a4(in_dim // 2)}[form]
    return dict(form=form, in_dim=in_dim, out_dim=out_dim, per_channel=draw_(st.booleans()),
                in_zp=draw_(st.integers(-128, 127)), out_zp=draw_(st.integers(-128, 127)),
                act=draw_(st.sampled_from(T.ACTIVATIONS)), oper=draw_(st.sampled_from(CLAMP_OPERS)),
                bias_bits=draw_(st.integers(0, 31)), budget=budget)


@st.composite
def eltwise_cfg(draw_):
    op = draw_(st.sampled_from(["add", "sub", "mul", "tvm"]))
    small = draw_(st.booleans())
    feat, w, h = draw_(st.integers(1, 24)), draw_(st.integers(1, 12)), draw_(st.integers(1, 12))
    n = feat * w * h
    if op == "tvm":
        budget = 64 + a4(feat) + 2 * 2 * a4(feat * max(1, w * h // 3)) if small else BIG
    else:
        budget = 64 + 3 * 2 * a4(max(1, n // 3)) if small else BIG
    return dict(op=op, small=small and (w * h > 3 if op == "tvm" else n > 3), feat=feat, w=w, h=h,
                log_scales=draw_(st.tuples(*[st.floats(-4, 1)] * 3)),
                zps=draw_(st.tuples(*[st.integers(-128, 127)] * 3)), act=draw_(st.sampled_from(T.ACTIVATIONS)),
                budget=budget)


@st.composite
def mat_mul_cfg(draw_):
    """form "big": one tile; "lines": In1's lines in tiles, In2 whole; "cols": In2's columns in tiles, In1
    whole, In2 too big for the lines form."""
    form = draw_(st.sampled_from(["big", "lines", "cols"]))
    oper = draw_(st.sampled_from(sorted(TD.MATMUL_OPERS)))
    if form == "cols":
        col1, line1, col2 = draw_(st.integers(16, 40)), draw_(st.integers(1, 4)), draw_(st.integers(32, 64))
    else:
        col1, line1, col2 = draw_(st.integers(1, 40)), draw_(st.integers(4, 24)), draw_(st.integers(1, 30))
    has_bias, per_line, _ = TD.MATMUL_OPERS[oper]
    line_bytes = ([4] if has_bias else []) + ([4, 1] if per_line else [])
    chunk = max(1, line1 // 3)       # lines per tile: In2 whole, the lines' arguments double buffered
    cw = max(1, col2 // 8)           # columns per tile: In1 whole
    budget = {"big": BIG,
              "lines": a4(col1 * col2) + 64 + sum(2 * a4(b * chunk) for b in [col1, col2, *line_bytes]),
              "cols": a4(line1 * col1) + 64 + sum(a4(b * line1) for b in line_bytes) + 2 * a4(col1 * cw)
              + 2 * a4(line1 * cw)}[form]
    return dict(oper=oper, form=form, col1=col1, line1=line1, col2=col2,
                w_h=draw_(st.sampled_from(["zero", "split"])), zp=draw_(st.integers(-128, 127)),
                out_zp=draw_(st.integers(-128, 127)), act=draw_(st.sampled_from(T.ACTIVATIONS)),
                bias_bits=draw_(st.integers(0, 31)), budget=budget)


LINEAR = draw(linear_cfg(), 14)
# plus an ADD in tiles with every activation's clamp, and the columns form with per-line scales and bias
ELTWISE = draw(eltwise_cfg(), 14) + [
    dict(op="add", small=True, feat=7, w=9, h=5, log_scales=(-2.0, -1.3, -1.9), zps=(-5, 100, -128), act=act,
         budget=64 + 3 * 2 * a4(7 * 9 * 5 // 4)) for act in T.ACTIVATIONS]
MATMUL = draw(mat_mul_cfg(), 14) + [
    dict(oper=KOP_MATMUL, form="cols", col1=24, line1=3, col2=50, w_h="split", zp=17, out_zp=-9, act="RELU6",
         bias_bits=20, budget=a4(3 * 24) + 64 + a4(12) * 2 + a4(3) + 2 * a4(24 * 6) + 2 * a4(3 * 6))]


def declare_linear(name: str, c: dict) -> None:
    SetL1MemorySize(c["budget"])
    cc = ctrl(FORCEDPCONV=1) if c["form"] == "forced" else 0
    assert CNN_LinearAct_SQ8(name, cc, 4, 4, c["in_dim"], c["out_dim"], KOP_LINEAR, c["oper"]) == 1


def declare_eltwise(name: str, c: dict) -> None:
    SetL1MemorySize(c["budget"])
    cc = ctrl(SCALE_DATASIZE=4)
    if c["op"] == "tvm":
        assert CNN_TensorVectMultAct_SQ8(name, cc, c["feat"], c["w"], c["h"], KOP_MATVECTMUL, KOP_RELU) == 1
    elif c["op"] == "add":
        assert CNN_MatAddAct_SQ8(name, cc, c["feat"], c["w"], c["h"], KOP_MATADD, KOP_NONE) == 1
    else:
        assert ELT_GEN[c["op"]](name, cc, c["feat"], c["w"], c["h"], KOP_NONE) == 1


def mm_width_height(c: dict) -> tuple:
    return (0, 0) if c["w_h"] == "zero" else (c["col2"], 1)


def declare_mat_mul(name: str, c: dict) -> None:
    SetL1MemorySize(c["budget"])
    assert CNN_MatMulAct_SQ8(name, 0, 4, 4, c["col1"], c["line1"], c["col2"], c["col1"], *mm_width_height(c), 1, 1,
                             c["oper"], KOP_NONE) == 1


def sidecar_layer(side: dict) -> tuple:
    """(generator, shape) of a model: ('fc', (cin, cout)), ('tvm', (feat, w, h)) or (op, (feat, w, h))."""
    ins = side["inputs"]
    if side["op"] == "FULLY_CONNECTED":
        return "fc", tuple(reversed(ins[1]["shape"]))
    shape = ins[0]["shape"]
    feat, w, h = shape[-1], (shape[-2] if len(shape) > 2 else 1), (shape[-3] if len(shape) > 3 else 1)
    if ins[0]["shape"] != ins[1]["shape"]:
        assert side["op"] == "MUL" and list(ins[1]["shape"]) == [1, 1, 1, feat], side["name"]
        return "tvm", (feat, w, h)
    return side["op"].lower(), (feat, w, h)


def declare_sidecar(name: str, side: dict) -> None:
    SetL1MemorySize(BIG)
    kind, shape = sidecar_layer(side)
    cc = ctrl(SCALE_DATASIZE=4)
    if kind == "fc":
        assert CNN_LinearAct_SQ8(name, 0, 4, 4, *shape, KOP_LINEAR, KOP_RELU) == 1
    elif kind == "tvm":
        assert CNN_TensorVectMultAct_SQ8(name, cc, *shape, KOP_MATVECTMUL, KOP_NONE) == 1
    else:
        assert ELT_GEN[kind](name, cc, *shape, *([KOP_MATADD] if kind == "add" else []), KOP_NONE) == 1


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every configuration in one model, generated and built once: (program, tilings)."""
    out = tmp_path_factory.mktemp("sq8_tflm_dense")
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        SetGeneratedFilesNames("Sq8DenseKernels.c", "Sq8DenseKernels.h")
        LoadCNN_SQ8_Library()
        for i, c in enumerate(LINEAR):
            declare_linear(f"Linear{i}", c)
        for i, c in enumerate(ELTWISE):
            declare_eltwise(f"Elt{i}", c)
        for i, c in enumerate(MATMUL):
            declare_mat_mul(f"MatMul{i}", c)
        for p in SIDECARS:
            declare_sidecar(f"M_{p.stem}", json.loads(p.read_text()))
        tilings = dict(m.tilings)
        files = generate(m)
    write_files(files, str(out))
    prog = host_harness.build(out, sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM)
    return prog, tilings


def run(built, name: str, out_items: int, **arrays) -> np.ndarray:
    """Call kernel `name` with Out pre-filled with the sentinel; the cycles are the predicted ones."""
    prog, tilings = built
    args = {k: np.ascontiguousarray(v).reshape(-1) for k, v in arrays.items()}
    args["Out"] = np.full(out_items, SENTINEL, np.int8)
    counters = prog.call(name, **args)
    assert counters["cycles"] == tilings[name].predicted.cycles
    assert tilings[name].l1_bytes <= tilings[name].budget
    return args["Out"]


def check(got, expected) -> None:
    got, expected = np.asarray(got).reshape(-1), np.asarray(expected).reshape(-1)
    assert got.size == expected.size
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, (f"{bad.size} of {got.size} items differ, first at {bad[0]}: got {got[bad[:6]].tolist()} "
                           f"expected {expected[bad[:6]].tolist()}")


def filter_q(rng, in_scale: float, out_q: T.QParams, channels: int, per_channel: bool) -> T.FilterQParams:
    """Filter scales whose real multipliers s_in s_w / s_out are log-uniform over [1e-6, 1e2]."""
    reals = 10.0 ** rng.uniform(-6, 2, channels if per_channel else 1)
    return T.FilterQParams(tuple(float(r) * out_q.scale / in_scale for r in reals))


def int32_bias(rng, n: int, bits: int) -> np.ndarray:
    return rng.integers(-(1 << bits), 1 << bits, n, dtype=np.int64).clip(-2**31, 2**31 - 1).astype(np.int32)


# ---- the layers against sq8_tflm ------------------------------------------------------------

@pytest.mark.parametrize("i", range(len(LINEAR)))
def test_linear(built, i):
    c = LINEAR[i]
    name = f"Linear{i}"
    t = built[1][name]
    dp = any(a.name == "Reduct" for a in t.args)
    assert dp == (c["form"] != "par"), t.describe()
    if c["form"] in ("dp_buf", "dp_tiled"):
        assert t.count(T0) > 1, t.describe()
        assert (t.arg("In").role != "tile") == (c["form"] == "dp_buf"), t.describe()
    rng = np.random.default_rng(i)
    cin, cout = c["in_dim"], c["out_dim"]
    x = rng.integers(-128, 128, cin).astype(np.int8)
    w = rng.integers(-128, 128, (cout, cin)).astype(np.int8)
    bias = int32_bias(rng, cout, c["bias_bits"])
    in_q, out_q = T.QParams(float(10.0 ** rng.uniform(-3, 0)), c["in_zp"]), T.QParams(
        float(10.0 ** rng.uniform(-3, 0)), c["out_zp"])
    w_q = filter_q(rng, in_q.scale, out_q, cout, c["per_channel"])
    k = TD.linear_constants(in_q, w_q, out_q, c["act"], cout)
    got = run(built, name, cout, In=x, Filter=w, Bias=bias, Scale=k.scale, ScaleN=k.scale_n, Infos=k.infos)
    check(got, T.fully_connected(x, w, bias, in_q, w_q, out_q, c["act"]))


@pytest.mark.parametrize("i", range(len(ELTWISE)))
def test_eltwise(built, i):
    c = ELTWISE[i]
    name = f"Elt{i}"
    if c["small"]:
        assert built[1][name].count(T0) > 1, built[1][name].describe()
    rng = np.random.default_rng(100 + i)
    shape = (c["h"], c["w"], c["feat"])
    x1 = rng.integers(-128, 128, shape).astype(np.int8)
    x2 = rng.integers(-128, 128, c["feat"] if c["op"] == "tvm" else shape).astype(np.int8)
    qs = tuple(T.QParams(float(10.0 ** e), zp) for e, zp in zip(c["log_scales"], c["zps"]))
    reference, infos = ELT_REF["mul" if c["op"] == "tvm" else c["op"]]
    got = run(built, name, x1.size, In1=x1, In2=x2, Infos=infos(*qs, c["act"]))
    check(got, reference(x1, x2, *qs, c["act"]))


@pytest.mark.parametrize("i", range(len(MATMUL)))
def test_mat_mul(built, i):
    c = MATMUL[i]
    name = f"MatMul{i}"
    t = built[1][name]
    if c["form"] != "big":
        assert t.count(T0) > 1, t.describe()
        assert (t.arg("In2").role == "tile") == (c["form"] == "cols"), t.describe()
    has_bias, per_line, transposed = TD.MATMUL_OPERS[c["oper"]]
    rng = np.random.default_rng(200 + i)
    lines, k, cols = c["line1"], c["col1"], c["col2"]
    in1 = rng.integers(-128, 128, (lines, k)).astype(np.int8)
    in2 = rng.integers(-128, 128, (cols, k) if transposed else (k, cols)).astype(np.int8)
    bias = int32_bias(rng, lines, c["bias_bits"]) if has_bias else None
    in2_q, out_q = T.QParams(float(10.0 ** rng.uniform(-3, 0)), c["zp"]), T.QParams(
        float(10.0 ** rng.uniform(-3, 0)), c["out_zp"])
    w_q = filter_q(rng, in2_q.scale, out_q, lines, per_line)
    kc = TD.mat_mul_constants(in2_q, w_q, out_q, c["act"], lines)
    args = dict(In2=in2, In1=in1, Infos=kc.infos)
    if has_bias:
        args["Bias"] = bias
    if per_line:
        args.update(Scale=kc.scale, ScaleN=kc.scale_n)
    got = run(built, name, lines * cols, **args)
    expected = TD.mat_mul(in1, in2, bias, in2_q, w_q, out_q, c["act"], transposed)
    check(got, expected)
    fc = T.fully_connected(in2 if transposed else in2.T, in1, bias, in2_q, w_q, out_q, c["act"])
    check(fc.T, expected)       # the TFLite operator it is: FULLY_CONNECTED of each column


def test_sweeps_cover_the_forms():
    assert {c["form"] for c in LINEAR} == {"par", "dp_buf", "dp_tiled", "forced"}
    assert {c["per_channel"] for c in LINEAR} == {True, False}
    assert {c["op"] for c in ELTWISE} == {"add", "sub", "mul", "tvm"} and any(c["small"] for c in ELTWISE)
    assert {c["form"] for c in MATMUL} == {"big", "lines", "cols"}
    assert {TD.MATMUL_OPERS[c["oper"]][2] for c in MATMUL} == {True, False}


# ---- the layers against tflite-micro itself -------------------------------------------------

def _q(t: dict) -> T.QParams:
    return T.QParams(t["scales"][0], t["zero_points"][0])


def sidecar_draws(side: dict):
    """Random int8 graph inputs (3 seeds), then all -128, all 127, and every int8 pair cyclically."""
    shapes = [side["inputs"][side["op_inputs"].index(g)]["shape"] for g in side["graph_inputs"]]
    for seed in range(3):
        rng = np.random.default_rng(seed)
        yield [rng.integers(-128, 128, size=s).astype(np.int8) for s in shapes]
    yield [np.full(s, -128, np.int8) for s in shapes]
    yield [np.full(s, 127, np.int8) for s in shapes]
    if len(shapes) == 2:
        yield [((np.arange(int(np.prod(s))) >> (8 * (1 - k))) % 256 - 128).astype(np.int8).reshape(s)
               for k, s in enumerate(shapes)]


def sidecar_args(side: dict, op_ins: list) -> dict:
    """The generated kernel's arguments: the op's inputs and the constants from the sidecar."""
    ins, oq = side["inputs"], _q(side["outputs"][0])
    act = side["options"].get("fusedActivationFunction", "NONE")
    if side["op"] == "FULLY_CONNECTED":
        w_q = T.FilterQParams(tuple(ins[1]["scales"]))
        k = TD.linear_constants(_q(ins[0]), w_q, oq, act, ins[1]["shape"][0])
        return dict(In=op_ins[0], Filter=np.asarray(ins[1]["data"], np.int8), Bias=np.asarray(ins[2]["data"], np.int32),
                    Scale=k.scale, ScaleN=k.scale_n, Infos=k.infos)
    infos = {"ADD": TD.add_infos, "SUB": TD.sub_infos, "MUL": TD.mul_infos}[side["op"]]
    return dict(In1=op_ins[0], In2=op_ins[1], Infos=infos(_q(ins[0]), _q(ins[1]), oq, act))


@pytest.mark.parametrize("sidecar", SIDECARS, ids=[p.stem for p in SIDECARS])
def test_generated_equals_tflm(built, sidecar: Path):
    runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime",
                                  reason="tflite-micro is in the test extra: pip install tflite-micro")
    side = json.loads(sidecar.read_text())
    interp = runtime.Interpreter.from_file(str(sidecar.with_suffix(".tflite")), arena_size=1 << 20)
    for k, xs in enumerate(sidecar_draws(side)):
        for i, x in enumerate(xs):
            interp.set_input(x, i)
        interp.invoke()
        want = interp.get_output(0)
        op_ins = [xs[side["graph_inputs"].index(t)] for t in side["op_inputs"] if t in side["graph_inputs"]]
        got = run(built, f"M_{sidecar.stem}", want.size, **sidecar_args(side, op_ins))
        bad = np.flatnonzero(got != want.reshape(-1))
        assert bad.size == 0, f"{side['name']} draw {k}: {bad.size}/{want.size} differ, first at {bad[0]}"


# ---- errors ---------------------------------------------------------------------------------

def raises(*fragments: str, kernel: str = "L", below: int = 1):
    """The error names this file, the line ``below`` lines under the call, the kernel, then the fragments."""
    at = inspect.stack()[1].lineno + below
    prefix = f"{THIS}:{at}: kernel '{kernel}': "
    return pytest.raises(ModelError, match=re.escape(prefix) + ".*" + ".*".join(re.escape(f) for f in fragments))



def test_linear_errors():
    with raises("CNN_LinearAct_SQ8: Bias_DataSize 2 is not supported with TensorFlow Lite Micro's requantisation",
                "use Bias_DataSize 4", below=2):
        CNN_LinearAct_SQ8("L", 0, 2, 4, 16, 8, KOP_LINEAR, KOP_NONE)
    with raises("ActOper KOP_HSWISH: TFLite has no fused KOP_HSWISH", "generate CNN_Act_SQ8 after"):
        CNN_LinearAct_SQ8("L", 0, 4, 4, 16, 8, KOP_LINEAR, KOP_HSWISH)
    with raises("LinearOper KOP_CONV is not a linear layer", "KOP_LINEAR"):
        CNN_LinearAct_SQ8("L", 0, 4, 4, 16, 8, KOP_CONV, KOP_NONE)
    with raises("InDim must be at least 1, got 0"):
        CNN_LinearAct_SQ8("L", 0, 4, 4, 0, 8, KOP_LINEAR, KOP_NONE)
    with raises("OutDim must be at most 65535, got 70000"):
        CNN_LinearAct_SQ8("L", 0, 4, 4, 16, 70000, KOP_LINEAR, KOP_NONE)
    with raises("ActOper 'KOP_BOGUS' is not a KernelOper_T"):
        CNN_LinearAct_SQ8("L", 0, 4, 4, 16, 8, KOP_LINEAR, "KOP_BOGUS")


def test_ctrl_errors():
    for fields, text, hint in (
            (dict(TILEORIENTATION=TILE_VER), "TileOrientation TILE_VER is not supported yet", "TILE_HOR"),
            (dict(PARALLELFEATURES=0), "ParallelFeatures 0 is not supported yet", "PARALLELFEATURES"),
            (dict(PADTYPE=PAD_LEFT), "PadType does not apply: this layer has no padding", "PADTYPE"),
            (dict(RELUN=3), "ReluN is not read with TensorFlow Lite Micro's requantisation", "RELUN"),
            (dict(FORCEDPCONV=1), "ForceDPconv does not apply: only CNN_LinearAct_SQ8", "FORCEDPCONV")):
        with raises(text, hint):
            CNN_MatEltMulAct_SQ8("L", ctrl(SCALE_DATASIZE=4, **fields), 4, 5, 5, KOP_NONE)


def test_eltwise_errors():
    c = ctrl(SCALE_DATASIZE=4)
    with raises("CNN_MatAddAct_SQ8: AddMatOper KOP_MATMUL is not an element-wise addition"):
        CNN_MatAddAct_SQ8("L", c, 4, 5, 5, KOP_MATMUL, KOP_NONE)
    with raises("CNN_TensorVectMultAct_SQ8: MatOper KOP_MATADD is not a tensor by vector product"):
        CNN_TensorVectMultAct_SQ8("L", c, 4, 5, 5, KOP_MATADD, KOP_NONE)
    with raises("CNN_MatSubAct_SQ8: ActOper KOP_SIGMOID: TFLite has no fused KOP_SIGMOID"):
        CNN_MatSubAct_SQ8("L", c, 4, 5, 5, KOP_SIGMOID)
    with raises("CNN_MatEltMulAct_SQ8: Width must be at least 1, got 0"):
        CNN_MatEltMulAct_SQ8("L", c, 4, 0, 5, KOP_NONE)


def test_mat_mul_errors():
    with raises("CNN_MatMulAct_SQ8: ColM1 (8) must equal LineM2 (9)", "LineM2 8"):
        CNN_MatMulAct_SQ8("L", 0, 4, 4, 8, 4, 6, 9, 0, 0, 1, 1, KOP_MATMUL, KOP_NONE)
    with raises("Width x Height = 2 x 2 must equal ColM2 (6)"):
        CNN_MatMulAct_SQ8("L", 0, 4, 4, 8, 4, 6, 8, 2, 2, 1, 1, KOP_MATMUL, KOP_NONE)
    with raises("Scx 2 is not supported yet with TensorFlow Lite Micro's requantisation", "use Scx 1"):
        CNN_MatMulAct_SQ8("L", 0, 4, 4, 8, 4, 6, 8, 3, 2, 2, 1, KOP_MATMUL, KOP_NONE)
    with raises("MatMulOper KOP_MATMUL_SM1 is not a matrix product"):
        CNN_MatMulAct_SQ8("L", 0, 4, 4, 8, 4, 6, 8, 0, 0, 1, 1, KOP_MATMUL_SM1, KOP_NONE)
    with raises("Bias_DataSize 1 is not supported with TensorFlow Lite Micro's requantisation", "Bias_DataSize 4"):
        CNN_MatMulAct_SQ8("L", 0, 1, 4, 8, 4, 6, 8, 0, 0, 1, 1, KOP_MATMUL, KOP_NONE)
    with raises("ActOper KOP_HSIGMOID: TFLite has no fused KOP_HSIGMOID"):
        CNN_MatMulAct_SQ8("L", 0, 4, 4, 8, 4, 6, 8, 0, 0, 1, 1, KOP_MATMUL_NOBIAS, KOP_HSIGMOID)


def test_no_tiling_returns_0():
    """With AT_KERNEL_NOSOLUTION_ERROR off, a layer no tiling fits returns 0 (the original's int)."""
    with Model(PLATFORM):
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        LoadCNN_SQ8_Library()
        AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, 0)
        SetL1MemorySize(128)
        assert CNN_LinearAct_SQ8("L0", 0, 4, 4, 400, 8, KOP_LINEAR, KOP_NONE) == 0
        assert CNN_MatMulAct_SQ8("L1", 0, 4, 4, 40, 8, 40, 40, 0, 0, 1, 1, KOP_MATMUL, KOP_NONE) == 0
        assert CNN_MatAddAct_SQ8("L2", ctrl(SCALE_DATASIZE=4), 4, 5, 5, KOP_MATADD, KOP_NONE) == 1
