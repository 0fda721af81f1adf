"""The TFLM-exact SQ8 convolution and pooling generators (autotiler/generators/sq8_gen_tflm_conv.py:
CNN_ConvolutionPoolAct_SQ8, CNN_GroupedConvolutionPoolAct_SQ8, CNN_PoolAct_SQ8 with Scale_DataSize 4)
against the numpy reference sq8_tflm (itself proven against tflite-micro) on hypothesis-drawn layers,
against the tflite-micro interpreter on the committed single-operator models, and their typed errors.

Builds are few: every hypothesis example declares a batch of layers in one model (one build per
batch). Outputs are pre-filled with a sentinel; the simulator faults on writes outside the
arguments; the simulated cycles of every user kernel are its predicted ones.
"""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import ModelError, TilingError
from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_tflm as T
from autotiler.generators.cnn_ctrl import CNN_GenControl_T, CNN_InitGenCtrl, CNN_SetGenCtrl
from autotiler.generators.sq8_gen_tflm_conv import conv_constants, pool_infos
from autotiler.generators.sq8_generators import (
    CNN_ConvolutionPoolAct_SQ8,
    CNN_GroupedConvolutionPoolAct_SQ8,
    CNN_PoolAct_SQ8,
)
from autotiler.generators.sq8_infos import read_tflm_infos, tflm_infos
from autotiler.generators.sq8_library import CNN_SQ8_HEADER, CNN_SQ8_SOURCES, LoadCNN_SQ8_Library
from autotiler.platforms import get_platform

pytestmark = pytest.mark.usefixtures("private_harness_cache")
THIS = "test_sq8_gen_tflm_conv.py"
PLATFORM = get_platform("gap8", l1_size=256 * 1024, l2_size=4 * 1024 * 1024)
MODELS = Path(__file__).resolve().parent / "models" / "sq8"
SENTINEL = -99
SWEEP = dict(deadline=None, derandomize=True, database=None,
             suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                    HealthCheck.data_too_large])
ACT_KOPS = (KOP_NONE, KOP_RELU, KOP_RELUN, KOP_RELUM, KOP_RELUMN)   # all TFLM's clamp
NO_POOL = (KOP_NONE, 1, 1, 1, 1, 1, 1, 0)


# ---------------------------------------------------------------------------------------------
# Layers: declared in a model, run, compared


@dataclass
class Layer:
    """One generator call and the data of its run. kind 'conv', 'group' or 'pool'; ``args`` the
    generator's arguments after Name and Ctrl; ``budget`` the L1 bytes ('min': the smallest of
    256 bytes and 50% steps up that fits); ``ctrl`` extra CNN_GenControl_T fields."""

    name: str
    kind: str
    args: tuple
    reference: object           # () -> (inputs dict, expected int8 NHWC output)
    budget: object = 48000
    ctrl: dict = field(default_factory=dict)


def make_ctrl(fields: dict):
    ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(ctrl)
    CNN_SetGenCtrl(ctrl, "SCALE_DATASIZE", 4)
    for k, v in fields.items():
        CNN_SetGenCtrl(ctrl, k, v)
    return ctrl


GENERATORS = {"conv": CNN_ConvolutionPoolAct_SQ8, "group": CNN_GroupedConvolutionPoolAct_SQ8,
              "pool": CNN_PoolAct_SQ8}


def declare(layer: Layer) -> int:
    """Declare the layer; returns the L1 budget it got."""
    gen = GENERATORS[layer.kind]
    budget = 256 if layer.budget == "min" else layer.budget
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF if layer.budget == "min" else AT_OPT_ON)
    try:
        while True:
            SetL1MemorySize(min(budget, PLATFORM.l1_size))
            if gen(layer.name, make_ctrl(layer.ctrl), *layer.args):
                return budget
            assert budget < PLATFORM.l1_size, f"{layer.name}: no tiling fits {budget} B"
            budget += budget // 2     # steps of 50%: near the smallest tilings, tiles of few lines
    finally:
        AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_ON)


