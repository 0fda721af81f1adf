"""Platforms as data: memory sizes, core count and the cost model of each chip.

Every number has its source in ``notes`` or is marked as an assumption. A platform is a frozen
dataclass; use :func:`get_platform` and ``dataclasses.replace`` (or ``Platform.with_overrides``)
to change any value. Adding a chip means adding one entry to ``PLATFORMS``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field, replace

from .errors import PlatformError


@dataclass(frozen=True)
class DmaEngine:
    """Cost of one transfer on a DMA engine: ``setup + bytes / bytes_per_cycle``, plus
    ``line_cycles`` for every line of a 2D (strided) transfer."""

    setup_cycles: int
    bytes_per_cycle: float
    line_cycles: int = 0

    def transfer_cycles(self, nbytes: int, lines: int = 1) -> int:
        if nbytes <= 0:
            return 0
        extra = self.line_cycles * lines if lines > 1 else 0
        return int(self.setup_cycles + -(-nbytes // self.bytes_per_cycle) + extra)


@dataclass(frozen=True)
class Platform:
    name: str
    cores: int
    l1_size: int
    l2_size: int
    l3_ram_size: int
    l3_flash_size: int
    cluster_dma: DmaEngine          # L2 <-> L1
    udma: dict                      # device kind ("ram", "flash", "mram") -> DmaEngine (L3 <-> L2)
    dma_issue_cycles: int           # core cycles spent programming one transfer
    wait_cycles: int                # core cycles of a wait that does not stall
    fork_cycles: int                # core cycles of one parallel dispatch (fork + join)
    ops_per_cycle_per_core: float   # default compute throughput of a basic kernel
    notes: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        """A platform every user can divide by: at least one core and some L1 and L2, counts that
        are ints (a bool, float or string is refused), nothing negative."""
        for key in ("cores", "l1_size", "l2_size", "l3_ram_size", "l3_flash_size", "dma_issue_cycles",
                    "wait_cycles", "fork_cycles"):
            value = getattr(self, key)
            minimum = 1 if key in ("cores", "l1_size", "l2_size") else 0
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
                raise PlatformError(f"platform '{self.name}': {key} must be an int >= {minimum}, got {value!r}")
        rate = self.ops_per_cycle_per_core
        if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not rate > 0:
            raise PlatformError(f"platform '{self.name}': ops_per_cycle_per_core must be a number > 0, got {rate!r}")

    def with_overrides(self, **changes) -> Platform:
        unknown = sorted(set(changes) - set(self.__dataclass_fields__))
        if unknown:
            raise PlatformError(f"unknown platform field(s) {', '.join(unknown)}",
                                hint=f"fields are {', '.join(self.__dataclass_fields__)}")
        return replace(self, **changes)


GAP8 = Platform(
    name="gap8",
    cores=8,
    l1_size=64 * 1024,
    l2_size=512 * 1024,
    l3_ram_size=8 * 1024 * 1024,
    l3_flash_size=64 * 1024 * 1024,
    cluster_dma=DmaEngine(setup_cycles=30, bytes_per_cycle=8.0, line_cycles=4),
    udma={
        "ram": DmaEngine(setup_cycles=200, bytes_per_cycle=1.0, line_cycles=20),
        "flash": DmaEngine(setup_cycles=300, bytes_per_cycle=1.0, line_cycles=20),
    },
    dma_issue_cycles=10,
    wait_cycles=4,
    fork_cycles=60,
    ops_per_cycle_per_core=1.0,
    notes={
        "cores": "8 cluster cores (GAP8 datasheet; AutoTiler guide: 'up to 8 parallel accesses').",
        "l1_size": "64 KiB shared L1 (AutoTiler guide, 'GAP's memory hierarchy').",
        "l2_size": "512 KiB L2 (AutoTiler guide; gap_sdk#160).",
        "cluster_dma": "8 B/cycle from DORY's GAP8 HW_description (peers-and-limits.md 3.4); "
                       "setup 30 cycles and 4 cycles per 2D line are assumptions.",
        "udma": "HyperBus is 8-bit DDR, 2 B per bus clock theoretical (peers-and-limits.md 3.5); "
                "1 B per cluster cycle and the setup costs are assumptions.",
        "dma_issue_cycles": "assumption: programming a cluster-DMA command.",
        "fork_cycles": "assumption: team fork + join on 8 cores.",
        "ops_per_cycle_per_core": "assumption: one elementary operation per cycle per core "
                                  "when a basic kernel declares no cost.",
    },
)

GAP9 = Platform(
    name="gap9",
    cores=8,
    l1_size=128 * 1024,
    l2_size=1536 * 1024,
    l3_ram_size=8 * 1024 * 1024,
    l3_flash_size=64 * 1024 * 1024,
    cluster_dma=DmaEngine(setup_cycles=25, bytes_per_cycle=16.0, line_cycles=2),
    udma={
        "ram": DmaEngine(setup_cycles=200, bytes_per_cycle=2.0, line_cycles=20),
        "flash": DmaEngine(setup_cycles=300, bytes_per_cycle=1.0, line_cycles=20),
        "mram": DmaEngine(setup_cycles=100, bytes_per_cycle=4.0, line_cycles=10),
    },
    dma_issue_cycles=8,
    wait_cycles=4,
    fork_cycles=50,
    ops_per_cycle_per_core=1.0,
    notes={
        "cores": "8 compute cores plus the cluster controller (GAP9 product brief).",
        "l1_size": "128 KiB shared L1 (GAP9 product brief).",
        "l2_size": "1.5 MiB L2 (GAP9 product brief).",
        "cluster_dma": "assumption: 64-bit cluster DMA at 2x GAP8's width (16 B/cycle).",
        "udma": "assumptions; MRAM is GAP9's on-chip privileged flash (AutoTiler guide, "
                "SetMemoryDeviceInfos).",
        "ops_per_cycle_per_core": "assumption, as for gap8.",
    },
)

PULP_OPEN = Platform(
    name="pulp_open",
    cores=8,
    l1_size=64 * 1024,
    l2_size=448 * 1024,
    l3_ram_size=8 * 1024 * 1024,
    l3_flash_size=64 * 1024 * 1024,
    cluster_dma=DmaEngine(setup_cycles=21, bytes_per_cycle=8.0, line_cycles=1),
    udma={
        "ram": DmaEngine(setup_cycles=200, bytes_per_cycle=1.0, line_cycles=20),
        "flash": DmaEngine(setup_cycles=300, bytes_per_cycle=1.0, line_cycles=20),
    },
    dma_issue_cycles=21,
    wait_cycles=15,
    fork_cycles=50,
    ops_per_cycle_per_core=1.0,
    notes={
        "cores": "8 cluster cores (pulp-runtime include/archi/chips/pulp/properties.h, ARCHI_CLUSTER_NB_PE; "
                 "GVSoC's pulp-open target).",
        "l1_size": "64 KiB TCDM (../shared/tools/gvsoc/README.md, pulp-open).",
        "l2_size": "448 KiB shared L2 (properties.h: ARCHI_L2_SHARED_SIZE 0x70000; the two 32 KiB private "
                   "banks hold the runtime).",
        "l3": "assumption: pulp-open has no L3 the back-end drives; sizes as gap8 for the host simulator.",
        "cluster_dma": "measured on GVSoC pulp-open (bench/gvsoc_micro.py, bench/results/gvsoc_micro.json): "
                       "from 256 B on, issue to completed wait is exactly 42 + bytes/8 (in; out adds 1 cycle per "
                       "256-B burst), less the 21 issue cycles: set-up 21, 8 B/cycle; 2D out costs 1 cycle per "
                       "burst, in nothing: line_cycles 1. MCHAN has separate read and write "
                       "channels (a read and a write overlap: 0.8-0.99 measured), which the single-queue model "
                       "does not express yet (docs/gvsoc-calibration.md).",
        "udma": "assumption, as gap8 (the GVSoC back-end refuses L3 devices).",
        "dma_issue_cycles": "measured on GVSoC: plp_dma_memcpy issue 21 cycles (bench/gvsoc_micro.py).",
        "wait_cycles": "measured on GVSoC: plp_dma_wait on a finished transfer 15 cycles (bench/gvsoc_micro.py).",
        "fork_cycles": "measured on GVSoC: the target runtime's fork + join round trip on 8 cores, 50 cycles "
                       "(bench/gvsoc_micro.py).",
        "ops_per_cycle_per_core": "assumption, as gap8.",
    },
)

PLATFORMS = {p.name: p for p in (GAP8, GAP9, PULP_OPEN)}


def get_platform(platform: str | Platform = "gap8", **overrides) -> Platform:
    """Return a platform by name (or pass one through), with optional field overrides."""
    if isinstance(platform, Platform):
        base = platform
    else:
        try:
            base = PLATFORMS[str(platform).lower()]
        except KeyError:
            raise PlatformError(f"unknown platform '{platform}'",
                                hint=f"known platforms: {', '.join(sorted(PLATFORMS))}") from None
    return base.with_overrides(**overrides) if overrides else base
