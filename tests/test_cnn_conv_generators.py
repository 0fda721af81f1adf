"""The convolution/pooling CNN generators (autotiler/generators/cnn_conv.py) against the layer
reference (autotiler/generators/cnn_conv_reference.py), bit for bit on the simulated chip, their
typed errors, and the CNN_GenControl_T descriptor (cnn_ctrl.py).

Builds are few: every hypothesis example declares a *batch* of layers in one model (one build
for the batch), and the fixed layers (MNIST, tiling coverage, L3 homes, orientations, one-feature
kernels, the grouped convolution) share one build. Outputs are pre-filled with a sentinel; the
simulator faults on writes outside the arguments; the simulated cycles of every user kernel are
its predicted ones.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.generators import CNN_HEADER, CNN_KERNELS_DIR, CNN_SOURCES, LoadCNNLibrary
from autotiler.generators import cnn_conv_reference as REF
from autotiler.generators.cnn_conv import CNN_ConvolutionPoolReLU, CNN_GroupedConvolutionPoolReLU, CNN_PoolReLU
from autotiler.generators.cnn_ctrl import (
    CNN_GenControl_T,
    CNN_InitGenCtrl,
    CNN_SetGenCtrl,
    CNN_SetGenCtrlList,
    GenControl,
    gen_control,
)
from autotiler.generators.cnn_geometry import (
    CNN_EdgePaddingValue,
    CNN_LayerOutputDim,
    CNN_TileOverlap,
    CNN_TotalPaddingValue,
    CNN_UsedInputDimension,
)
from autotiler.platforms import get_platform

from .error_lines import rendered, with_body_line

pytestmark = pytest.mark.usefixtures("private_harness_cache")
THIS = "test_cnn_conv_generators.py"
# A GAP8 with room for layers that fit whole (budgets above the chip's L1 need this platform)
PLATFORM = get_platform("gap8", l1_size=256 * 1024, l2_size=4 * 1024 * 1024)
D0, D1, T0 = KER_ITER_D0, KER_ITER_D1, KER_ITER_TILE0
SENTINEL = {1: -99, 2: -12345}
DTYPE = {1: np.int8, 2: np.int16}
# derandomized; the first example of a batch strategy is its simplest (all 1x1 layers), the others vary
SWEEP = dict(deadline=None, derandomize=True, database=None,
             suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                    HealthCheck.data_too_large])
CONVS = (KOP_CONV, KOP_CONV_DP, KOP_CONV_DW, KOP_CONV_DWDP)
ACTS = (KOP_NONE, KOP_RELU, KOP_RELUN, KOP_LEAKYRELU, KOP_HSIGMOID, KOP_HSWISH, KOP_SIGMOID, KOP_TANH, KOP_SWISH)


# ---------------------------------------------------------------------------------------------
# Layers: declared in a model, run, compared


@dataclass
class Layer:
    """One generator call: kind 'conv', 'pool' or 'group', the generator's parameters (by their
    names, Name and Ctrl excepted), the CNN_GenControl_T fields, and the L1 budget ('min': the
    smallest power of two from 256 bytes on that fits, tiling as much as possible)."""

    name: str
    kind: str
    p: dict
    ctrl: dict = field(default_factory=dict)
    budget: object = 48000
    objective: str | None = None

    @property
    def size(self) -> int:
        return self.p["In_DataSize"]

    @property
    def dw(self) -> bool:
        return self.kind != "pool" and self.p["ConvOper"] in (KOP_CONV_DW, KOP_CONV_DWDP)


def conv_params(size=2, q=(12, 14, 14, 12), l3=(0, 0, 0, 0), feats=(1, 32), wh=(28, 28), conv=KOP_CONV_DP,
                cgeom=(5, 5, 1, 1, 1, 1, 0), pool=KOP_MAXPOOL, pgeom=(2, 2, 1, 1, 2, 2, 0), act=KOP_RELU) -> dict:
    """CNN_ConvolutionPoolReLU's parameters (the defaults: the MNIST first layer, in L2)."""
    names = ["In_DataSize", "Filter_DataSize", "Bias_DataSize", "Out_DataSize", "In_Q", "Filter_Q", "Bias_Q", "Out_Q",
             "In_InL3", "Filter_InL3", "Bias_InL3", "Out_InL3", "InFeat", "OutFeat", "Width", "Height", "ConvOper",
             "Fcx", "Fcy", "Dcx", "Dcy", "Scx", "Scy", "ConvPad", "PoolOper", "Fpx", "Fpy", "Dpx", "Dpy", "Spx", "Spy",
             "PoolPad", "ReLUOper"]
    return dict(zip(names, (size,) * 4 + tuple(q) + tuple(l3) + tuple(feats) + tuple(wh) + (conv,) + tuple(cgeom)
                    + (pool,) + tuple(pgeom) + (act,)))


def pool_params(size=2, q=10, l3=(0, 0), feat=4, wh=(16, 12), pool=KOP_MAXPOOL, pgeom=(2, 2, 1, 1, 2, 2, 0),
                act=KOP_NONE) -> dict:
    names = ["In_DataSize", "Out_DataSize", "In_Q", "Out_Q", "In_InL3", "Out_InL3", "InFeat", "OutFeat", "Width",
             "Height", "PoolOper", "Fpx", "Fpy", "Dpx", "Dpy", "Spx", "Spy", "PoolPad", "ReLUOper"]
    return dict(zip(names, (size, size, q, q) + tuple(l3) + (feat, feat) + tuple(wh) + (pool,) + tuple(pgeom)
                    + (act,)))


