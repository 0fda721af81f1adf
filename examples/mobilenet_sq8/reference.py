"""Numpy reference of examples/mobilenet_sq8, bit-exact with the generated code and with TensorFlow
Lite Micro: autotiler.generators.sq8_tflm's operators (each proven equal to TFLM's int8 kernels on
single-operator models, tests/test_sq8_tflm.py) composed over the network (network.py).

* ``forward(x)``: every tensor of the network, by graph symbol (``Conv0_Out`` ... ``PW13_Out``,
  ``Pool_Out``, ``Logits`` and its parts ``Linear<k>_Out``, ``Output``), HWC;
* ``expected_output(x)``: the graph's ``Output``, int8 probabilities [1000] (scale 1/256, zero point -128);
* ``make_input(rng)``: an input image, int8 [128][128][3];
* ``layer_stats(x)``: per layer, the fraction of outputs at the int8 bounds and the real root mean square.

The classifier is computed as one 256 -> 1000 layer, the parts' outputs its slices. The interface of
the generic example tests (tests/test_examples_e2e.py: one user kernel called alone, the first
convolution): ``KERNEL``, ``SOURCES``, ``INCLUDE_DIRS``, ``make_args(rng)``, ``expected(args)``.
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

from autotiler.generators import CNN_KERNELS_DIR, CNN_SQ8_SOURCES
from autotiler.generators import sq8_tflm as T

HERE = Path(__file__).resolve().parent


def _network():
    name = "examples_mobilenet_sq8_network"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / "network.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


NET = _network()
IN_SHAPE = (NET.IN_H, NET.IN_W, NET.IN_FEAT)
OUT_SHAPE = (NET.CLASSES,)
SENTINEL = 77
KERNEL = "Conv0"
SOURCES = [str(p) for p in CNN_SQ8_SOURCES]
INCLUDE_DIRS = [str(CNN_KERNELS_DIR)]
_WEIGHTS: dict = {}
_SCALES: dict = {}


def load_weights() -> dict:
    if not _WEIGHTS:
        _WEIGHTS.update(NET.read_weights(NET.ensure_weights()))
    return _WEIGHTS


def filter_q(layer) -> T.FilterQParams:
    if not _SCALES:
        _SCALES.update(NET.scales())
    return T.FilterQParams(_SCALES[layer.name])


def conv_layer(layer, x, w, b) -> np.ndarray:
    """One convolution node on an HWC image x."""
    c = layer.conv
    kw = dict(stride=(c.stride, c.stride), padding="SAME" if c.f == 3 else "VALID", activation=layer.activation)
    if c.kind == "dw":
        y = T.depthwise_conv2d(x[None], w[None], b, layer.in_q, filter_q(layer), layer.out_q, **kw)
    else:
        y = T.conv2d(x[None], w, b, layer.in_q, filter_q(layer), layer.out_q, **kw)
    return y[0]


def forward(x, weights: dict | None = None) -> dict:
    """{graph symbol: tensor} of one inference."""
    w = load_weights() if weights is None else weights
    t = {"Input": np.asarray(x, dtype=np.int8)}
    src = "Input"
    for layer in NET.LAYERS[:len(NET.CONVS)]:
        dst = NET.output_name(layer.name)
        t[dst] = conv_layer(layer, t[src], w[f"{layer.name}_W"], w[f"{layer.name}_B"])
        src = dst
    t["Pool_Out"] = T.mean_hw(t[src][None], NET.ACT_Q, NET.POOL_Q).reshape(-1)
    parts = NET.LAYERS[len(NET.CONVS):]
    filt = np.concatenate([w[f"{p.name}_W"] for p in parts])
    bias = np.concatenate([w[f"{p.name}_B"] for p in parts])
    scales = sum((filter_q(p).scales for p in parts), ())
    t["Logits"] = T.fully_connected(t["Pool_Out"], filt, bias, NET.POOL_Q, T.FilterQParams(scales), NET.LOGITS_Q,
                                    "NONE").reshape(-1)
    for k, p in enumerate(parts):
        t[NET.output_name(p.name)] = t["Logits"][k * NET.PART:(k + 1) * NET.PART]
    t["Output"] = T.softmax(t["Logits"], NET.LOGITS_Q, NET.SOFTMAX_Q, 1.0)
    return t


def expected_output(x) -> np.ndarray:
    return forward(x)["Output"]


def make_input(rng) -> np.ndarray:
    """An input image: int8 [128][128][3] (real = (q + 1) / 127.5, about [-1, 1])."""
    return rng.integers(-128, 128, size=IN_SHAPE, dtype=np.int8)


def layer_stats(x) -> dict:
    """{layer output: (fraction at -128 or 127, root mean square in real units)}."""
    t = forward(x)
    qs = [(NET.output_name(c.name), NET.ACT_Q) for c in NET.CONVS] + [("Pool_Out", NET.POOL_Q),
                                                                      ("Logits", NET.LOGITS_Q)]
    out = {}
    for name, q in qs:
        v = t[name].astype(np.int64)
        real = (v - q.zero_point) * q.scale
        out[name] = (float(np.mean((v == 127) | (v == -128))), float(np.sqrt(np.mean(real ** 2))))
    return out


# ---- the generic example tests: Conv0 called alone


def make_args(rng) -> dict:
    w = load_weights()
    first = NET.CONVS[0]
    # flat: the user kernel's In and Out are tiled as lines of Width x Features items
    args = {"In": make_input(rng).ravel(), "Out": np.full(first.ho * first.wo * first.out_feat, SENTINEL, np.int8)}
    for arg, suffix in (("Filter", "W"), ("Bias", "B"), ("Scale", "S"), ("ScaleN", "N"), ("Infos", "I")):
        args[arg] = w[f"Conv0_{suffix}"].copy()
    return args


def expected(args) -> dict:
    return {"Out": conv_layer(NET.LAYERS[0], args["In"].reshape(IN_SHAPE), args["Filter"], args["Bias"]).ravel()}
