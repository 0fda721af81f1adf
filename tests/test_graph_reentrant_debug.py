"""The monitoring and debug options (AT_SetGraphCtrl, docs/graph.md "Options") in a reentrant
runner (-R, docs/graph.md "Reentrant runner"): for each option, a run suspended after every layer
prints, dumps and fills exactly what an uninterrupted reentrant run does and what the plain
runner of the same graph does; AT_GraphPerf's entries are the harness's per-node cycles, its
total the whole run's even when the run spans several calls of the runner (the simulated clock
restarts at each call); the dump file stays open across suspensions and is closed when the run
ends (completed, aborted) or its context is freed."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import ModelError

from .graph_helpers import ITEMS, inp, lib_add, local, mat_add, out
from .test_graph_e2e import GENEROUS, TIGHT, build, declare, reference
from .test_graph_options import parse_dump, tensors

N = 3            # nodes of the graph (K1, K2, K3)
SENTINEL = -7
ALL_DUMPS = AT_DUMP_CONSTANT_IN | AT_DUMP_IN | AT_DUMP_OUT


def make(tmp_path, reentrant: bool, l2=GENEROUS, **options):
    """(files, program) of the residual graph with the options, plain or reentrant (-R)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    with Model() as m:
        if reentrant:
            assert TilerParseOptions(["model.py", "-R"]) == 0
        for ctrl, val in options.items():
            AT_SetGraphCtrl(globals()[ctrl], val)
        declare(tmp_path, l2)
        files = generate(m)
    gen = tmp_path / ("reentrant" if reentrant else "plain")
    write_files(files, str(gen))
    return files, build(gen)


def data(seed: int = 0):
    x = (np.arange(ITEMS, dtype=np.int32) * 3 - 40 + seed).reshape(1, 4, 8)
    return x, np.full((1, 4, 8), SENTINEL, dtype=np.int32)


def run_plain(prog):
    g = prog.graph("G")
    g.construct()
    x, got = data()
    calls = [g.run(In=x, Out=got)]
    g.destruct()
    np.testing.assert_array_equal(got.ravel(), reference(x))
    return calls


def run_reentrant(prog, stepped: bool, after_call=None):
    """The counters of each call of the runner: one call, or one per layer (run(until=1), then
    step() until the run completes); ``after_call()`` is called after each."""
    g = prog.graph("G")
    g.construct()
    x, got = data()
    calls = [g.run(In=x, Out=got, until=1 if stepped else None)]
    if after_call:
        after_call()
    while g.suspended:
        calls.append(g.step())
        if after_call:
            after_call()
    assert len(calls) == (N if stepped else 1)
    g.destruct()
    np.testing.assert_array_equal(got.ravel(), reference(x))
    return calls


def node_figures(calls) -> list:
    """Per node, its figures from the call that ran it (a call's other entries are zeros)."""
    if len(calls) == 1:
        return calls[0]["nodes"]
    return [calls[i]["nodes"][i] for i in range(N)]


def three_runs(tmp_path, capfd, l2=GENEROUS, after_call=None, **options):
    """{"plain", "once", "stepped"}: (calls, stdout) of the plain runner, an uninterrupted
    reentrant run and a reentrant run suspended after every layer, options alike."""
    out = {}
    _, plain = make(tmp_path / "p", False, l2, **options)
    _, reent = make(tmp_path / "r", True, l2, **options)
    for key, prog, stepped in (("plain", plain, None), ("once", reent, False), ("stepped", reent, True)):
        capfd.readouterr()
        calls = run_plain(prog) if stepped is None else run_reentrant(prog, stepped, after_call)
        out[key] = (calls, capfd.readouterr().out)
    return out, plain, reent


# ----------------------------------------------------------------------------------------------
# AT_GRAPH_MONITOR_CYCLES, node names, operation counts


def perf_arrays(prog):
    lib = ctypes.CDLL(str(prog.library))
    return (list((ctypes.c_uint * (N + 1)).in_dll(lib, "AT_GraphPerf")),
            ctypes.c_uint.in_dll(lib, "AT_GraphPerf_CNN_Total").value)


