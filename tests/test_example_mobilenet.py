"""examples/mobilenet (issue 10 §3): MobileNet v1 (width 0.25, 128x128x3, 8-bit, random but fixed
weights) from the CNN generators as one 34-node graph, generated, built and run on the simulated
GAP8, its output (pre-filled with a sentinel) equal to the numpy reference of the whole network
bit for bit, under two L2 budgets:

* the GAP8 budget (L2 512 KiB less the application's input and output buffers): the 467,336 bytes
  of constants do not all fit next to the activations, so some are promoted to static L2 at
  construction and the others prefetched from flash at each run; no activation in L3;
* a tight budget (80 KiB): no constant promoted (every one fetched from flash at each run) and
  the activations that do not fit L2 spilled to L3 RAM, the nodes touching them calling kernel
  variants; the simulator's L3 counters equal the plan's traffic.

In both the dynamic L2 plan is within 1.05x of its lower bound. ``pytest -s`` prints the figures.
"""

from __future__ import annotations

import numpy as np
import pytest

import host_harness
from autotiler import Model
from autotiler.codegen import generate, write_files
from autotiler.generators.cnn_library import CNN_KERNELS_DIR, CNN_SOURCES
from autotiler.graph.lower import plan_graph

from .conftest import EXAMPLES, load_module