def make_ctrl(fields: dict):
    if not fields:
        return 0
    ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(ctrl)
    for k, v in fields.items():
        CNN_SetGenCtrl(ctrl, k, v)
    return ctrl


def declare(m, layer: Layer) -> None:
    gen = {"conv": CNN_ConvolutionPoolReLU, "pool": CNN_PoolReLU, "group": CNN_GroupedConvolutionPoolReLU}[layer.kind]
    if layer.objective:
        SetTilingObjective(layer.objective, layer.name)
    budget = 256 if layer.budget == "min" else layer.budget
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF if layer.budget == "min" else AT_OPT_ON)
    while True:
        SetL1MemorySize(min(budget, PLATFORM.l1_size))
        if gen(layer.name, make_ctrl(layer.ctrl), **layer.p):
            break
        assert budget < PLATFORM.l1_size, f"{layer.name}: no tiling fits {budget} B"
        budget *= 2
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_ON)


def build(out_dir, layers: list):
    """Every layer declared in one model, generated and built: (program, tilings)."""
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_HEADER)
        SetGeneratedFilesNames("CnnLayers.c", "CnnLayers.h")
        LoadCNNLibrary()
        for layer in layers:
            declare(m, layer)
        tilings = dict(m.tilings)
        files = generate(m)
    write_files(files, str(out_dir))
    prog = host_harness.build(out_dir, sources=CNN_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM)
    return prog, tilings


def values(rng, shape, size: int):
    """Values of a quarter of the container's range (results mostly unsaturated)."""
    lim = 1 << (8 * size - 3)
    return rng.integers(-lim, lim, size=shape).astype(DTYPE[size])


def reference_kwargs(layer: Layer) -> dict:
    c = layer.ctrl
    extra = dict(ReluN=6 if c.get("RELUN", -1) == -1 else c["RELUN"],
                 PadType=c.get("PADTYPE", -1) if c.get("PADTYPE", -1) != -1 else PAD_BALANCED_LEFT)
    if layer.kind == "pool":
        return extra
    return dict(extra, ForceDPconv=c.get("FORCEDPCONV", -1))


def run_layer(prog, tilings, layer: Layer, seed: int = 0):
    """Run the layer on random data: bit-exact with the reference; the predicted cycles of a
    user kernel are the simulated ones. Returns the counters."""
    rng = np.random.default_rng(seed)
    p, size = layer.p, layer.size
    ref = reference_kwargs(layer)
    In = values(rng, (p["InFeat"], p["Height"], p["Width"]), size)
    if layer.kind == "pool":
        args = dict(In=In)
        expected = REF.pool_layer(In, p["PoolOper"], p["Fpx"], p["Fpy"], p["Dpx"], p["Dpy"], p["Spx"], p["Spy"],
                                  p["PoolPad"], p["ReLUOper"], p["Out_Q"], **ref)
    else:
        if layer.dw:
            fshape = (p["OutFeat"], p["Fcy"], p["Fcx"])
        else:
            fshape = (p["OutFeat"], p.get("GroupIn", p["InFeat"]), p["Fcy"], p["Fcx"])
        args = dict(In=In, Filter=values(rng, fshape, size), Bias=values(rng, p["OutFeat"], size))
        keys = ("In_Q", "Filter_Q", "Bias_Q", "Out_Q", "ConvOper", "Fcx", "Fcy", "Dcx", "Dcy", "Scx", "Scy", "ConvPad",
                "PoolOper", "Fpx", "Fpy", "Dpx", "Dpy", "Spx", "Spy", "PoolPad", "ReLUOper")
        kw = dict({k: p[k] for k in keys}, **ref)
        if layer.kind == "group":
            expected = REF.grouped_conv_pool_relu(args["In"], args["Filter"], args["Bias"], p["GroupIn"], p["GroupOut"],
                                                  **kw)
        else:
            expected = REF.conv_pool_relu(args["In"], args["Filter"], args["Bias"], **kw)
    out = np.full(expected.shape, SENTINEL[size], dtype=DTYPE[size])
    counters = prog.call(layer.name, Out=out, **args)
    np.testing.assert_array_equal(out, expected, err_msg=f"{layer.name}: {layer}")
    if layer.name in tilings:
        assert counters["cycles"] == tilings[layer.name].predicted.cycles, layer.name
    return counters


# ---------------------------------------------------------------------------------------------
# Hypothesis sweeps: batches of random layers, one build per batch


def _fit(dim: int, f: int, s: int, d: int, pad: bool) -> int:
    """The smallest dimension >= dim with at least one output."""
    ext = d * (f - 1) + 1
    while (dim - ext + (CNN_TotalPaddingValue(dim, f, s, d) if pad else 0)) < 0:
        dim += 1
    return dim


