"""``LoadCNN_SQ8_Library()``: the SQ8 basic kernels (int8 data, int32 accumulation), both
requantisations, declared in the current model.

Call it inside a model after ``SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)``; build the generated code
with ``sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR]``. The families and their ``Cost=``
are in the ``sq8_kernels_*`` modules.
"""

from __future__ import annotations

from . import (
    sq8_kernels_original,
    sq8_kernels_tflm_conv,
    sq8_kernels_tflm_dense,
    sq8_kernels_tflm_fused,
    sq8_kernels_tflm_ops,
    sq8_kernels_tflm_pad,
)

CNN_SQ8_HEADER = "CNN_SQ8_BasicKernels.h"
_FAMILIES = (sq8_kernels_tflm_conv, sq8_kernels_tflm_ops, sq8_kernels_tflm_dense, sq8_kernels_original, sq8_kernels_tflm_pad,
             sq8_kernels_tflm_fused)
CNN_SQ8_SOURCES = [s for f in _FAMILIES for s in f.SOURCES]


def LoadCNN_SQ8_Library() -> None:
    """Declare every SQ8 basic kernel (structs, then kernels) in the current model."""
    for family in _FAMILIES:
        family.load()
