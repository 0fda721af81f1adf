"""Graph paths the basic end-to-end test does not run, on the simulated chip and bit-exact
against numpy (outputs pre-filled with a sentinel): a constant prefetched from flash in the
middle of a run, overlapping compute; a kernel group as a node, GNodeArgImmOper /
GNodeArgCArgOper, GNodeCArg, AddCallToNode prologs and epilogs (tests/kernels/GraphCalls.c),
stacked tensors and an INOUT alias updated in place; random small graphs under random L2
budgets (hypothesis); names the graph code defines against user names."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.graph.lower import plan_graph
from autotiler.graph.plan import PlanError, check_placement, lower_bound

from .conftest import ROOT
from .graph_helpers import ITEMS, P32, add_group, const, inp, lib_add, local, mat_add, out, write_bin

MATADD = ROOT / "examples" / "matrix_add"
KERNELS = ROOT / "tests" / "kernels"
SENTINEL = -7
B = 4 * ITEMS


def build(gen, extra=()):
    return host_harness.build(gen, sources=[MATADD / "MatAddBasicKernels.c", *extra],
                              include_dirs=[MATADD, KERNELS])


def emit(m, tmp_path, name="gen"):
    files = generate(m)
    gen = tmp_path / name
    write_files(files, str(gen))
    return files, gen


def run_graph(prog, **args) -> dict:
    g = prog.graph("G")
    g.construct()
    try:
        return g.run(**args)
    finally:
        g.destruct()


def filled(shape=(1, 4, 8)):
    return np.full(shape, SENTINEL, dtype=np.int32)


def x_in():
    return (np.arange(ITEMS, dtype=np.int32) * 3 - 40).reshape(1, 4, 8)


# ---------------------------------------------------------------------------------------------
# 1. A constant prefetched in the middle of a run


PREFETCH_L2 = 2048
DIMS = [(32, 8)] * 3 + [(8, 4)] * 3     # three wide nodes, then three narrow ones: L2 frees up


def declare_prefetch(tmp_path) -> np.ndarray:
    """K0..K5: T_i = T_{i-1} + T_{i-1} (In for i = 0), Out = T4 + W; K3 reads the first 32
    items of the 256-item T2. W (used by K5 only) cannot stay in static L2 (the wide nodes need
    all of it) and K3, K4 take longer than its copy: it is fetched after K2."""
    SetUsedFilesNames(0, 1, "MatAddBasicKernels.h")
    SetGeneratedFilesNames("GraphKernels.c", "GraphKernels.h")
    SetMemorySizes(51200, PREFETCH_L2)
    lib_add()
    for i, (w, h) in enumerate(DIMS):
        mat_add(f"K{i}", w=w, h=h)
    wv = np.arange(ITEMS) * 5 - 11
    path = write_bin(tmp_path / "w.bin", wv)
    CreateGraph("G", CArgs(inp(), const("W", path), out()), CArgs(*[local(f"T{i}") for i in range(5)]))
    prev = "In"
    for i in range(6):
        dst = "Out" if i == 5 else f"T{i}"
        AddNode(f"K{i}", Bindings(GNodeArg(GNA_IN, prev, 0), GNodeArg(GNA_IN, "W" if i == 5 else prev, 0),
                                  GNodeArg(GNA_OUT, dst, 0)))
        prev = dst
    CloseGraph()
    return wv


def prefetch_reference(x: np.ndarray, wv: np.ndarray) -> np.ndarray:
    t = x.ravel().astype(np.int64)
    for _ in range(5):
        t = 2 * t[:ITEMS]
    return (t[:ITEMS] + wv).astype(np.int32)


def delay_copy(c_text: str) -> str:
    """The runner with W's copy moved to right before its wait (no overlap with compute)."""
    copy = re.search(r"\t/\* Prefetching W .*\n\tAT_HYPERFLASH_FS_CL_COPY\(.*\n", c_text).group(0)
    moved = c_text.replace(copy, "")
    wait = "\t/* Waiting completion of transfer of W */\n"
    assert moved.count(wait) == 1
    return moved.replace(wait, copy + wait)


