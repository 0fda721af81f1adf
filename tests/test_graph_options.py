"""AT_SetGraphCtrl options of a graph (docs/graph.md "Options"): the monitoring arrays
(AT_GraphPerf filled from the simulated clock, equal to the harness's per-node cycles; node
names; operation counts), the runtime trace, tensor dumps parsed back against numpy, checksums,
-Os, the L2 budget and flash preference; the per-node figures of Graph.run summing to the run's
totals; the options still refused, by name."""

from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest

from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.command import format_counters
from autotiler.constants import AT_GraphCtrl_T
from autotiler.errors import ModelError

from .graph_helpers import ITEMS, P32, inp, lib_add, local, mat_add, out, write_bin
from .test_graph_e2e import GENEROUS, TIGHT, build, declare, reference

ADDITIVE = ("l3_to_l2", "l2_to_l1", "l1_to_l2", "l2_to_l3", "transfers", "cycles", "compute_cycles", "stall_cycles",
            "fork_cycles", "flash_to_l2")


def make(tmp_path, l2=GENEROUS, **options):
    """Generate (options set by AT_SetGraphCtrl before the graph) and build; (files, program)."""
    with Model() as m:
        for ctrl, val in options.items():
            AT_SetGraphCtrl(globals()[ctrl], val)
        declare(tmp_path, l2)
        files = generate(m)
    gen = tmp_path / "gen"
    write_files(files, str(gen))
    return files, build(gen)


def run(prog):
    g = prog.graph("G")
    g.construct()
    x = (np.arange(ITEMS, dtype=np.int32) * 3 - 40).reshape(1, 4, 8)
    got = np.zeros((1, 4, 8), dtype=np.int32)
    counters = g.run(In=x, Out=got)
    g.destruct()
    np.testing.assert_array_equal(got.ravel(), reference(x))
    return counters, x, got


def tensors(x):
    """Every tensor of the graph, as numpy computes it."""
    w1, w2 = np.arange(ITEMS), 2 * np.arange(ITEMS) - 5
    t1 = x.ravel() + w1
    t2 = t1 + w2
    return {"In": x.ravel(), "W1": w1, "W2": w2, "T1": t1, "T2": t2, "Out": t2 + t1}


DUMP = re.compile(r"Node: (\w+), Argument: (\w+), Dim: 1, \[(\d+)\] ItemSize: (\d+)\n((?:(?: -?[\d.e+-]+)+\n)*)")


def parse_dump(text: str) -> list:
    """(node, argument, values) of every block of a dump."""
    out = []
    for node, arg, items, _size, body in DUMP.findall(text):
        values = np.array([int(v) for v in body.split()], dtype=np.int64)
        assert values.size == int(items)
        out.append((node, arg, values))
    return out


# ----------------------------------------------------------------------------------------------
# Monitoring: AT_GraphPerf, node names, operation counts; per-node figures


@pytest.mark.parametrize("l2", [GENEROUS, TIGHT])
def test_monitor_cycles_names_and_operinfos(tmp_path, l2):
    files, prog = make(tmp_path, l2, AT_GRAPH_MONITOR_CYCLES=1, AT_GRAPH_PRODUCE_NODE_NAMES=1,
                       AT_GRAPH_PRODUCE_OPERINFOS=1)
    c, h = files["GraphKernels.c"], files["GraphKernels.h"]
    assert "unsigned int AT_GraphPerf[4];\nunsigned int AT_GraphPerf_CNN_Total = 0;" in c
    assert 'char *AT_GraphNodeNames[4] = {\n\t"K1",\n\t"K2",\n\t"K3",\n\t"IO_Wait",\n};' in c
    assert "\tAT_GraphPerf[1] = gap_cl_readhwtimer() - AT_GraphPerf[1];" in c
    assert "extern unsigned int AT_GraphPerf[4];" in h and "extern char * AT_GraphNodeNames[4];" in h
    assert "extern unsigned int AT_GraphOperInfosNames[4];" in h
    counters, _, _ = run(prog)
    lib = ctypes.CDLL(str(prog.library))
    perf = list((ctypes.c_uint * 4).in_dll(lib, "AT_GraphPerf"))
    total = ctypes.c_uint.in_dll(lib, "AT_GraphPerf_CNN_Total").value
    names = [n.decode() for n in (ctypes.c_char_p * 4).in_dll(lib, "AT_GraphNodeNames")]
    opers = list((ctypes.c_uint * 4).in_dll(lib, "AT_GraphOperInfosNames"))
    nodes = counters["nodes"]
    assert names == [n["name"] for n in nodes] + ["IO_Wait"] == ["K1", "K2", "K3", "IO_Wait"]
    assert total == counters["cycles"] > 0
    assert opers[3] == 0 and all(o > 0 for o in opers[:3])  # no AddKernelInfos: predicted compute cycles
    if l2 == GENEROUS:  # nothing fetched at run time: the node brackets are the harness's nodes
        assert perf[:3] == [n["cycles"] for n in nodes] and perf[3] == 0
    else:  # the wait for the prefetched W2 goes to IO_Wait, its issue to node 0
        assert all(p <= n["cycles"] for p, n in zip(perf, nodes)) and perf[3] >= 0
        assert sum(perf) <= counters["cycles"]


