"""The non-convolution CNN generators (autotiler/generators/cnn_dense.py) against their numpy
references (cnn_dense_reference.py), bit for bit, on the simulated cluster.

Layer configurations are drawn by hypothesis (derandomized) when the module is collected: data
sizes, sizes, Q formats (saturating ones included: full-range data), activations, L3-homed
arguments, tile orientations and L1 budgets, some small enough to force the original's tiled
forms (the input-tiled linear layer with its DP + reduction kernels, the tiled global pooling,
tiled additions), which each test checks in the tiling. Every configuration is one user kernel
of a single model, built once; each runs with outputs pre-filled with a sentinel, and its
simulated cycles are the predicted ones. Then the guide's MNIST layers under L1 48000, and every
error a generator raises, matched with the script's line, the kernel and the parameter.
"""

from __future__ import annotations

import linecache
import re
import sys

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import ModelError
from autotiler.generators import CNN_HEADER, CNN_KERNELS_DIR, CNN_SOURCES, LoadCNNLibrary
from autotiler.generators import cnn_dense_reference as DR
from autotiler.generators.cnn_ctrl import CNN_GenControl_T, CNN_InitGenCtrl, CNN_SetGenCtrl
from autotiler.generators.cnn_dense import (
    LINEAR_DP,
    LINEAR_PAR,
    LINEAR_REDUCT,
    CNN_GlobalPool,
    CNN_LinearReLU,
    CNN_MatAdd,
    CNN_MatAddDynAdjust,
    CNN_MatAddRelu,
    CNN_SoftMax,
)
from autotiler.platforms import get_platform

pytestmark = pytest.mark.usefixtures("private_harness_cache")
THIS = "test_cnn_dense_generators.py"
PLATFORM = get_platform("gap8")
BIG = 48000
DT = DR.DTYPE
BITS = {1: 7, 2: 15, 4: 31}
SENTINEL = {1: -99, 2: -12345, 4: -123456789}
T0, D0 = KER_ITER_TILE0, KER_ITER_D0


def a4(n: int) -> int:
    return (n + 3) // 4 * 4


