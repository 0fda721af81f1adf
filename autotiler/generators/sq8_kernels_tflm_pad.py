"""The SQ8 basic kernel of TensorFlow Lite Micro's int8 PAD: ``SOURCES`` (in ``cnn_kernels/``) and
``load()``, which declares its struct (``LibKernelTemplate``) and kernel (``LibKernel`` with its
``Cost=``) in the current model. Called by ``LoadCNN_SQ8_Library()``. C declaration and
semantics: ``CNN_SQ8_TFLM_Pad.h``.

* ``KerParPad_TFLM_SQ8`` (``KerPad_TFLM_SQ8_T``): one tile of output lines of ``CNN_Pad_SQ8``,
  the input's lines copied between padded columns (and channels), the padded lines filled.

Cost (cycles of one call per core): no published figure covers a pad (gap_sdk's benchmarks time
convolutions, pooling and linear layers only: :mod:`.cnn_library`), so it is an assumption counted
from the C: the busiest core's output lines, each written by ``memset``/``memcpy`` at 1 cycle per
4 bytes (word stores; the cluster's L1 stores a 32-bit word per cycle) plus 10 cycles per run
(call and tail) and per input pixel when channels are padded (three runs per pixel), 8 cycles of
loop overhead per line, and 20 cycles of fork and barrier per call.
"""

from __future__ import annotations

from ..api import CArgs, LibKernel, LibKernelTemplate, TCArg
from ..constants import CALL_PARALLEL
from .cnn_library import CNN_KERNELS_DIR

SOURCES = [CNN_KERNELS_DIR / "CNN_SQ8_Pad.c"]
_SC = "signed char * __restrict__"
_US = "unsigned short int"
PAD_FIELDS = [(_SC, "In"), (_SC, "Out"), (_SC, "Infos"),
              *[(_US, n) for n in ("W", "H", "Feat", "Ho", "PadLeft", "PadRight", "PadFront", "PadBack")],
              ("v4s", "Pad")]
# Assumption, counted from the C (module documentation): no published figure to cite (gap_sdk's SQ8
# library gives its kernels no cost, its benchmarks time no pad). Bytes of an output line, and the
# runs written per line (3 per pixel when channels are padded:
# 1/(1 + PadFront + PadBack) is 1 when neither is set, else 0; the grammar has no comparison)
_LINE = "((W + PadLeft + PadRight)*(Feat + PadFront + PadBack))"
_RUNS = "(3 + 3*W*(1 - 1/(1 + PadFront + PadBack)))"
PAD_COST = f"((Ho + ncores - 1)/ncores)*(({_LINE} + 3)/4 + 10*{_RUNS} + 8) + 20"


def load() -> None:
    """Declare the struct and the kernel."""
    LibKernelTemplate("KerPad_TFLM_SQ8_T", CArgs(len(PAD_FIELDS), *[TCArg(t, n) for t, n in PAD_FIELDS]))
    LibKernel("KerParPad_TFLM_SQ8", CALL_PARALLEL, 0, "KerPad_TFLM_SQ8_T", Cost=PAD_COST)