def test_operinfos_take_add_kernel_infos(tmp_path):
    with Model() as m:
        AT_SetGraphCtrl(AT_GRAPH_PRODUCE_OPERINFOS, AT_OPT_ON)
        AT_SetGraphCtrl(AT_GRAPH_PRODUCE_OPERINFOS_CVAR_NAME, "MyOpers")
        declare(tmp_path, GENEROUS)
        AddKernelInfos("K2", AT_KERINFO_OPER, 1234, 0)
        c = generate(m)["GraphKernels.c"]
    block = c[c.index("unsigned int MyOpers[4] = {"):]
    assert block.split("\n")[2] == "\t1234,"


@pytest.mark.parametrize("l2", [GENEROUS, TIGHT])
def test_per_node_figures_sum_to_the_run_totals(tmp_path, l2):
    _, prog = make(tmp_path, l2)
    counters, _, _ = run(prog)
    nodes = counters["nodes"]
    assert [n["name"] for n in nodes] == ["K1", "K2", "K3"]
    for key in ADDITIVE:
        assert sum(n[key] for n in nodes) == counters[key], key
    assert all(n["cycles"] > 0 and n["l2_to_l1"] > 0 for n in nodes)
    if l2 == TIGHT:
        assert nodes[0]["flash_to_l2"] == counters["flash_to_l2"] > 0   # W2's prefetch is issued after node 0
    text = format_counters("G", counters)
    assert "\n  node 0 K1: " in text and "\n  node 2 K3: " in text


# ----------------------------------------------------------------------------------------------
# Trace, checksum, dumps


def test_checksum_and_trace(tmp_path, capfd):
    files, prog = make(tmp_path, AT_GRAPH_CHECKSUM=1)
    assert 'printf("Checksum: Node: K3, Argument: Out, Sum: %u\\n", G_Checksum(' in files["GraphKernels.c"]
    capfd.readouterr()
    _, x, got = run(prog)
    text = capfd.readouterr().out
    lines = [ln for ln in text.splitlines() if ln.startswith(("Graph G:", "Checksum:"))]
    t = tensors(x)

    def csum(a):
        return int(np.asarray(a, dtype="<i4").view(np.uint8).sum()) % 2 ** 32

    assert lines == [
        "Graph G: node 0 K1 start", "Graph G: node 0 K1 end", f"Checksum: Node: K1, Argument: T1, Sum: {csum(t['T1'])}",
        "Graph G: node 1 K2 start", "Graph G: node 1 K2 end", f"Checksum: Node: K2, Argument: T2, Sum: {csum(t['T2'])}",
        "Graph G: node 2 K3 start", "Graph G: node 2 K3 end", f"Checksum: Node: K3, Argument: Out, Sum: {csum(got)}"]


def test_trace_off_prints_no_trace_lines(tmp_path, capfd):
    files, prog = make(tmp_path, AT_GRAPH_CHECKSUM=1, AT_GRAPH_TRACE_EXEC=0)
    assert "start\\n" not in files["GraphKernels.c"]
    capfd.readouterr()
    run(prog)
    text = capfd.readouterr().out
    assert "Graph G:" not in text and text.count("Checksum:") == 3


