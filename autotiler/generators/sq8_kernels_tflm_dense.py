"""The SQ8 basic kernels of TensorFlow Lite Micro's requantisation: linear, element-wise, matrix products: ``SOURCES`` (in ``cnn_kernels/``)
and ``load()``, which declares their structs (``LibKernelTemplate``) and kernels (``LibKernel``
with their ``Cost=``) in the current model. Called by ``LoadCNN_SQ8_Library()``. C declarations:
``cnn_kernels/CNN_SQ8_TFLM_Dense.h``.

Costs (cycles of one call, per core):

* Measured (gap_sdk ``benchmarks/gap8/cnn/README.md``, as :mod:`.cnn_library` cites it): a byte
  linear layer of 1024 inputs x 16 outputs runs 2 235 cycles on 8 cores with the vector unit, 12
  cycles per 11 MAC per core. ``KerParLinear_TFLM_SQ8``, ``KerLinearDP_TFLM_SQ8`` and the transposed
  matrix product (contiguous int8 lines on ``gap_sumdotp4``) charge that rate.
* Assumptions: the weight sums that take the zero point out cost nothing more (the dot-product unit
  issues both per 4 bytes); TFLM's requantisation (MBQM: a 64-bit high multiply and a rounded shift,
  the zero point, the clamp) 12 cycles per output; ADD/SUB 3 of them per item (36 + 4 loads and
  stores = 40), MUL one (12 + 4 = 16); the non-transposed matrix product gathers its column 4 loads
  per 4 MAC (2 cycles per MAC); the reduction 2 cycles per core's partial sum plus one requantisation;
  20 cycles of fork and barrier per call (30 with a reduction).
"""

from __future__ import annotations

from ..api import CArgs, LibKernel, LibKernelTemplate, TCArg
from ..constants import CALL_PARALLEL, CALL_SEQUENTIAL_STRUCT
from .cnn_library import CNN_KERNELS_DIR

SOURCES = [CNN_KERNELS_DIR / n for n in ("CNN_SQ8_Linear.c", "CNN_SQ8_Eltwise.c", "CNN_SQ8_MatMul.c")]
_P = " * __restrict__"
_SC, _INT, _US = "signed char" + _P, "int" + _P, "unsigned short int"
_INFOS = (_SC, "Infos")
REQUANT = 12          # cycles of one TFLM requantisation (assumption)

STRUCTS = {
    "KerLinear_TFLM_SQ8_T": [(_SC, "In"), (_SC, "Filter"), (_INT, "Bias"), (_SC, "Out"), (_US, "InDim"),
                             (_US, "OutDim"), (_INT, "Scale"), (_SC, "ScaleN"), _INFOS],
    "KerLinearDP_TFLM_SQ8_T": [(_SC, "In"), (_SC, "Filter"), (_INT, "Reduct"), (_US, "InSize"), (_US, "Tile"),
                               _INFOS],
    "KerLinearReduct_TFLM_SQ8_T": [(_INT, "Reduct"), (_INT, "Bias"), (_SC, "Out"), (_INT, "Scale"),
                                   (_SC, "ScaleN"), _INFOS],
    "KerEltwise_TFLM_SQ8_T": [(_SC, "In1"), (_SC, "In2"), (_SC, "Out"), ("unsigned int", "N"), _INFOS],
    "KerTensorVectMul_TFLM_SQ8_T": [(_SC, "In1"), (_SC, "In2"), (_SC, "Out"), ("unsigned int", "NPix"),
                                    (_US, "Feat"), _INFOS],
    "KerMatMul_TFLM_SQ8_T": [(_SC, "In1"), (_SC, "In2"), (_INT, "Bias"), (_SC, "Out"), (_US, "ColM1"),
                             (_US, "Lines"), (_US, "W"), (_INT, "Scale"), (_SC, "ScaleN"), _INFOS],
}

_PER_CORE = "((%s + ncores - 1)/ncores)"
# kernel -> (struct, call kind, cost). Where the figures come from: gap_sdk's SQ8 library gives its
# kernels no cost to mirror (LibKernel with a CNN_Match: tools/autotiler_v3/CNN_Generators_SQ8/
# CNN_Generators_SQ8.c); 12/11 cycles per MAC is GAP8's byte linear layer (gap_sdk
# benchmarks/gap8/cnn/README.md, "Parallel Vector": 223484 cycles / 100 for 1024 x 16 MAC on 8
# cores); the requantisation (REQUANT), the element-wise per-item figures, the column gather of the
# non-transposed product, the reduction and the +20/+30 of fork and barrier are assumptions (see the
# module's documentation). On pulp_open the platform's fitted entries replace them
# (autotiler/platforms.py, bench/calibrate.py --fit-sq8).
KERNELS = {
    "KerParLinear_TFLM_SQ8": ("KerLinear_TFLM_SQ8_T", CALL_PARALLEL,
                              f"{_PER_CORE % 'OutDim'}*(InDim*12/11 + {REQUANT}) + 20"),
    "KerLinearDP_TFLM_SQ8": ("KerLinearDP_TFLM_SQ8_T", CALL_PARALLEL, f"{_PER_CORE % 'InSize'}*12/11 + 20"),
    "KerLinearReduct_TFLM_SQ8": ("KerLinearReduct_TFLM_SQ8_T", CALL_SEQUENTIAL_STRUCT,
                                 f"2*ncores + {REQUANT} + 30"),
    "KerParAdd_TFLM_SQ8": ("KerEltwise_TFLM_SQ8_T", CALL_PARALLEL, f"40*{_PER_CORE % 'N'} + 20"),
    "KerParSub_TFLM_SQ8": ("KerEltwise_TFLM_SQ8_T", CALL_PARALLEL, f"40*{_PER_CORE % 'N'} + 20"),
    "KerParMul_TFLM_SQ8": ("KerEltwise_TFLM_SQ8_T", CALL_PARALLEL, f"16*{_PER_CORE % 'N'} + 20"),
    "KerParTensorVectMul_TFLM_SQ8": ("KerTensorVectMul_TFLM_SQ8_T", CALL_PARALLEL,
                                     f"16*{_PER_CORE % 'NPix'}*Feat + 20"),
    "KerParMatMul_TFLM_SQ8": ("KerMatMul_TFLM_SQ8_T", CALL_PARALLEL,
                              f"{_PER_CORE % 'Lines'}*W*(2*ColM1 + {REQUANT}) + 20"),
    "KerParMatMulTransposed_TFLM_SQ8": ("KerMatMul_TFLM_SQ8_T", CALL_PARALLEL,
                                        f"{_PER_CORE % 'Lines'}*W*(ColM1*12/11 + {REQUANT}) + 20"),
}


def load() -> None:
    """Declare the structs, then the kernels."""
    for name, fields in STRUCTS.items():
        LibKernelTemplate(name, CArgs(len(fields), *[TCArg(t, n) for t, n in fields]))
    for name, (struct, kind, cost) in KERNELS.items():
        LibKernel(name, kind, 0, struct, Cost=cost)
