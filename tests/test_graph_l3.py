"""Graphs whose activations do not fit L2: the planner spills some to the graph's L3 RAM area
(``<L3>`` allocated by ``<G>_Construct``) and the nodes touching them call variants of their user
kernels tiled with those arguments in L3 (``<Kernel>_L3_<node>``, L2 staging in the node's slot of
the dynamic L2 area). The same five-node graph (a chain with a residual join and two constants) is
generated under L2 budgets from generous to tight and run on the simulated chip: output equal to
numpy every time, L3 traffic 0 when generous and rising as the budget shrinks."""

from __future__ import annotations

import json

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import HarnessError
from autotiler.graph.lower import plan_graph
from autotiler.graph.plan import PlanError
from autotiler.platforms import get_platform

from .conftest import ROOT
from .graph_helpers import const, inp, lib_add, local, mat_add, out, write_bin

MATADD = ROOT / "examples" / "matrix_add"
W, H = 32, 16
ITEMS = W * H
B = 4 * ITEMS              # bytes of every symbol (2048)
SENTINEL = -7
L1 = 1024
L3 = 1 << 20
# generous: everything in L2, constants promoted; 4 B: constants in flash, activations in L2;
# 3 B: two activations in L3; 2 B: all four in L3 (only the staging slots and the prefetched constants in L2)
BUDGETS = (64 * 1024, 4 * B, 3 * B, 2 * B)


