"""The space of tilings: candidate sizes per space, their L1 footprint, the feasible choices.

Per tiled space the candidate steps are the legal ones (constraints of every argument tiled
along it, padding only in the border tiles), at most two per distinct tile count: the largest
step giving that count (the original's "largest tile that fits") and the smallest (balanced
tiles, the last one as large as the others). Per parametric space the candidate chunks are the
multiples of its PrefDiv (all sizes when none fits) plus the whole space, again two per distinct
chunk count. Counting distinct tile counts keeps the lists at about ``2*sqrt(E)`` entries, so
an impossible size is refused at once instead of trying every integer.

The joint space is the product of the per-space lists. :class:`Footprint` gives the L1 bytes of
a choice without building it (a few dictionary look-ups per argument); :func:`grid` thins every
list geometrically so that the product stays small, and the objectives
(:mod:`autotiler.objectives`) search it.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from math import prod
from typing import Optional

from ..constants import KernelArgConstraints_T as C
from ..constants import Object_Type_T
from ..model.ir import SpaceKind
from .geometry import ArgGeom, ArgKind, KernelGeom, SpaceGeom, tile_span, valid_tiling
from .tiling import Choice, align

O = Object_Type_T
THIN_SMALL = 24        # every candidate up to this many tiles/chunks is kept ...
THIN_GROWTH = 1.15     # ... past it, counts grow by at least 15% from one candidate to the next
_EVEN, _ODD, _ONEPREF = (int(C.OBJ_CONSTRAINTS_EVEN), int(C.OBJ_CONSTRAINTS_ODD),
                         int(C.OBJ_CONSTRAINTS_ONEPREFTILE))  # plain ints: IntFlag arithmetic is slow


def meets_constraints(g: ArgGeom, tile: int, n: int, overlap: int = 0) -> bool:
    """EVEN/ODD/ONEPREFTILE/PreferedTileSize on the step of the standard tile (all tiles but
    the last one; nothing to meet with a single tile), MinTileSize on the whole tile (step plus
    ``overlap``). The step is what the original constrains: a stride-2 convolution's input
    (TileCons 2, overlap 1) has odd tiles of an even step."""
    d = g.decl
    c, pref = d.constraints, d.preferred
    if n == 1:
        return True
    if c & _EVEN and tile % 2:
        return False
    if c & _ODD and not tile % 2:
        return False
    if c & _ONEPREF:
        return tile == pref
    if pref and tile % pref:
        return False
    return tile + overlap >= d.min_tile


def _step_ok(parts: list, k: int, n: int, constrained: bool) -> bool:
    for g in parts:
        t = g.tile
        if constrained and not meets_constraints(g, t.ratio * k, n, t.overlap):
            return False
        if not valid_tiling(t, k, n):
            return False
    return True


def _count_ranges(e: int):
    """(n, k_lo, k_hi): the steps k in [k_lo, k_hi] cut e units into exactly n tiles; ranges of
    every n that has one, n ascending (k descending)."""
    n = 1
    while n <= e:
        k_lo = -(-e // n)
        k_hi = e if n == 1 else -(-e // (n - 1)) - 1
        if k_lo <= k_hi:
            yield n, k_lo, k_hi
            if k_lo == 1:
                return
        # jump to the next count with a different k_lo
        n = max(n + 1, -(-e // (k_lo - 1)) if k_lo > 1 else n + 1)


SCAN = 64  # steps looked at from each end of a count's range for a legal one


RANGE_POINTS = 8  # steps tried inside one tile count's range besides its ends


def _spread(lo: int, hi: int) -> list:
    """The ends of [lo, hi] and up to RANGE_POINTS points evenly between them."""
    if hi - lo <= RANGE_POINTS + 1:
        return list(range(lo, hi + 1))
    step = (hi - lo) / (RANGE_POINTS + 1)
    return sorted({lo, hi, *(lo + round(step * j) for j in range(1, RANGE_POINTS + 1))})


def tile_steps(kg: KernelGeom, s: SpaceGeom, constrained: bool = True, every: bool = False) -> list:
    """Legal steps of a tiled space, largest first: per distinct tile count, legal steps near
    the ends of its range and spread between them (balanced tiles at one end, the original's
    "largest tile" at the other); ``every``: all legal steps (the original's largest tile that
    fits is one step, not one of a spread)."""
    parts = [kg.arg(name) for name in s.participants]
    out = set()
    for n, lo, hi in _count_ranges(s.dim):
        if every:
            out.update(k for k in range(lo, hi + 1) if _step_ok(parts, k, n, constrained))
            continue
        for target in _spread(lo, hi):
            down = range(target, max(lo, target - SCAN) - 1, -1)
            k = next((k for k in down if _step_ok(parts, k, n, constrained)), None)
            if k is None:
                k = next((k for k in range(target, min(hi, target + SCAN) + 1) if _step_ok(parts, k, n, constrained)),
                         None)
            if k is not None:
                out.add(k)
    return sorted(out, reverse=True)


def chunk_sizes(s: SpaceGeom, relaxed: bool = False, every: bool = False) -> list:
    """Chunks of a parametric space, largest first: the whole space and the multiples of
    PrefDiv (every size when ``relaxed``), two per distinct chunk count (``every``: all)."""
    if s.one_tile:
        return [s.dim]
    div = 1 if relaxed else s.pref_div
    out = {s.dim}
    if every:
        return sorted(out | set(range(div, s.dim + 1, div)), reverse=True)
    for _n, lo, hi in _count_ranges(s.dim):
        for target in _spread(lo, hi):
            c = target // div * div
            if lo <= c <= hi and c > 0:
                out.add(c)
            c = -(-target // div) * div
            if lo <= c <= hi:
                out.add(c)
    return sorted(out, reverse=True)


def space_values(kg: KernelGeom, s: SpaceGeom, constrained: bool = True, relaxed: bool = False,
                 every: bool = False) -> Optional[list]:
    """Candidate sizes of a space the tiler chooses, largest first; None for a fixed space."""
    if s.kind == SpaceKind.TILED:
        return tile_steps(kg, s, constrained, every) if s.dim else None
    if s.kind == SpaceKind.PARAMETRIC:
        return chunk_sizes(s, relaxed, every)
    return None


def thin(values: list, dim: int) -> list:
    """Keep every candidate up to THIN_SMALL tiles, then counts growing by THIN_GROWTH."""
    out, last_n = [], 0
    for v in values:
        n = -(-dim // v)
        if n <= THIN_SMALL or n >= last_n * THIN_GROWTH or v == values[-1]:
            out.append(v)
            last_n = n
    return out


# ----------------------------------------------------------------------------------------------
# L1 footprint without building tilings


@dataclass(frozen=True)
class _ArgSpec:
    name: str
    kind: ArgKind
    item: int
    extra: int
    db: bool
    const: int                  # product of the extents that never change
    varying: tuple              # (space, kind): extents that depend on the choice
    resident: frozenset         # spaces it is always resident over
    next_db: bool = False       # stays double buffered under single buffering (KER_ARG_TILE_NEXTDB)


class Footprint:
    """L1 bytes of a choice (equal to :func:`~autotiler.tiler.tiling.build_tiling`'s)."""

    def __init__(self, kg: KernelGeom):
        self.kg = kg
        self.spaces = {s.space: s for s in kg.spaces}
        self.specs = [self._spec(g) for g in kg.args]
        self._tile_cache: dict = {}
        self._arg_memo: dict = {}

    def _spec(self, g: ArgGeom) -> _ArgSpec:
        always = g.kind in (ArgKind.BUFFER, ArgKind.SCRATCH)
        resident = frozenset(r.space for r in g.refs if r.resident or always or g.kind == ArgKind.DYNTILE)
        const, varying = 1, []
        for r in g.refs:
            if r.space in resident:
                const *= r.dim
            else:
                varying.append((r.space, "ref"))
        if g.tile is None:
            const *= g.w * g.h
        else:
            const *= g.w if g.tile.horizontal else g.h
            if always:
                const *= g.tile.dim
            else:
                varying.append((g.tile.space, "dyn" if g.kind == ArgKind.DYNTILE else "tile"))
        return _ArgSpec(g.name, g.kind, g.item, (g.decl.bottom + g.decl.top) * g.item,
                        g.decl.has(O.O_DB), const, tuple(varying), resident, g.next_db)

    def count(self, space, choice: Choice) -> int:
        s = self.spaces[space]
        if choice.promoted or (s.kind == SpaceKind.TILED and not s.dim):
            return 1
        if s.kind in (SpaceKind.TILED, SpaceKind.PARAMETRIC):
            v = s.dim if s.one_tile else choice.size(space, s.dim)
            return -(-s.dim // v)
        return s.dim

    def _tile_extent(self, name: str, k: int, n: int) -> int:
        key = (name, k, n)
        hit = self._tile_cache.get(key)
        if hit is None:
            t = self.kg.arg(name).tile
            classes = {0, n - 1, min(1, n - 1), min(2, n - 1)}
            hit = self._tile_cache[key] = max(tile_span(t, k, n, i).length for i in classes)
        return hit

    def arg_bytes(self, spec: _ArgSpec, choice: Choice) -> int:
        extent, moves = spec.const, False
        partial = {sp for name, sp in choice.partial if name == spec.name}
        for space, what in spec.varying:
            s = self.spaces[space]
            n = self.count(space, choice)
            if what == "dyn":
                extent *= n
                continue
            if what == "tile" and n == 1:  # one tile (also promoted): its lines, as tiling._tile_view
                extent *= self._tile_extent(spec.name, s.dim, 1)
                continue
            if choice.promoted or space in partial:
                extent *= s.dim if what == "ref" else self.kg.arg(spec.name).tile.dim
                continue
            if what == "ref":
                if n == 1:
                    extent *= s.dim
                elif s.kind == SpaceKind.PARAMETRIC:
                    extent *= choice.size(space, s.dim)
            else:
                k = choice.size(space, s.dim) if n > 1 else s.dim
                extent *= self._tile_extent(spec.name, k, n)
            moves = moves or n > 1
        slot = align(extent * spec.item + spec.extra)
        movable = spec.kind in (ArgKind.DATA, ArgKind.ONETILE)
        single = choice.single_buffer and not spec.next_db
        nbuf = 2 if spec.db and movable and moves and not single and not choice.promoted else 1
        return slot * nbuf

    def l1(self, choice: Choice) -> int:
        """Sum of :meth:`arg_bytes`, each computed once per distinct sizes of the spaces it
        depends on."""
        sizes = dict(choice.sizes)
        memo = self._arg_memo
        total = 0
        partial = choice.partial
        for i, spec in enumerate(self.specs):
            # (without partial promotions, the sizes alone: the common case, kept cheap)
            varying = tuple([(sizes.get(sp), (spec.name, sp) in partial) for sp, _ in spec.varying]) if partial \
                else tuple([sizes.get(sp) for sp, _ in spec.varying])
            key = (i, choice.promoted, choice.single_buffer, varying)
            b = memo.get(key)
            if b is None:
                b = memo[key] = self.arg_bytes(spec, choice)
            total += b
        return total


# ----------------------------------------------------------------------------------------------
# Choices


def partial_candidates(kg: KernelGeom) -> list:
    """(argument, space) pairs worth promoting individually: an input moved along its innermost
    non-tiled space while a loop that does not concern it runs between that space and the next
    space that moves it, so that every iteration of that loop re-reads it."""
    return list(refetching_loops(kg))


def refetching_loops(kg: KernelGeom) -> dict:
    """{(argument, space): the loops that may iterate and make it re-read} of the pairs of
    :func:`partial_candidates`: the promotion saves traffic only when one of them does."""
    order = [s.space for s in kg.spaces]
    out = {}
    for g in kg.args:
        if g.kind != ArgKind.DATA or not g.reads or g.writes or g.decl.has(O.O_NPBUFF):
            continue
        mine = [r.space for r in g.refs if not r.resident] + ([g.tile.space] if g.tile else [])
        if not mine:
            continue
        inner = max(mine, key=order.index)
        if g.tile is not None and inner == g.tile.space:
            continue
        rest = [sp for sp in mine if sp != inner]
        new_level = max(rest, key=order.index) if rest else None
        lo = order.index(new_level) if new_level is not None else -1
        between = tuple(sp for sp in order[lo + 1: order.index(inner)]
                        if sp not in mine and _may_iterate(kg.space(sp)))
        if between:
            out[(g.name, inner)] = between
    return out


def _may_iterate(s: SpaceGeom) -> bool:
    return bool(s.dim > 1 if s.kind != SpaceKind.TILED else s.dim)


def choosable(kg: KernelGeom) -> list:
    return [s for s in kg.spaces if s.kind in (SpaceKind.TILED, SpaceKind.PARAMETRIC)
            and (s.dim if s.kind == SpaceKind.TILED else not s.one_tile)]


def grid(kg: KernelGeom, constrained: bool = True, relaxed: bool = False, thinned: bool = True,
         every: bool = False) -> tuple:
    """(spaces, candidate lists) of the choosable spaces; a list is empty when a space has no
    legal size (``every``: all legal sizes, unthinned)."""
    spaces = choosable(kg)
    lists = []
    for s in spaces:
        values = space_values(kg, s, constrained, relaxed, every) or []
        lists.append(thin(values, s.dim) if thinned else values)
    return spaces, lists


def choices(kg: KernelGeom, lists: list, spaces: list, partial=frozenset(), single_buffer: bool = False):
    """Every choice of the product of ``lists`` (largest sizes first)."""
    for values in product(*lists):
        yield Choice(tuple((s.space, v) for s, v in zip(spaces, values)), False, frozenset(partial), single_buffer)


def promoted_choice(kg: KernelGeom) -> Choice:
    return Choice(tuple((s.space, s.dim) for s in choosable(kg)), True)


def smallest_choice(kg: KernelGeom, constrained: bool = True) -> Optional[Choice]:
    """The smallest legal size of every space (None when a space has none); a parametric
    space's chunk need not be a multiple of its PrefDiv (a preference)."""
    spaces, lists = grid(kg, constrained, relaxed=True, thinned=False)
    if any(not values for values in lists):
        return None
    return Choice(tuple((s.space, values[-1]) for s, values in zip(spaces, lists)))


def total_iterations(fp: Footprint, choice: Choice) -> int:
    return prod(fp.count(s.space, choice) for s in fp.kg.spaces)


__all__ = ["meets_constraints", "tile_steps", "chunk_sizes", "space_values", "thin", "Footprint",
           "partial_candidates", "refetching_loops", "choosable", "grid", "choices", "promoted_choice", "smallest_choice",
           "total_iterations"]