@st.composite
def conv_layer(draw, index: int):
    size = draw(st.sampled_from([1, 2]))
    bits = 8 * size - 1
    conv = draw(st.sampled_from(CONVS))
    dp, dw = conv in (KOP_CONV_DP, KOP_CONV_DWDP), conv in (KOP_CONV_DW, KOP_CONV_DWDP)
    fx, fy = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    sx, sy = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dx, dy = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    cpad = draw(st.integers(0, 1))
    pool = draw(st.sampled_from([KOP_NONE, KOP_MAXPOOL, KOP_AVGPOOL]))
    pgeom = draw(st.sampled_from([(2, 2, 1, 1, 2, 2, 0), (3, 3, 1, 1, 2, 2, 1), (3, 2, 1, 1, 1, 2, 1)]))
    par = draw(st.sampled_from([1, 1, 1, 0]))
    acts = list(ACTS)
    if not dp:
        acts = [a for a in acts if a not in (KOP_SIGMOID, KOP_TANH, KOP_SWISH)]
        if pool != KOP_NONE or not par:
            acts = [KOP_NONE, KOP_RELU, KOP_RELUN]
    act = draw(st.sampled_from(acts))
    w = _fit(draw(st.integers(3, 20)), fx, sx, dx, cpad)
    h = _fit(draw(st.integers(3, 18)), fy, sy, dy, cpad)
    if pool != KOP_NONE:      # the pooling window must fit the convolution's output
        while True:
            wc, hc, *_ = CNN_LayerOutputDim(w, h, conv, fx, fy, dx, dy, sx, sy, cpad, KOP_NONE, 1, 1, 1, 1, 1, 1, 0)
            pw = CNN_TotalPaddingValue(wc, pgeom[0], pgeom[4], 1) if pgeom[6] else 0
            ph = CNN_TotalPaddingValue(hc, pgeom[1], pgeom[5], 1) if pgeom[6] else 0
            if wc + pw >= pgeom[0] and hc + ph >= pgeom[1]:
                break
            w, h = w + sx, h + sy
    nin = draw(st.integers(1, 6))
    nout = nin if dw else draw(st.integers(1, 10))
    # Q formats: outputs around a quarter of the range (Norm from the number of products summed)
    in_q, f_q = bits - 2, bits - 1
    norm = max(0, bits - 3 + int(0.5 * math.log2(fx * fy * (1 if dw else nin))) + draw(st.integers(-2, 2)))
    out_q = in_q + f_q - norm
    if act in (KOP_SIGMOID, KOP_TANH):
        out_q = bits
    relun = draw(st.sampled_from([-1, 1, 2]))
    if act == KOP_RELUN:
        out_q = min(out_q, bits - 3)
    out_q = max(0, min(out_q, bits))
    ctrl = {"PARALLELFEATURES": par, "TILEORIENTATION": draw(st.sampled_from([TILE_HOR, TILE_HOR, TILE_VER])),
            "PADTYPE": draw(st.sampled_from([-1, PAD_LEFT, PAD_RIGHT, PAD_BALANCED_LEFT, PAD_BALANCED_RIGHT])),
            "RELUN": relun}
    l3 = tuple(draw(st.sampled_from([0, 0, 0, 1])) for _ in range(4))
    budget = draw(st.sampled_from(["min", "min", 2000, 6000, 200_000]))
    p = conv_params(size, (in_q, f_q, out_q, out_q), l3, (nin, nout), (w, h), conv, (fx, fy, dx, dy, sx, sy, cpad),
                    pool, pgeom, act)
    return Layer(f"Conv{index}", "conv", p, ctrl, budget)


@st.composite
def pool_layer(draw, index: int):
    size = draw(st.sampled_from([1, 2]))
    pool = draw(st.sampled_from([KOP_NONE, KOP_MAXPOOL, KOP_AVGPOOL]))
    par = draw(st.sampled_from([1, 1, 0]))
    if pool == KOP_NONE:
        act = draw(st.sampled_from([KOP_RELU, KOP_RELUN] + ([KOP_HSIGMOID, KOP_HSWISH, KOP_LEAKYRELU] if par else [])))
        pgeom = (1, 1, 1, 1, 1, 1, 0)
    else:
        act = draw(st.sampled_from([KOP_NONE, KOP_RELU, KOP_RELUN]))
        fx, fy = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        pgeom = (fx, fy, draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 3)),
                 draw(st.integers(1, 3)), draw(st.integers(0, 1)))
    w = _fit(draw(st.integers(2, 24)), pgeom[0], pgeom[4], pgeom[2], pgeom[6])
    h = _fit(draw(st.integers(2, 20)), pgeom[1], pgeom[5], pgeom[3], pgeom[6])
    q = draw(st.integers(0, 8 * size - 4))
    ctrl = {"PARALLELFEATURES": par, "TILEORIENTATION": draw(st.sampled_from([TILE_HOR, TILE_VER])),
            "PADTYPE": draw(st.sampled_from([PAD_LEFT, PAD_RIGHT, PAD_BALANCED_LEFT, PAD_BALANCED_RIGHT])),
            "RELUN": draw(st.sampled_from([1, 2]))}
    l3 = (draw(st.sampled_from([0, 0, 1])), draw(st.sampled_from([0, 0, 1])))
    return Layer(f"Pool{index}", "pool", pool_params(size, q, l3, draw(st.integers(1, 12)), (w, h), pool, pgeom, act),
                 ctrl, draw(st.sampled_from(["min", 1500, 100_000])))


def batches(layer, n: int):
    return st.tuples(*[layer(i) for i in range(n)])


