"""MobileNet v1 (width 0.25, 128x128x3, 8-bit) as data: its layers, Q formats, constants and their
random but fixed values, shared by model.py (the generator calls and the graph) and reference.py
(numpy). Run it as a script to write the weights somewhere else:
``python examples/mobilenet/network.py --out DIR``.

Layers (input -> output, every convolution padded ("same") and followed by a ReLU)::

    Conv0          3x3 s2  3 -> 8     128x128 -> 64x64    KOP_CONV_DP
    DW<i>, PW<i>   13 depth-wise separable blocks: 3x3 depth wise (KOP_CONV_DW, stride 2 in
                   blocks 2, 4, 6, 12) then 1x1 point wise (KOP_CONV_DP): 8->16, 16->32 (s2),
                   32->32, 32->64 (s2), 64->64, 64->128 (s2), 5x 128->128, 128->256 (s2), 256->256
    Pool           global average pooling 256 x 4x4 -> 256
    Linear<k>      256 -> 1000 classes as 5 nodes of 200 classes (below), outputs stacked in Logits
    SoftMax        1000 -> Q15 probabilities (int16)

**Fixed point.** Every activation and bias is Q``Q_ACT`` in an int8 (a value v is stored as
round(v * 2^Q)), every filter Q7, the input image Q7 ([-1, 1)), the logits Q``Q_LOGITS``. So every
convolution after the first has ``Norm = In_Q + Filter_Q - Out_Q = 7`` and ``NormBias = 7``; the
first has ``Norm = 7 + 7 - Q_ACT``; all are >= 0. The 8-bit DP convolutions accumulate in int32 and
normalise once (the 8-bit single-precision KOP_CONV would round and saturate after every input
feature); the depth-wise layers use KOP_CONV_DW, which has one input feature per output, so it
rounds once too, with a smaller L1 footprint (no int32 buffer).

**Random weights that keep activations in range.** Filters are drawn uniform integers in
``[-A, A]`` with ``A = round(2^7 * sqrt(6 / fan_in))`` (He-uniform, in Q7): for zero-mean
weights of variance 2/fan_in, a convolution followed by a ReLU keeps the mean square of the
activations from layer to layer (He et al., 2015), so one Q format holds every activation; the
classifier's variance is ``LOGIT_GAIN^2 / fan_in`` (no ReLU after it), giving logits of about 1.8
root mean square, a softmax far from uniform. Biases are uniform in ``[-BIAS_RANGE, BIAS_RANGE]``
at Q``Q_ACT``. The Q formats were then chosen on the reference: with the activations' root mean
square between 0.5 and 1.2 over the 27 convolutions, Q4 ([-8, 8)) puts the limit at 6.7 times the
largest of them; a trial with Q5 ([-4, 4)) saturated up to 2.5% of a layer (DW6).
``reference.layer_stats`` measures, for a given input, each layer's saturated and zero fractions;
tests/test_example_mobilenet.py checks that no layer saturates more than 1% of its outputs and
none is mostly zero (measured on three inputs: at most 0.4%, in DW7; 42-60% zeros after each
ReLU, as expected of zero-mean pre-activations; no saturated logit).

**The classifier in five nodes.** A graph constant is fetched whole into L2 (promoted at
construction, or prefetched into the dynamic area before its node): the planner neither streams a
constant from flash nor moves it to L3. One 256 x 1000 weight matrix (256,000 B) would need half of
the 512 KiB L2 at its node, which rules out every L2 budget below about 260 KB, while above that
budget the activations (at most 96 KiB live at once) never need L3 RAM. Five nodes of 200 classes
(51,200 B of weights each, less than PW13's 65,536) keep the network runnable down to budgets where
the activations spill. (Five, not four: a part of a stacked tensor must start at a multiple of 4
bytes, and 250 int8 logits are not one.) The reference computes one 256 -> 1000 layer; the outputs
are the same.

**Where the weights live.** 467,336 bytes of uniform noise carry no information beyond this file
and its seed, so they are not committed: :func:`ensure_weights` writes them (in 0.1 s) as the
``ConstInfo`` tensor files (raw int8, fixed point stored as is, filters [Out][In][Fy][Fx], depth
wise [Feat][Fy][Fx], classifier [Classes][256]) into a cache directory
(``$AUTOTILER_CACHE/mobilenet/<digest>`` or ``~/.cache/autotiler/mobilenet/<digest>``), each file
atomically, and checks their SHA-256 against ``WEIGHTS_SHA256``. The generator reads numpy's PCG64 bit stream
(``random_raw``, stable across numpy versions, unlike ``Generator`` methods) so the same bytes
come out everywhere.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

NAME = "MobileNet"
IN_FEAT, IN_W, IN_H = 3, 128, 128
CLASSES = 1000
CLASSIFIER_PARTS = 5                      # Linear0..Linear4, 200 classes each
Q_IN = 7                                  # the input image: [-1, 1)
Q_W = 7                                   # every filter
Q_ACT = 4                                 # every activation and bias: [-8, 8), 1/16 steps
Q_LOGITS = 4                              # the classifier's outputs (the softmax's input)
LOGIT_GAIN = 4.0                          # classifier weights' scale over variance 1/fan_in
BIAS_RANGE = 1 << (Q_ACT - 2)             # biases in [-0.25, 0.25]
SEED = 20260310
# (in features, out features, stride of the depth-wise convolution) of the 13 separable blocks
BLOCKS = ((8, 16, 1), (16, 32, 2), (32, 32, 1), (32, 64, 2), (64, 64, 1), (64, 128, 2),
          (128, 128, 1), (128, 128, 1), (128, 128, 1), (128, 128, 1), (128, 128, 1),
          (128, 256, 2), (256, 256, 1))
WEIGHTS_SHA256 = "25aa1c3ab38e901b6d7f530c98f49ba4cefbbaa60e8fad0c7e87fa689568d2b4"


@dataclass(frozen=True)
class Conv:
    """One convolution node: ``name`` (its user kernel and node), ``kind`` "conv" (Conv0), "dw"
    or "pw", input [in_feat][height][width], filter fx x fy, stride; output [out_feat][ho][wo]."""

    name: str
    kind: str
    in_feat: int
    out_feat: int
    width: int
    height: int
    f: int
    stride: int

    @property
    def wo(self) -> int:
        return math.ceil(self.width / self.stride) if self.f == 3 else self.width

    @property
    def ho(self) -> int:
        return math.ceil(self.height / self.stride) if self.f == 3 else self.height

    @property
    def in_q(self) -> int:
        return Q_IN if self.kind == "conv" else Q_ACT

    @property
    def filter_shape(self) -> tuple:
        if self.kind == "dw":
            return (self.in_feat, self.f, self.f)
        return (self.out_feat, self.in_feat, self.f, self.f)

    @property
    def fan_in(self) -> int:
        return self.f * self.f * (1 if self.kind == "dw" else self.in_feat)

    @property
    def macs(self) -> int:
        return self.wo * self.ho * self.out_feat * self.fan_in


def _convs() -> tuple:
    layers = [Conv("Conv0", "conv", IN_FEAT, 8, IN_W, IN_H, 3, 2)]
    w = IN_W // 2
    for i, (cin, cout, s) in enumerate(BLOCKS, start=1):
        layers.append(Conv(f"DW{i}", "dw", cin, cin, w, w, 3, s))
        w = math.ceil(w / s)
        layers.append(Conv(f"PW{i}", "pw", cin, cout, w, w, 1, 1))
    return tuple(layers)


CONVS = _convs()
POOL_FEAT = CONVS[-1].out_feat            # 256
POOL_W = POOL_H = CONVS[-1].wo            # 4
PART = CLASSES // CLASSIFIER_PARTS        # 200
LINEARS = tuple(f"Linear{k}" for k in range(CLASSIFIER_PARTS))
MACS = sum(c.macs for c in CONVS) + POOL_FEAT * CLASSES   # multiply-accumulates of one inference


def output_name(layer: str) -> str:
    """The graph local a node writes (SoftMax writes the graph's Output)."""
    return f"{layer}_Out"


def constants() -> list:
    """[(symbol, shape)] in generation order: each convolution's filter then bias, then each
    classifier part's."""
    out = []
    for c in CONVS:
        out += [(f"{c.name}_W", c.filter_shape), (f"{c.name}_B", (c.out_feat,))]
    for name in LINEARS:
        out += [(f"{name}_W", (PART, POOL_FEAT)), (f"{name}_B", (PART,))]
    return out


def file_name(symbol: str) -> str:
    return f"{symbol}.tensor"


def _uniform(stream: np.random.PCG64, shape: tuple, limit: int) -> np.ndarray:
    """Integers uniform in [-limit, limit] from the raw 64-bit stream (modulo bias < 2^-56)."""
    raw = stream.random_raw(int(np.prod(shape)))
    return ((raw % np.uint64(2 * limit + 1)).astype(np.int64) - limit).astype(np.int8).reshape(shape)


def filter_limit(fan_in: int, gain: float = 6.0) -> int:
    """A of the uniform [-A, A] filter in Q7: variance A^2/3 = gain/2 / fan_in in real units."""
    return min(127, round((1 << Q_W) * math.sqrt(gain / fan_in)))


def generate_weights() -> dict:
    """{symbol: int8 array} (see the module's documentation)."""
    stream = np.random.PCG64(SEED)
    out = {}
    for c in CONVS:
        out[f"{c.name}_W"] = _uniform(stream, c.filter_shape, filter_limit(c.fan_in))
        out[f"{c.name}_B"] = _uniform(stream, (c.out_feat,), BIAS_RANGE)
    for name in LINEARS:
        out[f"{name}_W"] = _uniform(stream, (PART, POOL_FEAT), filter_limit(POOL_FEAT, 3.0 * LOGIT_GAIN ** 2))
        out[f"{name}_B"] = _uniform(stream, (PART,), BIAS_RANGE)
    return out


def digest(weights: dict) -> str:
    h = hashlib.sha256()
    for symbol, _ in constants():
        h.update(symbol.encode() + b"\0" + np.ascontiguousarray(weights[symbol], dtype=np.int8).tobytes())
    return h.hexdigest()


def cache_root() -> Path:
    """``$AUTOTILER_CACHE/mobilenet`` or ``~/.cache/autotiler/mobilenet`` (the harness's cache's
    parent)."""
    base = os.environ.get("AUTOTILER_CACHE")
    return (Path(base) if base else Path.home() / ".cache" / "autotiler") / "mobilenet"


def write_weights(weights: dict, directory: Path) -> None:
    """Every tensor file, each written atomically (a concurrent reader sees a whole file or none)."""
    directory.mkdir(parents=True, exist_ok=True)
    for symbol, _ in constants():
        path = directory / file_name(symbol)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.")
        with os.fdopen(fd, "wb") as f:
            f.write(np.ascontiguousarray(weights[symbol], dtype=np.int8).tobytes())
        os.replace(tmp, path)


def read_weights(directory: Path) -> dict:
    """{symbol: int8 array} as the model's ConstInfo calls read them (raw int8 files)."""
    return {s: np.fromfile(directory / file_name(s), dtype=np.int8).reshape(shape) for s, shape in constants()}


def ensure_weights(directory: Path | None = None) -> Path:
    """The directory holding the weight files, written first if missing or different; their
    digest is checked against WEIGHTS_SHA256. By default the cache (cache_root()), else, if it
    cannot be written, the system's temporary directory."""
    if directory is not None:
        candidates = [Path(directory)]
    else:
        candidates = [cache_root() / WEIGHTS_SHA256[:16],
                      Path(tempfile.gettempdir()) / f"autotiler-mobilenet-{WEIGHTS_SHA256[:16]}"]
    for d in candidates:
        try:
            if digest(read_weights(d)) == WEIGHTS_SHA256:
                return d
        except (OSError, ValueError):
            pass
    weights = generate_weights()
    found = digest(weights)
    if found != WEIGHTS_SHA256:
        raise RuntimeError(f"examples/mobilenet: the generated weights' SHA-256 is {found}, not the pinned "
                           f"{WEIGHTS_SHA256}: the generation changed; pin the new digest in network.py")
    for i, d in enumerate(candidates):
        try:
            write_weights(weights, d)
            return d
        except OSError:
            if i == len(candidates) - 1:
                raise
    raise AssertionError("unreachable")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="write MobileNet's random weights as ConstInfo tensor files")
    p.add_argument("--out", type=Path, default=None, help="directory (default: the cache the model reads)")
    args = p.parse_args(argv)
    directory = ensure_weights(args.out)
    total = sum(int(np.prod(shape)) for _, shape in constants())
    print(f"{len(constants())} tensor files, {total} bytes, SHA-256 {WEIGHTS_SHA256}, in {directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
