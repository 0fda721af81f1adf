"""Static placement of a graph's buffers in one memory level (L2 or L3).

A graph runs its nodes in a fixed order, so every buffer's lifetime is known before the run: it
is produced at node ``first`` and last read at node ``last`` (inclusive). Placing the buffers at
fixed offsets so that two buffers alive at the same node never share an address, with the
smallest arena, is the *dynamic storage allocation* problem (NP-hard; Garey & Johnson SR2).

Lower bound. At every node the buffers alive there must be disjoint, so the arena is at least
the largest sum of their sizes at one node (:func:`lower_bound`). A placement that reaches it is
optimal; ``Placement.ratio`` says how far from it a plan is.

Algorithms. :func:`plan_static` runs every heuristic below and keeps the smallest peak (ties go
to the first in ``ALGORITHMS``). Each greedy takes the buffers in an order and puts each at the
lowest aligned offset that does not overlap a buffer already placed whose lifetime overlaps its
own (first fit):

- ``greedy_by_size``: largest first. The rule of TensorFlow Lite Micro's ``GreedyMemoryPlanner``
  (tensorflow/lite/micro/memory_planner/greedy_memory_planner.cc) and of TVM USMP's
  ``greedy_by_size`` (src/tir/usmp/algo/greedy.cc): big buffers placed early leave the gaps that
  small ones fill.
- ``greedy_by_conflicts``: most conflicting lifetimes first, then largest: TVM USMP's
  ``greedy_by_conflicts`` (same file); a buffer that meets many others is the hardest to fit late.
- ``greedy_by_pressure``: first the buffers alive at the most loaded node, then largest. Ours:
  the buffers of the peak node are exactly those the lower bound counts, so placing them first
  stacks them without gaps. On a chain (node i reads buffer i-1 and writes buffer i) this order
  reaches the bound where greedy-by-size does not (sizes 5, 4, 6, 8: by size 18, by pressure 14).
- ``hill_climb``: TVM USMP's ``hill_climb`` (src/tir/usmp/algo/hill_climb.cc) in spirit: start
  from the best greedy order, move a buffer that touches the peak earlier in the order, keep the
  new order when the peak does not grow; a fixed seed and a bounded number of rounds keep it
  deterministic and fast, and it stops as soon as the lower bound is reached.

Sizes are rounded up to each buffer's alignment (its *footprint*), as TFLite Micro does, so the
next buffer placed on top of it starts aligned; peaks and the lower bound count footprints.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Optional

from ..errors import AutoTilerError

HILL_CLIMB_ROUNDS = 300   # orders tried by the improvement pass at most (it stops at the lower bound)
HILL_CLIMB_SEED = 0       # fixed: the same graph always gets the same plan


class PlanError(AutoTilerError):
    """A graph's buffers do not fit a memory level. ``level`` ("L2", "L3"), ``missing`` (bytes
    beyond the capacity) and ``node`` (index of the node where the peak occurs, ``node_name`` if
    the caller gave names) say where and by how much."""

    def __init__(self, message: str, *, level: str, missing: int, node: int, node_name: Optional[str] = None,
                 hint: Optional[str] = None, where: Optional[str] = None):
        self.level = level
        self.missing = missing
        self.node = node
        self.node_name = node_name
        super().__init__(message, hint=hint, where=where)


@dataclass(frozen=True)
class Buffer:
    """A buffer of ``size`` bytes written at node ``first`` and last read at node ``last``
    (node indices in execution order, inclusive), placed at a multiple of ``align``."""

    name: str
    size: int
    first: int
    last: int
    align: int = 4

    def __post_init__(self) -> None:
        if self.size < 0 or self.first < 0 or self.last < self.first:
            raise ValueError(f"buffer '{self.name}': need size >= 0 and 0 <= first <= last, got size {self.size}, "
                             f"lifetime [{self.first}, {self.last}]")
        if self.align < 1 or self.align & (self.align - 1):
            raise ValueError(f"buffer '{self.name}': alignment {self.align} is not a power of two")

    @property
    def footprint(self) -> int:
        """Bytes reserved: the size rounded up to the alignment."""
        return round_up(self.size, self.align)

    def overlaps(self, other: Buffer) -> bool:
        """Whether both are alive at some node (and so need distinct addresses)."""
        return self.first <= other.last and other.first <= self.last


@dataclass(frozen=True)
class Placement:
    """Offsets of a level's buffers. ``peak`` = max(offset + footprint), ``lower_bound`` as
    :func:`lower_bound`, ``algorithm`` the heuristic kept, ``tried`` each heuristic's peak."""

    buffers: tuple[Buffer, ...]
    offsets: Mapping[str, int]
    peak: int
    lower_bound: int
    algorithm: str
    tried: tuple[tuple[str, int], ...] = ()

    @property
    def ratio(self) -> float:
        """peak / lower bound (1.0 is optimal; an empty plan is optimal too)."""
        return self.peak / self.lower_bound if self.lower_bound else 1.0

    def offset(self, name: str) -> int:
        return self.offsets[name]