@settings(max_examples=8, **SWEEP)
@given(layers=batches(conv_layer, 12))
def test_conv_sweep_bit_exact(tmp_path_factory, layers):
    """Random convolution layers (filters 1..7 each way, strides 1..3, dilations 1..2, padding on
    or off with every PadType, no/max/average pooling 2x2/2, 3x3/2 and 3x2/1x2 padded, every
    activation, depth wise, fp and fps, feature-parallel or one-feature kernels, both
    orientations, L3 homes, budgets from the smallest that fits to everything in L1)."""
    prog, tilings = build(tmp_path_factory.mktemp("conv_sweep"), list(layers))
    for i, layer in enumerate(layers):
        run_layer(prog, tilings, layer, seed=i)


@settings(max_examples=6, **SWEEP)
@given(layers=batches(pool_layer, 8))
def test_pool_sweep_bit_exact(tmp_path_factory, layers):
    """Random CNN_PoolReLU layers: max/average windows 1..4, strides 1..3, dilations 1..2, padding
    with every PadType, with ReLU/ReLUN, or an activation alone."""
    prog, tilings = build(tmp_path_factory.mktemp("pool_sweep"), list(layers))
    for i, layer in enumerate(layers):
        run_layer(prog, tilings, layer, seed=i)


# ---------------------------------------------------------------------------------------------
# Fixed layers, one build

MNIST0 = Layer("Conv5x5ReLUMaxPool2x2_0", "conv", conv_params(l3=(1, 1, 1, 1)))
MNIST1 = Layer("Conv5x5ReLUMaxPool2x2_1", "conv", conv_params(l3=(1, 1, 1, 1), feats=(32, 64), wh=(12, 12)))
FIXED = [
    MNIST0, MNIST1,
    # the MNIST layers with the original's objective (largest tiles), arguments in L2
    Layer("Mnist0Orig", "conv", conv_params(), objective="original"),
    Layer("Mnist1Orig", "conv", conv_params(feats=(32, 64), wh=(12, 12)), objective="original"),
    # every space cut: 3x3 "same" DP conv with ReLU, 16 -> 24 features, 20x18, 3000 B
    Layer("TiledAll", "conv", conv_params(q=(11, 8, 12, 12), feats=(16, 24), wh=(20, 18), cgeom=(3, 3, 1, 1, 1, 1, 1),
                                          pool=KOP_NONE), budget=3000),
    # the same with every argument in L3
    Layer("TiledAllL3", "conv", conv_params(q=(11, 8, 12, 12), l3=(1, 1, 1, 1), feats=(16, 24), wh=(20, 18),
                                            cgeom=(3, 3, 1, 1, 1, 1, 1), pool=KOP_NONE), budget=3000),
    # single precision, pooling 3x3/2 padded, tiles along T0 and D1 chunks, fps
    Layer("SpPoolTiled", "conv", conv_params(1, (5, 6, 5, 5), feats=(6, 20), wh=(23, 21), conv=KOP_CONV,
                                             cgeom=(3, 3, 1, 1, 1, 1, 1), pool=KOP_AVGPOOL,
                                             pgeom=(3, 3, 1, 1, 2, 2, 1), act=KOP_RELUN), {"RELUN": 2}, budget=1500),
    # depth wise DP, stride 2, hswish, D0 chunks and T0 tiles
    Layer("DwTiled", "conv", conv_params(2, (12, 13, 12, 12), feats=(20, 20), wh=(25, 19), conv=KOP_CONV_DWDP,
                                         cgeom=(3, 3, 1, 1, 2, 2, 1), pool=KOP_NONE, act=KOP_HSWISH), budget=1200),
    # vertical tiles, dilation 2, non-square filter and strides
    Layer("Vertical", "conv", conv_params(2, (12, 14, 13, 13), feats=(5, 7), wh=(26, 15), conv=KOP_CONV_DP,
                                          cgeom=(5, 3, 2, 1, 2, 1, 1), pool=KOP_MAXPOOL, pgeom=(2, 2, 1, 1, 2, 2, 0),
                                          act=KOP_LEAKYRELU), {"TILEORIENTATION": TILE_VER}, budget=2500),
    # one-feature kernels (ParallelFeatures 0), single precision, ReLU
    Layer("OneFeature", "conv", conv_params(2, (12, 14, 12, 13), feats=(3, 4), wh=(17, 13), conv=KOP_CONV,
                                            cgeom=(3, 5, 1, 1, 1, 2, 1), pool=KOP_NONE, act=KOP_RELU),
          {"PARALLELFEATURES": 0}, budget=800),
    # ForceDPconv turns KOP_CONV_DW into KOP_CONV_DWDP (sigmoid is a DP activation)
    Layer("ForcedDp", "conv", conv_params(2, (13, 14, 12, 15), feats=(6, 6), wh=(12, 10), conv=KOP_CONV_DW,
                                          cgeom=(3, 3, 1, 1, 1, 1, 1), pool=KOP_NONE, act=KOP_SIGMOID),
          {"FORCEDPCONV": 1}),
    # pooling alone, 3x3/2 padded, tiled, L3 homes
    Layer("PoolTiled", "pool", pool_params(2, 11, (1, 1), 9, (31, 27), KOP_MAXPOOL, (3, 3, 1, 1, 2, 2, 1), KOP_RELU),
          budget=1000),
]
# a grouped convolution: 12 -> 8 features in 4 groups of 3 -> 2, 3x3 "same", 2x2 max pooling
GROUPED = Layer("Grouped", "group", dict(GroupIn=3, GroupOut=2, **conv_params(
    2, (12, 14, 13, 12), feats=(12, 8), wh=(14, 12), conv=KOP_CONV_DP, cgeom=(3, 3, 1, 1, 1, 1, 1))), budget=3000)
