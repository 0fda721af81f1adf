"""The L2 plan of a graph drawn over time (matplotlib, Agg backend), for ``autotiler report``.
Its own module so that ``import autotiler`` (generation) never loads matplotlib."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=True)  # files only: no display needed, none opened

import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib.patches import Patch, Rectangle  # noqa: E402

from .graph.summary import AREAS  # noqa: E402
from .reports import GraphReport  # noqa: E402

COLORS = {"dyn": "#4c72b0", "flash": "#dd8452", "static": "#55a868"}


def plot_plan(report: GraphReport, path) -> str:
    """Draw a graph's L2 plan over time into the PNG ``path`` (matplotlib, Agg backend): one
    rectangle per symbol, node index across, L2 address up; the dynamic area from 0, the static
    area (promoted constants) above it; dashed lines at the dynamic area's lower bound and at the
    L2 budget. Returns ``path``."""
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
        # long kernel names (a generator's) overlap side by side: slant them
        slant = max((len(n) for n in nodes), default=0) > 12
        ax.set_xticklabels([f"{i}\n{n}" for i, n in enumerate(nodes)], fontsize=8, rotation=20 if slant else 0,
                           ha="right" if slant else "center")
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


__all__ = ["COLORS", "plot_plan"]
