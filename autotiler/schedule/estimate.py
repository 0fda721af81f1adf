"""A quick estimate of a tiling's cycles, to rank candidates before the exact prediction.

:func:`~autotiler.schedule.cost.predict` is exact but needs the tiling's schedule (a few
milliseconds per candidate in Python); the time objective therefore ranks every candidate by
this estimate, which reads the tiling alone (a few tens of microseconds), and predicts exactly
only the best few. The estimate is a ranking heuristic, never a reported figure.

It sums, per loop class (first, middle, last iteration of every loop the quantity depends on,
weighted by how many iterations fall in the class), the basic-kernel ``Cost=`` of every call
(compiled once per basic kernel) and the DMA time of every transfer, with the simulator's
transfer rule, and returns the larger of the cores' work plus what cannot overlap it (the first
reads, the last writes, single-buffered transfers) and the busiest DMA engine's work.

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
from .cost import DEFAULT_CALL_CYCLES, cost_to_expr
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
            if lib.cost:
                expr = cost_to_expr(lib.cost, {n: Var(n) for n in formals})
                cost = compile_expr(expr)
                used = names(expr)
                reads = tuple((n, b) for b, n in zip(call.bindings, formals)
                              if n in used and b is not AT_IGNORE_ARG_BINDING)
            self.calls.append((call, lib, reads, cost))

    # -- one tiling ----------------------------------------------------------------------------------
    def __call__(self, t: KernelTiling, shapes: Optional[dict] = None) -> int:
        """Estimated cycles of ``t``; ``shapes``: the transfer shape of each moving argument,
        when the caller has them already."""
        count = {lp.space: lp.count for lp in t.loops}
        order = [lp.space for lp in t.loops]
        core = self.compute(t)
        busy = {"cluster": 0, "udma": 0}
        ends = 0
        for a in t.args:
            if a.reads or a.writes:
                shape = shapes[a.name] if shapes is not None else transfer_shape(a)
                core_a, ends_a = self._moves(a, shape, order, count, busy)
                core += core_a
                ends += ends_a
        return max(core + ends, busy["cluster"], busy["udma"])

    def compute(self, t: KernelTiling) -> int:
        """Cycles of every basic-kernel call and fork of ``t`` (what the cores must spend)."""
        p = self.p
        count = {lp.space: lp.count for lp in t.loops}
        order = [lp.space for lp in t.loops]
        args = {a.name: a for a in t.args}
        core = 0
        for call, lib, reads, cost in self.calls:
            live = _live(order, call.location)
            deps = self._default_spaces(call, args) if cost is None else _spaces(args, reads)
            for idx, weight in _classes(live, count, deps):
                c = self._default_cost(call, lib, idx, args) if cost is None else self._cost(t, reads, cost, idx,
                                                                                              count, args)
                core += weight * (max(0, c) + (p.fork_cycles if lib.parallel else 0))
        return core

    def _moves(self, a: ArgTiling, shape, order: list, count: dict, busy: dict) -> tuple:
        """(core cycles, cycles that cannot overlap compute) of an argument's transfers; adds
        their engine time to ``busy``."""
        p = self.p
        live = order[: order.index(a.level) + 1] if a.level is not None else []
        directions = int(a.reads) + int(a.writes)
        cluster = p.cluster_dma
        udma = p.udma[a.decl.l3_device.kind] if a.decl.l3_device is not None else p.udma["ram"]
        ring = a.l3 and not a.whole_stage  # L3 <-> L2 per instance (else once, whole, around the loops)
        per_copy = (p.dma_issue_cycles + p.wait_cycles) * (2 if ring else 1)
        core = ends = 0
        boxes = [(_box(a, shape, idx), weight) for idx, weight in _classes(live, count, {d.space for d in a.dims})]
        single = a.nbuf == 1 and a.level is not None
        for (nbytes, lines), weight in boxes:
            d = cluster.transfer_cycles(nbytes, lines)
            busy["cluster"] += weight * d * directions
            if ring:
                busy["udma"] += weight * udma.transfer_cycles(nbytes, lines) * directions
            core += weight * directions * (per_copy + (d if single else 0))
        first, last = boxes[0][0], boxes[-1][0]  # the classes come first iteration first, last one last
        if a.reads:
            ends += cluster.transfer_cycles(*first) + (udma.transfer_cycles(*first) if ring else 0)
        if a.writes:
            ends += cluster.transfer_cycles(*last) + (udma.transfer_cycles(*last) if ring else 0)
        if a.whole_stage:
            whole = udma.transfer_cycles(a.geom.l2_bytes) * directions
            busy["udma"] += whole
            ends += whole
        return core, ends

    # -- one call ------------------------------------------------------------------------------------
    def _cost(self, t: KernelTiling, reads: tuple, cost, idx: dict, count: dict, args: dict) -> int:
        env = {"gap_ncore": self.p.cores}
        for name, b in reads:
            env[name] = _value(t, b, idx, count, args)
        return cost(env)

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
        per.append([(0, 1)] if n == 1 else [(0, 1), (n - 1, 1)] if n == 2 else [(0, 1), (1, n - 2), (n - 1, 1)])
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
    out: set = set()
    for _, b in reads:
        if isinstance(b, IterIndexBinding):
            out.add(b.space)
        elif isinstance(b, CArgBinding) and b.space is not None:
            out.add(b.space)
        elif isinstance(b, KArgBinding):
            out.add(_selected_space(args[b.arg], b))
    return out


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


def _value(t: KernelTiling, b, idx: dict, count: dict, args: dict) -> int:
    """The number a scalar binding passes at loop indices ``idx`` (C arguments: 1)."""
    if isinstance(b, ImmBinding):
        return b.value
    if isinstance(b, KerDimBinding):
        v2 = t.kernel.v2
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
    value = _selected(t, args[b.arg], b, idx, count)
    return _OPS[b.oper](value, b.value) if b.oper in _OPS else value


def _selected(t: KernelTiling, a: ArgTiling, b: KArgBinding, idx: dict, count: dict) -> int:
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