GROUPED_DW = Layer("GroupedDw", "group", dict(GroupIn=4, GroupOut=4, **conv_params(
    1, (5, 6, 6, 6), feats=(8, 8), wh=(10, 9), conv=KOP_CONV_DW, cgeom=(3, 3, 1, 1, 1, 1, 1), pool=KOP_NONE,
    act=KOP_RELU)), budget=1000)


# a grouped convolution homed in L3, single precision, 2 groups of 4 -> 4, 5x3 filters, stride 2
GROUPED_L3 = Layer("GroupedL3", "group", dict(GroupIn=4, GroupOut=4, **conv_params(
    2, (11, 13, 12, 12), (1, 1, 1, 1), feats=(8, 8), wh=(19, 13), conv=KOP_CONV, cgeom=(5, 3, 1, 1, 2, 2, 1),
    pool=KOP_NONE, act=KOP_RELU)), budget=2000)
GROUPS = [GROUPED, GROUPED_DW, GROUPED_L3]


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    return build(tmp_path_factory.mktemp("fixed"), FIXED + GROUPS)


@pytest.mark.parametrize("layer", FIXED + GROUPS, ids=lambda x: x.name)
def test_fixed_layers_bit_exact(fixed, layer):
    run_layer(*fixed, layer, seed=7)


def test_mnist_layers(fixed):
    """The guide's MNIST layers (L1 48000, arguments in L3 as their calls say): the original's
    spaces ([D1][Tile0][D0]) and kernels; L1 and predicted cycles as reported. With the original's
    objective the first layer takes the original's 41632 B in 3 tiles of 14 input lines (its
    committed code: 3 tiles, 28x14 input tiles)."""
    _, tilings = fixed
    t0, t1 = tilings[MNIST0.name], tilings[MNIST1.name]
    for t in (t0, t1):
        assert [s.space for s in t.kernel.space.spaces] == [D1, T0, D0]
        assert t.l1_bytes <= 48000 and all(t.arg(a).l3 for a in ("In", "Filter", "Bias", "Out"))
    calls = [c.name for c in t0.kernel.calls]
    assert calls == ["KerParSetBias_DP_fp", "KerParConv5x5Stride1_DP_fp", "KerDP_IO_fp", "KerParPool2x2Stride2_fp"]
    assert (t0.l1_bytes, t0.predicted.cycles) == (25440, 128624)
    assert (t1.l1_bytes, t1.predicted.cycles) == (13728, 1173730)
    o0, o1 = tilings["Mnist0Orig"], tilings["Mnist1Orig"]
    assert o0.l1_bytes == 41632 and o0.count(T0) == 3 and o0.arg("In").step + 4 == 14
    assert o1.l1_bytes <= 48000 and o1.count(D0) > 1


def test_tiled_layers_are_tiled(fixed):
    """The small budgets really cut the spaces (the tilings the bit-exact runs used)."""
    _, t = fixed
    assert t["TiledAll"].count(D1) > 1 and t["TiledAll"].count(T0) > 1 and t["TiledAll"].count(D0) > 1
    assert t["TiledAllL3"].count(T0) > 1 and all(t["TiledAllL3"].arg(a).l3 for a in ("In", "Filter", "Bias", "Out"))
    assert t["SpPoolTiled"].count(T0) > 1 and t["SpPoolTiled"].count(D1) > 1
    assert t["DwTiled"].count(D0) > 1 and t["DwTiled"].count(T0) > 1
    assert t["Vertical"].count(T0) > 1 and t["Vertical"].arg("In").orientation == TILE_VER
    assert t["OneFeature"].count(T0) > 1 and t["OneFeature"].count(D0) == 3 and t["OneFeature"].count(D1) == 4
    assert t["PoolTiled"].count(T0) > 1 and t["PoolTiled"].arg("In").l3
    assert t["GroupedBody"].count(T0) >= 1 and "Grouped" not in t


def test_kernel_choice_and_bindings(fixed):
    """The original's kernel choices: fixed-geometry names when they fit, the one-feature Ker*
    kernels with ParallelFeatures 0, the activation in the DP reduction or in its own kernel."""
    _, t = fixed
    names = {k: [c.name for c in t[k].kernel.calls] for k in t}
    assert names["TiledAll"] == ["KerParSetBias_DP_fp", "KerParConv3x3Stride1_DP_fp", "KerDP_fp"]
    assert names["SpPoolTiled"] == ["KerParSetBias_fps", "KerParConv3x3Stride1_fps", "KerParPoolNxNStrideS_fps"]
    assert names["DwTiled"] == ["KerParConvDWDP3x3Stride2_fp", "KerDP_hswish_fp"]
    assert names["Vertical"] == ["KerParSetBias_DP_fp", "KerParConvNxMDxDyStrideSxSy_DP_fp", "KerDP_IO_leakyrelu_fp",
                                 "KerParPool2x2Stride2_fp"]
    assert names["OneFeature"] == ["KerSetBias_fp", "KerConvNxMStrideSxSy_fp", "KerReLU_fp"]
    assert names["ForcedDp"] == ["KerParConvDWDP3x3Stride1_fp", "KerDP_sigmoid_fp"]
    assert names["PoolTiled"] == ["KerParPoolNxNStrideS_fp"]
    assert names["GroupedDwBody"] == ["KerParConvDW3x3Stride1_fps", "KerParReLU_fps"]