@pytest.fixture(scope="module")
def prefetch(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("prefetch")
    with Model() as m:
        wv = declare_prefetch(tmp)
        plan = plan_graph(m, m.graphs["G"])
        files, gen = emit(m, tmp)
    late = tmp / "late"
    write_files(files, str(late))
    text = delay_copy(files["GraphKernels.c"])
    (late / "GraphKernels.c").write_text(text)
    manifest = json.loads(files["GraphKernels.json"])         # the edited file, declared as generated
    manifest["set"]["files"]["GraphKernels.c"] = hashlib.sha256(text.encode()).hexdigest()
    (late / "GraphKernels.json").write_text(json.dumps(manifest))
    return plan, files, build(gen), build(late), wv


def test_constant_is_prefetched_after_a_middle_node(prefetch):
    plan, files, *_ = prefetch
    w = plan.symbol("W")
    assert w.area == "flash" and w.first == 5 and 0 <= w.prefetch_start < w.first - 1
    runner = files["GraphKernels.c"].split("int G(\n", 1)[1]
    copy = runner.index("AT_HYPERFLASH_FS_CL_COPY(")
    after, before = f"/* Node {w.prefetch_start}:", f"/* Node {w.prefetch_start + 1}:"
    assert runner.index(after) < copy < runner.index(before)          # issued right after that node
    wait = runner.index("AT_HYPERFLASH_FS_CL_WAIT(&HyperFlash, UchanHF0);")
    assert copy < wait < runner.index("/* Node 5:")
    assert "/* Node" not in runner[wait:runner.index("/* Node 5:")]      # waited right before the consumer


def test_prefetch_overlaps_compute_and_runs_bit_exact(prefetch):
    plan, _, prog, late, wv = prefetch
    x_wide = (np.arange(256, dtype=np.int32) - 100).reshape(1, 8, 32)
    cycles = []
    for p in (prog, late):
        got = filled()
        counters = run_graph(p, In=x_wide, Out=got)
        np.testing.assert_array_equal(got.ravel(), prefetch_reference(x_wide, wv))
        assert counters["flash_to_l2"] == B                              # fetched by the run
        cycles.append(counters)
    early, delayed = cycles
    copy = 300 + B  # at least the flash set-up and one cycle a byte are hidden behind K3, K4
    assert delayed["cycles"] - early["cycles"] >= copy // 2, (early["cycles"], delayed["cycles"])
    assert early["stall_cycles"] < delayed["stall_cycles"]


# ---------------------------------------------------------------------------------------------
# 2. Groups, operator bindings, C arguments, added calls, stacked tensors, an in-place update


def add_scalar(name: str) -> None:
    """``name(In, Out, Val)``: Out = In + Val (8 x 4 Word32), Val a scalar C argument."""
    UserKernel(name, KernelDimensions(1, 8, 4, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,
               CArgs(3, TCArg(P32, "In"), TCArg(P32, "Out"), TCArg("int", "Val")),
               Calls(1, Call("MatAddScalarPar", LOC_INNER_LOOP, Bindings(
                   5, K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE), K_Arg("In", KER_ARG_TILE_W),
                   K_Arg("In", KER_ARG_TILE_H), C_Arg("Val")))),
               KerArgs(2, KerArg("In", OBJ_IN_DB, 8, 4, 4, 0, 0, 0, "In", 0),
                       KerArg("Out", OBJ_OUT_DB, 8, 4, 4, 0, 0, 0, "Out", 0)))


def scalar(name: str):
    return TCArgInfo("int", name, ARG_SCOPE_ARG, ARG_DIR_IN, AT_MEM_UNDEF, AT_MEM_UNDEF, 0)


def declare_paths(tmp_path) -> np.ndarray:
    SetUsedFilesNames(0, 2, "MatAddBasicKernels.h", "GraphCalls.h")
    SetGeneratedFilesNames("GraphKernels.c", "GraphKernels.h")
    SetMemorySizes(51200, 64 * 1024)
    lib_add()
    LibKernel("MatAddScalarPar", CALL_PARALLEL, CArgs(5, TCArg(P32, "In"), TCArg(P32, "Out"),
                                                      TCArg("unsigned int", "W"), TCArg("unsigned int", "H"),
                                                      TCArg("int", "Val")), "MatAddScalar_Arg_T")
    add_group("Grp")
    add_scalar("AddS")
    for k in ("K2", "KA", "KI", "KO"):
        mat_add(k)
    mat_add("KW", w=8, h=8)
    wv = np.arange(ITEMS) * 7 - 3
    path = write_bin(tmp_path / "w.bin", wv)
    CreateGraph("G", CArgs(inp(), scalar("Val"), scalar("Off"), const("W", path), out()),
                CArgs(*[local(n) for n in ("T0", "T1", "S", "T2", "T3", "T4")]))
    AddStackedTensors("S", 2, "S0", "S1")
    # 0: the group: T0 = In + W, T1 = T0 + In
    AddNode("Grp", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "W", 0), GNodeArg(GNA_OUT, "T0", 0),
                            GNodeArg(GNA_OUT, "T1", 0)))
    # 1: T1 += 1 (prolog), S0 = T1 + Val (a scalar graph argument)
    AddNode("AddS", Bindings(GNodeArg(GNA_IN, "T1", 0), GNodeArg(GNA_OUT, "S0", 0), GNodeCArg("Val")))
    AddCallToNode("AddS", CALL_PROLOG, "GraphAddOne", Bindings(2, GArg("T1"), Imm(ITEMS)))
    # 2: S1 = T0 + In (S = S0 S1, assembled in place)
    AddNode("K2", Bindings(GNodeArg(GNA_IN, "T0", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "S1", 0)))
    # 3: T2 = S + S, S read whole (8 x 8)
    AddNode("KW", Bindings(GNodeArg(GNA_IN, "S", 0), GNodeArg(GNA_IN, "S", 0), GNodeArg(GNA_OUT, "T2", 0)))
    # 4: T3 = T2[32:] + T2[Off:Off + 32]
    AddNode("KA", Bindings(GNodeArgImmOper(GNA_IN, "T2", 0, "+", ITEMS), GNodeArgCArgOper(GNA_IN, "T2", 0, "+", "Off"),
                           GNodeArg(GNA_OUT, "T3", 0)))
    # 5: T4 = T3 + In, in place (T4 aliases T3)
    AddNode("KI", Bindings(GNodeArg(GNA_IN, "T3", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_INOUT, "T4", "T3")))
    # 6: Out = T4 + T0, then Out += 1 and Out += T1 (epilogs; T1 is otherwise dead since node 1)
    AddNode("KO", Bindings(GNodeArg(GNA_IN, "T4", 0), GNodeArg(GNA_IN, "T0", 0), GNodeArg(GNA_OUT, "Out", 0)))
    AddCallToNode("KO", CALL_EPILOG, "GraphAddOne", Bindings(2, GArg("Out"), Imm(ITEMS)))
    AddCallToNode("KO", CALL_EPILOG, "GraphAccumulate", Bindings(3, GArg("Out"), GArg("T1"), Imm(ITEMS)))
    CloseGraph()
    return wv


