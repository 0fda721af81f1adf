"""One tiling of a user kernel: loop counts, every argument's L1 box, layout, staging and traffic.

A :class:`Choice` fixes the step of every tiled space, the chunk of every parametric space and
which arguments are promoted; :func:`build_tiling` turns it into a :class:`KernelTiling`:

* each loop's iteration count (and its standard and last chunk);
* per argument, one :class:`DimTiling` per dimension of its L2 layout (its non-tiled spaces,
  then the plane's lines and columns) giving, as a function of the loop index, where its box
  starts and how far it extends; the dimensions it is *resident* over contribute their whole
  extent; its *level* (innermost loop that moves it) and how many times it moves;
* the L1 layout (KerArgs order, slots 4-byte aligned unless O_STACK_PRED), two slots for a
  double-buffered argument that moves, the L2 staging slots of L3-homed arguments;
* traffic in closed form (bytes per direction over one kernel call).

The time objective builds thousands of choices of one kernel: with a memo (one per kernel),
an argument's dimensions are made once per distinct loops over its own spaces, and
:func:`arg_tilings` gives what the cycle estimate reads (loops and argument tilings, without the
L1 layout and the traffic), shared across choices that tile an argument the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from math import prod
from typing import Optional

from ..constants import KernelIteratorT, Object_Type_T
from ..constants import Tile_Orientation_T as T
from ..model.ir import SpaceKind
from .geometry import ArgGeom, ArgKind, KernelGeom, SpaceGeom, tile_sizes, tile_span

O = Object_Type_T
L1_ALIGN = 4  # every L1 slot starts on a 4-byte boundary (word access, v2s vectors)


def align(n: int, a: int = L1_ALIGN) -> int:
    return -(-n // a) * a


@dataclass(frozen=True)
class Choice:
    """``sizes``: {space: step k (tiled, in units of E_min) or chunk (parametric)};
    ``promoted``: every argument resident (KER_OPT_BUFFER_PROMOTE); ``partial``: (argument,
    space) pairs promoted individually (KER_OPT_PARTIAL_BUFFER_PROMOTE)."""

    sizes: tuple = ()
    promoted: bool = False
    partial: frozenset = frozenset()
    single_buffer: bool = False

    def size(self, space, default: int) -> int:
        return dict(self.sizes).get(space, default)


@dataclass(frozen=True)
class LoopTiling:
    """One loop: ``count`` iterations; ``std``/``last`` the chunk (parametric), tile step
    (tiled, in units of E_min) or 1 (fixed)."""

    space: KernelIteratorT
    kind: SpaceKind
    count: int
    std: int
    last: int
    dim: int
    bound: Optional[str] = None

    @property
    def tiled(self) -> bool:
        return self.kind == SpaceKind.TILED


@dataclass(frozen=True)
class DimTiling:
    """One dimension of an argument (a non-tiled space, or the plane's lines / columns).

    The *view* is what iteration ``i`` of the dimension's loop (``count`` iterations) works on:
    it starts at ``a*i + b + f0*(i==0) + fl*(i==count-1)`` and extends ``first`` (i == 0),
    ``std`` or ``last`` (i == count-1) units; with a single iteration it starts at ``b`` and
    extends ``only``. The *box* is what the L1 slot holds: the view, or the whole dimension
    (``full`` units, from 0) when the argument is ``resident`` over it. ``stride``: items
    between consecutive units in L2."""

    name: str               # "D0", "T0", "H", "W": for comments and checks
    space: Optional[KernelIteratorT]
    full: int
    stride: int
    count: int = 1
    resident: bool = False
    a: int = 0
    b: int = 0
    f0: int = 0
    fl: int = 0
    std: int = 0
    first: int = 0
    last: int = 0
    only: int = 0

    @property
    def iterates(self) -> bool:
        return self.space is not None and self.count > 1

    @property
    def moving(self) -> bool:
        """The argument moves along this dimension's loop."""
        return self.iterates and not self.resident

    @property
    def whole(self) -> bool:
        """The box always covers the whole dimension (contiguity of transfers)."""
        return self.resident or (not self.iterates and self.b == 0 and self.only == self.full)

    def view_start(self, i: int) -> int:
        if not self.iterates:
            return self.b
        return self.a * i + self.b + (self.f0 if i == 0 else 0) + (self.fl if i == self.count - 1 else 0)

    def view_extent(self, i: int) -> int:
        if not self.iterates:
            return self.only
        if i == self.count - 1:
            return self.last
        return self.first if i == 0 else self.std

    def box_start(self, i: int) -> int:
        return 0 if self.resident else self.view_start(i)

    def box_extent(self, i: int) -> int:
        return self.full if self.resident else self.view_extent(i)

    @property
    def max_extent(self) -> int:
        """The box's largest extent (the slot is sized by it)."""
        if self.resident:
            return self.full
        return max(self.std, self.first, self.last) if self.iterates else self.only

    @property
    def total(self) -> int:
        """Sum of the box extents over the loop when moving (the dimension's share of the traffic)."""
        if not self.moving:
            return self.max_extent
        return self.first + self.last + (self.count - 2) * self.std


def constant_dim(name: str, space, full: int, stride: int, count: int = 1, extent: Optional[int] = None,
                 start: int = 0, resident: bool = False) -> DimTiling:
    e = full if extent is None else extent
    return DimTiling(name, space, full, stride, count, resident, b=start, std=e, first=e, last=e, only=e)


@dataclass(frozen=True)
class ArgTiling:
    """How one kernel argument lives in L1 and moves between L2 (or L3) and L1."""

    geom: ArgGeom
    dims: tuple             # DimTiling, outer to inner: non-tiled spaces, then lines (H), then columns (W)
    level: Optional[KernelIteratorT]  # innermost loop that moves it (None: moved once, or never)
    instances: int          # transfers per direction over the kernel (iterations of the loops up to level)
    nbuf: int
    slot_bytes: int
    offset: int = 0         # byte offset in the L1 symbol
    reads: bool = False
    writes: bool = False
    l3: bool = False
    stage: int = 0          # L2 staging slots per direction (L3 arguments)
    stage_offset: int = 0
    whole_stage: bool = False  # an in-out L3 argument whose tiles are visited again: staged whole in L2
    tile_std: int = 0       # padded lines/columns of a standard / last tile (tiled plane)
    tile_last: int = 0
    step: int = 0
    pad_first: int = 0      # PadExec before the first tile / after the last tile
    pad_last: int = 0
    resident_all: bool = False

    # -- names and shortcuts --------------------------------------------------------------------
    @property
    def decl(self):
        return self.geom.decl

    @property
    def name(self) -> str:
        return self.geom.name

    @property
    def kind(self) -> ArgKind:
        return self.geom.kind

    @property
    def item(self) -> int:
        return self.geom.item

    @property
    def w(self) -> int:
        return self.geom.w

    @property
    def h(self) -> int:
        return self.geom.h

    @property
    def orientation(self) -> Optional[T]:
        return self.geom.tile.orientation if self.geom.tile else None

    @property
    def l1_bytes(self) -> int:
        return self.slot_bytes * self.nbuf

    @property
    def l2_bytes(self) -> int:
        """L2 staging bytes of an L3 argument (a ring per direction, or the whole argument)."""
        if not self.l3:
            return 0
        if self.whole_stage:
            return self.geom.l2_bytes
        return self.stage * self.box_bytes_max * (int(self.reads) + int(self.writes))

    @property
    def stage_read_offset(self) -> int:
        return self.stage_offset

    @property
    def stage_write_offset(self) -> int:
        """In-out L3 arguments have a read ring and a write ring, one after the other (staged
        whole: one area both ways)."""
        return self.stage_offset + (self.stage * self.box_bytes_max if self.reads and not self.whole_stage else 0)

    @property
    def revisits(self) -> bool:
        """The same box is moved in more than one instance (a loop of its level that it does
        not depend on, e.g. an output accumulated over an outer reduction loop)."""
        return self.instances > prod(d.count for d in self.dims if d.moving)

    @property
    def l3_bytes(self) -> int:
        """Bytes moved per direction between L3 and L2 over one kernel call."""
        return self.geom.l2_bytes if self.whole_stage else 0

    @property
    def box_bytes_max(self) -> int:
        return prod(d.max_extent for d in self.dims) * self.item

    @property
    def pad_bytes(self) -> int:
        """BottomBuffer bytes reserved before the box in each slot (delay lines)."""
        return self.decl.bottom * self.item

    @property
    def moves(self) -> bool:
        return self.level is not None and (self.reads or self.writes)

    @property
    def role(self) -> str:
        """A one-word description for reports: tile, plane, resident, partial, onetile, dyntile, scratch."""
        k = self.kind
        if k in (ArgKind.ONETILE, ArgKind.DYNTILE, ArgKind.SCRATCH):
            return k.value
        if self.resident_all:
            return "resident"
        if any(d.resident and d.space is not None for d in self.dims):
            return "partial"
        return "tile" if self.geom.tile is not None else "plane"

    @property
    def tiled(self) -> bool:
        return self.role == "tile"

    def dim(self, space) -> Optional[DimTiling]:
        return next((d for d in self.dims if d.space == space), None)

    def _plane_extent(self, d: DimTiling, last: bool) -> int:
        if d.moving:
            return d.last if last else (d.std if d.count > 2 else d.first)
        return d.max_extent

    def tile_w(self, last: bool = False) -> int:
        """Columns of the standard (or last) tile in L1."""
        return self._plane_extent(self.dims[-1], last)

    def tile_h(self, last: bool = False) -> int:
        """Lines of the standard (or last) tile in L1."""
        return self._plane_extent(self.dims[-2], last)

    @property
    def tile_dim(self) -> Optional[DimTiling]:
        t = self.geom.tile
        return self.dim(t.space) if t is not None else None


@dataclass(frozen=True)
class KernelTiling:
    """The tiler's answer for one user kernel."""

    geom: KernelGeom
    choice: Choice
    loops: tuple            # LoopTiling of every kernel loop, outer to inner
    args: tuple             # ArgTiling in KerArgs order
    l1_bytes: int
    budget: int
    traffic_in: int = 0
    traffic_out: int = 0
    traffic_l3_in: int = 0
    traffic_l3_out: int = 0
    l2_bytes: int = 0
    objective: str = ""
    candidates: int = 0     # tilings the objective compared ...
    predicted_candidates: int = 0  # ... of which scheduled and predicted exactly (the time objective)
    predicted: object = None    # schedule.cost.Prediction of the chosen tiling
    schedule: object = field(default=None, compare=False)

    @property
    def kernel(self):
        return self.geom.kernel

    @property
    def name(self) -> str:
        return self.geom.kernel.name

    @property
    def promoted(self) -> bool:
        return self.choice.promoted

    @property
    def partial(self) -> bool:
        return bool(self.choice.partial)

    @property
    def traffic(self) -> int:
        return self.traffic_in + self.traffic_out

    @property
    def traffic_l3(self) -> int:
        return self.traffic_l3_in + self.traffic_l3_out

    def arg(self, name: str) -> ArgTiling:
        return next(a for a in self.args if a.name == name)

    def loop(self, space) -> Optional[LoopTiling]:
        return next((lp for lp in self.loops if lp.space == space), None)

    def count(self, space) -> int:
        lp = self.loop(space)
        return lp.count if lp else 1

    @property
    def ntiles(self) -> int:
        """Tiles of the first tiled space that has tiled arguments (1 if none)."""
        return next((lp.count for lp in self.loops if lp.tiled and lp.dim), 1)

    @property
    def iterations(self) -> int:
        return prod(lp.count for lp in self.loops)

    @property
    def ref_tile(self) -> int:
        return max((a.tile_std for a in self.args if a.tiled), default=0)

    @property
    def staging(self) -> str:
        """'' or e.g. "L3 staging: L2 slots 2 for 'In', 3 for 'Out' (12000 B of L2)"."""
        l3 = [a for a in self.args if a.l3]
        if not l3:
            return ""
        parts = ", ".join(f"all of '{a.name}'" if a.whole_stage else f"{a.stage} for '{a.name}'" for a in l3)
        return f"L3 staging: L2 slots {parts} ({self.l2_bytes} B of L2)"

    def describe(self) -> str:
        if self.promoted:
            text = f"1 tile, all arguments promoted to L1 buffers ({self.l1_bytes} B of {self.budget} B L1)"
        else:
            parts = []
            for lp in self.loops:
                if lp.count <= 1:
                    continue
                if lp.tiled:
                    ref = next((a for a in self.args if a.tiled and a.geom.tile.space == lp.space), None)
                    if ref is None:
                        parts.append(f"{lp.count} x {_short(lp.space)}")
                        continue
                    unit = "lines" if ref.orientation == T.TILE_HOR else "columns"
                    parts.append(f"{lp.count} tiles of {ref.tile_std} {unit} (last {ref.tile_last}) on '{ref.name}'")
                elif lp.kind == SpaceKind.PARAMETRIC:
                    parts.append(f"{_short(lp.space)} in {lp.count} chunks of {lp.std} (last {lp.last})")
                else:
                    parts.append(f"{_short(lp.space)} x {lp.count}")
            head = ", ".join(parts) or "1 tile"
            if self.partial:
                head += ", partial buffer promotion"
            text = f"{head}, {self.l1_bytes} B of {self.budget} B L1"
        return f"{text}; {self.staging}" if self.staging else text


def _short(space) -> str:
    return ("T0", "T1", "T2", "D0", "D1", "D2", "D3")[int(space)]


# ----------------------------------------------------------------------------------------------
# Building


def loop_tilings(kg: KernelGeom, choice: Choice) -> tuple:
    return tuple(_loop_tiling(s, choice) for s in kg.spaces)


def _loop_tiling(s: SpaceGeom, choice: Choice) -> LoopTiling:
    if s.kind == SpaceKind.TILED:
        if not s.dim or choice.promoted:
            return LoopTiling(s.space, s.kind, 1, s.dim, s.dim, s.dim)
        k = choice.size(s.space, s.dim)
        n = -(-s.dim // k)
        return LoopTiling(s.space, s.kind, n, k, s.dim - (n - 1) * k, s.dim)
    if s.kind == SpaceKind.PARAMETRIC:
        c = s.dim if (s.one_tile or choice.promoted) else choice.size(s.space, s.dim)
        n = -(-s.dim // c)
        return LoopTiling(s.space, s.kind, n, c, s.dim - (n - 1) * c, s.dim)
    return LoopTiling(s.space, s.kind, s.dim, 1, 1, s.dim, s.bound)


def _ref_dim(r, lp: LoopTiling, resident: bool) -> DimTiling:
    name, c, n, last = _short(r.space), lp.std, lp.count, lp.last
    if n == 1:
        return constant_dim(name, r.space, r.dim, r.stride, 1, resident=resident)
    if r.revert:
        # chunk i covers [Dim - (i+1)*c, Dim - i*c); the last, smaller one starts at 0
        return DimTiling(name, r.space, r.dim, r.stride, n, resident, a=-c, b=r.dim - c, fl=n * c - r.dim,
                         std=c, first=c, last=last, only=r.dim)
    return DimTiling(name, r.space, r.dim, r.stride, n, resident, a=c, std=c, first=c, last=last, only=r.dim)


def _tile_view(t, lp: LoopTiling, name: str, stride: int, resident: bool, buffer: bool) -> DimTiling:
    n, k = lp.count, lp.std
    if n == 1:
        # a single tile of data: the box is the view (the lines actually used, UsedH of H), so
        # that planes are TILE_W x TILE_H apart in L1 as the basic kernels step them
        span = tile_span(t, k, 1, 0)
        whole = span.start == 0 and span.length == t.dim
        return constant_dim(name, t.space, t.dim, stride, 1, extent=span.length, start=span.start,
                            resident=resident and (whole or buffer))
    s0, s1, sl = tile_span(t, k, n, 0), tile_span(t, k, n, 1), tile_span(t, k, n, n - 1)
    std, _, step = tile_sizes(t, k, n)
    middle = std if n > 2 else s0.length
    # start(i) = i*step - PadBefore for i > 0, 0 for the first tile
    return DimTiling(name, t.space, t.dim, stride, n, resident, a=step, b=s1.start - step, f0=step - s1.start,
                     std=middle, first=s0.length, last=sl.length, only=s0.length)


def _plane_dims(g: ArgGeom, lp: Optional[LoopTiling], resident: bool) -> tuple:
    """(lines, columns) of the plane; one of them tiled when the argument is."""
    t = g.tile
    hd, wd = constant_dim("H", None, g.h, g.w), constant_dim("W", None, g.w, 1)
    if t is None:
        return hd, wd
    name, stride = ("H", g.w) if t.horizontal else ("W", 1)
    if g.kind == ArgKind.DYNTILE:
        # one line (column) per tile: the box holds count of them, the view is the tile's own
        n = lp.count
        d = DimTiling(name, t.space, n, stride, n, True, a=1, std=1, first=1, last=1, only=1)
    else:
        d = _tile_view(t, lp, name, stride, resident, g.kind in (ArgKind.BUFFER, ArgKind.SCRATCH))
    return (d, wd) if t.horizontal else (hd, d)


def _resident_spaces(g: ArgGeom, choice: Choice) -> set:
    if choice.promoted or g.kind in (ArgKind.BUFFER, ArgKind.SCRATCH):
        return {r.space for r in g.refs} | ({g.tile.space} if g.tile else set())
    if g.kind == ArgKind.DYNTILE:
        return {r.space for r in g.refs}
    out = {r.space for r in g.refs if r.resident}
    out |= {sp for name, sp in choice.partial if name == g.name}
    return out


def _arg_tiling(g: ArgGeom, loops: dict, order: list, choice: Choice, end: int, memo: Optional[dict] = None,
                index: int = 0) -> ArgTiling:
    """The argument's tiling, its slot placed after the previous argument's (ending at ``end``):
    4-byte aligned unless O_STACK_PRED. ``memo`` (one kernel's: ``index`` is the argument's
    position in it): reuse the dimensions of an earlier choice with the same loops over the
    argument's spaces."""
    _, (dims, level, box, tile, stack) = _arg_parts(g, loops, order, choice, memo, index)
    instances = prod(loops[sp].count for sp in order[: order.index(level) + 1]) if level is not None else 1
    return _arg_place(g, choice, dims, level, box, tile, instances, end if stack else align(end))


def _arg_parts(g: ArgGeom, loops: dict, order: list, choice: Choice, memo: Optional[dict], index: int) -> tuple:
    """(key, (dims, level, box bytes, tiled plane, O_STACK_PRED)) of an argument; the key names
    everything the parts depend on (None without a memo)."""
    res = _resident_spaces(g, choice)
    if memo is None:
        return None, _arg_dims(g, loops, res, order)
    key = (index, tuple((lp.std, lp.count, sp in res) if (lp := loops.get(sp)) is not None else None
                        for sp in _arg_spaces(g)))
    part = memo.get(key)
    if part is None:
        part = memo[key] = _arg_dims(g, loops, res, order)
    return key, part


def _arg_spaces(g: ArgGeom) -> tuple:
    """The loops an argument's dimensions depend on: its spaces, then its tiled space."""
    return tuple(r.space for r in g.refs) + ((g.tile.space,) if g.tile else ())


def _arg_dims(g: ArgGeom, loops: dict, res: set, order: list) -> tuple:
    """(dims, level, box bytes, (std, last, step, pad first, pad last) of the tiled plane,
    O_STACK_PRED)."""
    dims = [_ref_dim(r, loops[r.space], r.space in res) for r in g.refs]
    lp = loops.get(g.tile.space) if g.tile else None
    dims += list(_plane_dims(g, lp, g.tile is not None and g.tile.space in res))
    dims = tuple(dims)
    moving = {d.space for d in dims if d.moving}
    level = next((sp for sp in reversed(order) if sp in moving), None)
    box = prod(d.max_extent for d in dims) * g.item
    t = g.tile
    tile = (0, 0, 0, 0, 0)
    if t is not None and lp is not None and g.kind != ArgKind.DYNTILE:
        std, last, step = tile_sizes(t, lp.std, lp.count)
        tile = (std, last, step, tile_span(t, lp.std, lp.count, 0).pad_before,
                tile_span(t, lp.std, lp.count, lp.count - 1).pad_after)
    return dims, level, box, tile, g.decl.has(O.O_STACK_PRED)


def _arg_place(g: ArgGeom, choice: Choice, dims: tuple, level, box: int, tile: tuple, instances: int,
               offset: int) -> ArgTiling:
    extra = (g.decl.bottom + g.decl.top) * g.item
    slot = align(box + extra)
    db = g.decl.has(O.O_DB) and (not choice.single_buffer or g.next_db)
    nbuf = 2 if db and g.kind in (ArgKind.DATA, ArgKind.ONETILE) and instances > 1 else 1
    std, last, step, pfirst, plast = tile
    return ArgTiling(g, dims, level if g.kind == ArgKind.DATA or g.kind == ArgKind.ONETILE else None,
                     instances if g.kind in (ArgKind.DATA, ArgKind.ONETILE) else 1, nbuf, slot,
                     offset=offset, reads=g.reads, writes=g.writes, l3=g.decl.in_l3 and (g.reads or g.writes),
                     tile_std=std, tile_last=last, step=step, pad_first=pfirst, pad_last=plast,
                     resident_all=all(not d.moving for d in dims) and g.kind in (ArgKind.DATA, ArgKind.BUFFER)
                     and (choice.promoted or g.kind == ArgKind.BUFFER))


def arg_traffic(a: ArgTiling, loops: dict, order: list) -> int:
    """Bytes moved per direction over one kernel call (sum of the boxes of every instance)."""
    if not (a.reads or a.writes):
        return 0
    by_space = {d.space: d for d in a.dims if d.space is not None}
    enumerated = order[: order.index(a.level) + 1] if a.level is not None else []
    total = a.item
    for sp in enumerated:
        d = by_space.get(sp)
        total *= d.total if d is not None and d.moving else loops[sp].count
    for d in a.dims:
        if d.space not in enumerated or not d.moving:
            total *= d.max_extent
    return total


def build_tiling(kg: KernelGeom, choice: Choice, budget: int, stage_depth: Optional[int] = None,
                 memo: Optional[dict] = None) -> KernelTiling:
    """The tiling of ``choice``. ``memo``: a dictionary kept by the caller across the choices of
    one kernel (same ``kg``) to reuse the parts of earlier tilings that depend only on the loops
    of an argument's own spaces (the result is the same with or without it)."""
    loops = loop_tilings(kg, choice)
    by_space = {lp.space: lp for lp in loops}
    order = [lp.space for lp in loops]
    placed, end = [], 0
    for i, g in enumerate(kg.args):
        a = _staged_whole(_arg_tiling(g, by_space, order, choice, end, memo, i))
        placed.append(a)
        end = a.offset + a.l1_bytes
    total = align(end)
    moved = [(a, arg_traffic(a, by_space, order)) for a in placed]
    l3 = [(a, a.l3_bytes or b) for a, b in moved if a.l3]
    t = KernelTiling(kg, choice, loops, tuple(placed), total, budget,
                     traffic_in=sum(b for a, b in moved if a.reads), traffic_out=sum(b for a, b in moved if a.writes),
                     traffic_l3_in=sum(b for a, b in l3 if a.reads), traffic_l3_out=sum(b for a, b in l3 if a.writes))
    default = 1 if choice.single_buffer else 2
    if not any(a.l3 for a in placed):
        return t
    return with_stages(t, {a.name: stage_depth or default for a in placed if a.l3})


def _staged_whole(a: ArgTiling) -> ArgTiling:
    if a.l3 and a.reads and a.writes and a.revisits:
        # the L3 round trip of one visit would race the read of the next (RAW through L3):
        # the argument lives in L2 for the call, read from L3 first and written back last
        return replace(a, whole_stage=True)
    return a


_NONE: frozenset = frozenset()


def arg_tilings(kg: KernelGeom, choice: Choice, memo: dict) -> tuple:
    """(loops, argument tilings, L1 bytes) of ``choice``, as :func:`build_tiling` makes them but
    without the L1 layout (every argument at offset 0; the L1 bytes are the layout's total), the
    traffic and the L2 staging slots: what the cycle estimate reads, for the many choices it
    ranks. ``memo`` (kept by the caller across the choices of one kernel) shares the loops and
    each argument's tiling with earlier choices that tile them the same way."""
    lkey = ("loops", choice.sizes, choice.promoted)
    hit = memo.get(lkey)
    if hit is None:
        # each loop once per size (loop_tilings, one space at a time)
        per = memo.setdefault("loop", {})
        sizes = dict(choice.sizes)
        loops = []
        for s in kg.spaces:
            one = (s.space, sizes.get(s.space), choice.promoted)
            lp = per.get(one)
            if lp is None:
                lp = per[one] = _loop_tiling(s, choice)
            loops.append(lp)
        loops = tuple(loops)
        # instances of an argument moved at a loop: the iterations of that loop and the outer ones
        instances, n = {}, 1
        for lp in loops:
            n *= lp.count
            instances[lp.space] = n
        hit = memo[lkey] = (loops, {lp.space: lp for lp in loops}, [lp.space for lp in loops], instances,
                            dict(choice.sizes))
    loops, by_space, order, instances_at, sizes = hit
    static = memo.get("args")
    if static is None:
        static = memo["args"] = [(g, _arg_spaces(g), _resident_spaces(g, Choice()), _resident_spaces(g, Choice(
            promoted=True)), g.kind not in (ArgKind.BUFFER, ArgKind.SCRATCH, ArgKind.DYNTILE)) for g in kg.args]
    promoted, partial = choice.promoted, choice.partial
    mines = memo.get(("partial", partial))
    if mines is None:   # per argument, the spaces it is promoted over individually
        mines = memo["partial", partial] = [frozenset(sp for name, sp in partial if name == g.name)
                                            if partial and own else _NONE for g, _, _, _, own in static]
    args, end = [], 0
    for i, (g, spaces, base, every, _) in enumerate(static):
        mine = mines[i]
        # the argument's dims depend on these (the loops of its spaces follow from their sizes)
        key = (i, promoted, mine, tuple([sizes.get(sp) for sp in spaces]))
        part = memo.get(key)
        if part is None:
            res = every if promoted else base | mine
            part = memo[key] = _arg_dims(g, by_space, res, order)
        dims, level, box, tile, stack = part
        instances = instances_at[level] if level is not None else 1
        akey = (key, instances, choice.single_buffer)
        a = memo.get(akey)
        if a is None:
            a = memo[akey] = _staged_whole(_arg_place(g, choice, dims, level, box, tile, instances, 0))
        end = (end if stack else -(-end // L1_ALIGN) * L1_ALIGN) + a.slot_bytes * a.nbuf
        args.append(a)
    return loops, tuple(args), align(end)


# ----------------------------------------------------------------------------------------------
# L3 staging


def with_stages(t: KernelTiling, stages: dict) -> KernelTiling:
    """Give the L3 arguments ``stages[name]`` L2 staging slots (capped by their instance count)
    and lay the slots out in the L2 symbol in KerArgs order."""
    args, offset = [], 0
    for a in t.args:
        if a.l3:
            a = replace(a, stage=stage_depth(a, stages.get(a.name, 2)), stage_offset=offset)
            offset += a.l2_bytes
        args.append(a)
    return replace(t, args=tuple(args), l2_bytes=offset)


def stage_depth(a: ArgTiling, depth: int) -> int:
    """The L2 staging slots an L3 argument gets when ``depth`` are asked for: one for an argument
    staged whole, else at least one and no more than its instances."""
    return 1 if a.whole_stage else max(1, min(depth, a.instances))


def staging_bytes(a: ArgTiling, depth: int) -> int:
    """L2 staging bytes of the L3 argument ``a`` given ``depth`` slots (as :func:`with_stages`
    lays it out), without laying out the kernel's other arguments."""
    return replace(a, stage=stage_depth(a, depth)).l2_bytes


def l2_fits(t: KernelTiling, l2_budget: Optional[int]) -> bool:
    return l2_budget is None or t.l2_bytes <= l2_budget


__all__ = ["Choice", "LoopTiling", "DimTiling", "ArgTiling", "KernelTiling", "align", "loop_tilings", "build_tiling",
           "arg_tilings", "arg_traffic", "with_stages", "stage_depth", "staging_bytes", "l2_fits", "L1_ALIGN", "SpaceGeom"]
