"""Platforms as data: memory sizes, core count and the cost model of each chip.

Every number has its source in ``notes`` or is marked as an assumption. A platform is a frozen
dataclass; use :func:`get_platform` and ``dataclasses.replace`` (or ``Platform.with_overrides``)
to change any value. Adding a chip means adding one entry to ``PLATFORMS``.
"""

from __future__ import annotations

import ast
import numbers
from dataclasses import dataclass, field, replace
from typing import Optional

from .errors import PlatformError
from .model.cost import cost_problem


@dataclass(frozen=True)
class DmaEngine:
    """Cost of one transfer on a DMA engine: ``setup + bytes / bytes_per_cycle``, plus
    ``line_cycles`` for every line of a 2D (strided) transfer. ``duplex``: reads (ext -> loc)
    and writes (loc -> ext) queue on two channels that run at once, each a FIFO; else one FIFO
    carries both."""

    setup_cycles: int
    bytes_per_cycle: float
    line_cycles: int = 0
    duplex: bool = False

    def transfer_cycles(self, nbytes: int, lines: int = 1) -> int:
        if nbytes <= 0:
            return 0
        extra = self.line_cycles * lines if lines > 1 else 0
        return int(self.setup_cycles + -(-nbytes // self.bytes_per_cycle) + extra)


@dataclass(frozen=True)
class ComputeScale:
    """A basic kernel's compute cycles on a platform from its ``Cost=`` value (written for GAP8):
    ``Cost * percent / 100 + per_call`` (integer arithmetic, as the generated code evaluates
    it). ``percent`` 100 and ``per_call`` 0 leave the Cost as written.

    ``cost``: the platform's own Cost= of the basic kernel, used instead of the library's (or of
    the default cost) before ``percent`` and ``per_call``, for code whose cycles on this platform
    do not follow the library's shape. Same grammar as ``Cost=`` (:mod:`autotiler.model.cost`)
    over the basic kernel's scalar formal arguments and ``ncores``, evaluated in ``long long``;
    its names are checked against the basic kernel when a user kernel calls it."""

    percent: int
    per_call: int = 0
    cost: Optional[str] = None

    def __post_init__(self) -> None:
        for key, minimum in (("percent", 1), ("per_call", 0)):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
                raise PlatformError(f"ComputeScale.{key} must be an int >= {minimum}, got {value!r}")
        if self.cost is not None and not isinstance(self.cost, str):
            raise PlatformError(f"ComputeScale.cost must be a Cost expression (a string) or None, got {self.cost!r}")

    @property
    def identity(self) -> bool:
        """Charges the library's Cost= as written."""
        return (self.percent, self.per_call, self.cost) == (100, 0, None)


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
    kernel_call_cycles: int = 0     # core cycles of entering one user-kernel call (cold code)
    l2_app_bytes: int = 0           # L2 the application's code, runtime and static data take (import's default leaves it)
    notes: dict = field(default_factory=dict, compare=False)
    # basic-kernel name -> ComputeScale of its Cost= on this platform; "*": any other kernel.
    # Empty: every Cost as written (the GAP8 figures the basic kernels declare).
    compute: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        """A platform every user can divide by: at least one core and some L1 and L2, counts that
        are ints (a bool, float or string is refused), nothing negative."""
        for key in ("cores", "l1_size", "l2_size", "l3_ram_size", "l3_flash_size", "dma_issue_cycles",
                    "wait_cycles", "fork_cycles", "kernel_call_cycles", "l2_app_bytes"):
            value = getattr(self, key)
            minimum = 1 if key in ("cores", "l1_size", "l2_size") else 0
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
                raise PlatformError(f"platform '{self.name}': {key} must be an int >= {minimum}, got {value!r}")
        rate = self.ops_per_cycle_per_core
        if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not rate > 0:
            raise PlatformError(f"platform '{self.name}': ops_per_cycle_per_core must be a number > 0, got {rate!r}")
        for name, scale in self.compute.items():
            if not isinstance(name, str) or not isinstance(scale, ComputeScale):
                raise PlatformError(f"platform '{self.name}': compute maps basic-kernel names to ComputeScale, "
                                    f"got {name!r}: {scale!r}")
            self._check_cost(name, scale.cost)

    def _check_cost(self, kernel: str, cost: Optional[str]) -> None:
        """A platform's own Cost= is a valid Cost expression; its names are the basic kernel's
        formals, which only the model knows (checked there: check_platform_cost)."""
        if cost is None:
            return
        if kernel == "*":
            raise PlatformError(f"platform '{self.name}': compute['*'].cost: {cost!r} is given for any basic kernel, "
                                "but a cost names the formal arguments of one",
                                hint="give the cost to the basic kernel's own entry; '*' takes percent and per_call")
        problem = cost_problem(cost, None)
        if problem is not None:
            raise PlatformError(f"platform '{self.name}': compute['{kernel}'].cost: {problem.message}", hint=problem.hint)

    def compute_scale(self, kernel: str) -> Optional[ComputeScale]:
        """How ``kernel``'s Cost= becomes cycles here (None: as written)."""
        scale = self.compute.get(kernel, self.compute.get("*"))
        return None if scale is None or scale.identity else scale

    def with_overrides(self, **changes) -> Platform:
        unknown = sorted(set(changes) - set(self.__dataclass_fields__))
        if unknown:
            raise PlatformError(f"unknown platform field(s) {', '.join(unknown)}",
                                hint=f"fields are {', '.join(self.__dataclass_fields__)}")
        return replace(self, **changes)


# Why the three cluster DMAs are duplex (cited once, used by each platform's notes).
_MCHAN = ("MCHAN, the cluster DMA of GAP8 (gap_sdk archi/chips/gap/properties.h: MCHAN_VERSION 6), "
          "GAP9 (MCHAN_VERSION 7) and pulp-open, queues reads and writes separately (GVSoC "
          "pulp/pulp/mchan/mchan_v7_impl.cpp: pending read and write command queues; measured on GVSoC: "
          "a read and a write overlap 0.80-0.99, bench/gvsoc_micro.py): duplex.")

GAP8 = Platform(
    name="gap8",
    cores=8,
    l1_size=64 * 1024,
    l2_size=512 * 1024,
    l3_ram_size=8 * 1024 * 1024,
    l3_flash_size=64 * 1024 * 1024,
    cluster_dma=DmaEngine(setup_cycles=30, bytes_per_cycle=8.0, line_cycles=4, duplex=True),
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
                       "setup 30 cycles and 4 cycles per 2D line are assumptions. " + _MCHAN,
        "udma": "HyperBus is 8-bit DDR, 2 B per bus clock theoretical (peers-and-limits.md 3.5); "
                "1 B per cluster cycle and the setup costs are assumptions.",
        "dma_issue_cycles": "assumption: programming a cluster-DMA command.",
        "wait_cycles": "assumption: a wait on a transfer already done.",
        "fork_cycles": "assumption: team fork + join on 8 cores.",
        "kernel_call_cycles": "assumption: 0 (GAP8's cluster instruction cache is cold on a kernel's first call "
                              "too, as pulp-open's; its cost is measured there only, and GAP8's runtime, macros and "
                              "basic kernels are not pulp-open's: docs/gvsoc-calibration.md, 'Cold calls').",
        "l2_app_bytes": "assumption: 0 (GAP8's code, runtime and static data live in L2 too, but no GAP8 "
                        "application of ours was measured: an import for gap8 should give --L2 with their room).",
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
    cluster_dma=DmaEngine(setup_cycles=25, bytes_per_cycle=16.0, line_cycles=2, duplex=True),
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
        "cluster_dma": "assumption: 64-bit cluster DMA at 2x GAP8's width (16 B/cycle). " + _MCHAN,
        "udma": "assumptions; MRAM is GAP9's on-chip privileged flash (AutoTiler guide, "
                "SetMemoryDeviceInfos).",
        "dma_issue_cycles": "assumption, as for gap8.",
        "wait_cycles": "assumption, as for gap8.",
        "fork_cycles": "assumption: a little below gap8's (GAP9's cluster controller dispatches).",
        "kernel_call_cycles": "assumption: 0, as for gap8.",
        "l2_app_bytes": "assumption: 0, as for gap8.",
        "ops_per_cycle_per_core": "assumption, as for gap8.",
    },
)

PULP_OPEN = Platform(
    name="pulp_open",
    cores=8,
    l1_size=64 * 1024 - 8 * 2048 - 256,
    l2_size=448 * 1024,
    l3_ram_size=8 * 1024 * 1024,
    l3_flash_size=64 * 1024 * 1024,
    cluster_dma=DmaEngine(setup_cycles=16, bytes_per_cycle=8.0, line_cycles=1, duplex=True),
    udma={
        "ram": DmaEngine(setup_cycles=200, bytes_per_cycle=1.0, line_cycles=20),
        "flash": DmaEngine(setup_cycles=300, bytes_per_cycle=1.0, line_cycles=20),
    },
    dma_issue_cycles=52,
    wait_cycles=22,
    fork_cycles=98,
    ops_per_cycle_per_core=1.0,
    kernel_call_cycles=538,
    l2_app_bytes=48 * 1024,
    notes={
        "cores": "8 cluster cores (pulp-runtime include/archi/chips/pulp/properties.h, ARCHI_CLUSTER_NB_PE; "
                 "GVSoC's pulp-open target).",
        "l1_size": "what the kernels can have of the 64 KiB TCDM (../shared/tools/gvsoc/README.md, "
                   "pulp-open): pulp-runtime's cluster_start puts the 8 cores' stacks there (CLUSTER_STACK_SIZE "
                   "2 KiB each, pulp.h), and the target runtime's fork mailbox takes a few words (measured 40 B "
                   "with nm; 256 B kept, an assumption). A larger budget leaves the cluster unstarted "
                   "(host_harness/gvsoc.py says so).",
        "l2_size": "448 KiB shared L2 (properties.h: ARCHI_L2_SHARED_SIZE 0x70000; the two 32 KiB private "
                   "banks hold the runtime).",
        "l3": "assumption: pulp-open has no L3 the back-end drives; sizes as gap8 for the host simulator.",
        "cluster_dma": "measured on GVSoC pulp-open (bench/gvsoc_micro.py, bench/results/gvsoc_micro.json, "
                       "runtime statements): from 1 KiB on, AT_L2_COPY + AT_L2_WAIT on the target runtime is exactly "
                       "68 + bytes/8 (in; out adds 1 cycle per 256-B burst), less the 52 issue cycles: set-up 16, "
                       "8 B/cycle; 2D out costs 1 cycle per line (a line of at most 256 B), in nothing: line_cycles 1 "
                       "(docs/gvsoc-calibration.md). " + _MCHAN,
        "udma": "assumption, as gap8 (on GVSoC the L3 devices are an emulation in L2: docs/gvsoc.md).",
        "dma_issue_cycles": "measured on GVSoC: an AT_L2_COPY statement on the target runtime (host_harness/target: "
                            "the call of at_target_copy and its plp_dma_memcpy), 52 cycles (bench/gvsoc_micro.py, "
                            "bench/gvsoc/runtime; the bare plp_dma_memcpy is 21).",
        "wait_cycles": "measured on GVSoC: an AT_L2_WAIT statement on a finished transfer, 22 cycles "
                       "(bench/gvsoc_micro.py, bench/gvsoc/runtime; the bare plp_dma_wait is 15).",
        "fork_cycles": "measured on GVSoC: an AT_FORK statement of an empty basic kernel on 8 cores (its struct's "
                       "fields, AT_SIM_COMPUTE, at_target_fork's release and join), 98 cycles, of which 62 inside the "
                       "window GvsocProgram.profile times (bench/gvsoc_micro.py, bench/gvsoc/runtime; the bare "
                       "barrier fork is 50).",
        "kernel_call_cycles": "measured on GVSoC: a user kernel's first call costs 388 to 1171 cycles more than its "
                              "warm calls outside its basic kernels (the cold instruction cache: its code and the "
                              "runtime's), median 538 over 8 generated kernels (bench/gvsoc_micro.py, cold calls, "
                              "bench/results/gvsoc_micro.json). It grows with the kernel's code (~0.8 cycles per byte), "
                              "which the model does not know: a constant, charged on every call (a call whose code "
                              "is still cached costs that much less; docs/gvsoc-calibration.md).",
        "l2_app_bytes": "measured on GVSoC pulp-open: MobileNet v2 0.35 96's application (pulp-runtime, the "
                        "target runtime, the generated code and its static data) takes 38,166 B more of the linker's "
                        "L2 region than the two private banks l2_size leaves out (with the SQ8 kernels of issue 25's "
                        "last pass; 26,246 B before it); 48 KiB kept for larger graphs' code (docs/gvsoc.md, "
                        "'L2 budget').",
        "ops_per_cycle_per_core": "assumption, as gap8.",
        "compute": "measured on GVSoC: per basic kernel, Cost= (GAP8 figures: SIMD, hardware loops) to "
                   "rv32imc cycles, fitted by `bench/calibrate.py --fit-compute` (make calibrate, the full run: the "
                   "example kernels at three L1 budgets each and the MNIST layers at 48000, 16000 and 6000 B; "
                   "GvsocProgram.profile: each basic kernel's fork cycles against its summed Cost=; fit errors and "
                   "the leave-one-out check in bench/results/calibration_fit.json, docs/gvsoc-calibration.md). The "
                   "entries with a cost= are this platform's own Cost= of the kernel (the convolutions: one term "
                   "per valid output and input feature on the busiest core, times the taps for NxM, as their C "
                   "computes, where the library's Cost= counts the halo too; KerDP_IO_fp: its items per core, the Cost='s 20*ncores fixed part "
                   "being too large for the code): its terms are chosen by hand from the C "
                   "(autotiler/generators/cnn_kernels/, examples/cnn_conv_v3/ConvV3BasicKernels.c), their "
                   "coefficients (hundredths of a cycle) and per_call fitted on the term sums the fit walks off the "
                   "runs' schedules. '*' (kernels not measured) is the geometric mean of the scaled kernels' "
                   "percent, an assumption.",
        "compute_sq8": "the SQ8 TFLM kernels' entries (KerPar*_TFLM_SQ8: their C on Xpulpv2's dot products and "
                       "hardware loops) are measured on GVSoC by `bench/calibrate.py --fit-sq8` (make calibrate; "
                       "bench/calibrate_sq8.py: single layers of every kernel the imported networks run, over a "
                       "spread of shapes and two L1 budgets, the networks' own layers among them, each bit-exact "
                       "with numpy, called twice in one application and fitted on the first, cold call's fork cycles "
                       "for the kernels a graph always runs after another kernel (calibrate_sq8.COLD), on the "
                       "midpoint of the first and the warm call for the convolution and the dense layer; the cost= "
                       "terms follow each kernel's paths in its C: calibrate_sq8.SHAPES), on the kernels' commit "
                       "recorded in "
                       "bench/results/calibration_sq8.json, with its fit errors and leave-one-out check; checked "
                       "on the four imported networks node by node (bench/results/calibration_networks.md) and "
                       "on the tiler's candidate tilings (bench/results/calibration_ranking.md); "
                       "docs/gvsoc-calibration.md, 'The SQ8 TFLM kernels'.",
    },
    compute={
        "ConvV3_KerDP_fp": ComputeScale(319, 49),
        "ConvV3_KerParConvNxMStrideSxSy_DP_fp": ComputeScale(100, 165, cost="(2158*((OutFeatures + ncores - 1) / ncores)*InFeatures*((UsedW - N) / S + 1)*((UsedH - Ny) / Sy + 1)*N*Ny) / 100"),
        "Image2Complex": ComputeScale(203, 35),
        "KerDPLinearLayer_fp": ComputeScale(513, 0),
        "KerDP_IO_fp": ComputeScale(100, 848, cost="(9038*((W * H * InFeatures + ncores - 1) / ncores)) / 100"),
        "KerDP_fps": ComputeScale(848, 55),
        "KerDirectConv5x5_fp": ComputeScale(404, 0),
        "KerMatMultParallel16": ComputeScale(362, 63),
        "KerMatMultParallelVectorial16": ComputeScale(466, 0),
        "KerMatrixMax": ComputeScale(402, 128),
        "KerParAdd_TFLM_SQ8": ComputeScale(177, 1824),
        "KerParAvgPool_TFLM_SQ8": ComputeScale(100, 1151, cost="(778*((Ho*C + ncores - 1)/ncores)*Wo*Fy*Fx + 8284*((Ho*C + ncores - 1)/ncores)*Wo) / 100"),
        "KerParConv3x3Stride2_DP_fps": ComputeScale(100, 630, cost="(30797*((OutFeatures + ncores - 1) / ncores)*InFeatures*((UsedW - 3) / 2 + 1)*((UsedH - 3) / 2 + 1)) / 100"),
        "KerParConv5x5Stride1_DP_fp": ComputeScale(100, 388, cost="(72904*((OutFeatures + ncores - 1) / ncores)*InFeatures*(UsedW - 4)*(UsedH - 4)) / 100"),
        "KerParConvDW_TFLM_SQ8": ComputeScale(100, 0, cost="(3071*((1/Sx)*(1/(Wo/65 + 1))*((((OutFeat*Ho + ncores - 1)/ncores) - (((((OutFeat*Ho + ncores - 1)/ncores) + Ho - 1)/Ho)*((Ho - (H - 3 + Sy)/Sy) + (Ho - (Ho - (H - 3 + Sy)/Sy)) % 2)))/2))*2*Wo*(1 - (1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))) - ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))) + 2677*(((OutFeat*Ho + ncores - 1)/ncores) - 2*((1/Sx)*(1/(Wo/65 + 1))*((((OutFeat*Ho + ncores - 1)/ncores) - (((((OutFeat*Ho + ncores - 1)/ncores) + Ho - 1)/Ho)*((Ho - (H - 3 + Sy)/Sy) + (Ho - (Ho - (H - 3 + Sy)/Sy)) % 2)))/2)))*Wo*(1/Sx)*(1 - (1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))) - ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))) + 3212*((OutFeat*Ho + ncores - 1)/ncores)*Wo*(1 - 1/Sx)*(1 - (1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))) - ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))) + 26517*((1/Sx)*(1/(Wo/65 + 1))*((((OutFeat*Ho + ncores - 1)/ncores) - (((((OutFeat*Ho + ncores - 1)/ncores) + Ho - 1)/Ho)*((Ho - (H - 3 + Sy)/Sy) + (Ho - (Ho - (H - 3 + Sy)/Sy)) % 2)))/2))*(1 - (1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))) - ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))) + 133733*(((OutFeat*Ho + ncores - 1)/ncores) - 2*((1/Sx)*(1/(Wo/65 + 1))*((((OutFeat*Ho + ncores - 1)/ncores) - (((((OutFeat*Ho + ncores - 1)/ncores) + Ho - 1)/Ho)*((Ho - (H - 3 + Sy)/Sy) + (Ho - (Ho - (H - 3 + Sy)/Sy)) % 2)))/2)))*(1/Sx)*(1 - (1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))) - ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))) + 46420*((OutFeat*Ho + ncores - 1)/ncores)*(1 - 1/Sx)*(1 - (1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))) - ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))) + 87216*((((OutFeat*Ho + ncores - 1)/ncores) + Ho - 1)/Ho)*(1 - (1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))) - ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))) + 9646*(1 - (1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))) - ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))))*(1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*((OutFeat + ncores - 1)/ncores)*Ho*(Wo/2)*(1/Sx) + 15036*(1 - (1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))) - ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))))*(1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*((OutFeat + ncores - 1)/ncores)*Ho*(Wo/2)*(1 - 1/Sx) + 9277*(1 - (1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))) - ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))))*(1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*((OutFeat + ncores - 1)/ncores)*Ho*(Wo % 2) + 43644*(1 - (1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))) - ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))))*(1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*((((OutFeat + ncores - 1)/ncores) + 31)/32)*Ho*((Wo + 1)/2) + 14783*(1 - (1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))) - ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))))*(1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*((OutFeat + ncores - 1)/ncores) + 0*(1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1)))*((OutFeat + ncores - 1)/ncores)*Wo*(Ho + 2) + 5156*(1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1)))*((OutFeat + ncores - 1)/ncores)*Wo*(Ho/2) + 2034*(1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1)))*((OutFeat + ncores - 1)/ncores)*Wo*(Ho % 2) + 3677*(1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1)))*((OutFeat + ncores - 1)/ncores)*Wo + 0*(1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1)))*((OutFeat + ncores - 1)/ncores)*Wo*(1/Ho) + 53602*(1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1)))*((OutFeat + ncores - 1)/ncores) + 2807*((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1)))*((OutFeat + ncores - 1)/ncores)*Wo*Ho + 785*((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1)))*((OutFeat + ncores - 1)/ncores)*Wo + 79047*((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1)))*((OutFeat + ncores - 1)/ncores) + 0*((1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))) + ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))))*((OutFeat + ncores - 1)/ncores)*H*W + 1606*((1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))) + ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1))))*((OutFeat + ncores - 1)/ncores)*H + 425*((1/(Sx*Sy))*(1/(((Wo + 2)*(Ho + 2))/257 + 1))*(1/(((((Wo + 2)*(Ho + 2)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1)))*((Wo + 2)*(Ho + 2)) + ((Sx/2)*(Sy/2)*(1/(Sx/3 + 1))*(1/(Sy/3 + 1)))*(1/(((((2*Wo + 1)*(2*Ho + 1)) + 7)/4 + Ho + 2)/193 + 1))*(1 - (1/((Wo*Ho)/37 + 1))*(1 - 1/(OutFeat/(8*ncores) + 1))*(1/((Wo*Ho)/17 + 1)))*((2*Wo + 1)*(2*Ho + 1)))) / 100"),
        "KerParConv_TFLM_SQ8": ComputeScale(100, 0, cost="(652*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*((((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) - ((Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))*((Ho + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) + (((Ho - ((H - (Fy - 1)*Dy - 1 + Sy)/Sy)) + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))*(Wo - (Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))))) - ((1/(Fx*Fy*Sx*Sy))*(1/(InFeat/GroupIn))*(1 - 1/(GroupIn/128 + 1))*(1/(GroupIn % 4 + 1))*4*(((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))/4)))*(1 - ((Fx*GroupIn)/4)*(1/((Fx*GroupIn)/5 + 1))*(1/(InFeat/GroupIn))*(1/((4*Fy)/129 + 1)))*Fy*((Fx*GroupIn + 3)/4) + 835*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*((((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) - ((Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))*((Ho + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) + (((Ho - ((H - (Fy - 1)*Dy - 1 + Sy)/Sy)) + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))*(Wo - (Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))))) - ((1/(Fx*Fy*Sx*Sy))*(1/(InFeat/GroupIn))*(1 - 1/(GroupIn/128 + 1))*(1/(GroupIn % 4 + 1))*4*(((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))/4)))*(1 - ((Fx*GroupIn)/4)*(1/((Fx*GroupIn)/5 + 1))*(1/(InFeat/GroupIn))*(1/((4*Fy)/129 + 1)))*Fy*((Fx*GroupIn) % 4) + 0*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*((((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) - ((Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))*((Ho + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) + (((Ho - ((H - (Fy - 1)*Dy - 1 + Sy)/Sy)) + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))*(Wo - (Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))))) - ((1/(Fx*Fy*Sx*Sy))*(1/(InFeat/GroupIn))*(1 - 1/(GroupIn/128 + 1))*(1/(GroupIn % 4 + 1))*4*(((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))/4)))*(1 - ((Fx*GroupIn)/4)*(1/((Fx*GroupIn)/5 + 1))*(1/(InFeat/GroupIn))*(1/((4*Fy)/129 + 1)))*Fy*(1 - 1/((Fx*GroupIn) % 4 + 1)) + 0*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*((((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) - ((Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))*((Ho + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) + (((Ho - ((H - (Fy - 1)*Dy - 1 + Sy)/Sy)) + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))*(Wo - (Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))))) - ((1/(Fx*Fy*Sx*Sy))*(1/(InFeat/GroupIn))*(1 - 1/(GroupIn/128 + 1))*(1/(GroupIn % 4 + 1))*4*(((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))/4)))*(1 - ((Fx*GroupIn)/4)*(1/((Fx*GroupIn)/5 + 1))*(1/(InFeat/GroupIn))*(1/((4*Fy)/129 + 1))) + 27144*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*((Ho + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))*(1 - (1/(Fx*Fy*Sx*Sy)))*(1 - ((Fx*GroupIn)/4)*(1/((Fx*GroupIn)/5 + 1))*(1/(InFeat/GroupIn))*(1/((4*Fy)/129 + 1))) + 968*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*((Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))*((Ho + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) + (((Ho - ((H - (Fy - 1)*Dy - 1 + Sy)/Sy)) + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))*(Wo - (Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))))*(1 - ((Fx*GroupIn)/4)*(1/((Fx*GroupIn)/5 + 1))*(1/(InFeat/GroupIn))*(1/((4*Fy)/129 + 1)))*Fy*((Fx*GroupIn + 3)/4) + 9336*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*((Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))*((Ho + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) + (((Ho - ((H - (Fy - 1)*Dy - 1 + Sy)/Sy)) + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))*(Wo - (Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))))*(1 - ((Fx*GroupIn)/4)*(1/((Fx*GroupIn)/5 + 1))*(1/(InFeat/GroupIn))*(1/((4*Fy)/129 + 1)))*Fy + 0*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*((Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))*((Ho + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) + (((Ho - ((H - (Fy - 1)*Dy - 1 + Sy)/Sy)) + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))*(Wo - (Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))))*(1 - ((Fx*GroupIn)/4)*(1/((Fx*GroupIn)/5 + 1))*(1/(InFeat/GroupIn))*(1/((4*Fy)/129 + 1)))*Fy*Fx + 204*(Chunk % 4)*((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))*Fy*Fx*((GroupIn + 3)/4) + 3430*(Chunk % 4)*((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))*Fy*Fx + 23109*(Chunk % 4)*((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) + 7235*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) + 1273*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*((Fy*Fx*GroupIn + 3)/4) + 273599*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) + 41483*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*Fy*((Fx*GroupIn + 3)/4)*(1 - 1/((Fx*GroupIn) % 4 + 1)) + 107963*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*((Ho + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))*(((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx) % 2)*(1 - (1/(Fx*Fy*Sx*Sy)))*(1 - ((Fx*GroupIn)/4)*(1/((Fx*GroupIn)/5 + 1))*(1/(InFeat/GroupIn))*(1/((4*Fy)/129 + 1))) + 2752*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*(((1/(Fx*Fy*Sx*Sy))*(1/(InFeat/GroupIn))*(1 - 1/(GroupIn/128 + 1))*(1/(GroupIn % 4 + 1))*4*(((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))/4))/4)*(GroupIn/4) + 0*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*(((1/(Fx*Fy*Sx*Sy))*(1/(InFeat/GroupIn))*(1 - 1/(GroupIn/128 + 1))*(1/(GroupIn % 4 + 1))*4*(((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))/4))/4) + 0*((Fx*GroupIn)/4)*(1/((Fx*GroupIn)/5 + 1))*(1/(InFeat/GroupIn))*(1/((4*Fy)/129 + 1))*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))*Fy + 16108*((Fx*GroupIn)/4)*(1/((Fx*GroupIn)/5 + 1))*(1/(InFeat/GroupIn))*(1/((4*Fy)/129 + 1))*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*((Ho*Wo + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) + 2826*((Fx*GroupIn)/4)*(1/((Fx*GroupIn)/5 + 1))*(1/(InFeat/GroupIn))*(1/((4*Fy)/129 + 1))*((((Chunk + 3)/4) + (1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))) - 1)/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))*((Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))*((Ho + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1))))) + (((Ho - ((H - (Fy - 1)*Dy - 1 + Sy)/Sy)) + (ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))) - 1)/(ncores/(1 + (1 - 1/(((Chunk + 3)/4)/2 + 1)) + 2*(1 - 1/(((Chunk + 3)/4)/4 + 1)) + 4*(1 - 1/(((Chunk + 3)/4)/8 + 1)))))*(Wo - (Wo - ((W - (Fx - 1)*Dx - 1 + PadLeft + Sx)/Sx - (PadLeft + Sx - 1)/Sx))))*Fy) / 100"),
        "KerParGlobalSumRequant_TFLM_SQ8": ComputeScale(100, 207, cost="(921*((Feat + ncores - 1)/ncores)*Pixels + 11571*((Feat + ncores - 1)/ncores)) / 100"),
        "KerParLinearLayerReLU_fp": ComputeScale(514, 0),
        "KerParLinear_TFLM_SQ8": ComputeScale(100, 666, cost="(999*(((OutDim + ncores - 1)/ncores)/4)*(InDim/4) + 807*(((OutDim + ncores - 1)/ncores) % 4)*(InDim/4) + 5070*((OutDim + ncores - 1)/ncores)*(InDim % 4) + 11786*((OutDim + ncores - 1)/ncores)) / 100"),
        "KerParMaxPool_TFLM_SQ8": ComputeScale(100, 1915, cost="(1000*((Ho*C + ncores - 1)/ncores)*Wo*Fy*Fx + 3633*((Ho*C + ncores - 1)/ncores)*Wo) / 100"),
        "KerParPool2x2Stride2_fp": ComputeScale(1900, 147),
        "KerParSetBias_DP_fp": ComputeScale(542, 9),
        "KerParSetBias_DP_fps": ComputeScale(507, 16),
        "KerParSoftMaxItems_TFLM_SQ8": ComputeScale(100, 2723, cost="(63027*((Dim + ncores - 1)/ncores)) / 100"),
        "KerParSoftMax_fp": ComputeScale(1533, 0),
        "KerPrime": ComputeScale(698, 0),
        "KerProcess": ComputeScale(274, 24),
        "KerSetInBias": ComputeScale(484, 0),
        "KerSetZero32": ComputeScale(478, 0),
        "MatSumPar": ComputeScale(273, 36),
        "MatrixAdd": ComputeScale(186, 39),
        "Radix2FFT_DIF_2D_Horizontal": ComputeScale(234, 70),
        "Radix2FFT_DIF_2D_Vertical": ComputeScale(234, 64),
        "SwapSamples_2D_Horizontal_Par": ComputeScale(376, 10),
        "SwapSamples_2D_Vertical_Par": ComputeScale(388, 0),
        "*": ComputeScale(438, 0),
    },
)

# A fused chain's line-buffer kernels (KerParConvKeep_TFLM_SQ8, KerParConvDWKeep_TFLM_SQ8:
# autotiler/generators/cnn_kernels/CNN_SQ8_Fused.c) run the convolution on the lines a tile computes,
# then move the kept input lines: the convolution's Cost= on those lines plus the move's.
_KEPT = "KeepOut*(1 - 1/(TileIndex + 1))"       # lines of Out a tile other than the first does not compute
# The move: K = min(KeepIn, H) lines of W*InFeat bytes at 1 cycle per 4 bytes (L1 stores a word per
# cycle), shared by the cores, in rounds of at most D = H - K lines (the distance of its ranges; D = 0:
# nothing to move), each + 20 cycles of memcpy's call and the barrier (assumptions); nothing on the
# last tile. Every divisor is >= 1 (the grammar has no comparison; the expression is evaluated even
# where a factor is 0): 1 - 1/(x + 1) is x > 0 for x >= 0.
_GE = "(1 - 1/((H + 1)/(KeepIn + 1) + 1))"                       # H >= KeepIn
_K = f"(KeepIn*{_GE} + H*(1 - {_GE}))"
_D = f"(H - {_K})"
_MOVES = f"(1 - 1/({_D} + 1))"                                    # D > 0
_ROUNDS = f"(({_K} + {_D} - 1 + 1/({_D} + 1))/({_D} + 1/({_D} + 1)))"
KEEP_MOVE_COST = (f"(1 - TileLast)*{_MOVES}*((({_K}*W*InFeat + 3)/4 + ncores - 1)/ncores + 20*{_ROUNDS})")


class _NewLines(ast.NodeTransformer):
    """Ho, H of a convolution's Cost= become the lines a tile of the line-buffer mode computes."""

    # a tile that computes no line (its lines all kept: the last, in the bottom padding) is charged
    # one, as the fitted costs divide by Ho
    LINES = {"Ho": f"(Ho - {_KEPT} + 1/(Ho - {_KEPT} + 1))", "H": f"(H - Sy*{_KEPT})"}

    def visit_Name(self, node: ast.Name):
        text = self.LINES.get(node.id)
        return ast.parse(text, mode="eval").body if text else node


def fused_keep_cost(conv_cost: str) -> str:
    """The Cost= of a line-buffer kernel (KerConvKeep_TFLM_SQ8_T) from its convolution's: Ho and H
    reduced by the kept lines in tiles after the first, plus the move of the kept input lines."""
    tree = _NewLines().visit(ast.parse(conv_cost, mode="eval"))
    return f"({ast.unparse(tree)}) + {KEEP_MOVE_COST}"


def _with_fused_keep(p: Platform) -> Platform:
    """pulp_open's entries of the line-buffer kernels: its own convolutions' entries, rewritten."""
    entries = {}
    for keep, conv in (("KerParConvKeep_TFLM_SQ8", "KerParConv_TFLM_SQ8"),
                       ("KerParConvDWKeep_TFLM_SQ8", "KerParConvDW_TFLM_SQ8")):
        scale = p.compute[conv]
        entries[keep] = ComputeScale(scale.percent, scale.per_call, cost=fused_keep_cost(scale.cost))
    note = ("the line-buffer kernels of fused chains (KerPar*Keep_TFLM_SQ8) take their convolution's entry on the "
            "lines a tile computes (Ho, H less the kept lines after the first tile) plus an assumed move of the kept "
            "input lines (KEEP_MOVE_COST); not fitted on GVSoC.")
    return replace(p, compute={**p.compute, **entries}, notes={**p.notes, "compute_fused": note})


PULP_OPEN = _with_fused_keep(PULP_OPEN)

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
