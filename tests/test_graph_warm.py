"""Warm constructors (AT_GRAPH_WARM_CONSTRUCT): the guide's Construct/Destruct/runner signatures of
WARM_L1, WARM_L2_DYN_L1 and WARM_ALL, and construct/destruct sequences of each mode run on the
simulated chip with runs between them (outputs equal numpy, what the C freed really freed); what
the application must give (the WARM_ALL runner's L1) refused when missing or too small; calls
that would allocate twice, free what is not held or run without an area refused before any C runs."""

from __future__ import annotations

import re

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import HarnessError

from .conftest import ROOT
from .graph_helpers import ITEMS, declare_residual_graph, residual_reference

MATADD = ROOT / "examples" / "matrix_add"
B = 4 * ITEMS
GENEROUS, TIGHT = 64 * 1024, 3 * B   # both constants promoted / one fetched from flash at each run
MODES = {"WARM_L1": WARM_L1, "WARM_L2_DYN_L1": WARM_L2_DYN_L1, "WARM_ALL": WARM_ALL}
L1_LEVEL, L2_LEVEL = 1, 2


def declare(tmp_path, l2: int, warm) -> None:
    declare_residual_graph(tmp_path, l2, warm)


def generate_graph(tmp_path, l2: int, warm):
    with Model() as m:
        declare(tmp_path, l2, warm)
        files = generate(m)
    gen = tmp_path / f"gen{l2}_{warm}"
    write_files(files, str(gen))
    return files, gen


def build(gen, **kw):
    return host_harness.build(gen, sources=[MATADD / "MatAddBasicKernels.c"], include_dirs=[MATADD], **kw)


def run_once(graph, seed: int = 0, **kw) -> dict:
    x = (np.arange(ITEMS, dtype=np.int32) * 3 - 40 + seed).reshape(1, 4, 8)
    got = np.full((1, 4, 8), -7, dtype=np.int32)
    counters = graph.run(In=x, Out=got, **kw)
    np.testing.assert_array_equal(got.ravel(), residual_reference(x))
    return counters


def used(g, level: int) -> int:
    """Bytes of ``level`` the simulator holds now (what the constructor left allocated)."""
    return int(g._program._lib.at_sim_level_used(level))


@pytest.fixture(scope="module")
def progs(tmp_path_factory):
    """{(mode name, "generous" | "tight"): (files, program)}, built on demand."""
    cache = {}

    def get(mode: str, which: str = "generous"):
        if (mode, which) not in cache:
            tmp = tmp_path_factory.mktemp(f"{mode}_{which}")
            files, gen = generate_graph(tmp, GENEROUS if which == "generous" else TIGHT, MODES.get(mode))
            cache[mode, which] = files, build(gen)
        return cache[mode, which]
    return get


@pytest.fixture
def graph(progs):
    """``graph(mode, which)``: the program's graph G, destructed at the end of the test if left constructed."""
    made = []

    def get(mode: str, which: str = "generous"):
        g = progs(mode, which)[1].graph("G")
        made.append(g)
        return g
    yield get
    for g in made:
        if g.constructed:
            g._program._lib.at_sim_end_session()
            g._set_session(False)


# ----------------------------------------------------------------------------------------------
# The option and the generated signatures


def test_warm_option_values_are_validated():
    with Model() as m:
        for bad in (4, -1, True, "WARM_ALL"):
            with pytest.raises(ModelError, match=r"AT_GRAPH_WARM_CONSTRUCT, \.\.\.\): the value must be one of "
                               r"WARM_DISABLED \(0\), WARM_L1 \(1\), WARM_L2_DYN_L1 \(2\), WARM_ALL \(3\)"):
                AT_SetGraphCtrl(AT_GRAPH_WARM_CONSTRUCT, bad)
        AT_SetGraphCtrl(AT_GRAPH_WARM_CONSTRUCT, AT_OPT_VAL(WARM_L2_DYN_L1))
        assert m.graph_ctrl[AT_GRAPH_WARM_CONSTRUCT] == WARM_L2_DYN_L1


SIGNATURES = {
    None: ("int G_Construct(void)", "int G_Destruct(void)", "Word32 * __restrict__ Out\n\t)"),
    "WARM_L1": ("int G_Construct(int Warm)", "int G_Destruct(int Warm)", "Word32 * __restrict__ Out\n\t)"),
    "WARM_L2_DYN_L1": ("int G_Construct(int Warm)", "int G_Destruct(int Warm)", "Word32 * __restrict__ Out\n\t)"),
    "WARM_ALL": ("int G_Construct(int DoL1Alloc, int DoL2Alloc, int DoL2DynAlloc, int DoL3Init, int DoL3Alloc, "
                 "int DoPromotion)",
                 "int G_Destruct(int DoL1Dealloc, int DoL2Dealloc, int DoL2DynDealloc, int DoL3Dealloc, int DoL3DeInit)",
                 "Word32 * __restrict__ Out,\n\tvoid * _L1_Memory\n\t)"),
}


