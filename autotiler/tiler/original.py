"""The original AutoTiler's rule for kernels with several tiled spaces (the ``original`` objective).

The original does not take "the largest tile that fits" space by space when a kernel has two or
more tiled spaces (T0, T1, T2): its generated code shows the spaces *growing together*. Starting
from the smallest legal tile of every tiled space, the space whose tile is currently the
smallest grows by one line (or column), ties going to the outer space; the first growth that
no longer fits ends the search and the last tiling that fitted is the answer. A space's tile is
measured as the mean, over the arguments of its KerArgSpace, of the lines (columns for a
vertical tiling) of their tile: an O_BUFF|O_NTILED scratch buffer of one line counts 1 (which
is why the SDK's ParVectMatMult, with its 2-column buffer in T0, takes T0 tiles about twice as
wide as its T1 tiles while ParMatMult takes them equal). A growth "fits" when it leaves
``RESERVE`` bytes of the budget free: the original refuses tilings that do fit by less than that.

The data points this reproduces, their sources and what each pins down: docs/semantics.md,
section 1.7 ("The original's rule with several tiled spaces").
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Optional

from ..constants import Tile_Orientation_T as T
from ..model.ir import SpaceKind
from .geometry import ArgKind, KernelGeom, SpaceGeom, arg_orientation, tile_sizes
from .search import tile_steps

# L1 bytes the original leaves free when it grows several tiled spaces. The public outputs allow
# any value in (352, 360]: ParVectMatMult keeps a tiling 360 B under its budget, the GRU
# decoder of 200 units refuses one 352 B under its own (docs/semantics.md); the middle is taken.
RESERVE = 356


def grown_spaces(kg: KernelGeom, spaces: list) -> list:
    """The tiled spaces of ``spaces`` the growth decides: all of them when there are two or
    more (with a single tiled space the original's rule is the largest tile that fits)."""
    tiled = [s for s in spaces if s.kind == SpaceKind.TILED and s.dim]
    return tiled if len(tiled) >= 2 else []


def legal_steps(kg: KernelGeom, s: SpaceGeom) -> list:
    """Every legal step of a tiled space, smallest first (the growth goes one line at a time,
    so it needs all of them, not the search grid's thinned lists)."""
    return sorted(tile_steps(kg, s, every=True))


def tile_measure(kg: KernelGeom, s: SpaceGeom, k: int) -> Fraction:
    """The mean, over the arguments whose KerArgSpace tiles ``s``, of the lines (columns when
    vertical) of their standard tile at step ``k``; an argument not cut along ``s`` (a scratch
    buffer) counts its whole extent in that direction."""
    n = -(-s.dim // k)
    extents = []
    for g in kg.args:
        if g.tiled_space != s.space or g.kind == ArgKind.DYNTILE:
            continue
        if g.tile is not None and g.tile.space == s.space:
            extents.append(tile_sizes(g.tile, k, n)[0])
        else:
            hor = arg_orientation(g.decl, kg.kernel.orientation) == T.TILE_HOR
            extents.append(g.h if hor else g.w)
    return Fraction(sum(extents), len(extents)) if extents else Fraction(k)


def grow(kg: KernelGeom, spaces: list, fits: Callable[[dict], bool]) -> Optional[dict]:
    """{space: step} of the growth over ``spaces`` (outer first), or None when even the smallest
    steps do not pass ``fits`` (given the steps of every grown space)."""
    steps = {s.space: legal_steps(kg, s) for s in spaces}
    if not all(steps.values()):
        return None
    at = {s.space: 0 for s in spaces}          # index into steps
    sizes = {sp: values[0] for sp, values in steps.items()}
    if not fits(sizes):
        return None
    while True:
        growing = [s for s in spaces if at[s.space] + 1 < len(steps[s.space])]
        if not growing:
            return sizes
        # smallest tile first; min() keeps the first of equals: the outer space on a tie
        s = min(growing, key=lambda x: tile_measure(kg, x, sizes[x.space]))
        trial = {**sizes, s.space: steps[s.space][at[s.space] + 1]}
        if not fits(trial):
            return sizes
        at[s.space] += 1
        sizes = trial


__all__ = ["RESERVE", "grown_spaces", "legal_steps", "tile_measure", "grow"]
