"""The SQ8 generators of autotiler/generators/sq8_gen_tflm_ops.py with TFLM's requantisation
(Scale_DataSize 4 through the Ctrl field SCALE_DATASIZE): activations, global pooling, softmax,
concatenation, permutations, generated, built and run on the simulated cluster.

* every committed single-operator model of tests/models/sq8 these generators cover becomes one
  layer, tiled for the smallest L1 budget (from 256 bytes) that fits, and its output must equal
  the tflite-micro interpreter's bit for bit on random inputs, all -128, all 127;
* fixed-shape layers (tiled small) run hypothesis draws of quantisations and data against the
  numpy reference autotiler/generators/sq8_tflm.py: the Infos is a run-time argument, so one
  build serves every draw;
* outputs are pre-filled with a sentinel that must survive past the written items;
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
from autotiler.constants import KernelOper_T
from autotiler.errors import ModelError
from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_gen_tflm_ops as G
from autotiler.generators import sq8_tflm as R
from autotiler.generators.cnn_ctrl import CNN_GenControl_T, CNN_InitGenCtrl, CNN_SetGenCtrl
from autotiler.generators.sq8_generators import (
    CNN_3DTensorPermute,
    CNN_Act_SQ8,
    CNN_ConcatChannels_SQ8,
    CNN_GlobalPoolAct_SQ8,
    CNN_MatTranspose,
    CNN_SoftMax_SQ8,
)
from autotiler.generators.sq8_library import CNN_SQ8_HEADER, CNN_SQ8_SOURCES, LoadCNN_SQ8_Library
from autotiler.platforms import get_platform

from .error_lines import rendered, with_body_line

pytestmark = pytest.mark.usefixtures("private_harness_cache")
THIS = "test_sq8_gen_tflm_ops.py"
PLATFORM = get_platform("gap8", l1_size=256 * 1024, l2_size=4 * 1024 * 1024)
MODELS = Path(__file__).resolve().parent / "models" / "sq8"
SENTINEL = -99
SWEEP = dict(deadline=None, derandomize=True, database=None, max_examples=20,
             suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
ACT_OPS = {"QUANTIZE": KOP_ACT_NONE, "RELU": KOP_RELU, "RELU6": KOP_RELUN, "LOGISTIC": KOP_SIGMOID,
           "TANH": KOP_TANH, "HARD_SWISH": KOP_HSWISH, "LEAKY_RELU": KOP_LEAKYRELU}
MODEL_OPS = set(ACT_OPS) | {"SOFTMAX", "MEAN", "SUM", "REDUCE_MAX", "CONCATENATION", "TRANSPOSE"}
GLOBAL_POOLS = {"MEAN": KOP_GLOBAL_AVGPOOL, "SUM": KOP_GLOBAL_SUMPOOL, "REDUCE_MAX": KOP_GLOBAL_MAXPOOL}
PERMS = {KOP_MATPERM_CHW2CWH: (0, 2, 1), KOP_MATPERM_CHW2HWC: (1, 2, 0), KOP_MATPERM_CHW2WHC: (2, 1, 0),
         KOP_MATPERM_CHW2WCH: (2, 0, 1), KOP_MATPERM_CHW2HCW: (1, 0, 2), KOP_MATPERM_HWC2HCW: (0, 2, 1),
         KOP_MATPERM_HWC2WCH: (1, 2, 0), KOP_MATPERM_HWC2WHC: (1, 0, 2), KOP_MATPERM_HWC2CHW: (2, 0, 1),
         KOP_MATPERM_HWC2CWH: (2, 1, 0)}


def ctrl4(**fields):
    """A CNN_GenControl_T selecting TFLM's requantisation, with more fields set."""
    c = CNN_GenControl_T()
    CNN_InitGenCtrl(c)
    CNN_SetGenCtrl(c, "SCALE_DATASIZE", 4)
    for k, v in fields.items():
        CNN_SetGenCtrl(c, k, v)
    return c


def softmax_2d(name, Dim, N):
    """CNN_SoftMax2D_SQ8 with TFLM's requantisation."""
    return CNN_SoftMax2D_SQ8(name, ctrl4(), Dim, N, KOP_SOFTMAX)


