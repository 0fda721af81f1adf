"""Fused layers (issue 26) on GVSoC's pulp-open cluster: CNN_FusedConvAct_SQ8 built for the target,
bit-exact with sq8_tflm layer by layer and with the host build of the same generated code, tiled into
several tiles; against the same layers generated one by one (CNN_ConvolutionPoolAct_SQ8 and
CNN_MatAddAct_SQ8), each also bit-exact on GVSoC.

Chains at the L1 budget ``autotiler import`` writes for pulp_open: MobileNet v1 0.25 96x96's first
stage (conv 3x3/2, dw 3x3, pw, dw 3x3/2, pw), the inverted residual of MobileNet v2 0.35 96x96's 24x24x8
blocks with its ADD (expand 1x1 to 48, dw 3x3, project 1x1, ADD) and that block's tail (dw 3x3, project, ADD).
Each kernel's cycles are the cluster's mcycle around its call (DMA included, code cold in the
instruction cache: the fused kernel alone, the one-by-one layers in one application, each layer's
first call cold); the test prints them (-s) and asserts no timing.

At most 16 transfers may be pending on pulp-open's cluster DMA (MCHAN_NB_COUNTERS; a counter is freed
by the wait only). A fused kernel loads In (and Res) and its five constants per layer (and AddInfos) up
front: MobileNet v1's first stage starts 26 transfers, the inverted residual with its ADD 18. The target
runtime (host_harness/target/at_target.c) waits for the oldest pending transfer before a seventeenth;
these two chains check that path (``_transfers``).

GVSoC tests are marked ``gvsoc`` and skipped when GVSOC_HOME is not set, as tests/test_gvsoc.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import host_harness
from autotiler import KOP_CONV, KOP_CONV_DW, KOP_MATADD, KOP_NONE, KOP_RELU, Model, SetL1MemorySize, SetUsedFilesNames
from autotiler.codegen import generate, write_files
from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_tflm as T
from autotiler.generators.sq8_gen_tflm_fused import line_buffer_mode
from autotiler.generators.sq8_generators import CNN_ConvolutionPoolAct_SQ8, CNN_FusedConvAct_SQ8, CNN_MatAddAct_SQ8
from autotiler.generators.sq8_library import CNN_SQ8_HEADER, CNN_SQ8_SOURCES, LoadCNN_SQ8_Library
from host_harness import gvsoc
from tests.test_sq8_fused import KOP_OF_ACT, SENTINEL, Chain, Conv, make_ctrl

needs_gvsoc = pytest.mark.skipif(not gvsoc.available(), reason="GVSoC not installed (GVSOC_HOME unset): "
                                 + gvsoc.INSTALL_HINT)
pytestmark = [needs_gvsoc, pytest.mark.gvsoc, pytest.mark.usefixtures("private_harness_cache")]

PLATFORM = "pulp_open"
IMPORT_L1 = 48896      # the L1 budget autotiler import writes for pulp_open
MBN_V1 = Chain(96, 96, 3, (Conv("conv", 8, s=2), Conv("dw", 8), Conv("conv", 16, f=1), Conv("dw", 16, s=2),
                            Conv("conv", 32, f=1)), budget=IMPORT_L1, seed=5, name="MbnV1First")
INV_RES = Chain(24, 24, 8, (Conv("conv", 48, f=1), Conv("dw", 48), Conv("conv", 8, f=1, act="NONE")), residual=True,
                budget=IMPORT_L1, seed=6, name="InvRes")
INV_RES_TAIL = Chain(24, 24, 48, (Conv("dw", 48), Conv("conv", 8, f=1, act="NONE")), residual=True, budget=IMPORT_L1,
                     seed=7, name="InvResTail")
MCHAN_COUNTERS = 16     # pulp-open's cluster DMA: transfers pending at once
CHAINS = (MBN_V1, INV_RES, INV_RES_TAIL)


def _layer_names(c: Chain) -> list:
    return [f"{c.name}_L{k}" for k in range(len(c.layers))] + ([f"{c.name}_Add"] if c.residual else [])


def _declare_layers(c: Chain) -> None:
    """The chain's layers one by one, each its own user kernel at the same L1 budget."""
    names = _layer_names(c)
    h, w, cin = c.h, c.w, c.cin
    for name, conv in zip(names, c.layers):
        pad = int(conv.padding == "SAME")
        assert CNN_ConvolutionPoolAct_SQ8(name, make_ctrl(), 4, 4, cin, conv.cout, w, h,
                                          KOP_CONV_DW if conv.kind == "dw" else KOP_CONV, conv.f, conv.f, 1, 1,
                                          conv.s, conv.s, pad, KOP_NONE, 1, 1, 1, 1, 1, 1, 0,
                                          KOP_OF_ACT[conv.act]) == 1, name
        h, w = (T.compute_out_size(conv.padding, n, conv.f, conv.s) for n in (h, w))
        cin = conv.cout
    if c.residual:
        assert CNN_MatAddAct_SQ8(names[-1], make_ctrl(), cin, w, h, KOP_MATADD, KOP_RELU) == 1


