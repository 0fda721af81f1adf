"""A quick estimate of a tiling's cycles, to rank candidates before the exact prediction.

:func:`~autotiler.schedule.cost.predict` is exact but needs the tiling's schedule (a few
milliseconds per candidate in Python); the time objective therefore ranks every candidate by
this estimate, which reads the tiling alone (a few tens of microseconds), and predicts exactly
only the best few. The estimate is a ranking heuristic, never a reported figure.

It sums, per loop class (first, middle, last iteration of every loop the quantity depends on,
weighted by how many iterations fall in the class), the basic-kernel ``Cost=`` of every call
(compiled once per basic kernel) and the DMA time of every transfer, with the simulator's
transfer rule, and returns the larger of the cores' work plus what cannot overlap it (the first
reads, the last writes, single-buffered transfers) and the busiest DMA channel's work (on a
duplex cluster DMA, its reads and its writes apart), plus the platform's cost of entering the
kernel (``kernel_call_cycles``, charged first as in the prediction).

Many choices of one kernel share most of this work, so one :class:`Estimator` keeps it: the
transfer figures per argument tiling, each call's cycles per distinct boxes of the arguments it
reads and loop counts, the value classes of each loop, the ``Cost=`` per set of bound values.
Each bound value depends on one loop's index at most, so the classes of a loop giving the same
values are merged (weights added): the same sum, fewer terms.

The scalar values a ``Cost=`` can read are those the schedule builder binds
(:meth:`~autotiler.schedule.build.Builder.binding`), computed here on numbers: tile sizes of the
iteration's class, tile counts, loop indices; C arguments count as 1 as in the prediction.
"""

from __future__ import annotations

import operator
from itertools import product
from typing import Callable, Optional

from ..constants import KernelArgSelect_T as S
from ..constants import KernelCallLocationT as L
from ..constants import KernelIteratorT
from ..model.devices import device_engine
from ..model.ir import (
    AT_IGNORE_ARG_BINDING,
    CArgBinding,
    CArgForm,
    ImmBinding,
    IterIndexBinding,
    KArgBinding,
    KerDimBinding,
    PredListBinding,
)
from ..tiler.tiling import ArgTiling, KernelTiling
from .build import transfer_shape
from .cost import DEFAULT_CALL_CYCLES, platform_cost, scaled_cycles
from .expr import Var, compile_expr, names

