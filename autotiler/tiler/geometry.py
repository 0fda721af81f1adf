"""Geometry of a user kernel: what the tiler may choose and how each argument follows.

**Tiled spaces.** Every argument tiled along a tiled space T cuts its W x H plane along its
orientation (lines for TILE_HOR, columns for TILE_VER) into the same number of tiles ``n_T``.
Along that direction the argument spans ``E = Used + PadBefore + PadAfter - Overlap`` "useful"
units (``Used``: the part of the plane consumed, ``Pad*``: the PadTile of KerArgP,
``Overlap``: lines shared by adjacent tiles). The useful extents of the arguments of a space
are integer multiples ``r`` (ratios) of the smallest one, ``E_min`` (a non-integer ratio is an
error unless the argument asks for OBJ_CONSTRAINTS_PAD_REM, the last tile takes the remainder,
or OBJ_CONSTRAINTS_DROP_REM, the remainder is never moved). A tiling of T is a step ``k`` in
units of ``E_min``: tile ``i`` of an argument covers padded lines ``[i*r*k, i*r*k + r*k +
Overlap)`` (the last one fewer) and ``n_T = ceil(E_min / k)``. The lines actually moved are the
ones inside ``[0, Used)`` once the padding is taken off; only the first tile may start in the
padding and only the last may end in it.

**Parametric spaces** (IterParSpace) are cut into chunks of ``c`` (a multiple of PrefDiv when
possible), the last one smaller; **fixed** spaces iterate one index at a time.

**Arguments** live in the spaces of their KerArgSpace: in L2 an argument is a row-major array
``[Dim of each non-tiled space, outer to inner][H][W]`` of ItemSize bytes. Per iteration it
holds, in one L1 slot, the box made of its current chunk (or index) of each non-tiled space and
its current tile of the plane, packed densely; a space it is *resident* over (promotion,
SPACE_PROP_ONE_TILE, buffers) contributes its whole extent instead and does not move it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Optional

from ..constants import SPACE_PROP_ONE_TILE, SPACE_PROP_REVERT, KernelArgSelect_T, KernelIteratorT, Object_Type_T
from ..constants import KernelArgConstraints_T as C
from ..constants import Tile_Orientation_T as T
from ..errors import ModelError
from ..model.ir import KArgBinding, KerArgDecl, SpaceKind, UserKernelDecl
from ..model.validate import space_name

O = Object_Type_T
INT_LIMIT = 2 ** 31  # generated C computes offsets and sizes in int


class ArgKind(Enum):
    DATA = "data"          # an input/output in L2 (or L3), moved tile by tile
    BUFFER = "buffer"      # O_BUFF bound to a C argument: all of it in L1, loaded/stored once
    SCRATCH = "scratch"    # O_BUFF without C argument: L1 only, whole
    ONETILE = "onetile"    # O_BUFF|O_ONETILE: L1 only, one tile's worth
    DYNTILE = "dyntile"    # O_BUFF|O_DYNTILE: L1 only, one line per tile


@dataclass(frozen=True)
class TileGeom:
    """An argument's plane along its tiled space."""

    space: KernelIteratorT
    orientation: T
    dim: int            # lines (HOR) or columns (VER) of the plane
    used: int           # the ones consumed
    pad_before: int     # PadTile before / after along the tiling direction
    pad_after: int
    exec_before: int    # PadExec before / after
    exec_after: int
    overlap: int
    useful: int         # used + pads - overlap
    ratio: int = 1
    drop: bool = False  # OBJ_CONSTRAINTS_DROP_REM: the remainder beyond ratio * E_min is never moved
    span: int = 0       # useful units actually tiled (useful, or ratio * E_min when dropping)

    @property
    def horizontal(self) -> bool:
        return self.orientation == T.TILE_HOR


@dataclass(frozen=True)
class RefGeom:
    """A non-tiled space of an argument: its extent and stride (items) in the L2 layout."""

    space: KernelIteratorT
    dim: int
    stride: int
    revert: bool = False
    resident: bool = False  # forced (SPACE_PROP_ONE_TILE, O_PBUFF)


