"""Simulated time: determinism, a hand-computed case, visible DMA/compute overlap, and an objective
that never picks a tiling the simulator shows to be slower than one it considered."""


import dataclasses

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler import objectives
from autotiler.api.kernels import solve_options
from autotiler.codegen import generate, write_files
from autotiler.errors import PlatformError
from autotiler.objectives import TRIPLE_MIN_GAIN, candidates, reschedule
from autotiler.platforms import GAP8, ComputeScale, get_platform
from autotiler.schedule.cost import predict
from autotiler.tiler.geometry import kernel_geometry
from autotiler.tiler.search import grid
from autotiler.tiler.tiling import with_stages

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
    return run_generated(gen, h, w)


def run_generated(gen, h, w=16, platform=PLATFORM):
    """Build the window kernel ``K`` generated in ``gen`` for ``platform``, call it on an h x w
    ramp and check its output (the ramp times 3): the call's counters."""
    prog = host_harness.build(gen, sources=[KERNELS / "WinKernels.c"], include_dirs=[KERNELS], platform=platform)
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


def test_duplex_cluster_dma_runs_reads_and_writes_at_once(tmp_path):
    """MCHAN's reads and writes queue on two channels: on a DMA-bound kernel the duplex engine
    finishes sooner than one queue would, and the simulator agrees with the predictor, cycle for
    cycle, on both structures."""
    shared = PLATFORM.with_overrides(cluster_dma=dataclasses.replace(PLATFORM.cluster_dma, duplex=False))
    assert PLATFORM.cluster_dma.duplex
    with Model() as m:
        SetL1MemorySize(2048)
        t = win_kernel(h=200, cost="0")
        gen = tmp_path / "gen"
        write_files(generate(m), str(gen))
    assert t.ntiles > 4
    cycles = {}
    for plat in (PLATFORM, shared):
        c = run_generated(gen, 200, platform=plat)
        assert c["cycles"] == predict(t.schedule, plat).cycles
        cycles[plat.cluster_dma.duplex] = c
    duplex, one = cycles[True], cycles[False]
    assert duplex["dma_busy_cycles"] == one["dma_busy_cycles"]   # the same work ...
    assert duplex["cycles"] < one["cycles"]                      # ... on two channels
    assert one["cycles"] >= one["dma_busy_cycles"]["cluster"]    # one queue carries it all


def test_platform_compute_model_scales_each_basic_kernels_cost(tmp_path):
    """A platform's measured compute model (Platform.compute) turns a call's Cost= into cycles:
    the generated code carries the scaled figure (in long long: the product may not fit the
    Cost's int), the simulator charges it, and the predictor agrees cycle for cycle; a kernel
    the model does not name keeps its Cost= as written."""
    plat = PLATFORM.with_overrides(compute={"KerWin_u32": ComputeScale(250, 7)})
    runs = {}
    for cost, text in (("100", "AT_SIM_COMPUTE(257);"), ("W*H", "*250/100 + 7);")):
        with Model(plat) as m:
            SetL1MemorySize(2048)
            t = win_kernel(h=100, cost=cost)
            gen = tmp_path / cost.replace("*", "x")
            write_files(generate(m), str(gen))
        kernels = (gen / "ClockGen.c").read_text()
        assert text in kernels and "AT_SIM_COMPUTE(0);" in kernels   # KerInit_u32: Cost=0, not in the model
        if cost != "100":
            assert "(long long)" in kernels
        c = run_generated(gen, 100, platform=plat)
        assert c["cycles"] == t.predicted.cycles and c["compute_cycles"] == t.predicted["compute_cycles"]
        runs[cost] = (t, c)
    t, c = runs["100"]
    assert c["compute_cycles"] == t.ntiles * 257
    t, c = runs["W*H"]
    assert c["compute_cycles"] == 100 * 16 * 250 // 100 + 7 * t.ntiles   # tiles of whole lines: exact