def declare_small(gen, *args) -> int:
    """Declare with the smallest L1 budget from 256 bytes on that fits (doubling): returns it."""
    budget = 256
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
    while True:
        SetL1MemorySize(budget)
        if gen(*args):
            break
        assert budget < PLATFORM.l1_size, f"{args[0]}: nothing fits"
        budget *= 2
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_ON)
    return budget


def build(out_dir, declare, cores: int = 8) -> tuple:
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        SetGeneratedFilesNames("Sq8Ops.c", "Sq8Ops.h")
        LoadCNN_SQ8_Library()
        declare()
        tilings = dict(m.tilings)
        files = generate(m)
    write_files(files, str(out_dir))
    prog = host_harness.build(out_dir, sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM,
                              cores=cores)
    return prog, tilings if cores == 8 else {}     # the predictions are for GAP8's 8 cores


def call(prog, tilings, name: str, expected: np.ndarray, **args) -> np.ndarray:
    """Run kernel ``name`` with a sentinel-filled output (the simulator faults on writes outside
    it): the output equals expected, the cycles are the predicted ones."""
    exp = np.asarray(expected, dtype=np.int8).reshape(-1)
    out = np.full(exp.size, SENTINEL, dtype=exp.dtype)
    counters = prog.call(name, Out=out, **{k: np.ascontiguousarray(v).reshape(-1) for k, v in args.items()})
    bad = np.flatnonzero(out != exp)
    assert bad.size == 0, (f"{name}: {bad.size}/{exp.size} differ, first at {bad[:4].tolist()}: "
                           f"got {out[bad[:4]].tolist()} want {exp[bad[:4]].tolist()}")
    if name in tilings:
        assert counters["cycles"] == tilings[name].predicted.cycles, name
    return out


# ---------------------------------------------------------------------------------------------
# The committed models against tflite-micro

def _sidecars() -> list:
    out = []
    for p in sorted(MODELS.glob("*.json")):
        side = json.loads(p.read_text())
        if side["op"] in MODEL_OPS and not side["name"].endswith("_prepare"):
            out.append(side)
    return out


SIDES = _sidecars()


def _q(t: dict) -> R.QParams:
    return R.QParams(t["scales"][0], t["zero_points"][0])


def _hwc(shape) -> tuple:
    """(Feat, Width, Height) of an NHWC shape (or of a flat one)."""
    if len(shape) == 4 and shape[0] == 1:
        return shape[3], shape[2], shape[1]
    return int(np.prod(shape)), 1, 1


def _kname(side) -> str:
    return "M_" + re.sub(r"\W", "_", side["name"])


def declare_model(side: dict) -> None:
    op, ins, name = side["op"], side["inputs"], _kname(side)
    if op in ACT_OPS:
        declare_small(CNN_Act_SQ8, name, ctrl4(), *_hwc(ins[0]["shape"]), ACT_OPS[op])
    elif op in GLOBAL_POOLS:
        _, h, w, c = ins[0]["shape"]
        declare_small(CNN_GlobalPoolAct_SQ8, name, ctrl4(), c, w, h, GLOBAL_POOLS[op], KOP_NONE)
    elif op == "SOFTMAX":
        shape = ins[0]["shape"]
        declare_small(softmax_2d, name, shape[-1], int(np.prod(shape[:-1])))
    elif op == "CONCATENATION":
        _, h, w, _ = ins[0]["shape"]
        declare_small(CNN_ConcatChannels_SQ8, name, ctrl4(), w, h, [t["shape"][3] for t in ins])
    elif op == "TRANSPOSE":
        _, h, w, c = ins[0]["shape"]
        declare_small(CNN_3DTensorPermute, name, 0, 1, c, w, h, transpose_oper(ins[1]["data"]))


def transpose_oper(perm) -> KernelOper_T:
    """The KOP_MATPERM_HWC2* of TFLite's TRANSPOSE of an NHWC tensor by ``perm`` (batch kept)."""
    assert perm[0] == 0
    return KernelOper_T["KOP_MATPERM_HWC2" + "".join("HWC"[p - 1] for p in perm[1:])]


