"""Generated graph code run on the simulated chip: a chain of MatAdd-like kernels with a residual
join and two constants from binary files, constructed, run (outputs equal numpy), queried and
destructed; constants promoted to static L2 under a generous L2, one prefetched from flash at
every run under a tight one; construct errors named; the generated C kept as a golden."""

from __future__ import annotations

import re

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import HarnessError
from autotiler.platforms import get_platform

from .conftest import ROOT
from .graph_helpers import (
    ITEMS,
    P32,
    const,
    declare_residual_graph,
    inp,
    lib_add,
    mat_add,
    out,
    residual_reference,
    write_bin,
)

MATADD = ROOT / "examples" / "matrix_add"
KERNELS = ROOT / "tests" / "kernels"
B = 4 * ITEMS            # bytes of every symbol of the graph
SENTINEL = -7
GENEROUS, TIGHT = 64 * 1024, 3 * B


def declare(tmp_path, l2: int) -> None:
    declare_residual_graph(tmp_path, l2)


reference = residual_reference


def generate_graph(tmp_path, l2: int):
    with Model() as m:
        declare(tmp_path, l2)
        files = generate(m)
    gen = tmp_path / f"gen{l2}"
    write_files(files, str(gen))
    return files, gen


def build(gen, **kw):
    return host_harness.build(gen, sources=[MATADD / "MatAddBasicKernels.c"], include_dirs=[MATADD], **kw)


def run_once(graph) -> tuple:
    x = (np.arange(ITEMS, dtype=np.int32) * 3 - 40).reshape(1, 4, 8)
    got = np.full((1, 4, 8), SENTINEL, dtype=np.int32)
    counters = graph.run(In=x, Out=got)
    np.testing.assert_array_equal(got.ravel(), reference(x))
    return counters


