"""Lower bounds a tiling is judged by (see shared/reference/peers-and-limits.md, section 3).

For one user kernel on a platform:

* **compulsory traffic**: every input byte enters L1 once, every output byte leaves once;
* **data-movement bound** for the L1 size S, where one applies: a kernel that reduces ``Nip``
  input planes into ``Nop`` output planes through a per-(in, out) filter plane is a matrix
  product of m = output-plane items, n = Nop, k = Nip with R = filter items of reuse per input
  item; its L2<->L1 traffic is at least ``2*M/sqrt(R*S) - 2*S`` items, M = m*n*k*R (Hong & Kung;
  Smith et al.; rederived for convolution in peers-and-limits.md 3.3). Counted in items of the
  smallest item size, so it stays a lower bound in bytes;
* **compute bound**: the cycles of every basic-kernel call and fork (nothing hides them);
* **roofline**: ``max(compute, busiest channel's bytes / bytes_per_cycle, l3_compulsory /
  udma_bytes_per_cycle)``: the cluster DMA's bandwidth for the L2<->L1 level (a duplex engine
  runs reads and writes at once: its busiest channel carries at least the larger of the
  compulsory inputs, the compulsory outputs and half the traffic bound; else one channel
  carries the traffic bound) and the micro-DMA's (platform ``udma["ram"]``) for the L3<->L2
  level, where L3-homed (O_L2DB) arguments must cross once.
"""

from __future__ import annotations

import math
from typing import Optional

from .tiler.geometry import ArgGeom
from .tiler.tiling import KernelTiling


def needed_bytes(g: ArgGeom) -> int:
    """Bytes of an argument that some basic kernel uses: every space, the used lines (or
    columns) of its tiled direction, less what OBJ_CONSTRAINTS_DROP_REM drops."""
    size = g.item * g.w * g.h
    for r in g.refs:
        size *= r.dim
    t = g.tile
    if t is not None:
        used = min(t.used, t.span - t.pad_before + t.overlap) if t.drop else t.used
        size = size // t.dim * max(0, used)
    return size


def compulsory(t: KernelTiling) -> tuple:
    """(bytes in, bytes out) that must cross L2<->L1 at least once."""
    t_in = sum(needed_bytes(a.geom) for a in t.args if a.reads)
    t_out = sum(needed_bytes(a.geom) for a in t.args if a.writes)
    return t_in, t_out


def compulsory_l3(t: KernelTiling) -> int:
    """Bytes of the L3-homed arguments that must cross L3<->L2 at least once."""
    return sum(needed_bytes(a.geom) * (int(a.reads) + int(a.writes)) for a in t.args if a.l3)


def _reduction(t: KernelTiling):
    """(output, input, filter, out space, in space) when the kernel reduces input features into
    output features through a per-(out, in) filter (a convolution or matrix product shape)."""
    outs = [a for a in t.args if a.writes and a.geom.refs]
    ins = [a for a in t.args if a.reads and not a.writes]
    for o in outs:
        for so in (r.space for r in o.geom.refs):
            for f in ins:
                spaces = {r.space for r in f.geom.refs}
                if so not in spaces or len(spaces) < 2:
                    continue
                for si in spaces - {so}:
                    i = next((x for x in ins if x is not f and si in {r.space for r in x.geom.refs}
                              and so not in {r.space for r in x.geom.refs}), None)
                    if i is not None:
                        return o, i, f, so, si
    return None


