"""Reports: what GenerateTilingCode() returns and prints, per kernel, per graph (its memory plan)
and for the whole model; ``autotiler report DIR`` prints the same graph tables from the manifest
(the plot of the L2 plan is :mod:`autotiler.plot`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from .bounds import compulsory as compulsory_traffic
from .bounds import kernel_figures
from .codegen.files import manifest_name, tiling_json
from .graph.lower import plan_graph
from .graph.summary import AREAS, plan_json
from .tiler.tiling import KernelTiling


@dataclass(frozen=True)
class KernelReport:
    name: str
    tiling: KernelTiling
    compulsory_in: int
    compulsory_out: int
    extra: dict = field(default_factory=dict)

    @property
    def ntiles(self) -> int:
        return self.tiling.ntiles

    @property
    def l1_bytes(self) -> int:
        return self.tiling.l1_bytes

    @property
    def traffic(self) -> int:
        return self.tiling.traffic

    @property
    def traffic_ratio(self) -> float:
        comp = self.compulsory_in + self.compulsory_out
        return self.traffic / comp if comp else 1.0

    def summary(self) -> str:
        text = (f"{self.name}: {self.tiling.describe()}; traffic {self.traffic} B "
                f"({self.traffic_ratio:.2f}x compulsory)")
        if "predicted_cycles" in self.extra:
            e = self.extra
            text += (f"; predicted {e['predicted_cycles']} cycles "
                     f"({e['time_vs_roofline']:.2f}x roofline {e['roofline_cycles']}, {e['bound']}-bound)")
        return text

    def to_dict(self) -> dict:
        return {"name": self.name, **tiling_json(self.tiling), "compulsory_in": self.compulsory_in,
                "compulsory_out": self.compulsory_out, **self.extra}


def _live(s: dict) -> str:
    return f"{s['first']}..{s['last']}" if s["first"] != s["last"] else str(s["first"])


@dataclass(frozen=True)
class GraphReport:
    """The memory plan of one graph (``plan``: :func:`autotiler.graph.summary.plan_json`, as in
    the manifest's ``graphs[i]["plan"]``)."""

    name: str
    plan: dict
    fusions: tuple = ()     # the fused layers CNN_FuseGraph_SQ8 chose: {"name", "layers", "reason", "detail"}

    def symbol(self, name: str) -> dict:
        return next(s for s in self.plan["symbols"] if s["name"] == name)

    def table(self) -> list:
        """One row per symbol: name, area, offset, size, live nodes, flash offset, prefetch."""
        nodes = self.plan["nodes"]
        rows = [("symbol", "area", "offset", "size", "live", "flash", "prefetch")]
        for s in self.plan["symbols"]:
            pre = ""
            if s["area"] == "flash":
                start = s["prefetch_start"]
                pre = ("before node 0" if start < 0 else f"after node {start} ({nodes[start]})")
                if s.get("prefetch_stall"):
                    pre += f", stall {s['prefetch_stall']:g} cycles"
            where = "-" if s["flash_offset"] is None else str(s["flash_offset"])
            if s.get("flash") and len(self.plan["flash"].get("devices") or {}) > 1:
                where += f" ({s['flash'].replace('AT_MEM_L3_', '')})"
            rows.append((s["name"], AREAS[s["area"]], "-" if s["offset"] is None else str(s["offset"]),
                         "scalar" if s.get("scalar") else str(s["size"]), _live(s), where, pre))
        return rows

    def format(self, indent: str = "  ") -> str:
        p = self.plan
        nodes, dyn, static = p["nodes"], p["dynamic"], p["static"]
        lines = [f"{indent}graph {self.name}: {len(nodes)} node(s): "
                 + ", ".join(f"{i} {n}" for i, n in enumerate(nodes))]
        rows = self.table()
        widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
        right = {2, 3, 5}
        for r in rows:
            cells = [v.rjust(w) if c in right else v.ljust(w) for c, (v, w) in enumerate(zip(r, widths))]
            lines.append(f"{indent}  " + "  ".join(cells).rstrip())
        lines.append(f"{indent}  L2 {p['total']} B of {p['l2_budget']} B: static {static['bytes']} B "
                     f"(budget {static['budget']} B), dynamic {dyn['bytes']} B (lower bound {dyn['lower_bound']} B, "
                     f"{dyn['ratio']:.2f}x, {dyn['algorithm']})")
        fl = p["flash"]
        pre = [s for s in p["symbols"] if s["area"] == "flash"]
        when = ", ".join(f"{s['name']} " + ("before node 0" if s["prefetch_start"] < 0 else
                                            f"after node {s['prefetch_start']}") for s in pre)
        lines.append(f"{indent}  constants: {len(fl['promoted'])} promoted to static L2"
                     + (f" ({', '.join(fl['promoted'])})" if fl["promoted"] else "")
                     + f", {len(pre)} left in flash" + (f" (prefetch {when})" if pre else "")
                     + f"; flash image {fl['bytes']} B"
                     + (" (" + ", ".join(f"{d} {b} B" for d, b in fl["devices"].items()) + ")"
                        if len(fl.get("devices") or {}) > 1 else ""))
        for f in self.fusions:
            lines.append(f"{indent}  fused {f['name']} = {' + '.join(f['layers'])} ({f['reason']}: {f['detail']})")
        l3 = p.get("l3") or {}
        if l3.get("spilled"):
            lines.append(f"{indent}  L3 RAM {l3['bytes']} B: {', '.join(l3['spilled'])} spilled, "
                         f"{l3['traffic']} B of L3 traffic per run; node kernels staging them: "
                         + ", ".join(f"{v['name']} ({v['staging']} B @{v['offset']})" for v in l3["variants"]))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()

    def to_dict(self) -> dict:
        return {"name": self.name, "plan": self.plan}


def graph_reports(manifest: dict) -> tuple:
    """The GraphReport of each graph of a manifest (JSON data) that carries a plan."""
    return tuple(GraphReport(g["name"], g["plan"], tuple(g.get("fusions") or ())) for g in manifest.get("graphs") or ()
                 if g.get("plan"))


@dataclass(frozen=True)
class GenerationReport:
    kernels: tuple
    groups: tuple
    files: tuple
    l1_budget: int
    graphs: tuple = ()

    @classmethod
    def from_model(cls, model, files) -> GenerationReport:
        kernels = tuple(KernelReport(n, t, *compulsory_traffic(t), extra=_extra(model, t))
                        for n, t in model.tilings.items())
        return cls(kernels, tuple(model.groups), tuple(files), model.l1_budget, _graphs(model, files))

    def kernel(self, name: str) -> KernelReport:
        return next(k for k in self.kernels if k.name == name)

    def graph(self, name: str) -> GraphReport:
        return next(g for g in self.graphs if g.name == name)

    def __getitem__(self, name: str) -> KernelReport:
        return self.kernel(name)

    def format(self) -> str:
        lines = [f"autotiler: {len(self.kernels)} user kernel(s), {len(self.groups)} group(s), "
                 + (f"{len(self.graphs)} graph(s), " if self.graphs else "") + f"L1 budget {self.l1_budget} B"]
        lines += [f"  {k.summary()}" for k in self.kernels]
        lines += [g.format("  ") for g in self.graphs]
        lines += [f"  wrote {f}" for f in self.files]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()

    def to_dict(self) -> dict:
        return {"l1_budget": self.l1_budget, "kernels": [k.to_dict() for k in self.kernels],
                "groups": list(self.groups), "graphs": [g.to_dict() for g in self.graphs], "files": list(self.files)}


def _graphs(model, files) -> tuple:
    """The graphs' plans, as the manifest just written holds them (planned again if it is not there)."""
    if not model.graphs:
        return ()
    name = manifest_name(model.files.kernels_c)
    for path in files:
        if os.path.basename(path) == name and os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return graph_reports(json.load(f))
    return tuple(GraphReport(g.name, plan_json(plan_graph(model, g, model.l2_budget),
                                               g.options.l2_static_memory_budget),
                             tuple(f.to_json() for f in model.fusions.get(g.name, ()))) for g in model.graphs.values())


def _extra(model, t: KernelTiling) -> dict:
    """Cost-model figures: predicted cycles, bounds and ratios (see autotiler.bounds)."""
    return kernel_figures(t, model.platform)
