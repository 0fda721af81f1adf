"""A graph's constants: the flash image, which constants the constructor promotes to static L2,
and when the others are prefetched from flash during a run.

Flash image. :func:`pack_constants` lays the constants end to end in the given order, each at a
multiple of its alignment (zero padding between): the ``<base>_L3_Flash_Const.dat`` file the
graph's constructor reads. The order is the caller's, so the file is reproducible.

Promotion. A constant left in flash is copied to L2 every run (``size x uses`` bytes of flash
traffic if each of its ``uses`` copies it); one promoted to static L2 at construction is copied
once. Every promoted byte of the budget (``AT_GRAPH_L2_STATIC_MEMORY_BUDGET``) therefore saves
``uses`` bytes per run: :func:`promote_constants` takes constants by use count (the saving per
byte), largest first among equal counts (fewer, larger copies avoided), skipping any that no
longer fits, and stops at the budget.

Prefetch. A constant in flash must be in L2 when its first user starts. :func:`prefetch_schedule`
starts its copy after the latest node that still leaves the copy time to finish (the sum of
the predicted times of the nodes in between covers ``setup + size / bandwidth``: the guide's
"start loading at layer i - 3" made exact), but no earlier than the L2 it needs is free at every
node from the start to its last use, so it holds L2 no longer than it must. Constants are
scheduled by first use and each one's bytes are taken from the free L2 of the nodes it spans;
the copies share one flash channel, so a copy also waits for the previous one (the ``stall``
field is the time the first user would wait). The result's ``buffers()`` are L2 buffers for
:func:`autotiler.graph.plan.plan_static`, alive from the node after the start to the last use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Optional

from ..platforms import get_platform
from .plan import Buffer, round_up


@dataclass(frozen=True)
class FlashImage:
    """Constants packed into one file: ``offsets[name]`` and ``sizes[name]`` in ``data``."""

    offsets: Mapping[str, int]
    sizes: Mapping[str, int]
    data: bytes

    @property
    def total(self) -> int:
        return len(self.data)

    def read(self, name: str) -> bytes:
        """The bytes of constant ``name``, as the constructor reads them back."""
        off = self.offsets[name]
        return self.data[off:off + self.sizes[name]]


def pack_constants(items: Sequence[tuple[str, bytes, int]]) -> FlashImage:
    """``(name, bytes, align)`` in order, each at a multiple of ``align``, zero-padded."""
    offsets: dict[str, int] = {}
    sizes: dict[str, int] = {}
    image = bytearray()
    for name, data, align in items:
        if name in offsets:
            raise ValueError(f"constant '{name}' packed twice")
        if align < 1 or align & (align - 1):
            raise ValueError(f"constant '{name}': alignment {align} is not a power of two")
        image.extend(bytes(round_up(len(image), align) - len(image)))
        offsets[name] = len(image)
        sizes[name] = len(data)
        image.extend(data)
    return FlashImage(MappingProxyType(offsets), MappingProxyType(sizes), bytes(image))


@dataclass(frozen=True)
class Promotion:
    """``static``: constants copied to L2 once at construction (``static_bytes`` of the budget);
    ``flash``: constants copied from flash each run (``flash_traffic`` bytes per run)."""

    static: tuple[str, ...]
    flash: tuple[str, ...]
    static_bytes: int
    flash_traffic: int


def promote_constants(consts: Mapping[str, int], l2_static_budget: int, uses: Mapping[str, int],
                      align: int = 4) -> Promotion:
    """Choose the constants (name -> size) kept in static L2 within ``l2_static_budget`` bytes
    (each rounded up to ``align``): most ``uses`` first, then largest, then by name."""
    order = sorted(consts, key=lambda n: (-uses.get(n, 1), -consts[n], n))
    static, used = [], 0
    for name in order:
        size = round_up(consts[name], align)
        if uses.get(name, 1) > 0 and used + size <= l2_static_budget:
            static.append(name)
            used += size
    flash = tuple(n for n in consts if n not in static)
    return Promotion(tuple(n for n in consts if n in static), flash, used,
                     sum(consts[n] * uses.get(n, 1) for n in flash))


@dataclass(frozen=True)
class Prefetch:
    """A constant's copy from flash: starts after node ``start`` (-1: before the first node) and
    holds ``size`` bytes of L2 from node ``start + 1`` to ``last_use``; ``stall`` cycles is how
    long ``first_use`` waits for it (0 when started early enough)."""

    name: str
    size: int
    start: int
    first_use: int
    last_use: int
    stall: float

    def buffer(self, align: int = 4) -> Buffer:
        return Buffer(self.name, self.size, self.start + 1, self.last_use, align)


def flash_copy_cycles(size: int) -> float:
    """The default copy time: GAP8's flash micro-DMA as :mod:`autotiler.platforms` models it."""
    return float(get_platform("gap8").udma["flash"].transfer_cycles(size))


