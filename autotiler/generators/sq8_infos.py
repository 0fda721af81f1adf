"""The Infos vector of the SQ8 layers that requantise TensorFlow Lite Micro's way
(``Scale_DataSize`` 4): one per-layer constant ``signed char Infos[AT_INF_TFLM_DIM]`` holding
``AT_INF_TFLM_WORDS`` little-endian int32 words, read by the basic kernels with
``at_inf_tflm(Infos, AT_INF_TFLM_*)`` (``cnn_kernels/CNN_SQ8_Infos.h``, the same indices).

The original's 1-byte layout (``AT_INF_ACTSCALE`` ...) is :mod:`.sq8_original`'s ``Infos``. This
one is ours: the original has no int32 fields, and TFLM's operators need zero points, clamps and
Q31 multipliers. Words (an operator reads those it needs, the others stay 0):

===  ===================  ==============================================================
0    ``IN_ZP``            input (first input) zero point
1    ``OUT_ZP``           output zero point
2    ``ACT_MIN``          the fused activation's clamp, low (int8 range)
3    ``ACT_MAX``          ... high
4    ``IN2_ZP``           second input's zero point (ADD, SUB, MUL, tensor-vector product)
5    ``MULT``             the per-tensor Q31 multiplier: ADD/SUB output, MUL, QUANTIZE, MEAN,
                          standalone RELU, per-tensor MatMul; SOFTMAX input_beta_multiplier;
                          LOGISTIC/TANH input multiplier; HARD_SWISH output; LEAKY_RELU identity
6    ``SHIFT``            its shift (> 0 left, < 0 rounded right)
7    ``LEFT_SHIFT``       ADD/SUB's 20; SOFTMAX's and LOGISTIC/TANH's input_left_shift
8    ``MULT2``            ADD/SUB input 1 multiplier; HARD_SWISH reluish; LEAKY_RELU alpha
9    ``SHIFT2``           its shift
10   ``MULT3``            ADD/SUB input 2 multiplier
11   ``SHIFT3``           its shift
12   ``PARAM``            SOFTMAX diff_min; LOGISTIC/TANH input range radius
13   ``FLAGS``            the arithmetic's mode (0: TFLM's): bit 0 ``AT_TFLM_FLAG_SINGLE_ROUNDING``,
                          onnxruntime's single rounding in the requantisations of CONV,
                          DEPTHWISE, FULLY_CONNECTED, MatMul, ADD, SUB, MUL and MEAN
                          (``sq8_tflm.single_rounding_multiply``); bit 1
                          ``AT_TFLM_FLAG_FLOAT_AVERAGE``, AVERAGE_POOL_2D in float32 as
                          onnxruntime (``sq8_tflm.ort_average_pool2d``; MULT, MULT2 hold the
                          float32 bits of s_in, s_out); docs/cnn-sq8.md §5
14-15                     reserved (0)
===  ===================  ==============================================================
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError

AT_INF_TFLM_IN_ZP = 0
AT_INF_TFLM_OUT_ZP = 1
AT_INF_TFLM_ACT_MIN = 2
AT_INF_TFLM_ACT_MAX = 3
AT_INF_TFLM_IN2_ZP = 4
AT_INF_TFLM_MULT = 5
AT_INF_TFLM_SHIFT = 6
AT_INF_TFLM_LEFT_SHIFT = 7
AT_INF_TFLM_MULT2 = 8
AT_INF_TFLM_SHIFT2 = 9
AT_INF_TFLM_MULT3 = 10
AT_INF_TFLM_SHIFT3 = 11
AT_INF_TFLM_PARAM = 12
AT_INF_TFLM_FLAGS = 13
AT_TFLM_FLAG_SINGLE_ROUNDING = 1            # bit of FLAGS: onnxruntime's single rounding
AT_TFLM_FLAG_FLOAT_AVERAGE = 2              # bit of FLAGS: onnxruntime's float AVERAGE_POOL_2D
AT_INF_TFLM_WORDS = 16
AT_INF_TFLM_DIM = 4 * AT_INF_TFLM_WORDS     # bytes of the Infos argument

FIELDS = {"in_zp": AT_INF_TFLM_IN_ZP, "out_zp": AT_INF_TFLM_OUT_ZP, "act_min": AT_INF_TFLM_ACT_MIN,
          "act_max": AT_INF_TFLM_ACT_MAX, "in2_zp": AT_INF_TFLM_IN2_ZP, "mult": AT_INF_TFLM_MULT,
          "shift": AT_INF_TFLM_SHIFT, "left_shift": AT_INF_TFLM_LEFT_SHIFT, "mult2": AT_INF_TFLM_MULT2,
          "shift2": AT_INF_TFLM_SHIFT2, "mult3": AT_INF_TFLM_MULT3, "shift3": AT_INF_TFLM_SHIFT3,
          "param": AT_INF_TFLM_PARAM, "flags": AT_INF_TFLM_FLAGS}
DEFAULTS = {"act_min": -128, "act_max": 127}


def tflm_infos(**fields: int) -> np.ndarray:
    """The Infos bytes (int8, ``AT_INF_TFLM_DIM`` of them) with the named words set (``act_min``
    and ``act_max`` default to the int8 range, the others to 0)."""
    words = np.zeros(AT_INF_TFLM_WORDS, dtype="<i4")
    for name, value in {**DEFAULTS, **fields}.items():
        if name not in FIELDS:
            raise ModelError(f"tflm_infos: unknown field {name!r}", hint="fields: " + ", ".join(FIELDS))
        v = int(value)
        if not -(1 << 31) <= v < (1 << 31):
            raise ModelError(f"tflm_infos: {name} = {v} does not fit an int32 word",
                             hint="a zero point, clamp, multiplier or shift is an int32")
        words[FIELDS[name]] = v
    return words.view(np.int8).copy()


def read_tflm_infos(buf) -> dict:
    """The named words of an Infos vector (the inverse of :func:`tflm_infos`)."""
    b = np.asarray(buf).astype(np.int8).reshape(-1)
    if b.size < AT_INF_TFLM_DIM:
        raise ModelError(f"read_tflm_infos: {b.size} bytes, an Infos vector has {AT_INF_TFLM_DIM}",
                         hint="pass the whole vector")
    words = b[:AT_INF_TFLM_DIM].view("<i4")
    return {name: int(words[k]) for name, k in FIELDS.items()}
