"""Reentrant graph runner (-R, AT_GRAPH_RUNNER_RE_ENTRANT): the guide's CNN_Graph_Descr_T /
<G>_Ctxt_T API generated and compiled under -Werror, a run suspended after every layer and
resumed equal to an uninterrupted one and to numpy, ControlCtxt's reset and abort, and what -R
does not support yet refused at generation."""

from __future__ import annotations

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import HarnessError, ModelError

from .conftest import ROOT
from .graph_helpers import ITEMS, declare_residual_graph, residual_reference

MATADD = ROOT / "examples" / "matrix_add"
B = 4 * ITEMS
GENEROUS, TIGHT = 64 * 1024, 3 * B   # both constants promoted / W1 fetched from flash at each run
SENTINEL = -7


def generate_graph(tmp_path, l2: int, via_ctrl: bool = False):
    with Model() as m:
        if via_ctrl:
            AT_SetGraphCtrl(AT_GRAPH_RUNNER_RE_ENTRANT, AT_OPT_ON)
        else:
            assert TilerParseOptions(["model.py", "-R"]) == 0
        declare_residual_graph(tmp_path, l2)
        files = generate(m)
    gen = tmp_path / f"gen{l2}"
    write_files(files, str(gen))
    return files, gen


@pytest.fixture(scope="module", params=["generous", "tight"])
def built(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"reentrant_{request.param}")
    files, gen = generate_graph(tmp, GENEROUS if request.param == "generous" else TIGHT)
    return files, host_harness.build(gen, sources=[MATADD / "MatAddBasicKernels.c"], include_dirs=[MATADD])


@pytest.fixture
def graph(built):
    g = built[1].graph("G")
    g.construct()
    yield g
    if g.constructed:
        g.destruct()


def data(seed: int = 0):
    x = (np.arange(ITEMS, dtype=np.int32) * 3 - 40 + seed).reshape(1, 4, 8)
    return x, np.full((1, 4, 8), SENTINEL, dtype=np.int32)


def test_generated_api_is_the_guides(built):
    files = built[0]
    c, h = files["GraphKernels.c"], files["GraphKernels.h"]
    for decl in ("int G_Construct(CNN_Graph_Descr_T *Descr);",
                 "int G_Destruct(CNN_Graph_Descr_T *Descr, int Free_L2_Memory, int Free_L3_Memory);",
                 "G_Ctxt_T *G_AllocCtxt(CNN_Graph_Descr_T *Descr, G_Ctxt_T *_Ctxt_Memory, AT_L1_POINTER _L1_Memory, "
                 "AT_L2_POINTER _L2_DynMemory, AT_DEFAULTRAM_POINTER _L3_DynMemory, int *Status);",
                 "void G_DeAllocCtxt(G_Ctxt_T *_Ctxt, int Free_Ctxt_Memory, int Free_L1_Memory, "
                 "int Free_L2_DynMemory, int Free_L3_DynMemory);",
                 "void G_ControlCtxt(void *_Ctxt, int Action);", "int G_Memory(AT_MEM_TYPE Which);",
                 "int G(void *_Ctxt, Word32 * __restrict__ In, Word32 * __restrict__ Out, void *_L1_Memory);",
                 "int G_CtxtGetLayerIndex(AT_CTXT_TYPE _Ctxt);",
                 "AT_L1_POINTER G_CtxtGetL1MemoryPointer(AT_CTXT_TYPE _Ctxt);",
                 "void G_CtxtSetL2MemoryDynPointer(AT_CTXT_TYPE _Ctxt, AT_L2_POINTER MemPointer);"):
        assert decl in h
    assert "\t\tCtxt->Layer[Ctxt->LayerIndex++](Ctxt);\n\t\tif (AT_YIELD()) return 0;" in c
    assert "else if (Action == 1) Ctxt->LayerIndex = 3;" in c
    assert "case AT_CTXT_MEM:   return sizeof(G_Ctxt_T);" in c
    assert "int G_Construct(void)" not in c


def test_the_graph_option_generates_it_too(tmp_path):
    files, _ = generate_graph(tmp_path, GENEROUS, via_ctrl=True)
    assert "G_Ctxt_T *G_AllocCtxt(" in files["GraphKernels.h"]


