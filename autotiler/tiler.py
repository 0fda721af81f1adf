"""Tile solver: choose, per user kernel, the number of tiles and every argument's L1 layout.

Model of a user kernel (iteration order 2)::

    for OutPlane (Nop):  for Tile (N):  for InPlane (Nip):  <basic kernel calls>

Every tiled argument is cut along its tiled dimension (H for horizontal tiling, W for vertical)
into the same number of tiles N. Argument ``a`` spans ``E_a = D_a - overlap_a`` "useful" lines;
the arguments' ``E`` must be integer multiples ``m_a`` of the smallest one, ``E_min``. A tiling is
a step ``k`` in units of ``E_min``: tile ``i`` of ``a`` starts at line ``i*m_a*k`` and has
``m_a*k + overlap_a`` lines (the last one fewer), and ``N = ceil(E_min / k)``.

An argument depends on a subset of the loops (its *space*): tiled arguments on Tile, 3D inputs
on InPlane, 3D outputs on OutPlane, 4D inputs on both planes. Loops of extent 1 are dropped. An
argument is moved at every iteration of the innermost loop of its space (its *level*), so a
double-buffered argument needs two L1 slots only when it has more than one instance.

L1 footprint per argument: two slots if double buffered (O_DB) and moved more than once, else
one; a slot is one tile (tiled), one plane (O_NTILED), a proportional tile (ONETILE buffer),
``N`` tile-lines (DYNTILE buffer) or all planes (buffers, and every argument under buffer
promotion).

L3-homed arguments (O_L2DB) also get L2 staging slots in the L2 symbol (per direction): the
micro-DMA fills/drains them while the cluster DMA moves the tile between its slot and L1. One
slot serialises the two DMAs (the naive baseline), two is the original's scheme (the uDMA works
two instances ahead of the consumer), three gives the uDMA one more instance of slack; the L2
budget bounds the slots.

Objectives (``OBJECTIVES``) order the feasible tilings. The default, ``"time"``, minimises the
predicted cycles (:mod:`autotiler.costmodel`), then traffic, then L1 and L2 use, and takes a third
staging slot only for a gain of at least ``TRIPLE_MIN_GAIN``. ``"original"`` takes the largest tile
that fits: with the guide's budgets it reproduces the guide's tilings (MatAdd 200x300 int at
51200 B: 30 tiles of 10 lines; MatrixMax: 10 tiles of 31 lines, last 21).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Callable, Optional

from .constants import (
    KernelArgConstraints_T as C,
)
from .constants import (
    KernelIteratorT as I,
)
from .constants import (
    Object_Type_T as O,
)
from .constants import (
    Tile_Orientation_T as T,
)
from .errors import ModelError, TilingError
from .model import KerArgDecl, UserKernelDecl

L1_ALIGN = 4  # every L1 slot starts on a 4-byte boundary (word access, v2s vectors)

ROLE_TILE = "tile"          # a moving tile of the L2 plane
ROLE_PLANE = "plane"        # a whole plane per instance (O_NTILED)
ROLE_RESIDENT = "resident"  # all planes in L1 for the whole kernel (buffers, promotion)
ROLE_ONETILE = "onetile"    # L1-only buffer of one tile
ROLE_DYNTILE = "dyntile"    # L1-only buffer of one tile-line per tile
ROLE_PARTIAL = "partial"    # all input planes of an untiled argument, per output plane
                            # (AT_KERNEL_PARTIAL_BUFFER_PROMOTE)


class AutoTilerWarning(UserWarning):
    """Emitted when a kernel has no tiling and AT_KERNEL_NOSOLUTION_ERROR is off."""


def _align(n: int) -> int:
    return -(-n // L1_ALIGN) * L1_ALIGN


@dataclass(frozen=True)
class ArgTiling:
    """How one kernel argument lives in L1 and moves between L2 and L1."""

    decl: KerArgDecl
    orientation: T
    role: str
    space: tuple            # iterators (nest order) this argument depends on, extent > 1 only
    level: Optional[I]      # innermost loop of the space: moved at each of its iterations
    reads: bool             # L2 -> L1 transfers
    writes: bool            # L1 -> L2 transfers
    nbuf: int               # L1 slots (2 = double buffered)
    offset: int             # byte offset in the L1 symbol
    slot_bytes: int
    plane_bytes: int        # one W x H plane in bytes
    planes: int             # planes of the argument in L2
    plane_step: int         # planes skipped per plane index (NextPlaneUpdate)
    tile_std: int           # tile size along the tiled dimension (incl. overlap), lines/columns
    tile_last: int
    step: int               # distance between consecutive tiles, lines/columns
    partial_planes: int = 0  # planes held by a partially promoted argument (ROLE_PARTIAL)
    instances: int = 1      # transfers per direction over the whole kernel (iterations up to `level`)
    l3: bool = False        # home in L3 (O_L2DB): every transfer is staged through L2 by the uDMA
    stage: int = 0          # L2 staging slots per direction (L3 arguments): 1 serial, 2 or 3 pipelined
    stage_offset: int = 0   # byte offset of the staging slots in the L2 symbol

    @property
    def stage_read_offset(self) -> int:
        return self.stage_offset

    @property
    def stage_write_offset(self) -> int:
        """In-out L3 arguments have a read ring and a write ring, one after the other."""
        return self.stage_offset + (self.stage * self.slot_bytes if self.reads else 0)

    @property
    def l2_bytes(self) -> int:
        return self.stage * self.slot_bytes * (int(self.reads) + int(self.writes)) if self.l3 else 0

    @property
    def name(self) -> str:
        return self.decl.name

    @property
    def l1_bytes(self) -> int:
        return self.slot_bytes * self.nbuf

    @property
    def item(self) -> int:
        return self.decl.item_size

    @property
    def w(self) -> int:
        return self.decl.w

    @property
    def h(self) -> int:
        return self.decl.h

    @property
    def tiled(self) -> bool:
        return self.role == ROLE_TILE

    def tile_w(self, last: bool = False) -> int:
        if self.role in (ROLE_TILE, ROLE_ONETILE) and self.orientation == T.TILE_VER:
            return self.tile_last if last else self.tile_std
        return self.w

    def tile_h(self, last: bool = False) -> int:
        if self.role in (ROLE_TILE, ROLE_ONETILE) and self.orientation == T.TILE_HOR:
            return self.tile_last if last else self.tile_std
        if self.role == ROLE_DYNTILE and self.orientation == T.TILE_HOR:
            return 1
        return self.h

    def tile_bytes(self, last: bool = False) -> int:
        return self.tile_w(last) * self.tile_h(last) * self.item

    @property
    def strided(self) -> bool:
        """A vertical tile narrower than its plane is not contiguous in L2: it needs 2D DMA."""
        return self.role == ROLE_TILE and self.orientation == T.TILE_VER and self.h > 1 and self.tile_std < self.w

    def line_bytes(self) -> int:
        """Bytes per line of the tiled dimension (a row for horizontal, a column for vertical)."""
        return (self.w if self.orientation == T.TILE_HOR else self.h) * self.item


@dataclass(frozen=True)
class KernelTiling:
    """The solver's answer for one user kernel."""

    kernel: UserKernelDecl
    ntiles: int
    loops: tuple            # ((iterator, extent), ...) in nest order, extent > 1 only
    args: tuple             # ArgTiling in KerArgs order
    l1_bytes: int
    budget: int
    promoted: bool
    objective: str
    traffic_in: int         # bytes L2 -> L1 over the whole kernel
    traffic_out: int        # bytes L1 -> L2
    candidates: int         # feasible tilings considered
    partial: bool = False   # some argument is partially promoted
    predicted: object = None  # costmodel.Prediction of the chosen tiling (when a platform is known)
    l2_bytes: int = 0       # L2 staging of the L3 arguments (in the L2 symbol)
    traffic_l3_in: int = 0  # bytes L3 -> L2
    traffic_l3_out: int = 0  # bytes L2 -> L3

    @property
    def name(self) -> str:
        return self.kernel.name

    @property
    def traffic(self) -> int:
        return self.traffic_in + self.traffic_out

    @property
    def traffic_l3(self) -> int:
        return self.traffic_l3_in + self.traffic_l3_out

    @property
    def staging(self) -> str:
        """'' or e.g. "L3 staging: 2 L2 slots for 'In', 3 for 'Out' (12000 B of L2)"."""
        l3 = [a for a in self.args if a.l3]
        if not l3:
            return ""
        parts = ", ".join(f"{a.stage} for '{a.name}'" for a in l3)
        return f"L3 staging: L2 slots {parts} ({self.l2_bytes} B of L2)"

    def arg(self, name: str) -> ArgTiling:
        return next(a for a in self.args if a.name == name)

    def extent(self, it: I) -> int:
        return dict(self.loops).get(it, 1)

    def describe(self) -> str:
        ref = next((a for a in self.args if a.tiled), None)
        if self.promoted:
            return f"1 tile, all arguments promoted to L1 buffers ({self.l1_bytes} B of {self.budget} B L1)"
        if ref is None or self.ntiles == 1:
            head = "1 tile"
        elif self.partial:
            unit = "lines" if ref.orientation == T.TILE_HOR else "columns"
            head = (f"{self.ntiles} tiles of {ref.tile_std} {unit} (last {ref.tile_last}) on '{ref.name}', "
                    f"partial buffer promotion")
        else:
            unit = "lines" if ref.orientation == T.TILE_HOR else "columns"
            head = f"{self.ntiles} tiles of {ref.tile_std} {unit} (last {ref.tile_last}) on '{ref.name}'"
        text = f"{head}, {self.l1_bytes} B of {self.budget} B L1"
        return f"{text}; {self.staging}" if self.staging else text

    @property
    def ref_tile(self) -> int:
        return max((a.tile_std for a in self.args if a.tiled), default=0)