def _transfers(c: Chain) -> int:
    """The copies a fused kernel starts before its first wait: In, five constants per layer, Res and AddInfos."""
    return 1 + 5 * len(c.layers) + 2 * c.residual


def _generate(out_dir) -> dict:
    """Every chain fused and layer by layer in one model for pulp_open: its tilings."""
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        SetL1MemorySize(IMPORT_L1)
        LoadCNN_SQ8_Library()
        for c in CHAINS:
            assert CNN_FusedConvAct_SQ8(c.name, make_ctrl(), *c.args()) == 1, c.name
            _declare_layers(c)
        tilings = dict(m.tilings)
        write_files(generate(m), str(out_dir))
    return tilings


def _call_fused(prog, c: Chain) -> tuple:
    """(the fused kernel's output, its counters)."""
    inputs, expected = c.reference()
    out = np.full(expected.size, SENTINEL, np.int8)
    counters = prog.call(c.name, Out=out, **{k: np.ascontiguousarray(v).reshape(-1) for k, v in inputs.items()})
    return out.reshape(expected.shape), counters


def _assert_equal(got, expected, what: str) -> None:
    bad = np.argwhere(got != expected)
    assert bad.size == 0, (f"{what}: {len(bad)}/{expected.size} differ, first at {bad[0].tolist()}: got "
                           f"{got[tuple(bad[0])]} expected {expected[tuple(bad[0])]}")


def _one_by_one(prog, c: Chain) -> list:
    """The chain's layers one by one in one GVSoC application, each on the reference's input and checked
    against the reference's output: their cycles."""
    names, steps = _layer_names(c), c.steps()
    args = {}
    for name, step in zip(names, steps):
        arrays = {k: np.ascontiguousarray(v).reshape(-1).copy() for k, v in step.items() if k != "Out"}
        args[name] = dict(arrays, Out=np.full(step["Out"].size, SENTINEL, np.int8))
    calls = prog.sequence(names, args)
    for name, step in zip(names, steps):
        _assert_equal(args[name]["Out"].reshape(step["Out"].shape), step["Out"], f"{name} on GVSoC")
    return [call["cycles"] for call in calls]


def test_fused_chains_on_gvsoc(tmp_path):
    """Both chains: several tiles; GVSoC's output = sq8_tflm's = the host build's; the layers one by one
    also bit-exact on GVSoC. Prints the cycles, fused against one by one."""
    assert _transfers(MBN_V1) > MCHAN_COUNTERS and _transfers(INV_RES) > MCHAN_COUNTERS
    tilings = _generate(tmp_path / "gen")
    target = host_harness.build(tmp_path / "gen", sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR],
                                backend="gvsoc")
    host = host_harness.build(tmp_path / "gen", sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR],
                              platform=PLATFORM)
    rows = []
    try:
        for c in CHAINS:
            t = tilings[c.name]
            assert t.loops[0].count > 1, f"{c.name}: one tile at {IMPORT_L1} B of L1"
            expected = c.reference()[1]
            got, counters = _call_fused(target, c)
            _assert_equal(got, expected, f"{c.name} on GVSoC")
            _assert_equal(_call_fused(host, c)[0], got, f"{c.name} on the host against GVSoC")
            layers = _one_by_one(target, c)
            rows.append((c.name, t.loops[0].count, line_buffer_mode(t), counters["cycles"], t.predicted.cycles,
                         layers, sum(tilings[n].predicted.cycles for n in _layer_names(c))))
    finally:
        target.close()
    print("\n| chain | tiles | overlaps | fused GVSoC | fused predicted | one by one GVSoC (per layer) | "
          "one by one predicted |")
    for name, tiles, mode, cyc, pred, layers, lpred in rows:
        print(f"| {name} | {tiles} | {mode} | {cyc} | {pred} | {sum(layers)} ({' + '.join(map(str, layers))}) | "
              f"{lpred} |")