def paths_reference(x, wv, val: int, off: int) -> np.ndarray:
    x = x.ravel().astype(np.int64)
    t0 = x + wv
    t1 = t0 + x + 1
    s = np.concatenate([t1 + val, t0 + x])
    t2 = 2 * s
    t4 = t2[ITEMS:] + t2[off:off + ITEMS] + x
    return (t4 + t0 + 1 + t1).astype(np.int32)


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("paths")
    with Model() as m:
        wv = declare_paths(tmp)
        plan = plan_graph(m, m.graphs["G"])
        files, gen = emit(m, tmp)
    return plan, files, build(gen, [KERNELS / "GraphCalls.c"]), wv


def test_paths_plan_addresses(paths):
    plan, *_ = paths
    s, s0, s1 = plan.symbol("S"), plan.symbol("S0"), plan.symbol("S1")
    assert (s.size, s0.size, s1.size) == (2 * B, B, B)
    assert s0.offset == s.offset and s1.offset == s.offset + B          # the halves of S
    assert plan.symbol("T4").offset == plan.symbol("T3").offset          # updated in place
    assert (plan.symbol("T1").first, plan.symbol("T1").last) == (0, 6)   # kept alive for the epilog
    assert plan.symbol("T2").size == 2 * B
    check_placement(plan.dyn.buffers, plan.dyn.offsets, plan.dyn.peak)