@pytest.mark.parametrize("l2", [GENEROUS, TIGHT])
def test_monitor_cycles_across_suspensions(tmp_path, l2):
    options = dict(AT_GRAPH_MONITOR_CYCLES=1, AT_GRAPH_PRODUCE_NODE_NAMES=1, AT_GRAPH_PRODUCE_OPERINFOS=1)
    files, reent = make(tmp_path / "r", True, l2, **options)
    _, plain = make(tmp_path / "p", False, l2, **options)
    c, h = files["GraphKernels.c"], files["GraphKernels.h"]
    assert "unsigned int AT_GraphPerf[4];\nunsigned int AT_GraphPerf_CNN_Total = 0;" in c
    assert "extern unsigned int AT_GraphPerf[4];" in h and "extern char * AT_GraphNodeNames[4];" in h
    assert "\tCtxt->PerfTotal += gap_cl_readhwtimer() - Start_Layer;" in c   # the total lives in the context

    plain_calls = run_plain(plain)
    plain_perf, plain_total = perf_arrays(plain)
    runs = {}
    for stepped in (False, True):
        io_after_call: list = []   # IO_Wait as published after each call: the fetches of the layers run so far

        def record(io=io_after_call):
            io.append(perf_arrays(reent)[0][N])

        calls = run_reentrant(reent, stepped, record)
        runs[stepped] = (calls, *perf_arrays(reent), io_after_call)

    once, stepped = runs[False], runs[True]
    calls, perf, total, io_after = stepped
    nodes = node_figures(calls)
    # the suspended run fills exactly what the uninterrupted one does
    assert perf == once[1] and total == once[2]
    assert [n["cycles"] for n in nodes] == [n["cycles"] for n in node_figures(once[0])]
    # per layer: the node's call into AT_GraphPerf[i], the fetches of its constants (issued and
    # waited inside the layer) into IO_Wait; the two are the harness's per-node cycles
    io = [b - a for a, b in zip([0] + io_after, io_after)]
    assert [p + d for p, d in zip(perf[:N], io)] == [n["cycles"] for n in nodes]
    assert perf[N] == sum(io)
    # the total is the whole run's, though the run spanned N calls each starting the clock at 0
    assert total == sum(c["cycles"] for c in calls) == sum(n["cycles"] for n in nodes) > max(c["cycles"] for c in calls)
    lib = ctypes.CDLL(str(reent.library))
    names = [n.decode() for n in (ctypes.c_char_p * (N + 1)).in_dll(lib, "AT_GraphNodeNames")]
    assert names == ["K1", "K2", "K3", "IO_Wait"]
    assert list((ctypes.c_uint * (N + 1)).in_dll(lib, "AT_GraphOperInfosNames")) == \
        list((ctypes.c_uint * (N + 1)).in_dll(ctypes.CDLL(str(plain.library)), "AT_GraphOperInfosNames"))
    # Against the plain runner: the nodes' calls take the same cycles (same kernels, same tilings,
    # idle engines when each starts). What may differ is where the constants fetched at each run
    # are paid: the plain runner issues each copy right after the node the plan says (its issue
    # cost falls in no AT_GraphPerf entry, only in the total) and waits only before its first
    # user, so its transfer can overlap earlier nodes and its IO_Wait holds only the part left to
    # wait; the reentrant form issues and waits each inside its first user's layer (no transfer in
    # flight across a yield point), so its IO_Wait holds the whole fetch, issue included, and its
    # total is never smaller. With nothing fetched at run time (generous L2) everything is equal.
    assert perf[:N] == plain_perf[:N]
    assert plain_total == plain_calls[0]["cycles"] >= sum(plain_perf)
    assert total == sum(perf)   # in the reentrant form every cycle of a run is in one entry
    if l2 == GENEROUS:
        assert perf == plain_perf and perf[N] == 0 and total == plain_total
        assert perf[:N] == [n["cycles"] for n in nodes]
    else:
        assert perf[N] > 0 and perf[N] >= plain_perf[N] and total >= plain_total


