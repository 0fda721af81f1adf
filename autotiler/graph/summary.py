"""A graph's memory plan (:class:`~autotiler.graph.lower.GraphPlan`) as plain JSON data: what the
manifest carries under ``graphs[i]["plan"]``, what :mod:`autotiler.reports` prints and what
``autotiler report`` draws. Deterministic (floats rounded), so that the same model writes the
same manifest.

Each symbol: ``area`` ("arg": the application's buffer, "dyn": dynamic L2, "static": static L2,
a promoted constant, "flash": a constant prefetched into dynamic L2, "l3": an activation spilled
to the L3 RAM area, offset in that area; ``l3`` lists them, the L3 traffic per run and the node
kernel variants with their L2 staging), ``offset`` in its area,
``size``, the nodes ``first``..``last`` reading or writing it, and ``l2_first``..``l2_last``, the
nodes during which it holds its L2 bytes (a prefetched constant from the node after its copy
starts; a promoted constant from construction to destruction: every node; an argument: none).
"""

from __future__ import annotations

from typing import Optional

from .lower import GraphPlan

AREAS = {"arg": "argument", "dyn": "dynamic L2", "static": "static L2", "flash": "flash->L2", "l3": "L3 RAM",
         "flash_exec": "flash (read by the kernel)"}


def _held(s, nodes: int) -> tuple:
    if s.area in ("arg", "l3", "flash_exec"):   # in L3 or flash: only its nodes' staging slots in L2
        return None, None
    if s.area == "static":
        return 0, max(nodes - 1, 0)
    if s.area == "flash":
        return s.prefetch_start + 1, s.last
    return s.first, s.last


def plan_json(plan: GraphPlan, static_budget: Optional[int] = None) -> dict:
    """The plan as JSON data (see the module docstring). ``static_budget``: the graph's
    ``AT_GRAPH_L2_STATIC_MEMORY_BUDGET`` (None or 0: all of L2)."""
    dyn, n = plan.dyn, len(plan.nodes)
    stall = {p.name: round(float(p.stall), 1) for p in plan.prefetches}
    symbols = []
    for s in plan.symbols:
        lo, hi = _held(s, n)
        symbols.append({"name": s.name, "area": s.area, "offset": s.offset, "size": s.size, "first": s.first,
                        "last": s.last, "l2_first": lo, "l2_last": hi, "flash_offset": s.flash_offset,
                        "prefetch_start": s.prefetch_start, "prefetch_stall": stall.get(s.name),
                        "flash": s.flash_loc.name if s.flash_loc is not None else None, "scalar": s.scalar})
    return {
        "nodes": list(plan.nodes),
        "l2_budget": plan.l2_budget,
        "static": {"bytes": plan.static_bytes, "budget": static_budget or plan.l2_budget},
        "dynamic": {"bytes": dyn.peak, "lower_bound": dyn.lower_bound, "ratio": round(dyn.ratio, 4),
                    "algorithm": dyn.algorithm, "tried": {name: peak for name, peak in dyn.tried}},
        "total": plan.static_bytes + dyn.peak,
        "flash": {"bytes": plan.flash_bytes,
                  "devices": {loc.name: image.total for loc, image in plan.flashes},
                  "promoted": [s.name for s in plan.symbols if s.area == "static"],
                  "prefetched": [s.name for s in plan.symbols if s.area == "flash"]},
        "symbols": symbols,
        "l3": {"bytes": plan.l3_bytes, "traffic": plan.l3_traffic,
               "spilled": [s.name for s in plan.symbols if s.area == "l3"],
               "variants": [{"node": v.node, "kernel": v.kernel, "name": v.name, "l3_cargs": list(v.l3_cargs),
                             "staging": v.staging, "offset": v.offset} for v in plan.variants]},
    }


__all__ = ["AREAS", "plan_json"]
