"""The SQ8 basic kernels of TensorFlow Lite Micro's requantisation: convolutions and pooling (HWC): ``SOURCES`` (in ``cnn_kernels/``)
and ``load()``, which declares their structs (``LibKernelTemplate``) and kernels (``LibKernel``
with their ``Cost=``) in the current model. Called by ``LoadCNN_SQ8_Library()``.

Kernels (``cnn_kernels/CNN_SQ8_TFLM_Conv.h`` documents each field):

* ``KerParConv_TFLM_SQ8`` (``KerConv_TFLM_SQ8_T``): CONV_2D and grouped CONV_2D on a tile of
  lines, a chunk of output channels;
* ``KerParConvDW_TFLM_SQ8`` (same struct): DEPTHWISE_CONV_2D, any depth multiplier;
* ``KerParMaxPool_TFLM_SQ8``, ``KerParAvgPool_TFLM_SQ8`` (``KerPool_TFLM_SQ8_T``): MAX_POOL_2D,
  AVERAGE_POOL_2D on a tile of lines.

Costs (cycles of one call per core):

* regular / grouped convolution: 5 cycles per 8 MAC per core, the vectorised 8-bit convolution
  rate measured on GAP8 (gap_sdk ``benchmarks/gap8/cnn/README.md``: 5x5 convolution, 291 600 MAC
  in 22 813 cycles on 8 cores, 1.6 MAC/cycle per core; the figure :mod:`.cnn_library` uses). PULP-NN
  (Garofalo et al., 2020) reports up to about 15 MAC/cycle on 8 cores (1.9 per core) for its HWC
  int8 convolution with 4x2 register blocking, which ours (one output at a time) does not reach,
  so the CHW figure is kept. Assumptions: 4 cycles per filter tap (pointer arithmetic and bounds
  checks of the tap loop), 12 cycles per output for the requantisation (at_tflm_requant_int8:
  a 64-bit product, rounding shifts, clamp) and its store, the filter's sum (1 cycle per 4
  bytes) once per channel;
* depth wise: scalar, 3 cycles per MAC (the measured single-core scalar rate of the same
  benchmark, 0.32 MAC/cycle) plus the 12 of the requantisation per output (assumption);
* pooling: 9 cycles per 4 window taps per core (the same benchmark: 2x2/2 max pooling, 3 556
  cycles for 3 136 outputs on 8 cores);
* 20 cycles of fork and barrier per call (assumption, as :mod:`.cnn_library`).

Output counts in the costs are those of the busiest core on the tile: the kernels share the
chunk's channels between the cores when there are at least ``ncores`` of them, else the lines
(depth wise: the lines first; pooling: the lines).
"""

from __future__ import annotations

from ..api import CArgs, LibKernel, LibKernelTemplate, TCArg
from ..constants import CALL_PARALLEL
from .cnn_library import CNN_KERNELS_DIR

SOURCES = [CNN_KERNELS_DIR / n for n in ("CNN_SQ8_Conv.c", "CNN_SQ8_ConvDW.c", "CNN_SQ8_Pooling.c")]

_P = " * __restrict__"
_US = "unsigned short int"
_UC = "unsigned char"
CONV_FIELDS = [("signed char" + _P, "In"), ("signed char" + _P, "Filter"), ("int" + _P, "Bias"),
               ("signed char" + _P, "Out"), ("int" + _P, "Scale"), ("signed char" + _P, "ScaleN"),
               ("signed char" + _P, "Infos"),
               *[(_US, n) for n in ("W", "H", "InFeat", "Wo", "Ho", "OutFeat", "GroupIn", "GroupOut", "Chunk",
                                    "ChunkIndex", "NChunks")],
               *[(_UC, n) for n in ("Fx", "Fy", "Sx", "Sy", "Dx", "Dy", "PadLeft")], ("v4s", "Pad")]
POOL_FIELDS = [("signed char" + _P, "In"), ("signed char" + _P, "Out"), ("signed char" + _P, "Infos"),
               *[(_US, n) for n in ("W", "H", "C", "Wo", "Ho")],
               *[(_UC, n) for n in ("Fx", "Fy", "Sx", "Sy", "PadLeft")], ("v4s", "Pad")]

