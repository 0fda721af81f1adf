"""numpy references of examples/mnist/model.py: the guide's MNIST graph in the generated code's
16-bit fixed point (bit-exact with it: the generators' layer references, docs/cnn-fixed-point.md)
and, for comparison, the float network the weights were trained as (float_model.py).

Layer parameters are the model's (MnistModel): In/Filter/Bias/Out Q 12/14/14/12 for both
convolutions (KOP_CONV_DP, 5x5, max pool 2x2/2, ReLU), 12/12/8/11 for the linear layer, In/Out
Q 15/15 for the softmax (as the guide's listing declares it, although its input is Q11).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autotiler.constants import KernelOper_T as K
from autotiler.generators import CNN_KERNELS_DIR, CNN_SOURCES
from autotiler.generators.cnn_conv_reference import conv_pool_relu
from autotiler.generators.cnn_dense_reference import linear_relu, softmax

HERE = Path(__file__).resolve().parent
MODEL_DIR = HERE / "model"
CONV = dict(In_Q=12, Filter_Q=14, Bias_Q=14, Out_Q=12, ConvOper=K.KOP_CONV_DP, Fcx=5, Fcy=5, Dcx=1, Dcy=1, Scx=1,
            Scy=1, ConvPad=0, PoolOper=K.KOP_MAXPOOL, Fpx=2, Fpy=2, Dpx=1, Dpy=1, Spx=2, Spy=2, PoolPad=0,
            ReLUOper=K.KOP_RELU)
SHAPES = {"Step1Weights": (32, 1, 5, 5), "Step1Biases": (32,), "Step2Weights": (64, 32, 5, 5), "Step2Biases": (64,),
          "Step3Weights": (10, 1024), "Step3Biases": (10,)}
IN_SHAPE, OUT_SHAPE = (1, 28, 28), (10,)


def load_weights(model_dir: Path = MODEL_DIR) -> dict:
    """The quantised weights as the graph's ConstInfo reads them (int16, little-endian)."""
    return {name: np.fromfile(model_dir / f"{name}.tensor", dtype="<i2").reshape(shape)
            for name, shape in SHAPES.items()}


def tensors(x: np.ndarray, w: dict) -> dict:
    """Every tensor of the graph for one input (int16 Q12, [1, 28, 28])."""
    s2 = conv_pool_relu(x, w["Step1Weights"], w["Step1Biases"], **CONV)
    s3 = conv_pool_relu(s2, w["Step2Weights"], w["Step2Biases"], **CONV)
    s4 = linear_relu(s3.ravel(), w["Step3Weights"], w["Step3Biases"], 12, 12, 8, 11, 2, K.KOP_NONE)
    # the guide's CNN_SoftMax declares its input Q15 while the linear layer writes Q11: the model's
    # numbers, kept (the probabilities come out flatter than the float model's; the argmax is the same)
    return {"OutputStep2": s2, "OutputStep3": s3, "OutputStep4": s4, "Output0": softmax(s4, 15)}


def fixed_forward(x: np.ndarray, w: dict) -> np.ndarray:
    """The graph's Output0 (Q15 probabilities, int16 [10]) for one input."""
    return tensors(x, w)["Output0"]


# ---- the generic example tests (tests/test_examples_e2e.py): the first layer called alone

SOURCES = CNN_SOURCES            # absolute: the library's basic kernels
INCLUDE_DIRS = [CNN_KERNELS_DIR]
KERNEL = "Conv5x5ReLUMaxPool2x2_0"
SENTINEL = -21846


def make_args(rng):
    w = load_weights()
    x = rng.integers(0, 4096, size=IN_SHAPE, dtype=np.int16)   # pixels in [0, 1) in Q12
    return {"In": x, "Filter": w["Step1Weights"].copy(), "Bias": w["Step1Biases"].copy(),
            "Out": np.full((32, 12, 12), SENTINEL, dtype=np.int16)}


def expected(args):
    return {"Out": conv_pool_relu(args["In"], args["Filter"], args["Bias"], **CONV)}


__all__ = ["load_weights", "tensors", "fixed_forward", "IN_SHAPE", "OUT_SHAPE", "SHAPES", "CONV", "SOURCES",
           "INCLUDE_DIRS", "KERNEL", "make_args", "expected"]