# ---------------------------------------------------------------------------------------------
# Geometry helpers


def test_geometry_helpers():
    assert CNN_TotalPaddingValue(28, 5, 1, 1) == 4 and CNN_TotalPaddingValue(25, 3, 2, 1) == 2
    assert CNN_TotalPaddingValue(24, 3, 2, 1) == 1 and CNN_TotalPaddingValue(10, 3, 1, 2) == 4
    assert CNN_EdgePaddingValue(PAD_LEFT, 3, 1) == (3, 0, 1, 0)
    assert CNN_EdgePaddingValue(PAD_RIGHT, 3, 1) == (0, 3, 0, 1)
    assert CNN_EdgePaddingValue(PAD_BALANCED_LEFT, 3, 1) == (2, 1, 1, 0)
    assert CNN_EdgePaddingValue(PAD_BALANCED_RIGHT, 3, 1) == (1, 2, 0, 1)
    assert CNN_UsedInputDimension(24, 5, 1, 1, 0) == 28
    assert CNN_LayerOutputDim(28, 28, KOP_CONV_DP, 5, 5, 1, 1, 1, 1, 0, KOP_MAXPOOL, 2, 2, 1, 1, 2, 2, 0)[:4] == \
        (24, 24, 12, 12)
    assert CNN_TileOverlap(TILE_HOR, 5, 5, 1, 1, 1, 1, 2, 2, 1, 1, 2, 2) == (4, 0)
    assert CNN_TileOverlap(TILE_VER, 3, 5, 2, 1, 2, 1) == (3, 0)


# ---------------------------------------------------------------------------------------------
# Errors: typed, naming this file's line, the kernel and the parameter


@pytest.fixture
def model():
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_HEADER)
        SetL1MemorySize(48000)
        LoadCNNLibrary()
        yield m


def fails(*fragments, kernel="L", at=None):
    """pytest.raises(ModelError) rendered as 'THIS:LINE: kernel 'L': ...fragments...' with LINE
    ``at``, else the first line of the with body."""
    return rendered(ModelError, THIS, with_body_line() if at is None else at, fragments, kernel)


def conv(**over):
    """The MNIST layer with parameters overridden (errors are reported at the call below)."""
    p = conv_params()
    ctrl = over.pop("Ctrl", 0)
    p.update(over)
    return CNN_ConvolutionPoolReLU("L", ctrl, **p)


def pool(**over):
    p = pool_params()
    ctrl = over.pop("Ctrl", 0)
    p.update(over)
    return CNN_PoolReLU("L", ctrl, **p)


def _line(func, text: str) -> int:
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, line in enumerate(lines) if text in line)


CONV_LINE, POOL_LINE = _line(conv, "CNN_ConvolutionPoolReLU("), _line(pool, "CNN_PoolReLU(")


CONV_ERRORS = [
    (dict(Fcx=9, Width=8), ("CNN_ConvolutionPoolReLU: the convolution filter (Fcx = 9, spanning 9 with its dilation) "
                            "is larger than the padded width (8): it has no output", "pad (ConvPad = 1)")),
    (dict(Fcy=3, Dcy=4, Height=8, PoolOper=KOP_NONE), ("filter (Fcy = 3, spanning 9 with its dilation) is larger "
                                                       "than the padded height (8)",)),
    (dict(Fpx=7, Width=10), ("the pooling window (Fpx = 7, spanning 7 with its dilation) is larger than the "
                             "padded convolution output width (6)", "PoolPad = 1")),
    (dict(Scx=0), ("Scx (stride) must be at least 1, got 0", "a stride is 1 or more")),
    (dict(Spy=0), ("Spy (stride) must be at least 1, got 0",)),
    (dict(Dcy=0), ("Dcy (dilation) must be at least 1, got 0", "a dilation is 1 (none) or more")),
    (dict(Dpx=0), ("Dpx (dilation) must be at least 1, got 0",)),
    (dict(Fcx=0), ("Fcx must be at least 1, got 0",)),
    (dict(ConvOper=KOP_CONV_DW, InFeat=3, OutFeat=4), ("a depth wise convolution (KOP_CONV_DW) needs InFeat == "
                                                       "OutFeat, got InFeat 3 and OutFeat 4", "use KOP_CONV")),
    (dict(PoolOper=KOP_CONV), ("PoolOper KOP_CONV is not a pooling (KOP_NONE, KOP_MAXPOOL or KOP_AVGPOOL)",
                               "KOP_MAXPOOL")),
    (dict(ConvOper=KOP_MAXPOOL), ("ConvOper KOP_MAXPOOL is not a convolution", "KOP_CONV, KOP_CONV_DP")),
    (dict(ConvOper=KOP_NONE), ("ConvOper KOP_NONE is not a convolution",)),
    (dict(ConvOper=KOP_CONV_HWCE), ("ConvOper KOP_CONV_HWCE is not a convolution",)),
    (dict(ReLUOper=KOP_HTANH), ("ReLUOper KOP_HTANH is not an activation this generator supports",)),
    (dict(ReLUOper=9999), ("ReLUOper 9999 is not a KernelOper_T (unknown KOP)",)),
    (dict(PoolOper="KOP_FOO"), ("PoolOper 'KOP_FOO' is not a KernelOper_T (unknown KOP)",)),
    (dict(In_DataSize=3), ("In_DataSize 3 is not supported: the CNN kernels take 1-byte (fps) or 2-byte (fp) data",)),
    (dict(Out_DataSize=4), ("Out_DataSize 4 is not supported",)),
    (dict(Filter_DataSize=1), ("mixed data sizes (In 2, Filter 1, Bias 2, Out 2) are not supported",
                               "the same data size")),
    (dict(In_Q=4, Filter_Q=4, Out_Q=12), ("In_Q + Filter_Q - Out_Q = 4 + 4 - 12 = -4 is negative: the kernels shift "
                                          "the accumulator right", "an Out_Q of at most 8")),
    (dict(Out_Q=16), ("Out_Q must be at most 15, got 16", "0..15")),
    (dict(In_Q=-1), ("In_Q must be at least 0, got -1",)),
    (dict(ReLUOper=KOP_SIGMOID), ("KOP_SIGMOID gives Q15 results, but Out_Q is 12", "set Out_Q to 15")),
    (dict(ConvOper=KOP_CONV, ReLUOper=KOP_HSWISH), ("KOP_HSWISH after a pooling of a single precision convolution "
                                                    "(KOP_CONV): the pooling kernels only clip", "KOP_CONV_DP")),
    (dict(ConvOper=KOP_CONV, PoolOper=KOP_NONE, ReLUOper=KOP_TANH, Out_Q=15, In_Q=10, Filter_Q=10),
     ("KOP_TANH after a single precision convolution (KOP_CONV): no activation kernel exists for it alone",)),
    (dict(ReLUOper=KOP_RELUN, Out_Q=13, In_Q=14), ("KOP_RELUN's bound 6 in Q13 (49152) does not fit the 16-bit "
                                                   "output", "lower Out_Q")),
    (dict(In_InL3=2), ("In_InL3 must be at most 1, got 2", "0 (in L2, no padding) or 1")),
    (dict(ConvPad=True), ("ConvPad must be an integer, got True",)),
    (dict(InFeat=0), ("InFeat must be at least 1, got 0",)),
    (dict(Width=2.5), ("Width must be an integer, got 2.5",)),
]


