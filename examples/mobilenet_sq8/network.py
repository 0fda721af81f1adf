"""MobileNet v1 (width 0.25, 128x128x3) in SQ8 form, with TensorFlow Lite Micro's int8 arithmetic
(the SQ8 generators with ``Scale_DataSize`` 4): its layers, quantisation, constants and their
random but fixed values, shared by model.py (generator calls, graph) and reference.py (numpy).
Run it as a script to write the constants somewhere else: ``python examples/mobilenet_sq8/network.py --out DIR``.

The layers are examples/mobilenet's (the same 27 convolutions, geometry from its network.py), in
TFLite's layout and quantisation::

    Conv0          3x3 s2 "same"  3 -> 8     128x128 -> 64x64   CONV_2D, ReLU6
    DW<i>, PW<i>   13 separable blocks: DEPTHWISE_CONV_2D 3x3 (s2 in blocks 2, 4, 6, 12), ReLU6;
                   CONV_2D 1x1, ReLU6
    Pool           MEAN over 4x4 -> 256
    Linear<k>      FULLY_CONNECTED 256 -> 1000 as 5 nodes of 200 classes (as the fp example, for the
                   same L2 reason), stacked in Logits
    SoftMax        1000 -> int8 probabilities (scale 1/256, zero point -128)

**Tensors.** Feature maps are HWC int8 (TFLite's NHWC, one image). Filters OHWI ``[Out][Fy][Fx][In]``,
depth-wise ``[Fy][Fx][C]``, classifier ``[Classes][256]``, symmetric int8 with one float32 scale per
output channel; biases int32 at scale ``s_in * s_w[c]``.

**Quantisation** (what TensorFlow's converter gives a ReLU6 network): the input image in [-1, 1]
(``IN_Q``: scale 1/127.5, zero point -1), every ReLU6 output ``ACT_Q`` (scale 6/255, zero point
-128: 0..6 over the whole int8 range), the pooled features the same, the logits ``LOGITS_Q`` (scale
0.1, zero point 0), the softmax TFLite's fixed 1/256, -128.

**Random weights that keep activations in range.** Filter channel ``c`` has scale
``s_w[c] = A * u_c / 127`` with ``A = sqrt(6 / fan_in)`` (He-uniform) and ``u_c`` uniform in
[0.75, 1.25] (so the per-channel multipliers differ), and integer weights uniform in [-127, 127]:
real weights of variance about ``2 u_c^2 / fan_in``, which keeps the activations' mean square from
layer to layer through the ReLUs (He et al., 2015). The classifier's real weights have variance
``LOGIT_GAIN^2 / 256``. Biases are uniform in [-0.1, 0.1] real, quantised to int32. Everything is
drawn from numpy's PCG64 raw stream (``random_raw``: stable across numpy versions).

**Constants.** Per convolution and classifier part: ``<name>_W`` (int8), ``<name>_B`` (int32),
``<name>_S`` (the int32 Q31 multipliers per channel, TFLM's ``QuantizeMultiplier(s_in s_w[c] /
s_out)``), ``<name>_N`` (their int8 shifts) and ``<name>_I`` (the layer's Infos: zero points and the
ReLU6 clamp, autotiler.generators.sq8_infos); ``Pool_I`` and ``SoftMax_I``. They are written on
first use into a cache directory (``ensure_weights``, as examples/mobilenet does) and checked
against ``WEIGHTS_SHA256``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import math
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

try:
    import autotiler  # noqa: F401
except ImportError:  # running from a source checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from autotiler.generators import sq8_tflm as T
from autotiler.generators.sq8_gen_tflm_conv import conv_constants
from autotiler.generators.sq8_gen_tflm_dense import linear_constants
from autotiler.generators.sq8_gen_tflm_ops import mean_infos, softmax_infos

HERE = Path(__file__).resolve().parent


def _fp_network():
    """examples/mobilenet/network.py: the same layers' geometry."""
    name = "examples_mobilenet_network"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE.parent / "mobilenet" / "network.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