HERE = EXAMPLES / "mobilenet"
MODEL = load_module(HERE / "model.py", "model_mobilenet_tests")
REF = load_module(HERE / "reference.py", "reference_mobilenet_tests")
NET = MODEL.NET
GRAPH = MODEL.NAME
KiB = 1024
GAP8 = MODEL.L2_BUDGET          # 460 KiB: GAP8's 512 KiB less the application's Input and Output
TIGHT = 80 * KiB                # activations spill to L3 RAM, every constant fetched at each run
BUDGETS = (GAP8, TIGHT)
CONSTS = {symbol for symbol, _ in NET.constants()}
CONST_BYTES = sum(int(np.prod(shape)) for _, shape in NET.constants())
RATIO = 1.05                    # dynamic L2 peak / its lower bound


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{budget: (plan, generated C, [counters of each run], [input, ...])}: each budget generated,
    built, constructed, run (the GAP8 budget twice, on two inputs), destructed; every output
    checked against numpy."""
    out = {}
    for l2 in BUDGETS:
        tmp = tmp_path_factory.mktemp(f"mobilenet_{l2}")
        with Model() as m:
            MODEL.declare(l2=l2)
            plan = plan_graph(m, m.graphs[GRAPH], l2)
            files = generate(m)
        write_files(files, str(tmp))
        prog = host_harness.build(tmp, sources=CNN_SOURCES, include_dirs=[CNN_KERNELS_DIR])
        g = prog.graph(GRAPH)
        g.construct()
        counters, inputs = [], [REF.make_input(np.random.default_rng(seed)) for seed in ((1, 2) if l2 == GAP8 else (3,))]
        for x in inputs:
            got = np.full(REF.OUT_SHAPE, REF.SENTINEL, dtype=np.int16)
            counters.append(g.run(Input=x, Output=got))
            np.testing.assert_array_equal(got, REF.expected_output(x), err_msg=f"L2 budget {l2}")
        assert g.memory("AT_L3_MEM") == plan.l3_bytes
        g.destruct()
        out[l2] = (plan, files[MODEL.GENERATED_FILES[0]], counters, inputs)
    return out


def l3_moved(c) -> int:
    return c["l3_to_l2"] + c["l2_to_l3"]


def areas(plan) -> dict:
    found: dict = {}
    for s in plan.symbols:
        found.setdefault(s.area, set()).add(s.name)
    return found


def test_weights_are_fixed_and_keep_the_activations_in_range():
    """The weights are the pinned bytes; on random inputs no layer saturates more than 1% of its
    outputs, none is mostly zero, the logits use the range, the probabilities add up to about 1."""
    w = REF.load_weights()
    assert NET.digest(w) == NET.WEIGHTS_SHA256 and sum(v.size for v in w.values()) == CONST_BYTES == 467336
    for seed in (1, 2):
        x = REF.make_input(np.random.default_rng(seed))
        for name, (saturated, zero, rms) in REF.layer_stats(x).items():
            assert saturated <= 0.01, (name, saturated)
            assert zero <= 0.75, (name, zero)
            assert 0.25 <= rms <= 3.0, (name, rms)
        t = REF.forward(x)
        assert t["Logits"].std() > 8           # logits not collapsed (Q4: more than 0.5 apart)
        p = t["Output"].astype(np.int64)
        assert abs(p.sum() - 32768) < 100 and p.max() > 10 * p.mean()


def test_bit_exact_with_constants_promoted_and_prefetched_at_the_gap8_budget(runs):
    plan, text, counters, _ = runs[GAP8]
    a = areas(plan)
    promoted, fetched = a.get("static", set()), a.get("flash", set())
    print(f"\nGAP8 budget {GAP8} B: static {plan.static_bytes} B ({len(promoted)} constants promoted), dynamic "
          f"{plan.dyn.peak} B (lower bound {plan.dyn.lower_bound}), {len(fetched)} constants prefetched "
          f"({counters[0]['flash_to_l2']} B flash->L2 per run), {counters[0]['cycles']} cycles")
    assert promoted and fetched and promoted | fetched == CONSTS
    assert "l3" not in a and plan.l3 is None and plan.l3_bytes == 0
    assert plan.static_bytes + plan.dyn.peak <= GAP8
    assert plan.dyn.peak <= RATIO * plan.dyn.lower_bound
    fetched_bytes = sum(plan.symbol(n).size for n in fetched)
    for c in counters:
        # every prefetched constant crosses once per run, the promoted ones never
        assert c["flash_to_l2"] == fetched_bytes and l3_moved(c) == 0
        assert c["peak_l1"] <= MODEL.L1_BUDGET and c["peak_l2"] <= MODEL.L2_SIZE
    assert counters[0]["cycles"] == counters[1]["cycles"]
    assert "MobileNet_L3_Memory" not in text and "AT_HYPERFLASH_FS_CL_COPY" in text


def test_tight_budget_spills_activations_to_l3_and_fetches_every_constant(runs):
    plan, text, counters, _ = runs[TIGHT]
    c = counters[0]
    a = areas(plan)
    spilled = a.get("l3", set())
    print(f"\ntight budget {TIGHT} B: dynamic {plan.dyn.peak} B (lower bound {plan.dyn.lower_bound}), spilled "
          f"{sorted(spilled)} ({plan.l3_bytes} B of L3), L3 traffic {l3_moved(c)} B (plan {plan.l3_traffic}), "
          f"flash->L2 {c['flash_to_l2']} B, {c['cycles']} cycles")
    assert plan.static_bytes == 0 and a["flash"] == CONSTS and "static" not in a
    assert spilled and spilled <= set(MODEL.ACTIVATIONS)
    assert plan.dyn.peak <= TIGHT and plan.dyn.peak <= RATIO * plan.dyn.lower_bound
    assert c["flash_to_l2"] == CONST_BYTES
    assert l3_moved(c) == plan.l3_traffic > 0 and c["peak_l3"] > 0
    # the nodes touching a spilled activation move L3 bytes (through their kernel variants), the others none
    touching = {i for s in spilled for i in (plan.symbol(s).first, plan.symbol(s).last)}
    assert {v.node for v in plan.variants} == touching
    for i, n in enumerate(c["nodes"]):
        assert (l3_moved(n) > 0) == (i in touching), n["name"]
    for v in plan.variants:
        assert f"void {v.name}(" in text


def test_per_node_counters(runs):
    for l2 in BUDGETS:
        c = runs[l2][2][0]
        nodes = c["nodes"]
        assert [n["name"] for n in nodes] == list(runs[l2][0].nodes) == list(MODEL.NODES)
        assert sum(n["cycles"] for n in nodes) == c["cycles"]
        assert sum(n["flash_to_l2"] for n in nodes) == c["flash_to_l2"]
    gap8 = runs[GAP8][2][0]
    print(f"\n{NET.MACS} MAC in {gap8['cycles']} cycles: {NET.MACS / gap8['cycles']:.2f} MAC/cycle")