def test_dump_every_tensor_of_every_node(tmp_path, capfd):
    _, prog = make(tmp_path, AT_GRAPH_DUMP_TENSOR=AT_DUMP_CONSTANT_IN | AT_DUMP_IN | AT_DUMP_OUT)
    capfd.readouterr()
    _, x, _ = run(prog)
    blocks = parse_dump(capfd.readouterr().out)
    assert [(n, a) for n, a, _ in blocks] == [("K1", "In"), ("K1", "W1"), ("K1", "T1"), ("K2", "T1"), ("K2", "W2"),
                                               ("K2", "T2"), ("K3", "T2"), ("K3", "T1"), ("K3", "Out")]
    t = tensors(x)
    for _, arg, values in blocks:
        np.testing.assert_array_equal(values, t[arg], err_msg=arg)


def test_dump_filter_and_one_node(tmp_path, capfd):
    _, prog = make(tmp_path, AT_GRAPH_DUMP_TENSOR=AT_DUMP_OUT, AT_GRAPH_DUMP_ONE_NODE="K2")
    capfd.readouterr()
    _, x, _ = run(prog)
    blocks = parse_dump(capfd.readouterr().out)
    assert [(n, a) for n, a, _ in blocks] == [("K2", "T2")]
    np.testing.assert_array_equal(blocks[0][2], tensors(x)["T2"])


def test_dump_to_file_and_graph_outputs(tmp_path, capfd, monkeypatch):
    _, prog = make(tmp_path, AT_GRAPH_DUMP_TENSOR=AT_DUMP_CONSTANT_IN, AT_GRAPH_DUMP_TENSOR_TO_FILE=1,
                   AT_GRAPH_DUMP_GRAPH_OUTPUTS=1)
    monkeypatch.chdir(tmp_path)
    capfd.readouterr()
    _, x, got = run(prog)
    assert "Node:" not in capfd.readouterr().out
    blocks = parse_dump((tmp_path / "G_TensorDump.txt").read_text())
    assert [(n, a) for n, a, _ in blocks] == [("K1", "W1"), ("K2", "W2"), ("G", "Out")]
    t = tensors(x)
    for _, arg, values in blocks:
        np.testing.assert_array_equal(values, t[arg])
    np.testing.assert_array_equal(blocks[-1][2], got.ravel())


def test_dump_one_node_must_name_a_node(tmp_path):
    with Model() as m:
        AT_SetGraphCtrl(AT_GRAPH_DUMP_ONE_NODE, "K9")
        declare(tmp_path, GENEROUS)
        with pytest.raises(ModelError, match="AT_GRAPH_DUMP_ONE_NODE names 'K9', which no node of the graph calls"):
            generate(m)


# ----------------------------------------------------------------------------------------------
# Code size, memory options


def test_size_opt_compiles_the_graph_functions_for_size(tmp_path):
    files, prog = make(tmp_path, AT_GRAPH_SIZE_OPT=1)
    c = files["GraphKernels.c"]
    assert c.index('#pragma GCC optimize ("Os")') < c.index("int G_Construct(") < c.index("int G(\n") \
        < c.index("#pragma GCC pop_options")
    run(prog)


def test_l2_static_memory_budget_limits_promotion(tmp_path):
    budget = 4 * ITEMS   # one constant
    with Model() as m:
        declare(tmp_path, GENEROUS)
        assert generate(m)["GraphKernels.c"].count("/* Moving ") == 2
    with Model() as m:
        AT_SetGraphCtrl(AT_GRAPH_L2_STATIC_MEMORY_BUDGET, AT_OPT_VAL(budget))
        declare(tmp_path, GENEROUS)
        c = generate(m)["GraphKernels.c"]
    assert c.count("/* Moving ") == 1 and c.count("/* Prefetching ") == 1
    assert re.search(r"case AT_L2_MEM: +return (\d+);", c).group(1) == str(budget)


def test_disable_const_l2_promotion_fetches_every_constant_at_each_run(tmp_path):
    files, prog = make(tmp_path, AT_GRAPH_DISABLE_CONST_L2_PROMOTION=1)
    c = files["GraphKernels.c"]
    assert "/* Moving " not in c and c.count("/* Prefetching ") == 2
    assert re.search(r"case AT_L2_MEM: +return (\d+);", c).group(1) == "0"
    counters, _, _ = run(prog)
    assert sum(n["flash_to_l2"] for n in counters["nodes"]) == 2 * 4 * ITEMS   # both constants, each run