def declare(tmp_path, l2: int, l3: int = L3) -> None:
    """T1 = In + W1; T2 = T1 + W2; T3 = T2 + T2; T4 = T3 + T1 (residual); Out = T4 + W2."""
    SetUsedFilesNames(0, 1, "MatAddBasicKernels.h")
    SetGeneratedFilesNames("GraphKernels.c", "GraphKernels.h")
    SetMemorySizes(L1, l2, l3)
    lib_add()
    for k in ("K1", "K2", "K3", "K4", "K5"):
        mat_add(k, W, H)
    w1 = write_bin(tmp_path / "w1.bin", np.arange(ITEMS))
    w2 = write_bin(tmp_path / "w2.bin", 2 * np.arange(ITEMS) - 5)
    CreateGraph("G", CArgs(inp(), const("W1", w1), const("W2", w2), out()),
                CArgs(local("T1"), local("T2"), local("T3"), local("T4")))
    AddNode("K1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "W1", 0), GNodeArg(GNA_OUT, "T1", 0)))
    AddNode("K2", Bindings(GNodeArg(GNA_IN, "T1", 0), GNodeArg(GNA_IN, "W2", 0), GNodeArg(GNA_OUT, "T2", 0)))
    AddNode("K3", Bindings(GNodeArg(GNA_IN, "T2", 0), GNodeArg(GNA_IN, "T2", 0), GNodeArg(GNA_OUT, "T3", 0)))
    AddNode("K4", Bindings(GNodeArg(GNA_IN, "T3", 0), GNodeArg(GNA_IN, "T1", 0), GNodeArg(GNA_OUT, "T4", 0)))
    AddNode("K5", Bindings(GNodeArg(GNA_IN, "T4", 0), GNodeArg(GNA_IN, "W2", 0), GNodeArg(GNA_OUT, "Out", 0)))
    CloseGraph()


def reference(x: np.ndarray) -> np.ndarray:
    w1, w2 = np.arange(ITEMS), 2 * np.arange(ITEMS) - 5
    t1 = x.ravel() + w1
    t2 = t1 + w2
    t4 = (t2 + t2) + t1
    return (t4 + w2).astype(np.int32)


def plan_for(tmp_path, l2: int, l3: int = L3):
    with Model() as m:
        declare(tmp_path, l2, l3)
        return plan_graph(m, m.graphs["G"], l2)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{budget: (plan, generated C, counters of a run, memory(AT_L3_MEM))}"""
    out = {}
    for l2 in BUDGETS:
        tmp = tmp_path_factory.mktemp(f"l2_{l2}")
        with Model() as m:
            declare(tmp, l2)
            plan = plan_graph(m, m.graphs["G"], l2)
            files = generate(m)
        write_files(files, str(tmp / "gen"))
        prog = host_harness.build(tmp / "gen", sources=[MATADD / "MatAddBasicKernels.c"], include_dirs=[MATADD])
        g = prog.graph("G")
        g.construct()
        x = (np.arange(ITEMS, dtype=np.int32) * 3 - 40).reshape(1, H, W)
        counters = []
        for _ in range(2):   # the L3 area and the device stay usable from run to run
            got = np.full((1, H, W), SENTINEL, dtype=np.int32)
            counters.append(g.run(In=x, Out=got))
            np.testing.assert_array_equal(got.ravel(), reference(x))
        l3 = g.memory("AT_L3_MEM")
        g.destruct()   # frees the L3 area and closes the RAM: nothing left (else HarnessError)
        assert counters[0]["l3_to_l2"] == counters[1]["l3_to_l2"]
        out[l2] = (plan, files["GraphKernels.c"], counters[0], l3, json.loads(files["GraphKernels.json"]))
    return out


def test_output_and_l3_traffic_per_budget(runs):
    traffic = []
    for l2 in BUDGETS:
        plan, _, c, l3, _ = runs[l2]
        moved = c["l3_to_l2"] + c["l2_to_l3"]
        traffic.append(moved)
        assert plan.static_bytes + plan.dyn.peak <= l2          # L2 within budget
        assert c["peak_l2"] <= l2 + 2 * B                       # + the application's In and Out
        assert l3 == plan.l3_bytes                              # memory(AT_L3_MEM) is the L3 area
        assert moved == plan.l3_traffic                         # the plan's count is the simulator's
        spilled = [s.name for s in plan.symbols if s.area == "l3"]
        print(f"\nL2 {l2:>6} B: static {plan.static_bytes} + dynamic {plan.dyn.peak} B "
              f"(lower bound {plan.dyn.lower_bound} B, ratio {plan.dyn.ratio:.3f}), L3 {plan.l3_bytes} B "
              f"{spilled}, L3 traffic {moved} B, flash->L2 {c['flash_to_l2']} B, {c['cycles']} cycles")
    assert traffic[0] == traffic[1] == 0
    assert all(a <= b for a, b in zip(traffic, traffic[1:])) and traffic[-1] > traffic[2] > 0


def test_spilled_plan_uses_kernel_variants(runs):
    plan, text, _, _, manifest = runs[3 * B]
    assert {s.name for s in plan.symbols if s.area == "l3"} == {"T1", "T3"}
    assert all(s.area == "flash" for s in plan.symbols if s.name in ("W1", "W2"))   # constants stay in flash
    for v in plan.variants:
        node = plan.nodes[v.node]
        assert v.name == f"{node}_L3_{v.node}" and f"void {v.name}(" in text
        assert plan.dyn.offsets[f"@node{v.node}"] == v.offset and v.staging <= plan.levels.extra[v.node]
        assert f"(L2_Memory_Dyn + {v.offset})" in text     # the staging is in the node's slot
        assert manifest["tilings"][v.name]["l1_bytes"] == v.tiling.l1_bytes   # listed with the kernels' tilings
    assert "L3_Memory = (AT_HYPERRAM_POINTER) AT_HYPERRAM_ALLOC(&HyperRam, 4096);" in text
    assert "if (L3_Memory == 0) return 2;" in text and "AT_HYPERRAM_CLOSE(&HyperRam);" in text
    assert "((Word32 * __restrict__) (L3_Memory + 0)) /* Out: T1, L3 RAM */" in text
    generous, gtext, *_ = runs[BUDGETS[0]]
    assert generous.l3 is None and not generous.variants and "L3_Memory" not in gtext


def test_construct_fails_with_code_2_when_l3_ram_is_too_small(tmp_path):
    with Model() as m:
        declare(tmp_path, 2 * B)
        files = generate(m)
    write_files(files, str(tmp_path / "gen"))
    prog = host_harness.build(tmp_path / "gen", sources=[MATADD / "MatAddBasicKernels.c"], include_dirs=[MATADD],
                              platform=get_platform("gap8", l3_ram_size=1024))
    g = prog.graph("G")
    with pytest.raises(HarnessError, match=r"returned 2: an L3 allocation failed \(L3 RAM: 6144 bytes asked; "
                                           r"L3 holds 1024 bytes\)"):
        g.construct()
    assert not g.constructed


def test_l3_area_beyond_the_model_l3_is_a_plan_error(tmp_path):
    with pytest.raises(PlanError, match="L3 is .* bytes short") as err:
        plan_for(tmp_path, 2 * B, l3=1024)
    assert err.value.level == "L3"


def test_l2_too_small_even_with_every_activation_in_l3(tmp_path):
    with pytest.raises(PlanError, match="with every spillable buffer in L3") as err:
        plan_for(tmp_path, B)
    assert err.value.level == "L2"


def _warm_program(tmp_path, mode):
    with Model() as m:
        AT_SetGraphCtrl(AT_GRAPH_WARM_CONSTRUCT, AT_OPT_VAL(mode))
        declare(tmp_path, 2 * B)
        files = generate(m)
    write_files(files, str(tmp_path / "gen"))
    prog = host_harness.build(tmp_path / "gen", sources=[MATADD / "MatAddBasicKernels.c"], include_dirs=[MATADD])
    return files["GraphKernels.c"], prog.graph("G")


def _run_checked(g, **kw):
    x = (np.arange(ITEMS, dtype=np.int32) * 5 - 11).reshape(1, H, W)
    got = np.full((1, H, W), SENTINEL, dtype=np.int32)
    counters = g.run(In=x, Out=got, **kw)
    np.testing.assert_array_equal(got.ravel(), reference(x))
    return counters


@pytest.mark.parametrize("mode", [WARM_L1, WARM_L2_DYN_L1])
def test_warm_l1_and_l2_dyn_keep_the_l3_area_between_warm_cycles(tmp_path, mode):
    text, g = _warm_program(tmp_path, mode)
    assert "if (L3_Memory == 0) return 2;" in text
    g.construct()
    first = _run_checked(g)
    g.destruct(warm=mode)                # L1 (and dynamic L2) freed; the L3 area and the RAM stay
    assert {"L3", "ram"} <= g.live and "L1" not in g.live
    g.construct(warm=mode)
    assert _run_checked(g)["l3_to_l2"] == first["l3_to_l2"] > 0
    assert g.memory("AT_L3_MEM") == plan_for(tmp_path, 2 * B).l3_bytes
    g.destruct()                         # everything, the L3 RAM closed: nothing left


def test_warm_all_allocates_and_frees_the_l3_area_on_its_flags(tmp_path):
    text, g = _warm_program(tmp_path, WARM_ALL)
    assert "(void)DoL3Alloc;" not in text and "(void)DoL3Dealloc;" not in text
    init = text[text.index("if (DoL3Init) {"):text.index("if (DoL2DynAlloc) {")]
    assert "AT_HYPERRAM_OPEN(&HyperRam" in init and "AT_HYPERRAM_ALLOC" not in init
    alloc = text[text.index("if (DoL3Alloc) {"):]
    assert alloc.index("AT_HYPERRAM_ALLOC(&HyperRam, ") < alloc.index("}")
    with pytest.raises(HarnessError, match=r"allocates the L3 RAM area, which needs the L3 RAM open \(DoL3Init\)"):
        g.construct(DoL3Init=0)
    g.construct()
    first = _run_checked(g)
    g.destruct(DoL3Dealloc=1, DoL3DeInit=0, DoL1Dealloc=0, DoL2Dealloc=0, DoL2DynDealloc=0)
    with pytest.raises(HarnessError, match=r"does not hold the L3 RAM area .*construct\(DoL3Alloc=1\)"):
        _run_checked(g)
    g.construct(DoL3Alloc=1, DoL3Init=0, DoL1Alloc=0, DoL2Alloc=0, DoL2DynAlloc=0, DoPromotion=0)
    assert _run_checked(g)["l3_to_l2"] == first["l3_to_l2"] > 0
    g.destruct()