def model_infos(side: dict) -> np.ndarray:
    op, o, ins = side["op"], side["options"], side["inputs"]
    iq, oq = _q(ins[0]), _q(side["outputs"][0])
    if op in ACT_OPS:
        return G.act_infos(op, iq, oq, **({"alpha": o["alpha"]} if op == "LEAKY_RELU" else {}))
    if op == "MEAN":
        return G.mean_infos(iq, oq, ins[0]["shape"][1] * ins[0]["shape"][2])
    if op == "SUM":
        return G.sum_infos(iq, oq)
    if op == "REDUCE_MAX":
        return G.max_infos(iq, oq)
    if op == "SOFTMAX":
        return G.softmax_infos(iq, o["beta"])
    if op == "CONCATENATION":
        return G.concat_infos([_q(t) for t in ins], oq)
    return None


def model_draws(side: dict):
    shapes = [side["inputs"][side["op_inputs"].index(g)]["shape"] for g in side["graph_inputs"]]
    for seed in range(4):
        rng = np.random.default_rng(seed)
        yield [rng.integers(-128, 128, size=s, dtype=np.int16).astype(np.int8) for s in shapes]
    yield [np.full(s, -128, np.int8) for s in shapes]
    yield [np.full(s, 127, np.int8) for s in shapes]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    def declare():
        for side in SIDES:
            declare_model(side)
    return build(tmp_path_factory.mktemp("sq8_ops_models"), declare)


@pytest.mark.parametrize("side", SIDES, ids=[s["name"] for s in SIDES])
def test_model_equals_tflm(models, side):
    runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")
    prog, tilings = models
    interp = runtime.Interpreter.from_file(str(MODELS / (side["name"] + ".tflite")), arena_size=1 << 20)
    infos = model_infos(side)
    for xs in model_draws(side):
        for i, x in enumerate(xs):
            interp.set_input(x, i)
        interp.invoke()
        want = interp.get_output(0)
        # the kernel's In<k> is the operator's input k (the converter may order them unlike the graph's)
        ops = [xs[side["graph_inputs"].index(t)] for t in side["op_inputs"] if t in side["graph_inputs"]]
        args = {f"In{k}" if len(ops) > 1 else "In": x for k, x in enumerate(ops)}
        if infos is not None:
            args["Infos"] = infos
        call(prog, tilings, _kname(side), want, **args)


def test_models_cover_every_operator():
    assert {s["op"] for s in SIDES} == MODEL_OPS


# ---------------------------------------------------------------------------------------------
# Fixed shapes, hypothesis over quantisations and data, against sq8_tflm

ACT_SHAPE = (3, 5, 7)            # Feat, Width, Height
POOL_SHAPE = (13, 4, 3)
SOFT = (37, 3)                   # Dim, N
CONCAT = (3, 2, [2, 5, 1])       # Width, Height, InFeats
PERM = (6, 7, 5)                 # InFeat, Width, Height


@pytest.fixture(scope="module", params=[8, 3], ids=["8cores", "3cores"])
def fixed(request, tmp_path_factory):
    """The fixed layers built for GAP8's 8 cores and for 3 (shares that do not divide evenly)."""
    def declare():
        for kind, oper in ACT_OPS.items():
            declare_small(CNN_Act_SQ8, f"Act_{kind}", ctrl4(), *ACT_SHAPE, oper)
        SetL1MemorySize(100_000)
        CNN_Act_SQ8("Act_Whole", ctrl4(), *ACT_SHAPE, KOP_SIGMOID)
        declare_small(CNN_GlobalPoolAct_SQ8, "Mean", ctrl4(), *POOL_SHAPE, KOP_GLOBAL_AVGPOOL, KOP_RELU)
        declare_small(CNN_GlobalPoolAct_SQ8, "Max", ctrl4(), *POOL_SHAPE, KOP_GLOBAL_MAXPOOL, KOP_RELUN)
        declare_small(CNN_GlobalPoolAct_SQ8, "Sum", ctrl4(), *POOL_SHAPE, KOP_GLOBAL_SUMPOOL, KOP_NONE)
        declare_small(softmax_2d, "Soft2D", *SOFT)
        declare_small(CNN_SoftMax_SQ8, "Soft1D", ctrl4(), SOFT[0], KOP_SOFTMAX)
        declare_small(softmax_2d, "Soft600", 600, 2)
        declare_small(CNN_ConcatChannels_SQ8, "Concat", ctrl4(), *CONCAT)
        for oper in PERMS:
            for size in (1, 2, 4):
                declare_small(CNN_3DTensorPermute, f"Perm_{oper.name}_{size}", 0, size, *PERM, oper)
        declare_small(CNN_MatTranspose, "Transp", 0, 2, *PERM, KOP_MATTRANSP)
    return build(tmp_path_factory.mktemp("sq8_ops_fixed"), declare, request.param)