@dataclass(frozen=True)
class SolverOptions:
    budget: int
    promote: bool = True            # AT_KERNEL_BUFFER_PROMOTE
    partial_promote: bool = True    # AT_KERNEL_PARTIAL_BUFFER_PROMOTE
    nosolution_error: bool = True   # AT_KERNEL_NOSOLUTION_ERROR
    objective: str = "time"
    platform: object = None
    libs: object = None             # basic kernels, for predicted time
    l2_budget: Optional[int] = None  # bytes of the L2 symbol for L3 staging (None: unlimited)


# ----------------------------------------------------------------------------------------------
# Geometry


@dataclass(frozen=True)
class _Geom:
    decl: KerArgDecl
    orientation: T
    dim: int        # size along the tiled dimension
    useful: int     # dim - overlap
    ratio: int      # useful / E_min


def _orientation(arg: KerArgDecl, default: T) -> T:
    if arg.constraints & C.OBJ_CONSTRAINTS_TILE_HOR:
        return T.TILE_HOR
    if arg.constraints & C.OBJ_CONSTRAINTS_TILE_VER:
        return T.TILE_VER
    return default


def _participates(arg: KerArgDecl) -> bool:
    """Arguments whose tile size follows the common tile count (DYNTILE follows N, not k)."""
    return arg.is_tiled and not arg.has(O.O_DYNTILE)