@pytest.mark.parametrize("over,fragments", CONV_ERRORS, ids=[str(i) for i in range(len(CONV_ERRORS))])
def test_conv_errors(model, over, fragments):
    with fails(*fragments, at=CONV_LINE):
        conv(**over)


def test_conv_error_one_feature_activation(model):
    ctrl = make_ctrl({"PARALLELFEATURES": 0})
    with fails("KOP_HSWISH with ParallelFeatures 0 after a single precision convolution: only the ReLU kernels",
               "use ParallelFeatures 1 or a DP convolution", at=CONV_LINE):
        conv(Ctrl=ctrl, ConvOper=KOP_CONV, PoolOper=KOP_NONE, ReLUOper=KOP_HSWISH)


def test_conv_error_relun_from_ctrl(model):
    ctrl = make_ctrl({"RELUN": 100})
    with fails("KOP_RELUN's bound 100 in Q12 (409600) does not fit the 16-bit output", at=CONV_LINE):
        conv(Ctrl=ctrl, ReLUOper=KOP_RELUN)


def test_conv_error_without_library():
    with Model(PLATFORM):
        with fails("basic kernel 'KerParSetBias_DP_fp' is not declared", "call LoadCNNLibrary() before", at=CONV_LINE):
            conv()


def test_conv_error_ctrl_of_the_wrong_type(model):
    with fails("CNN_ConvolutionPoolReLU: Ctrl must be 0 or a CNN_GenControl_T, got dict", "CNN_InitGenCtrl(Ctrl)",
               at=CONV_LINE):
        conv(Ctrl={"PADTYPE": 0})
    with fails("CNN_ConvolutionPoolReLU: Ctrl was not initialised", "call CNN_InitGenCtrl(Ctrl)", at=CONV_LINE):
        conv(Ctrl=CNN_GenControl_T())


def test_conv_no_tiling(model):
    """A budget nothing fits in: TilingError, or 0 with AT_KERNEL_NOSOLUTION_ERROR off."""
    SetL1MemorySize(64)
    with pytest.raises(TilingError):
        conv()
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
    assert conv() == 0
    SetL1MemorySize(48000)
    assert conv() == 1


POOL_ERRORS = [
    (dict(OutFeat=5), ("CNN_PoolReLU: InFeat 4 != OutFeat 5: pooling and activations keep the features",)),
    (dict(Out_Q=9), ("In_Q 10 and Out_Q 9 differ: pooling and activations keep the fixed-point format",
                     "set Out_Q to 10")),
    (dict(Out_DataSize=1), ("In_DataSize 2 and Out_DataSize 1 differ",)),
    (dict(In_DataSize=3), ("In_DataSize 3 is not supported",)),
    (dict(ReLUOper=KOP_HSWISH), ("ReLUOper KOP_HSWISH is not an activation the pooling kernels apply (they only "
                                 "clip)",)),
    (dict(PoolOper=KOP_NONE, ReLUOper=KOP_SIGMOID), ("ReLUOper KOP_SIGMOID is not an activation with a kernel of its "
                                                     "own",)),
    (dict(PoolOper=KOP_NONE, ReLUOper=KOP_NONE), ("ReLUOper KOP_NONE is not an activation with a kernel of its own",)),
    (dict(PoolOper=KOP_CONV_DP), ("PoolOper KOP_CONV_DP is not a pooling",)),
    (dict(Fpx=5, Width=4), ("the pooling window (Fpx = 5, spanning 5 with its dilation) is larger than the padded "
                            "width (4)",)),
    (dict(Spx=0), ("Spx (stride) must be at least 1, got 0",)),
    (dict(Dpy=0), ("Dpy (dilation) must be at least 1, got 0",)),
    (dict(Out_InL3=-1), ("Out_InL3 must be at least 0, got -1",)),
]