SCALES = st.floats(1e-3, 0.5).map(R.f32)
ZPS = st.integers(-128, 127)
QPARAMS = st.builds(R.QParams, SCALES, ZPS)


def _data(seed: int, shape) -> np.ndarray:
    return np.random.default_rng(seed).integers(-128, 128, size=shape).astype(np.int8)


def act_reference(kind: str, x, iq, oq, alpha: float):
    if kind == "LEAKY_RELU":
        return R.leaky_relu(x, iq, oq, alpha)
    return {"QUANTIZE": R.quantize, "RELU": R.relu, "RELU6": R.relu6, "LOGISTIC": R.logistic, "TANH": R.tanh,
            "HARD_SWISH": R.hard_swish}[kind](x, iq, oq)


@settings(**SWEEP)
@given(kind=st.sampled_from(sorted(ACT_OPS)), iq=QPARAMS, oq=QPARAMS, alpha=st.floats(0.01, 0.9),
       seed=st.integers(0, 2**16))
def test_act_equals_reference(fixed, kind, iq, oq, alpha, seed):
    prog, tilings = fixed
    if kind == "LOGISTIC":
        oq = R.QParams(1 / 256, -128)
    if kind == "TANH":
        oq = R.QParams(1 / 128, 0)
    if kind == "HARD_SWISH" and float(iq.scale) / 128 / float(oq.scale) >= 1:
        oq = R.QParams(float(iq.scale), oq.zero_point)
    f, w, h = ACT_SHAPE
    x = _data(seed, (1, h, w, f))
    infos = G.act_infos(kind, iq, oq, alpha=alpha)
    want = act_reference(kind, x, iq, oq, alpha)
    call(prog, tilings, f"Act_{kind}", want, In=x, Infos=infos)
    if kind == "LOGISTIC":
        call(prog, tilings, "Act_Whole", want, In=x, Infos=infos)


@settings(**SWEEP)
@given(iq=QPARAMS, oq=QPARAMS, seed=st.integers(0, 2**16))
def test_global_pool_equals_reference(fixed, iq, oq, seed):
    prog, tilings = fixed
    f, w, h = POOL_SHAPE
    x = _data(seed, (1, h, w, f))
    lo, hi = R.activation_range("RELU", oq)
    want = np.clip(R.mean_hw(x, iq, oq), lo, hi)
    call(prog, tilings, "Mean", want, In=x, Infos=G.mean_infos(iq, oq, w * h, "RELU"))
    lo, hi = R.activation_range("RELU6", iq)
    call(prog, tilings, "Max", np.clip(R.reduce_max_hw(x, iq, iq), lo, hi), In=x, Infos=G.max_infos(iq, iq, "RELU6"))
    call(prog, tilings, "Sum", R.sum_hw(x, iq, oq), In=x, Infos=G.sum_infos(iq, oq))


@settings(**SWEEP)
@given(iq=QPARAMS, beta=st.sampled_from([1.0, 0.5, 2.0]), spread=st.sampled_from([2, 16, 256]),
       seed=st.integers(0, 2**16))
def test_softmax_equals_reference(fixed, iq, beta, spread, seed):
    prog, tilings = fixed
    dim, n = SOFT
    rng = np.random.default_rng(seed)
    x = (rng.integers(0, spread, size=(n, dim)) + rng.integers(-128, 128 - spread + 1, size=(n, 1))).astype(np.int8)
    oq = R.QParams(1 / 256, -128)
    infos = G.softmax_infos(iq, beta)
    call(prog, tilings, "Soft2D", R.softmax(x, iq, oq, beta), In=x, Infos=infos)
    call(prog, tilings, "Soft1D", R.softmax(x[0], iq, oq, beta), In=x[0], Infos=infos)