def _geometries(uk: UserKernelDecl) -> dict:
    raw = {}
    for a in uk.kerargs:
        orient = _orientation(a, uk.orientation)
        dim = a.h if orient == T.TILE_HOR else a.w
        raw[a.name] = (a, orient, dim, dim - a.overlap)
    tiled = [v for v in raw.values() if _participates(v[0])]
    for a, _, dim, useful in tiled:
        if useful <= 0:
            raise ModelError(f"TileOverlap {a.overlap} leaves no useful line in a tiled dimension of {dim}",
                             where=a.where, kernel=uk.name, arg=a.name,
                             hint="overlap must be smaller than the tiled dimension")
    e_min = min((v[3] for v in tiled), default=1)
    geoms = {}
    for name, (a, orient, dim, useful) in raw.items():
        ratio = 1
        if _participates(a):
            if useful % e_min:
                ref = min(tiled, key=lambda v: v[3])[0]
                raise ModelError(
                    f"tiled size {useful} (dimension {dim} minus overlap {a.overlap}) is not a multiple of "
                    f"{e_min}, the size of '{ref.name}'", where=a.where, kernel=uk.name, arg=a.name,
                    hint="tiled arguments must have sizes in integer ratios (e.g. 2:1 for a 2x2 pooling)")
            ratio = useful // e_min
        geoms[name] = _Geom(a, orient, dim, useful, ratio)
    return geoms