def prefetch_schedule(consts_in_flash: Mapping[str, int], node_times: Sequence[float], first_use: Mapping[str, int],
                      l2_free_per_node: Sequence[int], last_use: Optional[Mapping[str, int]] = None,
                      copy_cycles: Callable[[int], float] = flash_copy_cycles,
                      cycles_of: Optional[Mapping[str, float]] = None) -> tuple[Prefetch, ...]:
    """When each constant (name -> size) in flash starts its copy to L2; see the module doc.

    ``node_times[i]``: predicted cycles of node i. ``first_use``/``last_use``: node indices
    (``last_use`` defaults to the first use). ``l2_free_per_node[i]``: L2 bytes free at node i
    besides the graph's buffers (capacity minus the placed top, or minus live bytes).
    ``cycles_of``: each constant's copy time (its flash's engine), else ``copy_cycles(size)``;
    all copies share the micro-DMA channel, whichever flash they come from.
    """
    free = list(l2_free_per_node)
    ends = _node_ends(node_times)
    channel_free = 0.0   # when the flash channel finishes the copies already scheduled
    plans = []
    for name in sorted(consts_in_flash, key=lambda n: (first_use[n], n)):
        size, use = consts_in_flash[name], first_use[name]
        last = (last_use or {}).get(name, use)
        cycles = cycles_of[name] if cycles_of is not None else copy_cycles(size)
        start = _latest_start(ends, use, cycles)
        start = min(max(start, _last_node_short_of(free, size, start + 1, last)), use - 1)
        for node in range(start + 1, last + 1):
            free[node] -= size
        begin = max(ends[start + 1], channel_free)   # ends[0] = 0: the run's start
        channel_free = begin + cycles
        plans.append(Prefetch(name, size, start, use, last, max(0.0, channel_free - ends[use])))
    return tuple(plans)


def _node_ends(node_times: Sequence[float]) -> list[float]:
    """ends[i + 1] = when node i finishes (ends[0] = 0, the run's start), so a copy started
    after node s begins at ends[s + 1] and node u starts at ends[u]."""
    ends = [0.0]
    for t in node_times:
        ends.append(ends[-1] + t)
    return ends


def _latest_start(ends: Sequence[float], use: int, cycles: float) -> int:
    """The latest node s < use such that a copy started after s is done before ``use`` starts
    (-1, the run's start, when none is early enough)."""
    for s in range(use - 1, -2, -1):
        if ends[use] - ends[s + 1] >= cycles:
            return s
    return -1


def _last_node_short_of(free: Sequence[int], size: int, lo: int, hi: int) -> int:
    """The last node in [lo, hi] with fewer than ``size`` bytes free (lo - 1 if none): the copy
    can start only after it (the caller clamps to just before the first use: if even the nodes
    using the constant lack room, its placement must make it)."""
    short = [n for n in range(max(lo, 0), hi + 1) if n < len(free) and free[n] < size]
    return short[-1] if short else lo - 1