def draw(strategy, n: int) -> list:
    """n examples of a strategy, derandomized (the same list at every run): the two simplest
    hypothesis generates first, then examples spread over 4n more (consecutive draws are alike)."""
    out = []

    @settings(max_examples=4 * n + 2, derandomize=True, database=None, phases=[Phase.generate], deadline=None)
    @given(strategy)
    def collect(x):
        out.append(x)

    collect()
    return out[:2] + out[2::max(1, (len(out) - 2) // (n - 2))][:n - 2]


# ---- configurations -------------------------------------------------------------------------

DP_SIZES = [s for s in LINEAR_PAR if s[:2] in LINEAR_DP and s[2:] in LINEAR_REDUCT]
CLIP = [KOP_NONE, KOP_RELU, KOP_RELUN]
ALL_ACTS = [*CLIP, KOP_HSWISH, KOP_HSIGMOID, KOP_LEAKYRELU, KOP_SIGMOID, KOP_TANH, KOP_SWISH]


@st.composite
def linear_cfg(draw_):
    form = draw_(st.sampled_from(["par", "par", "dp_buf", "dp_tiled"]))
    sizes = draw_(st.sampled_from(sorted(LINEAR_PAR) if form == "par" else DP_SIZES))
    par_acts = LINEAR_PAR[sizes][1]
    acts = ALL_ACTS if sizes in DP_SIZES else par_acts
    if form == "par":      # the input-tiled form would be chosen for the others: keep them to DP forms
        acts = [a for a in acts if a in par_acts]
    act = draw_(st.sampled_from(acts))
    is_, fs, bs, os_ = sizes
    in_dim = draw_(st.integers(1 if form == "par" else 120, 400))
    out_dim = draw_(st.integers(1, 24 if form == "par" else 6))
    in_q = draw_(st.integers(0, BITS[is_]))
    filter_q = draw_(st.integers(0, BITS[fs]))
    if act in (KOP_SIGMOID, KOP_TANH):
        out_q = BITS[os_]
        in_q = max(in_q, out_q - filter_q)
    else:
        hi = min(in_q + filter_q, BITS[os_])
        if act == KOP_RELUN:
            hi = min(hi, BITS[os_] - 3)
        out_q = draw_(st.integers(0, max(0, hi)))
    bias_q = draw_(st.integers(0, BITS[bs]))
    relun = draw_(st.sampled_from([6, 3]))
    l3 = draw_(st.tuples(*[st.booleans()] * 4))
    extreme = draw_(st.booleans())
    rest = a4(32) + a4(out_dim * bs) + a4(out_dim * os_)
    # dp_buf: the input whole and two filter tiles of a quarter (less than the output-parallel form's
    # whole filter row); dp_tiled: not even the input whole
    budget = {"par": BIG, "dp_buf": a4(in_dim * is_) + rest + 2 * a4(in_dim // 4 * fs),
              "dp_tiled": rest + a4(in_dim * is_ // 2)}[form]
    return dict(form=form, sizes=sizes, act=act, in_dim=in_dim, out_dim=out_dim, qs=(in_q, filter_q, bias_q, out_q),
                relun=relun, l3=l3, extreme=extreme, budget=budget)


@st.composite
def softmax_cfg(draw_):
    return dict(in_size=draw_(st.sampled_from([1, 2])), dim=draw_(st.integers(1, 1000)), in_q=draw_(st.integers(0, 15)),
                l3=draw_(st.tuples(st.booleans(), st.booleans())), spread=draw_(st.integers(0, 15)))


@st.composite
def mat_add_cfg(draw_):
    kind = draw_(st.sampled_from(["add", "add_relu_kop", "relu", "relu_none", "dyn"]))
    size = draw_(st.sampled_from([1, 2]))
    orient = draw_(st.sampled_from([TILE_HOR, TILE_VER]))
    small = draw_(st.booleans())
    feat = draw_(st.integers(1, 10))
    w = draw_(st.integers(4 if small else 1, 24))
    h = draw_(st.integers(4 if small else 1, 16))
    q = st.integers(0, BITS[size])
    qs = (draw_(q), draw_(q), draw_(q)) if kind == "dyn" else (draw_(q),) * 3
    tiled, other = (h, w) if orient == TILE_HOR else (w, h)
    budget = 6 * a4(other * size * max(1, tiled // 3)) if small else BIG
    return dict(kind=kind, size=size, orient=orient, small=small, feat=feat, w=w, h=h, qs=qs,
                l3=draw_(st.tuples(*[st.booleans()] * 3)), budget=budget)


@st.composite
def global_pool_cfg(draw_):
    size = draw_(st.sampled_from([1, 2]))
    small = draw_(st.booleans())
    feat = draw_(st.integers(1, 6 if small else 12))
    w = draw_(st.integers(8 // size if small else 1, 20))
    h = draw_(st.integers(8 if small else 1, 16))
    return dict(size=size, avg=draw_(st.booleans()), small=small, feat=feat, w=w, h=h, q=draw_(st.integers(0, BITS[size])),
                l3=draw_(st.tuples(st.booleans(), st.booleans())), budget=a4(w * h * size) - 4 if small else BIG)


def linear_fixed(form, sizes, act, qs, in_dim=300, out_dim=3, l3=(True, False, True, False)):
    rest = a4(32) + a4(out_dim * sizes[2]) + a4(out_dim * sizes[3])
    budget = {"par": BIG, "dp_buf": a4(in_dim * sizes[0]) + rest + 2 * a4(in_dim // 4 * sizes[1]),
              "dp_tiled": rest + a4(in_dim * sizes[0] // 2)}[form]
    return dict(form=form, sizes=sizes, act=act, in_dim=in_dim, out_dim=out_dim, qs=qs, relun=6, l3=l3, extreme=True,
                budget=budget)


# every data-size combination in each form it has, with saturating data
LINEAR = draw(linear_cfg(), 16) + [
    linear_fixed("dp_tiled", (2, 2, 2, 2), KOP_LEAKYRELU, (12, 12, 10, 12)),
    linear_fixed("dp_buf", (2, 1, 2, 2), KOP_SWISH, (10, 6, 9, 11), l3=(False, True, False, True)),
    linear_fixed("dp_tiled", (1, 1, 2, 2), KOP_RELUN, (6, 6, 9, 10)),
    linear_fixed("dp_tiled", (1, 1, 1, 1), KOP_HSWISH, (5, 7, 4, 5)),
    linear_fixed("par", (1, 1, 1, 4), KOP_RELU, (7, 7, 3, 10), out_dim=17),
    linear_fixed("par", (2, 2, 2, 4), KOP_RELUN, (14, 15, 12, 20), out_dim=11),
    linear_fixed("par", (2, 1, 2, 2), KOP_NONE, (15, 7, 3, 2), out_dim=20),
    linear_fixed("par", (2, 2, 2, 4), KOP_NONE, (15, 15, 0, 0), out_dim=9),
]
SOFTMAX = draw(softmax_cfg(), 8)
MATADD = draw(mat_add_cfg(), 14)
GLOBALPOOL = draw(global_pool_cfg(), 10)


def declare(kind: str, i: int, c: dict) -> str:
    """Declare configuration c of a generator as user kernel '<kind><i>' at its L1 budget."""
    name = f"{kind}{i}"
    SetL1MemorySize(c.get("budget", BIG))
    if kind == "Linear":
        is_, fs, bs, os_ = c["sizes"]
        ctrl = 0
        if c["relun"] != 6:
            ctrl = CNN_GenControl_T()
            CNN_InitGenCtrl(ctrl)
            CNN_SetGenCtrl(ctrl, "RELUN", c["relun"])
        assert CNN_LinearReLU(name, ctrl, is_, fs, bs, os_, *c["qs"], *[int(b) for b in c["l3"]], c["in_dim"],
                              c["out_dim"], KOP_LINEAR, c["act"]) == 1
    elif kind == "SoftMax":
        CNN_SoftMax(name, 0, c["in_size"], 2, c["in_q"], 15, *[int(b) for b in c["l3"]], c["dim"], KOP_SOFTMAX)
    elif kind == "MatAdd":
        ctrl = 0
        if c["orient"] == TILE_VER:
            ctrl = CNN_GenControl_T()
            CNN_InitGenCtrl(ctrl)
            CNN_SetGenCtrl(ctrl, "TILEORIENTATION", TILE_VER)
        s, feat = c["size"], c["feat"]
        common = (name, ctrl, s, s, s, *c["qs"], *[int(b) for b in c["l3"]], feat, feat, c["w"], c["h"])
        if c["kind"] in ("add", "add_relu_kop"):
            CNN_MatAdd(*common, KOP_MATADD if c["kind"] == "add" else KOP_MATADD_RELU)
        elif c["kind"] in ("relu", "relu_none"):
            CNN_MatAddRelu(*common, KOP_MATADD, KOP_RELU if c["kind"] == "relu" else KOP_NONE)
        else:
            CNN_MatAddDynAdjust(*common, KOP_MATADD_DYNADJUST)
    else:
        s = c["size"]
        CNN_GlobalPool(name, 0, s, s, c["q"], c["q"], *[int(b) for b in c["l3"]], c["feat"], c["feat"], c["w"], c["h"],
                       KOP_GLOBAL_AVGPOOL if c["avg"] else KOP_GLOBAL_MAXPOOL)
    return name


ALL = [("Linear", LINEAR), ("SoftMax", SOFTMAX), ("MatAdd", MATADD), ("GlobalPool", GLOBALPOOL)]
CASES = [(kind, i) for kind, cfgs in ALL for i in range(len(cfgs))]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every configuration in one model, generated and built once: (program, tilings)."""
    out = tmp_path_factory.mktemp("cnn_dense")
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_HEADER)
        SetGeneratedFilesNames("DenseKernels.c", "DenseKernels.h")
        LoadCNNLibrary()
        for kind, cfgs in ALL:
            for i, c in enumerate(cfgs):
                declare(kind, i, c)
        tilings = dict(m.tilings)
        files = generate(m)
    write_files(files, str(out))
    prog = host_harness.build(out, sources=CNN_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM)
    return prog, tilings


def values(rng, shape, size: int, extreme: bool = True) -> np.ndarray:
    info = np.iinfo(DT[size])
    lo, hi = (info.min, info.max) if extreme else (info.min >> 4, info.max >> 4)
    return rng.integers(lo, hi + 1, size=shape, dtype=np.int64).astype(DT[size])


def run(prog, tilings, name: str, **arrays) -> dict:
    """Call kernel `name`; arrays named Out are outputs (shape, size) pre-filled with the sentinel."""
    args, shape = {}, None
    for k, v in arrays.items():
        if k == "Out":
            shape, size = v
            args[k] = np.full(int(np.prod(shape)), SENTINEL[size], DT[size])
        else:
            args[k] = np.ascontiguousarray(v).ravel()
    counters = prog.call(name, **args)
    args["Out"] = args["Out"].reshape(shape)
    assert counters["cycles"] == tilings[name].predicted.cycles
    assert tilings[name].l1_bytes <= tilings[name].budget
    return args


def check(got, expected):
    got, expected = np.asarray(got).reshape(-1), np.asarray(expected).reshape(-1)
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, (f"{bad.size} of {got.size} items differ, first at {bad[0]}: got {got[bad[:6]].tolist()} "
                           f"expected {expected[bad[:6]].tolist()}")


# ---- the layers, bit-exact ------------------------------------------------------------------

@pytest.mark.parametrize("i", range(len(LINEAR)))
def test_linear(built, i):
    prog, tilings = built
    c = LINEAR[i]
    name = f"Linear{i}"
    t = tilings[name]
    dp = any(a.name == "Reduct" for a in t.args)
    assert dp == (c["form"] != "par"), t.describe()
    if dp:      # the original's input-tiled form: really tiled, the input whole or tiled
        assert t.count(T0) > 1 and t.count(D0) == c["out_dim"], t.describe()
        assert (t.arg("In").role != "tile") == (c["form"] == "dp_buf"), t.describe()
    is_, fs, bs, os_ = c["sizes"]
    rng = np.random.default_rng(i)
    inp = values(rng, c["in_dim"], is_, c["extreme"])
    filt = values(rng, (c["out_dim"], c["in_dim"]), fs, c["extreme"])
    bias = values(rng, c["out_dim"], bs, c["extreme"])
    got = run(prog, tilings, name, In=inp, Filter=filt, Bias=bias, Out=(c["out_dim"], os_))["Out"]
    check(got, DR.linear_relu(inp, filt, bias, *c["qs"], os_, c["act"], c["relun"]))


@pytest.mark.parametrize("i", range(len(SOFTMAX)))
def test_softmax(built, i):
    prog, tilings = built
    c = SOFTMAX[i]
    rng = np.random.default_rng(100 + i)
    hi = min(1 << c["spread"], 1 << BITS[c["in_size"]])
    inp = rng.integers(-hi, hi, size=c["dim"]).astype(DT[c["in_size"]])
    got = run(prog, tilings, f"SoftMax{i}", In=inp, Out=(c["dim"], 2))["Out"]
    check(got, DR.softmax(inp, c["in_q"]))


@pytest.mark.parametrize("i", range(len(MATADD)))
def test_mat_add(built, i):
    prog, tilings = built
    c = MATADD[i]
    name = f"MatAdd{i}"
    t = tilings[name]
    if c["small"]:
        assert t.count(T0) > 1, t.describe()
    rng = np.random.default_rng(200 + i)
    shape = (c["feat"], c["h"], c["w"])
    a, b = values(rng, shape, c["size"]), values(rng, shape, c["size"])
    got = run(prog, tilings, name, In1=a, In2=b, Out=(shape, c["size"]))["Out"]
    mode = {"add": "add", "add_relu_kop": "relu", "relu": "relu", "relu_none": "add", "dyn": "dyn"}[c["kind"]]
    check(got, DR.mat_add(a, b, *c["qs"], mode))


@pytest.mark.parametrize("i", range(len(GLOBALPOOL)))
def test_global_pool(built, i):
    prog, tilings = built
    c = GLOBALPOOL[i]
    name = f"GlobalPool{i}"
    t = tilings[name]
    tiled_plane = any(a.name == "DPOut" for a in t.args)
    assert tiled_plane == c["small"], t.describe()
    if c["small"]:
        assert t.count(T0) > 1, t.describe()
    rng = np.random.default_rng(300 + i)
    inp = values(rng, (c["feat"], c["h"], c["w"]), c["size"])
    got = run(prog, tilings, name, In=inp, Out=(c["feat"], c["size"]))["Out"]
    check(got, DR.global_pool(inp, KOP_GLOBAL_AVGPOOL if c["avg"] else KOP_GLOBAL_MAXPOOL))


def test_sweeps_cover_the_forms():
    """The drawn configurations reach every form, L3 homes and saturating data."""
    assert {c["form"] for c in LINEAR} == {"par", "dp_buf", "dp_tiled"}
    assert any(c["act"] not in CLIP for c in LINEAR) and any(c["act"] in (KOP_RELUN,) for c in LINEAR)
    assert any(all(c["l3"]) for c in LINEAR) or sum(any(c["l3"]) for c in LINEAR) > 3
    assert {c["small"] for c in MATADD} == {True, False} and {c["small"] for c in GLOBALPOOL} == {True, False}
    assert any(c["orient"] == TILE_VER and c["small"] for c in MATADD)
    kinds = {c["kind"] for c in MATADD}
    assert "dyn" in kinds and kinds & {"relu", "add_relu_kop"} and kinds & {"add", "relu_none"}


# ---- the guide's MNIST layers ---------------------------------------------------------------

def mnist(out_dir, objective=None):
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_HEADER)
        SetGeneratedFilesNames("MnistKernels.c", "MnistKernels.h")
        SetL1MemorySize(48000)
        if objective:
            SetTilingObjective(objective)
        LoadCNNLibrary()
        CNN_LinearReLU("LinearLayerReLU_0", 0, 2, 2, 2, 2, 12, 12, 8, 11, 2, 2, 2, 2, 1024, 10, KOP_LINEAR, KOP_NONE)
        CNN_SoftMax("SoftMax_0", 0, 2, 2, 15, 15, 1, 1, 10, KOP_SOFTMAX)
        tilings = dict(m.tilings)
        files = generate(m)
    write_files(files, str(out_dir))
    return tilings, files["MnistKernels.c"]


@pytest.mark.parametrize("objective", ["original", None], ids=["original", "time"])
def test_mnist_layers(tmp_path, objective, capsys):
    tilings, code = mnist(tmp_path, objective)
    lin, soft = tilings["LinearLayerReLU_0"], tilings["SoftMax_0"]
    if objective == "original":
        # the original's generated code: everything promoted to buffers, 2048 + 20480 + 20 + 20 B,
        # one KerParLinearLayerReLU_fp call at LOC_LOOP
        assert lin.promoted and lin.l1_bytes == 2048 + 20480 + 20 + 20, lin.describe()
    assert lin.l1_bytes <= 48000 and soft.l1_bytes <= 48000
    assert code.count("KerParLinearLayerReLU_fp") >= 1 and "KerDPLinearLayer" not in code
    assert "KerParSoftMax_fp" in code
    prog = host_harness.build(tmp_path, sources=CNN_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM)
    rng = np.random.default_rng(7)
    x = rng.integers(-4096, 4096, 1024).astype(np.int16)
    w = rng.integers(-4096, 4096, (10, 1024)).astype(np.int16)
    b = rng.integers(-256, 256, 10).astype(np.int16)
    out = run(prog, tilings, "LinearLayerReLU_0", In=x, Filter=w, Bias=b, Out=(10, 2))["Out"]
    check(out, DR.linear_relu(x, w, b, 12, 12, 8, 11, 2, KOP_NONE))
    prob = run(prog, tilings, "SoftMax_0", In=out, Out=(10, 2))["Out"]
    check(prob, DR.softmax(out, 15))
    with capsys.disabled():
        print(f"\n  MNIST ({objective or 'time'}): LinearLayerReLU_0 L1 {lin.l1_bytes} B, {lin.predicted.cycles} cycles "
              f"[{lin.describe()}]; SoftMax_0 L1 {soft.l1_bytes} B, {soft.predicted.cycles} cycles")


# ---- errors -----------------------------------------------------------------------------------

@pytest.fixture
def model():
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_HEADER)
        SetL1MemorySize(BIG)
        LoadCNNLibrary()
        yield m


def raises(fragments, kernel, param):
    """ModelError at the caller's next line, naming kernel and param, with the fragments in order."""
    frame = sys._getframe(1)
    line = frame.f_lineno
    while not linecache.getline(frame.f_code.co_filename, line).rstrip().endswith(":"):
        line += 1
    line += 1
    pattern = re.escape(f"{THIS}:{line}: kernel '{kernel}'" + (f", argument '{param}'" if param else "") + ": ")
    pattern += ".*" + ".*".join(re.escape(f) for f in fragments)
    return pytest.raises(ModelError, match=pattern)


def lin(name="L", sizes=(2, 2, 2, 2), qs=(12, 12, 8, 11), dims=(64, 10), oper=KOP_LINEAR, act=KOP_NONE, ctrl=0):
    """CNN_LinearReLU's arguments (called in the test's body, so that errors name its line)."""
    return (name, ctrl, *sizes, *qs, 0, 0, 0, 0, *dims, oper, act)


def vertical():
    ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(ctrl)
    CNN_SetGenCtrl(ctrl, "TILEORIENTATION", TILE_VER)
    return ctrl


def test_error_data_size_3(model):
    with raises(["CNN_LinearReLU: In_DataSize is 3: a data size must be 1 (byte), 2 (half word), 4 (word)"],
                "L", "In_DataSize"):
        CNN_LinearReLU("L", 0, 3, 2, 2, 2, 12, 12, 8, 11, 0, 0, 0, 0, 64, 10, KOP_LINEAR, KOP_NONE)
    with raises(["CNN_SoftMax: Out_DataSize is 1: a data size must be 2 (half word)"], "S", "Out_DataSize"):
        CNN_SoftMax("S", 0, 2, 1, 15, 15, 0, 0, 10, KOP_SOFTMAX)


def test_error_data_sizes_without_kernel(model):
    with raises(["no basic kernel takes data sizes (In, Filter, Bias, Out) = (2, 1, 1, 2)",
                 "the CNN library has (2, 2, 2, 2), (1, 1, 1, 1)"], "L", "Out_DataSize"):
        CNN_LinearReLU(*lin(sizes=(2, 1, 1, 2)))
    with raises(["no basic kernel applies KOP_HSWISH to data sizes (1, 1, 1, 4)", "use KOP_NONE"], "L", "ReLUOper"):
        CNN_LinearReLU(*lin(sizes=(1, 1, 1, 4), qs=(7, 7, 7, 14), act=KOP_HSWISH))
    with raises(["no basic kernel adds data sizes (In1, In2, Out) = (2, 1, 2)"], "M", "Out_DataSize"):
        CNN_MatAdd("M", 0, 2, 1, 2, 8, 8, 8, 0, 0, 0, 4, 4, 8, 8, KOP_MATADD)
    with raises(["no basic kernel pools data size 2 into 1"], "G", "Out_DataSize"):
        CNN_GlobalPool("G", 0, 2, 1, 7, 7, 0, 0, 4, 4, 8, 8, KOP_GLOBAL_MAXPOOL)


def test_error_dimension_zero(model):
    with raises(["CNN_SoftMax: Dim must be an integer in [1, 65535], got 0"], "S", "Dim"):
        CNN_SoftMax("S", 0, 2, 2, 15, 15, 0, 0, 0, KOP_SOFTMAX)
    with raises(["InDim must be an integer in [1, 65535], got 0"], "L", "InDim"):
        CNN_LinearReLU(*lin(dims=(0, 10)))
    with raises(["Width must be an integer in [1, 65535], got 0"], "M", "Width"):
        CNN_MatAdd("M", 0, 2, 2, 2, 8, 8, 8, 0, 0, 0, 4, 4, 0, 8, KOP_MATADD)
    with raises(["OutFeat (5) must equal InFeat (4)"], "G", "OutFeat"):
        CNN_GlobalPool("G", 0, 2, 2, 7, 7, 0, 0, 4, 5, 8, 8, KOP_GLOBAL_MAXPOOL)


def test_error_unsupported_operations(model):
    with raises(["LinearOper KOP_CONV is not supported: expected KOP_LINEAR"], "L", "LinearOper"):
        CNN_LinearReLU(*lin(oper=KOP_CONV))
    with raises(["ReLUOper KOP_RELUM is not supported"], "L", "ReLUOper"):
        CNN_LinearReLU(*lin(act=KOP_RELUM))
    with raises(["SoftMaxOper KOP_LINEAR is not supported: expected KOP_SOFTMAX"], "S", "SoftMaxOper"):
        CNN_SoftMax("S", 0, 2, 2, 15, 15, 0, 0, 10, KOP_LINEAR)
    with raises(["PoolOper KOP_MAXPOOL is not supported: expected KOP_GLOBAL_MAXPOOL, KOP_GLOBAL_AVGPOOL"], "G",
                "PoolOper"):
        CNN_GlobalPool("G", 0, 2, 2, 7, 7, 0, 0, 4, 4, 8, 8, KOP_MAXPOOL)
    with raises(["ReLUOper KOP_RELUN is not supported: expected KOP_NONE, KOP_RELU"], "M", "ReLUOper"):
        CNN_MatAddRelu("M", 0, 2, 2, 2, 8, 8, 8, 0, 0, 0, 4, 4, 8, 8, KOP_MATADD, KOP_RELUN)
    ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(ctrl)
    CNN_SetGenCtrl(ctrl, "PARALLELFEATURES", 0)
    with raises(["ParallelFeatures 0: the CNN library has no single-feature kernel"], "M", "Ctrl"):
        CNN_MatAdd("M", ctrl, 2, 2, 2, 8, 8, 8, 0, 0, 0, 4, 4, 8, 8, KOP_MATADD)
    with raises(["TileOrientation TILE_VER is not supported"], "L", "Ctrl"):
        CNN_LinearReLU(*lin(ctrl=vertical()))


def test_error_q_formats(model):
    with raises(["In_Q + Filter_Q - Out_Q = 4 + 4 - 9 = -1 is a negative shift", "Out_Q at most In_Q + Filter_Q = 8"],
                "L", "Out_Q"):
        CNN_LinearReLU(*lin(qs=(4, 4, 4, 9)))
    with raises(["KOP_RELUN: the bound ReluN << Out_Q = 6 << 13 = 49152 cannot be represented on 15 bits"], "L",
                "Out_Q"):
        CNN_LinearReLU(*lin(qs=(12, 12, 8, 13), act=KOP_RELUN))
    with raises(["KOP_SIGMOID outputs Q15 on 2 byte(s), but Out_Q is 11"], "L", "Out_Q"):
        CNN_LinearReLU(*lin(act=KOP_SIGMOID))
    with raises(["the output is always Q15, but Out_Q is 7", "Out_Q 15"], "S", "Out_Q"):
        CNN_SoftMax("S", 0, 2, 2, 12, 7, 0, 0, 10, KOP_SOFTMAX)
    with raises(["In1_Q, In2_Q and Out_Q differ (8, 9, 8)", "use CNN_MatAddDynAdjust"], "M", "In2_Q"):
        CNN_MatAdd("M", 0, 2, 2, 2, 8, 9, 8, 0, 0, 0, 4, 4, 8, 8, KOP_MATADD)
    with raises(["In1_Q must be an integer in [0, 7], got 9"], "M", "In1_Q"):
        CNN_MatAddDynAdjust("M", 0, 1, 1, 1, 9, 3, 3, 0, 0, 0, 4, 4, 8, 8, KOP_MATADD_DYNADJUST)
    with raises(["the result keeps the input's Q7, but Out_Q is 8"], "G", "Out_Q"):
        CNN_GlobalPool("G", 0, 2, 2, 7, 8, 0, 0, 4, 4, 8, 8, KOP_GLOBAL_AVGPOOL)


def test_errors_leave_the_model_usable_and_the_nosolution_setting_restored(model):
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
    SetL1MemorySize(40)          # nothing fits: the generator returns 0 as the original
    assert CNN_LinearReLU(*lin(name="Tiny", dims=(512, 4))) == 0
    assert AT_GetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR) == 0
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_ON)
    SetL1MemorySize(BIG)
    assert CNN_LinearReLU(*lin(name="Fine")) == 1
    assert AT_GetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR) == 1
    assert "Tiny" in model.unsolved and "Fine" in model.tilings
