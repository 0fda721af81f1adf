"""Two memory levels: which buffers of a graph live in L3 when L2 cannot hold them all.

Spill rule. A buffer moved to L3 frees its L2 bytes at every node of its lifetime, except that
the nodes touching it (by default its producer and its last reader) need L2 staging slots to
move its tiles (``staging``, bytes per touching node). It costs ``size x accesses`` bytes of
L3 traffic per run (``accesses`` defaults to 2: one write, one read). Fitting L2 is a covering
problem: at every node whose placed top exceeds the capacity the spilled buffers must free the
excess. :func:`plan_levels` solves it greedily, the classic rule for weighted covering: while
the best placement overflows, spill the buffer with the most overflow bytes freed (summed over
the overflowing nodes, each capped at that node's excess) per byte of L3 traffic, re-plan;
then walk the spilled buffers from the costliest and bring each back if L2 still fits (a
reverse-delete pass: the greedy choices made early may be redundant once later ones are made),
then trade a spilled buffer for a cheaper kept one while L2 still fits (a 1-swap local search).
With at most ``EXACT_SPILLABLE`` spillable buffers, the subsets cheaper than that result are
tried in order of cost (bounded by ``EXACT_TRIALS`` placements), so small graphs get the
optimum; on random 8-buffer graphs the heuristic passes alone cost up to 1.32x the optimum.
That search is skipped, whatever the number of spillable buffers, when no cheaper subset can
even free every node's excess (a small branch-and-bound over the buffers alive where L2
overflows proves it): it would find nothing.
A long-lived large buffer alive at the peak frees the most per byte moved, so it goes first,
as the guide's rule of thumb says.

Staging and each node's own L2 needs (``node_extra``) are pseudo-buffers alive only at their
node, named ``extra_name(node)``, placed with the buffers so that the L2 plan has their offsets.
A buffer's staging can be costly to know (the graph lowering tiles the touching nodes' kernels
again to find it), so it is read only when a decision depends on it: a gain reads it only at
the overflowing nodes the buffer is touched at, and a fit is first checked against the lower
bound that counts no staging of the buffers in L3 (staging only adds bytes: when that bound
overflows, the true one does too). The decisions are those made knowing every staging; a
caller that learns lazily which buffers may spill at all also answers, when the exact search
needs it, whether more than ``EXACT_SPILLABLE`` may (``confirm``).
If L2 cannot fit even with every spillable buffer in L3, :class:`PlanError` names L2, the bytes
missing and the node; the spilled buffers are then placed in L3 (``l3_capacity`` checked the
same way).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Optional

from .plan import (
    ALGORITHMS,
    Buffer,
    Placement,
    live_bytes,
    lower_bound,
    node_count,
    node_tops,
    overflow_error,
    plan_static,
)

DEFAULT_ACCESSES = 2       # one write and one read of every tensor per run
EXTRA_PREFIX = "@node"
SWAP_ROUNDS = 4            # rounds of the swap pass at most
EXACT_SPILLABLE = 12       # with this few spillable buffers, every cheaper subset is tried ...
EXACT_TRIALS = 400         # ... up to this many placements (else the heuristic result stands)
COVER_STEPS = 20_000       # steps of the search proving the exact pass has nothing to find, at most
GREEDY = tuple(a for a in ALGORITHMS if a != "hill_climb")     # pseudo-buffer names: no C identifier or tensor name starts with '@'


def extra_name(node: int) -> str:
    """The L2 pseudo-buffer holding node ``node``'s extra bytes (staging, own working memory)."""
    return f"{EXTRA_PREFIX}{node}"


