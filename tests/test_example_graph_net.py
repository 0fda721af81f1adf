"""examples/graph_net (issue "Graph mode" §7): a seven-node graph of examples/cnn_conv_v3's 3-space
convolution and saturating adds, with a branch joined by a residual add, a concatenation through
stacked tensors, constants read from files (one float file converted to Q8) and an in-place
update, generated under L2 budgets from generous to so tight that both plain activations live in
L3 RAM and every constant is fetched from flash at each run: the output equals numpy's every
time (sentinel-prefilled), the L3 traffic is 0 when generous and rises as the budget shrinks.
``pytest -s`` prints the figures per budget. The ``autotiler`` command runs the example end to
end once (generate, build, run on an .npy input, report with a PNG)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.graph.lower import plan_graph

from .conftest import EXAMPLES, ROOT, load_module

HERE = EXAMPLES / "graph_net"
MODEL = load_module(HERE / "model.py", "model_graph_net_tests")
REF = load_module(HERE / "reference.py", "reference_graph_net_tests")
SOURCES = [HERE / s for s in REF.SOURCES]
GRAPH = MODEL.NAME
KiB = 1024
# L1 of the runs below: below the example's 10240 B the L3 variants' tiles, hence their L2 staging,
# are smaller, so that T1 and T2 can both live in L3 (at 10240 B only T2 can: Add1's staging
# leaves no room for T1's)
L1 = 8192
# generous: everything in L2, constants promoted; 15800: exactly static 3512 + dynamic 12288;
# 12288: the activations alone (constants fetched from flash at each run); 11000: T2 in L3 RAM;
# 9664: T1 and T2 in L3 RAM (S, the node's staging and the fetched constants fill L2 at node 3)
BUDGETS = (64 * KiB, 15800, 12288, 11000, 9664)
PINNED = {"S", "S0", "S1", "T3", "T4"}     # stacked or aliased: kept in L2 (docs/graph.md)
SPILLED = {64 * KiB: set(), 15800: set(), 12288: set(), 11000: {"T2"}, 9664: {"T1", "T2"}}
CONSTS = {f"{k}{i}" for k in "FB" for i in range(1, 6)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{budget: (plan, generated C, counters of a run)}: each budget generated, built, constructed,
    run twice on two inputs (outputs equal to numpy's), destructed."""
    out = {}
    inputs = [REF.make_input(np.random.default_rng(seed)) for seed in (1, 2)]
    for l2 in BUDGETS:
        tmp = tmp_path_factory.mktemp(f"graph_net_{l2}")
        with Model() as m:
            MODEL.declare(l1=L1, l2=l2)
            plan = plan_graph(m, m.graphs[GRAPH], l2)
            files = generate(m)
        write_files(files, str(tmp))
        prog = host_harness.build(tmp, sources=SOURCES, include_dirs=[HERE])
        g = prog.graph(GRAPH)
        g.construct()
        counters = []
        for x in inputs:
            got = np.full(REF.OUT_SHAPE, REF.SENTINEL, dtype=np.int16)
            counters.append(g.run(In=x, Out=got))
            np.testing.assert_array_equal(got, REF.graph_expected(x), err_msg=f"L2 budget {l2}")
        assert g.memory("AT_L3_MEM") == plan.l3_bytes
        g.destruct()
        assert counters[0]["l3_to_l2"] == counters[1]["l3_to_l2"]
        out[l2] = (plan, files["GraphNetKernels.c"], counters[0])
    return out


def l3_moved(c) -> int:
    return c["l3_to_l2"] + c["l2_to_l3"]


def test_reference_is_not_trivial():
    t = REF.graph_tensors(REF.make_input(np.random.default_rng(1)))
    for name in ("T1", "S", "T2", "T3", "T4", "Out"):
        assert np.count_nonzero(t[name]) > t[name].size // 4, name   # the ReLUs zero about half
    # F1 is the float file converted to Q8: not the raw float bits
    f1 = REF.load_consts()["F1"]
    assert f1.dtype == np.int16 and 5 < np.abs(f1).max() < 100


def test_output_and_figures_per_budget(runs):
    print(f"\n{'L2 budget':>10} {'static':>7} {'dynamic':>8} {'ratio':>6} {'L3 B':>6} {'L3 traffic':>10} {'(plan)':>7} "
          f"{'flash->L2':>9} {'cycles':>8}  spilled")
    traffic = []
    for l2 in BUDGETS:
        plan, _, c = runs[l2]
        moved = l3_moved(c)
        traffic.append(moved)
        spilled = {s.name for s in plan.symbols if s.area == "l3"}
        ratio = plan.dyn.peak / plan.dyn.lower_bound
        print(f"{l2:>10} {plan.static_bytes:>7} {plan.dyn.peak:>8} {ratio:>6.3f} {plan.l3_bytes:>6} {moved:>10} {plan.l3_traffic:>7} "
              f"{c['flash_to_l2']:>9} {c['cycles']:>8}  {','.join(sorted(spilled)) or '-'}")
        assert plan.static_bytes + plan.dyn.peak <= l2
        assert spilled == SPILLED[l2] and not spilled & PINNED
        assert ratio == plan.dyn.ratio >= 1.0
        # the plan's figure is its kernel variants' tilings: overlapping conv tiles included
        assert moved == plan.l3_traffic
        consts = {s.name: s.area for s in plan.symbols if s.name in CONSTS}
        if l2 >= 15800:
            assert set(consts.values()) == {"static"} and c["flash_to_l2"] == 0
        else:   # every constant fetched from flash at each run, none in L3
            assert set(consts.values()) == {"flash"} and c["flash_to_l2"] == sum(s.size for s in plan.symbols
                                                                                 if s.name in CONSTS)
    assert traffic[0] == traffic[1] == traffic[2] == 0
    assert 0 < traffic[3] < traffic[4]