@pytest.mark.parametrize("bad, match", [
    (dict(percent=0), r"ComputeScale.percent must be an int >= 1, got 0"),
    (dict(percent=1.5), r"ComputeScale.percent must be an int >= 1, got 1.5"),
    (dict(percent=100, per_call=-1), r"ComputeScale.per_call must be an int >= 0, got -1"),
])
def test_compute_scale_is_checked(bad, match):
    with pytest.raises(PlatformError, match=match):
        ComputeScale(**bad)


def test_platform_compute_entries_are_checked():
    with pytest.raises(PlatformError, match=r"platform 'gap8': compute maps basic-kernel names to ComputeScale, "
                                            r"got 'K': 2"):
        GAP8.with_overrides(compute={"K": 2})


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
        considered = candidates(m.kernels[kernel], solve_options(m, m.kernels[kernel]))
        step = max(1, len(considered) // 8)
        sample = considered[::step] + [chosen]
        cycles = []
        for i, t in enumerate(sample):
            m.tilings[kernel] = t
            gen = tmp_path / f"c{i}"
            write_files(generate(m), str(gen))
            prog = host_harness.build(gen, sources=[EXAMPLES / name / s for s in ref.SOURCES],
                                      include_dirs=[EXAMPLES / name], platform=PLATFORM)
            args = ref.make_args(np.random.default_rng(0))
            cycles.append(prog.call(ref.KERNEL, **args)["cycles"])
            for out, value in ref.expected(args).items():
                np.testing.assert_array_equal(args[out], value)
    assert cycles[-1] == min(cycles), f"chosen {cycles[-1]} cycles, considered {cycles[:-1]}"


def test_time_objective_finds_the_exhaustive_optimum_where_the_estimate_misses_pipeline_bubbles():
    """A DMA-bound add of 84 lines of 32 shorts: the quick estimate charges the reads' and the
    compute's totals, not each iteration's larger, so it ranks 4 tiles of 27 lines first (2042
    estimated, 2224 predicted). The time objective keeps predicting, in estimate order, the
    candidates estimated below its best prediction so far, and ends on the exhaustive search's
    tiling (5 tiles of 19 lines, 2090 cycles); the first four estimates alone give 2136."""
    s16 = "short * __restrict__"
    with Model() as m:
        SetL1MemorySize(48000)
        LibKernel("Add", CALL_PARALLEL, CArgs(TCArg(s16, "A"), TCArg(s16, "B"), TCArg(s16, "O"),
                                              TCArg("unsigned", "W"), TCArg("unsigned", "H")),
                  "Add_T", Cost="W*H*3/ncores + 20")
        UserKernel("AddLines", KernelDimensions(1, 32, 84, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,
                   CArgs(TCArg(s16, "A"), TCArg(s16, "B"), TCArg(s16, "O")),
                   Calls(Call("Add", LOC_INNER_LOOP, Bindings(
                       K_Arg("A", KER_ARG_TILE), K_Arg("B", KER_ARG_TILE), K_Arg("O", KER_ARG_TILE),
                       K_Arg("A", KER_ARG_TILE_W), K_Arg("A", KER_ARG_TILE_H)))),
                   KerArgs(KerArg("A", OBJ_IN_DB, 32, 84, 2, 0, 0, 0, "A", 0),
                           KerArg("B", OBJ_IN_DB, 32, 84, 2, 0, 0, 0, "B", 0),
                           KerArg("O", OBJ_OUT_DB, 32, 84, 2, 0, 0, 0, "O", 0)))
        options = solve_options(m, m.kernels["AddLines"])
        best = min(candidates(m.kernels["AddLines"], dataclasses.replace(options, objective="time_exhaustive")),
                   key=lambda t: t.predicted.cycles)
        chosen = m.tilings["AddLines"]
    assert chosen.predicted.cycles == best.predicted.cycles == 2090
    assert [(a.tile_h(), a.tile_h(last=True)) for a in chosen.args] == [(19, 8)] * 3



def _pw6(l1: int) -> tuple:
    """(user kernel, solve options) of a 1x1 convolution of 64 to 128 features on 8x8, 8-bit
    (MobileNet's PW6) under an L1 budget of ``l1`` bytes."""
    with Model() as m:
        SetL1MemorySize(l1)
        LoadCNNLibrary()
        CNN_ConvolutionPoolReLU("PW", 0, 1, 1, 1, 1, 7, 7, 7, 7, 0, 0, 0, 0, 64, 128, 8, 8,
                                KOP_CONV_DP, 1, 1, 1, 1, 1, 1, 0, KOP_NONE, 0, 0, 0, 0, 0, 0, 0, KOP_RELU)
        uk = m.kernels["PW"]
        return uk, solve_options(m, uk)


def test_time_objective_predicts_each_distinct_tiling_once():
    """A 1x1 convolution of 64 to 128 features on 8x8 (MobileNet's PW6) at 64 KiB: its filter
    may be partially promoted along the input features (D0). Where D0 is one chunk, that
    promotion changes nothing (same transfers, same L1), so the choice is the same tiling as
    without it: the time objective estimates and predicts it once. Before, the two forms took
    half of the exact predictions of every such layer (same cycles, in pairs). Likewise where
    the loop that would re-read the filter (the lines, T0) runs once: the promotion saves no
    transfer, and only the choice without it is estimated."""
    kg, ev, scored = objectives._candidates(*_pw6(65536))
    dims = {s.space: s.dim for s in kg.spaces}
    estimated = [c for c, e in ev.estimates.items() if e is not None]
    assert any(c.partial for c in estimated)
    for c in estimated + [t.choice for t in scored]:
        sizes = dict(c.sizes)
        assert all(sizes.get(sp, 0) < dims[sp] for _, sp in c.partial), c
        assert all(any(lp not in sizes or sizes[lp] < dims[lp] for lp in ev.refetch[p]) for p in c.partial), c
    assert {lp for loops in ev.refetch.values() for lp in loops} == {KER_ITER_TILE0}
    tiled = {t.choice: t for t in scored if not t.promoted}.values()   # (the original's choice may repeat one)
    assert len({(t.choice.sizes, t.predicted.cycles, t.l1_bytes, t.traffic) for t in tiled}) == len(tiled)


def test_coarse_grid_spreads_over_the_sizes_that_fit():
    """Under a tight L1 budget (the 1x1 convolution above at 2 KiB) most sizes of each space do
    not fit even with the other spaces at their smallest. The time objective's coarse grid
    spreads its tile counts over the sizes that do: fewer points, more of them feasible, than
    the same spread over every size."""
    uk, options = _pw6(2048)
    kg = kernel_geometry(uk)
    ev = objectives._Evaluator(kg, options, objectives.OBJECTIVES["time"])
    spaces, full = grid(kg, thinned=False)
    dims, cores = [s.dim for s in spaces], PLATFORM.cores
    fitting = objectives._fitting(ev, spaces, full, False)
    assert all(set(f) <= set(v) for f, v in zip(fitting, full)) and fitting != full
    spread, over_all = objectives._coarse(fitting, dims, cores), objectives._coarse(full, dims, cores)
    points = [list(objectives.choices(kg, g, spaces)) for g in (spread, over_all)]
    feasible = [[c for c in p if ev.fits(c)] for p in points]
    assert len(points[0]) < len(points[1]) and len(feasible[0]) > len(feasible[1])


# ---------------------------------------------------------------------------------------------
# L3-homed arguments: double vs triple L2 staging


L3_CASE = dict(w=16, h=32, item=4, ov=0, vertical=False, nip=3, nop=1, db=True, promote=False, in3d=True,
               cons=0, pref=0, l3={"In", "Out"}, stage=None)


def _run_win(model, tiling, tmp_path, name):
    from .test_property_e2e import DTYPES, KERNELS, _out_shape, reference

    model.tilings["Win"] = tiling
    gen = tmp_path / name
    write_files(generate(model), str(gen))
    prog = host_harness.build(gen, sources=[KERNELS / "WinKernels.c"], include_dirs=[KERNELS], platform=PLATFORM)
    c = L3_CASE
    rng = np.random.default_rng(1)
    inp = rng.integers(0, 1 << 20, size=(c["nip"], c["h"], c["w"]), dtype=DTYPES[4])
    wt = rng.integers(0, 7, size=c["nip"] * c["nop"], dtype=np.uint32)
    bias = rng.integers(0, 1 << 20, size=c["nop"], dtype=np.uint32)
    out = np.full(_out_shape(c), 0xA5A5A5A5, dtype=np.uint32)
    counters = prog.call("Win", In=inp, Out=out, Wt=wt, Bias=bias)
    np.testing.assert_array_equal(out, reference(c, inp, wt, bias))
    return counters


def test_triple_staging_chosen_where_the_model_shows_a_gain_and_the_simulator_agrees(tmp_path):
    """In is re-read per input plane from L3; its third L2 slot lets the micro-DMA run further
    ahead of the writes of Out that share the engine."""
    from .test_property_e2e import declare

    with Model() as m:
        chosen = declare(dict(L3_CASE, objective="time"), 2000)
        assert chosen.arg("In").stage == 3 and chosen.arg("Out").stage == 2
        double = with_stages(chosen, {"In": 2, "Out": 2})
        double = reschedule(double, m.libs, m.platform)
        assert chosen.predicted.cycles * (1 + TRIPLE_MIN_GAIN) < double.predicted.cycles
        assert chosen.l2_bytes > double.l2_bytes
        sim_triple = _run_win(m, chosen, tmp_path, "triple")
        sim_double = _run_win(m, double, tmp_path, "double")
    assert sim_triple["cycles"] == chosen.predicted.cycles and sim_double["cycles"] == double.predicted.cycles
    assert sim_double["cycles"] - sim_triple["cycles"] == double.predicted.cycles - chosen.predicted.cycles > 0
    assert sim_triple["l3_to_l2"] == sim_double["l3_to_l2"] == chosen.traffic_l3_in


def test_double_staging_kept_when_triple_gains_too_little():
    """MatAdd streaming from L3 is uDMA-bound in steady state: a third slot buys nothing."""
    with Model():
        SetL1MemorySize(51200)
        lib = "Word32 * __restrict__"
        LibKernel("MatSumPar", CALL_PARALLEL, CArgs(TCArg(lib, "In1"), TCArg(lib, "In2"), TCArg(lib, "Out"),
                                                    TCArg("unsigned int", "W"), TCArg("unsigned int", "H")),
                  "MatrixAdd_Arg_T", Cost="4*((W*H + ncores - 1)/ncores) + 20")
        t = UserKernel("MatAdd", KernelDimensions(1, 200, 300, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,
                       CArgs(TCArg(lib, "In1"), TCArg(lib, "In2"), TCArg(lib, "Out")),
                       Calls(Call("MatSumPar", LOC_INNER_LOOP, Bindings(
                           K_Arg("In1", KER_ARG_TILE), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
                           K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H)))),
                       KerArgs(KerArg("In1", OBJ_IN_DB_L2DB, 200, 300, 4, 0, 0, 0, "In1", 0),
                               KerArg("In2", OBJ_IN_DB_L2DB, 200, 300, 4, 0, 0, 0, "In2", 0),
                               KerArg("Out", OBJ_OUT_DB_L2DB, 200, 300, 4, 0, 0, 0, "Out", 0)))
        assert [a.stage for a in t.args] == [2, 2, 2] and t.l2_bytes == 48000
        assert t.predicted["udma_busy_cycles"] > 0.99 * t.predicted.cycles  # the micro-DMA never idles