@dataclass(frozen=True)
class LevelPlan:
    """Where every buffer lives. ``l2`` places the L2 buffers and the per-node pseudo-buffers
    (``extra_name(n)``, ``extra[n]`` bytes); ``l3`` places the spilled ones (None if none);
    ``l3_traffic`` = sum of size x accesses over the spilled buffers."""

    l2: Placement
    l3: Optional[Placement]
    spilled: tuple[str, ...]
    extra: tuple[int, ...]
    l3_traffic: int

    def level(self, name: str) -> str:
        return "L3" if name in self.spilled else "L2"

    def offset(self, name: str) -> int:
        """The buffer's offset in its level."""
        placement = self.l3 if name in self.spilled else self.l2
        assert placement is not None
        return placement.offset(name)

    def extra_offset(self, node: int) -> Optional[int]:
        """Offset in L2 of node ``node``'s extra bytes, None if it has none."""
        return self.l2.offsets.get(extra_name(node))


@dataclass(frozen=True)
class _Spill:
    """The inputs of :func:`plan_levels`, normalised."""

    buffers: tuple[Buffer, ...]
    capacity: int
    base_extra: tuple[int, ...]
    staging: Mapping[str, int]
    touches: Mapping[str, tuple[int, ...]]
    accesses: Mapping[str, int]
    spillable: tuple[str, ...]
    more_than: Callable[[int], bool]   # whether more than k of ``spillable`` really may spill

    def extra(self, spilled: Collection[str]) -> list[int]:
        extra = list(self.base_extra)
        for name in spilled:
            for node in self.touches[name]:
                extra[node] += self.staging.get(name, 0)
        return extra

    def l2_buffers(self, spilled: Collection[str]) -> list[Buffer]:
        kept = [b for b in self.buffers if b.name not in spilled]
        return kept + [Buffer(extra_name(n), e, n, n) for n, e in enumerate(self.extra(spilled)) if e]

    def place(self, spilled: Collection[str]) -> Placement:
        return plan_static(self.l2_buffers(spilled))

    def unstaged_bound(self, spilled: Collection[str]) -> int:
        """The lower bound with ``spilled`` in L3, counting none of their staging (so no more
        than the true one): it reads no staging."""
        kept = [b for b in self.buffers if b.name not in spilled]
        return lower_bound(kept + [Buffer(extra_name(n), e, n, n) for n, e in enumerate(self.base_extra) if e])

    def fits(self, spilled: Collection[str]) -> bool:
        """Whether L2 fits with ``spilled`` in L3: the lower bounds (without, then with the
        staging) reject cheaply, the greedy placements accept cheaply, hill climbing decides the
        rest."""
        if self.unstaged_bound(spilled) > self.capacity:
            return False
        buffers = self.l2_buffers(spilled)
        if lower_bound(buffers) > self.capacity:
            return False
        if plan_static(buffers, algorithms=GREEDY).peak <= self.capacity:
            return True
        return plan_static(buffers).peak <= self.capacity

    def cost(self, b: Buffer) -> int:
        return b.size * self.accesses.get(b.name, DEFAULT_ACCESSES)

    def gain(self, b: Buffer, excess: Mapping[int, int]) -> int:
        """Overflow bytes freed by spilling ``b``: at each overflowing node of its lifetime, its
        footprint (less the staging it adds there), capped at the node's excess. Its staging
        is read only when it is touched at such a node."""
        touched = set(self.touches[b.name])
        stage = None
        total = 0
        for n, over in excess.items():
            if b.first <= n <= b.last:
                if n in touched and stage is None:
                    stage = self.staging.get(b.name, 0)
                total += min(over, b.footprint - (stage if n in touched else 0))
        return total


