"""Reports: what GenerateTilingCode() returns and prints, per kernel, per graph (its memory plan)
and for the whole model; ``autotiler report DIR`` prints the same graph tables from the manifest
and draws the L2 plan over time (:func:`plot_plan`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from .bounds import compulsory as compulsory_traffic
from .bounds import kernel_figures
from .codegen.files import manifest_name, tiling_json
from .errors import CodegenError
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
            rows.append((s["name"], AREAS[s["area"]], "-" if s["offset"] is None else str(s["offset"]),
                         str(s["size"]), _live(s), "-" if s["flash_offset"] is None else str(s["flash_offset"]),
                         pre))
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
                     + f"; flash image {fl['bytes']} B")
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
    return tuple(GraphReport(g["name"], g["plan"]) for g in manifest.get("graphs") or () if g.get("plan"))


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
                                               g.options.l2_static_memory_budget)) for g in model.graphs.values())


COLORS = {"dyn": "#4c72b0", "flash": "#dd8452", "static": "#55a868"}


def plot_plan(report: GraphReport, path) -> str:
    """Draw a graph's L2 plan over time into the PNG ``path`` (matplotlib, Agg backend): one
    rectangle per symbol, node index across, L2 address up; the dynamic area from 0, the static
    area (promoted constants) above it; dashed lines at the dynamic area's lower bound and at the
    L2 budget. Returns ``path``."""
    try:
        import matplotlib
    except ImportError:  # a dependency: only a broken installation lacks it
        raise CodegenError("drawing the L2 plan needs matplotlib, which is not installed",
                           hint="pip install 'matplotlib>=3.5' (a dependency of autotiler)") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    p = report.plan
    nodes, dyn = p["nodes"], p["dynamic"]["bytes"]
    fig, ax = plt.subplots(figsize=(max(7.0, 1.0 * len(nodes) + 4), 5), dpi=100)
    try:
        for s in p["symbols"]:
            if s["l2_first"] is None:
                continue
            base = dyn + s["offset"] if s["area"] == "static" else s["offset"]
            x, w = s["l2_first"] - 0.45, s["l2_last"] - s["l2_first"] + 0.9
            ax.add_patch(Rectangle((x, base), w, s["size"], facecolor=COLORS[s["area"]], edgecolor="black",
                                   linewidth=0.8, alpha=0.85))
            ax.text(x + w / 2, base + s["size"] / 2, s["name"], ha="center", va="center", fontsize=8)
        top = max(p["l2_budget"], p["total"], 1)
        ax.axhline(p["dynamic"]["lower_bound"], color="gray", linestyle=":", linewidth=1)
        ax.axhline(dyn, color="black", linestyle="-", linewidth=0.8)
        ax.axhline(p["l2_budget"], color="red", linestyle="--", linewidth=1)
        ax.set_xlim(-0.6, max(len(nodes), 1) - 0.4)
        ax.set_ylim(0, top * 1.02)
        ax.set_xticks(range(len(nodes)))
        ax.set_xticklabels([f"{i}\n{n}" for i, n in enumerate(nodes)], fontsize=8)
        ax.set_xlabel("node")
        ax.set_ylabel("L2 address (bytes)")
        ax.set_title(f"graph {report.name}: L2 plan\ndynamic {dyn} B (lower bound {p['dynamic']['lower_bound']} B, "
                     f"{p['dynamic']['algorithm']}), static {p['static']['bytes']} B, L2 {p['l2_budget']} B",
                     fontsize=9)
        ax.legend(handles=[Patch(facecolor=COLORS[a], edgecolor="black", label=AREAS[a]) for a in COLORS]
                  + [plt.Line2D([], [], color="gray", linestyle=":", label="lower bound (dynamic)"),
                     plt.Line2D([], [], color="red", linestyle="--", label="L2 budget")],
                  loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
        fig.tight_layout()
        fig.savefig(path, format="png", metadata={"Software": None})
    finally:
        plt.close(fig)
    return str(path)


def _extra(model, t: KernelTiling) -> dict:
    """Cost-model figures: predicted cycles, bounds and ratios (see autotiler.bounds)."""
    return kernel_figures(t, model.platform)
