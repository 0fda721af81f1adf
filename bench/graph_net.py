"""The graph example (examples/graph_net) under shrinking L2 budgets: the budgets are swept down
in steps from everything fitting to the smallest the planner accepts; for the smallest budget of
each distinct plan (constants promoted or fetched, activations spilled to L3 RAM) the graph is
generated, built, constructed, run on the simulated chip and checked against numpy. Prints per
plan: static and dynamic L2, the dynamic peak over its lower bound, the L3 area, the L3 traffic
measured (and as the plan counts it), flash->L2 bytes and cycles. Figures are reported, never
asserted (tests/test_example_graph_net.py asserts).

    python bench/graph_net.py [--L1 BYTES] [--step BYTES]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import host_harness  # noqa: E402
from autotiler import Model  # noqa: E402
from autotiler.codegen import generate, write_files  # noqa: E402
from autotiler.graph.lower import plan_graph  # noqa: E402
from autotiler.graph.plan import PlanError  # noqa: E402

HERE = ROOT / "examples" / "graph_net"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_graph_net_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MODEL, REF = load("model"), load("reference")


def plan_at(l1: int, l2: int):
    with Model() as m:
        MODEL.declare(l1=l1, l2=l2)
        return plan_graph(m, m.graphs[MODEL.NAME], l2)


def key(plan) -> tuple:
    return tuple(sorted((s.name, s.area) for s in plan.symbols))


def budgets(l1: int, step: int) -> list:
    """The smallest budget of each distinct plan, generous first."""
    first = plan_at(l1, 1 << 20)
    found, l2 = {key(first): 1 << 20}, first.static_bytes + first.dyn.peak
    while l2 > 0:
        try:
            found[key(plan_at(l1, l2))] = l2
        except PlanError:
            break
        l2 -= step
    return sorted(found.values(), reverse=True)


def run(l1: int, l2: int, x) -> tuple:
    with tempfile.TemporaryDirectory() as tmp, Model() as m:
        MODEL.declare(l1=l1, l2=l2)
        plan = plan_graph(m, m.graphs[MODEL.NAME], l2)
        write_files(generate(m), tmp)
        prog = host_harness.build(tmp, sources=[HERE / s for s in REF.SOURCES], include_dirs=[HERE])
        g = prog.graph(MODEL.NAME)
        g.construct()
        got = np.full(REF.OUT_SHAPE, REF.SENTINEL, dtype=np.int16)
        counters = g.run(In=x, Out=got)
        g.destruct()
    return plan, counters, bool(np.array_equal(got, REF.graph_expected(x)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--L1", type=int, default=MODEL.L1_BUDGET, help="L1 budget (default: the example's)")
    p.add_argument("--step", type=int, default=64, help="L2 sweep step in bytes")
    args = p.parse_args(argv)
    x = REF.make_input(np.random.default_rng(1))
    print(f"examples/graph_net, L1 {args.L1} B")
    print(f"{'L2 budget':>10} {'static':>7} {'dynamic':>8} {'ratio':>6} {'L3 B':>6} {'L3 traffic':>10} {'(plan)':>7} "
          f"{'flash->L2':>9} {'cycles':>8}  {'ok':<3} spilled")
    for l2 in budgets(args.L1, args.step):
        plan, c, ok = run(args.L1, l2, x)
        spilled = ",".join(sorted(s.name for s in plan.symbols if s.area == "l3")) or "-"
        print(f"{l2:>10} {plan.static_bytes:>7} {plan.dyn.peak:>8} {plan.dyn.peak / plan.dyn.lower_bound:>6.3f} "
              f"{plan.l3_bytes:>6} {c['l3_to_l2'] + c['l2_to_l3']:>10} {plan.l3_traffic:>7} {c['flash_to_l2']:>9} "
              f"{c['cycles']:>8}  {'yes' if ok else 'NO':<3} {spilled}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
