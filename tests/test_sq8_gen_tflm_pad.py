"""``CNN_Pad_SQ8`` (autotiler/generators/sq8_gen_tflm_pad.py): TensorFlow Lite's int8 PAD of an HWC
tensor, generated, built and run on the simulated cluster.

* the numpy reference ``pad`` (and autotiler.importers.reference's PAD) equals the tflite-micro interpreter on the committed PAD models
  (tests/models/sq8/pad_models/, made by tests/models/make_pad_models.py: asymmetric pads on H, W, C);
* each model becomes one layer tiled for the smallest L1 budget that fits, and its output equals
  tflite-micro's bit for bit on random inputs, all -128, all 127;
* a set of layers (shapes, pads 0..5 on each side, with and without channel pads, budgets from
  the smallest that fits to the whole layer, built for 8 and for 3 cores) runs hypothesis draws
  of zero points and data against the reference: the Infos is a run-time argument, so one build
  serves every draw;
* outputs are pre-filled with a sentinel that must be overwritten everywhere (a pad writes every
  output item), and the cycles are the predicted ones;
* the typed errors, with their texts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import ModelError
from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_gen_tflm_pad as P
from autotiler.generators import sq8_tflm as R
from autotiler.generators.cnn_ctrl import CNN_GenControl_T, CNN_InitGenCtrl, CNN_SetGenCtrl
from autotiler.generators.sq8_generators import CNN_Pad_SQ8
from autotiler.generators.sq8_infos import read_tflm_infos
from autotiler.generators.sq8_library import CNN_SQ8_HEADER, CNN_SQ8_SOURCES, LoadCNN_SQ8_Library
from autotiler.importers import reference as IR
from autotiler.importers.tflite_reader import read_tflite
from autotiler.platforms import get_platform

from .error_lines import rendered, with_body_line

pytestmark = pytest.mark.usefixtures("private_harness_cache")
THIS = "test_sq8_gen_tflm_pad.py"
PLATFORM = get_platform("gap8", l1_size=256 * 1024, l2_size=4 * 1024 * 1024)
MODELS = Path(__file__).resolve().parent / "models" / "sq8" / "pad_models"
SENTINEL = -99
SWEEP = dict(deadline=None, derandomize=True, database=None, max_examples=25,
             suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def ctrl4(**fields):
    """A CNN_GenControl_T selecting TFLM's semantics (SCALE_DATASIZE 4), with more fields set."""
    c = CNN_GenControl_T()
    CNN_InitGenCtrl(c)
    CNN_SetGenCtrl(c, "SCALE_DATASIZE", 4)
    for k, v in fields.items():
        CNN_SetGenCtrl(c, k, v)
    return c


def declare_small(name: str, *args, start: int = 64) -> int:
    """Declare the layer with the smallest L1 budget from ``start`` bytes on that fits (steps of
    1/8): returns it."""
    budget = start
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
    while True:
        SetL1MemorySize(budget)
        if CNN_Pad_SQ8(name, ctrl4(), *args):
            break
        assert budget < PLATFORM.l1_size, f"{name}: nothing fits"
        budget += max(8, budget // 8)
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_ON)
    return budget


def build(out_dir, declare, cores: int = 8) -> tuple:
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        SetGeneratedFilesNames("Sq8Pad.c", "Sq8Pad.h")
        LoadCNN_SQ8_Library()
        declare()
        tilings = dict(m.tilings)
        files = generate(m)
    write_files(files, str(out_dir))
    prog = host_harness.build(out_dir, sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM,
                              cores=cores)
    return prog, tilings, cores


def call(built, name: str, expected: np.ndarray, x: np.ndarray, infos: np.ndarray) -> None:
    """Run kernel ``name`` with a sentinel-filled output: every item equals expected (the sentinel
    is overwritten everywhere), the cycles are the predicted ones (8 cores: GAP8's)."""
    prog, tilings, cores = built
    exp = np.asarray(expected, dtype=np.int8).reshape(-1)
    out = np.full(exp.size, SENTINEL, dtype=np.int8)
    counters = prog.call(name, In=np.ascontiguousarray(x).reshape(-1), Out=out, Infos=infos)
    bad = np.flatnonzero(out != exp)
    assert bad.size == 0, (f"{name}: {bad.size}/{exp.size} differ, first at {bad[:4].tolist()}: "
                           f"got {out[bad[:4]].tolist()} want {exp[bad[:4]].tolist()}")
    if cores == 8:
        assert counters["cycles"] == tilings[name].predicted.cycles, name


def tiles(built, name: str) -> int:
    return built[1][name].loops[0].count