FP = _fp_network()
NAME = "MobileNetSq8"
IN_FEAT, IN_W, IN_H = FP.IN_FEAT, FP.IN_W, FP.IN_H
CLASSES, CLASSIFIER_PARTS, PART = FP.CLASSES, FP.CLASSIFIER_PARTS, FP.PART
CONVS = FP.CONVS                          # name, kind (conv/dw/pw), in/out features, width, height, f, stride
LINEARS = FP.LINEARS
POOL_FEAT, POOL_W, POOL_H = FP.POOL_FEAT, FP.POOL_W, FP.POOL_H
MACS = FP.MACS
IN_Q = T.QParams(1 / 127.5, -1)
ACT_Q = T.QParams(6 / 255, -128)
POOL_Q = ACT_Q
LOGITS_Q = T.QParams(0.1, 0)
SOFTMAX_Q = T.QParams(1 / 256, -128)
ACTIVATION = "RELU6"
LOGIT_GAIN = 4.0
BIAS_REAL = 0.1
SEED = 20261128
WEIGHTS_SHA256 = "c9db146de1d9ab85b2b508a7a4d60859ce00089b2759ee53fda03f7fcbdd0058"


@dataclass(frozen=True)
class Layer:
    """A layer with weights: its name, the convolution geometry (None for a classifier part), its
    filter's shape and fan-in, its input and output quantisation and fused activation."""

    name: str
    conv: object
    filter_shape: tuple
    fan_in: int
    in_q: T.QParams
    out_q: T.QParams
    activation: str

    @property
    def channels(self) -> int:
        return self.filter_shape[-1] if self.conv is not None and self.conv.kind == "dw" else self.filter_shape[0]


def _layers() -> tuple:
    out = []
    for c in CONVS:
        shape = (c.f, c.f, c.in_feat) if c.kind == "dw" else (c.out_feat, c.f, c.f, c.in_feat)
        out.append(Layer(c.name, c, shape, c.fan_in, IN_Q if c.kind == "conv" else ACT_Q, ACT_Q, ACTIVATION))
    for name in LINEARS:
        out.append(Layer(name, None, (PART, POOL_FEAT), POOL_FEAT, POOL_Q, LOGITS_Q, "NONE"))
    return tuple(out)


LAYERS = _layers()
SUFFIXES = ("W", "B", "S", "N", "I")       # filter, bias, multipliers, shifts, Infos
DTYPES = {"W": np.int8, "B": np.int32, "S": np.int32, "N": np.int8, "I": np.int8}


def output_name(layer: str) -> str:
    return f"{layer}_Out"


def constants() -> list:
    """[(symbol, shape, dtype)] in generation order."""
    out = []
    for layer in LAYERS:
        n = layer.channels
        shapes = {"W": layer.filter_shape, "B": (n,), "S": (n,), "N": (n,), "I": (64,)}
        out += [(f"{layer.name}_{s}", shapes[s], DTYPES[s]) for s in SUFFIXES]
    return out + [("Pool_I", (64,), np.int8), ("SoftMax_I", (64,), np.int8)]


def file_name(symbol: str) -> str:
    return f"{symbol}.tensor"


def _ints(stream: np.random.PCG64, shape: tuple, limit: int) -> np.ndarray:
    raw = stream.random_raw(int(np.prod(shape)))
    return ((raw % np.uint64(2 * limit + 1)).astype(np.int64) - limit).reshape(shape)