_OPS: dict = {"+": operator.add, "-": operator.sub, "*": operator.mul, "<<": operator.lshift, ">>": operator.rshift,
              "&": operator.and_, "|": operator.or_, "^": operator.xor,
              "/": lambda a, b: int(a / b) if b else 0, "%": lambda a, b: a - b * int(a / b) if b else 0,
              "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b), "<": lambda a, b: int(a < b),
              "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b), ">=": lambda a, b: int(a >= b)}


class Estimator:
    """Estimates the cycles of tilings of one kernel on one platform (Cost= compiled once)."""

    def __init__(self, kernel, libs: dict, platform):
        self.p = platform
        self.calls = []
        for call in kernel.calls:
            lib = libs[call.name]
            formals = [f.name for f in lib.cargs]
            cost: Optional[Callable] = None
            reads: tuple = ()
            expr = platform_cost(lib.cost, {n: Var(n) for n in formals}, platform, call.name)
            if expr is not None:
                cost = compile_expr(expr)
                used = names(expr)
                reads = tuple((n, b) for b, n in zip(call.bindings, formals)
                              if n in used and b is not AT_IGNORE_ARG_BINDING)
            self.calls.append((call, lib, reads, cost))
        self._cost_memo: list = [{} for _ in self.calls]   # per call: {bound values: cycles + fork}
        self._moves_memo: dict = {}     # id(argument tiling) -> figures of its transfers
        self._unit_moves: dict = {}     # ... of its dims, the loops it does not depend on counted once
        self._call_memo: dict = {}      # (call, ids of the boxes it reads, loop counts) -> cycles
        self._plans: dict = {}          # loop order -> per call, what its values depend on (_call_plan)
        self._space_memo: dict = {}     # (call, loop, count, ids of boxes) -> its value classes
        self._interned: dict = {}       # value classes -> one shared tuple (its id names it)
        self._sum_memo: dict = {}       # (call, multiplier, fixed values, ids of value classes) -> cycles
        self._lives: dict = {}

    # -- one tiling ----------------------------------------------------------------------------------
    def __call__(self, t: KernelTiling, shapes: Optional[dict] = None) -> int:
        """Estimated cycles of ``t``; ``shapes``: the transfer shape of each moving argument,
        when the caller has them already."""
        return self.parts(t.kernel, t.loops, t.args, shapes)

    def parts(self, kernel, loops: tuple, args: tuple, shapes: Optional[dict] = None) -> int:
        """Estimated cycles of a tiling of ``kernel`` given by its loops and argument tilings
        (their L1 offsets are not read: :func:`~autotiler.tiler.tiling.arg_tilings`)."""
        count = {lp.space: lp.count for lp in loops}
        order = [lp.space for lp in loops]
        core = self._compute(kernel, count, order, {a.name: a for a in args})
        reads = writes = udma = ends = 0
        for a in args:
            if a.reads or a.writes:
                core_a, ends_a, reads_a, writes_a, udma_a = self._moves_of(a, shapes, order, count)
                core += core_a
                ends += ends_a
                reads += reads_a
                writes += writes_a
                udma += udma_a
        # a duplex cluster DMA runs its reads and writes at once: the busier channel bounds
        cluster = max(reads, writes) if self.p.cluster_dma.duplex else reads + writes
        # entering the kernel comes before any transfer, as in the prediction
        return self.p.kernel_call_cycles + max(core + ends, cluster, udma)

    def compute(self, t: KernelTiling) -> int:
        """Cycles of every basic-kernel call and fork of ``t`` (what the cores must spend)."""
        return self._compute(t.kernel, {lp.space: lp.count for lp in t.loops}, [lp.space for lp in t.loops],
                             {a.name: a for a in t.args})

    def _compute(self, kernel, count: dict, order: list, args: dict) -> int:
        p = self.p
        core = 0
        key = tuple(order)
        lives = self._lives.get(key)
        if lives is None:
            lives = self._lives[key] = [_live(order, call.location) for call, _, _, _ in self.calls]
            self._plans[key] = [None] * len(self.calls)
        plans = self._plans[key]
        for k, (call, lib, reads, cost) in enumerate(self.calls):
            live = lives[k]
            fork = p.fork_cycles if lib.parallel else 0
            if cost is not None:
                plan = plans[k]
                if plan is None:
                    plan = plans[k] = self._call_plan(kernel, reads, live, args)
                core += self._call_cycles_of(k, plan, kernel, reads, cost, live, count, args, fork)
                continue
            deps = self._default_spaces(call, args)
            for idx, weight in _classes(live, count, deps):
                cost = scaled_cycles(self._default_cost(call, lib, idx, args), p, call.name)
                core += weight * (max(0, cost) + fork)
        return core

    def _call_cycles_of(self, k: int, plan: tuple, kernel, reads: tuple, cost, live: list, count: dict, args: dict,
                        fork: int) -> int:
        """Cycles of every call of ``self.calls[k]`` (with a ``Cost=``) over the loops: the sum
        over the first / middle / last iteration classes of the loops its bound values depend
        on, weighted by how many iterations each class stands for (the other loops only
        multiply). Each bound value depends on one loop's index at most, so the classes of a
        loop that give all of that loop's values the same numbers are counted once (their
        weights added). Computed once per distinct boxes of the arguments its values read and
        loop counts, and the sum once per distinct (values, weights) of each loop; the cost of
        a set of values once per kernel."""
        used, counted, consts, static, deps, others = plan
        dims = tuple([args[n].dims for n in used])
        key = (k, tuple([id(d) for d in dims]), tuple([count[sp] for sp in live]),
               tuple([count.get(sp, 1) for sp in counted]) if counted else None)
        hit = self._call_memo.get(key)
        if hit is not None:
            return hit[1]
        rest = 1
        for sp in others:
            rest *= count[sp]
        fixed = tuple([_value(kernel, reads[j][1], {}, count, args) if v is None else v for j, v in zip(consts, static)])
        per_space = tuple(self._space_classes(k, sp, js, owners, kernel, reads, count, args)
                          for sp, js, owners in deps)
        skey = (k, rest, fixed, tuple(map(id, per_space)))
        total = self._sum_memo.get(skey)
        if total is None:
            total = self._sum_memo[skey] = self._call_sum(k, reads, cost, fork, rest, consts, fixed, per_space, deps)
        # the dims are kept with the result: their ids stay theirs while the entry lives
        self._call_memo[key] = (dims, total)
        return total

    @staticmethod
    def _call_plan(kernel, reads: tuple, live: list, args: dict) -> tuple:
        """What a call's bound values depend on: the arguments they read, the loops whose counts
        they read, the bindings that depend on no live loop and their values when they read no
        argument (None when they do), then per live loop they depend on (loop, bindings,
        arguments those read), and the live loops they do not depend on."""
        used = tuple(sorted({b.arg for _, b in reads if isinstance(b, KArgBinding)}))
        counted = tuple(b.space if b.space is not None else args[b.arg].geom.tiled_space for _, b in reads
                        if isinstance(b, KArgBinding) and b.select in _COUNT_SELECTS)
        bspaces = [_binding_space(args, b) for _, b in reads]
        deps = [sp for sp in live if sp in bspaces]
        consts = tuple(j for j, sp in enumerate(bspaces) if sp not in deps)
        per = []
        for sp in deps:
            js = tuple(j for j, s in enumerate(bspaces) if s == sp)
            per.append((sp, js, tuple(reads[j][1].arg if isinstance(reads[j][1], KArgBinding) else None for j in js)))
        static = tuple(None if isinstance(reads[j][1], KArgBinding) else _value(kernel, reads[j][1], {}, {}, {})
                       for j in consts)
        return used, counted, consts, static, tuple(per), tuple(sp for sp in live if sp not in deps)

    def _call_sum(self, k: int, reads: tuple, cost, fork: int, rest: int, consts: tuple, fixed: tuple,
                  per_space: tuple, deps: tuple) -> int:
        memo = self._cost_memo[k]
        values: list = [None] * len(reads)
        for j, v in zip(consts, fixed):
            values[j] = v
        positions = [js for _, js, _ in deps]
        total = 0
        for combo in product(*per_space):
            weight = rest
            for (key, w), js in zip(combo, positions):
                weight *= w
                for j, v in zip(js, key):
                    values[j] = v
            key = tuple(values)
            c = memo.get(key)
            if c is None:
                env = {"gap_ncore": self.p.cores}
                env.update(zip((n for n, _ in reads), key))
                c = memo[key] = max(0, cost(env)) + fork
            total += weight * c
        return total

    def _space_classes(self, k: int, sp, js: tuple, owners: tuple, kernel, reads: tuple, count: dict,
                       args: dict) -> tuple:
        """(values of the bindings ``js`` of call ``k``, iterations) per distinct value set over
        the first / middle / last iteration of loop ``sp``, one shared tuple per distinct
        result; the values depend on that loop's index, its count and the boxes of the
        arguments ``owners`` they read (the key)."""
        dims = tuple([args[n].dims if n is not None else None for n in owners])
        key = (k, sp, count[sp], tuple([id(d) for d in dims]))
        hit = self._space_memo.get(key)
        if hit is None:
            groups: dict = {}
            for i, w in _loop_classes(count[sp]):
                idx = {sp: i}
                values = tuple(_value(kernel, reads[j][1], idx, count, args) for j in js)
                groups[values] = groups.get(values, 0) + w
            out = tuple(groups.items())
            out = self._interned.setdefault(out, out)
            # the dims are kept with the result: their ids stay theirs while the entry lives
            hit = self._space_memo[key] = (dims, out)
        return hit[1]

    def _moves_of(self, a: ArgTiling, shapes: Optional[dict], order: list, count: dict) -> tuple:
        """(core cycles, cycles that cannot overlap compute, cluster-DMA read and write cycles,
        micro-DMA cycles) of an argument's transfers (:meth:`_moves`), once per argument tiling: the
        counts of the loops up to its level are those of its dimensions, except for loops it
        does not depend on, which only multiply (``a.instances`` says by how much)."""
        hit = self._moves_memo.get(id(a))
        if hit is None:
            live = order[: order.index(a.level) + 1] if a.level is not None else []
            spaces = {d.space for d in a.dims}
            rest = 1
            for sp in live:
                if sp not in spaces:
                    rest *= count[sp]
            key = (a.name, id(a.dims), a.level, a.nbuf, a.whole_stage)
            unit = self._unit_moves.get(key)
            if unit is None:
                shape = shapes[a.name] if shapes is not None else transfer_shape(a)
                unit = self._unit_moves[key] = (a.dims,) + self._moves(a, shape, order, count)
            _, core, ends, reads, writes, udma, whole = unit
            # the argument tiling (and above, its dims) is kept with the result: its id stays its
            # own while the entry lives
            hit = self._moves_memo[id(a)] = (a, rest * core, ends, rest * reads, rest * writes, rest * udma + whole)
        return hit[1:]

    def _moves(self, a: ArgTiling, shape, order: list, count: dict) -> tuple:
        """(core cycles, cycles that cannot overlap compute, cluster-DMA read cycles, cluster-DMA
        write cycles, micro-DMA cycles, micro-DMA cycles of a whole staging) of an argument's
        transfers, the loops up to its level that it does not depend on counted once."""
        p = self.p
        live = order[: order.index(a.level) + 1] if a.level is not None else []
        spaces = {d.space for d in a.dims}
        directions = int(a.reads) + int(a.writes)
        cluster = p.cluster_dma
        udma = device_engine(p, a.decl.l3_device)
        ring = a.l3 and not a.whole_stage  # L3 <-> L2 per instance (else once, whole, around the loops)
        per_copy = (p.dma_issue_cycles + p.wait_cycles) * (2 if ring else 1)
        core = ends = busy = busy_udma = whole = 0
        boxes = [(_box(a, shape, idx), weight) for idx, weight in _classes([sp for sp in live if sp in spaces], count,
                                                                           spaces)]
        single = a.nbuf == 1 and a.level is not None
        for (nbytes, lines), weight in boxes:
            d = cluster.transfer_cycles(nbytes, lines)
            busy += weight * d
            if ring:
                busy_udma += weight * udma.transfer_cycles(nbytes, lines) * directions
            core += weight * directions * (per_copy + (d if single else 0))
        first, last = boxes[0][0], boxes[-1][0]  # the classes come first iteration first, last one last
        if a.reads:
            ends += cluster.transfer_cycles(*first) + (udma.transfer_cycles(*first) if ring else 0)
        if a.writes:
            ends += cluster.transfer_cycles(*last) + (udma.transfer_cycles(*last) if ring else 0)
        if a.whole_stage:
            whole = udma.transfer_cycles(a.geom.l2_bytes) * directions
            ends += whole
        return core, ends, busy * int(a.reads), busy * int(a.writes), busy_udma, whole

    # -- one call ------------------------------------------------------------------------------------
    @staticmethod
    def _largest_tile(call, args: dict) -> Optional[ArgTiling]:
        tiles = [args[b.arg] for b in call.bindings if isinstance(b, KArgBinding) and b.select == S.KER_ARG_TILE]
        return max(tiles, key=lambda x: x.box_bytes_max // x.item) if tiles else None

    def _default_spaces(self, call, args: dict) -> set:
        a = self._largest_tile(call, args)
        return {d.space for d in a.dims} if a is not None else set()

    def _default_cost(self, call, lib, idx: dict, args: dict) -> int:
        a = self._largest_tile(call, args)
        if a is None:
            return DEFAULT_CALL_CYCLES
        items = 1
        for d in a.dims:
            items *= d.view_extent(idx.get(d.space, 0))
        return DEFAULT_CALL_CYCLES + (-(-items // self.p.cores) if lib.parallel else items)


def _live(order: list, location) -> list:
    """The loops whose index a call at ``location`` sees (the others are at their first iteration)."""
    loc = L(location)
    if loc in (L.LOC_PROLOG, L.LOC_EPILOG):
        return []
    space, part = divmod(int(loc), 3)
    spaces = [int(sp) for sp in order]
    if space not in spaces:
        return list(order)
    pos = spaces.index(space)
    return order[: pos + 1] if part == 0 else order[:pos]


_COUNT_SELECTS = (S.KER_ARG_NTILES, S.KER_ARG_PARTILE_DIM, S.KER_ARG_TILEFIRST, S.KER_ARG_TILELAST)


def _loop_classes(n: int) -> list:
    """(index, iterations it stands for) of a loop of ``n`` iterations: first, middle, last."""
    return [(0, 1)] if n == 1 else [(0, 1), (n - 1, 1)] if n == 2 else [(0, 1), (1, n - 2), (n - 1, 1)]


def _classes(live: list, count: dict, deps: set):
    """(representative index per loop of ``deps``, number of iterations of the ``live`` loops
    it stands for): the first, a middle and the last iteration of each loop of ``deps``; the
    other live loops only multiply."""
    per, spaces, rest = [], [], 1
    for sp in live:
        n = count[sp]
        if sp not in deps:
            rest *= n
            continue
        spaces.append(sp)
        per.append(_loop_classes(n))
    for combo in product(*per):
        weight = rest
        for _, w in combo:
            weight *= w
        yield {sp: i for sp, (i, _) in zip(spaces, combo)}, weight


def _box(a: ArgTiling, shape, idx: dict) -> tuple:
    """(bytes, lines) of the argument's transfer at loop indices ``idx``."""
    run = a.item
    for i in shape.run:
        run *= a.dims[i].box_extent(idx.get(a.dims[i].space, 0))
    lines = 1
    for i in shape.lines:
        lines *= a.dims[i].box_extent(idx.get(a.dims[i].space, 0))
    return run * lines, lines


def _spaces(args: dict, reads: tuple) -> set:
    """The loops whose index the values of ``reads`` may depend on."""
    return {s for _, b in reads if (s := _binding_space(args, b)) is not None}


def _binding_space(args: dict, b):
    """The loop whose index the value of binding ``b`` (:func:`_value`) depends on (None: no loop)."""
    if isinstance(b, IterIndexBinding):
        return b.space
    if isinstance(b, CArgBinding):
        return b.space
    if isinstance(b, KArgBinding):
        return _selected_space(args[b.arg], b)
    return None


def _selected_space(a: ArgTiling, b: KArgBinding):
    """The loop whose index the value :func:`_selected` returns depends on (None: no loop)."""
    sel = b.select
    if sel in (S.KER_ARG_TILE_W, S.KER_ARG_TILE_USEDW):
        return a.dims[-1].space
    if sel in (S.KER_ARG_TILE_H, S.KER_ARG_TILE_USEDH):
        return a.dims[-2].space
    if sel in (S.KER_ARG_TILEFIRST, S.KER_ARG_TILELAST, S.KER_ARG_TILEINDEX, S.KER_ARG_IT_INDEX):
        return b.space if b.space is not None else a.geom.tiled_space
    if sel in (S.KER_ARG_INPLANEINDEX, S.KER_ARG_OUTPLANEINDEX):
        return KernelIteratorT.KER_ITER_D0 if sel == S.KER_ARG_INPLANEINDEX else KernelIteratorT.KER_ITER_D1
    if sel in (S.KER_ARG_PARTILE_SIZE, S.KER_ARG_LOADEDPARTILE_SIZE):
        return b.space
    return None


def _value(kernel, b, idx: dict, count: dict, args: dict) -> int:
    """The number a scalar binding passes at loop indices ``idx`` (C arguments: 1)."""
    if isinstance(b, ImmBinding):
        return b.value
    if isinstance(b, KerDimBinding):
        v2 = kernel.v2
        return (v2.nip, v2.nop, v2.w, v2.h)[b.dim]
    if isinstance(b, IterIndexBinding):
        return idx.get(b.space, 0)
    if isinstance(b, CArgBinding):
        if b.form in (CArgForm.ARG_OPER, CArgForm.PLUS_IMM):
            return _OPS[b.oper if b.form == CArgForm.ARG_OPER else "+"](1, b.value)
        return _OPS[b.oper](b.value, 1) if b.form == CArgForm.IMM_OPER else 1
    if isinstance(b, PredListBinding):
        return 1
    if not isinstance(b, KArgBinding):
        return 0
    value = _selected(args[b.arg], b, idx, count)
    return _OPS[b.oper](value, b.value) if b.oper in _OPS else value


def _selected(a: ArgTiling, b: KArgBinding, idx: dict, count: dict) -> int:
    sel = b.select
    if sel in (S.KER_ARG_TILE_W, S.KER_ARG_TILE_H, S.KER_ARG_TILE_USEDW, S.KER_ARG_TILE_USEDH):
        width = sel in (S.KER_ARG_TILE_W, S.KER_ARG_TILE_USEDW)
        d = a.dims[-1] if width else a.dims[-2]
        if d.space is None and sel in (S.KER_ARG_TILE_USEDW, S.KER_ARG_TILE_USEDH):
            return a.decl.uw if width else a.decl.uh
        return d.view_extent(idx.get(d.space, 0))
    if sel in (S.KER_ARG_TILE_W0, S.KER_ARG_TILE_H0):
        d = a.dims[-1] if sel == S.KER_ARG_TILE_W0 else a.dims[-2]
        return d.std if d.iterates else d.only
    if sel == S.KER_ARG_W:
        return a.w
    if sel == S.KER_ARG_H:
        return a.h
    space = b.space if b.space is not None else a.geom.tiled_space
    if sel in (S.KER_ARG_NTILES, S.KER_ARG_PARTILE_DIM):
        return count.get(space, 1)
    if sel in (S.KER_ARG_TILEFIRST, S.KER_ARG_TILELAST):
        n = count.get(space, 1)
        return int(idx.get(space, 0) == (0 if sel == S.KER_ARG_TILEFIRST else n - 1))
    if sel in (S.KER_ARG_TILEINDEX, S.KER_ARG_IT_INDEX):
        return idx.get(space, 0)
    if sel in (S.KER_ARG_INPLANEINDEX, S.KER_ARG_OUTPLANEINDEX):
        sp = KernelIteratorT.KER_ITER_D0 if sel == S.KER_ARG_INPLANEINDEX else KernelIteratorT.KER_ITER_D1
        return idx.get(sp, 0)
    if sel in (S.KER_ARG_PARTILE_SIZE, S.KER_ARG_LOADEDPARTILE_SIZE):
        d = a.dim(b.space)
        i = idx.get(b.space, 0)
        return d.view_extent(i) if sel == S.KER_ARG_PARTILE_SIZE else d.box_extent(i)
    return 0  # pointers, offsets, pads: not scalars a Cost= reads


__all__ = ["Estimator"]