def _space(a: KerArgDecl, ntiles: int, nip: int, nop: int, promoted: bool, partial: bool = False) -> tuple:
    """Iterators (nest order: OutPlane, Tile, InPlane) the argument's instances depend on."""
    if promoted or a.is_buffer:
        return ()
    deps = set()
    if a.is_tiled and ntiles > 1:
        deps.add(I.KER_TILE)
    if a.ndim == 4:
        deps |= {I.KER_IN_PLANE, I.KER_OUT_PLANE}
    elif a.ndim == 3:
        deps.add(I.KER_IN_PLANE if a.is_in else I.KER_OUT_PLANE)
    if partial:
        deps.discard(I.KER_IN_PLANE)
    extents = {I.KER_OUT_PLANE: nop, I.KER_TILE: ntiles, I.KER_IN_PLANE: nip}
    return tuple(it for it in (I.KER_OUT_PLANE, I.KER_TILE, I.KER_IN_PLANE) if it in deps and extents[it] > 1)


def _planes(a: KerArgDecl, nip: int, nop: int) -> int:
    if a.ndim == 4:
        return nip * nop
    if a.ndim == 3:
        return nip if a.is_in else nop
    return 1


# ----------------------------------------------------------------------------------------------
# Building one candidate


def partial_candidate(a: KerArgDecl, uk: UserKernelDecl) -> bool:
    """An untiled input moved once per input plane: its input planes can stay resident."""
    return (a.is_in and not a.is_out and not a.is_buffer and not a.is_tiled and a.ndim >= 3
            and uk.nip > 1 and uk.dims.w > 0)


def _arg_tiling(g: _Geom, uk: UserKernelDecl, k: Optional[int], ntiles: int, promoted: bool,
                partial: bool = False, single_buffer: bool = False) -> ArgTiling:
    a = g.decl
    nip, nop = uk.nip, uk.nop
    planes = _planes(a, nip, nop)
    plane_bytes = a.w * a.h * a.item_size
    partial = partial and not promoted and partial_candidate(a, uk)
    space = _space(a, ntiles, nip, nop, promoted, partial)
    level = space[-1] if space else None
    role, tile_std, tile_last, step = _role_and_tile(g, k, ntiles, promoted)
    if partial:
        role = ROLE_PARTIAL
    slot = _slot_bytes(a, g.orientation, role, tile_std, ntiles, planes, plane_bytes, nip)
    moves = bool(space)
    nbuf = 2 if (moves and a.has(O.O_DB)) or (role == ROLE_ONETILE and a.has(O.O_DB)) else 1
    if single_buffer:
        nbuf = 1
    is_data = role in (ROLE_TILE, ROLE_PLANE, ROLE_RESIDENT, ROLE_PARTIAL)
    return ArgTiling(
        decl=a, orientation=g.orientation, role=role, space=space, level=level,
        reads=is_data and a.is_in, writes=is_data and a.is_out, nbuf=nbuf, offset=0, slot_bytes=_align(slot),
        plane_bytes=plane_bytes, planes=planes, plane_step=a.next_plane_update or 1,
        tile_std=tile_std, tile_last=tile_last, step=step, partial_planes=nip if partial else 0)


def _role_and_tile(g: _Geom, k: Optional[int], ntiles: int, promoted: bool):
    a = g.decl
    if a.has(O.O_DYNTILE):
        return ROLE_DYNTILE, 1, 1, 1
    if a.has(O.O_ONETILE):
        if k is None:
            return ROLE_ONETILE, g.dim, g.dim, 0
        std = g.ratio * k + a.overlap
        return ROLE_ONETILE, min(std, g.dim), _last(g, k, ntiles), g.ratio * k
    if promoted or a.is_buffer:
        std = g.ratio * k + a.overlap if (k is not None and a.is_tiled) else g.dim
        step = g.ratio * k if (k is not None and a.is_tiled) else 0
        last = _last(g, k, ntiles) if (k is not None and a.is_tiled) else g.dim
        return ROLE_RESIDENT, min(std, g.dim), last, step
    if not a.is_tiled:
        return ROLE_PLANE, g.dim, g.dim, 0
    if k is None:
        return ROLE_TILE, g.dim, g.dim, g.useful
    return ROLE_TILE, min(g.ratio * k + a.overlap, g.dim), _last(g, k, ntiles), g.ratio * k


def _last(g: _Geom, k: int, ntiles: int) -> int:
    return g.useful - (ntiles - 1) * g.ratio * k + g.decl.overlap


def _slot_bytes(a: KerArgDecl, orient: T, role: str, tile_std: int, ntiles: int, planes: int,
                plane_bytes: int, nip: int = 1) -> int:
    line = (a.w if orient == T.TILE_HOR else a.h) * a.item_size
    if role == ROLE_PARTIAL:
        return plane_bytes * nip
    if role in (ROLE_TILE, ROLE_ONETILE):
        return tile_std * line
    if role == ROLE_DYNTILE:
        return ntiles * line * (planes if a.ndim > 2 else 1)
    if role == ROLE_RESIDENT:
        return plane_bytes * planes
    return plane_bytes