def test_abort_publishes_what_the_run_did(tmp_path):
    _, reent = make(tmp_path, True, TIGHT, AT_GRAPH_MONITOR_CYCLES=1)
    g = reent.graph("G")
    g.construct()
    x, got = data()
    first = g.run(In=x, Out=got, until=1)
    g.control("abort")
    g.resume()   # runs no layer: the run ends, its total is that of layer 0
    assert perf_arrays(reent)[1] == first["cycles"]
    g.destruct()


# ----------------------------------------------------------------------------------------------
# Trace, checksums, dumps


def trace_lines(text: str) -> list:
    return [ln for ln in text.splitlines() if ln.startswith(("Graph G:", "Checksum:"))]


@pytest.mark.parametrize("trace", [1, 0])
def test_checksum_and_trace_across_suspensions(tmp_path, capfd, trace):
    runs, _, _ = three_runs(tmp_path, capfd, AT_GRAPH_CHECKSUM=1, AT_GRAPH_TRACE_EXEC=trace)
    lines = trace_lines(runs["plain"][1])
    assert len(lines) == (9 if trace else 3)
    assert trace_lines(runs["once"][1]) == trace_lines(runs["stepped"][1]) == lines
    assert runs["stepped"][1] == runs["plain"][1]


def test_each_layer_prints_its_lines_before_the_runner_yields(tmp_path, capfd):
    _, reent = make(tmp_path, True, AT_GRAPH_CHECKSUM=1)
    g = reent.graph("G")
    g.construct()
    x, got = data()
    capfd.readouterr()
    g.run(In=x, Out=got, until=1)
    t1 = int(tensors(x)["T1"].astype("<i4").view(np.uint8).sum())
    assert trace_lines(capfd.readouterr().out) == ["Graph G: node 0 K1 start", "Graph G: node 0 K1 end",
                                                   f"Checksum: Node: K1, Argument: T1, Sum: {t1}"]
    g.resume()
    assert trace_lines(capfd.readouterr().out)[0] == "Graph G: node 1 K2 start"
    g.destruct()


@pytest.mark.parametrize("options", [dict(AT_GRAPH_DUMP_TENSOR=ALL_DUMPS),
                                     dict(AT_GRAPH_DUMP_TENSOR=AT_DUMP_OUT, AT_GRAPH_DUMP_ONE_NODE="K2"),
                                     dict(AT_GRAPH_DUMP_GRAPH_OUTPUTS=1, AT_GRAPH_TRACE_EXEC=0)])
@pytest.mark.parametrize("l2", [GENEROUS, TIGHT])
def test_dumps_across_suspensions(tmp_path, capfd, l2, options):
    runs, _, _ = three_runs(tmp_path, capfd, l2, **options)
    text = runs["plain"][1]
    assert runs["once"][1] == runs["stepped"][1] == text
    blocks = parse_dump(text)
    assert blocks
    x, _ = data()
    for _, arg, values in blocks:
        np.testing.assert_array_equal(values, tensors(x)[arg], err_msg=arg)


def test_dump_to_file_across_suspensions(tmp_path, capfd, monkeypatch):
    """The file is opened when the run starts (in the first call) and closed when it ends (in the
    last): the three runs write the same file, nothing goes to stdout."""
    monkeypatch.chdir(tmp_path)
    dump = tmp_path / "G_TensorDump.txt"
    seen = []
    options = dict(AT_GRAPH_DUMP_TENSOR=ALL_DUMPS, AT_GRAPH_DUMP_TENSOR_TO_FILE=1, AT_GRAPH_DUMP_GRAPH_OUTPUTS=1)
    texts = {}
    _, plain = make(tmp_path / "p", False, TIGHT, **options)
    files, reent = make(tmp_path / "r", True, TIGHT, **options)
    assert "static FILE" not in files["GraphKernels.c"]   # the file of a run is its context's
    for key, prog, stepped in (("plain", plain, None), ("once", reent, False), ("stepped", reent, True)):
        dump.unlink(missing_ok=True)
        capfd.readouterr()
        if stepped is None:
            run_plain(prog)
        else:
            run_reentrant(prog, stepped, lambda: seen.append(dump.exists()))
        assert "Node:" not in capfd.readouterr().out
        texts[key] = dump.read_text()
    assert texts["once"] == texts["stepped"] == texts["plain"]
    assert seen[1:] == [True] * N   # opened by the first call of the stepped run
    x, _ = data()
    blocks = parse_dump(texts["plain"])
    assert [(n, a) for n, a, _ in blocks][-1] == ("G", "Out")
    for _, arg, values in blocks:
        np.testing.assert_array_equal(values, tensors(x)[arg], err_msg=arg)


