"""A declared graph (:mod:`autotiler.model.graph`) lowered onto the planner's plain inputs, and
planned: which symbol lives where, from which node to which.

* Node ``i`` is the ``i``-th ``AddNode`` (the runner's order). A symbol's size is the L2 size of
  the kernel argument it is bound to (:func:`bound_argument`; for a group, the kernel its C
  argument is passed to), or the items a kernel indexes in it (``C_ArgIndex``:
  :func:`indexed_argument`); a constant's is its file's.
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
  ``AT_GRAPH_DISABLE_CONST_L2_PROMOTION`` promotes none: every constant is fetched at each run.
  With ``AT_GRAPH_CONST_EXEC_FROM_FLASH`` the constants passed whole to user-kernel inputs are
  neither: each node reading one calls a kernel variant reading it from its flash
  (:func:`_flash_exec_variants`), its staging a slot ``@node<i>`` of the dynamic area.
* Activations that do not fit L2 (with every constant left in flash) move to L3 RAM
  (:func:`_plan_spill`): :func:`~autotiler.graph.spill.plan_levels` chooses the locals that live
  in the graph's L3 area (``<G>_L3_Memory``), and every node touching one calls a *variant* of its
  user kernel, ``<Kernel>_L3_<node>``, tiled again with those C arguments homed in L3 (O_L2DB):
  its L2 staging ring is the node's extra L2 (``@node<i>`` in the dynamic area), and its schedule
  addresses the staging at ``<G>_L2_Memory_Dyn + <offset of the node's slot>``. Re-tiling may
  change the staging, so the spill is planned again until every variant fits its slot. A
  candidate's kernels are tiled with it in L3 only when the plan reads its staging
  (:class:`_Staging`): at 80 KiB, MobileNet's plan reads 4 of its 28 candidates.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Optional

from ..constants import ArgScope_T, AT_MemLocation_T, Object_Type_T
from ..errors import ModelError, TilingError
from ..model.ctype import parse_ctype
from ..model.devices import FLASH_LOCATIONS, declared_flash, flash_device, flash_engine
from ..model.graph import GraphDecl, NodeArgDecl, NodeArgForm, load_const
from ..model.ir import CArg, CArgBinding, CArgForm, UserKernelDecl
from ..model.validate import space_name, validate_user_kernel
from ..objectives import is_solved, solve, solve_options, tiling_key
from ..tiler.geometry import kernel_geometry
from .flash import FlashImage, Prefetch, pack_constants, prefetch_schedule
from .plan import (
    ALGORITHMS,
    GREEDY_ORDERS,
    Buffer,
    Placement,
    PlanError,
    lower_bound,
    merge_aliases,
    plan_static,
    round_up,
)
from .spill import LevelPlan, plan_levels

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
    return next((found for kernel, f in _passed_whole(model, callee, formal)
                 if (found := bound_argument(model, kernel, f, depth + 1))), None)


def _passed_whole(model, group, formal: CArg):
    """(user kernel, its C argument) for each call of ``group`` passing C argument ``formal`` to
    it whole (``C_Arg``), in call order."""
    for call in group.calls:
        kernel = model.kernels.get(call.name)
        for b, f in zip(call.bindings, kernel.cargs if kernel is not None else ()):
            if isinstance(b, CArgBinding) and b.name == formal.name and b.form == CArgForm.PLAIN:
                yield kernel, f


@dataclass(frozen=True)
class IndexedUse:
    """A pointer C argument a kernel reads item by item, with no kernel argument describing it
    (the guide's ``C_ArgIndex("Bias", KER_OUT_PLANE, 1)``): ``binding`` as written, ``nbytes``
    the extent it reaches (the last item read, plus one)."""

    kernel: str
    binding: str
    nbytes: int


def indexed_argument(model, callee, formal: CArg, depth: int = 0) -> Optional[IndexedUse]:
    """The widest ``C_ArgIndex`` / ``C_ArgIndirect`` read of C argument ``formal`` of a user
    kernel (or of a group, through the kernels it passes the argument to whole), or None when no
    call indexes it. ``C_ArgIndex(Name, Space, Mult)`` reads ``Name[i*Mult]`` for every iteration
    ``i`` of ``Space`` (its loop count in the kernel's tiling), ``C_ArgIndirect(Name, V)``
    reads ``Name[V]``."""
    if isinstance(callee, UserKernelDecl):
        uses = [_indexed_use(model, callee, formal, b) for call in callee.calls for b in call.bindings
                if isinstance(b, CArgBinding) and b.name == formal.name
                and b.form in (CArgForm.INDEX, CArgForm.INDIRECT)]
        return max(uses, key=lambda u: u.nbytes, default=None)
    if depth > 4:
        return None
    found = (indexed_argument(model, kernel, f, depth + 1) for kernel, f in _passed_whole(model, callee, formal))
    return max((u for u in found if u is not None), key=lambda u: u.nbytes, default=None)


def _indexed_use(model, uk: UserKernelDecl, formal: CArg, b: CArgBinding) -> IndexedUse:
    item = parse_ctype(formal.ctype).item_size or 1
    if b.form == CArgForm.INDIRECT:
        return IndexedUse(uk.name, f"C_ArgIndirect('{b.name}', {b.value})", (b.value + 1) * item)
    tiling = model.tilings.get(uk.name)
    loop = tiling.loop(b.space) if tiling is not None else None
    space = uk.space.get(b.space)
    count = loop.count if loop is not None else max(space.dim if space is not None else 1, 1)
    text = f"C_ArgIndex('{b.name}', {space_name(b.space, uk.v2 is not None)}, {b.value})"
    return IndexedUse(uk.name, text, ((count - 1) * abs(b.value) + 1) * item)


@dataclass(frozen=True)
class SymbolPlan:
    """Where one graph symbol lives: ``area`` "arg" (the application's), "dyn" (dynamic L2),
    "static" (static L2, a promoted constant), "flash" (a constant prefetched into dynamic L2
    before ``first``) or "l3" (an activation spilled to the graph's L3 RAM area); ``offset`` in its area (in the flash image for "flash"/"static"
    constants: ``flash_offset``); ``first``/``last``: the nodes between which it is live."""

    name: str
    size: int
    area: str
    offset: Optional[int]
    first: int
    last: int
    flash_offset: Optional[int] = None
    prefetch_start: Optional[int] = None   # the node after which its copy starts (-1: before node 0)
    flash_loc: Optional[AT_MemLocation_T] = None   # the flash holding a constant
    scalar: bool = False   # a scalar argument (a value, not memory: no size)


def _l3_traffic(variants) -> int:
    """L3 <-> L2 bytes per run: what the node variants' tilings move (a tiled kernel re-reads the
    lines its tiles share, which the planner's size x touches estimate leaves out)."""
    return sum(v.tiling.traffic_l3_in + v.tiling.traffic_l3_out for v in variants)


@dataclass(frozen=True)
class NodeVariant:
    """The user kernel a node calls instead of its own when some of its symbols live in L3:
    ``name`` (``<kernel>_L3_<node>``) is ``kernel`` tiled again with the C arguments
    ``l3_cargs`` homed in L3 (O_L2DB). ``tiling``'s staging offsets are relative to the node's
    slot; ``staging`` its L2 staging bytes, ``offset`` the slot's offset in the dynamic L2 area."""

    node: int
    kernel: str
    name: str
    l3_cargs: tuple
    tiling: object
    staging: int
    offset: int = 0
    flash: tuple = ()      # the constants it reads from flash (AT_GRAPH_CONST_EXEC_FROM_FLASH)


@dataclass(frozen=True)
class GraphPlan:
    graph: str
    nodes: tuple
    symbols: tuple                 # SymbolPlan, declaration order
    dyn: Placement                 # the dynamic L2 area (with the nodes' staging slots, ``@node<i>``)
    static_bytes: int              # the static L2 area (promoted constants)
    l2_budget: int
    flashes: tuple                 # (flash location, FlashImage) of each flash holding constants, main one first
    prefetches: tuple = field(default=())
    l3: Optional[Placement] = None  # the L3 RAM area (spilled activations), None if none
    variants: tuple = field(default=())   # NodeVariant, by node
    l3_traffic: int = 0            # bytes moved between L3 and L2 per run (the variants' tilings)
    levels: Optional[LevelPlan] = None

    def symbol(self, name: str) -> SymbolPlan:
        return next(s for s in self.symbols if s.name == name)

    @property
    def flash(self) -> FlashImage:
        """The main flash's image (the only one unless AT_GRAPH_PRIVILEGED_L3_HOME or constants
        homed in two flashes)."""
        return self.flashes[0][1]

    @property
    def flash_bytes(self) -> int:
        return sum(image.total for _, image in self.flashes)

    def variant(self, node: int) -> Optional[NodeVariant]:
        return next((v for v in self.variants if v.node == node), None)

    @property
    def dyn_bytes(self) -> int:
        return self.dyn.peak

    @property
    def l3_bytes(self) -> int:
        return self.l3.peak if self.l3 is not None else 0


def symbol_sizes(model, graph: GraphDecl) -> dict:
    """Bytes of every symbol a node reads or writes. A constant is its file (AddNode checked
    every view fits). Another symbol is as large as the largest view of it: a kernel argument it
    is bound to, or the items a kernel indexes (``C_ArgIndex``); a view at an immediate offset,
    ``GNodeArgImmOper(S, "+", n)``, needs n items more. A local pointer symbol no view sizes is
    refused: nothing would tell how much L2 it needs."""
    sizes: dict = {}
    unsized: dict = {}
    for node in graph.nodes:
        callee = model.kernels.get(node.name) or model.groups.get(node.name)
        for b, formal in zip(node.args, callee.cargs):
            size = _view_bytes(model, callee, formal)
            if size:
                sizes[b.symbol] = max(sizes.get(b.symbol, 0), size + _offset_bytes(graph, b))
            elif formal.is_pointer:
                unsized.setdefault(b.symbol, (node, b, formal))
    bound = {b.symbol for node in graph.nodes for b in node.args}
    for c in graph.constants:
        if c.name in bound:
            sizes[c.name] = c.const.nbytes
    for name, (node, b, formal) in unsized.items():
        sym = graph.symbol(name)
        if name not in sizes and sym is not None and sym.is_local:
            raise ModelError(f"graph '{graph.name}': local '{name}' has no known size: node '{node.name}' passes it to "
                             f"'{formal.name}', which no kernel argument of '{node.name}' describes and no call "
                             "indexes (C_ArgIndex)", where=b.where, kernel=node.name, arg=name,
                             hint=f"bind '{formal.name}' to a KerArg of the kernel (its dimensions size it), or make "
                             f"'{name}' a constant (ConstInfo: its file sizes it)")
    return sizes


def _view_bytes(model, callee, formal: CArg) -> Optional[int]:
    """Bytes of the view of C argument ``formal`` a kernel or group reaches: its kernel argument,
    else what its calls index."""
    target = bound_argument(model, callee, formal)
    if target is not None and target[2]:
        return target[2]
    use = indexed_argument(model, callee, formal)
    return use.nbytes if use is not None else None


def _offset_bytes(graph: GraphDecl, b: NodeArgDecl) -> int:
    if b.form != NodeArgForm.IMM_OPER or b.oper != "+":
        return 0
    sym = graph.symbol(b.symbol) or next((graph.symbol(st.out) for st in graph.stacked if b.symbol in st.inputs), None)
    return b.value * (parse_ctype(sym.ctype).item_size or 1) if sym is not None else 0


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
        # the parts are laid end to end (a concatenation): each at a multiple of its items only
        item = parse_ctype(graph.symbol(st.out).ctype).item_size or 1
        for child in st.inputs:
            if child in live and child not in {p[0] for p in parts}:
                first, last = live[child]
                parts.append((child, sizes.get(child, 0), first, last, item))
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
    _check_stacks(graph, sizes)
    parts, aliases, stacks = _dyn_parts(graph, sizes, live)
    merged = merge_aliases(parts, aliases, stacks)
    every = {c.name: sizes.get(c.name, c.const.nbytes) for c in graph.constants if c.name in live}
    uses = {n: sum(n in node.reads for node in graph.nodes) for n in every}
    homes = flash_homes(model, graph, every, uses)
    flashes = _pack(graph, every, homes)
    # AT_GRAPH_CONST_EXEC_FROM_FLASH: the nodes' kernels read these from flash themselves
    exec_vars = _flash_exec_variants(model, graph, every, homes)
    consts = {n: b for n, b in every.items() if not any(n in v.flash for v in exec_vars)}
    slots = tuple(Buffer(f"@node{v.node}", round_up(v.staging, ALIGN), v.node, v.node, ALIGN) for v in exec_vars)
    merged = replace(merged, buffers=merged.buffers + slots)
    activations = plan_static(merged.buffers, level="L2", node_names=[n.name for n in graph.nodes])
    times = _node_times(model, graph)
    budget = graph.options.l2_static_memory_budget or l2
    cycles = {n: flash_engine(model.platform, homes[n]).transfer_cycles(consts[n]) for n in consts}

    def layout(promoted: list, algorithms=ALGORITHMS) -> tuple:
        static = sum(round_up(consts[n], ALIGN) for n in promoted)
        in_flash = {n: consts[n] for n in consts if n not in promoted}
        prefetches = _prefetches(graph, in_flash, live, times, activations, l2 - static, cycles)
        buffers = merged.buffers + tuple(p.buffer(ALIGN) for p in prefetches)
        return static, plan_static(buffers, level="L2", node_names=[n.name for n in graph.nodes],
                                   algorithms=algorithms), prefetches

    promoted = [] if graph.options.disable_const_l2_promotion else \
        _promote(consts, uses, budget, l2, lambda trial: layout(trial, QUICK))
    static, dyn, prefetches = layout(promoted)
    if static + dyn.peak <= l2:
        exec_vars = tuple(replace(v, offset=dyn.offsets[f"@node{v.node}"]) for v in exec_vars)
        return GraphPlan(graph.name, tuple(n.name for n in graph.nodes),
                         _symbols(graph, sizes, live, merged, dyn, promoted, flashes, homes, prefetches,
                                  exec_flash={n for v in exec_vars for n in v.flash}),
                         dyn, static, l2, flashes, prefetches, variants=exec_vars)
    if exec_vars:
        raise ModelError(f"graph '{graph.name}': AT_GRAPH_CONST_EXEC_FROM_FLASH in a graph whose activations do not "
                         f"fit L2 ({static + dyn.peak} bytes needed, L2 holds {l2}) is not supported yet (the nodes "
                         "would read constants from flash and activations from L3 RAM)", where=graph.close_where,
                         hint="give the graph more L2, or drop AT_GRAPH_CONST_EXEC_FROM_FLASH")
    # L2 overflows with no constant promoted: the largest activations go to L3 RAM
    spill = _plan_spill(model, graph, l2 - static, merged, prefetches) if model.l3_size > 0 else None
    if spill is None:
        _too_big(graph, l2, static, dyn, no_l3=model.l3_size == 0)
    levels, variants = spill
    return GraphPlan(graph.name, tuple(n.name for n in graph.nodes),
                     _symbols(graph, sizes, live, merged, levels.l2, promoted, flashes, homes, prefetches, levels),
                     levels.l2, static, l2, flashes, prefetches, levels.l3, variants, _l3_traffic(variants), levels)


def _check_stacks(graph: GraphDecl, sizes: dict) -> None:
    """A stacked tensor is exactly its parts laid end to end: a reader of the whole would see
    bytes no part writes (or miss a part) otherwise."""
    for st in graph.stacked:
        whole, parts = sizes.get(st.out), [sizes.get(c) for c in st.inputs]
        if whole is None or None in parts or whole == sum(parts):
            continue
        detail = " + ".join(f"{c} {n}" for c, n in zip(st.inputs, parts))
        raise ModelError(f"graph '{graph.name}': stacked tensor '{st.out}' is {whole} bytes as its nodes use it, but "
                         f"its parts add up to {sum(parts)} bytes ({detail})", where=st.where, arg=st.out,
                         hint="the parts must tile the whole: check the kernels' dimensions or the list of parts")


SPILL_ROUNDS = 8   # re-plans of the spill when re-tiled kernels need more staging than reserved


def _whole_bindings(model, graph: GraphDecl, ok) -> dict:
    """{symbol: {node: (C argument, ...)}} for the symbols every binding of which passes the whole
    symbol (GNodeArg, no alias) to a user kernel's C argument whose kernel arguments all satisfy
    ``ok(kernel argument)``: never to a group, an operator form, an alias or a prolog/epilog call."""
    out: dict = {}
    bad: set = set()
    for i, node in enumerate(graph.nodes):
        for c in node.calls:
            bad |= {a.symbol for a in c.args if isinstance(a, NodeArgDecl)}
        kernel = model.kernels.get(node.name)
        for b, formal in zip(node.args, (kernel or model.groups.get(node.name)).cargs):
            if b.form == NodeArgForm.CARG:
                continue
            ka = [a for a in kernel.kerargs if a.carg_name == formal.name] if kernel else []
            if kernel is None or b.form != NodeArgForm.PLAIN or b.alias or not ka or not all(ok(a) for a in ka):
                bad |= {b.symbol, *([b.alias] if b.alias else [])}
                continue
            out.setdefault(b.symbol, {}).setdefault(i, set()).add(formal.name)
    return {n: {i: tuple(sorted(c)) for i, c in nodes.items()} for n, nodes in out.items() if n not in bad}


def _spillable(model, graph: GraphDecl, merged) -> dict:
    """{buffer: {node: (C argument, ...)}} for the dynamic buffers that may live in L3: one local
    (no alias, no stack) passed whole to input or output kernel arguments only (:func:`_whole_bindings`)."""
    members: dict = {}
    for part, (buf, _) in merged.where.items():
        members.setdefault(buf, set()).add(part)
    stacked = {st.out for st in graph.stacked} | {c for st in graph.stacked for c in st.inputs}
    locals_ = {s.name for s in graph.locals if s.const is None}
    whole = _whole_bindings(model, graph, lambda a: a.is_in or a.is_out)
    return {n: nodes for n, nodes in whole.items() if n in locals_ and n not in stacked and members.get(n) == {n}}


class _Variants:
    """Node kernels tiled again with some C arguments in L3 (cached by node and arguments);
    ``devices``: C argument -> the L3 device it is read from (default: the model's L3 RAM)."""

    def __init__(self, model, graph: GraphDecl):
        self.model, self.graph, self.cache = model, graph, {}
        self.keys: dict = {}   # (node, C arguments, devices) -> the variant's tiling key

    def get(self, node: int, cargs: tuple, devices: Optional[dict] = None):
        """The tiling, or None when no tiling of the kernel fits with those arguments in L3."""
        key = self._key(node, cargs, devices)
        if key not in self.cache:
            self.cache[key] = self._solve(node, key[1], devices or {})
        return self.cache[key]

    def pending(self, node: int, cargs: tuple, devices: Optional[dict] = None):
        """None when :meth:`get` would answer at once (asked before, or a kernel of the same shape
        already tiled), else the work it would do: the variant's tiling key (variants of one key
        are tiled once)."""
        key = self._key(node, cargs, devices)
        if key in self.cache:
            return None
        if key not in self.keys:
            uk = self._kernel(node, key[1], devices or {})
            self.keys[key] = tiling_key(uk, solve_options(self.model, uk))
        return None if is_solved(self.keys[key]) else self.keys[key]

    @staticmethod
    def _key(node: int, cargs: tuple, devices: Optional[dict]) -> tuple:
        return node, tuple(sorted(cargs)), tuple(sorted((devices or {}).items(), key=lambda kv: kv[0]))

    def _kernel(self, node: int, cargs: tuple, devices: dict) -> UserKernelDecl:
        uk = self.model.kernels[self.graph.nodes[node].name]
        return replace(uk, name=f"{uk.name}_L3_{node}", kerargs=tuple(
            replace(a, obj_type=int(a.obj_type | Object_Type_T.O_L2DB), l3_device=devices.get(a.carg_name))
            if a.carg_name in cargs else a for a in uk.kerargs))

    def _solve(self, node: int, cargs: tuple, devices: dict):
        new = self._kernel(node, cargs, devices)
        try:
            validate_user_kernel(new, self.model.libs)
            return solve(new, solve_options(self.model, new))
        except (ModelError, TilingError):
            return None


class _Refused(Exception):
    """A buffer some of whose nodes' kernels cannot be tiled with it in L3: it is not spillable
    (deliberately not a KeyError: ``Mapping.get`` must not read it as a missing entry)."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


class _Staging(Mapping):
    """{buffer: L2 staging bytes} of the spillable buffers: the largest staging of its nodes'
    kernels tiled with it in L3, rounded up to ALIGN. A buffer is spillable when every one of
    those kernels can be tiled so, which only tiling them tells: each candidate (``candidates``,
    :func:`_spillable`) is tiled when :func:`plan_levels` first reads its staging, and is taken as
    spillable until then. Reading a candidate that turns out not to be raises :class:`_Refused`
    (it is then left out: plan again). A candidate never read decides nothing but, at times, the
    count of spillable buffers, which the plan asks for (:meth:`more_than`)."""

    def __init__(self, variants: _Variants, candidates: dict):
        self.variants, self.candidates = variants, candidates
        self.known: dict = {}       # name -> staging bytes (confirmed spillable; raised by re-plans)
        self.refused: set = set()

    def __getitem__(self, name: str) -> int:
        if name not in self.known:
            if name not in self.candidates or name in self.refused:
                raise KeyError(name)
            need = []
            for i, cargs in self.candidates[name].items():
                t = self.variants.get(i, cargs)
                if t is None:
                    self.refused.add(name)
                    raise _Refused(name)
                need.append(round_up(t.l2_bytes, ALIGN))
            self.known[name] = max(need)
        return self.known[name]

    def __setitem__(self, name: str, value: int) -> None:
        self[name]   # (known before it is raised)
        self.known[name] = value

    def __iter__(self):
        return (n for n in self.candidates if n not in self.refused)

    def __len__(self) -> int:
        return len(self.candidates) - len(self.refused)

    def more_than(self, k: int) -> bool:
        """Whether more than ``k`` candidates are spillable: confirm candidates, the cheapest to
        tile first, until it is known (:class:`_Refused` when one turns out not to be)."""
        while len(self.known) <= k:
            unknown = [n for n in self if n not in self.known]
            if not unknown:
                return False
            self[self._cheapest(unknown)]
        return True

    def _cheapest(self, names: list) -> str:
        """The candidate needing the fewest new tilings, a tiling that other candidates need too
        counting for its share (the order only saves time: each answer is the same)."""
        needs = {n: {k for i, c in self.candidates[n].items() if (k := self.variants.pending(i, c)) is not None}
                 for n in names}
        users = Counter(k for keys in needs.values() for k in keys)
        return min(names, key=lambda n: sum(1 / users[k] for k in needs[n]))


def _flash_exec_variants(model, graph: GraphDecl, consts: dict, homes: dict) -> tuple:
    """AT_GRAPH_CONST_EXEC_FROM_FLASH: a variant per node reading constants straight from their
    flash (through its own L2 staging, like an L3-homed argument), for the constants only ever
    passed whole to user kernels' inputs (the others are promoted or prefetched as without the
    option). A node whose kernel cannot be tiled so keeps its constants in L2."""
    if not graph.options.const_exec_from_flash or not consts:
        return ()
    bound = {n: nodes for n, nodes in _whole_bindings(model, graph, lambda a: a.is_in and not a.is_out).items()
             if n in consts}
    variants = _Variants(model, graph)
    per_node: dict = {}
    for name, nodes in bound.items():
        for i, cargs in nodes.items():
            per_node.setdefault(i, {}).update({c: name for c in cargs})
    out = []
    for i, carg_const in sorted(per_node.items()):
        devices = {c: flash_device(homes[n]) for c, n in carg_const.items()}
        t = variants.get(i, tuple(carg_const), devices)
        if t is None:
            continue
        out.append(NodeVariant(i, graph.nodes[i].name, t.name, tuple(sorted(carg_const)), t, t.l2_bytes,
                               flash=tuple(sorted(set(carg_const.values())))))
    # a constant read from flash by some of its nodes but not all would need both forms: keep it in L2
    kept = {n for v in out for n in v.flash}
    dropped = {n for n in kept if any(i not in {v.node for v in out if n in v.flash} for i in bound[n])}
    if dropped:
        return _flash_exec_variants(model, graph, {n: b for n, b in consts.items() if n not in dropped}, homes)
    return tuple(out)


def _plan_spill(model, graph: GraphDecl, l2: int, merged, prefetches) -> Optional[tuple]:
    """(LevelPlan, NodeVariant tuple) with the fewest access-weighted activation bytes in L3, or
    None when no spillable buffer exists (the caller reports L2 as too small). Each spillable
    buffer's staging starts as the largest L2 staging of its nodes' kernels tiled with that one
    argument in L3 (tiled when the plan first needs it, :class:`_Staging`); after each plan every
    touching node is tiled with all its L3 arguments, and a node whose staging outgrew its slot
    raises its buffers' staging for the next round."""
    names = [n.name for n in graph.nodes]
    candidates = _spillable(model, graph, merged)
    variants = _Variants(model, graph)
    staging = _Staging(variants, candidates)
    buffers = merged.buffers + tuple(p.buffer(ALIGN) for p in prefetches)
    touches = {n: tuple(nodes) for n, nodes in candidates.items()}
    accesses = {n: sum(len(c) for c in nodes.values()) for n, nodes in candidates.items()}   # moves per run
    kept: set = set()   # spillable buffers the rounds keep in L2
    for _ in range(SPILL_ROUNDS):
        levels = _levels(graph, buffers, l2, model.l3_size, staging, touches, accesses, kept, names)
        if levels is None:
            return None
        chosen, short = [], {}
        for i in range(len(graph.nodes)):
            cargs = tuple(sorted({c for n in levels.spilled for c in candidates[n].get(i, ())}))
            if not cargs:
                continue
            t = variants.get(i, cargs)
            need = round_up(t.l2_bytes, ALIGN) if t is not None else None
            if need is None or need > levels.extra[i]:
                short[i] = need
                continue
            chosen.append(NodeVariant(i, graph.nodes[i].name, t.name, cargs, t, t.l2_bytes,
                                      levels.extra_offset(i) or 0))
        if not short:
            return levels, tuple(chosen)
        for i, need in short.items():
            spilled_here = [n for n in levels.spilled if i in candidates[n]]
            if need is None:   # no tiling with all of them in L3: keep the largest in L2 from now on
                kept.add(max(spilled_here, key=lambda n: (staging[n], n)))
                continue
            more = math.ceil((need - levels.extra[i]) / len(spilled_here))
            for n in spilled_here:
                staging[n] = round_up(staging[n] + more, ALIGN)
    raise PlanError(f"graph '{graph.name}': the L3 spill plan did not settle in {SPILL_ROUNDS} rounds (the kernels "
                    "tiled again with L3 arguments keep needing more L2 staging than planned)", level="L2",
                    missing=0, node=min(short), node_name=names[min(short)], where=graph.close_where,
                    hint="give the graph more L2 (SetMemoryDeviceInfos AT_MEM_L2, --L2)")


def _levels(graph: GraphDecl, buffers: tuple, l2: int, l3: int, staging: _Staging, touches: dict, accesses: dict,
            kept: set, names: list) -> Optional[LevelPlan]:
    """:func:`plan_levels` over the spillable buffers (None when none is), planned again whenever
    one of the candidates taken as spillable turns out not to be (:class:`_Staging`): the plan
    made knowing every candidate's staging from the start."""
    while staging:
        pinned = {b.name for b in buffers} - set(staging) | kept
        try:
            levels = plan_levels(buffers, l2, l3, accesses=accesses, staging=staging, touches=touches, pinned=pinned,
                                 node_names=names, confirm=staging.more_than)
            if levels.spilled or staging.more_than(0):   # (no spillable buffer at all: None)
                return levels
        except _Refused:
            continue
        except PlanError as err:
            more = ("give the graph more L2 (SetMemoryDeviceInfos AT_MEM_L2, --L2) or smaller layers"
                    if err.level == "L2" else "give the graph more L3 RAM (SetMemorySizes' L3, SetMemoryDeviceInfos "
                    "AT_MEM_L3_HRAM, --L3)")
            why = " with every spillable buffer in L3 RAM" if err.level == "L2" else ""
            raise PlanError(f"graph '{graph.name}': {err.message}{why}", level=err.level, missing=err.missing,
                            node=err.node, node_name=err.node_name, where=graph.close_where, hint=more) from None
    return None


def _promote(consts: dict, uses: dict, budget: int, l2: int, layout) -> list:
    """Constants promoted to static L2, greedily: at each step the one saving the most flash
    traffic per run (uses x bytes) among those whose promotion still lets static + dynamic L2
    fit (its prefetch buffer leaves the dynamic area, its bytes join the static one), until
    none fits. Each trial is a quick placement (greedy orders only). A constant refused once is
    not tried again: each promotion adds its bytes to the static area and takes its prefetch
    buffer, no larger, from the dynamic one, so static + dynamic does not shrink (exactly so for
    the best placements: the buffer could sit on top of any placement without it) and a refused
    constant would be refused again. This keeps the trials linear in the constants."""
    promoted: list = []
    refused: set = set()
    order = sorted(consts, key=lambda n: (-uses[n] * consts[n], n))
    while True:
        best = None
        for name in order:
            if name in refused or name in promoted:
                continue
            static, dyn, _ = layout(promoted + [name])
            if static <= budget and static + dyn.peak <= l2:
                best = name
                break
            refused.add(name)
        if best is None:
            return promoted
        promoted.append(best)


def _prefetches(graph, in_flash: dict, live: dict, times: list, activations: Placement,
                free_l2: int, cycles: dict) -> tuple[Prefetch, ...]:
    if not in_flash:
        return ()
    tops = [0] * len(graph.nodes)
    for b in activations.buffers:
        for i in range(b.first, b.last + 1):
            tops[i] = max(tops[i], activations.offsets[b.name] + b.footprint)
    return prefetch_schedule(in_flash, times, {n: live[n][0] for n in in_flash}, [free_l2 - t for t in tops],
                             {n: live[n][1] for n in in_flash}, cycles_of=cycles)


def flash_homes(model, graph: GraphDecl, consts: dict, uses: dict) -> dict:
    """name -> the flash holding each constant: its TCArgInfo home when that is a flash, else
    AT_GRAPH_PREF_L3_HOME (:func:`~autotiler.model.devices.declared_flash`: one the model
    declares); with AT_GRAPH_PRIVILEGED_L3_HOME, the privileged flash (smaller,
    faster) is filled first, within its SetMemoryDeviceInfos size: most reads per run first (a
    constant left in flash is copied at each use), then the smaller (more of them fit)."""
    o = graph.options
    homes = {n: declared_flash(model, graph.symbol(n).home if graph.symbol(n).home in FLASH_LOCATIONS
                               else o.pref_l3_home, o.pref_l3_home) for n in consts}
    privileged = o.privileged_l3_home
    if privileged == AT_MemLocation_T.AT_MEM_UNDEF or not consts:
        return homes
    info = model.memory_devices.get(privileged)
    if info is None:
        raise ModelError(f"graph '{graph.name}': AT_GRAPH_PRIVILEGED_L3_HOME names {privileged.name}, which "
                         "SetMemoryDeviceInfos does not declare (its size is what the privileged flash holds)",
                         where=graph.close_where, hint=f"declare {privileged.name} with its size in SetMemoryDeviceInfos")
    room = info[0]
    for n in sorted(consts, key=lambda n: (-uses[n], consts[n], n)):
        size = round_up(consts[n], ALIGN)
        if size <= room:
            homes[n] = privileged
            room -= size
    return homes


def _pack(graph: GraphDecl, consts: dict, homes: dict) -> tuple:
    """((location, FlashImage), ...): each flash's constants, largest first; the main flash
    (AT_GRAPH_PREF_L3_HOME's, else the one holding most bytes) first."""
    locs = sorted(set(homes.values()), key=lambda loc: (loc != graph.options.pref_l3_home,
                                                        -sum(consts[n] for n in homes if homes[n] == loc), loc))
    out = []
    for loc in locs or [graph.options.pref_l3_home]:
        names = sorted((n for n in consts if homes[n] == loc), key=lambda n: (-consts[n], n))
        out.append((loc, pack_constants([(n, load_const(graph.symbol(n).const,
                                                        consts[n] // graph.symbol(n).const.item_size), ALIGN)
                                         for n in names])))
    return tuple(out)


def _too_big(graph, l2: int, static: int, dyn: Placement, no_l3: bool = False) -> None:
    bound = lower_bound(dyn.buffers)
    peak_node = max(range(len(graph.nodes)), key=lambda i: sum(b.footprint for b in dyn.buffers
                                                              if b.first <= i <= b.last))
    raise PlanError(f"graph '{graph.name}': L2 is {static + dyn.peak - l2} bytes short at node {peak_node} "
                    f"('{graph.nodes[peak_node].name}'): the activations and prefetched constants need {dyn.peak} "
                    f"bytes (lower bound {bound}) and the promoted constants {static}, L2 holds {l2}; "
                    + ("the model has no L3 RAM to move activations to" if no_l3 else "none of the activations can "
                       "move to L3 RAM (only locals passed whole to user kernels' input or output arguments can)"),
                    level="L2", missing=static + dyn.peak - l2, node=peak_node,
                    node_name=graph.nodes[peak_node].name, where=graph.close_where,
                    hint="give the graph more L2 (SetMemoryDeviceInfos AT_MEM_L2, --L2) or smaller layers")


def _symbols(graph, sizes, live, merged, dyn: Placement, promoted, flashes: tuple, homes: dict, prefetches,
             levels: Optional[LevelPlan] = None, exec_flash: frozenset = frozenset()) -> tuple:
    pre = {p.name: p for p in prefetches}
    image = {n: img for loc, img in flashes for n in img.offsets}
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
            out.append(SymbolPlan(sym.name, size, "arg", None, first, last, scalar=not sym.is_pointer))
        elif sym.const is not None and sym.name in static_offsets:
            out.append(SymbolPlan(sym.name, size, "static", static_offsets[sym.name], first, last,
                                  image[sym.name].offsets[sym.name], flash_loc=homes[sym.name]))
        elif sym.const is not None and sym.name in exec_flash:
            out.append(SymbolPlan(sym.name, size, "flash_exec", None, first, last,
                                  image[sym.name].offsets[sym.name], flash_loc=homes[sym.name]))
        elif sym.const is not None:
            p = pre[sym.name]
            out.append(SymbolPlan(sym.name, size, "flash", dyn.offsets[sym.name], first, last,
                                  image[sym.name].offsets[sym.name], p.start, homes[sym.name]))
        else:
            buf, inner = merged.where[sym.name]
            if levels is not None and buf in levels.spilled:
                out.append(SymbolPlan(sym.name, size, "l3", levels.offset(buf) + inner, first, last))
            else:
                out.append(SymbolPlan(sym.name, size, "dyn", dyn.offsets[buf] + inner, first, last))
    for st in graph.stacked:
        for child in st.inputs:
            if child in merged.where:
                buf, inner = merged.where[child]
                first, last = live.get(child, (0, 0))
                out.append(SymbolPlan(child, sizes.get(child, 0), "dyn", dyn.offsets[buf] + inner, first, last))
    return tuple(out)


__all__ = ["bound_argument", "IndexedUse", "indexed_argument", "SymbolPlan", "NodeVariant", "GraphPlan", "symbol_sizes", "lifetimes", "plan_graph",
           "flash_homes"]