def test_uninterrupted_run_equals_numpy(graph):
    assert graph.reentrant and graph.layer_index == 0
    x, got = data()
    counters = graph.run(In=x, Out=got)
    np.testing.assert_array_equal(got.ravel(), residual_reference(x))
    assert [n["name"] for n in counters["nodes"]] == ["K1", "K2", "K3"]
    assert not graph.suspended and graph.layer_index == 0
    assert graph.memory("AT_CTXT_MEM") > 0


@pytest.mark.parametrize("k", [1, 2, 3])
def test_suspended_after_layer_k_and_resumed(graph, k):
    x, got = data(k)
    graph.run(In=x, Out=got, until=k)
    assert graph.suspended and graph.layer_index == k
    assert (got == SENTINEL).all()  # nothing copied back while suspended
    graph.resume()
    assert not graph.suspended and graph.layer_index == 0
    np.testing.assert_array_equal(got.ravel(), residual_reference(x))


def test_suspended_after_every_layer(graph):
    x, once = data(5)
    graph.run(In=x, Out=once)
    _, stepped = data(5)
    graph.run(In=x, Out=stepped, until=1)
    seen = [graph.layer_index]
    while graph.suspended:
        graph.step()
        seen.append(graph.layer_index)
    assert seen == [1, 2, 0]
    np.testing.assert_array_equal(stepped, once)
    np.testing.assert_array_equal(once.ravel(), residual_reference(x))


def test_a_suspended_context_refuses_a_new_run(graph):
    """The runner would continue the suspended run with its kept arguments: the harness says so."""
    x, got = data(2)
    graph.run(In=x, Out=got, until=2)
    with pytest.raises(HarnessError, match="suspended after layer 2"):
        graph.run(In=x, Out=got)
    graph.resume()
    np.testing.assert_array_equal(got.ravel(), residual_reference(x))


def test_reset_restarts_at_the_first_layer(graph):
    x, got = data(1)
    graph.run(In=x, Out=got, until=2)
    assert graph.control("reset") == 0
    assert not graph.suspended and (got == SENTINEL).all()
    y, got2 = data(9)
    graph.run(In=y, Out=got2)
    np.testing.assert_array_equal(got2.ravel(), residual_reference(y))


def test_abort_runs_no_further_layer(graph):
    x, got = data(3)
    graph.run(In=x, Out=got, until=1)
    assert graph.control("abort") == 3
    counters = graph.resume()
    assert graph.layer_index == 0 and not graph.suspended
    assert (got == SENTINEL).all()  # K3, the only writer of Out, never ran
    assert all(n["cycles"] == 0 for n in counters["nodes"])
    y, got2 = data(4)
    graph.run(In=y, Out=got2)  # the context is usable again
    np.testing.assert_array_equal(got2.ravel(), residual_reference(y))


def test_until_is_checked(graph):
    x, got = data()
    for bad in (0, 4, True, "1"):
        with pytest.raises(HarnessError, match="must be a layer count in 1..3"):
            graph.run(In=x, Out=got, until=bad)
    with pytest.raises(HarnessError, match="no suspended run"):
        graph.resume()


def test_destruct_while_suspended_frees_everything(built):
    g = built[1].graph("G")
    g.construct()
    x, got = data()
    g.run(In=x, Out=got, until=1)
    g.destruct()  # an allocation left behind would be a HarnessError
    assert not g.constructed and not g.suspended


def test_until_on_a_plain_graph_is_refused(tmp_path):
    with Model() as m:
        declare_residual_graph(tmp_path, GENEROUS)
        files = generate(m)
    write_files(files, str(tmp_path / "plain"))
    g = host_harness.build(tmp_path / "plain", sources=[MATADD / "MatAddBasicKernels.c"],
                           include_dirs=[MATADD]).graph("G")
    g.construct()
    x, got = data()
    with pytest.raises(HarnessError, match="not reentrant"):
        g.run(In=x, Out=got, until=1)
    with pytest.raises(HarnessError, match="is for a reentrant graph"):
        g.control("reset")
    g.destruct()


@pytest.mark.parametrize("warm", [WARM_L1, WARM_ALL])
def test_reentrant_with_a_warm_constructor_is_not_supported_yet(tmp_path, warm):
    with Model() as m:
        assert TilerParseOptions(["model.py", "-R"]) == 0
        declare_residual_graph(tmp_path, GENEROUS, warm=warm)
        with pytest.raises(ModelError, match=r"a reentrant runner \(-R\) with a warm constructor .* is not "
                                             "supported yet"):
            generate(m)
