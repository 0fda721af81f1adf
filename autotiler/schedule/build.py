"""Build the schedule of a tiled user kernel (see docs/semantics.md for the rules).

The loop nest follows the kernel's iteration space, outer to inner. In the body of each loop:
the reads of the arguments that move at this loop (its *level*), the calls placed before the
next inner loop (``LOC_<inner>_PROLOG``), the inner loop, the calls placed after it
(``_EPILOG``) -- or, in the innermost loop, its body calls -- and the writes of the arguments
that move at this loop. Per argument and direction:

* input, double buffered: the first instance is read before the loops; at the top of each
  iteration of its level, wait for the current instance and prefetch the next one (the next
  iteration of the loops up to its level) into the other half;
* input, single buffered: read and wait at the top of each iteration of its level;
* output: after the iteration's calls, wait for the previous write (it used the half filled
  next) and issue this instance's write; the last write is waited after the loops;
* in-out, double buffered: as an input, but the previous write is waited before the prefetch
  overwrites its half;
* arguments that move once are read before the loops and written after them;
* an L3-homed argument (O_L2DB) moves L3 <-> L2 on the micro-DMA through a ring of ``stage``
  L2 slots, up to ``stage`` instances ahead of (reads) or behind (writes) the cluster DMA; an
  in-out one whose tiles are visited again (``whole_stage``) is read whole into L2 before the
  loops and written back whole after them, the cluster DMA moving its tiles as for an L2 home.

The instance an argument's double-buffer parity and staging slot follow is the running count
of its level loop (``<Space>Ind_Total``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

from ..constants import KernelArgSelect_T as S
from ..constants import KernelCallLocationT, KernelIteratorT
from ..errors import CodegenError
from ..model.ir import (
    AT_IGNORE_ARG_BINDING,
    CArgBinding,
    CArgForm,
    ImmBinding,
    IterIndexBinding,
    KArgBinding,
    KerDimBinding,
    PredListBinding,
    TileOperBinding,
)
from ..tiler.geometry import ArgKind
from ..tiler.tiling import ArgTiling, DimTiling, KernelTiling
from .cost import default_cost, platform_cost, scaled_cost
from .expr import (
    FALSE,
    ONE,
    TRUE,
    ZERO,
    Bin,
    Const,
    Deref,
    Expr,
    Subscript,
    Var,
    Vector,
    add,
    assume,
    cast,
    eq,
    ge,
    land,
    lift,
    lnot,
    lor,
    lt,
    mod,
    mul,
    names,
    select,
    sub,
)
from .ir import (
    Access,
    Comment,
    Compute,
    Copy,
    Direction,
    Engine,
    Event,
    Field,
    If,
    Let,
    Level,
    Loop,
    Region,
    Schedule,
    Wait,
)

L = KernelCallLocationT
IN, OUT = Direction.IN, Direction.OUT
SPACE_VARS = {0: "T0Ind", 1: "T1Ind", 2: "T2Ind", 3: "D0Ind", 4: "D1Ind", 5: "D2Ind", 6: "D3Ind"}
OLD_STYLE_VARS = {0: "Tile0Ind", 1: "Tile1Ind", 2: "Tile2Ind", 3: "InPlaneInd", 4: "OutPlaneInd", 5: "D2Ind",
                  6: "D3Ind"}


class Unsupported(CodegenError):
    """A tiling the generated code cannot express (e.g. a transfer needing three strides): the
    search skips it."""


@dataclass(frozen=True)
class Naming:
    """C names the schedule uses: memory symbols, the L3 device and loop variables."""

    l1: str = "L1_Memory"
    l2: str = "L2_Memory"
    family: str = "HYPERRAM"
    device: str = "HyperRam"
    old_style: bool = False

    def var(self, space) -> str:
        return (OLD_STYLE_VARS if self.old_style else SPACE_VARS)[int(space)]


DEFAULT_NAMING = Naming()


# ----------------------------------------------------------------------------------------------
# Loop indices as expressions


@dataclass
class Ix:
    """Indices of the kernel's loops for one point of the schedule: ``idx`` maps every loop
    (space) to an expression; ``eqs`` may give, for some spaces, the predicate ``index == v``
    directly (derived indices, whose comparisons must stay between affine terms)."""

    idx: dict
    eqs: dict = field(default_factory=dict)
    totals: dict = field(default_factory=dict)
    # how the indices were made (an interned number, see _sig; None: unknown): equal signatures,
    # equal indices and predicates, so that expressions of the indices can be shared
    sig: Optional[int] = None

    def eq(self, space, v: int) -> Expr:
        f = self.eqs.get(space)
        return f(v) if f is not None else eq(self.idx[space], v)


# ----------------------------------------------------------------------------------------------
# Transfers


@dataclass(frozen=True)
class Shape:
    """How an argument's box is moved: a contiguous run of the ``run`` dimensions, repeated
    over the ``lines`` dimensions every ``stride`` items (no lines: a 1D transfer)."""

    run: tuple      # dimension indices, inner part
    lines: tuple    # dimension indices merged into the line count
    stride: int     # items between lines (ext side)


def transfer_shape(a: ArgTiling) -> Shape:
    dims = a.dims
    i = len(dims) - 1
    run = [i]
    while i > 0 and dims[i].whole and dims[i - 1].stride == dims[i].stride * dims[i].full:
        i -= 1
        run.append(i)
    outer = [j for j in range(i) if dims[j].max_extent > 1]
    levels: list = []
    for j in reversed(outer):
        if levels:
            p = levels[-1][0]
            between = range(j + 1, p)
            if (dims[p].whole and dims[j].stride == dims[p].stride * dims[p].full
                    and all(dims[x].max_extent == 1 and dims[x].full == 1 for x in between)):
                levels[-1].insert(0, j)
                continue
        levels.append([j])
    if len(levels) > 1:
        names_ = " x ".join(f"[{', '.join(dims[x].name for x in lv)}]" for lv in levels)
        raise Unsupported(f"a tile made of {names_} lines with different strides needs a 3D transfer, which the "
                          "cluster DMA cannot do", arg=a.name)
    lines = tuple(levels[0]) if levels else ()
    stride = dims[lines[-1]].stride if lines else 0
    return Shape(tuple(sorted(run)), lines, stride)


def _shape(a: ArgTiling) -> Shape:
    """transfer_shape(a), which reads only the dims (but for the name in its error), once per
    distinct dims."""
    key = ("shape", id(a.dims))
    hit = _VIEWS.get(key)
    return hit[0] if hit is not None else _remember(key, transfer_shape(a), a.dims)


# ----------------------------------------------------------------------------------------------
# The builder


# Expressions of a dimension or an argument at indices of a known signature (Ix.sig) depend
# only on that signature and the dimension's (argument's dims') numbers: shared by the
# schedules of a kernel's candidates, whose dims are shared (expressions are immutable). Keyed
# by the dims' id, the dims kept alive in the entry so that the id stays theirs.
_VIEWS: dict = {}
_SIGS: dict = {}
_MAX = 1 << 16


def _remember(key, value, owner):
    if len(_VIEWS) >= _MAX:
        _VIEWS.clear()
    _VIEWS[key] = (value, owner)
    return value


def _sig(made: tuple) -> Optional[int]:
    """The interned number of a description of how indices were made (None, not shared, once
    too many were seen: numbers are never reused)."""
    n = _SIGS.get(made)
    if n is None and len(_SIGS) < _MAX:
        n = _SIGS[made] = len(_SIGS)
    return n


class Builder:
    def __init__(self, tiling: KernelTiling, libs: dict, naming: Optional[Naming] = None, platform=None):
        self.t = tiling
        self.libs = libs
        self.platform = platform   # its compute model scales each call's Cost= (None: as written)
        self.n = naming or DEFAULT_NAMING
        self.uk = tiling.kernel
        self.loops = [lp for lp in tiling.loops]
        self.order = [lp.space for lp in self.loops]
        self.count = {lp.space: lp.count for lp in self.loops}
        self.bound = {lp.space: lp.bound for lp in self.loops if lp.bound}  # run-time bounds (C arguments)
        for a in tiling.args:
            if self.ring(a) and a.level is not None and self.bound:
                raise Unsupported(f"'{a.name}' is homed in L3 and moves per iteration of a loop bounded at run time "
                                  f"by '{next(iter(self.bound.values()))}': not supported yet",
                                  hint=f"keep '{a.name}' in L2, or make the space static (IterFixedSpace)", arg=a.name)
        self.var = {lp.space: naming.var(lp.space) for lp in self.loops}
        self.total_var = {lp.space: self.var[lp.space] + "_Total" for lp in self.loops}
        self.used_totals: set = set()
        self.structs: list = []
        self.invariant: list = []
        self.shapes = {a.name: _shape(a) for a in tiling.args if a.reads or a.writes}
        self.loop_names = set(self.var.values()) | set(self.total_var.values())
        self.loop_names |= {"Next" + v for v in self.var.values()}
        self.next_lets: dict = {}
        self._ix_cache: dict = {}
        self._memo: dict = {}
        # what the indices' expressions depend on besides how they are made: the loops, their
        # run-time bounds and the loop variables' names
        self._loopsig = (tuple((int(lp.space), lp.count) for lp in self.loops),
                         tuple((int(sp), b) for sp, b in self.bound.items()), self.n.old_style)

    # -- indices --------------------------------------------------------------------------------
    def current(self, live: Optional[set] = None) -> Ix:
        """Indices inside the loops ``live`` (all of them when None); loops not live count as
        their first iteration."""
        key = frozenset(live) if live is not None else None
        hit = self._ix_cache.get(key)
        if hit is not None:
            return hit
        idx = {}
        ons = []
        for sp in self.order:
            on = self.count[sp] > 1 and (live is None or sp in live)
            idx[sp] = Var(self.var[sp]) if on else ZERO
            ons.append(on)
        ix = self._ix_cache[key] = Ix(idx, sig=_sig(("current", self._loopsig, tuple(ons))))
        return ix

    def levels(self, level) -> list:
        return self.order[: self.order.index(level) + 1] if level is not None else []

    def total_expr(self, level, ix: Ix) -> Expr:
        """The running count of ``level``'s iterations at indices ``ix`` (instance number)."""
        total: Expr = ZERO
        for sp in self.levels(level):
            total = add(mul(total, self.count[sp]), ix.idx[sp])
        return total

    def total_var_of(self, level) -> Expr:
        self.used_totals.add(level)
        return Var(self.total_var[level])

    def next_ix(self, level) -> Ix:
        """The next iteration's indices as the locals ``Next<var>`` (declared at the top of the
        level's body when used), with predicates on the current indices."""
        nxt = self.step_ix(self.current(), level, True)
        idx = dict(nxt.idx)
        for sp in self.levels(level):
            if self.count[sp] > 1:
                name = "Next" + self.var[sp]
                self.next_lets[name] = nxt.idx[sp]
                idx[sp] = Var(name)
        return Ix(idx, nxt.eqs, sig=_sig(("next", nxt.sig)) if nxt.sig is not None else None)

    def step_ix(self, ix: Ix, level, forward: bool) -> Ix:
        """The indices of the next (``forward``) or previous iteration of the loops up to
        ``level``, as selects over the current ones; their ``eq`` predicates are built from
        comparisons of the current indices so that the analysis sees affine terms only."""
        key = ("step", ix.sig, level, forward) if ix.sig is not None else None
        if key is not None:
            hit = self._ix_cache.get(key)
            if hit is not None:
                return hit
        idx, eqs = dict(ix.idx), dict(ix.eqs)
        carry: Expr = TRUE
        for sp in reversed([x for x in self.levels(level) if self.count[x] > 1]):
            n, cur = self.count[sp], idx[sp]

            def cur_eq(v, sp=sp, n=n):
                return ix.eq(sp, v) if 0 <= v < n else FALSE
            edge, wrap = (self.last(sp, cur, cur_eq), 0) if forward else (cur_eq(0), n - 1)
            step = add(cur, 1) if forward else sub(cur, 1)
            idx[sp] = select(land(carry, edge), wrap, select(carry, step, cur))

            memo: dict = {}

            def new_eq(v, carry=carry, edge=edge, wrap=wrap, cur_eq=cur_eq, memo=memo):
                hit = memo.get(v)
                if hit is None:
                    came_from = v - 1 if forward else v + 1
                    hit = memo[v] = lor(land(carry, edge, TRUE if v == wrap else FALSE),
                                        land(carry, lnot(edge), cur_eq(came_from)),
                                        land(lnot(carry), cur_eq(v)))
                return hit
            eqs[sp] = new_eq
            carry = land(carry, edge)
        out = Ix(idx, eqs, sig=_sig(key) if key is not None else None)
        if key is not None:
            self._ix_cache[key] = out
        return out

    def fixed_ix(self, level, j: int) -> Ix:
        idx = {sp: ZERO for sp in self.order}
        for sp in reversed(self.levels(level)):
            n = self.count[sp]
            idx[sp] = Const(j % n)
            j //= n
        return Ix(idx, sig=_sig(("fixed", self._loopsig, tuple(e.value for e in idx.values()))))

    def last(self, sp, index: Expr, index_eq=None) -> Expr:
        """``index`` is the last iteration of loop ``sp`` (its run-time bound less one, when bound
        at run time)."""
        if sp in self.bound:
            return eq(index, sub(Var(self.bound[sp]), 1))
        return index_eq(self.count[sp] - 1) if index_eq is not None else eq(index, self.count[sp] - 1)

    def iterations(self, space) -> Expr:
        """Iterations of loop ``space`` (its run-time bound when it has one; 1 for no loop)."""
        if space in self.bound:
            return Var(self.bound[space])
        return Const(self.count.get(space, 1) if space is not None else 1)

    def has_next(self, level) -> Expr:
        levels = [sp for sp in self.levels(level) if self.count[sp] > 1]
        return lnot(land(*(self.last(sp, Var(self.var[sp])) for sp in levels)))

    # -- per-dimension expressions -------------------------------------------------------------
    def _classes(self, d: DimTiling, ix: Ix) -> tuple:
        """(is_first, is_last) predicates of a dimension's loop index."""
        n = d.count
        return ix.eq(d.space, 0), ix.eq(d.space, n - 1)

    def _cached(self, what: str, d: DimTiling, ix: Ix, make) -> Expr:
        if ix.sig is not None:  # shared by every schedule (expressions are immutable)
            key = (what, ix.sig, id(d))
            hit = _VIEWS.get(key)
            return hit[0] if hit is not None else _remember(key, make(), d)
        key = (what, id(d), id(ix))
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = (make(), d, ix)  # d and ix kept alive: their ids stay unique
        return hit[0]

    def view_start(self, d: DimTiling, ix: Ix) -> Expr:
        return self._cached("start", d, ix, lambda: self._view_start(d, ix))

    def view_extent(self, d: DimTiling, ix: Ix) -> Expr:
        return self._cached("extent", d, ix, lambda: self._view_extent(d, ix))

    def _view_start(self, d: DimTiling, ix: Ix) -> Expr:
        if not d.iterates:
            return Const(d.b)
        first, last = self._classes(d, ix)
        return add(add(add(mul(ix.idx[d.space], d.a), d.b), select(first, d.f0, 0)), select(last, d.fl, 0))

    def _view_extent(self, d: DimTiling, ix: Ix) -> Expr:
        if not d.iterates:
            return Const(d.only)
        first, last = self._classes(d, ix)
        return select(last, d.last, select(first, d.first, d.std))

    def box_start(self, d: DimTiling, ix: Ix) -> Expr:
        return ZERO if d.resident else self.view_start(d, ix)

    def box_extent(self, d: DimTiling, ix: Ix) -> Expr:
        return Const(d.full) if d.resident else self.view_extent(d, ix)

    def ext_offset(self, a: ArgTiling, ix: Ix) -> Expr:
        """Byte offset of the instance's box in the argument's L2 (or L3) data."""
        if ix.sig is None:
            return self._ext_offset(a, ix)
        key = ("ext", ix.sig, id(a.dims), a.item)  # all it reads
        hit = _VIEWS.get(key)
        return hit[0] if hit is not None else _remember(key, self._ext_offset(a, ix), a.dims)

    def _ext_offset(self, a: ArgTiling, ix: Ix) -> Expr:
        off: Expr = ZERO
        for d in a.dims:
            off = add(off, mul(self.box_start(d, ix), d.stride * a.item))
        return off

    def box_size(self, a: ArgTiling, ix: Ix) -> tuple:
        """(bytes, line length in bytes or None) of the instance's transfer."""
        if ix.sig is None:
            return self._box_size(a, ix)
        key = ("size", ix.sig, id(a.dims), a.item)  # all it reads (the shape is made of the dims)
        hit = _VIEWS.get(key)
        return hit[0] if hit is not None else _remember(key, self._box_size(a, ix), a.dims)

    def _box_size(self, a: ArgTiling, ix: Ix) -> tuple:
        shape = self.shapes[a.name]
        run = Const(a.item)
        for i in shape.run:
            run = mul(run, self.box_extent(a.dims[i], ix))
        lines: Expr = ONE
        for i in shape.lines:
            lines = mul(lines, self.box_extent(a.dims[i], ix))
        if not shape.lines:
            return run, None
        return mul(lines, run), run

    # -- L1 slots and pointers -------------------------------------------------------------------
    def parity(self, a: ArgTiling, counter: Expr) -> Expr:
        return ZERO if a.nbuf == 1 else mod(counter, a.nbuf)

    def slot_offset(self, a: ArgTiling, counter: Expr) -> Expr:
        """Byte offset in L1 of the slot of instance ``counter`` (its data, after the bottom buffer)."""
        return add(add(a.offset, mul(self.parity(a, counter), a.slot_bytes)), a.pad_bytes)

    def counter(self, a: ArgTiling, ix: Ix, live: Optional[set]) -> Expr:
        """Instance number of the argument at indices ``ix`` (its level's running count)."""
        lv = a.level
        if lv is None:
            return ZERO
        if live is None or all(sp in live for sp in self.levels(lv) if self.count[sp] > 1):
            return self.total_var_of(lv)
        return self.total_expr(lv, ix)

    def pointer_offset(self, a: ArgTiling, ix: Ix, counter: Expr) -> Expr:
        """L1 byte offset of the current view: the slot plus the view's place in a box it is
        resident in."""
        off = self.slot_offset(a, counter)
        inner = Const(1)
        for d in reversed(a.dims):
            if d.resident and d.iterates:
                off = add(off, mul(mul(self.view_start(d, ix), inner), a.item))
            inner = mul(inner, self.box_extent(d, ix))
        return off

    def l1(self, offset: Expr) -> Expr:
        return add(Var(self.n.l1), offset)

    # -- transfers -----------------------------------------------------------------------------
    def _event(self, a: ArgTiling, direction: Direction) -> Event:
        return Event(f"Dma{'R' if direction == IN else 'W'}_Evt_{a.name}")

    def _uevent(self, a: ArgTiling, direction: Direction, counter: Expr) -> Event:
        index = ZERO if a.stage == 1 else mod(counter, a.stage)
        return Event(f"Uchan{'R' if direction == IN else 'W'}_{a.name}", index)

    def stage_offset(self, a: ArgTiling, direction: Direction, counter: Expr) -> Expr:
        base = a.stage_read_offset if direction == IN else a.stage_write_offset
        return add(base, mul(ZERO if a.stage == 1 else mod(counter, a.stage), a.box_bytes_max))

    def copy(self, a: ArgTiling, direction: Direction, ix: Ix, counter: Expr, comment: str = "") -> Copy:
        """Cluster DMA between L1 and the argument's L2 data (or, for an L3 argument, its L2
        staging slot of instance ``counter``, already contiguous)."""
        size, length = self.box_size(a, ix)
        loc = Region(Level.L1, self.n.l1, self.slot_offset(a, counter), size)
        if self.ring(a):
            ext = Region(Level.L2, self.n.l2, self.stage_offset(a, direction, counter), size)
            return Copy(Engine.CLUSTER, direction, a.name, ext, loc, self._event(a, direction), comment=comment)
        if a.l3:  # staged whole: its L2 copy is laid out as its L3 home
            ext = Region(Level.L2, self.n.l2, add(a.stage_offset, self.ext_offset(a, ix)), size)
        else:
            ext = Region(Level.L2, a.decl.carg_name, self.ext_offset(a, ix), size)
        stride = Const(self.shapes[a.name].stride * a.item) if length is not None else None
        return Copy(Engine.CLUSTER, direction, a.name, ext, loc, self._event(a, direction), stride, length,
                    comment)

    def ucopy(self, a: ArgTiling, direction: Direction, ix: Ix, counter: Expr, comment: str = "") -> Copy:
        """Micro-DMA between the instance's box in L3 and its L2 staging slot."""
        size, length = self.box_size(a, ix)
        ext = Region(Level.L3, a.decl.carg_name, self.ext_offset(a, ix), size)
        loc = Region(Level.L2, self.n.l2, self.stage_offset(a, direction, counter), size)
        stride = Const(self.shapes[a.name].stride * a.item) if length is not None else None
        return Copy(Engine.UDMA, direction, a.name, ext, loc, self._uevent(a, direction, counter), stride, length,
                    comment, a.decl.l3_device)

    def whole_ucopy(self, a: ArgTiling, direction: Direction) -> list:
        """An argument staged whole: all of it L3 -> L2 (before the loops) or back (after)."""
        size = Const(a.geom.l2_bytes)
        ext = Region(Level.L3, a.decl.carg_name, ZERO, size)
        loc = Region(Level.L2, self.n.l2, Const(a.stage_offset), size)
        what = "L3 -> L2" if direction == IN else "L2 -> L3"
        return [Copy(Engine.UDMA, direction, a.name, ext, loc, self._uevent(a, direction, ZERO),
                     comment=f"{what}: all of '{a.name}' (its tiles are visited again)", device=a.decl.l3_device),
                self.uwait(a, direction, ZERO)]

    @staticmethod
    def ring(a: ArgTiling) -> bool:
        """The argument moves L3 <-> L2 per instance, through its ring of staging slots."""
        return a.l3 and not a.whole_stage

    def wait(self, a: ArgTiling, direction: Direction, comment: str = "") -> Wait:
        return Wait(Engine.CLUSTER, self._event(a, direction), a.name, direction, comment)

    def uwait(self, a: ArgTiling, direction: Direction, counter: Expr, comment: str = "") -> Wait:
        return Wait(Engine.UDMA, self._uevent(a, direction, counter), a.name, direction, comment, a.decl.l3_device)

    def ahead_ix(self, a: ArgTiling, ix: Ix, steps: int, forward: bool = True) -> Ix:
        for _ in range(steps):
            ix = self.step_ix(ix, a.level, forward)
        return ix

    # -- reads and writes at a level -----------------------------------------------------------
    def reads(self, a: ArgTiling, ix: Ix) -> list:
        n = self.total_var_of(a.level)
        out: list = []
        if a.nbuf == 2:
            out.append(self.wait(a, IN, f"'{a.name}': the instance of this iteration has landed"))
            if a.writes:
                out.append(If(ge(n, 1), tuple(self.wait_previous_write(a, ix)),
                              f"'{a.name}': its previous write-back used the half we prefetch into"))
            if self.ring(a):
                out.append(self.fetch_ahead(a, ix))
            nxt = self.next_ix(a.level)
            body = []
            if self.ring(a):
                body.append(self.uwait(a, IN, add(n, 1), "staged in L2"))
            body.append(self.copy(a, IN, nxt, add(n, 1), f"prefetch the next instance of '{a.name}'"))
            cond = self.has_next(a.level)
            out.append(If(cond, tuple(_assumed(x, cond) for x in body), "not on the very last iteration"))
            return out
        if self.ring(a):
            out.append(self.uwait(a, IN, n, "staged in L2"))
        out.append(self.copy(a, IN, ix, n, f"single buffer: read '{a.name}'"))
        out.append(self.wait(a, IN))
        if self.ring(a):
            out.append(self.fetch_ahead(a, ix))
        return out

    def fetch_ahead(self, a: ArgTiling, ix: Ix) -> If:
        """Refill the staging slot just emptied with the instance ``stage`` ahead."""
        n = self.total_var_of(a.level)
        ahead = self.ahead_ix(a, ix, a.stage)
        return If(lt(add(n, a.stage), a.instances), (self.ucopy(a, IN, ahead, n, "L3 -> L2"),),
                  f"'{a.name}': instance {a.stage} ahead, into the staging slot just consumed")

    def wait_previous_write(self, a: ArgTiling, ix: Ix) -> list:
        out: list = [self.wait(a, OUT)]
        if self.ring(a):
            n = self.total_var_of(a.level)
            prev = self.ahead_ix(a, ix, 1, forward=False)
            out.append(self.ucopy(a, OUT, prev, sub(n, 1), "L2 -> L3: the previous instance"))
        return out

    def writes(self, a: ArgTiling, ix: Ix) -> list:
        n, s = self.total_var_of(a.level), a.stage
        out: list = []
        if a.nbuf == 2 and not a.reads:
            out.append(If(ge(n, 1), tuple(self.wait_previous_write(a, ix)),
                          f"'{a.name}': the previous write-back is done"))
        if self.ring(a):
            out.append(If(ge(n, s), (self.uwait(a, OUT, n),), "its staging slot was sent on to L3"))
        if a.nbuf == 2:
            out.append(self.copy(a, OUT, ix, n, f"write back this instance of '{a.name}'"))
            return out
        out.append(self.copy(a, OUT, ix, n, f"single buffer: write '{a.name}'"))
        out.append(self.wait(a, OUT))
        if self.ring(a):
            out.append(self.ucopy(a, OUT, ix, n, "L2 -> L3"))
        return out

    # -- prolog and epilog -----------------------------------------------------------------------
    def prolog(self) -> list:
        out: list = []
        for a in self.t.args:
            if not a.reads:
                continue
            if self.ring(a):
                for j in range(min(a.stage, a.instances)):
                    out.append(self.ucopy(a, IN, self.fixed_ix(a.level, j), Const(j),
                                          f"L3 -> L2: instance {j} of '{a.name}'"))
                if a.level is None or a.nbuf == 2:
                    out.append(self.uwait(a, IN, ZERO))
            elif a.l3:
                out += self.whole_ucopy(a, IN)
            if a.level is None:
                out.append(self.copy(a, IN, self.fixed_ix(None, 0), ZERO, f"'{a.name}': read once"))
            elif a.nbuf == 2:
                out.append(self.copy(a, IN, self.fixed_ix(a.level, 0), ZERO, f"first instance of '{a.name}'"))
        out += [self.wait(a, IN) for a in self.t.args if a.reads and a.level is None]
        return out

    def epilog(self) -> list:
        out: list = [self.copy(a, OUT, self.fixed_ix(None, 0), ZERO, f"'{a.name}': write once")
                     for a in self.t.args if a.writes and a.level is None]
        for a in self.t.args:
            if not a.writes:
                continue
            last = a.instances - 1
            if a.level is None or a.nbuf == 2:
                out.append(self.wait(a, OUT, f"last write-back of '{a.name}'"))
                if self.ring(a):
                    out.append(self.ucopy(a, OUT, self.fixed_ix(a.level, last), Const(last),
                                          f"L2 -> L3: last instance of '{a.name}'"))
            if self.ring(a):
                out += [self.uwait(a, OUT, Const(j)) for j in range(max(0, a.instances - a.stage), a.instances)]
            elif a.l3:
                out += self.whole_ucopy(a, OUT)
        return out

    # -- calls ---------------------------------------------------------------------------------------
    def calls_at(self, loc: L, live: set) -> list:
        out = []
        for index, call in enumerate(self.uk.calls):
            if call.location == loc:
                out += self.call(index, call, live)
        return out

    def cost_values(self, fields: list) -> dict:
        """The values a Cost= reads. One known only at run time (a C argument) is taken as a
        long long: in its unsigned formal type a Cost that goes negative would wrap to a huge
        count instead of reaching the simulator's check."""
        cargs = {c.name for c in self.uk.cargs}
        return {f.formal: cast("long long", f.value) if names(f.value) & cargs else f.value for f in fields}

    def call(self, index: int, call, live: set) -> list:
        lib = self.libs[call.name]
        ix = self.current(live)
        fields, accesses = [], []
        reads_l1 = set()     # fields reading an item of a tile ('@'): evaluated at the call, once the tile is in
        for b, formal in zip(call.bindings, lib.cargs):
            if b is AT_IGNORE_ARG_BINDING:
                fields.append(Field(formal.name, formal.ctype, ZERO, ignored=True))
                continue
            value, acc = self.binding(b, formal, ix, live)
            fields.append(Field(formal.name, formal.ctype, value))
            accesses += acc
            if isinstance(b, TileOperBinding) and b.oper == "@":
                reads_l1.add(formal.name)
        cost = platform_cost(lib.cost, self.cost_values(fields), self.platform, call.name)
        if cost is None:
            cost = scaled_cost(self._default_cost(call, lib, ix), self.platform, call.name)
        comment = f"{L(call.location).name}: {call.name}"
        if not lib.struct_call:
            return [Compute(call.name, L(call.location).name, tuple(fields), cost, False, accesses=tuple(accesses),
                            comment=comment)]
        var = f"KerArg{index}"
        self.structs.append((lib.par_type, var))
        moving = []
        for f in fields:
            if f.ignored:
                continue
            if names(f.value) & self.loop_names or f.formal in reads_l1:
                moving.append(f)
            else:
                self.invariant.append((var, f))
        return [Compute(call.name, L(call.location).name, tuple(moving), cost, lib.parallel, var, lib.par_type,
                        tuple(accesses), comment)]

    def _default_cost(self, call, lib, ix: Ix) -> Expr:
        tiles = [self.t.arg(b.arg) for b in call.bindings if isinstance(b, KArgBinding) and b.select == S.KER_ARG_TILE]
        if not tiles:
            return default_cost(None, lib.parallel)
        a = max(tiles, key=lambda x: x.box_bytes_max // x.item)
        items = prod_expr(self.view_extent(d, ix) for d in a.dims)
        return default_cost(items, lib.parallel)

    # -- bindings ------------------------------------------------------------------------------
    def binding(self, b, formal, ix: Ix, live: set) -> tuple:
        """(value as an expression cast to the formal's type, L1 accesses for the verifier)."""
        acc: list = []
        if isinstance(b, ImmBinding):
            value = Const(b.value)
        elif isinstance(b, CArgBinding):
            value = self._carg(b, ix)
        elif isinstance(b, KerDimBinding):
            v2 = self.uk.v2
            value = Const((v2.nip, v2.nop, v2.w, v2.h)[b.dim])
        elif isinstance(b, IterIndexBinding):
            value = ix.idx.get(b.space, ZERO)
        elif isinstance(b, PredListBinding):
            preds = [self._karg(p, ix, live, acc) for p in b.preds]
            value = land(*preds) if b.conj == "&&" else lor(*preds)
        elif isinstance(b, TileOperBinding):
            a = self.t.arg(b.arg)
            ptr = self.l1(self.pointer_offset(a, ix, self.counter(a, ix, live)))
            acc.append(self._access(a, ix, live))
            value = Subscript(cast(b.ctype, ptr), Const(b.value)) if b.oper == "@" else \
                Bin(b.oper, cast(b.ctype, ptr), Const(b.value))
            return cast(formal.ctype, value), acc
        else:
            value = self._karg(b, ix, live, acc)
        return cast(formal.ctype, value), acc

    def _carg(self, b: CArgBinding, ix: Ix) -> Expr:
        name = Var(b.name)
        f = b.form
        if f == CArgForm.PLAIN:
            return name
        if f == CArgForm.PLUS_IMM:
            return Bin("+", name, Const(b.value))
        if f == CArgForm.ARG_OPER:
            return Bin(b.oper, name, Const(b.value))
        if f == CArgForm.IMM_OPER:
            return Bin(b.oper, Const(b.value), name)
        if f == CArgForm.ARG_COPER:
            return Bin(b.oper, name, Var(b.cvar))
        if f == CArgForm.PLUS_CVAR:
            return Bin("+", name, Var(b.cvar))
        index = mul(ix.idx.get(b.space, ZERO), b.value)
        if f == CArgForm.PLUS_PLANE:
            return Bin("+", name, index)
        if f == CArgForm.INDEX:
            return Subscript(name, index)
        return Deref(Bin("+", name, Const(b.value)))  # INDIRECT

    def _access(self, a: ArgTiling, ix: Ix, live: set, other: bool = False) -> Access:
        counter = self.counter(a, ix, live)
        if other:
            counter = add(counter, 1)
            return Access(a.name, Region(Level.L1, self.n.l1, add(a.offset, mul(self.parity(a, counter), a.slot_bytes)),
                                         Const(a.pad_bytes)), True)
        writes = a.decl.is_out or a.kind != ArgKind.DATA
        start = add(a.offset, mul(self.parity(a, counter), a.slot_bytes))
        if self._outside_loop(a, live):
            # before (after) its loop a moving argument's slot holds no tile of its own: the first
            # (last) instance is still on its way in (out), or, single-buffered, nothing is loaded
            # yet (the write-back is over). A kernel may only touch the delay line around the data
            # (the FIR's init kernel).
            if not a.pad_bytes:
                what = ("whose first instance is still being read there" if a.nbuf == 2 and a.reads else
                        "whose last instance is still being written there" if a.nbuf == 2 else
                        "whose tile is in L1 only inside that loop")
                raise Unsupported(f"a call outside the {_short(a.level)} loop binds the tile of '{a.name}', {what}",
                                  hint=f"bind '{a.name}' inside the loop, or KER_ARG (its buffer), or give it a delay "
                                       "line (KerArgPad) if the kernel only touches that", arg=a.name)
            return Access(a.name, Region(Level.L1, self.n.l1, start, Const(a.pad_bytes)), True)
        return Access(a.name, Region(Level.L1, self.n.l1, start, Const(a.slot_bytes)), writes)

    def _outside_loop(self, a: ArgTiling, live: Optional[set]) -> bool:
        """The access is made where the loop that moves the argument is not running."""
        return a.level is not None and live is not None and a.level not in live and (a.reads or a.writes)

    def _karg(self, b: KArgBinding, ix: Ix, live: set, acc: list) -> Expr:
        a = self.t.arg(b.arg)
        value = self._select(a, b, ix, live, acc)
        if b.oper is None:
            return value
        if b.oper in ("==", "!="):
            return eq(value, b.value) if b.oper == "==" else lnot(eq(value, b.value))
        return Bin(b.oper, value, Const(b.value))

    def _plane(self, a: ArgTiling, width: bool) -> DimTiling:
        return a.dims[-1] if width else a.dims[-2]

    def _select(self, a: ArgTiling, b: KArgBinding, ix: Ix, live: set, acc: list) -> Expr:
        sel = b.select
        counter = self.counter(a, ix, live)
        if sel == S.KER_ARG_TILE:
            acc.append(self._access(a, ix, live))
            return self.l1(self.pointer_offset(a, ix, counter))
        if sel == S.KER_ARG_TILE_NEXTDB:
            if a.nbuf != 2:
                raise Unsupported(f"KER_ARG_TILE_NEXTDB of '{a.name}': the argument is not double buffered in this "
                                  "tiling (it moves once, or is single buffered), so there is no next buffer",
                                  arg=a.name)
            acc.append(self._access(a, ix, live, other=True))
            return self.l1(self.slot_offset(a, add(counter, 1)))
        if sel == S.KER_ARG:
            return self.l1(Const(a.offset + a.pad_bytes))
        if sel == S.KER_ARG_TILE_OFF:
            return self.pointer_offset(a, ix, counter)
        if sel in (S.KER_ARG_TILE_W, S.KER_ARG_TILE_H):
            return self.view_extent(self._plane(a, sel == S.KER_ARG_TILE_W), ix)
        if sel in (S.KER_ARG_TILE_USEDW, S.KER_ARG_TILE_USEDH):
            width = sel == S.KER_ARG_TILE_USEDW
            d = self._plane(a, width)
            if d.space is None:
                return Const(a.decl.uw if width else a.decl.uh)
            return self.view_extent(d, ix)
        if sel in (S.KER_ARG_TILE_W0, S.KER_ARG_TILE_H0):
            d = self._plane(a, sel == S.KER_ARG_TILE_W0)
            return Const(d.std if d.iterates else d.only)
        if sel == S.KER_ARG_W:
            return Const(a.w)
        if sel == S.KER_ARG_H:
            return Const(a.h)
        tiled = a.geom.tiled_space
        space = b.space if b.space is not None else tiled
        if sel == S.KER_ARG_NTILES:
            return self.iterations(space)
        if sel in (S.KER_ARG_TILEFIRST, S.KER_ARG_TILELAST):
            if space is None or (self.count.get(space, 1) == 1 and space not in self.bound):
                return TRUE
            if sel == S.KER_ARG_TILEFIRST:
                return ix.eq(space, 0)
            return self.last(space, ix.idx[space], lambda v: ix.eq(space, v))
        if sel in (S.KER_ARG_TILEINDEX, S.KER_ARG_IT_INDEX):
            return ix.idx.get(space, ZERO) if space is not None else ZERO
        if sel in (S.KER_ARG_INPLANEINDEX, S.KER_ARG_OUTPLANEINDEX):
            sp = KernelIteratorT.KER_ITER_D0 if sel == S.KER_ARG_INPLANEINDEX else KernelIteratorT.KER_ITER_D1
            return ix.idx.get(sp, ZERO)
        if sel == S.KER_ARG_TILE_BASE:
            d = a.tile_dim
            return self.view_start(d, ix) if d is not None else ZERO
        if sel in (S.KER_ARG_PAD, S.KER_ARG_TILE_PAD):
            return self._pad(a, ix, sel == S.KER_ARG_TILE_PAD)
        d = a.dim(b.space)
        if sel == S.KER_ARG_PARTILE_DIM:
            return self.iterations(b.space)
        if sel == S.KER_ARG_PARTILE_SIZE:
            return self.view_extent(d, ix)
        if sel == S.KER_ARG_LOADEDPARTILE_SIZE:
            return self.box_extent(d, ix)
        raise CodegenError(f"selector {sel.name} is not supported")  # validation refuses it first

    def _pad(self, a: ArgTiling, ix: Ix, per_tile: bool) -> Expr:
        pe = a.decl.pad_exec
        pads = [Const(pe.left), Const(pe.right), Const(pe.top), Const(pe.bottom)]
        t = a.geom.tile
        if per_tile and t is not None:
            before, after = (2, 3) if t.horizontal else (0, 1)
            d = a.tile_dim
            if d.iterates:
                first, last = self._classes(d, ix)
                pads[before] = select(first, a.pad_first, 0)
                pads[after] = select(last, a.pad_last, 0)
            else:
                pads[before], pads[after] = Const(a.pad_first), Const(a.pad_last)
        return Vector("v4s", tuple(pads))

    # -- structure ----------------------------------------------------------------------------------
    def level_body(self, pos: int) -> list:
        """Statements inside loop ``order[pos]`` (pos = -1: the kernel's top level)."""
        space = self.order[pos] if pos >= 0 else None
        live = set(self.order[: pos + 1])
        ix = self.current(live)
        here = [a for a in self.t.args if space is not None and a.level == space]
        out: list = []
        self.next_lets = {}
        for a in here:
            if a.reads:
                out += self.reads(a, ix)
        used = set()
        for stmt in out:
            used |= _stmt_names(stmt)
        lets = [Let(n, e) for n, e in self.next_lets.items() if n in used]
        out = lets + out
        if pos == -1:
            out += self.calls_at(L.LOC_PROLOG, live)
        inner = pos + 1
        if inner < len(self.order):
            isp = self.order[inner]
            out += self.calls_at(_loc(isp, "prolog"), live)
            out.append(self.loop(inner))
            out += self.calls_at(_loc(isp, "epilog"), live)
        elif space is not None:
            out += self.calls_at(_loc(space, "body"), live)
        if pos == -1:
            out += self.calls_at(L.LOC_EPILOG, live)
        for a in here:
            if a.writes:
                out += self.writes(a, ix)
        return out

    def loop(self, pos: int) -> Loop:
        sp = self.order[pos]
        body = tuple(self.level_body(pos))
        total = self.total_var[sp] if sp in self.used_totals else None
        n = self.count[sp]
        return Loop(_short(sp), self.var[sp], n, body, total, _loop_comment(self.t, sp), self.bound.get(sp))

    def build(self) -> Schedule:
        prolog = self.prolog()
        body = self.level_body(-1)
        epilog = self.epilog()
        stmts = []
        if prolog:
            stmts += [Comment("Prolog: first instances and read-once arguments")] + prolog
        stmts += [Comment("Iteration")] + body
        if epilog:
            stmts += [Comment("Epilog: write-once arguments and last write-backs")] + epilog
        totals = {self.total_var[sp]: self.total_expr(sp, self.current()) for sp in self.used_totals}
        events = []
        for a in self.t.args:
            for direction, moves in ((IN, a.reads), (OUT, a.writes)):
                if moves:
                    events.append(("AT_L2_EVENT", self._event(a, direction).name, 0))
        for a in self.t.args:
            if a.l3:
                for direction, moves in ((IN, a.reads), (OUT, a.writes)):
                    if moves:
                        family = a.decl.l3_device.family if a.decl.l3_device else self.n.family
                        events.append((f"AT_{family}_CL_EVENT",
                                       f"Uchan{'R' if direction == IN else 'W'}_{a.name}", a.stage))
        loops = tuple((_short(lp.space), self.var[lp.space], lp.count) for lp in self.loops)
        symbols = {Level.L1: (self.n.l1, self.t.l1_bytes)}
        if self.t.l2_bytes:
            symbols[Level.L2] = (self.n.l2, self.t.l2_bytes)
        bounds = {name: self.count[sp] for sp, name in self.bound.items()}
        return Schedule(self.uk.name, tuple(stmts), totals, tuple(events), tuple(dict.fromkeys(self.structs)), loops,
                        tuple(self.invariant), symbols, self.n, bounds)


def _stmt_names(stmt) -> set:
    """Every name the expressions of a statement (and of its body) read."""
    out: set = set()
    for name in getattr(stmt, "__dataclass_fields__", {}):
        v = getattr(stmt, name)
        if isinstance(v, Expr):
            out |= names(v)
        elif isinstance(v, (Region, Event)) or hasattr(v, "__dataclass_fields__"):
            out |= _stmt_names(v)
        elif isinstance(v, tuple):
            for x in v:
                if isinstance(x, Expr):
                    out |= names(x)
                elif hasattr(x, "__dataclass_fields__"):
                    out |= _stmt_names(x)
    return out


def _assumed(stmt, fact: Expr):
    """A transfer simplified under the guard ``fact`` of its If."""
    if not isinstance(stmt, Copy):
        return stmt

    def region(r: Region) -> Region:
        return replace(r, offset=assume(r.offset, fact), size=assume(r.size, fact))
    return replace(stmt, ext=region(stmt.ext), loc=region(stmt.loc),
                   length=assume(stmt.length, fact) if stmt.length is not None else None)


def prod_expr(items) -> Expr:
    out: Expr = ONE
    for e in items:
        out = mul(out, lift(e))
    return out


def _short(space) -> str:
    return ("T0", "T1", "T2", "D0", "D1", "D2", "D3")[int(space)]


def _loc(space, part: str) -> L:
    return L(3 * int(space) + ("body", "prolog", "epilog").index(part))


def _loop_comment(t: KernelTiling, space) -> str:
    lp = t.loop(space)
    what = {"tiled": "tiles", "parametric": "chunks", "fixed": "iterations",
            "fixed, bound at run time": "iterations (at most)"}[lp.kind.value]
    if lp.count == 1:
        return f"{_short(space)}: a single iteration"
    extra = f" of {lp.std} (last {lp.last})" if lp.kind.value == "parametric" else ""
    return f"{_short(space)}: {lp.count} {what}{extra}"


def build_schedule(tiling: KernelTiling, libs: dict, naming: Optional[Naming] = None, platform=None) -> Schedule:
    """The schedule of a tiling on ``platform`` (whose compute model scales the calls' Cost=;
    None: as written); :class:`Unsupported` when the generated code cannot express it."""
    if tiling.kernel is not _KERNEL[0]:  # what is shared is shared by one kernel's candidates
        _VIEWS.clear()
        _KERNEL[0] = tiling.kernel
    return Builder(tiling, libs, naming or DEFAULT_NAMING, platform).build()


_KERNEL: list = [None]  # the kernel whose candidates _VIEWS holds parts of


__all__ = ["Naming", "DEFAULT_NAMING", "Unsupported", "Shape", "transfer_shape", "Builder", "build_schedule", "prod_expr"]
