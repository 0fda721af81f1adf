"""The SQ8 basic kernels of TensorFlow Lite Micro's requantisation: activations, global pooling,
softmax, copies: ``SOURCES`` (in ``cnn_kernels/``) and ``load()``, which declares their structs
(``LibKernelTemplate``) and kernels (``LibKernel`` with their ``Cost=``) in the current model.
Called by ``LoadCNN_SQ8_Library()``. C declarations and semantics: ``CNN_SQ8_TFLM_Ops.h``.

Costs (cycles of one call per core). No published figure covers these kernels (gap_sdk's
benchmarks time convolutions, pooling and linear layers only: :mod:`.cnn_library`), so all are
assumptions, counted from the C:

* QUANTIZE / RELU / RELU6: 8 cycles per item (load, subtract, high multiply, rounding shift, add,
  two clamps, store); LEAKY_RELU 10 (a select more); HARD_SWISH 30 (two 16-bit high multiplies,
  shifts, saturations); LOGISTIC / TANH 120 (gemmlowp's exp: a 4-term polynomial and up to 7
  barrel multiplies, then 3 Newton steps: about 25 high multiplies);
* MEAN / SUM: 2 cycles per input item (load, add) and 10 per channel; REDUCE_MAX: 2 per item;
* SOFTMAX: per item, 2 for the max and 2 x 110 for the exponential, computed twice (sum, output),
  and 150 per row for the reciprocal; a single row split over the cores adds 4 per core (the
  partial maxima and sums read back) and 40 for its two more barriers;
* concatenation: 1 cycle per item copied, 8 per item requantised (it charges the dearer);
  permutations: 3 cycles per item (index arithmetic, load, store);
* a unary operator by its table (KerParActLUT_SQ8): 3 cycles per item (load, indexed load, store);
* onnxruntime's softmax (KerParSoftMaxTable_SQ8): per item 2 (max) + 4 (table, float add) + 12 (float
  multiply, divide, rounding) with an FPU (GAP9); GAP8's soft float is several times dearer;
* 20 cycles of fork and barrier per call.
"""

from __future__ import annotations

from ..api import CArgs, LibKernel, LibKernelTemplate, TCArg
from ..constants import CALL_PARALLEL
from .cnn_library import CNN_KERNELS_DIR

SOURCES = [CNN_KERNELS_DIR / n for n in ("CNN_SQ8_Act.c", "CNN_SQ8_SoftMax.c", "CNN_SQ8_Copy.c")]
_P = " * __restrict__"
_SC = "signed char" + _P
_US = "unsigned short int"
# Cycles per item of each activation: assumptions counted from the C (module documentation); gap_sdk's
# SQ8 library gives no cost to mirror (its LibKernel calls carry a CNN_Match: tools/autotiler_v3/
# CNN_Generators_SQ8/CNN_Generators_SQ8.c), nor do its benchmarks time these kernels. Every Cost= of
# this module is such an assumption, + 20 the fork and barrier (as cnn_library's); on pulp_open the
# platform's fitted entries replace the ones measured (autotiler/platforms.py, bench/calibrate.py --fit-sq8).
ACT_KERNELS = {"KerParActRequant_TFLM_SQ8": 8, "KerParLeakyRelu_TFLM_SQ8": 10, "KerParHSwish_TFLM_SQ8": 30,
               "KerParLogistic_TFLM_SQ8": 120, "KerParTanh_TFLM_SQ8": 120}


def _template(name: str, fields: list) -> None:
    LibKernelTemplate(name, CArgs(len(fields), *[TCArg(t, n) for t, n in fields]))


def _templates() -> None:
    _template("KerAct_TFLM_SQ8_T", [(_SC, "In"), (_SC, "Out"), ("unsigned int", "N"), (_SC, "Infos")])
    _template("KerActLUT_SQ8_T", [(_SC, "In"), (_SC, "Out"), ("unsigned int", "N"), (_SC, "Table")])
    _template("KerSoftMaxTable_SQ8_T", [(_SC, "In"), (_SC, "Out"), (_US, "Dim"), (_US, "N"), ("int" + _P, "Table"),
                                        (_SC, "Infos")])
    _template("KerGlobalPool_TFLM_SQ8_T", [(_SC, "In"), (_SC, "Out"), ("unsigned int", "Pixels"), (_US, "Feat"),
                                           (_SC, "Infos")])
    _template("KerSoftMax_TFLM_SQ8_T", [(_SC, "In"), (_SC, "Out"), (_US, "Dim"), (_US, "N"), (_SC, "Infos")])
    _template("KerSoftMaxItems_TFLM_SQ8_T", [(_SC, "In"), (_SC, "Out"), (_US, "Dim"), ("int" + _P, "Reduct"),
                                             (_SC, "Infos")])
    _template("KerConcat_TFLM_SQ8_T", [(_SC, "In"), (_SC, "Out"), ("unsigned int", "Pixels"), (_US, "InFeat"),
                                       (_US, "OutFeat"), (_US, "Offset"), (_US, "Index"), (_SC, "Infos")])
    _template("KerPermute_T", [("void" + _P, "In"), ("void" + _P, "Out"), (_US, "D0"), (_US, "D1"), (_US, "D2"),
                               (_US, "Perm"), (_US, "Size")])


def load() -> None:
    """Declare the structs and kernels."""
    _templates()
    for name, per_item in ACT_KERNELS.items():
        LibKernel(name, CALL_PARALLEL, 0, "KerAct_TFLM_SQ8_T", Cost=f"((N + ncores - 1)/ncores)*{per_item} + 20")
    LibKernel("KerParActLUT_SQ8", CALL_PARALLEL, 0, "KerActLUT_SQ8_T", Cost="((N + ncores - 1)/ncores)*3 + 20")
    LibKernel("KerParSoftMaxTable_SQ8", CALL_PARALLEL, 0, "KerSoftMaxTable_SQ8_T",
              Cost="((N + ncores - 1)/ncores)*(18*Dim + 10) + 20")
    LibKernel("KerParGlobalSumRequant_TFLM_SQ8", CALL_PARALLEL, 0, "KerGlobalPool_TFLM_SQ8_T",
              Cost="((Feat + ncores - 1)/ncores)*(2*Pixels + 10) + 20")
    LibKernel("KerParGlobalMaxPool_TFLM_SQ8", CALL_PARALLEL, 0, "KerGlobalPool_TFLM_SQ8_T",
              Cost="((Feat + ncores - 1)/ncores)*(2*Pixels + 2) + 20")
    LibKernel("KerParSoftMax_TFLM_SQ8", CALL_PARALLEL, 0, "KerSoftMax_TFLM_SQ8_T",
              Cost="((N + ncores - 1)/ncores)*(222*Dim + 150) + 20")
    LibKernel("KerParSoftMaxItems_TFLM_SQ8", CALL_PARALLEL, 0, "KerSoftMaxItems_TFLM_SQ8_T",
              Cost="((Dim + ncores - 1)/ncores)*222 + 4*ncores + 150 + 60")
    LibKernel("KerParConcat_TFLM_SQ8", CALL_PARALLEL, 0, "KerConcat_TFLM_SQ8_T",
              Cost="((Pixels + ncores - 1)/ncores)*InFeat*8 + 20")
    LibKernel("KerParPermute", CALL_PARALLEL, 0, "KerPermute_T", Cost="(D0*D1*D2 + ncores - 1)/ncores*3 + 20")
