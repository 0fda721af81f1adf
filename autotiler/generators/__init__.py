"""Generators' building blocks: the CNN basic-kernel library of the original's ``LoadCNNLibrary()``
(16-bit "fp" and 8-bit "fps" fixed point) with its numpy bit-exact reference.

* :mod:`autotiler.generators.cnn_library`: ``LoadCNNLibrary()``, the C sources and header;
* :mod:`autotiler.generators.cnn_reference`: the same arithmetic in numpy;
* ``docs/cnn-fixed-point.md``: the semantics.
"""

from .cnn_library import CNN_HEADER, CNN_KERNELS_DIR, CNN_SOURCES, LoadCNNLibrary

__all__ = ["CNN_HEADER", "CNN_KERNELS_DIR", "CNN_SOURCES", "LoadCNNLibrary"]