@pytest.mark.parametrize("over,fragments", POOL_ERRORS, ids=[str(i) for i in range(len(POOL_ERRORS))])
def test_pool_errors(model, over, fragments):
    with fails(*fragments, at=POOL_LINE):
        pool(**over)


def test_pool_error_one_feature_activation(model):
    ctrl = make_ctrl({"PARALLELFEATURES": 0})
    with fails("ReLUOper KOP_HSWISH is not an activation with a kernel of its own in its one-feature form "
               "(ParallelFeatures 0)", at=POOL_LINE):
        pool(Ctrl=ctrl, PoolOper=KOP_NONE, ReLUOper=KOP_HSWISH)


def test_grouped_errors(model):
    p = conv_params(feats=(12, 8))
    with fails("CNN_GroupedConvolutionPoolReLU: cannot divide InFeat 12 / OutFeat 8 into groups of GroupIn 4 / "
               "GroupOut 4", "the same whole number", kernel="G"):
        CNN_GroupedConvolutionPoolReLU("G", 0, 4, 4, **p)
    with fails("GroupIn must be at least 1, got 0", kernel="G"):
        CNN_GroupedConvolutionPoolReLU("G", 0, 0, 4, **p)
    # an error of the body names the body kernel, at the caller's line
    with fails("Scx (stride) must be at least 1, got 0", kernel="GBody"):
        CNN_GroupedConvolutionPoolReLU("G", 0, 3, 2, **dict(p, Scx=0))


# ---------------------------------------------------------------------------------------------
# CNN_GenControl_T


def test_ctrl_fields_are_read():
    ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(ctrl)
    CNN_SetGenCtrlList(ctrl, "TileOrientation", TILE_VER, "parallelfeatures", 0, "PADTYPE", PAD_RIGHT, "ReluN", 3,
                       "ForceDPconv", 1, 0)
    assert gen_control(ctrl, "G", "K", "here") == GenControl(1, 0, 1, int(PAD_RIGHT), 3)
    assert gen_control(0, "G", "K", "here") == GenControl() == gen_control(None, "G", "K", "here")
    CNN_SetGenCtrl(ctrl, "USEHWCE", 0)          # a refused field at its default is accepted
    CNN_InitGenCtrl(ctrl)
    assert gen_control(ctrl, "G", "K", "here") == GenControl()


def test_ctrl_errors():
    ctrl = CNN_GenControl_T()
    with fails("CNN_InitGenCtrl expects a CNN_GenControl_T, got int", kernel=None):
        CNN_InitGenCtrl(3)
    CNN_InitGenCtrl(ctrl)
    with fails("CNN_SetGenCtrl: unknown field \"TILEORIENT\"", "fields: TILEORIENTATION", kernel=None):
        CNN_SetGenCtrl(ctrl, "TILEORIENT", 1)
    with fails("CNN_SetGenCtrl(Ctrl, \"PADTYPE\", 7): the value must be -1, PAD_LEFT, PAD_RIGHT", kernel=None):
        CNN_SetGenCtrl(ctrl, "PADTYPE", 7)
    with fails("CNN_SetGenCtrl(Ctrl, \"ReluN\", 0): the value must be -1 or a positive int", kernel=None):
        CNN_SetGenCtrl(ctrl, "ReluN", 0)
    with fails("CNN_SetGenCtrl(Ctrl, \"ParallelFeatures\", True): the value must be -1, 0", kernel=None):
        CNN_SetGenCtrl(ctrl, "ParallelFeatures", True)
    with fails("CNN_SetGenCtrl(Ctrl, \"EnableIm2Col\", 1) is not supported yet: the generators do not generate "
               "matrix-multiply (im2col) convolutions", kernel=None):
        CNN_SetGenCtrl(ctrl, "EnableIm2Col", 1)
    with fails("CNN_SetGenCtrl: the field name must be a string, got 3", kernel=None):
        CNN_SetGenCtrl(ctrl, 3, 1)
    with fails("CNN_SetGenCtrl expects a CNN_GenControl_T, got NoneType", kernel=None):
        CNN_SetGenCtrl(None, "PADTYPE", 1)
    with fails("CNN_SetGenCtrlList: field \"RELUN\" has no value", "pass Name, Val pairs, ending with 0", kernel=None):
        CNN_SetGenCtrlList(ctrl, "PADTYPE", 1, "RELUN")


def test_grouped_is_a_kernel_group(model):
    """The original's form: the body user kernel in a group calling it once per group, each
    argument offset by a group's items."""
    assert CNN_GroupedConvolutionPoolReLU("Grouped", 0, **GROUPED.p) == 1
    group = model.groups["Grouped"]
    assert group.iterations == 4 and [c.name for c in group.calls] == ["GroupedBody"]
    assert [b.value for b in group.calls[0].bindings] == [3 * 14 * 12, 2 * 3 * 3 * 3, 2, 2 * 6 * 7]
    assert model.group_members["Grouped"] == ["GroupedBody"]
