"""Numpy references of the layers ``cnn_dense.py`` generates, bit-exact with the generated code,
composed from the basic kernels' references (``cnn_reference.py``).

Arguments are the generator's own (data sizes, Q formats, the operation codes); arrays are
numpy arrays of the C argument types (int8 for 1 byte, int16 for 2, int32 for 4). Every tiling a
generator may choose computes the same result: the input-tiled linear layer's per-core partial
sums add up modulo 2^32 to the output-parallel kernel's sum, and the tiled global pooling's int32
running max / sum ends where the whole-feature kernel does (the generator refuses the average of
planes whose int32 sum could overflow).
"""

from __future__ import annotations

import numpy as np

from ..constants import KernelOper_T
from . import cnn_reference as R
from .cnn_dense import BITS, KACT

KOP = KernelOper_T
DTYPE = {1: np.int8, 2: np.int16, 4: np.int32}


def linear_bounds(oper, out_size: int, out_q: int, relun: int = 6) -> tuple:
    """(LB, UB) the generator passes: CNN_SetUpperLowerBounds, UB = Out_Q where the activation
    takes o in UB."""
    bits = BITS[out_size]
    lo, hi = -(1 << bits), (1 << bits) - 1
    oper = KOP(oper)
    if oper == KOP.KOP_RELU:
        return 0, hi
    if oper == KOP.KOP_RELUN:
        return 0, relun << out_q
    if oper in (KOP.KOP_HSIGMOID, KOP.KOP_HSWISH, KOP.KOP_SWISH):
        return lo, out_q
    return lo, hi


def linear_relu(inp, filt, bias, in_q: int, filter_q: int, bias_q: int, out_q: int, out_size: int, oper,
                relun: int = 6) -> np.ndarray:
    """CNN_LinearReLU: filt [OutDim, InDim]; Out[i] = act((Bias[i] << (i+w-b)) + sum_j In[j] *
    Filter[i][j]) normalised by i+w-o (KerParLinearLayer* or KerDPLinearLayer + Reduct)."""
    lb, ub = linear_bounds(oper, out_size, out_q, relun)
    filt = np.asarray(filt).reshape(len(np.asarray(bias)), -1)
    return R.linear(inp, filt, bias, in_q + filter_q - out_q, in_q + filter_q - bias_q, KACT[KOP(oper)], lb, ub,
                    DTYPE[out_size])


def softmax(inp, in_q: int) -> np.ndarray:
    """CNN_SoftMax: Q15 int16 probabilities (KerParSoftMax_*)."""
    return R.softmax(inp, in_q)


def mat_add(in1, in2, in1_q: int, in2_q: int, out_q: int, mode: str = "add") -> np.ndarray:
    """CNN_MatAdd ("add"), CNN_MatAddRelu / KOP_MATADD_RELU ("relu"), CNN_MatAddDynAdjust ("dyn"):
    [Feat, H, W] tensors (KerParMatAdd*), saturated to the container."""
    bits = R.bits_of(np.asarray(in1).dtype)
    return R.mat_add(in1, in2, mode, in1_q, in2_q, out_q, -(1 << bits), (1 << bits) - 1)


def global_pool(inp, oper) -> np.ndarray:
    """CNN_GlobalPool: [Feat, H, W] -> [Feat], the max or the mean rounded half up, in the
    input's Q (KerParGlobal*PoolFullFeat, or the DP + reduction over tiles of the plane)."""
    return R.global_pool(inp, KOP(oper) == KOP.KOP_GLOBAL_AVGPOOL)


__all__ = ["linear_relu", "linear_bounds", "softmax", "mat_add", "global_pool", "DTYPE"]