@dataclass(frozen=True)
class ArgGeom:
    decl: KerArgDecl
    kind: ArgKind
    refs: tuple                 # RefGeom, outer to inner
    tile: Optional[TileGeom]    # None: the plane is whole (not tiled)
    tiled_space: Optional[KernelIteratorT]  # the tiled space of KerArgSpace, also when the plane is whole
    w: int
    h: int
    item: int
    l2_bytes: int               # bytes of the argument in L2/L3 (0 for L1-only kinds)
    next_db: bool = False       # a call binds KER_ARG_TILE_NEXTDB: it stays double buffered

    @property
    def name(self) -> str:
        return self.decl.name

    @property
    def reads(self) -> bool:
        d = self.decl
        return self.kind in (ArgKind.DATA, ArgKind.BUFFER) and d.is_in and not d.has(O.O_NO_LOAD)

    @property
    def writes(self) -> bool:
        d = self.decl
        return self.kind in (ArgKind.DATA, ArgKind.BUFFER) and d.is_out and not d.has(O.O_NO_STORE)

    @property
    def line_items(self) -> int:
        """Items of one line along the tiling direction (a row for HOR, a column for VER)."""
        if self.tile is None:
            return self.w * self.h
        return self.w if self.tile.horizontal else self.h

    def ref(self, space) -> Optional[RefGeom]:
        return next((r for r in self.refs if r.space == space), None)


@dataclass(frozen=True)
class SpaceGeom:
    """One loop of the kernel. Tiled: ``dim`` is E_min (0 when no argument is tiled along it:
    one tile); parametric: chunked ``dim``; fixed / run-time bound: ``dim`` iterations."""

    space: KernelIteratorT
    kind: SpaceKind
    dim: int
    pref_div: int = 1
    one_tile: bool = False
    participants: tuple = ()    # tiled: names of the arguments tiled along it (DYNTILE excluded)
    bound: Optional[str] = None

    @property
    def short(self) -> str:
        return space_name(self.space)[len("KER_ITER_"):].replace("TILE", "T")


@dataclass(frozen=True)
class KernelGeom:
    kernel: UserKernelDecl
    spaces: tuple               # SpaceGeom, outer to inner (the kernel's loop order)
    args: tuple                 # ArgGeom in KerArgs order

    def space(self, sp) -> SpaceGeom:
        return next(s for s in self.spaces if s.space == sp)

    def arg(self, name: str) -> ArgGeom:
        return next(a for a in self.args if a.name == name)


# ----------------------------------------------------------------------------------------------
# Building the geometry


def arg_orientation(a: KerArgDecl, default: T) -> T:
    if a.constraints & C.OBJ_CONSTRAINTS_TILE_HOR:
        return T.TILE_HOR
    if a.constraints & C.OBJ_CONSTRAINTS_TILE_VER:
        return T.TILE_VER
    return default


def _kind(a: KerArgDecl) -> ArgKind:
    if not a.is_buffer:
        return ArgKind.DATA
    if a.has(O.O_ONETILE):
        return ArgKind.ONETILE
    if a.has(O.O_DYNTILE):
        return ArgKind.DYNTILE
    return ArgKind.BUFFER if a.carg_name else ArgKind.SCRATCH


def _tile_geom(a: KerArgDecl, space, orient: T) -> TileGeom:
    hor = orient == T.TILE_HOR
    dim, used = (a.h, a.uh) if hor else (a.w, a.uw)
    pt, pe = a.pad_tile, a.pad_exec
    before, after = (pt.top, pt.bottom) if hor else (pt.left, pt.right)
    ebefore, eafter = (pe.top, pe.bottom) if hor else (pe.left, pe.right)
    return TileGeom(space, orient, dim, used, before, after, ebefore, eafter, a.overlap,
                    used + before + after - a.overlap, drop=bool(a.constraints & C.OBJ_CONSTRAINTS_DROP_REM))


def _refs(a: KerArgDecl, uk: UserKernelDecl) -> tuple:
    """Non-tiled spaces with their L2 strides (items): the layout is row-major over the
    KerArgSpace order, then the plane; NextPlaneUpdate (v2) multiplies the innermost stride."""
    plane = a.w * a.h
    refs = [r for r in a.space.refs if not r.tiled]
    out = []
    stride = plane * max(1, a.next_plane_update)
    for r in reversed(refs):
        sp = uk.space.get(r.space)
        out.append(RefGeom(r.space, sp.dim, stride, bool(r.props & SPACE_PROP_REVERT),
                           bool(r.props & SPACE_PROP_ONE_TILE)))
        stride *= sp.dim
    forced = a.has(O.O_PBUFF)
    return tuple(RefGeom(g.space, g.dim, g.stride, g.revert, g.resident or (forced and g.space == KernelIteratorT.KER_ITER_D0))
                 for g in reversed(out))