def plan_levels(buffers: Sequence[Buffer], l2_capacity: int, l3_capacity: Optional[int] = None,
                node_extra: Optional[Sequence[int]] = None, *, accesses: Optional[Mapping[str, int]] = None,
                staging: Optional[Mapping[str, int]] = None, touches: Optional[Mapping[str, Sequence[int]]] = None,
                pinned: Collection[str] = (), node_names: Optional[Sequence[str]] = None,
                confirm: Optional[Callable[[int], bool]] = None) -> LevelPlan:
    """Place ``buffers`` in L2, moving to L3 the fewest access-weighted bytes that make L2 fit.

    ``node_extra[i]``: L2 bytes node i needs besides its buffers (always reserved).
    ``staging[name]``: L2 bytes each node touching ``name`` needs if ``name`` is in L3 (default
    0: the caller counted it in ``node_extra``). ``touches[name]``: those nodes (default its
    first and last). ``accesses[name]``: times it is moved per run (default 2). ``pinned``:
    buffers that must stay in L2. Raises :class:`PlanError` (level, bytes missing, node).
    ``staging`` is read only where a decision depends on it (it may compute its values on
    demand). ``confirm(k)``: whether more than ``k`` of the buffers not pinned really may spill,
    for a caller that learns it lazily (reading a buffer's staging tells it); asked only when
    the exact pass depends on it (default: every buffer not pinned may spill).
    """
    nodes = max(node_count(buffers), len(node_extra or ()))
    problem = _Spill(tuple(buffers), l2_capacity,
                     tuple(node_extra or ()) + (0,) * (nodes - len(node_extra or ())),
                     staging if staging is not None else {},
                     {b.name: tuple(sorted(set((touches or {}).get(b.name, (b.first, b.last))))) for b in buffers},
                     dict(accesses or {}),
                     spillable := tuple(b.name for b in buffers if b.name not in set(pinned)),
                     confirm or (lambda k: len(spillable) > k))
    spilled = _spill_greedy(problem, node_names)
    spilled = _swap(problem, _unspill(problem, spilled))
    spilled = _exact_small(problem, spilled)
    l2 = problem.place(spilled)
    kept_order = [b.name for b in buffers if b.name in spilled]
    l3 = plan_static([b for b in buffers if b.name in spilled], l3_capacity, level="L3",
                     node_names=node_names) if spilled else None
    traffic = sum(problem.cost(b) for b in buffers if b.name in spilled)
    return LevelPlan(l2, l3, tuple(kept_order), tuple(problem.extra(spilled)), traffic)


def _spill_greedy(problem: _Spill, node_names: Optional[Sequence[str]]) -> set[str]:
    """Spill the best gain-per-traffic buffer until the L2 placement fits."""
    spilled: set[str] = set()
    by_name = {b.name: b for b in problem.buffers}
    while True:
        placement = problem.place(spilled)
        if placement.peak <= problem.capacity:
            return spilled
        tops = node_tops(placement)
        excess = {n: t - problem.capacity for n, t in enumerate(tops) if t > problem.capacity}
        scored = [(problem.gain(b, excess) / max(problem.cost(b), 1), b.footprint, b.name)
                  for b in (by_name[n] for n in problem.spillable if n not in spilled)]
        scored = [s for s in scored if s[0] > 0]
        if not scored:
            return _all_spilled_or_fail(problem, node_names)
        spilled.add(max(scored)[2])


def _all_spilled_or_fail(problem: _Spill, node_names: Optional[Sequence[str]]) -> set[str]:
    """The greedy found nothing more to spill: everything spillable in L3 either fits (the
    un-spill pass then brings back what it can) or proves L2 too small."""
    everything = set(problem.spillable)
    placement = problem.place(everything)
    if placement.peak <= problem.capacity:
        return everything
    raise overflow_error(placement, problem.capacity, "L2", node_names,
                         hint="with every spillable buffer in L3; raise the L2 budget or tile the node's "
                              "arguments smaller")


def _unspill(problem: _Spill, spilled: set[str]) -> set[str]:
    """Bring back, costliest first, every spilled buffer whose return keeps L2 within capacity."""
    by_name = {b.name: b for b in problem.buffers}
    kept = set(spilled)
    for name in sorted(spilled, key=lambda n: (-problem.cost(by_name[n]), n)):
        trial = kept - {name}
        if problem.fits(trial):
            kept = trial
    return kept