# ---------------------------------------------------------------------------------------------
# The committed PAD models against tflite-micro


def _sidecars() -> list:
    return [json.loads(p.read_text()) for p in sorted(MODELS.glob("pad_*.json"))]


SIDES = _sidecars()


def _q(t: dict) -> R.QParams:
    return R.QParams(t["scales"][0], t["zero_points"][0])


def _paddings(side: dict) -> np.ndarray:
    return np.asarray(side["inputs"][1]["data"]).reshape(-1, 2)


def _kname(side: dict) -> str:
    return "M_" + re.sub(r"\W", "_", side["name"])


def _layer_args(side: dict) -> tuple:
    """(Feat, Width, Height, PadTop, PadBottom, PadLeft, PadRight, PadFront, PadBack) of a model."""
    _, h, w, c = side["inputs"][0]["shape"]
    p = _paddings(side)
    assert p[0].tolist() == [0, 0], "no batch padding"
    return tuple(int(v) for v in (c, w, h, *p[1], *p[2], *p[3]))


def model_draws(side: dict):
    shape = side["inputs"][0]["shape"]
    for seed in range(4):
        yield np.random.default_rng(seed).integers(-128, 128, size=shape).astype(np.int8)
    yield np.full(shape, -128, np.int8)
    yield np.full(shape, 127, np.int8)


def tflm_outputs(side: dict):
    """(input, tflite-micro's output) for each draw."""
    runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")
    interp = runtime.Interpreter.from_file(str(MODELS / (side["name"] + ".tflite")), arena_size=1 << 20)
    for x in model_draws(side):
        interp.set_input(x, 0)
        interp.invoke()
        yield x, interp.get_output(0)


def test_models_are_pads():
    assert len(SIDES) >= 4
    assert {s["op"] for s in SIDES} == {"PAD"}
    assert any(_paddings(s)[3].any() for s in SIDES), "a model pads channels"
    assert any(s["inputs"][0]["zero_points"][0] != 0 for s in SIDES), "a model pads with a zero point other than 0"


@pytest.mark.parametrize("side", SIDES, ids=[s["name"] for s in SIDES])
def test_reference_equals_tflm(side):
    q = _q(side["inputs"][0])
    assert q == _q(side["outputs"][0]), "TFLite's int8 PAD keeps its input's quantisation"
    path = MODELS / (side["name"] + ".tflite")
    graph = read_tflite(str(path), path.read_bytes())
    for x, want in tflm_outputs(side):
        got = P.pad(x, _paddings(side), q)
        assert got.dtype == np.int8 and got.shape == want.shape
        assert np.array_equal(got, want)
        # the importer's reference (the expected output of an imported graph) agrees
        values = IR.run(graph, {graph.inputs[0]: x})
        assert np.array_equal(values[graph.outputs[0]], want)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    def declare():
        for side in SIDES:
            declare_small(_kname(side), *_layer_args(side))
    return build(tmp_path_factory.mktemp("sq8_pad_models"), declare)


@pytest.mark.parametrize("side", SIDES, ids=[s["name"] for s in SIDES])
def test_model_equals_tflm(models, side):
    infos = P.pad_infos(_q(side["inputs"][0]))
    for x, want in tflm_outputs(side):
        call(models, _kname(side), want, x, infos)


# ---------------------------------------------------------------------------------------------
# Layers of many shapes and pads, hypothesis over zero points and data, against the reference


def _layers() -> list:
    """(name, (Feat, Width, Height, PadTop, PadBottom, PadLeft, PadRight, PadFront, PadBack), budget):
    drawn from a fixed seed (pads 0..5 on each side, channel pads on every other layer), budget
    "small" (the smallest that fits), "mid" (1 KB, or the smallest above that fits) or "whole"
    (100 000 bytes); then hand-picked edges."""
    rng = np.random.default_rng(24)
    out = []
    for i in range(14):
        f, w, h = (int(v) for v in rng.integers(1, 10, size=3))
        pads = [int(v) for v in rng.integers(0, 6, size=6)]
        if i % 2:
            pads[4:] = [0, 0]
        out.append((f"Rand{i}", (f, w, h, *pads), ("whole", "small", "mid")[i % 3]))
    out += [("NoPad", (3, 4, 5, 0, 0, 0, 0, 0, 0), "small"),
            ("OneLine", (2, 3, 1, 5, 5, 2, 1, 0, 0), "small"),          # one input line, 10 padded ones
            ("OnePixel", (1, 1, 1, 1, 2, 3, 4, 5, 0), "small"),
            ("ChannelsOnly", (4, 3, 6, 0, 0, 0, 0, 2, 3), "small"),
            ("TopOnly", (5, 7, 9, 5, 0, 0, 0, 0, 0), "small"),
            ("BottomOnly", (5, 7, 9, 0, 5, 0, 0, 0, 0), "small"),
            ("Tall", (3, 2, 40, 2, 3, 1, 0, 0, 1), "small"),            # many tiles
            ("Wide", (16, 33, 4, 1, 1, 3, 2, 0, 0), "whole"),
            ("MaxLinePads", (2, 1, 3, 127, 127, 1, 0, 0, 0), "small")]     # the v4s lanes' largest pads
    return out