def _l2_bytes(a: KerArgDecl, refs: tuple) -> int:
    if not refs:
        return a.w * a.h * a.item_size
    outer = refs[0]
    return outer.dim * outer.stride * a.item_size


def _next_db_args(uk: UserKernelDecl) -> set:
    """Arguments a call binds with KER_ARG_TILE_NEXTDB (also inside a predicate list)."""
    out = set()
    for call in uk.calls:
        for b in call.bindings:
            for k in getattr(b, "preds", (b,)):
                if isinstance(k, KArgBinding) and k.select == KernelArgSelect_T.KER_ARG_TILE_NEXTDB:
                    out.add(k.arg)
    return out


def kernel_geometry(uk: UserKernelDecl) -> KernelGeom:
    """The geometry of a validated user kernel; ModelError on sizes that do not tile."""
    args = []
    next_db = _next_db_args(uk)
    for a in uk.kerargs:
        kind = _kind(a)
        tiled_ref = a.space.tiled
        tiled_plane = tiled_ref is not None and not a.has(O.O_NTILED)
        tile = _tile_geom(a, tiled_ref.space, arg_orientation(a, uk.orientation)) if tiled_plane else None
        refs = _refs(a, uk)
        l2 = _l2_bytes(a, refs) if kind in (ArgKind.DATA, ArgKind.BUFFER) else 0
        size = l2 or _l2_bytes(a, refs)
        if size >= INT_LIMIT:
            raise ModelError(f"is {size} bytes: the generated C addresses memory with 32-bit int offsets, so an "
                             f"argument must stay below {INT_LIMIT} bytes", where=a.where, kernel=uk.name, arg=a.name,
                             hint="split the data over several kernels or reduce its dimensions")
        args.append(ArgGeom(a, kind, refs, tile, tiled_ref.space if tiled_ref else None, a.w, a.h, a.item_size, l2,
                            a.name in next_db))
    args = _ratios(args, uk)
    spaces = tuple(_space_geom(s, args, uk) for s in uk.space.spaces)
    return KernelGeom(uk, spaces, tuple(args))


def participates(g: ArgGeom) -> bool:
    """Arguments whose tile size follows the space's step (DYNTILE follows the tile count)."""
    return g.tile is not None and g.kind != ArgKind.DYNTILE


