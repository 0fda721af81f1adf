"""The schedule IR: one frozen description of a tiled user kernel's execution.

A :class:`Schedule` is a tree of statements: loops (one per iteration space of the kernel),
``int`` locals, guarded blocks, DMA transfers and waits on the two engines (the cluster DMA,
L2 <-> L1, and the micro-DMA, L3 <-> L2) and basic-kernel calls with every bound value as an
expression (:mod:`autotiler.schedule.expr`). It is built once per tiling
(:mod:`autotiler.schedule.build`), checked (:mod:`autotiler.schedule.verify`), printed as C
(:mod:`autotiler.codegen`) and evaluated by the cost model (:mod:`autotiler.schedule.cost`);
nothing else walks a kernel's schedule.

Addresses are kept as (base symbol, byte offset expression) so that the verifier can evaluate
offsets with every base at 0 and the printer can write them with the original's casts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Optional

from ..model.devices import L3Device
from .expr import Expr


class Engine(Enum):
    CLUSTER = "cluster"  # L2 <-> L1, AT_L2_COPY / AT_L2_COPY2D / AT_L2_WAIT
    UDMA = "udma"        # L3 <-> L2, AT_<DEV>_CL_COPY / _COPY2D / _WAIT


class Direction(Enum):
    IN = "in"    # ext -> loc (EXT2LOC)
    OUT = "out"  # loc -> ext (LOC2EXT)


class Level(Enum):
    """Memory a region of a transfer or a call lives in."""

    L1 = "L1"
    L2 = "L2"
    L3 = "L3"


@dataclass(frozen=True)
class Region:
    """``size`` bytes at ``base + offset`` in memory ``level``; ``base`` is a C symbol (the L1 or
    L2 memory symbol) or the C argument holding the kernel argument."""

    level: Level
    base: str
    offset: Expr
    size: Expr


@dataclass(frozen=True)
class Event:
    """A DMA event variable, optionally an element of an array (``Uchan_In[slot]``)."""

    name: str
    index: Optional[Expr] = None


@dataclass(frozen=True)
class Copy:
    """One transfer. ``ext`` is the side in the slower memory (L2 for the cluster DMA, L3 for the
    uDMA), ``loc`` the faster one; a 2D transfer moves ``size`` bytes as lines of ``length``
    bytes, the ext side advancing by ``stride`` per line (the loc side is contiguous)."""

    engine: Engine
    direction: Direction
    arg: str
    ext: Region
    loc: Region
    event: Event
    stride: Optional[Expr] = None
    length: Optional[Expr] = None
    comment: str = ""
    device: Optional[L3Device] = None   # a uDMA transfer's external memory (None: the naming's L3 RAM)

    @property
    def size(self) -> Expr:
        return self.loc.size


@dataclass(frozen=True)
class Wait:
    engine: Engine
    event: Event
    arg: str
    direction: Direction
    comment: str = ""
    device: Optional[L3Device] = None   # as Copy.device


@dataclass(frozen=True)
class Access:
    """What a basic-kernel call may touch of a kernel argument's L1 memory (for the verifier):
    ``writes`` for outputs and buffers, reads otherwise."""

    arg: str
    region: Region
    writes: bool


@dataclass(frozen=True)
class Field:
    """One bound argument of a basic-kernel call: ``formal`` of C type ``ctype`` gets ``value``."""

    formal: str
    ctype: str
    value: Expr
    ignored: bool = False  # AT_IGNORE_ARG_BINDING: the struct field is left unassigned


@dataclass(frozen=True)
class Compute:
    """A basic-kernel call. A parallel call (``struct`` set) assigns the fields of the argument
    struct and forks on every core; a sequential one is a plain call. ``cost`` is the call's
    compute time in cycles (the LibKernel's ``Cost=`` over the bound values)."""

    kernel: str
    location: str
    fields: tuple
    cost: Expr
    parallel: bool
    struct: Optional[str] = None        # C variable of the argument struct (parallel calls)
    struct_type: Optional[str] = None
    accesses: tuple = ()
    comment: str = ""


@dataclass(frozen=True)
class Let:
    """``int name = expr;`` visible in the rest of the enclosing block."""

    name: str
    expr: Expr
    comment: str = ""


@dataclass(frozen=True)
class If:
    cond: Expr
    body: tuple
    comment: str = ""


@dataclass(frozen=True)
class Comment:
    text: str


@dataclass(frozen=True)
class Loop:
    """``for (var=0; var<extent; var++, total++)`` (``var<bound`` when bound at run time); an
    extent of 1 prints as a plain block.
    ``total`` names the loop's running iteration counter across the enclosing loops (None when
    unused); its value is an affine function of the loop indices (``Schedule.totals``)."""

    space: str
    var: str
    extent: int
    body: tuple
    total: Optional[str] = None
    comment: str = ""
    bound: Optional[str] = None  # a C argument bounding the loop at run time (at most ``extent``)


@dataclass(frozen=True)
class Schedule:
    """A user kernel's whole execution. ``totals`` maps each running counter to its value as an
    expression of the loop indices; ``events``: (C type, name, array length or 0) of every DMA
    event variable; ``structs``: (C type, variable) of every basic-kernel argument struct;
    ``invariant`` holds the struct fields assigned once before the loops."""

    name: str
    body: tuple
    totals: dict = field(default_factory=dict)
    events: tuple = ()
    structs: tuple = ()
    loops: tuple = ()           # (space, var, extent) outer to inner
    invariant: tuple = ()       # (struct variable, Field) assigned before the loops
    symbols: dict = field(default_factory=dict)  # level -> (symbol, size in bytes)
    naming: object = None       # the build.Naming the schedule was built with
    bounds: dict = field(default_factory=dict)  # C argument bounding a loop at run time -> its static extent


__all__ = ["Engine", "Direction", "Level", "Region", "Event", "Copy", "Wait", "Access", "Field", "Compute", "Let",
           "If", "Comment", "Loop", "Schedule"]
