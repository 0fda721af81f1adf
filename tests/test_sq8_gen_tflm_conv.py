"""The TFLM-exact SQ8 convolution and pooling generators (autotiler/generators/sq8_gen_tflm_conv.py:
CNN_ConvolutionPoolAct_SQ8, CNN_GroupedConvolutionPoolAct_SQ8, CNN_PoolAct_SQ8 with Scale_DataSize 4)
against the numpy reference sq8_tflm (itself proven against tflite-micro) on hypothesis-drawn layers,
against the tflite-micro interpreter on the committed single-operator models, and their typed errors.

Builds are few: every hypothesis example declares a batch of layers in one model (one build per
batch). Outputs are pre-filled with a sentinel; the simulator faults on writes outside the
arguments; the simulated cycles of every user kernel are its predicted ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_tflm as T
from autotiler.generators.cnn_ctrl import CNN_GenControl_T, CNN_InitGenCtrl, CNN_SetGenCtrl
from autotiler.generators.sq8_gen_tflm_conv import conv_constants
from autotiler.generators.sq8_generators import (
    CNN_ConvolutionPoolAct_SQ8,
    CNN_GroupedConvolutionPoolAct_SQ8,
    CNN_PoolAct_SQ8,
)
from autotiler.generators.sq8_infos import tflm_infos
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
    generator's arguments after Name and Ctrl; ``budget`` the L1 bytes ('min': the smallest power
    of two from 256 bytes on that fits); ``ctrl`` extra CNN_GenControl_T fields."""

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
            budget *= 2
    finally:
        AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_ON)


def build(out_dir, layers: list):
    """Every layer declared in one model, generated and built: (program, tilings, budgets)."""
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        SetGeneratedFilesNames("Sq8Conv.c", "Sq8Conv.h")
        LoadCNN_SQ8_Library()
        budgets = {layer.name: declare(layer) for layer in layers}
        tilings = dict(m.tilings)
        files = generate(m)
    write_files(files, str(out_dir))
    prog = host_harness.build(out_dir, sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM)
    return prog, tilings, budgets


def run_layer(prog, tilings, layer: Layer) -> None:
    """Run the layer: bit-exact with its reference, every output written (the sentinel-filled
    buffer is exactly the output), the predicted cycles are the simulated ones."""
    inputs, expected = layer.reference()
    out = np.full(expected.size, SENTINEL, dtype=np.int8)
    flat = {k: np.ascontiguousarray(v).reshape(-1) for k, v in inputs.items()}
    counters = prog.call(layer.name, Out=out, **flat)
    got = out.reshape(expected.shape)
    bad = np.argwhere(got != expected)
    assert bad.size == 0, (f"{layer.name}: {len(bad)}/{expected.size} differ, first at {bad[0].tolist()}: got "
                           f"{got[tuple(bad[0])]} expected {expected[tuple(bad[0])]} ({layer.args}, budget "
                           f"{layer.budget})")
    if layer.name in tilings:
        assert counters["cycles"] == tilings[layer.name].predicted.cycles, layer.name


def run_batch(tmp_path, layers: list) -> dict:
    prog, tilings, budgets = build(tmp_path, layers)
    for layer in layers:
        run_layer(prog, tilings, layer)
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


def test_mobilenet_layers(tmp_path):
    """MobileNet v1's convolutions (3x3/2 on 3 channels, depth wise 3x3/1 and /2, pointwise), whole
    in L1 and at the smallest budget that tiles them."""
    layers = [conv_layer(f"M{i}{b}", c, budget) for i, c in enumerate(MOBILENET)
              for b, budget in (("w", 64 * 1024), ("m", "min"))]
    run_batch(tmp_path, layers)
