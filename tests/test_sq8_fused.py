"""Fused layers (issue 26): CNN_FusedConvAct_SQ8 (autotiler/generators/sq8_gen_tflm_fused.py) against the
numpy reference sq8_tflm applied layer by layer (itself proven against tflite-micro), on fixed chains
(MobileNet v1's first stage, an inverted residual with its ADD, conv -> conv) and hypothesis-drawn chains
(sizes, strides, paddings, activations, L1 budgets); its typed errors.

Outputs are pre-filled with a sentinel; the simulator faults on writes outside the arguments and on
reads of L1 never written; the simulated cycles of the user kernel are its predicted ones.
"""

from __future__ import annotations

from dataclasses import dataclass

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
from autotiler.generators.sq8_gen_tflm_dense import add_infos
from autotiler.generators.sq8_generators import CNN_FusedConv, CNN_FusedConvAct_SQ8, CNN_FusedLayers
from autotiler.generators.sq8_library import CNN_SQ8_HEADER, CNN_SQ8_SOURCES, LoadCNN_SQ8_Library
from autotiler.platforms import get_platform

pytestmark = pytest.mark.usefixtures("private_harness_cache")
PLATFORM = get_platform("gap8", l1_size=256 * 1024, l2_size=4 * 1024 * 1024)
SENTINEL = -99
SWEEP = dict(deadline=None, derandomize=True, database=None,
             suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                    HealthCheck.data_too_large])
KOP_OF_ACT = {"NONE": KOP_NONE, "RELU": KOP_RELU, "RELU6": KOP_RELUN}


@dataclass(frozen=True)
class Conv:
    """One layer of a chain: 'conv' (KxK) or 'dw'; its quantisation drawn from the seed."""

    kind: str
    cout: int
    f: int = 3
    s: int = 1
    padding: str = "SAME"
    act: str = "RELU6"


@dataclass(frozen=True)
class Chain:
    h: int
    w: int
    cin: int
    layers: tuple
    residual: bool = False
    budget: int = 48000
    seed: int = 0
    name: str = "Fused"

    def args(self) -> tuple:
        layers = [CNN_FusedConv(KOP_CONV_DW if c.kind == "dw" else KOP_CONV, c.cout, c.f, c.f, c.s, c.s,
                                int(c.padding == "SAME"), KOP_OF_ACT[c.act]) for c in self.layers]
        return (self.cin, self.w, self.h, CNN_FusedLayers(len(layers), *layers),
                KOP_MATADD if self.residual else KOP_NONE, KOP_RELU if self.residual else KOP_NONE)

    def reference(self):
        """(C arguments, expected output): every layer by sq8_tflm, one after the other."""
        rng = np.random.default_rng(self.seed)
        q = T.QParams(0.02, int(rng.integers(-128, 0)))
        x = rng.integers(-128, 128, (1, self.h, self.w, self.cin)).astype(np.int8)
        args, y, cin = {"In": x}, x, self.cin
        for k, c in enumerate(self.layers):
            out_q = T.QParams(float(rng.uniform(0.02, 0.08)), int(rng.integers(-128, 10)))
            reals = rng.uniform(0.001, 0.01 if c.kind == "conv" else 0.05, c.cout)
            w_q = T.FilterQParams(tuple(r * out_q.scale / q.scale for r in reals))
            b = rng.integers(-(1 << 12), 1 << 12, c.cout).astype(np.int32)
            kw = dict(stride=(c.s, c.s), padding=c.padding, activation=c.act)
            if c.kind == "dw":
                wt = rng.integers(-127, 128, (1, c.f, c.f, c.cout)).astype(np.int8)
                y = T.depthwise_conv2d(y, wt, b, q, w_q, out_q, depth_multiplier=c.cout // cin, **kw)
            else:
                wt = rng.integers(-127, 128, (c.cout, c.f, c.f, cin)).astype(np.int8)
                y = T.conv2d(y, wt, b, q, w_q, out_q, **kw)
            scale, scale_n, infos = conv_constants(q, w_q, out_q, c.act, c.cout)
            args.update({f"Filter{k}": wt, f"Bias{k}": b, f"Scale{k}": scale, f"ScaleN{k}": scale_n,
                         f"Infos{k}": infos})
            q, cin = out_q, c.cout
        if self.residual:
            res = rng.integers(-128, 128, y.shape).astype(np.int8)
            res_q = T.QParams(0.03, int(rng.integers(-128, 128)))
            out_q = T.QParams(0.05, int(rng.integers(-128, 0)))
            args.update(Res=res, AddInfos=add_infos(q, res_q, out_q, "RELU"))
            y = T.add(y, res, q, res_q, out_q, "RELU")
        return args, y[0]


def make_ctrl():
    ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(ctrl)
    CNN_SetGenCtrl(ctrl, "SCALE_DATASIZE", 4)
    return ctrl


def build(out_dir, chains: list):
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        SetGeneratedFilesNames("Fused.c", "Fused.h")
        LoadCNN_SQ8_Library()
        for c in chains:
            SetL1MemorySize(c.budget)
            assert CNN_FusedConvAct_SQ8(c.name, make_ctrl(), *c.args()) == 1, c
        tilings = dict(m.tilings)
        files = generate(m)
    write_files(files, str(out_dir))
    prog = host_harness.build(out_dir, sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM)
    return prog, tilings


def run(prog, tilings, c: Chain) -> None:
    inputs, expected = c.reference()
    out = np.full(expected.size, SENTINEL, dtype=np.int8)
    flat = {k: np.ascontiguousarray(v).reshape(-1) for k, v in inputs.items()}
    counters = prog.call(c.name, Out=out, **flat)
    got = out.reshape(expected.shape)
    bad = np.argwhere(got != expected)
    assert bad.size == 0, (f"{c.name}: {len(bad)}/{expected.size} differ, first at {bad[0].tolist()}: got "
                           f"{got[tuple(bad[0])]} expected {expected[tuple(bad[0])]} ({c})")
    assert counters["cycles"] == tilings[c.name].predicted.cycles


def check(tmp_path, chains: list) -> dict:
    prog, tilings = build(tmp_path, chains)
    for c in chains:
        run(prog, tilings, c)
    return tilings


# ---------------------------------------------------------------------------------------------
# Fixed chains


MBN_STAGE = (Conv("conv", 8, s=2), Conv("dw", 8), Conv("conv", 16, f=1), Conv("dw", 16, s=2),
             Conv("conv", 32, f=1))
FIXED = [
    Chain(24, 24, 3, MBN_STAGE, budget=8000, name="MbnStage"),
    Chain(24, 24, 3, MBN_STAGE, budget=6000, seed=3, name="MbnStageSmall"),
    Chain(12, 10, 8, (Conv("conv", 24, f=1), Conv("dw", 24), Conv("conv", 8, f=1, act="NONE")), residual=True,
          budget=4000, seed=1, name="InvRes"),
    Chain(11, 9, 4, (Conv("conv", 8), Conv("conv", 6, f=3, s=2, padding="VALID")), budget=2000, seed=2,
          name="ConvConv"),
    Chain(9, 7, 16, (Conv("dw", 16, s=2), Conv("conv", 8, f=1)), budget=1500, seed=4, name="DwPw"),
]


def test_fixed_chains_are_bit_exact(tmp_path):
    tilings = check(tmp_path, FIXED)
    # the small budgets really tile: several tiles, the intermediates' overlaps recomputed by each
    for name in ("MbnStage", "MbnStageSmall", "InvRes", "ConvConv", "DwPw"):
        assert tilings[name].loops[0].count > 1, name