def test_paths_generated_calls(paths):
    _, files, *_ = paths
    runner = files["GraphKernels.c"].split("int G(\n", 1)[1]
    assert re.search(r"/\* Node 0: kernel group Grp \*/\n\tGrp\(", runner)
    assert re.search(r"GraphAddOne\(\(\(Word32 \* __restrict__\) \(L2_Memory_Dyn \+ \d+\)\), 32\); /\* prolog \*/"
                     r"\n\tAddS\(", runner)
    assert "((int) Val) /* Val: Val */" in runner
    assert re.search(r"\(\(Word32 \* __restrict__\) \(L2_Memory_Dyn \+ \d+\)\) \+ \(32\)\)\), /\* In1: T2", runner)
    assert re.search(r"\(\(Word32 \* __restrict__\) \(L2_Memory_Dyn \+ \d+\)\) \+ \(Off\)\)\), /\* In2: T2", runner)
    epilog = runner.split("/* Node 6:", 1)[1]
    assert epilog.index("KO(") < epilog.index("GraphAddOne(Out, 32); /* epilog */") < epilog.index(
        "GraphAccumulate(Out, ")


@pytest.mark.parametrize("val, off", [(5, 0), (-9, 32), (0, 13)])
def test_paths_run_bit_exact(paths, val, off):
    _, _, prog, wv = paths
    x = x_in()
    got = filled()
    run_graph(prog, In=x, Val=val, Off=off, Out=got)
    np.testing.assert_array_equal(got.ravel(), paths_reference(x, wv, val, off))


# ---------------------------------------------------------------------------------------------
# 3. Random small graphs under random L2 budgets