@pytest.mark.parametrize("mode", list(SIGNATURES))
def test_signatures_of_each_mode_in_the_c_and_the_header(mode, tmp_path):
    files, _ = generate_graph(tmp_path, GENEROUS, MODES.get(mode))
    construct, destruct, runner_end = SIGNATURES[mode]
    c, h = files["GraphKernels.c"], files["GraphKernels.h"]
    for text, end in ((c, "\n{"), (h, ";")):
        assert construct + end in text and destruct + end in text
        assert "int G(\n\tWord32 * __restrict__ In,\n\t" + runner_end + ("\n{" if end == "\n{" else end) in text
    assert ('"warm": ' + str(MODES.get(mode, 0))) in files["GraphKernels.json"]


def test_warm_bodies_follow_the_guide(tmp_path):
    l1 = generate_graph(tmp_path, GENEROUS, WARM_L1)[0]["GraphKernels.c"]
    # Warm != 0: L1 only; Warm == 0: one L2 area (static then dynamic), the dynamic one after it
    assert re.search(r"if \(Warm\) \{\n\t\t/\* L1: .* \*/\n\t\tL1_Memory = \(AT_L1_POINTER\) AT_L1_ALLOC\(0, \d+\);\n\t\t"
                     r"if \(L1_Memory == 0\) return 4;\n\t\treturn 0;\n\t\}", l1)
    assert f"AT_L2_ALLOC(0, {4 * B});" in l1 and f"L2_Memory_Dyn = L2_Memory + {2 * B};" in l1
    dyn = generate_graph(tmp_path, GENEROUS, WARM_L2_DYN_L1)[0]["GraphKernels.c"]
    assert re.search(r"\t\tif \(Warm==2\) \{\n(\t\t\t.*\n)*\t\t\tL2_Memory_Dyn = \(AT_L2_POINTER\) "
                     r"AT_L2_ALLOC\(0, \d+\);\n\t\t\tif \(L2_Memory_Dyn == 0\) return 3;\n\t\t\}", dyn)
    assert re.search(r"\t\tif \(Warm==2\) \{\n\t\t\tAT_L2_FREE\(0, L2_Memory_Dyn, \d+\);\n\t\t\}", dyn)
    all_ = generate_graph(tmp_path, GENEROUS, WARM_ALL)[0]["GraphKernels.c"]
    for flag in ("DoL3Init", "DoL2Alloc", "DoL2DynAlloc", "DoL1Alloc", "DoPromotion", "DoL2Dealloc",
                 "DoL2DynDealloc", "DoL1Dealloc", "DoL3DeInit"):
        assert f"\tif ({flag}) {{\n" in all_
    assert "(void)DoL3Alloc;" in all_ and "(void)DoL3Dealloc;" in all_   # no L3 area in this graph
    assert "\tif (_L1_Memory) L1_Memory = (AT_L1_POINTER) _L1_Memory;\n" in all_
    assert "\tif (_L1_Memory) L1_Memory = 0;\n\treturn 0;\n}" in all_


def test_default_mode_is_unchanged_and_takes_no_warm_argument(graph):
    g = graph("default")
    assert g.warm_mode == "WARM_DISABLED"
    with pytest.raises(HarnessError, match=r"has no warm constructor .*construct\(\) takes no argument"):
        g.construct(warm=1)
    g.construct()
    with pytest.raises(HarnessError, match="only a WARM_ALL runner takes the application's L1"):
        run_once(g, L1=True)
    run_once(g)
    g.destruct()
    assert not g.constructed


# ----------------------------------------------------------------------------------------------
# WARM_L1


def test_warm_l1_frees_and_allocates_l1_only_between_runs(graph):
    g = graph("WARM_L1")
    sizes = g.spec.sizes
    g.construct()                                  # G_Construct(0): everything
    assert g.counters["flash_to_l2"] == 2 * B
    assert used(g, L2_LEVEL) == sizes["L2"] + sizes["L2_DYN"] and used(g, L1_LEVEL) == sizes["L1"] > 0
    run_once(g)
    g.destruct(warm=1)                             # G_Destruct(1): L1 only
    assert g.constructed and g.live == g.parts - {"L1"}
    assert used(g, L1_LEVEL) == 0 and used(g, L2_LEVEL) == sizes["L2"] + sizes["L2_DYN"]
    with pytest.raises(HarnessError, match=r"cannot run: it does not hold L1") as err:
        run_once(g)
    assert "construct(warm=1)" in err.value.hint
    with pytest.raises(HarnessError, match=r"G_Destruct\(0\) frees L1, which the graph does not hold"):
        g.destruct()
    for seed in range(2):                          # L1 again, and the constructed L2 is still good
        g.construct(warm=1)
        assert g.counters["flash_to_l2"] == 0 and used(g, L1_LEVEL) == sizes["L1"]
        assert run_once(g, seed)["flash_to_l2"] == 0
        g.destruct(warm=1)
    g.construct(warm=1)
    with pytest.raises(HarnessError, match=r"G_Construct\(1\) allocates L1, which the graph already holds"):
        g.construct(warm=1)
    with pytest.raises(HarnessError, match="is already constructed"):
        g.construct()
    g.destruct()                                   # G_Destruct(0): everything, nothing left
    assert not g.constructed and used(g, L2_LEVEL) == 0