LAYERS = _layers()
SHAPES = {name: args for name, args, _ in LAYERS}


@pytest.fixture(scope="module", params=[8, 3], ids=["8cores", "3cores"])
def fixed(request, tmp_path_factory):
    """The layers, built for GAP8's 8 cores and for 3 (shares of lines that do not divide evenly)."""
    def declare():
        for name, args, budget in LAYERS:
            if budget in ("small", "mid"):
                declare_small(name, *args, start=64 if budget == "small" else 1024)
            else:
                SetL1MemorySize(100_000)
                assert CNN_Pad_SQ8(name, ctrl4(), *args)
    return build(tmp_path_factory.mktemp("sq8_pad_fixed"), declare, request.param)


def _reference(name: str, x: np.ndarray, q: R.QParams) -> np.ndarray:
    _, _, _, top, bottom, left, right, front, back = SHAPES[name]
    return P.pad(x, [(top, bottom), (left, right), (front, back)], q)


def _input(name: str, seed: int) -> np.ndarray:
    f, w, h = SHAPES[name][:3]
    return np.random.default_rng(seed).integers(-128, 128, size=(h, w, f)).astype(np.int8)


def test_small_budgets_tile(fixed):
    """The small budgets cut the layers into several tiles (the padded first and last ones, and
    lines between)."""
    assert tiles(fixed, "Tall") >= 4
    assert sum(tiles(fixed, n) > 1 for n, _, b in LAYERS if b == "small") >= 10


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_layer_extremes(fixed, name):
    """Every layer once with the extreme zero points and data."""
    for zp, fill in ((-128, 127), (127, -128), (0, -1)):
        q = R.QParams(0.05, zp)
        x = np.full(_input(name, 0).shape, fill, np.int8)
        call(fixed, name, _reference(name, x, q), x, P.pad_infos(q))


@settings(**SWEEP)
@given(name=st.sampled_from(sorted(SHAPES)), zp=st.integers(-128, 127), scale=st.floats(1e-3, 0.5),
       seed=st.integers(0, 2**16))
def test_layer_equals_reference(fixed, name, zp, scale, seed):
    q = R.QParams(R.f32(scale), zp)
    x = _input(name, seed)
    call(fixed, name, _reference(name, x, q), x, P.pad_infos(q))


@settings(**SWEEP)
@given(zp=st.integers(-128, 127), value=st.integers(-128, 127), seed=st.integers(0, 2**16))
def test_padv2_constant(fixed, zp, value, seed):
    """PADV2: the Infos' OUT_ZP word is the constant; the reference pads with it."""
    q = R.QParams(0.02, zp)
    x = _input("Rand0", seed)
    want_v2 = P.pad(x, [SHAPES["Rand0"][3:5], SHAPES["Rand0"][5:7], SHAPES["Rand0"][7:9]], q, value=value)
    call(fixed, "Rand0", want_v2, x, P.pad_infos(q, value=value))


def test_pad_infos_words():
    words = read_tflm_infos(P.pad_infos(R.QParams(0.1, -37)))
    assert (words["in_zp"], words["out_zp"]) == (-37, -37)
    assert read_tflm_infos(P.pad_infos(R.QParams(0.1, -37), value=5))["out_zp"] == 5


# ---------------------------------------------------------------------------------------------
# Errors


def raises(kernel: str, *fragments: str):
    """pytest.raises(ModelError) rendered as 'THIS:LINE: kernel 'L': ...fragments...', LINE the
    first line of the with body."""
    return rendered(ModelError, THIS, with_body_line(), fragments, kernel)


@pytest.fixture
def model():
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        LoadCNN_SQ8_Library()
        yield m