def test_softmax_where_tflm_aborts(fixed):
    """512 or more items at the row's max put the reciprocal's exponent above 31: TFLM's reference aborts
    (sq8_tflm raises), ours gives the correctly rounded 0 (each probability < 1/512, below half of 1/256)."""
    prog, tilings = fixed
    iq = R.QParams(0.03, 5)
    x = np.full((2, 600), 7, dtype=np.int8)
    x[1, 550:] = -100
    with pytest.raises(ModelError, match="softmax reciprocal exponent outside"):
        R.softmax(x, iq, R.QParams(1 / 256, -128))
    call(prog, tilings, "Soft600", np.full(x.shape, -128), In=x, Infos=G.softmax_infos(iq))
    x[1, :] = np.arange(600) % 200 - 100                  # a row TFLM computes: ours equals it
    call(prog, tilings, "Soft600", np.concatenate([np.full(600, -128), R.softmax(x[1], iq, R.QParams(1 / 256, -128))]),
         In=x, Infos=G.softmax_infos(iq))


@settings(**SWEEP)
@given(qs=st.lists(QPARAMS, min_size=3, max_size=3), oq=QPARAMS, same=st.sampled_from([0, 1, 2, None]),
       seed=st.integers(0, 2**16))
def test_concat_equals_reference(fixed, qs, oq, same, seed):
    prog, tilings = fixed
    w, h, feats = CONCAT
    if same is not None:
        qs[same] = oq
    xs = [_data(seed + i, (1, h, w, f)) for i, f in enumerate(feats)]
    want = R.concatenation([R.quantize(x, q, oq) for x, q in zip(xs, qs)], [oq] * 3, oq)
    if same is not None:    # an input at the output's quantisation is copied as TFLM copies it
        assert (R.quantize(xs[same], oq, oq) == xs[same]).all()
    call(prog, tilings, "Concat", want, **{f"In{i}": x for i, x in enumerate(xs)},
         Infos=G.concat_infos(qs, oq))


# ---------------------------------------------------------------------------------------------
# Random shapes and L1 budgets: one batch of layers (drawn once, seeded), hypothesis over their data

BATCH = 16


def random_layers(seed: int = 23) -> list:
    """(kind, name, shape, budget) for BATCH layers: kinds act / mean / max / sum / softmax / concat, shapes
    1..40, budgets 'min' (the smallest from 256 B that fits), 600 B, 2 kB or the whole layer."""
    rng = np.random.default_rng(seed)
    kinds = ["act", "mean", "max", "sum", "softmax", "concat"]
    out = []
    for i in range(BATCH):
        kind = kinds[i % len(kinds)]
        f, w, h = (int(v) for v in rng.integers(1, 41, size=3))
        shape = {"act": (f, w, h, sorted(ACT_OPS)[int(rng.integers(len(ACT_OPS)))]), "softmax": (f, h),
                 "concat": (w % 9 + 1, h % 7 + 1, [int(v) for v in rng.integers(1, 20, size=int(rng.integers(2, 9)))])
                 }.get(kind, (f, w % 12 + 1, h % 12 + 1))
        out.append((kind, f"R{i}_{kind}", shape, ["min", 600, 2048, None][int(rng.integers(4))]))
    return out


LAYERS = random_layers()
POOLS = {"mean": KOP_GLOBAL_AVGPOOL, "max": KOP_GLOBAL_MAXPOOL, "sum": KOP_GLOBAL_SUMPOOL}


def declare_random(kind: str, name: str, shape, budget) -> None:
    gen, args = {"act": (CNN_Act_SQ8, (ctrl4(), *shape[:3], ACT_OPS[shape[-1]] if kind == "act" else 0)),
                 "softmax": (softmax_2d, shape),
                 "concat": (CNN_ConcatChannels_SQ8, (ctrl4(), *shape))}.get(
        kind, (CNN_GlobalPoolAct_SQ8, (ctrl4(), *shape, POOLS.get(kind), KOP_RELU)))
    if budget == "min":
        declare_small(gen, name, *args)
        return
    SetL1MemorySize(budget or PLATFORM.l1_size)
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
    if not gen(name, *args):    # too big for that budget: the smallest that fits instead
        declare_small(gen, name, *args)
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_ON)


@pytest.fixture(scope="module")
def randoms(tmp_path_factory):
    def declare():
        for layer in LAYERS:
            declare_random(*layer)
    return build(tmp_path_factory.mktemp("sq8_ops_random"), declare)