def _floats(stream: np.random.PCG64, n: int, lo: float, hi: float) -> np.ndarray:
    """n floats uniform in [lo, hi) from the top 53 bits of the raw stream."""
    u = (stream.random_raw(n) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return lo + (hi - lo) * u


def filter_scales(layer: Layer, stream: np.random.PCG64) -> tuple:
    """float32 per-channel scales (see the module's documentation)."""
    a = math.sqrt(6.0 / layer.fan_in) if layer.conv is not None else math.sqrt(3.0 / layer.fan_in) * LOGIT_GAIN
    return tuple(float(np.float32(a * u / 127)) for u in _floats(stream, layer.channels, 0.75, 1.25))


def layer_constants(layer: Layer, scales: tuple) -> tuple:
    """(Scale, ScaleN, Infos) of a convolution or classifier part, by the generators' own helpers."""
    w_q = T.FilterQParams(scales)
    if layer.conv is not None:
        return conv_constants(layer.in_q, w_q, layer.out_q, layer.activation)
    c = linear_constants(layer.in_q, w_q, layer.out_q, layer.activation)
    return c.scale, c.scale_n, c.infos


def generate_weights() -> dict:
    """{symbol: array} (see the module's documentation), and ``scales``: {layer: per-channel float32 scales}."""
    stream = np.random.PCG64(SEED)
    out, scales = {}, {}
    for layer in LAYERS:
        s = scales[layer.name] = filter_scales(layer, stream)
        out[f"{layer.name}_W"] = _ints(stream, layer.filter_shape, 127).astype(np.int8)
        bias_real = _floats(stream, layer.channels, -BIAS_REAL, BIAS_REAL)
        bias_scale = np.array([float(layer.in_q.scale) * float(v) for v in s])
        out[f"{layer.name}_B"] = np.round(bias_real / bias_scale).astype(np.int32)
        out[f"{layer.name}_S"], out[f"{layer.name}_N"], out[f"{layer.name}_I"] = layer_constants(layer, s)
    out["Pool_I"] = mean_infos(ACT_Q, POOL_Q, POOL_W * POOL_H)
    out["SoftMax_I"] = softmax_infos(LOGITS_Q, 1.0)
    return out, scales


def digest(weights: dict) -> str:
    h = hashlib.sha256()
    for symbol, _, dtype in constants():
        h.update(symbol.encode() + b"\0" + np.ascontiguousarray(weights[symbol], dtype=dtype).tobytes())
    return h.hexdigest()


def cache_root() -> Path:
    base = os.environ.get("AUTOTILER_CACHE")
    return (Path(base) if base else Path.home() / ".cache" / "autotiler") / "mobilenet_sq8"


def write_weights(weights: dict, directory: Path) -> None:
    """Every tensor file (raw little-endian), each written atomically."""
    directory.mkdir(parents=True, exist_ok=True)
    for symbol, _, dtype in constants():
        path = directory / file_name(symbol)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.")
        with os.fdopen(fd, "wb") as f:
            f.write(np.ascontiguousarray(weights[symbol], dtype=np.dtype(dtype).newbyteorder("<")).tobytes())
        os.replace(tmp, path)


def read_weights(directory: Path) -> dict:
    return {s: np.fromfile(directory / file_name(s), dtype=np.dtype(dtype).newbyteorder("<")).astype(dtype)
            .reshape(shape) for s, shape, dtype in constants()}


def ensure_weights(directory: Path | None = None) -> Path:
    """The directory holding the constant files, written first if missing or different; their digest is
    checked against WEIGHTS_SHA256."""
    candidates = [Path(directory)] if directory is not None else [
        cache_root() / WEIGHTS_SHA256[:16], Path(tempfile.gettempdir()) / f"autotiler-mobilenet-sq8-{WEIGHTS_SHA256[:16]}"]
    for d in candidates:
        try:
            if digest(read_weights(d)) == WEIGHTS_SHA256:
                return d
        except (OSError, ValueError):
            pass
    weights, _ = generate_weights()
    found = digest(weights)
    if found != WEIGHTS_SHA256:
        raise RuntimeError(f"examples/mobilenet_sq8: the generated constants' SHA-256 is {found}, not the pinned "
                           f"{WEIGHTS_SHA256}: the generation changed; pin the new digest in network.py")
    for i, d in enumerate(candidates):
        try:
            write_weights(weights, d)
            return d
        except OSError:
            if i == len(candidates) - 1:
                raise
    raise AssertionError("unreachable")


def scales() -> dict:
    """{layer: its filter's per-channel float32 scales} (they are not constants of the graph: the
    multipliers are; the reference needs them)."""
    return generate_weights()[1]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="write MobileNet SQ8's constants as ConstInfo tensor files")
    p.add_argument("--out", type=Path, default=None, help="directory (default: the cache the model reads)")
    args = p.parse_args(argv)
    directory = ensure_weights(args.out)
    total = sum(int(np.prod(shape)) * np.dtype(dt).itemsize for _, shape, dt in constants())
    print(f"{len(constants())} tensor files, {total} bytes, SHA-256 {WEIGHTS_SHA256}, in {directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