@st.composite
def graphs(draw):
    n = draw(st.integers(2, 6))
    nconst = draw(st.integers(0, 3))
    consts = [draw(st.lists(st.integers(-1000, 1000), min_size=ITEMS, max_size=ITEMS)) for _ in range(nconst)]
    nodes = []
    for i in range(n):
        sources = ["In", *[f"C{j}" for j in range(nconst)], *[f"T{k}" for k in range(i - 1)]]
        first = "In" if i == 0 else f"T{i - 1}"
        nodes.append((first, draw(st.sampled_from(sources))))
    # generous, or from far too small to a few tensors (where constants start to stay in flash)
    l2 = draw(st.one_of(st.just(64 * 1024), st.integers(B // 4, 5 * B // 4).map(lambda w: 4 * w)))
    return nodes, consts, l2


def random_reference(nodes, consts, x) -> np.ndarray:
    vals = {"In": x.ravel().astype(np.int64), **{f"C{j}": np.array(c) for j, c in enumerate(consts)}}
    for i, (a, b) in enumerate(nodes):
        vals[f"T{i}"] = vals[a] + vals[b]
    return vals[f"T{len(nodes) - 1}"].astype(np.int32)


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(graphs())
def test_random_graphs_plan_within_l2_and_run_bit_exact(tmp_path_factory, case):
    nodes, consts, l2 = case
    n = len(nodes)
    tmp = tmp_path_factory.mktemp("random")
    with Model() as m:
        SetUsedFilesNames(0, 1, "MatAddBasicKernels.h")
        SetGeneratedFilesNames("GraphKernels.c", "GraphKernels.h")
        SetMemorySizes(51200, l2)
        lib_add()
        for i in range(n):
            mat_add(f"K{i}")
        cs = [const(f"C{j}", write_bin(tmp / f"c{j}.bin", c)) for j, c in enumerate(consts)]
        CreateGraph("G", CArgs(inp(), *cs, out()), CArgs(*[local(f"T{i}") for i in range(n - 1)]))
        for i, (a, b) in enumerate(nodes):
            dst = "Out" if i == n - 1 else f"T{i}"
            AddNode(f"K{i}", Bindings(GNodeArg(GNA_IN, a, 0), GNodeArg(GNA_IN, b, 0), GNodeArg(GNA_OUT, dst, 0)))
        CloseGraph()
        try:
            plan = plan_graph(m, m.graphs["G"])
        except PlanError as e:
            assert e.level == "L2" and e.missing > 0 and e.node_name == f"K{e.node}"
            assert re.search(rf"L2 is {e.missing} bytes short at node {e.node} \('K{e.node}'\).*L2 holds {l2}", str(e))
            with pytest.raises(PlanError):
                generate(m)
            event("L2 too small")
            return
        files, gen = emit(m, tmp)
    assert plan.static_bytes + plan.dyn.peak <= l2
    assert plan.dyn.peak >= lower_bound(plan.dyn.buffers)
    check_placement(plan.dyn.buffers, plan.dyn.offsets, l2 - plan.static_bytes)
    x = x_in()
    got = filled()
    counters = run_graph(build(gen), In=x, Out=got)
    np.testing.assert_array_equal(got.ravel(), random_reference(nodes, consts, x))
    fetched = sum(plan.symbol(f"C{j}").area == "flash" for j in range(len(consts))
                  if any(f"C{j}" in nd for nd in nodes))
    assert counters["flash_to_l2"] == fetched * B
    event(f"ran, {fetched} constant(s) fetched from flash")


# ---------------------------------------------------------------------------------------------
# 4. Names the graph code defines


def base():
    SetMemorySizes(51200, 64 * 1024)
    lib_add()
    mat_add("K1")


def graph(name="G", args=None, locs=()):
    CreateGraph(name, CArgs(*(args or (inp(), out()))), CArgs(*locs))
    AddNode("K1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_OUT, "Out", 0)))
    CloseGraph()


def clash(*fragments: str):
    return pytest.raises(ModelError, match=".*".join(re.escape(f) for f in fragments))


@pytest.mark.parametrize("suffix", ["_Construct", "_Destruct", "_Memory"])
def test_graph_functions_against_kernels_declared_before(suffix):
    with Model():
        base()
        mat_add("G" + suffix)
        with clash(f"a user kernel or group named 'G{suffix}' is already declared"):
            graph()


@pytest.mark.parametrize("suffix", ["_Construct", "_Destruct", "_Memory"])
def test_graph_functions_against_kernels_groups_and_basic_kernels_declared_after(suffix):
    with Model():
        base()
        graph()
        with clash(f"user kernel or group name 'G{suffix}' is also a function of graph 'G' in the generated code"):
            mat_add("G" + suffix)
        with clash(f"'G{suffix}' is also a function of graph 'G' in the generated code"):
            add_group("G" + suffix)
        with clash(f"basic kernel 'G{suffix}' is also a function of graph 'G' in the generated code"):
            LibKernel("G" + suffix, CALL_PARALLEL, CArgs(1, TCArg(P32, "In")), "Other_T")


def test_graph_functions_against_the_memory_symbols():
    with Model():
        base()
        SetSymbolNames("L1_Memory", "G_Memory")
        with clash("'G_Memory' is also the L2 memory symbol (SetSymbolNames at ", "test_graph_paths.py:",
                   ") in the generated code"):
            graph()
    with Model():
        base()
        graph()
        with clash("memory symbol 'G_Destruct' is also a function of graph 'G' in the generated code"):
            SetSymbolNames("G_Destruct", "L2_Memory")


@pytest.mark.parametrize("name, what", [
    ("L2_Memory_Dyn", "the dynamic L2 memory symbol of graphs (<L2>_Dyn)"),
    ("HyperFlash", "the flash device symbol of graph constants in AT_MEM_L3_HFLASH"),
    ("QspiFlash", "the flash device symbol of graph constants in AT_MEM_L3_QSPIFLASH"),
    ("AT_L2_DYN_MEM", "a value of AT_MEM_TYPE (graph memories)"),
    ("AT_MEM_TYPE", "the graph memory type AT_MEM_TYPE"),
])
def test_generated_graph_globals_against_user_names(name, what):
    with Model():
        base()
        with clash(f"user kernel or group name '{name}' is also {what} in the generated code"):
            mat_add(name)
        with clash(f"'{name}' is also {what}"):
            graph(name)
        with clash(f"graph 'G': symbol '{name}' is also {what} in the generated code"):
            graph(args=(inp(name), out()))
    with Model():
        base()
        with clash(f"graph 'G': symbol '{name}' is also {what} in the generated code"):
            graph(locs=(local(name),))


@pytest.mark.parametrize("name, what", [
    ("K1", "user kernel 'K1'"),          # would hide the node's function inside the runner
    ("UchanHF0", "a local of the runner 'G' (a flash copy event)"),
    ("_UchanHF3", None),
    ("L1_Memory", "the L1 memory symbol (SetSymbolNames)"),
])
def test_runner_parameters_against_what_the_runner_uses(name, what):
    with Model():
        base()
        with pytest.raises(ModelError, match=re.escape(f"graph 'G': symbol '{name}' is also {what}") if what else
                           f"graph symbol '{name}' is reserved"):
            graph(args=(inp(name), out()))


def test_dynamic_l2_symbol_against_a_kernel():
    with Model():
        base()
        mat_add("Mem_Dyn")
        with clash("dynamic L2 symbol of graphs 'Mem_Dyn' is also user kernel 'Mem_Dyn' (declared at ",
                   "graph_helpers.py:", ") in the generated code"):
            SetSymbolNames("L1_Memory", "Mem")
