"""The SQ8 basic kernels of TensorFlow Lite Micro's requantisation: linear, element-wise, matrix products: ``SOURCES`` (in ``cnn_kernels/``)
and ``load()``, which declares their structs (``LibKernelTemplate``) and kernels (``LibKernel``
with their ``Cost=``) in the current model. Called by ``LoadCNN_SQ8_Library()``.
"""

from __future__ import annotations

from .cnn_library import CNN_KERNELS_DIR

SOURCES = [CNN_KERNELS_DIR / n for n in ("CNN_SQ8_Linear.c", "CNN_SQ8_Eltwise.c")]


def load() -> None:
    """Declare the structs and kernels (none yet)."""