def test_errors(model):
    with raises("L", "CNN_Pad_SQ8: PadTop must be at least 0, got -1", "a pad is a count of items added"):
        CNN_Pad_SQ8("L", ctrl4(), 4, 4, 4, -1, 0, 0, 0)
    with raises("L", "CNN_Pad_SQ8: PadBack must be at least 0, got -2"):
        CNN_Pad_SQ8("L", ctrl4(), 4, 4, 4, 0, 0, 0, 0, 1, -2)
    with raises("L", "CNN_Pad_SQ8: PadRight must be an integer, got 1.5"):
        CNN_Pad_SQ8("L", ctrl4(), 4, 4, 4, 0, 0, 0, 1.5)
    with raises("L", "CNN_Pad_SQ8: Feat must be at least 1, got 0"):
        CNN_Pad_SQ8("L", ctrl4(), 0, 4, 4, 1, 1, 1, 1)
    with raises("L", "CNN_Pad_SQ8: Height must be at least 1, got 0"):
        CNN_Pad_SQ8("L", ctrl4(), 4, 4, 0, 1, 1, 1, 1)
    with raises("L", "CNN_Pad_SQ8: Width must be at most 65535, got 70000"):
        CNN_Pad_SQ8("L", ctrl4(), 1, 70000, 1, 0, 0, 0, 0)
    with raises("L", "CNN_Pad_SQ8: PadBottom 128 is more than the kernel's 127", "pad in two layers"):
        CNN_Pad_SQ8("L", ctrl4(), 4, 4, 4, 0, 128, 0, 0)
    with raises("L", "CNN_Pad_SQ8: PadLeft 70000 is more than the kernel's 65535 (an unsigned short field)"):
        CNN_Pad_SQ8("L", ctrl4(), 4, 4, 4, 0, 0, 70000, 0)
    with raises("L", "CNN_Pad_SQ8: the output has 65536 columns, more than the kernel's 65535"):
        CNN_Pad_SQ8("L", ctrl4(), 1, 65535, 1, 0, 0, 1, 0)
    with raises("L", "CNN_Pad_SQ8: the output has 65537 channels, more than the kernel's 65535"):
        CNN_Pad_SQ8("L", ctrl4(), 65535, 1, 1, 0, 0, 0, 0, 1, 1)
    with raises("L", "CNN_Pad_SQ8: TileOrientation TILE_VER is not supported yet with HWC feature maps"):
        CNN_Pad_SQ8("L", ctrl4(TILEORIENTATION=1), 4, 4, 4, 1, 1, 1, 1)
    with raises("L", "CNN_Pad_SQ8: PadType is not read by CNN_Pad_SQ8", "leave PadType unset"):
        CNN_Pad_SQ8("L", ctrl4(PADTYPE=1), 4, 4, 4, 1, 1, 1, 1)
    with raises("L", "CNN_Pad_SQ8: ReluN is not read by CNN_Pad_SQ8", "leave ReluN unset"):
        CNN_Pad_SQ8("L", ctrl4(RELUN=6), 4, 4, 4, 1, 1, 1, 1)
    with raises("L", "CNN_Pad_SQ8: CNN_Pad_SQ8 with the original's requantisation (Scale_DataSize 1, CHW feature "
                "maps) is not supported yet", "set the Ctrl field SCALE_DATASIZE to 4"):
        CNN_Pad_SQ8("L", 0, 4, 4, 4, 1, 1, 1, 1)
    with raises("1L", "CNN_Pad_SQ8: the kernel name must be a C identifier, got '1L'"):
        CNN_Pad_SQ8("1L", ctrl4(), 4, 4, 4, 1, 1, 1, 1)


def test_kernel_not_declared():
    with Model(PLATFORM):
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        with raises("L", "CNN_Pad_SQ8: basic kernel 'KerParPad_TFLM_SQ8' is not declared",
                    "call LoadCNN_SQ8_Library()"):
            CNN_Pad_SQ8("L", ctrl4(), 4, 4, 4, 1, 1, 1, 1)


def test_no_solution(model):
    """A budget below a whole padded first tile (PadTop + 1 lines) and its input line: 0 with
    AT_KERNEL_NOSOLUTION_ERROR off, nothing declared."""
    SetL1MemorySize(200)
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
    assert CNN_Pad_SQ8("L", ctrl4(), 8, 8, 4, 5, 0, 0, 0) == 0
    assert "L" not in model.tilings


def test_reference_errors():
    q = R.QParams(0.1, 3)
    with pytest.raises(ModelError, match=re.escape("pad: negative paddings")):
        P.pad(np.zeros((2, 2), np.int8), [(0, -1), (0, 0)], q)
    with pytest.raises(ModelError, match=re.escape("pad: 1 (before, after) pairs for a tensor of rank 2")):
        P.pad(np.zeros((2, 2), np.int8), [(0, 1)], q)
    with pytest.raises(ModelError, match=re.escape("pad_infos: the padded value 200 is not an int8")):
        P.pad_infos(q, value=200)