@pytest.fixture(scope="module")
def generous(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("generous")
    files, gen = generate_graph(tmp, GENEROUS)
    return files, gen, build(gen)


@pytest.fixture(scope="module")
def tight(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tight")
    files, gen = generate_graph(tmp, TIGHT)
    return files, gen, build(gen)


def test_generous_l2_promotes_both_constants_and_runs_without_flash_traffic(generous):
    _, _, prog = generous
    g = prog.graph("G")
    g.construct()
    try:
        assert g.counters["flash_to_l2"] == 2 * B          # both constants moved once, at construction
        for _ in range(2):                                    # the constructed state survives between runs
            assert run_once(g)["flash_to_l2"] == 0
    finally:
        g.destruct()


def test_tight_l2_prefetches_one_constant_at_every_run(tight):
    files, _, prog = tight
    assert "Waiting completion of transfer of" in files["GraphKernels.c"]
    g = prog.graph("G")
    g.construct()
    try:
        assert g.counters["flash_to_l2"] == B                # one constant promoted
        for _ in range(2):
            assert run_once(g)["flash_to_l2"] == B           # the other fetched by each run
    finally:
        g.destruct()


@pytest.mark.parametrize("which", ["generous", "tight"])
def test_memory_reports_what_construct_allocated(which, request):
    _, _, prog = request.getfixturevalue(which)
    g = prog.graph("G")
    g.construct()
    try:
        sizes = g.spec.sizes
        assert [g.memory(k) for k in ("AT_L1_MEM", "AT_L2_MEM", "AT_L2_DYN_MEM", "AT_L3_MEM", "AT_L3_DYN_MEM")] == \
            [sizes["L1"], sizes["L2"], sizes["L2_DYN"], 0, 0]
        assert g.counters["peak_l2"] == sizes["L2"] + sizes["L2_DYN"] and g.counters["peak_l1"] == sizes["L1"] > 0
        assert sizes["L2"] == (2 * B if which == "generous" else B) and sizes["L2_DYN"] == 2 * B
    finally:
        g.destruct()


def test_destruct_then_construct_again(generous):
    _, _, prog = generous
    g = prog.graph("G")
    for _ in range(2):
        g.construct()
        run_once(g)
        g.destruct()
    with pytest.raises(HarnessError, match="not constructed"):
        run_once(g)


def test_kernels_cannot_be_called_alone_while_the_graph_is_constructed(generous):
    _, _, prog = generous
    a = np.arange(ITEMS, dtype=np.int32).reshape(4, 8)
    res = np.zeros_like(a)
    prog.call("K1", In1=a, In2=a, Out=res)
    np.testing.assert_array_equal(res, 2 * a)
    g = prog.graph("G")
    g.construct()
    try:
        with pytest.raises(HarnessError, match="graph 'G' is constructed"):
            prog.call("K1", In1=a, In2=a, Out=res)
    finally:
        g.destruct()


def test_run_checks_arguments_as_call_does(generous):
    _, _, prog = generous
    g = prog.graph("G")
    g.construct()
    try:
        with pytest.raises(HarnessError, match=r"argument 'In'.*expects int32.*got float32"):
            g.run(In=np.zeros((4, 8), np.float32), Out=np.zeros((4, 8), np.int32))
        with pytest.raises(HarnessError, match="missing argument"):
            g.run(In=np.zeros((4, 8), np.int32))
    finally:
        g.destruct()


def test_construct_fails_with_code_1_naming_the_flash_image(tmp_path):
    _, gen = generate_graph(tmp_path, GENEROUS)
    prog = build(gen)
    (gen / "G_L3_Flash_Const.dat").unlink()
    g = prog.graph("G")
    with pytest.raises(HarnessError, match=r"G_Construct\(\) returned 1: opening the flash image.*"
                       r"'G_L3_Flash_Const.dat'.*cannot read the flash image"):
        g.construct()
    assert not g.constructed


def test_construct_fails_with_code_3_when_l2_is_too_small(generous):
    _, gen, _ = generous
    prog = build(gen, platform=get_platform("gap8", l2_size=3 * B))
    with pytest.raises(HarnessError, match=re.escape(f"G_Construct() returned 3: an L2 allocation failed (static "
                                                     f"{2 * B} + dynamic {2 * B} bytes asked; L2 holds {3 * B} bytes)")):
        prog.graph("G").construct()


def test_flash_image_is_in_the_generation_set_and_manifest(generous):
    files, gen, _ = generous
    import json

    data = json.loads(files["GraphKernels.json"])
    assert "G_L3_Flash_Const.dat" in data["set"]["files"]
    assert (gen / "G_L3_Flash_Const.dat").read_bytes() == files["G_L3_Flash_Const.dat"]
    (graph,) = data["graphs"]
    assert [(a["name"], a["direction"], a["items"], a["shape"]) for a in graph["args"]] == \
        [("In", "in", ITEMS, [1, 4, 8]), ("Out", "out", ITEMS, [1, 4, 8])]


@pytest.mark.parametrize("which", ["generous", "tight"])
def test_generated_graph_code_golden(which, request, golden):
    files, _, _ = request.getfixturevalue(which)
    golden(f"graph/{which}/GraphKernels.c", files["GraphKernels.c"])
    golden(f"graph/{which}/GraphKernels.h", files["GraphKernels.h"])


def test_two_graphs_are_not_supported_yet(tmp_path):
    with Model() as m:
        declare(tmp_path, GENEROUS)
        CreateGraph("G2", CArgs(inp("A"), out("B")), CArgs())
        AddNode("K1", Bindings(GNodeArg(GNA_IN, "A", 0), GNodeArg(GNA_IN, "A", 0), GNodeArg(GNA_OUT, "B", 0)))
        CloseGraph()
        with pytest.raises(ModelError, match="more than one graph in a model.*is not supported yet"):
            generate(m)


@pytest.mark.parametrize("promote", [True, False])
def test_exported_symbols_give_the_constants_address_and_memory(tmp_path, promote):
    """AddGraphArgExportSymbols: an epilog (tests/kernels/GraphExport.c) reads W through the
    exported address when the exported memory is L2: promoted, Out = In + W + W; fetched at each
    run (no promotion), the exported memory is its flash (4, AT_MEM_L3_HFLASH)."""
    with Model() as m:
        if not promote:
            AT_SetGraphCtrl(AT_GRAPH_DISABLE_CONST_L2_PROMOTION, AT_OPT_ON)
        SetUsedFilesNames(0, 2, "MatAddBasicKernels.h", "GraphExport.h")
        SetGeneratedFilesNames("GraphKernels.c", "GraphKernels.h")
        SetMemorySizes(51200, GENEROUS)
        lib_add()
        mat_add("K1")
        w = write_bin(tmp_path / "w.bin", 3 * np.arange(ITEMS) + 1)
        CreateGraph("G", CArgs(inp(), const("W", w), out()), CArgs())
        AddNode("K1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "W", 0), GNodeArg(GNA_OUT, "Out", 0)))
        AddCallToNode("K1", CALL_EPILOG, "AddExported", Bindings(2, GArg("Out"), Imm(ITEMS)))
        AddGraphArgExportSymbols("W", "WAddr", "WLoc")
        CloseGraph()
        files = generate(m)
    assert "extern void *WAddr;" in files["GraphKernels.h"] and "extern int WLoc;" in files["GraphKernels.h"]
    gen = tmp_path / "gen"
    write_files(files, str(gen))
    prog = host_harness.build(gen, sources=[MATADD / "MatAddBasicKernels.c", KERNELS / "GraphExport.c"],
                              include_dirs=[MATADD, KERNELS])
    g = prog.graph("G")
    g.construct()
    x = (np.arange(ITEMS, dtype=np.int32) - 9).reshape(1, 4, 8)
    got = np.full((1, 4, 8), SENTINEL, dtype=np.int32)
    g.run(In=x, Out=got)
    g.destruct()
    wv = 3 * np.arange(ITEMS) + 1
    expected = x.ravel() + 2 * wv if promote else np.full(ITEMS, 4)
    np.testing.assert_array_equal(got.ravel(), expected)


def test_a_model_without_graph_is_unchanged(tmp_path):
    with Model() as m:
        lib_add()
        mat_add("K1", ctype=P32)
        files = generate(m)
    assert "Construct" not in files["GenKernels.c"] and "AT_MEM_TYPE" not in files["GenKernels.h"]
    assert not any(name.endswith(".dat") for name in files)