def test_dump_file_after_reset_abort_and_destruct(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    dump = tmp_path / "G_TensorDump.txt"
    _, reent = make(tmp_path, True, AT_GRAPH_DUMP_TENSOR=AT_DUMP_OUT, AT_GRAPH_DUMP_TENSOR_TO_FILE=1,
                    AT_GRAPH_DUMP_GRAPH_OUTPUTS=1)
    g = reent.graph("G")
    g.construct()
    x, got = data()
    g.run(In=x, Out=got)
    whole = dump.read_text()
    # reset while suspended: the next run opens the file again (the dropped run's file is closed)
    g.run(In=x, Out=got, until=2)
    g.control("reset")
    g.run(In=x, Out=got)
    assert dump.read_text() == whole
    # abort: the run ends at the next call, which dumps the graph's outputs as they are and closes
    x, got = data(1)
    g.run(In=x, Out=got, until=1)
    g.control("abort")
    g.resume()
    blocks = parse_dump(dump.read_text())
    assert [(n, a) for n, a, _ in blocks] == [("K1", "T1"), ("G", "Out")]
    assert (blocks[1][2] == SENTINEL).all()
    # an abort before any layer ran ends no run: nothing dumped, the file untouched
    before = dump.read_text()
    g.control("abort")
    g.run(In=x, Out=got)
    assert dump.read_text() == before
    # a context freed while a run is suspended closes its file (what was written is flushed)
    g.run(In=x, Out=got, until=1)
    g.destruct()
    assert [(n, a) for n, a, _ in parse_dump(dump.read_text())] == [("K1", "T1")]


# ----------------------------------------------------------------------------------------------
# -Os; names the options take


def test_size_opt_compiles_the_reentrant_functions_for_size(tmp_path):
    files, reent = make(tmp_path, True, AT_GRAPH_SIZE_OPT=1)
    c = files["GraphKernels.c"]
    push = c.index('#pragma GCC optimize ("Os")')
    assert push < c.index("int G_Construct(") < c.index("static void G_Layer0(") < c.index("G_Ctxt_T *G_AllocCtxt(") \
        < c.index("int G(void *_Ctxt") < c.index("void G_CtxtSetL1MemoryPointer(") < c.index("#pragma GCC pop_options")
    assert c.index("#pragma GCC push_options") < push
    assert c.index("void K1(") < push   # the kernels are not affected
    run_reentrant(reent, True)


def test_a_graph_argument_named_like_an_options_member_is_refused(tmp_path):
    with Model() as m:
        assert TilerParseOptions(["model.py", "-R"]) == 0
        AT_SetGraphCtrl(AT_GRAPH_DUMP_TENSOR, AT_DUMP_OUT)
        AT_SetGraphCtrl(AT_GRAPH_DUMP_TENSOR_TO_FILE, 1)
        SetUsedFilesNames(0, 1, "MatAddBasicKernels.h")
        SetMemorySizes(51200, GENEROUS)
        lib_add()
        mat_add("K1")
        CreateGraph("G", CArgs(inp("DumpFile"), inp("B"), out()), CArgs(local("T")))
        AddNode("K1", Bindings(GNodeArg(GNA_IN, "DumpFile", 0), GNodeArg(GNA_IN, "B", 0), GNodeArg(GNA_OUT, "Out", 0)))
        CloseGraph()
        with pytest.raises(ModelError, match="graph argument named 'DumpFile' .*is not supported yet"):
            generate(m)