def test_warm_l1_argument_checks(graph):
    g = graph("WARM_L1")
    with pytest.raises(HarnessError, match=r"takes warm=N only"):
        g.construct(DoL1Alloc=1)
    with pytest.raises(HarnessError, match=r"construct\(warm=\.\.\.\) expects an int >= 0"):
        g.construct(warm=-1)
    g.construct(warm=0)
    with pytest.raises(HarnessError, match="only a WARM_ALL runner"):
        run_once(g, L1=True)
    g.destruct(warm=0)


# ----------------------------------------------------------------------------------------------
# WARM_L2_DYN_L1


def test_warm_l2_dyn_l1_frees_dynamic_l2_with_warm_2(graph):
    g = graph("WARM_L2_DYN_L1", "tight")           # one constant promoted, one fetched into dynamic L2
    sizes = g.spec.sizes
    g.construct()
    assert g.counters["flash_to_l2"] == B
    assert run_once(g)["flash_to_l2"] == B
    g.destruct(warm=2)                             # L1 and dynamic L2
    assert g.live == {"flash", "L2", "promoted"}
    assert used(g, L2_LEVEL) == sizes["L2"] and used(g, L1_LEVEL) == 0
    with pytest.raises(HarnessError, match=r"does not hold dynamic L2, L1") as err:
        run_once(g)
    assert "construct(warm=2)" in err.value.hint
    g.construct(warm=1)                            # L1 only: dynamic L2 still missing
    assert used(g, L2_LEVEL) == sizes["L2"]
    with pytest.raises(HarnessError, match=r"does not hold dynamic L2 \(construct\(warm=2\)"):
        run_once(g)
    g.destruct(warm=1)
    g.construct(warm=2)
    assert used(g, L2_LEVEL) == sizes["L2"] + sizes["L2_DYN"] and used(g, L1_LEVEL) == sizes["L1"]
    assert run_once(g, 5)["flash_to_l2"] == B      # the fetched constant lands in the new dynamic L2
    with pytest.raises(HarnessError, match=r"G_Construct\(2\) allocates dynamic L2, L1, which the graph already"):
        g.construct(warm=2)
    g.destruct(warm=1)
    with pytest.raises(HarnessError, match=r"G_Destruct\(2\) frees L1, which the graph does not hold"):
        g.destruct(warm=2)
    g.construct(warm=1)
    run_once(g, 9)
    g.destruct()
    assert not g.constructed


def test_warm_construct_failure_names_the_area_and_frees_everything(progs):
    _, prog = progs("WARM_L2_DYN_L1")
    g = prog.graph("G")
    g.construct()
    g.destruct(warm=2)
    # take the L2 the dynamic area needs, through the simulator, so that Construct(2) fails with 3
    lib = prog._lib
    cap, held = lib.at_sim_level_capacity(L2_LEVEL), used(g, L2_LEVEL)
    lib.at_sim_persist(1)
    assert lib.at_sim_alloc(L2_LEVEL, cap - held, b"the application's L2") != prog._ffi.NULL
    lib.at_sim_persist(0)
    with pytest.raises(HarnessError, match=re.escape(
            f"G_Construct(2) returned 3: an L2 allocation failed (dynamic {g.spec.sizes['L2_DYN']} bytes asked; "
            f"L2 holds {cap} bytes) (the harness freed what the graph held")):
        g.construct(warm=2)
    assert not g.constructed and used(g, L2_LEVEL) == 0
    g.construct()
    run_once(g)
    g.destruct()


# ----------------------------------------------------------------------------------------------
# WARM_ALL