def run_random(prog, tilings, layer, iq, oq, seed: int, alpha: float) -> None:
    kind, name, shape, _ = layer
    if kind == "act":
        f, w, h, op = shape
        x = _data(seed, (1, h, w, f))
        oq = {"LOGISTIC": R.QParams(1 / 256, -128), "TANH": R.QParams(1 / 128, 0)}.get(op, oq)
        if op == "HARD_SWISH" and float(iq.scale) / 128 / float(oq.scale) >= 1:
            oq = R.QParams(float(iq.scale), oq.zero_point)
        call(prog, tilings, name, act_reference(op, x, iq, oq, alpha), In=x, Infos=G.act_infos(op, iq, oq, alpha=alpha))
    elif kind == "softmax":
        x = _data(seed, (shape[1], shape[0]))
        call(prog, tilings, name, R.softmax(x, iq, R.QParams(1 / 256, -128)), In=x, Infos=G.softmax_infos(iq))
    elif kind == "concat":
        w, h, feats = shape
        xs = [_data(seed + i, (1, h, w, f)) for i, f in enumerate(feats)]
        qs = [iq if i % 2 else oq for i in range(len(feats))]
        want = np.concatenate([R.quantize(x, q, oq) for x, q in zip(xs, qs)], axis=3)
        call(prog, tilings, name, want, **{f"In{i}": x for i, x in enumerate(xs)}, Infos=G.concat_infos(qs, oq))
    else:
        f, w, h = shape
        x = _data(seed, (1, h, w, f))
        if kind == "max":
            lo, hi = R.activation_range("RELU", iq)
            want, infos = np.clip(R.reduce_max_hw(x, iq, iq), lo, hi), G.max_infos(iq, iq, "RELU")
        else:
            lo, hi = R.activation_range("RELU", oq)
            ref, infos = ((R.mean_hw, G.mean_infos(iq, oq, w * h, "RELU")) if kind == "mean" else
                          (R.sum_hw, G.sum_infos(iq, oq, "RELU")))
            want = np.clip(ref(x, iq, oq), lo, hi)
        call(prog, tilings, name, want, In=x, Infos=infos)


@settings(**SWEEP)
@given(iq=QPARAMS, oq=QPARAMS, seed=st.integers(0, 2**16), alpha=st.floats(0.01, 0.9))
def test_random_layers_equal_reference(randoms, iq, oq, seed, alpha):
    prog, tilings = randoms
    for layer in LAYERS:
        run_random(prog, tilings, layer, iq, oq, seed, alpha)


DTYPES = {1: np.int8, 2: np.int16, 4: np.int32}


def test_permutations(fixed):
    prog, tilings = fixed
    c, w, h = PERM
    for oper, axes in PERMS.items():
        shape = (c, h, w) if oper.name.startswith("KOP_MATPERM_CHW") else (h, w, c)
        for size in (1, 2, 4):
            x = np.arange(c * w * h, dtype=DTYPES[size]).reshape(shape) * (1 if size == 1 else 997) - 50
            want = np.transpose(x, axes)
            out = np.full(x.size, SENTINEL, dtype=DTYPES[size])
            prog.call(f"Perm_{oper.name}_{size}", In=x.reshape(-1), Out=out)
            assert (out == want.reshape(-1)).all(), (oper.name, size)
    x = np.arange(c * w * h, dtype=np.int16).reshape(c, h, w)
    out = np.full(x.size, SENTINEL, dtype=np.int16)
    prog.call("Transp", In=x.reshape(-1), Out=out)
    assert (out == np.transpose(x, (0, 2, 1)).reshape(-1)).all()