def _layout(args: list) -> tuple:
    """Place arguments one after another in KerArgs order, each slot 4-byte aligned."""
    placed, offset = [], 0
    for a in args:
        placed.append(replace(a, offset=offset))
        offset += a.l1_bytes
    return tuple(placed), offset


def _transfers(a: ArgTiling, extents: dict, ntiles: int) -> int:
    """Bytes moved per direction for one argument over the whole kernel."""
    if a.role == ROLE_RESIDENT:
        return a.plane_bytes * a.planes
    if a.role not in (ROLE_TILE, ROLE_PLANE, ROLE_PARTIAL):
        return 0
    outer = 1
    nest = (I.KER_OUT_PLANE, I.KER_TILE, I.KER_IN_PLANE)
    if a.role == ROLE_PARTIAL:
        block = a.partial_planes * a.plane_bytes
        return block * (extents.get(I.KER_OUT_PLANE, 1) if a.level is not None else 1)
    if a.level is None:
        return a.tile_bytes() if a.role == ROLE_TILE else a.plane_bytes
    for it in nest[: nest.index(a.level) + 1]:
        outer *= extents.get(it, 1)
    if a.role == ROLE_TILE and I.KER_TILE in a.space:
        per_sweep = (ntiles - 1) * a.tile_bytes() + a.tile_bytes(last=True)
        return outer // ntiles * per_sweep
    return outer * (a.tile_bytes() if a.role == ROLE_TILE else a.plane_bytes)


def levels_upto(loops: tuple, level: Optional[I]) -> list:
    """Existing loops up to ``level`` (outermost first): they number an argument's instances."""
    if level is None:
        return []
    its = [it for it, _ in loops]
    return its[: its.index(level) + 1]


def decode_instance(loops: tuple, level: Optional[I], j: int) -> dict:
    """Loop indices of instance ``j`` of an argument moved at ``level``."""
    extents, idx = dict(loops), {}
    for it in reversed(levels_upto(loops, level)):
        idx[it] = j % extents[it]
        j //= extents[it]
    return idx


def _instances(a: ArgTiling, loops: tuple) -> int:
    """Iterations of the loops up to the argument's level: how often it moves."""
    extents = dict(loops)
    n = 1
    for it in levels_upto(loops, a.level):
        n *= extents[it]
    return n


def build_tiling(uk: UserKernelDecl, geoms: dict, k: Optional[int], ntiles: int, promoted: bool,
                 budget: int, objective: str = "traffic", candidates: int = 0, partial: bool = False,
                 single_buffer: bool = False) -> KernelTiling:
    args = [_arg_tiling(geoms[a.name], uk, k, ntiles, promoted, partial, single_buffer) for a in uk.kerargs]
    placed, total = _layout(args)
    loops = tuple((it, n) for it, n in ((I.KER_OUT_PLANE, uk.nop), (I.KER_TILE, ntiles),
                                        (I.KER_IN_PLANE, uk.nip)) if n > 1)
    placed = tuple(replace(a, instances=_instances(a, loops), l3=a.decl.in_l3 and (a.reads or a.writes))
                   for a in placed)
    extents = dict(loops)
    moved = [(a, _transfers(a, extents, ntiles)) for a in placed]  # bytes per direction
    t = KernelTiling(kernel=uk, ntiles=ntiles, loops=loops, args=placed, l1_bytes=total, budget=budget,
                     promoted=promoted, objective=objective,
                     traffic_in=sum(b for a, b in moved if a.reads), traffic_out=sum(b for a, b in moved if a.writes),
                     candidates=candidates, partial=any(a.role == ROLE_PARTIAL for a in placed),
                     traffic_l3_in=sum(b for a, b in moved if a.reads and a.l3),
                     traffic_l3_out=sum(b for a, b in moved if a.writes and a.l3))
    return with_stages(t, {a.name: 1 if single_buffer else 2 for a in placed if a.l3})


# ----------------------------------------------------------------------------------------------
# L3 staging


