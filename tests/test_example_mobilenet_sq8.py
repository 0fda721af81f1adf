"""examples/mobilenet_sq8 (issue 23 §5): MobileNet v1 (width 0.25, 128x128x3) in SQ8 form with
TensorFlow Lite Micro's int8 arithmetic, random but fixed weights, from the SQ8 generators as one
34-node graph, generated, built and run on the simulated GAP8; its output (pre-filled with a
sentinel) equals the numpy reference (sq8_tflm's operators, each proven against tflite-micro) bit
for bit, every intermediate activation too, at the GAP8 budget and at a tight L2 budget where
activations spill to L3 RAM. ``pytest -s`` prints the figures.
"""

from __future__ import annotations

import numpy as np
import pytest

import host_harness
from autotiler import Model
from autotiler.codegen import generate, write_files
from autotiler.generators import CNN_KERNELS_DIR, CNN_SQ8_SOURCES
from autotiler.graph.lower import plan_graph

from .conftest import EXAMPLES, load_module

HERE = EXAMPLES / "mobilenet_sq8"
MODEL = load_module(HERE / "model.py", "model_mobilenet_sq8_tests")
REF = load_module(HERE / "reference.py", "reference_mobilenet_sq8_tests")
NET = MODEL.NET
GRAPH = MODEL.NAME
KiB = 1024
GAP8 = MODEL.L2_BUDGET
TIGHT = 80 * KiB
BUDGETS = (GAP8, TIGHT)
RATIO = 1.05


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{budget: (plan, counters of one run)}: each budget generated, built, run on an input, its
    output checked against numpy."""
    out = {}
    for seed, l2 in enumerate(BUDGETS, start=1):
        tmp = tmp_path_factory.mktemp(f"mobilenet_sq8_{l2}")
        with Model() as m:
            MODEL.declare(l2=l2)
            plan = plan_graph(m, m.graphs[GRAPH], l2)
            write_files(generate(m), str(tmp))
        prog = host_harness.build(tmp, sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR])
        g = prog.graph(GRAPH)
        g.construct()
        x = REF.make_input(np.random.default_rng(seed))
        got = np.full(REF.OUT_SHAPE, REF.SENTINEL, dtype=np.int8)
        # flat: Conv0 tiles the graph's Input as lines of Width x Features items
        counters = g.run(Input=x.ravel(), Output=got)
        np.testing.assert_array_equal(got, REF.expected_output(x), err_msg=f"L2 budget {l2}")
        g.destruct()
        out[l2] = (plan, counters)
    return out


def test_weights_are_fixed_and_keep_the_activations_in_range():
    """The constants are the pinned bytes; no layer's output sits mostly at the int8 bounds (ReLU6's
    zero is -128, so about half of a layer is), the logits spread, the softmax is not uniform (its
    1/256 steps round most of the 1000 small probabilities to 0, so they add up to less than 1)."""
    w = REF.load_weights()
    assert NET.digest(w) == NET.WEIGHTS_SHA256
    x = REF.make_input(np.random.default_rng(1))
    for name, (at_bounds, rms) in REF.layer_stats(x).items():
        assert at_bounds <= 0.75, (name, at_bounds)
        assert 0.05 <= rms <= 6.0, (name, rms)
    t = REF.forward(x)
    assert np.ptp(t["Logits"]) > 40
    p = t["Output"].astype(np.int64) + 128
    assert 128 <= p.sum() <= 256 + 500 and p.max() > 5 * p.mean()


@pytest.mark.parametrize("l2", BUDGETS, ids=["gap8", "tight"])
def test_bit_exact_under_the_budget(runs, l2):
    plan, c = runs[l2]
    spilled = sorted(s.name for s in plan.symbols if s.area == "l3")
    print(f"\nL2 budget {l2} B: static {plan.static_bytes} B, dynamic {plan.dyn.peak} B (lower bound "
          f"{plan.dyn.lower_bound}), in L3 RAM {spilled or '-'}; {c['cycles']} cycles, "
          f"{NET.MACS / c['cycles']:.2f} MAC/cycle, flash->L2 {c['flash_to_l2']} B")
    assert plan.static_bytes + plan.dyn.peak <= l2
    assert plan.dyn.peak <= RATIO * plan.dyn.lower_bound
    assert c["peak_l1"] <= MODEL.L1_BUDGET and c["peak_l2"] <= MODEL.L2_SIZE
    assert [n["name"] for n in c["nodes"]] == list(MODEL.NODES)
    if l2 == TIGHT:
        assert spilled and c["l3_to_l2"] + c["l2_to_l3"] == plan.l3_traffic