# ---------------------------------------------------------------------------------------------
# Typed errors


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
    with raises("L", "CNN_Act_SQ8: ActOper KOP_HSIGMOID has no TensorFlow Lite int8 operator", "use KOP_ACT_NONE"):
        CNN_Act_SQ8("L", ctrl4(), 4, 4, 4, KOP_HSIGMOID)
    with raises("L", "CNN_Act_SQ8: ActOper KOP_MAXPOOL is not an activation with TensorFlow Lite's int8 arithmetic"):
        CNN_Act_SQ8("L", ctrl4(), 4, 4, 4, KOP_MAXPOOL)
    with raises("L", "CNN_GlobalPoolAct_SQ8: ActOper KOP_SIGMOID is not an activation a global pooling applies"):
        CNN_GlobalPoolAct_SQ8("L", ctrl4(), 4, 4, 4, KOP_GLOBAL_AVGPOOL, KOP_SIGMOID)
    with raises("L", "CNN_GlobalPoolAct_SQ8: PoolOper KOP_MAXPOOL is not a global pooling"):
        CNN_GlobalPoolAct_SQ8("L", ctrl4(), 4, 4, 4, KOP_MAXPOOL, KOP_NONE)
    with raises("L", "CNN_SoftMax_SQ8: SoftMaxOper KOP_RELU is not a softmax"):
        CNN_SoftMax_SQ8("L", ctrl4(), 10, KOP_RELU)
    with raises("L", "CNN_SoftMax_SQ8: Dim must be at most 65535"):
        CNN_SoftMax_SQ8("L", ctrl4(), 70000, KOP_SOFTMAX)
    with raises("L", "CNN_ConcatChannels_SQ8: InFeats must be a list of 2 to 8 feature counts"):
        CNN_ConcatChannels_SQ8("L", ctrl4(), 4, 4, [3])
    with raises("L", "CNN_ConcatChannels_SQ8: InFeats[1] must be at least 1"):
        CNN_ConcatChannels_SQ8("L", ctrl4(), 4, 4, [3, 0])
    with raises("L", "CNN_3DTensorPermute: Size 3 is not supported: items are 1, 2 or 4 bytes"):
        CNN_3DTensorPermute("L", 0, 3, 2, 2, 2, KOP_MATPERM_CHW2HWC)
    with raises("L", "CNN_3DTensorPermute: MatPermOper KOP_MATTRANSP is not a 3D permutation"):
        CNN_3DTensorPermute("L", 0, 1, 2, 2, 2, KOP_MATTRANSP)
    with raises("L", "CNN_MatTranspose: MatTranspOper KOP_MATPERM_CHW2HWC is not a transpose"):
        CNN_MatTranspose("L", 0, 1, 2, 2, 2, KOP_MATPERM_CHW2HWC)
    with raises("L", "CNN_3DTensorPermute: MatPermOper KOP_MATPERM_CHW2HWC permutes a CHW tensor but the Ctrl "
                "field HWC says HWC", "leave HWC unset"):
        CNN_3DTensorPermute("L", ctrl4(HWC=1), 1, 2, 2, 2, KOP_MATPERM_CHW2HWC)
    with raises("L", "CNN_Act_SQ8: KOP_RELUN with the Ctrl field RELUN 3 is not supported with Scale_DataSize 4"):
        CNN_Act_SQ8("L", ctrl4(RELUN=3), 4, 4, 4, KOP_RELUN)
    with raises("L", "CNN_GlobalPoolAct_SQ8: KOP_RELUN with the Ctrl field RELUN 2 is not supported"):
        CNN_GlobalPoolAct_SQ8("L", ctrl4(RELUN=2), 4, 4, 4, KOP_GLOBAL_MAXPOOL, KOP_RELUN)


def test_errors_library_not_loaded():
    with Model(PLATFORM):
        with raises("L", "CNN_Act_SQ8: basic kernel 'KerParActRequant_TFLM_SQ8' is not declared",
                    "call LoadCNN_SQ8_Library()"):
            CNN_Act_SQ8("L", ctrl4(), 4, 4, 4, KOP_RELU)


def test_infos_errors():
    q = R.QParams(0.1, 0)
    with pytest.raises(ModelError, match="act_infos: int8 LOGISTIC output zero point must be -128"):
        G.act_infos("LOGISTIC", q, q)
    with pytest.raises(ModelError, match="act_infos: LEAKY_RELU needs alpha="):
        G.act_infos("LEAKY_RELU", q, q)
    with pytest.raises(ModelError, match="act_infos: unknown operator 'SWISH'"):
        G.act_infos("SWISH", q, q)
    with pytest.raises(ModelError, match="max_infos: int8 REDUCE_MAX needs the output quantisation of its input"):
        G.max_infos(q, R.QParams(0.2, 0))
