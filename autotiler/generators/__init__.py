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
"""

from .cnn_conv import CNN_ConvolutionPoolReLU, CNN_GroupedConvolutionPoolReLU, CNN_PoolReLU
from .cnn_ctrl import CNN_GenControl_T, CNN_InitGenCtrl, CNN_SetGenCtrl, CNN_SetGenCtrlList
from .cnn_dense import CNN_GlobalPool, CNN_LinearReLU, CNN_MatAdd, CNN_MatAddDynAdjust, CNN_MatAddRelu, CNN_SoftMax
from .cnn_library import CNN_HEADER, CNN_KERNELS_DIR, CNN_SOURCES, LoadCNNLibrary

__all__ = ["CNN_HEADER", "CNN_KERNELS_DIR", "CNN_SOURCES", "LoadCNNLibrary", "CNN_GenControl_T", "CNN_InitGenCtrl",
           "CNN_SetGenCtrl", "CNN_SetGenCtrlList", "CNN_ConvolutionPoolReLU", "CNN_PoolReLU",
           "CNN_GroupedConvolutionPoolReLU", "CNN_LinearReLU", "CNN_SoftMax", "CNN_MatAdd", "CNN_MatAddRelu",
           "CNN_MatAddDynAdjust", "CNN_GlobalPool"]