def test_pref_l3_home_places_constants_without_a_flash_home(tmp_path):
    w = write_bin(tmp_path / "w.bin", np.arange(ITEMS))
    with Model() as m:
        AT_SetGraphCtrl(AT_GRAPH_PREF_L3_HOME, AT_MEM_L3_QSPIFLASH)
        SetUsedFilesNames(0, 1, "MatAddBasicKernels.h")
        SetMemorySizes(51200, GENEROUS)
        lib_add()
        mat_add("K1")
        CreateGraph("G", CArgs(inp(), TCArgInfo(P32, "W", ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_UNDEF, AT_MEM_UNDEF,
                                                ConstInfo(w, 1, 1, 32, 0)), out()), CArgs(local("T")))
        AddNode("K1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "W", 0), GNodeArg(GNA_OUT, "Out", 0)))
        CloseGraph()
        c = next(v for k, v in generate(m).items() if k.endswith(".c"))
    assert "AT_QSPIFLASH_FS_OPEN(&QspiFlash" in c


# ----------------------------------------------------------------------------------------------
# Values checked; refused options


@pytest.fixture
def fresh_model():
    with Model() as m:
        yield m


@pytest.mark.parametrize("ctrl, val, message", [
    (AT_GRAPH_MONITOR_CYCLES, 2, "AT_SetGraphCtrl(AT_GRAPH_MONITOR_CYCLES, ...): the value must be AT_OPT_ON or "
                                 "AT_OPT_OFF, got 2"),
    (AT_GRAPH_MONITOR_CVAR_NAME, "1Perf", "C variable name '1Perf' is not a valid C identifier"),
    (AT_GRAPH_PRODUCE_NODE_CVAR_NAME, "int", "C variable name 'int' is a C keyword"),
    (AT_GRAPH_DUMP_TENSOR, 8, "AT_GRAPH_DUMP_TENSOR, ...): the value must be a bit vector"),
    (AT_GRAPH_L2_STATIC_MEMORY_BUDGET, -1, "AT_GRAPH_L2_STATIC_MEMORY_BUDGET, ...): the value must be a byte count"),
    (AT_GRAPH_PREF_L3_HOME, AT_MEM_L3_HRAM, "AT_GRAPH_PREF_L3_HOME must be a flash, got AT_MEM_L3_HRAM"),
])
def test_option_values_are_checked(fresh_model, ctrl, val, message):
    with pytest.raises(ModelError, match=re.escape(message)):
        AT_SetGraphCtrl(ctrl, val)


REFUSED = [AT_GRAPH_ARG2STRUCT, AT_GRAPH_GROUP_WEIGHTS,
           AT_GRAPH_ASYNC_FORK, AT_GRAPH_L1_PROMOTION, AT_GRAPH_USE_MERGED_DMA, AT_GRAPH_L3_STATIC_MEMORY_BUDGET]


@pytest.mark.parametrize("ctrl", REFUSED)
def test_refused_options_name_themselves(fresh_model, ctrl):
    name = AT_GraphCtrl_T(ctrl).name
    val = 1
    with pytest.raises(ModelError, match=re.escape(f"AT_SetGraphCtrl({name}, ...) is not supported yet")):
        AT_SetGraphCtrl(ctrl, val)


@pytest.mark.parametrize("ctrl", REFUSED)
def test_refused_options_accept_their_default(tmp_path, ctrl):
    with Model() as m:
        AT_SetGraphCtrl(ctrl, 0)
        declare(tmp_path, GENEROUS)
        generate(m)


def test_defaults_set_explicitly_change_nothing(tmp_path):
    with Model() as m:
        declare(tmp_path, GENEROUS)
        plain = generate(m)
    with Model() as m:
        for ctrl, val in ((AT_GRAPH_TRACE_EXEC, 1), (AT_GRAPH_REORDER_CONSTANT_IN, 1), (AT_GRAPH_MONITOR_CYCLES, 0),
                          (AT_GRAPH_CHECKSUM, 0), (AT_GRAPH_DUMP_TENSOR, 0), (AT_GRAPH_SIZE_OPT, 0),
                          (AT_GRAPH_REORDER_CONSTANT_IN, 0), (AT_GRAPH_L2_STATIC_MEMORY_BUDGET, 0)):
            AT_SetGraphCtrl(ctrl, val)
        declare(tmp_path, GENEROUS)
        assert generate(m)["GraphKernels.c"] == plain["GraphKernels.c"]
