"""Choosing a tiling: objectives over the tiler's candidates, evaluated on their schedules.

Objectives (``OBJECTIVES``) order the feasible tilings. The default, ``"time"``, minimises the
cycles the cost model predicts for the tiling's schedule (the simulator's rules), then traffic,
then L1 and L2 use; ``"original"`` takes the largest tiles that fit, outer spaces first (the
guide's tilings), several tiled spaces growing together (:mod:`autotiler.tiler.original`); ``"traffic"`` minimises L2<->L1 bytes; ``"naive"`` (smallest tiles, single
buffering), ``"max_l1"`` (most L1 used: a naive baseline, not DORY's rule) and ``"dory"`` (DORY's
conv tiler's rule, :mod:`autotiler.tiler.dory`) are baselines.

Search. The cheap objectives look at every choice of the tiler's (thinned) grid that fits L1.
The time objective cannot afford an exact prediction per choice (it needs the choice's
schedule): it ranks every choice by a quick estimate read off the tiling
(:mod:`autotiler.schedule.estimate`) and predicts exactly the ``EXACT_TOP`` best and the
original's choice; on grids too large to estimate in full it estimates the thinned grid and
then walks to better neighbours in the full one. The estimates share their work across the
choices of a kernel: argument tilings, transfer figures and call costs are computed once per
distinct input (:func:`~autotiler.tiler.tiling.arg_tilings`, the estimator's memos), which gives
the same numbers as computing each choice afresh (``tests/test_tiler_memo.py``). A third L2
staging slot for L3 arguments is taken only for a predicted gain of at
least ``TRIPLE_MIN_GAIN``, because L2 is shared. Results are cached per distinct kernel shape,
so a model repeating a layer tiles it once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import product
from math import prod
from typing import Callable, Optional

from .errors import ModelError, TilingError
from .model.cost import parse_cost
from .model.devices import l3_device
from .model.ir import SpaceKind, UserKernelDecl
from .model.session import paused_gc
from .schedule.build import DEFAULT_NAMING, Naming, Unsupported, build_schedule, transfer_shape
from .schedule.cost import Prediction, predict
from .schedule.estimate import Estimator
from .schedule.verify import verify
from .tiler.dory import dory_key
from .tiler.geometry import KernelGeom, kernel_geometry
from .tiler.original import RESERVE, grow, grown_spaces
from .tiler.search import (
    Footprint,
    choices,
    grid,
    partial_candidates,
    promoted_choice,
    refetching_loops,
    smallest_choice,
    total_iterations,
)
from .tiler.tiling import Choice, KernelTiling, arg_tilings, build_tiling, l2_fits, staging_bytes, with_stages

TRIPLE_MIN_GAIN = 0.005   # a third L2 staging slot must save at least 0.5% of the predicted time
RESTAGED_CANDIDATES = 4   # tilings whose L2 staging depths the time objective varies
ESTIMATE_ALL = 300       # the time objective estimates every choice of grids this small; of larger ones ...
COARSE_POINTS = 125      # ... about this many tile-count combinations in the time objective's coarse grid ...
COARSE_SMALL = 3         # ... every count up to this one, per space ...
EVERY_MAX_SPACES = 2     # ... and every count's balanced size in grids of at most this many spaces
REFINE_SEEDS = 4         # best estimates (of distinct tile-count cells) whose neighbourhoods are estimated next ...
REFINE_ROUNDS = 16       # ... for at most this many rounds
EXACT_TOP = 3            # candidates the time objective predicts exactly, best estimates first ...
EXACT_TIE = 0.01         # ... and those estimated within 1% of the best (the estimate cannot tell them apart) ...
EXACT_TIE_MAX = 8        # ... up to this many; then those estimated below the best prediction so far ...
EXACT_MAX = 12           # ... up to this many
FULL_GRID = 20_000       # the cheap objectives look at every candidate of grids this small, else at the thinned grid
WALK_RADIUS = 2          # neighbours tried on each side, per space, when refining a thinned-grid result


@dataclass(frozen=True)
class Objective:
    """How to choose among feasible tilings: ``key(tiling, options)``, smallest is best.
    ``single_buffer``/``promote``/``partial`` restrict the candidates (None: as the options say);
    ``promote_only``: when everything fits, promotion is the only candidate."""

    key: Callable
    doc: str
    single_buffer: bool = False
    promote: Optional[bool] = None
    partial: Optional[bool] = None
    promote_only: bool = True
    timed: bool = False
    exhaustive: bool = False    # (timed) predict every candidate exactly instead of searching


@dataclass(frozen=True)
class SolveOptions:
    budget: int
    promote: bool = True            # AT_KERNEL_BUFFER_PROMOTE
    partial_promote: bool = True    # AT_KERNEL_PARTIAL_BUFFER_PROMOTE
    objective: str = "time"
    platform: object = None
    libs: object = None
    l2_budget: Optional[int] = None
    naming: Naming = Naming()


def _counts(t: KernelTiling) -> tuple:
    return tuple(lp.count for lp in t.loops)


OBJECTIVES: dict = {
    "time": Objective(lambda t, o: (t.predicted.cycles, t.traffic, t.l1_bytes, t.l2_bytes, t.iterations),
                      "minimise predicted cycles (the simulator's cost model), then traffic, then L1 use; "
                      "a promoted (all-in-L1) tiling competes with pipelined ones", promote_only=False, timed=True),
    "time_exhaustive": Objective(lambda t, o: (t.predicted.cycles, t.traffic, t.l1_bytes, t.l2_bytes, t.iterations),
                                 "as 'time', but every candidate of the full grid is predicted exactly (slow: the "
                                 "reference the time objective's search is measured against)", promote_only=False,
                                 timed=True, exhaustive=True),
    "original": Objective(lambda t, o: (_counts(t), -t.l1_bytes, t.traffic, t.l2_bytes),
                          "the original's rule: the largest tiles that fit, outer spaces first (the guide's tilings); "
                          "several tiled spaces grow together, smallest tile first (the SDK's MatMult)",
                          partial=False),
    "traffic": Objective(lambda t, o: (t.traffic, t.iterations, -t.l1_bytes, t.l2_bytes),
                         "minimise L2<->L1 traffic, then the number of iterations, then prefer larger tiles"),
    "naive": Objective(lambda t, o: (tuple(-c for c in _counts(t)), t.l1_bytes, t.l2_bytes),
                       "baseline: smallest legal tiles, single buffering, no promotion", single_buffer=True,
                       promote=False, partial=False),
    "max_l1": Objective(lambda t, o: (-t.l1_bytes, t.iterations, t.l2_bytes),
                        "maximise L1 use, then fewest iterations (a naive baseline, not DORY's rule: see 'dory')",
                        partial=False),
    "dory": Objective(dory_key, "DORY's conv tiler rule (tiler_conv2d.py): input features whole, DORY's GAP8 L1 "
                      "(min(budget, 36700 B)), double buffering, max of its L1 bytes + shape bonuses; not conv-like "
                      "kernels: maximise L1 use", partial=False, promote_only=False),
}


_BUILT_IN = dict(OBJECTIVES)   # whose keys read no L2 budget


def register_objective(name: str, key: Callable, doc: str = "", **restrictions) -> None:
    """Add an objective: ``key(KernelTiling, SolveOptions)`` returns a sort key, smallest is best."""
    OBJECTIVES[name] = Objective(key, doc, **restrictions)


# ----------------------------------------------------------------------------------------------
# Evaluating one choice


class _Evaluator:
    """Builds, estimates, schedules and predicts choices of one kernel, once each."""

    def __init__(self, kg: KernelGeom, options: SolveOptions, objective: Objective):
        self.kg, self.o, self.obj = kg, options, objective
        self.fp = Footprint(kg)
        self.refetch = refetching_loops(kg)   # (argument, space) -> loops a partial promotion saves re-reads of
        self.built: dict = {}
        self.done: dict = {}
        self.finals: dict = {}            # (choice, L2 staging depths) -> finished tiling (finished_as)
        self.unsupported: Optional[Unsupported] = None
        self.evaluated = 0
        self.estimates: dict = {}
        self.memo: dict = {}        # build_tiling's parts shared by the choices
        self.transfer_shapes: dict = {}   # id(dims) -> (dims, shape or Unsupported)
        self.expressible: dict = {}       # id(argument tiling) -> it, when its transfers can be expressed
        self.estimator = Estimator(kg.kernel, options.libs or {}, options.platform) if objective.timed else None
        self.staged: dict = {}            # id(argument tiling) -> (it, its least L2 staging bytes)

    def fits(self, c: Choice) -> bool:
        return self.fp.l1(c) <= self.o.budget

    def candidate(self, c: Choice, stages: Optional[dict] = None) -> Optional[KernelTiling]:
        """The tiling of a choice (staging depth default, or ``stages``) when it fits L1 and L2
        and its transfers can be expressed; not yet scheduled."""
        key = (c, tuple(sorted((stages or {}).items())))
        if key in self.built:
            return self.built[key]
        t = build_tiling(self.kg, c, self.o.budget, memo=self.memo)
        if stages:
            t = with_stages(t, stages)
        elif not l2_fits(t, self.o.l2_budget):
            t = with_stages(t, {a.name: 1 for a in t.args if a.l3})
        out = None
        if t.l1_bytes <= self.o.budget and l2_fits(t, self.o.l2_budget):
            try:
                for a in t.args:   # every transfer can be expressed
                    if a.reads or a.writes:
                        self.shape(a)
                out = t
            except Unsupported as err:
                self.unsupported = self.unsupported or err
        self.built[key] = out
        return out

    def shape(self, a) -> object:
        """transfer_shape(a), once per distinct dimensions (shared through ``memo``)."""
        hit = self.transfer_shapes.get(id(a.dims))
        if hit is None:
            try:
                shape = transfer_shape(a)
            except Unsupported as err:
                shape = err
            hit = self.transfer_shapes[id(a.dims)] = (a.dims, shape)  # the dims keep their id
        if isinstance(hit[1], Unsupported):
            raise hit[1]
        return hit[1]

    def tiling(self, c: Choice, stages: Optional[dict] = None) -> Optional[KernelTiling]:
        """The candidate of a choice with its schedule and prediction; None when it does not fit
        or cannot be expressed."""
        key = (c, tuple(sorted((stages or {}).items())))
        if key in self.done:
            return self.done[key]
        t = self.candidate(c, stages)
        out = None
        if t is not None:
            out = self.finished_as(c, t)
        self.done[key] = out
        return out

    def finished_as(self, c: Choice, t: KernelTiling) -> Optional[KernelTiling]:
        """``finish(t)``, once per distinct tiling: a choice's tiling is decided by its L2
        staging depths, and asking for other depths often gives the same ones (depths capped by
        the instances, the default depth asked again by the re-staging). A repeat counts as
        predicted again, as it was before it was shared (the count is reported)."""
        key = (c, tuple([a.stage for a in t.args if a.l3]))
        if key in self.finals:
            out = self.finals[key]
            if out is not None and self.o.platform is not None:
                self.evaluated += 1
            return out
        out = None
        try:
            out = self.finish(t)
        except Unsupported as err:
            self.unsupported = self.unsupported or err
        self.finals[key] = out
        return out

    def finish(self, t: KernelTiling) -> KernelTiling:
        schedule = build_schedule(t, self.o.libs or {}, self.o.naming, self.o.platform)
        predicted = None
        if self.o.platform is not None:
            predicted = predict(schedule, self.o.platform, [c.name for c in t.kernel.cargs])
            self.evaluated += 1
        return replace(t, schedule=schedule, predicted=predicted)

    def estimate(self, c: Choice) -> Optional[int]:
        """The quick estimate of a choice's cycles (None when it does not fit or cannot be
        expressed), read off :func:`arg_tilings` (the argument tilings without their L1 layout
        and L2 staging slots, which the estimate does not read): the same number as off the
        built candidate, which fits or not as :meth:`candidate` decides (L1, then the L2
        staging at one slot, then the transfers' shapes; ``tests/test_tiler_memo.py``)."""
        if c in self.estimates:
            return self.estimates[c]
        e = None
        loops, args, l1 = arg_tilings(self.kg, c, self.memo)
        if l1 <= self.o.budget and self.stages_fit(args):
            try:
                for a in args:
                    if id(a) not in self.expressible:   # (args from the memo: their ids are theirs)
                        if a.reads or a.writes:
                            self.shape(a)
                        self.expressible[id(a)] = a
                e = self.estimator.parts(self.kg.kernel, loops, args)
            except Unsupported as err:
                self.unsupported = self.unsupported or err
        self.estimates[c] = e
        return e

    def stages_fit(self, args: tuple) -> bool:
        """Whether the L3 arguments' L2 staging fits the L2 budget at one slot each, the least
        :meth:`candidate` falls back to (so: whether the built candidate fits L2)."""
        if self.o.l2_budget is None:
            return True
        need = 0
        for a in args:
            if a.l3:
                hit = self.staged.get(id(a))
                if hit is None:   # (args from the memo: their ids are theirs; kept alive with the entry)
                    hit = self.staged[id(a)] = (a, staging_bytes(a, 1))
                need += hit[1]
        return need <= self.o.l2_budget

    @property
    def estimated(self) -> int:
        return sum(e is not None for e in self.estimates.values())

    def key(self, t: KernelTiling) -> tuple:
        return self.obj.key(t, self.o)


# ----------------------------------------------------------------------------------------------
# Search


def _variants(kg: KernelGeom, options: SolveOptions, objective: Objective) -> list:
    allowed = options.partial_promote if objective.partial is None else objective.partial
    cands = partial_candidates(kg) if allowed else []
    return [frozenset()] + ([frozenset(cands)] if cands else [])


def _feasible(ev: _Evaluator, spaces: list, lists: list, variants: list, single: bool) -> list:
    out = []
    for part in variants:
        for c in choices(ev.kg, lists, spaces, part, single):
            if ev.fits(c):
                out.append(c)
    return out


def _distinct(cs: list, spaces: list, refetch: Optional[dict] = None) -> list:
    """``cs`` without repeats, each with the partial promotions that cannot save traffic left
    out: along a space it cuts into one chunk (an argument resident along it is the same tiling
    as one fetched per chunk: same transfers, same L1), or when every loop that would re-read
    the argument (``refetch``, when given: :func:`~autotiler.tiler.search.refetching_loops`)
    runs once (the same transfers as without it, in more L1). Predicting both would waste the
    exact predictions on duplicates."""
    dims = {s.space: s.dim for s in spaces}
    out, seen = [], set()
    for c in cs:
        if c.partial:
            sizes = dict(c.sizes)
            keep = frozenset(p for p in c.partial if (p[1] not in sizes or sizes[p[1]] < dims[p[1]])
                             and (refetch is None
                                  or any(sp not in sizes or sizes[sp] < dims[sp] for sp in refetch.get(p, ()))))
            if keep != c.partial:
                c = replace(c, partial=keep)
        if c not in seen:
            seen.add(c)
            out.append(c)
    return out


def _neighbours(c: Choice, spaces: list, lists: list) -> list:
    """Choices next to ``c`` in the grid ``lists``: every combination of one step either way in
    each space, and up to WALK_RADIUS steps along one space."""
    sizes = dict(c.sizes)
    around = []
    for s, values in zip(spaces, lists):
        i = values.index(sizes[s.space]) if sizes[s.space] in values else None
        around.append([] if i is None else [j for j in range(i - WALK_RADIUS, i + WALK_RADIUS + 1)
                                             if 0 <= j < len(values)])
    out = []
    here = tuple(sizes[s.space] for s in spaces)
    for combo in product(*([values[j] for j in js] or [sizes[s.space]] for s, values, js in
                           zip(spaces, lists, around))):
        moved = [k for k, (a, b) in enumerate(zip(combo, here)) if a != b]
        if not moved:
            continue
        if len(moved) > 1 and any(abs(lists[k].index(combo[k]) - lists[k].index(here[k])) > 1 for k in moved):
            continue
        out.append(replace(c, sizes=tuple((sp.space, v) for sp, v in zip(spaces, combo))))
    return out


def _search_time(ev: _Evaluator, spaces: list, lists: list, full: list, every: list, variants: list,
                 single: bool) -> list:
    """Tilings the time objective compares. Every feasible choice of the grid (of a coarse grid
    when large: per space, the ends of the size ranges of geometrically spread tile counts) is
    estimated (once per distinct tiling: :func:`_distinct`); the neighbourhoods of the
    ``REFINE_SEEDS`` best estimates in the full grid are estimated in turn until the best
    estimates stop changing; then the ``EXACT_TOP`` best estimates (and any within
    ``EXACT_TIE`` of the best, up to ``EXACT_TIE_MAX``), the next ones while estimated below
    the best prediction so far (up to ``EXACT_MAX``) and the original's choice are predicted
    exactly."""
    small = prod(len(v) for v in full) * len(variants) <= ESTIMATE_ALL
    dims, cores = [s.dim for s in spaces], ev.o.platform.cores
    if small:
        ranked = _ranked(ev, _distinct(_feasible(ev, spaces, full, variants, single), spaces, ev.refetch))
    else:  # the variants promoting inputs on the kept counts only (their seeds are refined as well)
        fitting = _fitting(ev, spaces, full, single)
        ranked = _ranked(ev, _distinct(_feasible(ev, spaces, _coarse(fitting, dims, cores), variants[:1], single)
                                       + _feasible(ev, spaces, _coarse(fitting, dims, cores, every=False),
                                                   variants[1:], single), spaces, ev.refetch))
    for _ in range(REFINE_ROUNDS):
        seeds = _seeds(ranked, spaces)
        fresh = {n for c in seeds for n in _distinct(_neighbours(c, spaces, full), spaces, ev.refetch)
                 if n not in ev.estimates and ev.fits(n)}
        if not fresh:
            break
        ranked = sorted(ranked + _ranked(ev, sorted(fresh, key=str)), key=lambda x: x[0])
        if _seeds(ranked, spaces) == seeds:
            break
    near = [c for i, (e, c) in enumerate(ranked)
            if i < EXACT_TOP or (i < EXACT_TIE_MAX and e <= ranked[0][0] * (1 + EXACT_TIE))]
    scored = [t for c in near if (t := ev.tiling(c)) is not None]
    scored += _below_best(ev, ranked, len(near), scored)
    for part in variants:  # the original's choice, so that time is never predicted worse than it
        seed = _largest_first(ev, spaces, every, [part])
        if seed is not None:
            scored.append(seed)
    for _, c in ranked[len(near):]:  # every top candidate failed to schedule: take the next ones
        if scored:
            break
        t = ev.tiling(c)
        if t is not None:
            scored.append(t)
    return scored


def _fitting(ev: _Evaluator, spaces: list, full: list, single: bool) -> list:
    """Per space, the sizes that fit L1 with every other space at its smallest size (the full
    lists when none does): the coarse grid spreads its counts over these only, so that under a
    tight budget its points fall on the small tiles that fit rather than on large ones that do
    not (a size that does not fit with the others at their smallest seldom fits with larger
    ones; the refinement still walks the full grid)."""
    smallest = {s.space: values[-1] for s, values in zip(spaces, full)}
    out = []
    for s, values in zip(spaces, full):
        kept = [v for v in values if ev.fits(Choice(tuple((x.space, v if x.space == s.space else smallest[x.space])
                                                          for x in spaces), single_buffer=single))]
        out.append(kept or values)
    return out


def _below_best(ev: _Evaluator, ranked: list, start: int, scored: list) -> list:
    """The next estimates, in order, while they are below the best exact prediction so far (up
    to EXACT_MAX in all): the estimate leaves out the pipeline's bubbles (an iteration waits for
    the larger of its transfers and its compute, not for their totals' larger), so it is about a
    lower bound, and a candidate estimated below the best prediction may still beat it."""
    best = min((t.predicted.cycles for t in scored), default=None)
    out = []
    for e, c in ranked[start:EXACT_MAX]:
        if best is None or e >= best:
            break
        t = ev.tiling(c)
        if t is not None:
            out.append(t)
            best = min(best, t.predicted.cycles)
    return out


def _seeds(ranked: list, spaces: list) -> list:
    """The best estimated choice of each of the REFINE_SEEDS best cells (tile-count
    combinations): neighbourhoods of distinct basins, not of one plateau."""
    seeds, cells = [], set()
    for _, c in ranked:
        cell = (tuple(-(-s.dim // c.size(s.space, s.dim)) for s in spaces), c.partial)
        if cell not in cells:
            cells.add(cell)
            seeds.append(c)
            if len(seeds) == REFINE_SEEDS:
                break
    return seeds


def _coarse(full: list, dims: list, cores: int, every: bool = True) -> list:
    """Per space, the smallest size of each tile (chunk) count (the most even tiles: the
    refinement walks to the larger sizes of a count when they are better), for the counts
    up to COARSE_SMALL and then geometrically spread ones, about COARSE_POINTS ** (1/spaces)
    counts per space; and, for every count (for the kept ones only in grids of more than
    EVERY_MAX_SPACES spaces), its largest size that is a multiple of the core count (the guide:
    such tiles keep the cores of a parallel kernel balanced)."""
    per_space = max(COARSE_SMALL, round(COARSE_POINTS ** (1 / max(1, len(full)))))
    out = []
    for values, dim in zip(full, dims):
        by_count: dict = {}
        for v in values:
            by_count.setdefault(-(-dim // v), []).append(v)
        counts = sorted(by_count)
        if len(counts) > per_space:
            keep, lo, hi = set(counts[:COARSE_SMALL]), counts[COARSE_SMALL], counts[-1]
            steps = per_space - COARSE_SMALL
            for j in range(steps):
                target = lo * (hi / lo) ** (j / max(1, steps - 1))
                keep.add(min(counts, key=lambda n: abs(n - target)))
            counts = sorted(keep)
        chosen = {by_count[n][-1] for n in counts}
        # balanced stepping stones for the walk, which steps through a fine grid (not needed
        # where every size is a multiple of the core count: the walk steps on those already;
        # only for the kept counts in grids of more spaces, whose product they would swell)
        fine = any(v % cores for v in values)
        every_count = every and fine and len(full) <= EVERY_MAX_SPACES
        multiples = by_count.values() if every_count else [by_count[n] for n in counts]
        chosen |= {next(v for v in vs if v % cores == 0) for vs in multiples if any(v % cores == 0 for v in vs)}
        out.append(sorted(chosen, reverse=True))
    return out


def _ranked(ev: _Evaluator, feasible: list) -> list:
    """(estimate, choice) of the choices that can be built, best estimate first."""
    out = [(e, c) for c in feasible if (e := ev.estimate(c)) is not None]
    out.sort(key=lambda x: x[0])
    return out


def _stage_variants(t: KernelTiling) -> list:
    """Double (2) and triple (3) L2 staging per moving L3 argument."""
    moving = [a for a in t.args if a.l3 and a.instances > 1 and not a.whole_stage]
    if not moving:
        return []
    if 2 ** len(moving) <= 16:
        combos = [{}]
        for a in moving:
            combos = [{**c, a.name: s} for c in combos for s in (2, 3)]
    else:
        combos = [{a.name: s for a in moving} for s in (2, 3)]
    return [{a.name: combo.get(a.name, 1) for a in t.args if a.l3} for combo in combos]


def _prefer_less_staging(best: KernelTiling, scored: list, ev: _Evaluator) -> KernelTiling:
    """Triple L2 buffering costs L2 that the application (or a graph) shares: take it only when
    the model shows a real gain over the best tiling staging at most two slots per argument."""
    if all(a.stage <= 2 for a in best.args):
        return best
    double = [t for t in scored if all(a.stage <= 2 for a in t.args)]
    if not double:
        return best
    alt = min(double, key=ev.key)
    return alt if alt.predicted.cycles <= best.predicted.cycles * (1 + TRIPLE_MIN_GAIN) else best


_CACHE: dict = {}


def tiling_key(uk: UserKernelDecl, options: SolveOptions):
    """Everything that decides the tiling :func:`solve` gives ``uk`` but its names and source
    lines: kernels of equal keys get the same tiling, tiled once. The L2 budget
    only bounds the L2 staging of L3 arguments: without any, it decides nothing (unless it is
    negative, or a registered objective's key may read it), so a kernel tiled at one L2 budget
    is not tiled again at another."""
    libs = options.libs or {}
    libs = tuple((n, libs[n]) for n in sorted({c.name for c in uk.calls}) if n in libs)
    if (options.l2_budget is not None and options.l2_budget >= 0 and not any(a.in_l3 for a in uk.kerargs)
            and OBJECTIVES.get(options.objective) is _BUILT_IN.get(options.objective)):
        options = replace(options, l2_budget=None)
    return (replace(uk, name="", where="", group=None), libs, replace(options, libs=None, platform=None),
            id(options.platform))


def clear_cache() -> None:
    """Forget every tiling :func:`solve` made (and the parsed Cost= expressions): the next
    generation is as cold as a fresh process's (what a benchmark of generation time measures)."""
    _CACHE.clear()
    parse_cost.cache_clear()


def is_solved(key) -> bool:
    """Whether :func:`solve` answers a kernel of :func:`tiling_key` ``key`` from its cache."""
    return key in _CACHE


def solve(uk: UserKernelDecl, options: SolveOptions) -> KernelTiling:
    """Choose the tiling of ``uk``; TilingError when none fits."""
    if options.objective not in OBJECTIVES:
        raise ModelError(f"unknown tiling objective '{options.objective}'", where=uk.where, kernel=uk.name,
                         hint=f"objectives: {', '.join(sorted(OBJECTIVES))}")
    key = tiling_key(uk, options)
    hit = _CACHE.get(key)
    if hit is not None:
        return _rename(hit, uk, options)
    with paused_gc():
        t = _solve(uk, options)
    _CACHE[key] = t
    if len(_CACHE) > 4096:
        _CACHE.pop(next(iter(_CACHE)))
    return t


def _rename(t: KernelTiling, uk: UserKernelDecl, options: SolveOptions) -> KernelTiling:
    """A cached tiling for a kernel that differs only in its name."""
    kg = replace(t.geom, kernel=uk)
    t = replace(t, geom=kg)
    return replace(t, schedule=build_schedule(t, options.libs or {}, options.naming, options.platform))


def _solve(uk: UserKernelDecl, options: SolveOptions) -> KernelTiling:
    kg, ev, scored = _candidates(uk, options)
    objective = ev.obj
    if len(scored) == 1 and scored[0].promoted and objective.promote_only:
        return _done(scored[0], options, 1, 1)
    if not scored:
        return _no_solution(uk, kg, ev, options)
    best = min(scored, key=ev.key)
    if objective.timed:
        top = sorted(scored, key=ev.key)[:RESTAGED_CANDIDATES]
        for t in top:
            for stages in _stage_variants(t):
                v = ev.tiling(t.choice, stages)
                if v is not None:
                    scored.append(v)
        best = _prefer_less_staging(min(scored, key=ev.key), scored, ev)
    if objective.timed:
        return _done(best, options, max(len(scored), ev.estimated), ev.evaluated)
    return _done(best, options, len(scored), len(scored))


def candidates(uk: UserKernelDecl, options: SolveOptions) -> list:
    """The tilings the objective of ``options`` compares (scheduled and predicted)."""
    return _candidates(uk, options)[2]


def _candidates(uk: UserKernelDecl, options: SolveOptions) -> tuple:
    kg = kernel_geometry(uk)
    objective = OBJECTIVES[options.objective]
    if objective.timed and options.platform is None:
        raise ModelError("the time objective needs a platform", where=uk.where, kernel=uk.name)
    ev = _Evaluator(kg, options, objective)
    promote = options.promote if objective.promote is None else objective.promote
    scored: list = []
    if promote:
        whole = ev.tiling(promoted_choice(kg))
        if whole is not None:
            scored.append(whole)
            if objective.promote_only:
                return kg, ev, scored
    variants = _variants(kg, options, objective)
    tiled: list = []
    for relaxed in (False, True):  # PrefDiv is a preference: other chunks only when no multiple fits
        tiled = _search(ev, kg, options, objective, variants, relaxed)
        if tiled or not any(s.kind == SpaceKind.PARAMETRIC and s.pref_div > 1 for s in kg.spaces):
            break
    return kg, ev, scored + tiled


def _search(ev: _Evaluator, kg: KernelGeom, options: SolveOptions, objective: Objective, variants: list,
            relaxed: bool) -> list:
    """The objective's tilings of the grid (chunks multiples of PrefDiv, or any when ``relaxed``)."""
    single = objective.single_buffer
    spaces, lists = grid(kg, relaxed=relaxed)
    full = grid(kg, relaxed=relaxed, thinned=False)[1]
    if not all(lists):
        return []
    if objective.exhaustive:
        return [t for c in _feasible(ev, spaces, full, variants, single) if (t := ev.tiling(c)) is not None]
    if objective.timed or options.objective == "original":
        every = grid(kg, relaxed=relaxed, thinned=False, every=True)[1]  # the original's choice is any legal size
        if objective.timed:
            return _search_time(ev, spaces, lists, full, every, variants, single)
        return [t for t in (_largest_first(ev, spaces, every, variants),) if t is not None]
    if options.objective == "naive":
        smallest = Choice(tuple((sp.space, values[-1]) for sp, values in zip(spaces, full)), single_buffer=True)
        return [t for t in (ev.tiling(smallest),) if t is not None]
    use = full if prod(len(v) for v in full) * len(variants) <= FULL_GRID else lists
    return [t for c in _feasible(ev, spaces, use, variants, single) if (t := ev.tiling(c)) is not None]


def _largest_first(ev: _Evaluator, spaces: list, full: list, variants: list) -> Optional[KernelTiling]:
    """The original's rule: outer spaces first, each the largest size with which the rest (at
    their smallest) still fits; with two or more tiled spaces, those grow together instead
    (:mod:`autotiler.tiler.original`), at the place of the outermost, and when that growth
    finds nothing (the smallest tiles fit only within the original's reserve) they take the
    largest-first rule too. Trials are checked on the built candidate; only when the result
    cannot be scheduled are they checked on their schedules."""
    group = grown_spaces(ev.kg, spaces)
    for check in (ev.candidate, ev.tiling):
        for grown in ([group, []] if group else [[]]):
            t = _original_choice(ev, spaces, full, variants[0], grown, check)
            if t is not None:
                return t
    return None


def _original_choice(ev: _Evaluator, spaces: list, full: list, part: frozenset, grown: list,
                     check: Callable) -> Optional[KernelTiling]:
    """The tiling of the original's rule with ``grown`` (tiled spaces) decided by the growth."""
    sizes = {sp.space: values[-1] for sp, values in zip(spaces, full)}
    done = {s.space for s in grown}

    def choice(trial: dict) -> Choice:
        return Choice(tuple((x.space, trial[x.space]) for x in spaces), partial=part)

    def fits(trial: dict) -> bool:
        c = choice(trial)
        return ev.fits(c) and check(c) is not None

    def within_reserve(trial: dict) -> bool:   # the footprint alone: the growth tries every line
        return ev.fp.l1(choice({**sizes, **trial})) <= ev.o.budget - RESERVE

    for sp, values in zip(spaces, full):
        if sp.space in done:
            if grown and sp is grown[0]:   # the group, at the place of its outermost space
                steps = grow(ev.kg, grown, within_reserve)
                if steps is None or not fits({**sizes, **steps}):
                    return None
                sizes.update(steps)
            continue
        v = next((v for v in values if fits({**sizes, sp.space: v})), None)
        if v is not None:
            sizes[sp.space] = v
    return ev.tiling(_distinct([choice(sizes)], spaces)[0])


def _done(t: KernelTiling, options: SolveOptions, candidates: int, predicted: int) -> KernelTiling:
    verify(t.schedule, t)
    return replace(t, objective=options.objective, candidates=candidates, predicted_candidates=predicted)


def reschedule(t: KernelTiling, libs: dict, platform, naming: Naming = DEFAULT_NAMING) -> KernelTiling:
    """A (possibly modified, e.g. re-staged) tiling with its schedule rebuilt, verified and
    predicted again."""
    schedule = build_schedule(t, libs, naming, platform)
    verify(schedule, t)
    predicted = predict(schedule, platform, [c.name for c in t.kernel.cargs]) if platform is not None else None
    return replace(t, schedule=schedule, predicted=predicted)


def footprint_range(uk: UserKernelDecl) -> tuple:
    """(L1 bytes of the smallest legal tiling, of everything promoted) of a kernel."""
    kg = kernel_geometry(uk)
    fp = Footprint(kg)
    small = smallest_choice(kg)
    return (fp.l1(small) if small is not None else None), fp.l1(promoted_choice(kg))


# ----------------------------------------------------------------------------------------------
# No solution


def _no_solution(uk: UserKernelDecl, kg: KernelGeom, ev: _Evaluator, options: SolveOptions):
    fp = ev.fp
    smallest = smallest_choice(kg)
    if smallest is not None and fp.l1(smallest) <= options.budget:
        t = build_tiling(kg, smallest, options.budget)
        if not l2_fits(with_stages(t, {a.name: 1 for a in t.args if a.l3}), options.l2_budget):
            return _no_l2_solution(uk, with_stages(t, {a.name: 1 for a in t.args if a.l3}), options)
        if ev.unsupported is not None:
            return _fail(uk, f"no tiling that fits can be generated: {ev.unsupported.message}",
                         ev.unsupported.hint or "change the argument's KerArgSpace or tiling orientation",
                         ev.unsupported.arg)
    if smallest is None:
        free = smallest_choice(kg, constrained=False)
        msg = "no tile size satisfies the tile constraints (EVEN/ODD/ONEPREFTILE/preferred size) of its arguments"
        if free is not None:
            msg += f"; without them the smallest tiling would need {fp.l1(free)} bytes"
        return _fail(uk, msg, "relax OBJ_CONSTRAINTS_* or PreferedTileSize")
    t = build_tiling(kg, smallest, options.budget)
    dom = max(t.args, key=lambda a: a.l1_bytes)
    n = total_iterations(fp, smallest)
    msg = (f"no tiling fits the L1 budget of {options.budget} bytes: the smallest tiling "
           f"({n} iteration{'' if n == 1 else 's'}) needs {t.l1_bytes} bytes, of which argument "
           f"'{dom.name}' takes {dom.l1_bytes} ({_why(dom)})")
    hint = f"raise the L1 budget to at least {t.l1_bytes} bytes or shrink '{dom.name}'"
    free = smallest_choice(kg, constrained=False)
    if free is not None and fp.l1(free) < t.l1_bytes:
        msg += f"; without the tile constraints (EVEN/ODD/preferred size) it would need only {fp.l1(free)} bytes"
        hint += " or relax the tile constraints"
    return _fail(uk, msg, hint)


def _fail(uk: UserKernelDecl, msg: str, hint: str, arg: Optional[str] = None):
    raise TilingError(msg, where=uk.where, kernel=uk.name, arg=arg, hint=hint)


def _no_l2_solution(uk: UserKernelDecl, least: KernelTiling, options: SolveOptions):
    dom = max((a for a in least.args if a.l3), key=lambda a: a.l2_bytes)
    msg = (f"no tiling fits the L2 budget of {options.l2_budget} bytes for staging its L3 (O_L2DB) "
           f"arguments: the least needs {least.l2_bytes} bytes, of which "
           f"'{dom.name}' takes {dom.l2_bytes} ("
           + ("all of it: an in-out argument whose tiles are visited again is staged whole" if dom.whole_stage else
              f"{dom.stage} slot(s) of {dom.box_bytes_max} B per direction") + ")")
    hint = f"raise the L2 size (SetMemorySizes / --L2) to at least {least.l2_bytes} bytes or keep '{dom.name}' in L2"
    return _fail(uk, msg, hint, dom.name)


def _why(a) -> str:
    dims = " x ".join(str(d.max_extent) for d in a.dims)
    what = f"{a.role} box of {dims} items of {a.item} B"
    if a.decl.bottom or a.decl.top:
        what += f" plus {a.decl.bottom + a.decl.top} delay-line items"
    return f"{a.nbuf} x {what}" if a.nbuf > 1 else what



def naming(model) -> Naming:
    """The C names of the model's memory symbols, L3 device and loop variables."""
    dev = l3_device(model)
    sym = model.symbols
    return Naming(sym.l1, sym.l2, dev.family, dev.symbol, sym.old_style_names)


def solve_options(model, uk: UserKernelDecl) -> SolveOptions:
    """The options a kernel of ``model`` is tiled with (its own controls, the model's budgets)."""
    o = uk.options
    return SolveOptions(budget=model.l1_budget, promote=o.buffer_promote, partial_promote=o.partial_buffer_promote,
                        objective=o.objective, platform=model.platform,
                        libs=dict(model.libs), l2_budget=model.l2_budget, naming=naming(model))


__all__ = ["Objective", "SolveOptions", "OBJECTIVES", "register_objective", "solve", "tiling_key", "is_solved",
           "candidates",
           "reschedule", "footprint_range", "TRIPLE_MIN_GAIN", "Prediction", "naming", "solve_options"]
