"""Numpy reference of examples/mobilenet, bit-exact with the generated code: the generators' layer
references (``autotiler.generators.cnn_conv_reference`` and ``cnn_dense_reference``) composed
over the whole network, in the model's fixed point (network.py).

* ``forward(x)``: every tensor of the network, by graph symbol (``Conv0_Out`` ... ``PW13_Out``,
  ``Pool_Out``, ``Logits`` and its parts ``Linear<k>_Out``, ``Output``);
* ``expected_output(x)``: the graph's ``Output``, int16 Q15 probabilities [1000];
* ``make_input(rng)``: an input image, int8 [3][128][128] Q7;
* ``layer_stats(x)``: per layer, the fraction of outputs saturated and the fraction zero.

The classifier is computed as one 256 -> 1000 layer (its weights the four parts' stacked), the
parts' outputs its slices. The interface of the generic example tests (tests/test_examples_e2e.py:
one user kernel called alone, here the first convolution): ``KERNEL``, ``SOURCES``,
``INCLUDE_DIRS``, ``make_args(rng)``, ``expected(args)``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

try:
    import autotiler  # noqa: F401
except ImportError:  # running from a source checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from autotiler.constants import KernelOper_T as KOP
from autotiler.generators.cnn_conv_reference import conv_pool_relu
from autotiler.generators.cnn_dense_reference import global_pool, linear_relu, softmax
from autotiler.generators.cnn_library import CNN_KERNELS_DIR, CNN_SOURCES

HERE = Path(__file__).resolve().parent


def _network():
    """network.py, loaded once per process (registered: its dataclasses need their module)."""
    name = "examples_mobilenet_network"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / "network.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


NET = _network()
IN_SHAPE = (NET.IN_FEAT, NET.IN_H, NET.IN_W)
OUT_SHAPE = (NET.CLASSES,)
SENTINEL = -12345
KERNEL = "Conv0"
SOURCES = [str(p) for p in CNN_SOURCES]      # absolute: the CNN library's basic kernels
INCLUDE_DIRS = [str(CNN_KERNELS_DIR)]        # their header, CNN_BasicKernels.h
_WEIGHTS: dict = {}


def load_weights() -> dict:
    """{symbol: int8 array} read from the files the model's ConstInfo calls read."""
    if not _WEIGHTS:
        _WEIGHTS.update(NET.read_weights(NET.ensure_weights()))
    return _WEIGHTS


def conv_layer(layer, x, w, b) -> np.ndarray:
    """One convolution node (CNN_ConvolutionPoolReLU with the model's arguments) on x."""
    oper = {"conv": KOP.KOP_CONV_DP, "pw": KOP.KOP_CONV_DP, "dw": KOP.KOP_CONV_DW}[layer.kind]
    pad = 1 if layer.f == 3 else 0
    return conv_pool_relu(x, w, b, layer.in_q, NET.Q_W, NET.Q_ACT, NET.Q_ACT, oper, layer.f, layer.f, 1, 1,
                          layer.stride, layer.stride, pad, ReLUOper=KOP.KOP_RELU)


def forward(x, weights: dict | None = None) -> dict:
    """{graph symbol: tensor} of one inference."""
    w = load_weights() if weights is None else weights
    t = {"Input": np.asarray(x, dtype=np.int8)}
    src = "Input"
    for layer in NET.CONVS:
        dst = NET.output_name(layer.name)
        t[dst] = conv_layer(layer, t[src], w[f"{layer.name}_W"], w[f"{layer.name}_B"])
        src = dst
    t["Pool_Out"] = global_pool(t[src], KOP.KOP_GLOBAL_AVGPOOL)
    filt = np.concatenate([w[f"{n}_W"] for n in NET.LINEARS])
    bias = np.concatenate([w[f"{n}_B"] for n in NET.LINEARS])
    t["Logits"] = linear_relu(t["Pool_Out"], filt, bias, NET.Q_ACT, NET.Q_W, NET.Q_ACT, NET.Q_LOGITS, 1,
                              KOP.KOP_NONE)
    for k, name in enumerate(NET.LINEARS):
        t[NET.output_name(name)] = t["Logits"][k * NET.PART:(k + 1) * NET.PART]
    t["Output"] = softmax(t["Logits"], NET.Q_LOGITS)
    return t


def expected_output(x) -> np.ndarray:
    return forward(x)["Output"]


def make_input(rng) -> np.ndarray:
    """An input image: int8 [3][128][128], Q7 (uniform over [-1, 1))."""
    return rng.integers(-128, 128, size=IN_SHAPE, dtype=np.int8)


def layer_stats(x) -> dict:
    """{layer output: (fraction saturated, fraction zero, root mean square in real units)}."""
    t = forward(x)
    out = {}
    for name, q in [(NET.output_name(c.name), NET.Q_ACT) for c in NET.CONVS] + [("Pool_Out", NET.Q_ACT),
                                                                                 ("Logits", NET.Q_LOGITS)]:
        v = t[name].astype(np.int64)
        out[name] = (float(np.mean((v == 127) | (v == -128))), float(np.mean(v == 0)),
                     float(np.sqrt(np.mean(v.astype(np.float64) ** 2))) / (1 << q))
    return out


# ---- the generic example tests: Conv0 called alone


def make_args(rng) -> dict:
    w = load_weights()
    first = NET.CONVS[0]
    return {"In": make_input(rng), "Filter": w["Conv0_W"].copy(), "Bias": w["Conv0_B"].copy(),
            "Out": np.full((first.out_feat, first.ho, first.wo), -99, dtype=np.int8)}


def expected(args) -> dict:
    return {"Out": conv_layer(NET.CONVS[0], args["In"], args["Filter"], args["Bias"])}
