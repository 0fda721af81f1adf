"""Simulated time: determinism, a hand-computed case, visible DMA/compute overlap, and an objective
that never picks a tiling the simulator shows to be slower than one it considered."""

from dataclasses import replace

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.costmodel import predict
from autotiler.platforms import GAP8, get_platform
from autotiler.tiler import SolverOptions, feasible_tilings

from .conftest import EXAMPLES, ROOT, example_reference, load_module

KERNELS = ROOT / "tests" / "kernels"
PLATFORM = get_platform("gap8", l2_size=2 * 1024 * 1024)


def win_kernel(h, w=16, in_type=OBJ_IN_DB, out_type=OBJ_OUT_DB, cons=0, pref=0, cost="100"):
    ptr = "Wordu32 * __restrict__"
    LibKernel("KerInit_u32", CALL_PARALLEL, CArgs(TCArg(ptr, "Out"), TCArg("unsigned int", "W"),
                                                  TCArg("unsigned int", "H"), TCArg("unsigned int", "Value")),
              "KerInit_u32_T", Cost="0")
    LibKernel("KerWin_u32", CALL_PARALLEL, CArgs(TCArg(ptr, "In"), TCArg(ptr, "Out"), TCArg(ptr, "Wt"),
                                                 TCArg("unsigned int", "W"), TCArg("unsigned int", "H"),
                                                 TCArg("unsigned int", "Ov"), TCArg("unsigned int", "Vertical")),
              "KerWin_u32_T", Cost=cost)
    SetSymbolDynamics()
    SetUsedFilesNames(0, 1, "WinKernels.h")
    SetGeneratedFilesNames("ClockGen.c", "ClockGen.h")
    return UserKernel("K", KernelDimensions(1, w, h, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,
                      CArgs(TCArg(ptr, "In"), TCArg(ptr, "Out"), TCArg(ptr, "Wt")),
                      Calls(Call("KerInit_u32", LOC_INNER_LOOP, Bindings(
                          K_Arg("Out", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE_W), K_Arg("Out", KER_ARG_TILE_H), Imm(0))),
                          Call("KerWin_u32", LOC_INNER_LOOP, Bindings(
                          K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("Wt", KER_ARG_TILE),
                          K_Arg("Out", KER_ARG_TILE_W), K_Arg("Out", KER_ARG_TILE_H), Imm(0), Imm(0)))),
                      KerArgs(KerArg("In", in_type, w, h, 4, 0, cons, pref, "In", 0),
                              KerArg("Wt", OBJ_IN_NTILED, 1, 1, 4, 0, 0, 0, "Wt", 0),
                              KerArg("Out", out_type, w, h, 4, 0, 0, 0, "Out", 0)))


def run(model, tmp_path, h, w=16):
    gen = tmp_path / "gen"
    write_files(generate(model), str(gen))
    prog = host_harness.build(gen, sources=[KERNELS / "WinKernels.c"], include_dirs=[KERNELS], platform=PLATFORM)
    inp = np.arange(h * w, dtype=np.uint32).reshape(h, w)
    out = np.full((h, w), 0xA5A5A5A5, dtype=np.uint32)
    counters = prog.call("K", In=inp, Out=out, Wt=np.array([3], dtype=np.uint32))
    np.testing.assert_array_equal(out, inp * 3)
    return counters


def test_hand_computed_single_tile(tmp_path):
    """One tile, everything read once and written once (64-byte In, 4-byte Wt, 64-byte Out)."""
    with Model() as m:
        SetL1MemorySize(4096)
        t = win_kernel(h=1)
        assert t.promoted and t.ntiles == 1
        c = run(m, tmp_path, h=1)
    p, dma = GAP8, GAP8.cluster_dma
    now = 2 * p.dma_issue_cycles  # issue In, issue Wt
    in_end = p.dma_issue_cycles + dma.setup_cycles + 64 // 8
    wt_end = in_end + dma.setup_cycles + 1  # queued behind In on the single engine
    now = max(now + p.wait_cycles, in_end)
    now = max(now + p.wait_cycles, wt_end)
    now += 0 + p.fork_cycles  # KerInit: declared Cost 0, then the fork
    now += 100 + p.fork_cycles  # KerWin: declared Cost 100, then the fork
    now += p.dma_issue_cycles
    out_end = now + dma.setup_cycles + 64 // 8
    now = max(now + p.wait_cycles, out_end)
    assert c["cycles"] == now == 347
    assert c["compute_cycles"] == 100 and c["transfers"] == 3 and c["dma_busy_cycles"]["cluster"] == 38 + 31 + 38


def test_clock_is_deterministic(tmp_path):
    with Model() as m:
        SetL1MemorySize(2048)
        win_kernel(h=100)
        first = run(m, tmp_path, h=100)
        second = run(m, tmp_path, h=100)
    assert first == second


def test_double_buffering_beats_single_buffering_by_the_predicted_amount(tmp_path):
    pinned = dict(cons=OBJ_CONSTRAINTS_ONEPREFTILE, pref=10, cost="40")  # same 10-line tiles for both
    with Model() as m:
        SetL1MemorySize(8192)
        AT_SetKernelCtrl(AT_KERNEL_BUFFER_PROMOTE, AT_OPT_OFF)
        db = win_kernel(h=200, **pinned)
        sim_db = run(m, tmp_path / "db", h=200)
    with Model() as m:
        SetL1MemorySize(8192)
        AT_SetKernelCtrl(AT_KERNEL_BUFFER_PROMOTE, AT_OPT_OFF)
        sb = win_kernel(h=200, in_type=OBJ_IN, out_type=OBJ_OUT, **pinned)
        sim_sb = run(m, tmp_path / "sb", h=200)
    assert db.ntiles == sb.ntiles == 20 and db.arg("In").nbuf == 2 and sb.arg("In").nbuf == 1
    assert sim_db["cycles"] < sim_sb["cycles"]
    assert sim_sb["cycles"] - sim_db["cycles"] == sb.predicted.cycles - db.predicted.cycles
    assert sim_db["stall_cycles"] < sim_sb["stall_cycles"]


@pytest.mark.parametrize("name", ["matrix_max", "cnn_conv5x5"])
def test_time_objective_never_slower_than_a_considered_alternative(name, tmp_path):
    module = load_module(EXAMPLES / name / "model.py", f"model_{name}")
    ref = example_reference(name)
    with Model() as m:
        module.declare()
        kernel = next(iter(m.tilings))
        chosen = m.tilings[kernel]
        options = SolverOptions(budget=chosen.budget, platform=m.platform, libs=dict(m.libs))
        considered = list(feasible_tilings(m.kernels[kernel], options))
        step = max(1, len(considered) // 8)
        sample = considered[::step] + [chosen]
        cycles = []
        for i, t in enumerate(sample):
            m.tilings[kernel] = replace(t, predicted=predict(t, m.libs, m.platform))
            gen = tmp_path / f"c{i}"
            write_files(generate(m), str(gen))
            prog = host_harness.build(gen, sources=[EXAMPLES / name / s for s in ref.SOURCES],
                                      include_dirs=[EXAMPLES / name], platform=PLATFORM)
            args = ref.make_args(np.random.default_rng(0))
            cycles.append(prog.call(ref.KERNEL, **args)["cycles"])
            for out, value in ref.expected(args).items():
                np.testing.assert_array_equal(args[out], value)
    assert cycles[-1] == min(cycles), f"chosen {cycles[-1]} cycles, considered {cycles[:-1]}"
