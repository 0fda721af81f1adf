"""Graph memory planning on the reference graphs (autotiler/graph/zoo.py): per graph, the peak of
every placement algorithm against the lower bound and the time taken, then the L3 traffic the
spill rule pays at L2 budgets below the bound. Ratios are reported, never asserted.

    python bench/graph_plan.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autotiler.graph import ALGORITHMS, PlanError, check_placement, lower_bound, plan_levels, plan_static  # noqa: E402
from autotiler.graph.zoo import random_dag, zoo  # noqa: E402


def placement_table(graphs: dict) -> None:
    print(f"{'graph':<12}{'buffers':>8}{'bound':>10}  " + "".join(f"{a:>22}" for a in ALGORITHMS))
    for name, bufs in graphs.items():
        cells = []
        for algorithm in ALGORITHMS:
            start = time.perf_counter()
            plan = plan_static(bufs, algorithms=[algorithm])
            elapsed = time.perf_counter() - start
            check_placement(bufs, plan.offsets)
            cells.append(f"{plan.ratio:.3f}x {elapsed * 1e3:7.1f} ms")
        print(f"{name:<12}{len(bufs):>8}{lower_bound(bufs):>10}  " + "".join(f"{c:>22}" for c in cells))


def best_table(graphs: dict) -> None:
    print(f"\n{'graph':<12}{'peak':>10}{'bound':>10}{'ratio':>8}  {'kept':<20}{'time':>10}")
    for name, bufs in graphs.items():
        start = time.perf_counter()
        plan = plan_static(bufs)
        elapsed = time.perf_counter() - start
        print(f"{name:<12}{plan.peak:>10}{plan.lower_bound:>10}{plan.ratio:>8.3f}  {plan.algorithm:<20}"
              f"{elapsed * 1e3:>8.1f} ms")


def spill_table(graphs: dict) -> None:
    print(f"\n{'graph':<12}{'L2/bound':>9}{'spilled':>9}{'L3 traffic':>12}{'L2 peak':>10}{'time':>11}")
    for name, bufs in graphs.items():
        bound = lower_bound(bufs)
        for fraction in (0.9, 0.7, 0.5):
            start = time.perf_counter()
            try:
                plan = plan_levels(bufs, int(bound * fraction), staging={b.name: 256 for b in bufs})
                row = f"{len(plan.spilled):>9}{plan.l3_traffic:>12}{plan.l2.peak:>10}"
            except PlanError as err:
                row = f"  {err}"
            elapsed = time.perf_counter() - start
            print(f"{name:<12}{fraction:>9.1f}{row}{elapsed * 1e3:>9.1f} ms")


def main() -> int:
    graphs = dict(zoo())
    graphs.update({f"random{seed}": random_dag(seed, 80) for seed in range(10, 14)})
    placement_table(graphs)
    best_table(graphs)
    spill_table(zoo())
    return 0


if __name__ == "__main__":
    sys.exit(main())
