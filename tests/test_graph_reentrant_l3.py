"""A reentrant runner (-R) for a graph whose activations spill to L3 RAM (docs/graph.md
"Reentrant runner"): the spilled activations are a run's data, so they live in the context's
dynamic L3 (AllocCtxt's ``_L3_DynMemory``, allocated on the L3 RAM the constructor opens, Status 2
when it does not fit), ``<G>_Memory(AT_L3_DYN_MEM)`` reports it; the five-node graph of
tests/test_graph_l3.py under the tight budgets, suspended after every layer and resumed, equals
numpy and the uninterrupted run, with the plain runner's L3 traffic."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import HarnessError
from autotiler.graph.lower import plan_graph
from autotiler.platforms import get_platform

from .test_graph_l3 import ITEMS, MATADD, SENTINEL, B, H, W, declare, reference

N = 5
TIGHT = (3 * B, 2 * B)   # two activations in L3; all four in L3
TRAFFIC = ("l3_to_l2", "l2_to_l3", "flash_to_l2")


def program(tmp_path, l2: int, reentrant: bool = True, platform="gap8", **options):
    tmp_path.mkdir(parents=True, exist_ok=True)
    with Model() as m:
        if reentrant:
            assert TilerParseOptions(["model.py", "-R"]) == 0
        for ctrl, val in options.items():
            AT_SetGraphCtrl(globals()[ctrl], val)
        declare(tmp_path, l2)
        plan = plan_graph(m, m.graphs["G"], l2)
        files = generate(m)
    write_files(files, str(tmp_path / "gen"))
    prog = host_harness.build(tmp_path / "gen", sources=[MATADD / "MatAddBasicKernels.c"], include_dirs=[MATADD],
                              platform=platform)
    return files, plan, prog


def data(seed: int = 0):
    x = (np.arange(ITEMS, dtype=np.int32) * 3 - 40 + seed).reshape(1, H, W)
    return x, np.full((1, H, W), SENTINEL, dtype=np.int32)


def total(calls, key):
    return sum(c[key] for c in calls)


@pytest.fixture(scope="module", params=TIGHT, ids=["3B", "2B"])
def built(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"reentrant_l3_{request.param}")
    files, plan, prog = program(tmp / "r", request.param)
    _, _, plain = program(tmp / "p", request.param, reentrant=False)
    return request.param, files, plan, prog, plain


@pytest.fixture
def graph(built):
    g = built[3].graph("G")
    g.construct()
    yield g
    if g.constructed:
        g.destruct()


def test_the_context_holds_the_dynamic_l3(built, graph):
    _, files, plan, _, _ = built
    c, h = files["GraphKernels.c"], files["GraphKernels.h"]
    assert plan.l3 is not None and plan.l3_bytes > 0
    assert "\tAT_HYPERRAM_POINTER L3_Memory_Dyn;" in h and "\tAT_HYPERRAM_T *HyperRam;" in h
    assert "AT_HYPERRAM_POINTER G_CtxtGetL3MemoryDynPointer(AT_CTXT_TYPE _Ctxt);" in h
    assert (f"Ctxt->L3_Memory_Dyn = (AT_HYPERRAM_POINTER) AT_HYPERRAM_ALLOC(Ctxt->HyperRam, {plan.l3_bytes});"
            in c)
    assert "if (Ctxt->L3_Memory_Dyn == 0) { *Status = 2; return Ctxt; }" in c
    assert "if (Descr->Ram == 0) Descr->Ram = (void *) &HyperRam;" in c
    assert "AT_HYPERRAM_OPEN((AT_HYPERRAM_T *) Descr->Ram, &RamConf, &ErrorL3);" in c
    assert "AT_HYPERRAM_CLOSE((AT_HYPERRAM_T *) Descr->Ram);" in c
    assert f"AT_HYPERRAM_FREE(Ctxt->HyperRam, Ctxt->L3_Memory_Dyn, {plan.l3_bytes});" in c
    assert "(L3_Memory + " not in c and "/* Out: T1, L3 RAM */" in c and "(L3_Memory_Dyn + " in c
    for v in plan.variants:   # the layers call the nodes' kernel variants
        assert f"\t{v.name}(\n" in c
    assert graph.memory("AT_L3_DYN_MEM") == plan.l3_bytes and graph.memory("AT_L3_MEM") == 0
    assert {"ram", "L3"} <= graph.parts == graph.live


def test_uninterrupted_and_suspended_runs_equal_numpy_and_the_plain_runner(built, graph):
    l2, _, plan, _, plain = built
    p = plain.graph("G")
    p.construct()
    x, want = data(3)
    plain_calls = [p.run(In=x, Out=want)]
    p.destruct()
    np.testing.assert_array_equal(want.ravel(), reference(x))

    _, once = data()
    once_calls = [graph.run(In=x, Out=once)]
    _, stepped = data()
    calls = [graph.run(In=x, Out=stepped, until=1)]
    seen = [graph.layer_index]
    while graph.suspended:
        assert (stepped == SENTINEL).all()   # nothing copied back while suspended
        calls.append(graph.step())
        seen.append(graph.layer_index)
    assert seen == [1, 2, 3, 4, 0]
    np.testing.assert_array_equal(once, want)
    np.testing.assert_array_equal(stepped, want)
    moved = total(calls, "l3_to_l2") + total(calls, "l2_to_l3")
    assert moved == plan.l3_traffic > 0
    for key in TRAFFIC:   # the plain runner's traffic, however the run is cut
        assert total(calls, key) == total(once_calls, key) == total(plain_calls, key), key
    # each call's per-node figures hold the layers it ran
    assert [calls[i]["nodes"][i]["cycles"] for i in range(N)] == [n["cycles"] for n in once_calls[0]["nodes"]]


@pytest.mark.parametrize("k", [1, 3, 4])
def test_suspended_after_layer_k_and_resumed(graph, k):
    x, got = data(k)
    graph.run(In=x, Out=got, until=k)
    assert graph.suspended and graph.layer_index == k
    graph.resume()
    np.testing.assert_array_equal(got.ravel(), reference(x))


def test_reset_and_abort(graph):
    x, got = data(1)
    graph.run(In=x, Out=got, until=2)
    assert graph.control("reset") == 0 and not graph.suspended
    y, got2 = data(9)
    graph.run(In=y, Out=got2)
    np.testing.assert_array_equal(got2.ravel(), reference(y))
    graph.run(In=x, Out=got, until=3)
    assert graph.control("abort") == N
    counters = graph.resume()
    assert graph.layer_index == 0 and (got == SENTINEL).all()   # K5, the only writer of Out, never ran
    assert counters["l3_to_l2"] == counters["l2_to_l3"] == 0
    graph.run(In=y, Out=got2)   # the context and its dynamic L3 are usable again
    np.testing.assert_array_equal(got2.ravel(), reference(y))


def test_destruct_while_suspended_frees_the_dynamic_l3(built):
    g = built[3].graph("G")
    g.construct()
    x, got = data()
    g.run(In=x, Out=got, until=2)
    g.destruct()   # an allocation or the RAM left behind would be a HarnessError
    assert not g.constructed and not g.live


def test_alloc_ctxt_status_2_when_the_l3_ram_is_too_small(tmp_path):
    _, plan, prog = program(tmp_path, 2 * B, platform=get_platform("gap8", l3_ram_size=1024))
    g = prog.graph("G")
    with pytest.raises(HarnessError, match=rf"G_AllocCtxt\(&Descr, 0, 0, 0, 0, &Status\) set Status 2: cannot "
                                           rf"allocate the dynamic L3 \(L3 RAM: {plan.l3_bytes} bytes asked; L3 holds "
                                           r"1024 bytes\)") as err:
        g.construct()
    assert "l3_ram_size" in err.value.hint
    assert not g.constructed and not g.live


def test_monitoring_a_spilling_graph_across_suspensions(tmp_path):
    """AT_GraphPerf with kernel variants: per layer, the node's call plus its constant fetches
    (IO_Wait) are the harness's per-node cycles; the total is the run's."""
    _, _, prog = program(tmp_path, 2 * B, AT_GRAPH_MONITOR_CYCLES=1)
    g = prog.graph("G")
    g.construct()
    lib = ctypes.CDLL(str(prog.library))
    perf = (ctypes.c_uint * (N + 1)).in_dll(lib, "AT_GraphPerf")
    x, got = data()
    calls, io = [g.run(In=x, Out=got, until=1)], [perf[N]]
    while g.suspended:
        calls.append(g.step())
        io.append(perf[N])
    g.destruct()
    np.testing.assert_array_equal(got.ravel(), reference(x))
    fetched = [b - a for a, b in zip([0] + io, io)]
    assert [perf[i] + fetched[i] for i in range(N)] == [calls[i]["nodes"][i]["cycles"] for i in range(N)]
    assert ctypes.c_uint.in_dll(lib, "AT_GraphPerf_CNN_Total").value == total(calls, "cycles") == sum(perf)
