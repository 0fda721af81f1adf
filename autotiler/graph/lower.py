"""A declared graph (:mod:`autotiler.model.graph`) lowered onto the planner's plain inputs, and
planned: which symbol lives where, from which node to which.

* Node ``i`` is the ``i``-th ``AddNode`` (the runner's order). A symbol's size is the L2 size of
  the kernel argument it is bound to (:func:`bound_argument`; for a group, the kernel its C
  argument is passed to).
* Graph arguments (``ARG_SCOPE_ARG``) are the application's buffers: not planned.
* Locals (activations) are placed in the dynamic L2 area (``<G>_L2_Memory_Dyn``) with reuse
  across lifetimes that do not overlap (:func:`~autotiler.graph.plan.plan_static`); an INOUT
  alias and a stacked tensor share one buffer (:func:`~autotiler.graph.plan.merge_aliases`).
* Constants all go to the flash image (``<base>_L3_Flash_Const.dat``). The static L2 area holds
  those promoted at construction, within ``AT_GRAPH_L2_STATIC_MEMORY_BUDGET`` (by default all of
  L2); the others are prefetched from flash into the dynamic area before their first use
  (:func:`~autotiler.graph.flash.prefetch_schedule`, with the nodes' predicted cycles) and
  occupy it until their last use. Promotion is greedy (:func:`_promote`): the constant saving the
  most flash traffic whose promotion still lets both areas fit L2 together, until none does.
* Activations that do not fit L2 would move to L3 RAM with their kernels re-tiled for L3-homed
  arguments: not supported yet, refused with the bytes missing and the node of the peak.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..constants import ArgScope_T, Object_Type_T
from ..errors import ModelError
from ..model.graph import GraphDecl, NodeArgDecl, load_const
from ..model.ir import CArg, CArgBinding, CArgForm, UserKernelDecl
from ..tiler.geometry import kernel_geometry
from .flash import FlashImage, Prefetch, pack_constants, prefetch_schedule
from .plan import ALGORITHMS, GREEDY_ORDERS, Placement, PlanError, lower_bound, merge_aliases, plan_static, round_up

S = ArgScope_T
ALIGN = 4  # every buffer and constant starts at a word boundary
QUICK = GREEDY_ORDERS  # placements tried while choosing promotions


def bound_argument(model, callee, formal: CArg, depth: int = 0) -> Optional[tuple]:
    """What C argument ``formal`` of a user kernel or group points to: (kernel, kernel argument,
    bytes, reads, writes), or None when no kernel argument is bound to it."""
    if isinstance(callee, UserKernelDecl):
        ka = next((a for a in callee.kerargs if a.carg_name == formal.name), None)
        if ka is None:
            return None
        try:
            size = kernel_geometry(callee).arg(ka.name).l2_bytes
        except ModelError:
            size = 0
        return callee.name, ka.name, size or None, ka.is_in, ka.is_out
    ga = next((a for a in callee.kerargs if a.carg_name == formal.name), None)
    if ga is not None:
        return (callee.name, ga.name, ga.size * ga.item_size, bool(ga.obj_type & Object_Type_T.O_IN),
                bool(ga.obj_type & Object_Type_T.O_OUT))
    if depth > 4:
        return None
    for call in callee.calls:
        kernel = model.kernels.get(call.name)
        if kernel is None:
            continue
        for b, f in zip(call.bindings, kernel.cargs):
            if isinstance(b, CArgBinding) and b.name == formal.name and b.form == CArgForm.PLAIN:
                found = bound_argument(model, kernel, f, depth + 1)
                if found:
                    return found
    return None


@dataclass(frozen=True)
class SymbolPlan:
    """Where one graph symbol lives: ``area`` "arg" (the application's), "dyn" (dynamic L2),
    "static" (static L2, a promoted constant) or "flash" (a constant prefetched into dynamic L2
    before ``first``); ``offset`` in its area (in the flash image for "flash"/"static"
    constants: ``flash_offset``); ``first``/``last``: the nodes between which it is live."""

    name: str
    size: int
    area: str
    offset: Optional[int]
    first: int
    last: int
    flash_offset: Optional[int] = None
    prefetch_start: Optional[int] = None   # the node after which its copy starts (-1: before node 0)


@dataclass(frozen=True)
class GraphPlan:
    graph: str
    nodes: tuple
    symbols: tuple                 # SymbolPlan, declaration order
    dyn: Placement                 # the dynamic L2 area
    static_bytes: int              # the static L2 area (promoted constants)
    l2_budget: int
    flash: FlashImage
    prefetches: tuple = field(default=())

    def symbol(self, name: str) -> SymbolPlan:
        return next(s for s in self.symbols if s.name == name)

    @property
    def dyn_bytes(self) -> int:
        return self.dyn.peak


def symbol_sizes(model, graph: GraphDecl) -> dict:
    """Bytes of every symbol bound to a kernel argument (the largest binding wins: a symbol
    passed whole to several kernels is as large as the largest view of it)."""
    sizes: dict = {}
    for node in graph.nodes:
        callee = model.kernels.get(node.name) or model.groups.get(node.name)
        for b, formal in zip(node.args, callee.cargs):
            target = bound_argument(model, callee, formal)
            if target is not None and target[2]:
                sizes[b.symbol] = max(sizes.get(b.symbol, 0), target[2])
    return sizes


def lifetimes(graph: GraphDecl) -> dict:
    """name -> (first node, last node) touching it (an alias counts for both of its names; a
    symbol passed to a prolog or epilog call of node i is touched at node i)."""
    out: dict = {}
    for i, node in enumerate(graph.nodes):
        called = [a for c in node.calls for a in c.args if isinstance(a, NodeArgDecl)]
        for b in (*node.args, *called):
            for name in {b.symbol, *([b.alias] if b.alias else [])}:
                first, _ = out.get(name, (i, i))
                out[name] = (first, i)
    return out


def _node_times(model, graph: GraphDecl) -> list:
    times = []
    for node in graph.nodes:
        t = model.tilings.get(node.name)
        if t is not None and t.predicted is not None:
            times.append(float(t.predicted.cycles))
        else:  # a group: its kernels, as often as it runs them
            group = model.groups.get(node.name)
            calls = [model.tilings.get(c.name) for c in (group.calls if group else ())]
            times.append(float(sum(c.predicted.cycles for c in calls if c is not None and c.predicted is not None))
                         * (group.iterations if group else 1))
    return times


def _dyn_parts(graph: GraphDecl, sizes: dict, live: dict) -> tuple:
    parts, aliases = [], []
    for sym in graph.locals:
        if sym.name in live:
            first, last = live[sym.name]
            parts.append((sym.name, sizes.get(sym.name, 0), first, last))
    for st in graph.stacked:
        for child in st.inputs:
            if child in live and child not in {p[0] for p in parts}:
                first, last = live[child]
                parts.append((child, sizes.get(child, 0), first, last))
    local = {p[0] for p in parts}
    for node in graph.nodes:
        for b in node.args:
            if b.alias and b.alias in local and b.symbol in local:
                aliases.append((b.alias, b.symbol))
    stacks = [(st.out, tuple(st.inputs)) for st in graph.stacked if st.out in local]
    return parts, aliases, stacks


def plan_graph(model, graph: GraphDecl, l2_budget: Optional[int] = None) -> GraphPlan:
    """Plan a closed graph's memory (see the module docstring)."""
    l2 = model.l2_size if l2_budget is None else l2_budget
    sizes, live = symbol_sizes(model, graph), lifetimes(graph)
    parts, aliases, stacks = _dyn_parts(graph, sizes, live)
    merged = merge_aliases(parts, aliases, stacks)
    consts = {c.name: sizes.get(c.name, c.const.nbytes) for c in graph.constants if c.name in live}
    uses = {n: sum(n in node.reads for node in graph.nodes) for n in consts}
    image = pack_constants([(n, load_const(graph.symbol(n).const, consts[n] // graph.symbol(n).const.item_size),
                             ALIGN) for n in sorted(consts, key=lambda n: (-consts[n], n))])
    activations = plan_static(merged.buffers, level="L2", node_names=[n.name for n in graph.nodes])
    times = _node_times(model, graph)
    budget = graph.options.l2_static_memory_budget or l2

    def layout(promoted: list, algorithms=ALGORITHMS) -> tuple:
        static = sum(round_up(consts[n], ALIGN) for n in promoted)
        in_flash = {n: consts[n] for n in consts if n not in promoted}
        prefetches = _prefetches(graph, in_flash, live, times, activations, l2 - static)
        buffers = merged.buffers + tuple(p.buffer(ALIGN) for p in prefetches)
        return static, plan_static(buffers, level="L2", node_names=[n.name for n in graph.nodes],
                                   algorithms=algorithms), prefetches

    promoted = _promote(consts, uses, budget, l2, lambda trial: layout(trial, QUICK))
    static, dyn, prefetches = layout(promoted)
    if static + dyn.peak > l2:
        _too_big(graph, l2, static, dyn)
    return GraphPlan(graph.name, tuple(n.name for n in graph.nodes),
                     _symbols(graph, sizes, live, merged, dyn, promoted, image, prefetches),
                     dyn, static, l2, image, prefetches)


def _promote(consts: dict, uses: dict, budget: int, l2: int, layout) -> list:
    """Constants promoted to static L2, greedily: at each step the one saving the most flash
    traffic per run (uses x bytes) among those whose promotion still lets static + dynamic L2
    fit (its prefetch buffer leaves the dynamic area, its bytes join the static one), until
    none fits. Each trial is a quick placement (greedy orders only): quadratic in constants."""
    promoted: list = []
    while True:
        best = None
        for name in sorted(set(consts) - set(promoted), key=lambda n: (-uses[n] * consts[n], n)):
            static, dyn, _ = layout(promoted + [name])
            if static <= budget and static + dyn.peak <= l2:
                best = name
                break
        if best is None:
            return promoted
        promoted.append(best)


def _prefetches(graph, in_flash: dict, live: dict, times: list, activations: Placement,
                free_l2: int) -> tuple[Prefetch, ...]:
    if not in_flash:
        return ()
    tops = [0] * len(graph.nodes)
    for b in activations.buffers:
        for i in range(b.first, b.last + 1):
            tops[i] = max(tops[i], activations.offsets[b.name] + b.footprint)
    return prefetch_schedule(in_flash, times, {n: live[n][0] for n in in_flash}, [free_l2 - t for t in tops],
                             {n: live[n][1] for n in in_flash})


def _too_big(graph, l2: int, static: int, dyn: Placement) -> None:
    bound = lower_bound(dyn.buffers)
    peak_node = max(range(len(graph.nodes)), key=lambda i: sum(b.footprint for b in dyn.buffers
                                                              if b.first <= i <= b.last))
    raise PlanError(f"graph '{graph.name}': L2 is {static + dyn.peak - l2} bytes short at node {peak_node} "
                    f"('{graph.nodes[peak_node].name}'): the activations and prefetched constants need {dyn.peak} "
                    f"bytes (lower bound {bound}) and the promoted constants {static}, L2 holds {l2}; activations "
                    "in L3 RAM are not supported yet", level="L2", missing=static + dyn.peak - l2, node=peak_node,
                    node_name=graph.nodes[peak_node].name, where=graph.close_where,
                    hint="give the graph more L2 (SetMemoryDeviceInfos AT_MEM_L2, --L2) or smaller layers")


def _symbols(graph, sizes, live, merged, dyn: Placement, promoted, image: FlashImage, prefetches) -> tuple:
    pre = {p.name: p for p in prefetches}
    static_offsets, off = {}, 0
    for n in promoted:
        static_offsets[n] = off
        off += round_up(sizes.get(n, graph.symbol(n).const.nbytes), ALIGN)
    out = []
    for sym in (*graph.args, *graph.locals):
        if sym.name not in live:
            continue
        first, last = live[sym.name]
        size = sizes.get(sym.name, 0)
        if sym.scope in (S.ARG_SCOPE_ARG, S.ARG_SCOPE_ARG_ALLOC):
            out.append(SymbolPlan(sym.name, size, "arg", None, first, last))
        elif sym.const is not None and sym.name in static_offsets:
            out.append(SymbolPlan(sym.name, size, "static", static_offsets[sym.name], first, last,
                                  image.offsets[sym.name]))
        elif sym.const is not None:
            p = pre[sym.name]
            out.append(SymbolPlan(sym.name, size, "flash", dyn.offsets[sym.name], first, last,
                                  image.offsets[sym.name], p.start))
        else:
            buf, inner = merged.where[sym.name]
            out.append(SymbolPlan(sym.name, size, "dyn", dyn.offsets[buf] + inner, first, last))
    for st in graph.stacked:
        for child in st.inputs:
            if child in merged.where:
                buf, inner = merged.where[child]
                first, last = live.get(child, (0, 0))
                out.append(SymbolPlan(child, sizes.get(child, 0), "dyn", dyn.offsets[buf] + inner, first, last))
    return tuple(out)


__all__ = ["bound_argument", "SymbolPlan", "GraphPlan", "symbol_sizes", "lifetimes", "plan_graph"]
