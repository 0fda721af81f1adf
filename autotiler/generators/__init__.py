"""The original's CNN generators and their basic-kernel library (16-bit "fp" and 8-bit "fps"
fixed point), on top of the model API: every layer is user kernels declared as a model script
would (``from autotiler import *`` exports the names below).

* :mod:`.cnn_library`: ``LoadCNNLibrary()``, the C sources and header (``cnn_kernels/``);
* :mod:`.cnn_ctrl`: ``CNN_GenControl_T``, ``CNN_InitGenCtrl``, ``CNN_SetGenCtrl``;
* :mod:`.cnn_conv`: ``CNN_ConvolutionPoolReLU``, ``CNN_PoolReLU``, ``CNN_GroupedConvolutionPoolReLU``;
* :mod:`.cnn_dense`: ``CNN_LinearReLU``, ``CNN_SoftMax``, ``CNN_MatAdd*``, ``CNN_GlobalPool``;
* :mod:`.cnn_reference`, :mod:`.cnn_conv_reference`, :mod:`.cnn_dense_reference`: the same
  arithmetic in numpy, per basic kernel and per layer;
* ``docs/cnn-fixed-point.md``: the semantics.

And the SQ8 library (int8, per-channel requantisation; ``docs/cnn-sq8.md``):

* :mod:`.sq8_library`: ``LoadCNN_SQ8_Library()``, ``CNN_SQ8_HEADER``, ``CNN_SQ8_SOURCES``;
* :mod:`.sq8_generators`: the original's ``CNN_*_SQ8`` generators (and ours for imported graphs),
  each choosing the original's 1-byte requantisation or TensorFlow Lite Micro's (:mod:`.sq8_common`);
* :mod:`.sq8_tflm`, :mod:`.sq8_original`: the two arithmetics in numpy; :mod:`.sq8_infos`: the
  Infos layout of the TFLM one.
"""

from .cnn_conv import CNN_ConvolutionPoolReLU, CNN_GroupedConvolutionPoolReLU, CNN_PoolReLU
from .cnn_ctrl import CNN_GenControl_T, CNN_InitGenCtrl, CNN_SetGenCtrl, CNN_SetGenCtrlList
from .cnn_dense import CNN_GlobalPool, CNN_LinearReLU, CNN_MatAdd, CNN_MatAddDynAdjust, CNN_MatAddRelu, CNN_SoftMax
from .cnn_library import CNN_HEADER, CNN_KERNELS_DIR, CNN_SOURCES, LoadCNNLibrary
from .sq8_fusion import CNN_FuseGraph_SQ8
from .sq8_generators import *  # noqa: F403
from .sq8_generators import __all__ as _sq8_all
from .sq8_library import CNN_SQ8_HEADER, CNN_SQ8_SOURCES, LoadCNN_SQ8_Library

__all__ = ["CNN_HEADER", "CNN_KERNELS_DIR", "CNN_SOURCES", "LoadCNNLibrary", "CNN_GenControl_T", "CNN_InitGenCtrl",
           "CNN_SetGenCtrl", "CNN_SetGenCtrlList", "CNN_ConvolutionPoolReLU", "CNN_PoolReLU",
           "CNN_GroupedConvolutionPoolReLU", "CNN_FuseGraph_SQ8", "CNN_LinearReLU", "CNN_SoftMax", "CNN_MatAdd", "CNN_MatAddRelu",
           "CNN_MatAddDynAdjust", "CNN_GlobalPool", "CNN_SQ8_HEADER", "CNN_SQ8_SOURCES", "LoadCNN_SQ8_Library",
           *_sq8_all]