def test_per_node_counters_show_the_spilled_tensors(runs):
    plan, _, c = runs[9664]
    nodes = c["nodes"]
    assert [n["name"] for n in nodes] == list(plan.nodes) == ["Conv1", "ConvA", "ConvB", "Add1", "Conv2", "AddIP",
                                                              "Conv3"]
    assert sum(n["cycles"] for n in nodes) == c["cycles"]
    moved = [n["l3_to_l2"] + n["l2_to_l3"] for n in nodes]
    # T1 (written by node 0, read by 1, 2, 3) and T2 (written by 3, read by 4, 5) in L3; node 6 touches neither
    assert nodes[0]["l2_to_l3"] == 4096 and nodes[3]["l2_to_l3"] == 4096
    assert all(moved[i] > 0 for i in range(6)) and moved[6] == 0
    generous = runs[64 * KiB][2]["nodes"]
    assert all(n["l3_to_l2"] == n["l2_to_l3"] == n["flash_to_l2"] == 0 for n in generous)


def test_spilled_nodes_call_kernel_variants(runs):
    plan, text, _ = runs[9664]
    assert {v.name for v in plan.variants} == {"Conv1_L3_0", "ConvA_L3_1", "ConvB_L3_2", "Add1_L3_3", "Conv2_L3_4",
                                               "AddIP_L3_5"}
    for v in plan.variants:
        assert f"void {v.name}(" in text
    for binding in ("Out: T1", "In: T1", "In2: T1", "Out: T2", "In: T2", "In2: T2"):
        assert f"/* {binding}, L3 RAM */" in text
    # the stacked halves and the in-place update stay at their L2 addresses
    s, s0, s1 = plan.symbol("S"), plan.symbol("S0"), plan.symbol("S1")
    assert s0.offset == s.offset and s1.offset == s.offset + s0.size
    assert plan.symbol("T4").offset == plan.symbol("T3").offset
    _, generous_text, _ = runs[64 * KiB]
    assert "L3_Memory" not in generous_text and "AT_HYPERFLASH_FS_CL_COPY" not in generous_text


def test_model_script_and_autotiler_command_end_to_end(tmp_path):
    """``python examples/graph_net/model.py -o DIR`` works, then the ``autotiler`` command: generate
    at a tight L2 (T2 in L3, the example's L1), build, run on an .npy input, report with a PNG."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")

    def sh(*args, script=False):
        cmd = [sys.executable, *(() if script else ("-m", "autotiler")), *map(str, args)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc.stdout

    sh(HERE / "model.py", "-o", "direct", "-q", script=True)
    assert (tmp_path / "direct" / "GraphNetKernels.c").exists()
    text = sh("generate", HERE / "model.py", "-o", "gen", "--L2", "11520")
    assert "graph GraphNet: 7 node(s)" in text and "T2 spilled" in text
    build = ["--sources", *SOURCES, "-I", HERE]
    assert "graphs: GraphNet" in sh("build", "gen", *build)
    x = REF.make_input(np.random.default_rng(7))
    np.save(tmp_path / "x.npy", x)
    run = sh("run", "gen", "--graph", GRAPH, "--input", "In=x.npy", "--output", "Out=y.npy", *build)
    assert "node 6 Conv3" in run and "L3->L2" in run
    got = np.load(tmp_path / "y.npy")
    assert got.dtype == np.int16 and got.shape == REF.OUT_SHAPE
    np.testing.assert_array_equal(got, REF.graph_expected(x))
    report = sh("report", "gen", "--png", "plan.png")
    assert "lower bound" in report and "wrote plan.png" in report
    assert (tmp_path / "plan.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_const_exec_from_flash_on_the_convolutions(tmp_path):
    """AT_GRAPH_CONST_EXEC_FROM_FLASH: every convolution's filters and biases are read from flash
    by the node's kernel (3-space tiling, filters partially promoted in L1), none in L2."""
    with Model() as m:
        AT_SetGraphCtrl(AT_GRAPH_CONST_EXEC_FROM_FLASH, AT_OPT_ON)
        MODEL.declare(l1=L1, l2=15800)
        plan = plan_graph(m, m.graphs[GRAPH], 15800)
        files = generate(m)
    assert {s.name for s in plan.symbols if s.area == "flash_exec"} == CONSTS and plan.static_bytes == 0
    write_files(files, str(tmp_path))
    g = host_harness.build(tmp_path, sources=SOURCES, include_dirs=[HERE]).graph(GRAPH)
    g.construct()
    x = REF.make_input(np.random.default_rng(1))
    got = np.full(REF.OUT_SHAPE, REF.SENTINEL, dtype=np.int16)
    c = g.run(In=x, Out=got)
    g.destruct()
    np.testing.assert_array_equal(got, REF.graph_expected(x))
    assert c["flash_to_l2"] == sum(v.tiling.traffic_l3_in for v in plan.variants) > 0