def with_stages(t: KernelTiling, stages: dict) -> KernelTiling:
    """Give the L3 arguments ``stages[name]`` L2 staging slots (capped by their instance count)
    and lay the slots out in the L2 symbol in KerArgs order."""
    args, offset = [], 0
    for a in t.args:
        if a.l3:
            a = replace(a, stage=max(1, min(stages[a.name], a.instances)), stage_offset=offset)
            offset += a.l2_bytes
        args.append(a)
    return replace(t, args=tuple(args), l2_bytes=offset)


MAX_STAGE_COMBINATIONS = 16  # past this, all L3 arguments share one depth


def stage_variants(t: KernelTiling, single_buffer: bool = False) -> list:
    """The staging depths worth comparing: double (2) and triple (3) L2 buffering per moving L3
    argument, deduplicated (an argument moved twice cannot use a third slot); single (1) for the
    naive baseline."""
    moving = [a for a in t.args if a.l3 and a.instances > 1]
    if single_buffer or not moving:
        return [t]
    if 2 ** len(moving) <= MAX_STAGE_COMBINATIONS:
        combos = [{}]
        for a in moving:
            combos = [{**c, a.name: s} for c in combos for s in (2, 3)]
    else:
        combos = [{a.name: s for a in moving} for s in (2, 3)]
    out, seen = [], set()
    for combo in combos:
        v = with_stages(t, {a.name: combo.get(a.name, 1) for a in t.args if a.l3})
        key = tuple(a.stage for a in v.args)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


# ----------------------------------------------------------------------------------------------
# Constraints and search


def _meets_constraints(g: _Geom, tile: int, ntiles: int) -> bool:
    c, pref = g.decl.constraints, g.decl.preferred
    if ntiles == 1:
        return True  # constraints apply to all tiles but the last
    if c & C.OBJ_CONSTRAINTS_EVEN and tile % 2:
        return False
    if c & C.OBJ_CONSTRAINTS_ODD and not tile % 2:
        return False
    if c & C.OBJ_CONSTRAINTS_ONEPREFTILE:
        return pref > 0 and tile == pref
    if pref and tile % pref:
        return False
    return True