def build(out_dir, layers: list, cores: int = 8):
    """Every layer declared in one model, generated and built for ``cores`` cores: (program,
    tilings, budgets)."""
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        SetGeneratedFilesNames("Sq8Conv.c", "Sq8Conv.h")
        LoadCNN_SQ8_Library()
        budgets = {layer.name: declare(layer) for layer in layers}
        tilings = dict(m.tilings)
        files = generate(m)
    write_files(files, str(out_dir))
    prog = host_harness.build(out_dir, sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM,
                              cores=cores)
    return prog, tilings, budgets


def run_layer(prog, tilings, layer: Layer, cores: int = 8) -> None:
    """Run the layer: bit-exact with its reference, every output written (the sentinel-filled
    buffer is exactly the output), the predicted cycles are the simulated ones (on the
    platform's 8 cores, which the tiler predicts for)."""
    inputs, expected = layer.reference()
    out = np.full(expected.size, SENTINEL, dtype=np.int8)
    flat = {k: np.ascontiguousarray(v).reshape(-1) for k, v in inputs.items()}
    counters = prog.call(layer.name, Out=out, **flat)
    got = out.reshape(expected.shape)
    bad = np.argwhere(got != expected)
    assert bad.size == 0, (f"{layer.name}: {len(bad)}/{expected.size} differ, first at {bad[0].tolist()}: got "
                           f"{got[tuple(bad[0])]} expected {expected[tuple(bad[0])]} ({layer.args}, budget "
                           f"{layer.budget})")
    if layer.name in tilings and cores == PLATFORM.cores:
        assert counters["cycles"] == tilings[layer.name].predicted.cycles, layer.name


def run_batch(tmp_path, layers: list, cores: int = 8) -> dict:
    prog, tilings, budgets = build(tmp_path, layers, cores)
    for layer in layers:
        run_layer(prog, tilings, layer, cores)
    return budgets


# ---------------------------------------------------------------------------------------------
# Layer descriptions: TFLite's view (shapes, quantisation) -> generator arguments and reference