# Where the figures come from. gap_sdk's SQ8 library gives its kernels no cost to mirror (its
# LibKernel calls carry a CNN_Match, not a Cost: tools/autotiler_v3/CNN_Generators_SQ8/
# CNN_Generators_SQ8.c), so these are GAP8's measured rates (gap_sdk benchmarks/gap8/cnn/README.md,
# "Parallel Vector", 100 iterations) and assumptions. On pulp_open the platform's own Cost= of each
# kernel, fitted on GVSoC (autotiler/platforms.py, bench/calibrate.py --fit-sq8), replaces them.
# Per output: 5 cycles per 8 MAC (the 5x5 byte convolution: 2281309 cycles / 100 for 291600 MAC on
# 8 cores), 4 per tap (assumption: the tap loop's addresses and bounds tests), 12 for the
# requantisation and store (assumption: at_tflm_requant_int8's 64-bit product, shifts, clamp).
_PER_OUTPUT = "(Fy*Fx*((5*GroupIn + 7)/8 + 4) + 12)"
# depth wise: 3 cycles per MAC (the same benchmark's scalar single-core rate, 92241320 cycles / 100
# for 291600 MAC: 0.32 MAC/cycle), 12 for the requantisation (assumption, as above)
_PER_OUTPUT_DW = "(3*Fy*Fx + 12)"


def _split(first: str, second: str, per: str) -> str:
    """The cycles of the busiest core of a kernel that shares the items of ``first`` between the
    cores when there are at least ``ncores`` of them, else those of ``second``, with Ho*Wo*Chunk
    outputs of ``per`` cycles. ``1/(N/ncores + 1)`` is 1 when N < ncores, else 0 (the grammar
    has no comparison)."""
    few = f"1/({first}/ncores + 1)"
    busy_first = f"(({first} + ncores - 1)/ncores)*{second}"
    busy_second = f"(({second} + ncores - 1)/ncores)*{first}"
    return f"((1 - {few})*{busy_first} + {few}*{busy_second})*{per}"


# the filter's sum, per channel: a core sums its own channels, or all of them when it has lines
# (assumption: 1 cycle per 4 bytes on the dot-product unit); + 20: fork and barrier (assumption, as
# cnn_library's kernels)
_FILTER_SUMS = "((1 - 1/(Chunk/ncores + 1))*((Chunk + ncores - 1)/ncores) + 1/(Chunk/ncores + 1)*Chunk)"
CONV_COST = (_split("Chunk", "Ho", f"Wo*{_PER_OUTPUT}") + f" + {_FILTER_SUMS}*((Fy*Fx*GroupIn + 3)/4) + 20")
CONVDW_COST = _split("Ho", "OutFeat", f"Wo*{_PER_OUTPUT_DW}") + " + 20"
# 9 cycles per 4 window taps: the benchmark's 2x2/2 max pooling, 355563 cycles / 100 for 3136 outputs
# on 8 cores (3556: 9.1 per output of 4 taps)
POOL_COST = "((Ho + ncores - 1)/ncores)*Wo*C*((9*Fy*Fx + 3)/4) + 20"


def _template(name: str, fields: list) -> None:
    LibKernelTemplate(name, CArgs(len(fields), *[TCArg(t, n) for t, n in fields]))


def load() -> None:
    """Declare the structs and kernels."""
    _template("KerConv_TFLM_SQ8_T", CONV_FIELDS)
    _template("KerPool_TFLM_SQ8_T", POOL_FIELDS)
    LibKernel("KerParConv_TFLM_SQ8", CALL_PARALLEL, 0, "KerConv_TFLM_SQ8_T", Cost=CONV_COST)
    LibKernel("KerParConvDW_TFLM_SQ8", CALL_PARALLEL, 0, "KerConv_TFLM_SQ8_T", Cost=CONVDW_COST)
    LibKernel("KerParMaxPool_TFLM_SQ8", CALL_PARALLEL, 0, "KerPool_TFLM_SQ8_T", Cost=POOL_COST)
    LibKernel("KerParAvgPool_TFLM_SQ8", CALL_PARALLEL, 0, "KerPool_TFLM_SQ8_T", Cost=POOL_COST)