def round_up(value: int, align: int) -> int:
    return -(-value // align) * align


def node_count(buffers: Sequence[Buffer]) -> int:
    return max((b.last for b in buffers), default=-1) + 1


def live_bytes(buffers: Sequence[Buffer], nodes: Optional[int] = None) -> list[int]:
    """Footprint bytes alive at each node (a difference array: O(buffers + nodes))."""
    nodes = max(nodes or 0, node_count(buffers))
    delta = [0] * (nodes + 1)
    for b in buffers:
        delta[b.first] += b.footprint
        delta[b.last + 1] -= b.footprint
    live, total = [], 0
    for d in delta[:nodes]:
        total += d
        live.append(total)
    return live


def lower_bound(buffers: Sequence[Buffer]) -> int:
    """The largest sum of footprints alive at one node: no placement can use less."""
    return max(live_bytes(buffers), default=0)


def node_tops(placement: Placement, nodes: Optional[int] = None) -> list[int]:
    """Per node, the highest address (offset + footprint) used by a buffer alive there."""
    tops = [0] * max(nodes or 0, node_count(placement.buffers))
    for b in placement.buffers:
        top = placement.offsets[b.name] + b.footprint
        for n in range(b.first, b.last + 1):
            tops[n] = max(tops[n], top)
    return tops


# ---------------------------------------------------------------------------------------------
# Checking


def placement_conflicts(buffers: Sequence[Buffer], offsets: Mapping[str, int],
                        capacity: Optional[int] = None) -> list[str]:
    """Everything wrong with a placement, one sentence each (empty: valid): a missing, negative or
    misaligned offset, a buffer beyond ``capacity``, two buffers alive at the same node whose
    address ranges [offset, offset + size) intersect."""
    problems = []
    for b in buffers:
        off = offsets.get(b.name)
        if off is None:
            problems.append(f"buffer '{b.name}' has no offset")
        elif off < 0 or off % b.align:
            problems.append(f"buffer '{b.name}' at offset {off} is not a non-negative multiple of {b.align}")
        elif capacity is not None and off + b.size > capacity:
            problems.append(f"buffer '{b.name}' ends at {off + b.size}, beyond the capacity {capacity}")
    placed = sorted((b for b in buffers if b.name in offsets and b.size > 0), key=lambda b: b.first)
    # Sweep in order of first node: only buffers still alive can conflict with the next one.
    active: list[Buffer] = []
    for b in placed:
        active = [a for a in active if a.last >= b.first]
        lo, hi = offsets[b.name], offsets[b.name] + b.size
        for a in active:
            a_lo = offsets[a.name]
            if a_lo < hi and lo < a_lo + a.size:
                problems.append(f"buffers '{a.name}' [{a_lo}, {a_lo + a.size}) and '{b.name}' [{lo}, {hi}) "
                                f"overlap while both alive at node {max(a.first, b.first)}")
        active.append(b)
    return problems


def check_placement(buffers: Sequence[Buffer], offsets: Mapping[str, int], capacity: Optional[int] = None,
                    level: str = "L2") -> None:
    """Raise :class:`PlanError` on the first problem :func:`placement_conflicts` finds."""
    problems = placement_conflicts(buffers, offsets, capacity)
    if problems:
        raise PlanError(f"invalid {level} placement: {problems[0]}" +
                        (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
                        level=level, missing=0, node=-1)


# ---------------------------------------------------------------------------------------------
# Heuristics


@dataclass(frozen=True)
class _Problem:
    """The buffers as index arrays, shared by every heuristic."""

    buffers: tuple[Buffer, ...]
    foot: tuple[int, ...]
    conflicts: tuple[tuple[int, ...], ...]   # per buffer, the buffers alive at one of its nodes
    pressure: tuple[int, ...]                # per buffer, the most bytes alive at one of its nodes

    @staticmethod
    def of(buffers: Sequence[Buffer]) -> _Problem:
        bufs = tuple(buffers)
        live = live_bytes(bufs)
        conflicts: list[list[int]] = [[] for _ in bufs]
        order = sorted(range(len(bufs)), key=lambda i: bufs[i].first)
        active: list[int] = []
        for i in order:   # sweep: each conflicting pair once
            active = [j for j in active if bufs[j].last >= bufs[i].first]
            for j in active:
                conflicts[i].append(j)
                conflicts[j].append(i)
            active.append(i)
        return _Problem(bufs, tuple(b.footprint for b in bufs), tuple(tuple(c) for c in conflicts),
                        tuple(max(live[b.first:b.last + 1]) for b in bufs))


def _first_fit(problem: _Problem, order: Sequence[int]) -> list[int]:
    """Offsets placing buffers in ``order``, each at the lowest aligned offset clear of the
    placed buffers it conflicts with."""
    offsets = [-1] * len(problem.buffers)
    foot = problem.foot
    for i in order:
        taken = sorted((offsets[j], offsets[j] + foot[j]) for j in problem.conflicts[i]
                       if offsets[j] >= 0 and foot[j])
        offsets[i] = _bottom_fit(taken, foot[i], problem.buffers[i].align)
    return offsets


def _bottom_fit(taken: list[tuple[int, int]], size: int, align: int) -> int:
    """The lowest aligned offset clear of ``taken`` (sorted by start)."""
    off = 0
    for lo, hi in taken:   # sorted by start: the first gap that holds the buffer wins
        if off + size <= lo:
            break
        if hi > off:
            off = round_up(hi, align)
    return off


def _top_fit(taken: list[tuple[int, int]], size: int, align: int, top: int) -> Optional[int]:
    """The highest aligned offset whose buffer ends at or below ``top`` clear of ``taken``
    (sorted by end, highest first), or None."""
    off = (top - size) // align * align
    for lo, hi in taken:
        if off >= hi:
            break
        if lo < off + size:
            off = (lo - size) // align * align
    return off if off >= 0 else None


def _ping_pong(problem: _Problem, target: int) -> list[int]:
    """Buffers in order of birth, each on the side opposite to the youngest placed buffer it
    conflicts with: bottom (lowest fit) or top (highest fit ending at ``target``, the lower
    bound), falling back to the bottom when the top has no room. A producer's output lands on
    the other side from its input, as double buffers ping-pong."""
    offsets = [-1] * len(problem.buffers)
    on_top = [False] * len(problem.buffers)
    foot = problem.foot
    for i in sorted(range(len(problem.buffers)), key=lambda i: (problem.buffers[i].first, -foot[i], i)):
        placed = [j for j in problem.conflicts[i] if offsets[j] >= 0]
        youngest = max(placed, key=lambda j: (problem.buffers[j].first, j), default=None)
        size, align = foot[i], problem.buffers[i].align
        taken = [(offsets[j], offsets[j] + foot[j]) for j in placed if foot[j]]
        off = None
        if youngest is not None and not on_top[youngest]:
            off = _top_fit(sorted(taken, key=lambda t: -t[1]), size, align, target)
            on_top[i] = off is not None
        if off is None:
            off = _bottom_fit(sorted(taken), size, align)
        offsets[i] = off
    return offsets


def _peak(problem: _Problem, offsets: Sequence[int]) -> int:
    return max((o + f for o, f in zip(offsets, problem.foot)), default=0)


def _order_by_size(p: _Problem) -> list[int]:
    return sorted(range(len(p.buffers)), key=lambda i: (-p.foot[i], p.buffers[i].first, i))


def _order_by_conflicts(p: _Problem) -> list[int]:
    return sorted(range(len(p.buffers)), key=lambda i: (-len(p.conflicts[i]), -p.foot[i], p.buffers[i].first, i))


def _order_by_pressure(p: _Problem) -> list[int]:
    return sorted(range(len(p.buffers)), key=lambda i: (-p.pressure[i], -p.foot[i], p.buffers[i].first, i))


GREEDY_ORDERS: dict[str, Callable[[_Problem], list[int]]] = {
    "greedy_by_size": _order_by_size,
    "greedy_by_conflicts": _order_by_conflicts,
    "greedy_by_pressure": _order_by_pressure,
}
ALGORITHMS = (*GREEDY_ORDERS, "ping_pong", "hill_climb")


def _hill_climb(problem: _Problem, start: list[int], bound: int, rounds: int, seed: int) -> list[int]:
    """Improve a placement order: move a buffer that reaches the peak (or one of its conflicts)
    earlier, keep the move if the peak does not grow. Returns the best offsets found."""
    rng = random.Random(seed)
    order = list(start)
    offsets = _first_fit(problem, order)
    peak = _peak(problem, offsets)
    best = offsets
    for _ in range(rounds):
        if peak <= bound:
            break
        tops = [i for i, o in enumerate(offsets) if o + problem.foot[i] == peak]
        culprit = rng.choice(tops)
        # Moving the top buffer itself, or a neighbour under it, are the moves that can lower it.
        if problem.conflicts[culprit] and rng.random() < 0.5:
            culprit = rng.choice(problem.conflicts[culprit])
        pos = order.index(culprit)
        if pos == 0:
            continue
        candidate = list(order)
        candidate.insert(rng.randrange(pos), candidate.pop(pos))
        cand_offsets = _first_fit(problem, candidate)
        cand_peak = _peak(problem, cand_offsets)
        if cand_peak <= peak:   # accepting equal peaks lets the search cross plateaus
            order, offsets, peak = candidate, cand_offsets, cand_peak
            best = offsets
    return best


def plan_static(buffers: Sequence[Buffer], capacity: Optional[int] = None, *, level: str = "L2",
                node_names: Optional[Sequence[str]] = None, algorithms: Sequence[str] = ALGORITHMS,
                rounds: int = HILL_CLIMB_ROUNDS, seed: int = HILL_CLIMB_SEED) -> Placement:
    """Place ``buffers`` with reuse across disjoint lifetimes; the best of ``algorithms``.

    Raises :class:`PlanError` when the best peak exceeds ``capacity``: the bytes missing and the
    node where the highest buffer is alive (the lower bound's node if even the bound overflows).
    """
    names = [b.name for b in buffers]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"buffer names must be unique, repeated: {', '.join(dup)}")
    unknown = [a for a in algorithms if a not in ALGORITHMS]
    if unknown or not algorithms:
        raise ValueError(f"unknown placement algorithms {unknown}; known: {', '.join(ALGORITHMS)}")
    problem = _Problem.of(buffers)
    bound = lower_bound(problem.buffers)
    tried: list[tuple[str, int]] = []
    best: Optional[tuple[int, str, list[int]]] = None
    best_order: Optional[tuple[int, list[int]]] = None   # the best first-fit order: hill climbing's start
    for name in algorithms:
        if name == "hill_climb":
            start = best_order[1] if best_order else _order_by_pressure(problem)
            offsets = _hill_climb(problem, start, bound, rounds, seed)
        elif name == "ping_pong":
            offsets = _ping_pong(problem, bound)
        else:
            order = GREEDY_ORDERS[name](problem)
            offsets = _first_fit(problem, order)
        peak = _peak(problem, offsets)
        tried.append((name, peak))
        if name in GREEDY_ORDERS and (best_order is None or peak < best_order[0]):
            best_order = (peak, order)
        if best is None or peak < best[0]:
            best = (peak, name, offsets)
    assert best is not None
    peak, name, offsets = best
    placement = Placement(problem.buffers, MappingProxyType({b.name: o for b, o in zip(problem.buffers, offsets)}),
                          peak, bound, name, tuple(tried))
    if capacity is not None and peak > capacity:
        raise overflow_error(placement, capacity, level, node_names)
    return placement


def overflow_error(placement: Placement, capacity: int, level: str, node_names: Optional[Sequence[str]] = None,
                   hint: Optional[str] = None) -> PlanError:
    """The error for a placement beyond ``capacity``: if even the lower bound overflows, the bytes
    missing at the bound's node (no placement can do better), else the peak's excess."""
    live = live_bytes(placement.buffers)
    if placement.lower_bound > capacity:
        node = live.index(placement.lower_bound)
        why = f"{placement.lower_bound} bytes are alive at once"
    else:
        tops = node_tops(placement)
        node = tops.index(placement.peak)
        why = (f"{live[node]} bytes are alive there but placement leaves gaps (peak {placement.peak}, "
               f"lower bound {placement.lower_bound})")
    missing = (placement.lower_bound if placement.lower_bound > capacity else placement.peak) - capacity
    return plan_error(level, missing, node, node_names, capacity, why, hint)


def plan_error(level: str, missing: int, node: int, node_names: Optional[Sequence[str]], capacity: int,
               why: str, hint: Optional[str] = None) -> PlanError:
    """The one wording of an overflow: level, bytes missing, node index (and name)."""
    name = node_names[node] if node_names is not None and 0 <= node < len(node_names) else None
    where = f"node {node}" + (f" ('{name}')" if name else "")
    return PlanError(f"{level} is {missing} bytes short at {where}: {why}, {level} holds {capacity}",
                     level=level, missing=missing, node=node, node_name=name, hint=hint)


# ---------------------------------------------------------------------------------------------
# Aliases and stacked tensors


@dataclass(frozen=True)
class Merged:
    """:func:`merge_aliases`'s result: the buffers to place, and for every part (and stack
    parent) the buffer holding it and its offset inside that buffer."""

    buffers: tuple[Buffer, ...]
    where: Mapping[str, tuple[str, int]] = field(default_factory=dict)


def merge_aliases(parts: Sequence[tuple], aliases: Sequence[Sequence[str]] = (),
                  stacks: Sequence[tuple[str, Sequence[str]]] = ()) -> Merged:
    """One buffer per group of parts that share memory.

    ``parts``: ``(name, size, first, last)`` or ``(name, size, first, last, align)``.
    ``aliases``: groups of names at the same address (an INOUT argument's input and output).
    ``stacks``: ``(parent, children)``: the children laid end to end from the parent's start (a
    stacked tensor, the concatenation of its children); a parent that is not a part is virtual,
    sized by its children. Groups nest (a child may be aliased, a parent stacked in another).
    A merged buffer spans its members (offset + size), lives from the first member's first node
    to the last member's last node, takes the largest alignment, and is named after its member
    at offset 0 with the largest size (the stack parent, the largest of an alias group).
    """
    info: dict[str, tuple[int, int, int, int]] = {}   # name -> size, first, last, align
    for part in parts:
        name, size, first, last, *rest = part
        if name in info:
            raise ValueError(f"part '{name}' given twice")
        info[name] = (size, first, last, rest[0] if rest else 4)
    parent_of: dict[str, str] = {}
    stack_sizes: dict[str, int] = {}
    for parent, children in stacks:
        for child in children:
            if child not in info and child not in {p for p, _ in stacks}:
                raise ValueError(f"stack '{parent}': unknown child '{child}'")
    uf = _OffsetUnion()
    for group in aliases:
        for other in group[1:]:
            uf.join(group[0], other, 0)
    for parent, children in stacks:
        offset = 0
        for child in children:
            if child in parent_of:
                raise ValueError(f"'{child}' is stacked in both '{parent_of[child]}' and '{parent}'")
            parent_of[child] = parent
            uf.join(parent, child, offset)
            offset += _extent(child, info, stacks, stack_sizes)
        stack_sizes[parent] = offset
    for name in {n for g in aliases for n in g} - set(info) - set(stack_sizes):
        raise ValueError(f"alias of unknown part '{name}'")
    members: dict[str, list[tuple[str, int]]] = {}
    for name in [*info, *(p for p in stack_sizes if p not in info)]:
        root, off = uf.find(name)
        members.setdefault(root, []).append((name, off))
    buffers, where = [], {}
    for group in members.values():
        base = min(off for _, off in group)
        sizes = {n: _extent(n, info, stacks, stack_sizes) for n, _ in group}
        spans = [(n, off - base) for n, off in group]
        lifetimes = [info[n][1:3] for n, _ in group if n in info]
        if not lifetimes:
            raise ValueError(f"stack '{group[0][0]}' has no part with a lifetime")
        name = min((n for n, off in spans if off == 0), key=lambda n: -sizes[n])
        align = max((info[n][3] for n, _ in group if n in info), default=4)
        buffers.append(Buffer(name, max(off + sizes[n] for n, off in spans), min(f for f, _ in lifetimes),
                              max(last for _, last in lifetimes), align))
        for n, off in spans:
            if n in info and off % info[n][3]:
                raise ValueError(f"'{n}' lands at offset {off} inside '{name}', not a multiple of its "
                                 f"alignment {info[n][3]}")
            where[n] = (name, off)
    return Merged(tuple(buffers), MappingProxyType(where))


def _extent(name: str, info: dict, stacks: Sequence[tuple[str, Sequence[str]]], memo: dict[str, int]) -> int:
    """A member's size: its own, or for a stack parent the larger of its own and its children's sum."""
    own = info[name][0] if name in info else 0
    if name in memo:
        return max(own, memo[name])
    children = next((c for p, c in stacks if p == name), None)
    if children is None:
        return own
    return max(own, sum(_extent(c, info, stacks, memo) for c in children))


class _OffsetUnion:
    """Union-find where each name keeps its offset from its root; a join that contradicts an
    earlier one (the same two names at two distances) is refused."""

    def __init__(self) -> None:
        self.parent: dict[str, tuple[str, int]] = {}

    def find(self, name: str) -> tuple[str, int]:
        parent, off = self.parent.get(name, (name, 0))
        if parent == name:
            return name, 0
        root, root_off = self.find(parent)
        self.parent[name] = (root, off + root_off)
        return root, off + root_off

    def join(self, a: str, b: str, b_from_a: int) -> None:
        """Record offset(b) = offset(a) + b_from_a."""
        ra, oa = self.find(a)
        rb, ob = self.find(b)
        if ra == rb:
            if ob - oa != b_from_a:
                raise ValueError(f"'{b}' cannot be both {ob - oa} and {b_from_a} bytes after '{a}'")
            return
        # offset(rb) = offset(b) - ob = offset(a) + b_from_a - ob = offset(ra) + oa + b_from_a - ob
        self.parent[rb] = (ra, oa + b_from_a - ob)