@dataclass(frozen=True)
class Conv:
    """A TFLite convolution (kind 'conv', 'dw' or 'group') with an optional pooling after it."""

    kind: str
    h: int
    w: int
    cin: int
    cout: int
    groups: int = 1
    f: tuple = (3, 3)           # (fy, fx)
    s: tuple = (1, 1)
    d: tuple = (1, 1)
    padding: str = "SAME"
    pool: tuple | None = None   # (KOP_MAXPOOL | KOP_AVGPOOL, (fy, fx), (sy, sx), padding)
    act: str = "NONE"           # a TFLite fused activation, or "range": an arbitrary clamp
    act_kop: int = KOP_NONE
    in_zp: int = 0
    out_zp: int = 0
    in_scale: float = 0.02
    out_scale: float = 0.05
    reals: tuple = (0.004,)     # in_scale * w_scale[c] / out_scale, per channel or one for all
    seed: int = 0

    def args(self) -> tuple:
        conv_kop = KOP_CONV_DW if self.kind == "dw" else KOP_CONV
        pool = NO_POOL
        if self.pool:
            kop, (pfy, pfx), (psy, psx), ppad = self.pool
            pool = (kop, pfx, pfy, 1, 1, psx, psy, int(ppad == "SAME"))
        common = (4, 4, self.cin, self.cout, self.w, self.h, conv_kop, self.f[1], self.f[0], self.d[1], self.d[0],
                  self.s[1], self.s[0], int(self.padding == "SAME"), *pool, self.act_kop)
        if self.kind == "group":
            return (self.cin // self.groups, self.cout // self.groups, *common)
        return common

    def quant(self):
        in_q, out_q = T.QParams(self.in_scale, self.in_zp), T.QParams(self.out_scale, self.out_zp)
        w_q = T.FilterQParams(tuple(r * out_q.scale / in_q.scale for r in self.reals))
        return in_q, w_q, out_q

    def reference(self):
        rng = np.random.default_rng(self.seed)
        in_q, w_q, out_q = self.quant()
        x = rng.integers(-128, 128, (1, self.h, self.w, self.cin)).astype(np.int8)
        b = rng.integers(-(1 << 14), 1 << 14, self.cout).astype(np.int32)
        act = "NONE" if self.act == "range" else self.act
        kw = dict(stride=self.s, dilation=self.d, padding=self.padding, activation=act)
        if self.kind == "dw":
            wt = rng.integers(-127, 128, (1, *self.f, self.cout)).astype(np.int8)
            y = T.depthwise_conv2d(x, wt, b, in_q, w_q, out_q, depth_multiplier=self.cout // self.cin, **kw)
        else:
            wt = rng.integers(-127, 128, (self.cout, *self.f, self.cin // self.groups)).astype(np.int8)
            y = T.conv2d(x, wt, b, in_q, w_q, out_q, **kw)
        scale, scale_n, infos = conv_constants(in_q, w_q, out_q, act, self.cout)
        if self.act == "range":
            lo, hi = sorted(int(v) for v in rng.integers(-128, 128, 2))
            y = np.clip(y, lo, hi).astype(np.int8)
            infos = T_infos(in_q, out_q, lo, hi)
        if self.pool:
            kop, pf, ps, ppad = self.pool
            fn = T.max_pool2d if kop == KOP_MAXPOOL else T.average_pool2d
            y = fn(y, out_q, out_q, pf, ps, ppad, "NONE")
        return dict(In=x, Filter=wt, Bias=b, Scale=scale, ScaleN=scale_n, Infos=infos), y[0]


def T_infos(in_q, out_q, lo, hi):
    return tflm_infos(in_zp=in_q.zero_point, out_zp=out_q.zero_point, act_min=lo, act_max=hi)


def conv_layer(name: str, c: Conv, budget="min", ctrl=None) -> Layer:
    return Layer(name, "group" if c.kind == "group" else "conv", c.args(), c.reference, budget, ctrl or {})


# ---------------------------------------------------------------------------------------------
# Fixed layers: MobileNet v1's (the example's), chunked output channels, tiny budgets


MOBILENET = [
    Conv("conv", 17, 17, 3, 8, f=(3, 3), s=(2, 2), act="RELU6", in_zp=-1, out_zp=-128, seed=1,
         reals=tuple(np.linspace(0.001, 0.01, 8))),
    Conv("dw", 9, 9, 8, 8, f=(3, 3), s=(1, 1), act="RELU6", in_zp=-128, out_zp=-128, seed=2,
         reals=tuple(np.linspace(0.01, 0.1, 8))),
    Conv("dw", 9, 9, 8, 8, f=(3, 3), s=(2, 2), act="RELU6", in_zp=-128, out_zp=-128, seed=3, reals=(0.02,)),
    Conv("conv", 5, 5, 8, 16, f=(1, 1), act="RELU6", in_zp=-128, out_zp=-128, seed=4,
         reals=tuple(np.linspace(0.001, 0.004, 16))),
]

# output channels in chunks that do not divide them (the last chunk ends at OutFeat), groups cut
# by chunks, a fused average pooling after a strided convolution, a dilated depth wise layer with
# a multiplier and a max pooling, SAME poolings with a top pad on tiles of a few lines
UNEVEN = [
    Conv("conv", 6, 7, 40, 13, f=(3, 3), in_zp=5, out_zp=-3, reals=(0.0005,), seed=9),
    Conv("group", 6, 7, 40, 26, groups=2, f=(3, 3), in_zp=5, out_zp=-3, reals=(0.0005,), seed=10),
    Conv("conv", 11, 9, 16, 24, f=(3, 3), s=(2, 2), pool=(KOP_AVGPOOL, (3, 3), (2, 2), "SAME"), in_zp=-7,
         reals=(0.001,), seed=11),
    Conv("dw", 13, 11, 8, 24, f=(5, 3), d=(2, 1), s=(1, 2), pool=(KOP_MAXPOOL, (2, 2), (2, 2), "VALID"), in_zp=100,
         reals=(0.01,), seed=12),
    Conv("conv", 12, 10, 5, 7, pool=(KOP_AVGPOOL, (3, 3), (1, 1), "SAME"), in_zp=-7, reals=(0.001,), seed=13),
    Conv("conv", 41, 10, 5, 7, s=(2, 2), pool=(KOP_MAXPOOL, (5, 3), (1, 2), "SAME"), in_zp=-7, reals=(0.001,), seed=14),
    Conv("dw", 41, 10, 5, 10, s=(2, 1), pool=(KOP_AVGPOOL, (5, 3), (2, 1), "SAME"), in_zp=-7, reals=(0.001,), seed=15),
]


@pytest.mark.parametrize("cores", [8, 3])
def test_mobilenet_layers(tmp_path, cores):
    """MobileNet v1's convolutions (3x3/2 on 3 channels, depth wise 3x3/1 and /2, pointwise), whole
    in L1 and at the smallest budget that tiles them, on GAP8's 8 cores and on 3 (chunks of lines
    and channels that do not divide evenly)."""
    layers = [conv_layer(f"M{i}{b}", c, budget) for i, c in enumerate(MOBILENET)
              for b, budget in (("w", 64 * 1024), ("m", "min"))]
    layers += [conv_layer(f"G{i}", c, "min") for i, c in enumerate(UNEVEN)]
    run_batch(tmp_path, layers, cores)


def test_single_buffered_lines(tmp_path):
    """Layers whose HWC lines are long for the L1 budget: three input lines of a 3x3 depth wise
    layer on 28 x 128 bytes do not fit 20000 bytes twice, so the generator falls back to single
    buffering (which fits) instead of failing; likewise a depth wise layer with a fused 3x3 pooling
    (three lines of In and of ConvOut) in 30000 bytes. A pointwise layer shares the first budget."""
    big = [Conv("dw", 12, 28, 128, 128, in_zp=-128, out_zp=3, reals=(0.01,), seed=21),
           Conv("conv", 6, 28, 128, 64, f=(1, 1), in_zp=-128, out_zp=3, reals=(0.001,), seed=22)]
    layers = [conv_layer(f"S{i}", c, 20000) for i, c in enumerate(big)]
    pool = Conv("dw", 9, 28, 128, 128, f=(1, 1), pool=(KOP_AVGPOOL, (3, 3), (1, 1), "SAME"), reals=(0.01,), seed=23)
    layers.append(conv_layer("S2", pool, 30000))   # In, ConvOut: 3 lines each
    run_batch(tmp_path, layers)

# ---------------------------------------------------------------------------------------------
# Hypothesis sweep: batches of random layers, one build per batch


def out_size(padding: str, n: int, f: int, s: int, d: int = 1) -> int:
    return T.compute_out_size(padding, n, f, s, d)


def _grow(n: int, f: int, s: int, d: int, padding: str) -> int:
    """The smallest size >= n with an output (VALID needs the dilated filter to fit)."""
    while out_size(padding, n, f, s, d) <= 0:
        n += 1
    return n


@st.composite
def convs(draw, index: int):
    kind = draw(st.sampled_from(["conv", "dw", "group"]))
    groups = 1
    if kind == "dw":
        cin = draw(st.integers(1, 10))
        cout = cin * draw(st.integers(1, 3))
    elif kind == "group":
        groups = draw(st.integers(1, 3))
        cin, cout = groups * draw(st.integers(1, 5)), groups * draw(st.integers(1, 5))
    else:
        cin, cout = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    f = (draw(st.integers(1, 5)), draw(st.integers(1, 5)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    d = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = draw(st.sampled_from(T.PADDINGS))
    h = _grow(draw(st.integers(1, 13)), f[0], s[0], d[0], padding)
    w = _grow(draw(st.integers(1, 13)), f[1], s[1], d[1], padding)
    pool = None
    if draw(st.booleans()):
        pf = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
        ps = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
        ppad = draw(st.sampled_from(T.PADDINGS))
        hc, wc = out_size(padding, h, f[0], s[0], d[0]), out_size(padding, w, f[1], s[1], d[1])
        if out_size(ppad, hc, pf[0], ps[0]) > 0 and out_size(ppad, wc, pf[1], ps[1]) > 0:
            pool = (draw(st.sampled_from([KOP_MAXPOOL, KOP_AVGPOOL])), pf, ps, ppad)
    # multipliers in_scale * w_scale / out_scale from 1e-6 to 1e2: shifts from -19 to +7
    per_channel = draw(st.booleans())
    reals = tuple(10.0 ** draw(st.floats(-6, 2)) for _ in range(cout if per_channel else 1))
    return Conv(kind, h, w, cin, cout, groups, f, s, d, padding, pool,
                act=draw(st.sampled_from([*T.ACTIVATIONS, "range"])), act_kop=draw(st.sampled_from(ACT_KOPS)),
                in_zp=draw(st.integers(-128, 127)), out_zp=draw(st.integers(-128, 127)),
                in_scale=10.0 ** draw(st.floats(-3, 0)), out_scale=10.0 ** draw(st.floats(-3, 0)), reals=reals,
                seed=index)


@settings(max_examples=5, **SWEEP)
@given(batch=st.lists(st.sampled_from(["min", 2048, 64 * 1024]), min_size=14, max_size=14), data=st.data())
def test_conv_layers(tmp_path_factory, batch, data):
    """Random convolutions (regular, grouped, depth wise with multipliers; odd sizes, strides 1..3,
    dilations 1..2, SAME/VALID, fused pooling, zero points and multipliers over their ranges,
    clamps) = sq8_tflm, at L1 budgets from the smallest that tiles to whole."""
    layers = [conv_layer(f"L{i}", data.draw(convs(i)), budget) for i, budget in enumerate(batch)]
    run_batch(tmp_path_factory.mktemp("conv"), layers)


# ---------------------------------------------------------------------------------------------
# Against tflite-micro itself, on the committed single-operator models

TFLM_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D")
SIDECARS = [p for p in sorted(MODELS.glob("*.json")) if json.loads(p.read_text())["op"] in TFLM_OPS]
TFLM_DRAWS = 4
ACT_KOP = {"NONE": KOP_NONE, "RELU": KOP_RELU, "RELU6": KOP_RELUN, "RELU_N1_TO_1": KOP_RELUMN}


def _q(t: dict) -> T.QParams:
    return T.QParams(t["scales"][0], t["zero_points"][0])


def model_layer(name: str, side: dict, budget) -> tuple:
    """(Layer, constant inputs) of a sidecar: the generator's arguments, Filter/Bias/Scale/ScaleN/
    Infos built with conv_constants / pool_infos. Its reference is not used: tflite-micro is."""
    op, o, ins = side["op"], side["options"], side["inputs"]
    _, h, w, cin = ins[0]["shape"]
    cout = side["outputs"][0]["shape"][3]
    in_q, out_q = _q(ins[0]), _q(side["outputs"][0])
    act = o["fusedActivationFunction"]
    pad = int(o["padding"] == "SAME")
    if op in ("MAX_POOL_2D", "AVERAGE_POOL_2D"):
        kop = KOP_MAXPOOL if op == "MAX_POOL_2D" else KOP_AVGPOOL
        args = (cin, w, h, kop, o["filterWidth"], o["filterHeight"], 1, 1, o["strideW"], o["strideH"], pad,
                ACT_KOP[act])
        return Layer(name, "pool", args, None, budget), dict(Infos=pool_infos(in_q, act))
    filt = np.asarray(ins[1]["data"], np.int8).reshape(ins[1]["shape"])
    bias = np.asarray(ins[2]["data"], np.int32)
    scale, scale_n, infos = conv_constants(in_q, T.FilterQParams(tuple(ins[1]["scales"])), out_q, act, cout)
    dw = op == "DEPTHWISE_CONV_2D"
    common = (4, 4, cin, cout, w, h, KOP_CONV_DW if dw else KOP_CONV, filt.shape[2], filt.shape[1],
              o["dilationWFactor"], o["dilationHFactor"], o["strideW"], o["strideH"], pad, *NO_POOL, ACT_KOP[act])
    groups = 1 if dw else cin // filt.shape[3]
    kind, args = ("group", (cin // groups, cout // groups, *common)) if groups > 1 else ("conv", common)
    return Layer(name, kind, args, None, budget), dict(Filter=filt, Bias=bias, Scale=scale, ScaleN=scale_n,
                                                      Infos=infos)


def test_against_tflite_micro(tmp_path):
    """Every conv_*, dw_*, maxpool_*, avgpool_* model (conv_3x3_groups2_s2_same through the grouped
    generator), whole and at the smallest budget that tiles it: the generated C gives the bytes
    the tflite-micro interpreter gives, on random inputs and the extremes."""
    runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime",
                                  reason="tflite-micro is in the test extra: pip install tflite-micro")
    sides = [json.loads(p.read_text()) for p in SIDECARS]
    assert {s["op"] for s in sides} == set(TFLM_OPS)
    assert any(s["name"] == "conv_3x3_groups2_s2_same" for s in sides)
    layers, consts = [], {}
    for k, side in enumerate(sides):
        for b, budget in (("w", 64 * 1024), ("m", "min")):
            layer, c = model_layer(f"T{k}{b}", side, budget)
            layers.append(layer)
            consts[layer.name] = c
    prog, tilings, _ = build(tmp_path, layers)
    for k, (side, path) in enumerate(zip(sides, SIDECARS)):
        interp = runtime.Interpreter.from_file(str(path.with_suffix(".tflite")), arena_size=1 << 20)
        shape = side["inputs"][0]["shape"]
        rng = np.random.default_rng(k)
        draws = [rng.integers(-128, 128, shape).astype(np.int8) for _ in range(TFLM_DRAWS)]
        draws += [np.full(shape, -128, np.int8), np.full(shape, 127, np.int8)]
        for d, x in enumerate(draws):
            interp.set_input(x, 0)
            interp.invoke()
            want = interp.get_output(0)
            for b in "wm":
                name = f"T{k}{b}"
                out = np.full(want.size, SENTINEL, np.int8)
                flat = {n: np.ascontiguousarray(v).reshape(-1) for n, v in consts[name].items()}
                prog.call(name, In=x.reshape(-1), Out=out, **flat)
                bad = np.flatnonzero(out != want.reshape(-1))
                assert bad.size == 0, (f"{side['name']} ({name}) draw {d}: {bad.size}/{want.size} differ, first at "
                                       f"{bad[0]}: got {out[bad[0]]}, tflite-micro {want.reshape(-1)[bad[0]]}")


# ---------------------------------------------------------------------------------------------
# Errors: typed, naming this file's line, the kernel and the parameter


@pytest.fixture
def model():
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        SetL1MemorySize(48000)
        LoadCNN_SQ8_Library()
        yield m


CONV = dict(Bias_DataSize=4, Scale_DataSize=4, InFeat=4, OutFeat=8, Width=10, Height=9, ConvOper=KOP_CONV, Fcx=3,
            Fcy=3, Dcx=1, Dcy=1, Scx=1, Scy=1, ConvPad=1, PoolOper=KOP_NONE, Fpx=1, Fpy=1, Dpx=1, Dpy=1, Spx=1, Spy=1,
            PoolPad=0, ActOper=KOP_RELU)
POOL = dict(Feat=4, Width=10, Height=9, PoolOper=KOP_MAXPOOL, Fpx=2, Fpy=2, Dpx=1, Dpy=1, Spx=2, Spy=2, PoolPad=0,
            ActOper=KOP_NONE)


def conv(ctrl=None, name="E", **over):
    return CNN_ConvolutionPoolAct_SQ8(name, make_ctrl(ctrl or {}), **dict(CONV, **over))


def group(ctrl=None, GroupIn=2, GroupOut=4, **over):
    return CNN_GroupedConvolutionPoolAct_SQ8("E", make_ctrl(ctrl or {}), GroupIn, GroupOut, **dict(CONV, **over))


def pool(ctrl=None, name="E", **over):
    return CNN_PoolAct_SQ8(name, make_ctrl(ctrl or {}), **dict(POOL, **over))


def _line(fn) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + len(lines) - 1


def fails(fn, *fragments):
    """pytest.raises(ModelError) rendered as 'THIS:LINE: kernel 'E': ...fragments...', LINE the
    generator's call in fn."""
    prefix = f"{THIS}:{_line(fn)}: kernel 'E': "
    return pytest.raises(ModelError, match=re.escape(prefix) + ".*" + ".*".join(re.escape(f) for f in fragments))


ERRORS = [
    (conv, dict(Bias_DataSize=2), ["Bias_DataSize 2 is not supported with Scale_DataSize 4: TFLM's biases are int32",
                                   "use Bias_DataSize 4"]),
    (conv, dict(ConvOper=KOP_CONV_DP), ["ConvOper KOP_CONV_DP is not a convolution of this requantisation",
                                        "KOP_CONV, KOP_CONV_DW, KOP_NONE"]),
    (conv, dict(ActOper=KOP_HSWISH), ["TFLite has no fused KOP_HSWISH: its convolutions and poolings only clamp",
                                      "generate CNN_Act_SQ8 after this layer"]),
    (pool, dict(ActOper=KOP_LEAKYRELU), ["TFLite has no fused KOP_LEAKYRELU", "generate CNN_Act_SQ8 after this layer"]),
    (conv, dict(ConvOper=KOP_CONV_DW, InFeat=3, OutFeat=8),
     ["a depth wise convolution needs OutFeat a multiple of InFeat (TFLite's depth multiplier), got InFeat 3 and "
      "OutFeat 8", "use KOP_CONV to mix the features"]),
    (conv, dict(ConvPad=0, Fcy=11), ["the convolution filter (spanning 11) is larger than the height 9 with VALID "
                                     "padding: it has no output", "or SAME padding (ConvPad = 1)"]),
    (conv, dict(PoolOper=KOP_MAXPOOL, Fpx=12, Fpy=2), ["the pooling window (spanning 12) is larger than the width 10",
                                                       "or SAME padding (PoolPad = 1)"]),
    (conv, dict(Fcx=65, Dcx=2, ConvPad=1), ["the convolution filter spans 129 columns (Fcx = 65 with its dilation): "
                                            "more than 128 is not supported yet", "spanning at most 128"]),
    (conv, dict(PoolOper=KOP_AVGPOOL, Fpx=2, Fpy=2, Dpx=2, Spx=2, Spy=2),
     ["a pooling dilation (Dpx 2, Dpy 1) is not supported: TFLite's pooling has none", "set Dpx = Dpy = 1"]),
    (pool, dict(Dpy=3), ["a pooling dilation (Dpx 1, Dpy 3) is not supported", "set Dpx = Dpy = 1"]),
    (conv, dict(ConvOper=KOP_NONE, PoolOper=KOP_NONE), ["ConvOper and PoolOper are both KOP_NONE: nothing to compute",
                                                        "generate CNN_Act_SQ8"]),
    (conv, dict(ConvOper=KOP_NONE, PoolOper=KOP_MAXPOOL, Fpx=2, Fpy=2, Spx=2, Spy=2),
     ["InFeat 4 != OutFeat 8: a pooling keeps the features", "pass the same number of features"]),
    (conv, dict(InFeat=70000), ["InFeat must be at most 65535, got 70000"]),
    (pool, dict(PoolOper=KOP_NONE), ["PoolOper KOP_NONE is not a pooling (KOP_MAXPOOL or KOP_AVGPOOL)"]),
    (group, dict(GroupIn=3), ["cannot divide InFeat 4 / OutFeat 8 into groups of GroupIn 3 / GroupOut 4",
                              "must be the same whole number"]),
    (group, dict(ConvOper=KOP_CONV_DW), ["ConvOper KOP_CONV_DW in a grouped convolution",
                                         "CNN_ConvolutionPoolAct_SQ8 with KOP_CONV_DW"]),
    (group, dict(ConvOper=KOP_NONE), ["ConvOper KOP_NONE in a grouped convolution: there is no convolution to group",
                                      "CNN_PoolAct_SQ8 for a pooling alone"]),
]
CTRL_ERRORS = [
    (dict(PADTYPE=PAD_BALANCED_LEFT), ["PadType PAD_BALANCED_LEFT is not TFLite's SAME padding",
                                       "set PAD_BALANCED_RIGHT"]),
    (dict(PADTYPE=PAD_LEFT), ["PadType PAD_LEFT is not TFLite's SAME padding"]),
    (dict(TILEORIENTATION=TILE_VER), ["TileOrientation TILE_VER is not supported yet with HWC feature maps",
                                      "set TILE_HOR"]),
    (dict(PARALLELFEATURES=0), ["ParallelFeatures 0 is not supported yet with this requantisation",
                                "set 1"]),
    (dict(FORCEDPCONV=1), ["ForceDPconv is not supported with this requantisation: TFLM's convolutions accumulate in "
                           "32 bits already", "leave ForceDPconv unset"]),
    (dict(RELUN=6), ["ReluN is not read with this requantisation: the clamp is Infos' ACT_MIN, ACT_MAX",
                     "leave ReluN unset"]),
]


@pytest.mark.parametrize("fn, over, fragments", ERRORS, ids=[f"{f.__name__}-{i}" for i, (f, _, _) in
                                                               enumerate(ERRORS)])
def test_errors(model, fn, over, fragments):
    with fails(fn, *fragments):
        fn(**over)


@pytest.mark.parametrize("ctrl, fragments", CTRL_ERRORS, ids=[next(iter(c)) for c, _ in CTRL_ERRORS])
def test_ctrl_errors(model, ctrl, fragments):
    for fn in (conv, group, pool):
        with fails(fn, *fragments):
            fn(ctrl)


def test_ctrl_accepted(model):
    """The Ctrl values that restate what these layers do are accepted."""
    ok = dict(PADTYPE=PAD_BALANCED_RIGHT, TILEORIENTATION=TILE_HOR, PARALLELFEATURES=1, FORCEDPCONV=0, HWC=1)
    assert conv(ok, "A") == 1
    assert pool(ok, "B") == 1


def test_error_without_library():
    with Model(PLATFORM):
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        with fails(conv, "basic kernel 'KerParConv_TFLM_SQ8' is not declared", "call LoadCNN_SQ8_Library() before"):
            conv()


def test_no_tiling(model):
    """A budget nothing fits in: TilingError, or 0 with AT_KERNEL_NOSOLUTION_ERROR off."""
    SetL1MemorySize(128)
    with pytest.raises(TilingError):
        conv()
    AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
    assert conv() == 0
    assert pool(name="P", Width=200, Feat=100) == 0
    SetL1MemorySize(48000)
    assert conv() == 1


def test_conv_constants_errors():
    in_q, out_q = T.QParams(100.0, 0), T.QParams(1e-6, 0)
    with pytest.raises(ModelError, match=re.escape("conv_constants: a per-tensor filter scale needs channels")):
        conv_constants(in_q, T.FilterQParams((0.1,)), out_q)
    with pytest.raises(ModelError, match=re.escape("conv_constants: 2 filter scales for channels=3")):
        conv_constants(in_q, T.FilterQParams((0.1, 0.2)), out_q, channels=3)
    with pytest.raises(ModelError, match=re.escape("needs a left shift of 34 (> 31): TFLM's int32 arithmetic cannot "
                                                   "apply it")):
        conv_constants(in_q, T.FilterQParams((100.0,)), out_q, channels=1)


def test_conv_constants():
    """Per-tensor scales repeat; the multiplier and shift are QuantizeMultiplier's; Infos' words."""
    in_q, out_q = T.QParams(0.02, -3), T.QParams(0.05, 7)
    scale, scale_n, infos = conv_constants(in_q, T.FilterQParams((0.004,)), out_q, "RELU6", channels=3)
    r = T.quantize_multiplier(float(in_q.scale) * float(np.float32(0.004)) / float(out_q.scale))
    assert scale.dtype == np.int32 and scale_n.dtype == np.int8 and infos.dtype == np.int8 and infos.size == 64
    assert scale.tolist() == [r.multiplier] * 3 and scale_n.tolist() == [r.shift] * 3
    lo, hi = T.activation_range("RELU6", out_q)
    assert read_tflm_infos(infos) == dict(read_tflm_infos(tflm_infos()), in_zp=-3, out_zp=7, act_min=lo, act_max=hi)
    assert read_tflm_infos(pool_infos(out_q, "RELU"))["act_min"] == T.activation_range("RELU", out_q)[0]