def _candidate_steps(uk: UserKernelDecl, geoms: dict, constrained: bool = True):
    """Yield (k, ntiles) for every legal step k, largest tile first."""
    tiled = [g for g in geoms.values() if _participates(g.decl)]
    if not tiled:
        yield None, 1
        return
    e_min = min(g.useful for g in tiled)
    for k in range(e_min, 0, -1):
        n = -(-e_min // k)
        if not constrained or all(_meets_constraints(g, g.ratio * k + g.decl.overlap, n) for g in tiled):
            yield k, n


@dataclass(frozen=True)
class Objective:
    """How to choose among feasible tilings: ``key(tiling, ctx)``, smallest is best.
    ``single_buffer``/``promote``/``partial`` restrict the candidates (None: as the options say)."""

    key: Callable
    doc: str
    single_buffer: bool = False
    promote: Optional[bool] = None
    partial: Optional[bool] = None
    promote_only: bool = True   # when everything fits, promotion is the only candidate (the original's rule)


def _predicted(t: KernelTiling, ctx: SolverOptions) -> int:
    from .costmodel import predict

    return predict(t, ctx.libs or {}, ctx.platform).cycles


OBJECTIVES: dict = {
    "time": Objective(lambda t, c: (_predicted(t, c), t.traffic, t.l1_bytes, t.l2_bytes, t.ntiles),
                      "minimise predicted cycles (the simulator's cost model), then traffic, then L1 use; "
                      "a promoted (all-in-L1) tiling competes with pipelined ones", promote_only=False),
    "original": Objective(lambda t, c: (t.ntiles, -t.ref_tile, t.traffic, t.l2_bytes), "the original's rule: the largest "
                          "tile that fits (what the guide's examples show)", partial=False),
    "traffic": Objective(lambda t, c: (t.traffic, t.ntiles, -t.ref_tile, t.l1_bytes, t.l2_bytes),
                         "minimise L2<->L1 traffic, then the number of tiles, then prefer larger tiles"),
    "naive": Objective(lambda t, c: (-t.ntiles, t.l1_bytes, t.l2_bytes), "baseline: smallest legal tile, single "
                       "buffering, no promotion", single_buffer=True, promote=False, partial=False),
    "max_l1": Objective(lambda t, c: (-t.l1_bytes, t.ntiles, t.l2_bytes), "maximise L1 use (what DORY does)", partial=False),
}


def register_objective(name: str, key: Callable, doc: str = "", **restrictions) -> None:
    """Add an objective: ``key(KernelTiling, SolverOptions)`` returns a sort key, smallest is best."""
    OBJECTIVES[name] = Objective(key, doc, **restrictions)


def solve(uk: UserKernelDecl, options: SolverOptions) -> Optional[KernelTiling]:
    """Choose the tiling of ``uk``; raise TilingError (or warn and return None) when none fits."""
    geoms = _geometries(uk)
    if options.objective not in OBJECTIVES:
        raise ModelError(f"unknown tiling objective '{options.objective}'", where=uk.where, kernel=uk.name,
                         hint=f"objectives: {', '.join(sorted(OBJECTIVES))}")
    objective = OBJECTIVES[options.objective]
    feasible = list(feasible_tilings(uk, options, geoms, stages=False))
    if not feasible:
        staged = list(feasible_tilings(uk, replace(options, l2_budget=None), geoms, stages=False))
        if staged:
            return _no_l2_solution(uk, staged, options)
        return _no_solution(uk, geoms, options)
    scored = [(objective.key(t, options), i, t) for i, t in enumerate(feasible)]
    if options.objective == "time":
        scored = _restaged(scored, objective, options)
    best = min(scored, key=lambda s: s[:2])
    if options.objective == "time":
        best = _prefer_less_staging(best, scored)
    best = best[2]
    predicted = None
    if options.platform is not None:
        from .costmodel import predict

        predicted = predict(best, options.libs or {}, options.platform)
    return replace(best, objective=options.objective, candidates=len(feasible), predicted=predicted)


TRIPLE_MIN_GAIN = 0.005  # a third L2 staging slot must save at least 0.5% of the predicted time
RESTAGED_CANDIDATES = 4  # tilings whose L2 staging depths the time objective varies


def _restaged(scored: list, objective: Objective, options: SolverOptions) -> list:
    """Add the staging-depth variants of the best few tilings (each with the default depth) to
    ``scored``. A depth changes the time by a few percent at most, so the search over depths is
    limited to tilings already near the best instead of multiplying every candidate."""
    top = sorted(scored, key=lambda s: s[:2])[:RESTAGED_CANDIDATES]
    extra, index = [], len(scored)
    for _, _, t in top:
        for v in stage_variants(t):
            if v.args != t.args and l2_fits(v, options.l2_budget):
                extra.append((objective.key(v, options), index, v))
                index += 1
    return scored + extra


def _prefer_less_staging(best: tuple, scored: list) -> tuple:
    """Triple L2 buffering costs L2 that the application (or a graph) shares: take it only when
    the model shows a real gain over the best tiling staging at most two slots per argument.
    ``scored``: (time key, index, tiling); the key starts with the predicted cycles."""
    if all(a.stage <= 2 for a in best[2].args):
        return best
    double = [s for s in scored if all(a.stage <= 2 for a in s[2].args)]
    if not double:
        return best
    alt = min(double, key=lambda s: s[:2])
    return alt if alt[0][0] <= best[0][0] * (1 + TRIPLE_MIN_GAIN) else best


def feasible_tilings(uk: UserKernelDecl, options: SolverOptions, geoms: Optional[dict] = None,
                     stages: bool = True):
    """Every tiling the objective of ``options`` may choose from; with ``stages`` False, each
    with its default L2 staging depth only (serial staging when the default does not fit L2)."""
    geoms = geoms or _geometries(uk)
    objective = OBJECTIVES[options.objective]
    budget = options.budget
    promote = options.promote if objective.promote is None else objective.promote
    partial = options.partial_promote if objective.partial is None else objective.partial
    single = objective.single_buffer

    def fitting(t):
        fit = [v for v in (stage_variants(t, single) if stages else [t]) if l2_fits(v, options.l2_budget)]
        if fit:
            return fit
        serial = _serial(t)  # a tight L2: one slot per argument still runs, without overlap
        return [serial] if l2_fits(serial, options.l2_budget) else []

    if promote:
        whole = fitting(build_tiling(uk, geoms, None, 1, True, budget))
        if whole and whole[0].l1_bytes <= budget:
            yield from whole
            if objective.promote_only:
                return
    has_partial = partial and any(partial_candidate(a, uk) for a in uk.kerargs)
    for k, n in _candidate_steps(uk, geoms):
        for part in ((False, True) if has_partial else (False,)):
            t = build_tiling(uk, geoms, k, n, False, budget, partial=part, single_buffer=single)
            if t.l1_bytes <= budget:
                yield from fitting(t)


def _serial(t: KernelTiling) -> KernelTiling:
    return with_stages(t, {a.name: 1 for a in t.args if a.l3})


def l2_fits(t: KernelTiling, l2_budget: Optional[int]) -> bool:
    return l2_budget is None or t.l2_bytes <= l2_budget


def smallest_footprint(uk: UserKernelDecl, geoms: Optional[dict] = None,
                       constrained: bool = True) -> Optional[KernelTiling]:
    geoms = geoms or _geometries(uk)
    best = None
    for k, n in _candidate_steps(uk, geoms, constrained):
        t = build_tiling(uk, geoms, k, n, False, 0)
        if best is None or t.l1_bytes < best.l1_bytes:
            best = t
    return best


def _no_solution(uk: UserKernelDecl, geoms: dict, options: SolverOptions):
    smallest = smallest_footprint(uk, geoms)
    if smallest is None:
        msg = "no tile size satisfies the tile constraints (EVEN/ODD/preferred size) of its arguments"
        hint = "relax OBJ_CONSTRAINTS_* or PreferedTileSize"
        arg = None
    else:
        dom = max(smallest.args, key=lambda a: a.l1_bytes)
        msg = (f"no tiling fits the L1 budget of {options.budget} bytes: the smallest tiling "
               f"({smallest.ntiles} tiles) needs {smallest.l1_bytes} bytes, of which argument "
               f"'{dom.name}' takes {dom.l1_bytes} ({_why(dom)})")
        hint = f"raise the L1 budget to at least {smallest.l1_bytes} bytes or shrink '{dom.name}'"
        free = smallest_footprint(uk, geoms, constrained=False)
        if free is not None and free.l1_bytes < smallest.l1_bytes:
            msg += (f"; without the tile constraints (EVEN/ODD/preferred size) {free.ntiles} tiles would "
                    f"need only {free.l1_bytes} bytes")
            hint += " or relax the tile constraints"
        arg = None
    if options.nosolution_error:
        raise TilingError(msg, where=uk.where, kernel=uk.name, arg=arg, hint=hint)
    warnings.warn(f"{uk.where}: kernel '{uk.name}': {msg}; no code is generated for it ({hint})",
                  AutoTilerWarning, stacklevel=3)
    return None


def _no_l2_solution(uk: UserKernelDecl, staged: list, options: SolverOptions):
    least = min((_serial(t) for t in staged), key=lambda t: t.l2_bytes)
    dom = max((a for a in least.args if a.l3), key=lambda a: a.l2_bytes)
    msg = (f"no tiling fits the L2 budget of {options.l2_budget} bytes for staging its L3 (O_L2DB) "
           f"arguments: the least needs {least.l2_bytes} bytes ({least.ntiles} tiles), of which "
           f"'{dom.name}' takes {dom.l2_bytes} ({dom.stage} slot(s) of {dom.slot_bytes} B per direction)")
    hint = f"raise the L2 size (SetMemorySizes / --L2) to at least {least.l2_bytes} bytes or keep '{dom.name}' in L2"
    if options.nosolution_error:
        raise TilingError(msg, where=uk.where, kernel=uk.name, arg=dom.name, hint=hint)
    warnings.warn(f"{uk.where}: kernel '{uk.name}': {msg}; no code is generated for it ({hint})",
                  AutoTilerWarning, stacklevel=3)
    return None


def _why(a: ArgTiling) -> str:
    if a.role == ROLE_PLANE:
        what = f"an untiled {a.w}x{a.h} plane"
    elif a.role == ROLE_RESIDENT:
        what = f"{a.planes} resident plane(s) of {a.w}x{a.h}"
    elif a.role == ROLE_DYNTILE:
        what = "one slot per tile"
    else:
        unit = "line" if a.orientation == T.TILE_HOR else "column"
        what = f"a tile of {a.tile_std} {unit}(s) of {a.line_bytes()} bytes"
    return f"{a.nbuf} x {what}" if a.nbuf > 1 else what


__all__ = ["ArgTiling", "KernelTiling", "SolverOptions", "solve", "build_tiling", "OBJECTIVES", "Objective",
           "register_objective", "smallest_footprint", "feasible_tilings", "AutoTilerWarning", "with_stages",
           "stage_variants", "l2_fits", "decode_instance", "levels_upto"]