def _ratios(args: list, uk: UserKernelDecl) -> list:
    out = list(args)
    by_space: dict = {}
    for i, g in enumerate(args):
        if participates(g):
            by_space.setdefault(g.tile.space, []).append(i)
    for sp, idx in by_space.items():
        for i in idx:
            g = args[i]
            if g.tile.useful <= 0:
                raise ModelError(f"TileOverlap {g.tile.overlap} leaves no useful line in a tiled dimension of "
                                 f"{g.tile.used + g.tile.pad_before + g.tile.pad_after}", where=g.decl.where,
                                 kernel=uk.name, arg=g.name, hint="overlap must be smaller than the tiled dimension")
        e_min = min(args[i].tile.useful for i in idx)
        ref = min((args[i] for i in idx), key=lambda g: g.tile.useful)
        for i in idx:
            g = args[i]
            c = g.decl.constraints
            if g.tile.useful % e_min and not c & (C.OBJ_CONSTRAINTS_PAD_REM | C.OBJ_CONSTRAINTS_DROP_REM):
                raise ModelError(
                    f"tiled size {g.tile.useful} along {space_name(sp)} (used {g.tile.used} + padding "
                    f"{g.tile.pad_before + g.tile.pad_after} - overlap {g.tile.overlap}) is not a multiple of {e_min}, "
                    f"the size of '{ref.name}'", where=g.decl.where, kernel=uk.name, arg=g.name,
                    hint="tiled arguments must have sizes in integer ratios (e.g. 2:1 for a 2x2 pooling), or set "
                    "OBJ_CONSTRAINTS_PAD_REM (the last tile takes the rest) / OBJ_CONSTRAINTS_DROP_REM (the rest is "
                    "never moved)")
            out[i] = _with_ratio(g, g.tile.useful // e_min, e_min)
            _check_even(out[i], uk)
    return out


def _check_even(g: ArgGeom, uk: UserKernelDecl) -> None:
    """OBJ_CONSTRAINTS_EVEN holds on every step but the last's, which takes the rest: an odd
    tiled size leaves an odd last tile (or a single odd one) the kernel is not written for."""
    t = g.tile
    if g.decl.constraints & C.OBJ_CONSTRAINTS_EVEN and t.span % 2:
        what = "lines" if t.horizontal else "columns"
        along = space_name(t.space, uk.v2 is not None)
        raise ModelError(f"OBJ_CONSTRAINTS_EVEN on an odd tiled size: {t.span} {what} along {along} "
                         f"(used {t.used} + padding {t.pad_before + t.pad_after} - overlap {t.overlap}), so the last "
                         "tile (or the only one) would be odd", where=g.decl.where, kernel=uk.name, arg=g.name,
                         hint="give the argument an even tiled size (PadTile one more line), or drop "
                         "OBJ_CONSTRAINTS_EVEN if the basic kernel handles an odd tile")


def _with_ratio(g: ArgGeom, ratio: int, e_min: int) -> ArgGeom:
    span = ratio * e_min if g.tile.drop else g.tile.useful
    return replace(g, tile=replace(g.tile, ratio=ratio, span=span))


def _space_geom(s, args: list, uk: UserKernelDecl) -> SpaceGeom:
    if s.kind == SpaceKind.TILED:
        parts = tuple(g.name for g in args if participates(g) and g.tile.space == s.space)
        e_min = min((g.tile.useful // g.tile.ratio for g in args if g.name in parts), default=0)
        return SpaceGeom(s.space, s.kind, e_min, participants=parts)
    one_tile = s.kind == SpaceKind.PARAMETRIC and bool(s.props & SPACE_PROP_ONE_TILE)
    return SpaceGeom(s.space, s.kind, s.dim, max(1, s.pref_div), one_tile, bound=s.bound)


# ----------------------------------------------------------------------------------------------
# Tiles of a tiled dimension


@dataclass(frozen=True)
class TileSpan:
    """Tile ``i`` of an argument along its tiled space: ``start``/``length`` of the lines (or
    columns) moved, in the argument's own coordinates, and the PadExec it gets before/after."""

    start: int
    length: int
    pad_before: int
    pad_after: int


def tile_sizes(t: TileGeom, k: int, n: int) -> tuple:
    """(standard tile, last tile, step) in padded lines for step ``k`` and ``n`` tiles."""
    step = t.ratio * k
    std = min(step + t.overlap, t.used + t.pad_before + t.pad_after)
    last = t.span - (n - 1) * step + t.overlap
    return std, last, step


def tile_span(t: TileGeom, k: int, n: int, i: int) -> TileSpan:
    std, last, step = tile_sizes(t, k, n)
    s = i * step
    e = s + (last if i == n - 1 else std)
    lo, hi = max(s - t.pad_before, 0), min(e - t.pad_before, t.used)
    before = t.exec_before if s < t.pad_before else 0
    after = t.exec_after if e > t.pad_before + t.used else 0
    return TileSpan(lo, hi - lo, before, after)


def valid_tiling(t: TileGeom, k: int, n: int) -> bool:
    """Only the first tile may start in the padding, only the last may end in it, and every
    tile moves at least one line."""
    std, last, step = tile_sizes(t, k, n)
    if last <= 0 or std <= 0:
        return False
    if n > 1 and step < t.pad_before:
        return False
    if n > 1 and (n - 2) * step + std > t.pad_before + t.used:
        return False
    return all(tile_span(t, k, n, i).length > 0 for i in {0, n - 1, min(1, n - 1)})


__all__ = ["ArgKind", "TileGeom", "RefGeom", "ArgGeom", "SpaceGeom", "KernelGeom", "kernel_geometry", "arg_orientation",
           "participates", "TileSpan", "tile_sizes", "tile_span", "valid_tiling", "INT_LIMIT"]