def movement_bound(t: KernelTiling, l1_bytes: int) -> Optional[int]:
    """Reuse-limited traffic bound in bytes for reduction-shaped kernels, else None."""
    found = _reduction(t)
    if found is None:
        return None
    o, i, f, so, si = found
    n, k = o.geom.ref(so).dim, f.geom.ref(si).dim
    if n < 2 or k < 2:
        return None
    item = min(a.item for a in t.args)
    s = l1_bytes / item
    m = o.w * o.h
    r = f.w * f.h * max(1, f.item // item)
    macs = m * n * k * r
    items = 2 * macs / math.sqrt(r * s) - 2 * s
    return int(items * item) if items > 0 else None


def dma_bound_cycles(platform, c_in: int, c_out: int, moved: Optional[int]) -> int:
    """Cycles the cluster DMA needs at least: the bytes its busiest channel must move at its
    bandwidth. Reads carry at least ``c_in``, writes ``c_out``, both together ``moved`` (the
    reuse bound); a duplex engine runs the two at once, so one of them carries at least half."""
    total = max(c_in + c_out, moved or 0)
    busiest = max(c_in, c_out, -(-total // 2)) if platform.cluster_dma.duplex else total
    return math.ceil(busiest / platform.cluster_dma.bytes_per_cycle)


def kernel_figures(t: KernelTiling, platform) -> dict:
    """Predicted cycles and the bounds above, with the ratios the reports print."""
    if t.predicted is None or platform is None:
        return {}
    c_in, c_out = compulsory(t)
    comp = c_in + c_out
    moved = movement_bound(t, t.budget)
    traffic_bound = max(comp, moved or 0)
    compute = t.predicted["compute_cycles"] + t.predicted["fork_cycles"]
    dma = dma_bound_cycles(platform, c_in, c_out, moved)
    l3 = compulsory_l3(t)
    udma = math.ceil(l3 / platform.udma["ram"].bytes_per_cycle)
    roofline = max(compute, dma, udma)
    bound = "compute" if compute >= max(dma, udma) else "memory" if dma >= udma else "L3"
    return {
        "predicted_cycles": t.predicted.cycles,
        "compute_cycles": t.predicted["compute_cycles"],
        "stall_cycles": t.predicted["stall_cycles"],
        "dma_busy_cycles": t.predicted["dma_busy_cycles"],
        "udma_busy_cycles": t.predicted["udma_busy_cycles"],
        "l3_compulsory_bytes": l3,
        "udma_bound_cycles": udma,
        "compulsory_bytes": comp,
        "movement_bound_bytes": moved,
        "compute_bound_cycles": compute,
        "dma_bound_cycles": dma,
        "roofline_cycles": roofline,
        "time_vs_roofline": t.predicted.cycles / roofline if roofline else 1.0,
        "traffic_vs_compulsory": t.traffic / comp if comp else 1.0,
        "arithmetic_intensity": compute / traffic_bound if traffic_bound else math.inf,
        "bound": bound,
    }


def describe(t: KernelTiling, platform) -> list:
    """Comment lines for the generated kernel."""
    f = kernel_figures(t, platform)
    if not f:
        return []
    udma = f", uDMA busy {f['udma_busy_cycles']}" if f["l3_compulsory_bytes"] else ""
    l3 = (f"; L3 {f['udma_bound_cycles']} cycles (compulsory {f['l3_compulsory_bytes']} B)"
          if f["l3_compulsory_bytes"] else "")
    lines = [
        f"Predicted {f['predicted_cycles']} cycles on {platform.name} (compute {f['compute_cycles']}, "
        f"DMA busy {f['dma_busy_cycles']}{udma}, stalls {f['stall_cycles']}).",
        f"Bounds: compute {f['compute_bound_cycles']}, DMA {f['dma_bound_cycles']} cycles "
        f"(compulsory {f['compulsory_bytes']} B"
        + (f", reuse bound {f['movement_bound_bytes']} B" if f["movement_bound_bytes"] else "")
        + f"){l3}; roofline {f['roofline_cycles']} cycles ({f['bound']}-bound).",
        f"Ratios: time / roofline {f['time_vs_roofline']:.2f}, traffic / compulsory {f['traffic_vs_compulsory']:.2f}.",
    ]
    return lines


__all__ = ["compulsory", "compulsory_l3", "movement_bound", "dma_bound_cycles", "kernel_figures", "describe"]