def _swap(problem: _Spill, spilled: set[str]) -> set[str]:
    """Local search: trade a spilled buffer for a cheaper kept one when L2 still fits (then
    bring back what became redundant), until no trade helps or ``SWAP_ROUNDS`` rounds."""
    by_name = {b.name: b for b in problem.buffers}
    for _ in range(SWAP_ROUNDS):
        improved = False
        for out in sorted(spilled, key=lambda n: (-problem.cost(by_name[n]), n)):
            cheaper = sorted((n for n in problem.spillable if n not in spilled
                              and problem.cost(by_name[n]) < problem.cost(by_name[out])),
                             key=lambda n: (problem.cost(by_name[n]), n))
            for inn in cheaper:
                trial = (spilled - {out}) | {inn}
                if problem.fits(trial):
                    spilled = _unspill(problem, trial)
                    improved = True
                    break
            if improved:
                break
        if not improved:
            return spilled
    return spilled


def _may_cover(problem: _Spill, best: int) -> bool:
    """Whether some subset of the spillable buffers costing less than ``best`` may pass the lower
    bound without staging (False: none does, so none fits). Passing it means freeing, at every
    node over capacity, the excess with the subset's buffers alive there: a search over the
    buffers alive at such a node (:func:`_cover`). True too when the search gives up."""
    kept = list(problem.buffers) + [Buffer(extra_name(n), e, n, n) for n, e in enumerate(problem.base_extra) if e]
    over = {n: total - problem.capacity for n, total in enumerate(live_bytes(kept, len(problem.base_extra)))
            if total > problem.capacity}
    spillable = set(problem.spillable)
    useful = sorted((problem.cost(b), b.name, tuple(n for n in over if b.first <= n <= b.last), b.footprint)
                    for b in problem.buffers if b.name in spillable and b.footprint)
    items = [(cost, nodes, size) for cost, _, nodes, size in useful if nodes]
    return _cover(items, over, best, [COVER_STEPS])


def _cover(items: list, need: dict, best: int, budget: list) -> bool:
    """Whether (cost, nodes, bytes) items, cheapest first, of total cost below ``best`` can free
    ``need[n]`` bytes at every node n (items count at the nodes they name). Branch and bound:
    taking an item that costs too much ends a branch (those after it cost more), and so does a
    node the remaining items cannot cover; True when ``budget[0]`` steps run out."""
    budget[0] -= 1
    if all(v <= 0 for v in need.values()) or budget[0] < 0:
        return True
    if not items or items[0][0] >= best:
        return False
    if any(v > sum(size for _, nodes, size in items if n in nodes) for n, v in need.items()):
        return False
    cost, nodes, size = items[0]
    taken = {n: v - size if n in nodes else v for n, v in need.items()}
    return _cover(items[1:], taken, best - cost, budget) or _cover(items[1:], need, best, budget)


def _exact_small(problem: _Spill, spilled: set[str]) -> set[str]:
    """On few spillable buffers, the cheapest subset that fits (subsets in order of cost, those
    the lower bound rejects skipped): the heuristics above are then only a starting point.
    Nothing to search when no subset cheaper than ``spilled`` can pass the lower bound
    (:func:`_may_cover`), whatever the number of spillable buffers."""
    if not spilled:
        return spilled
    by_name = {b.name: b for b in problem.buffers}
    best = sum(problem.cost(by_name[n]) for n in spilled)
    if not _may_cover(problem, best) or problem.more_than(EXACT_SPILLABLE):
        return spilled
    cost = {n: problem.cost(by_name[n]) for n in problem.spillable}
    subsets = sorted((sum(cost[n] for n in sub), sub) for k in range(len(problem.spillable) + 1)
                     for sub in combinations(problem.spillable, k))
    trials = 0
    for total, sub in subsets:
        if total >= best or trials >= EXACT_TRIALS:
            break
        if problem.unstaged_bound(sub) > problem.capacity or lower_bound(problem.l2_buffers(sub)) > problem.capacity:
            continue
        trials += 1
        if problem.fits(sub):
            return set(sub)
    return spilled