def test_warm_all_runner_takes_the_applications_l1(graph):
    g = graph("WARM_ALL")
    need = g.memory("AT_L1_MEM")
    assert need == g.spec.sizes["L1"] > 0
    g.construct(DoL1Alloc=0)
    assert g.live == g.parts - {"L1"} and used(g, L1_LEVEL) == 0
    with pytest.raises(HarnessError, match=r"cannot run: it does not hold L1") as err:
        run_once(g)
    assert "DoL1Alloc=1" in err.value.hint and "L1=True" in err.value.hint
    with pytest.raises(HarnessError, match=re.escape(f"the application's L1 (L1={need - 4} bytes) is too small: "
                                                     f"the graph's user kernels need memory('AT_L1_MEM') = {need}")):
        run_once(g, L1=need - 4)
    with pytest.raises(HarnessError, match=r"run\(L1=\.\.\.\) expects None, True"):
        run_once(g, L1="yes")
    assert run_once(g, L1=True)["peak_l1"] == need           # the harness allocated memory(L1) bytes
    assert run_once(g, 3, L1=need + 64)["peak_l1"] == need + 64
    assert used(g, L1_LEVEL) == 0                              # the application's L1 lived for the run only
    g.destruct(DoL1Dealloc=0)
    assert not g.constructed


def test_warm_all_runner_with_null_uses_the_constructors_l1(graph):
    g = graph("WARM_ALL", "tight")
    g.construct()
    assert run_once(g)["flash_to_l2"] == B
    with pytest.raises(HarnessError, match=r"the constructor's L1 is allocated.*runner resets it"):
        run_once(g, L1=True)
    g.destruct()


def test_warm_all_constructs_and_destructs_area_by_area(graph):
    g = graph("WARM_ALL")
    sizes = g.spec.sizes
    with pytest.raises(HarnessError, match=r"copies the promoted constants .*needs the flash open \(DoL3Init\)"):
        g.construct(DoL3Init=0)
    with pytest.raises(HarnessError, match=r"unknown construct flag\(s\) DoL4Alloc"):
        g.construct(DoL4Alloc=1)
    with pytest.raises(HarnessError, match=r"takes the flags DoL1Alloc, DoL2Alloc"):
        g.construct(warm=1)
    g.construct(DoL1Alloc=0, DoL2Alloc=1, DoL2DynAlloc=0, DoL3Init=1, DoL3Alloc=0, DoPromotion=0)
    assert g.live == {"flash", "L2"} and g.counters["flash_to_l2"] == 0 and used(g, L2_LEVEL) == sizes["L2"]
    with pytest.raises(HarnessError, match=r"does not hold dynamic L2, L1, the promoted constants") as err:
        run_once(g)
    assert err.value.hint == "construct(DoL2DynAlloc=1, DoL1Alloc=1, DoPromotion=1)"
    g.construct(DoL1Alloc=1, DoL2Alloc=0, DoL2DynAlloc=1, DoL3Init=0, DoPromotion=1)
    assert g.counters["flash_to_l2"] == 2 * B and g.live == g.parts
    run_once(g)
    g.destruct(DoL1Dealloc=1, DoL2Dealloc=0, DoL2DynDealloc=1, DoL3Dealloc=0, DoL3DeInit=0)   # between runs
    assert g.live == {"flash", "L2", "promoted"} and used(g, L2_LEVEL) == sizes["L2"] and used(g, L1_LEVEL) == 0
    g.construct(DoL2Alloc=0, DoL3Init=0, DoPromotion=0, DoL1Alloc=0)     # dynamic L2 back; L1 from the run
    run_once(g, 7, L1=True)
    with pytest.raises(HarnessError, match=r"frees L1, which the graph does not hold"):
        g.destruct()
    g.destruct(DoL1Dealloc=0, DoL3DeInit=0)
    assert g.constructed and g.live == {"flash"}
    g.destruct(DoL1Dealloc=0, DoL2Dealloc=0, DoL2DynDealloc=0)               # closes the flash: the end
    assert not g.constructed and used(g, L2_LEVEL) == 0


@pytest.mark.parametrize("mode", list(MODES))
def test_memory_reports_what_construct_allocated(mode, graph):
    g = graph(mode)
    g.construct()
    try:
        sizes = g.spec.sizes
        assert [g.memory(k) for k in ("L1", "L2", "L2_DYN", "L3", "L3_DYN")] == \
            [sizes["L1"], sizes["L2"], sizes["L2_DYN"], 0, 0]
        assert used(g, L1_LEVEL) == g.memory("L1") and used(g, L2_LEVEL) == g.memory("L2") + g.memory("L2_DYN")
    finally:
        g.destruct()


def test_warm_modes_do_not_change_the_runs_counters(progs):
    """The runner is the default one (WARM_ALL: with a NULL L1 pointer): same cycles, same traffic."""
    base = progs("default", "tight")[1].graph("G")
    base.construct()
    want = run_once(base)
    base.destruct()
    for mode in MODES:
        g = progs(mode, "tight")[1].graph("G")
        g.construct()
        got = run_once(g)
        g.destruct()
        assert {k: got[k] for k in ("cycles", "flash_to_l2", "l2_to_l1", "l1_to_l2")} == \
            {k: want[k] for k in ("cycles", "flash_to_l2", "l2_to_l1", "l1_to_l2")}, mode
