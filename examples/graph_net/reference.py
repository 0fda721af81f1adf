"""Numpy reference of the graph example (examples/graph_net), integer exact.

* ``graph_expected(x)``: the graph's ``Out`` for an input ``x`` (int16 [4][16][16], Q11), every
  intermediate tensor computed the way the nodes do (``graph_tensors``);
* ``load_consts()``: the constants as the model reads them from consts/ (F1 converted from float32
  to Q8 int16 with ``clip(rint(v * 2**8))``, ties to even; B1 from text; the others raw int16);
* ``conv(x, filters, bias)``: the 16-bit DP convolution of examples/cnn_conv_v3 (3x3, stride 1,
  "same" padding, ReLU; accumulator ``bias << 8`` plus the products, wrapped to int32;
  ``(acc + 2**7) >> 8`` wrapped, clamped to [0, 32767]) with In, Filter, Bias in Q11, Q8, Q11 and
  Out in Q11;
* ``add(a, b)``: ``clip(a + b, -32768, 32767)`` on int16.

The interface of the generic example tests (one user kernel called alone, here node 0's
convolution): ``KERNEL``, ``SOURCES``, ``make_args(rng)``, ``expected(args)``.
"""

from pathlib import Path

import numpy as np

from autotiler.generators import CNN_KERNELS_DIR

HERE = Path(__file__).resolve().parent
CONSTS = HERE / "consts"
KERNEL = "Conv1"
# examples/cnn_conv_v3's basic kernels (KerParSetBias_DP_fp being the CNN library's), and the addition
SOURCES = ["../cnn_conv_v3/ConvV3BasicKernels.c", str(CNN_KERNELS_DIR / "CNN_BiasReLULinear_BasicKernels.c"),
           "GraphNetBasicKernels.c"]
SENTINEL = -12345
IN_SHAPE = (4, 16, 16)
OUT_SHAPE = (4, 16, 16)
Q, FILTER_Q = 11, 8
NORM = Q + FILTER_Q - Q            # 8
NORM_BIAS = Q + FILTER_Q - Q       # 8


def wrap32(x):
    return ((np.asarray(x, dtype=np.int64) + 2**31) % 2**32) - 2**31


def to_fixed(values, fract: int, dtype=np.int16):
    info = np.iinfo(dtype)
    return np.clip(np.rint(np.asarray(values, dtype=np.float64) * 2.0**fract), info.min, info.max).astype(dtype)


def load_consts() -> dict:
    """{F1..F5 [out][in][3][3], B1..B5 [out]} as int16."""
    shapes = {"1": (8, 4), "2": (4, 8), "3": (4, 8), "4": (8, 8), "5": (4, 8)}
    c = {}
    for i, (n_out, n_in) in shapes.items():
        if i == "1":
            f = to_fixed(np.fromfile(CONSTS / "F1.f32", dtype="<f4"), FILTER_Q)
            b = np.array((CONSTS / "B1.txt").read_text().split(), dtype=np.int64).astype(np.int16)
        else:
            f = np.fromfile(CONSTS / f"F{i}.q8", dtype="<i2").astype(np.int16)
            b = np.fromfile(CONSTS / f"B{i}.q11", dtype="<i2").astype(np.int16)
        c[f"F{i}"] = f.reshape(n_out, n_in, 3, 3)
        c[f"B{i}"] = b
    return c


def conv(x, filters, bias):
    """3x3 stride-1 "same" convolution, DP, ReLU: int16 [in][h][w] -> int16 [out][h][w]."""
    x = np.asarray(x, dtype=np.int64)
    f = np.asarray(filters, dtype=np.int64)
    n_in, h, w = x.shape
    padded = np.zeros((n_in, h + 2, w + 2), dtype=np.int64)
    padded[:, 1:1 + h, 1:1 + w] = x
    acc = np.zeros((f.shape[0], h, w), dtype=np.int64)
    for i in range(3):
        for j in range(3):
            acc += np.einsum("ihw,oi->ohw", padded[:, i:i + h, j:j + w], f[:, :, i, j])
    acc = wrap32(acc + (np.asarray(bias, dtype=np.int64) << NORM_BIAS)[:, None, None])
    res = wrap32(acc + (1 << (NORM - 1))) >> NORM
    return np.clip(res, 0, 32767).astype(np.int16)


def add(a, b):
    return np.clip(a.astype(np.int32) + b.astype(np.int32), -32768, 32767).astype(np.int16)


def graph_tensors(x, consts=None) -> dict:
    """Every tensor of the graph, node by node."""
    c = load_consts() if consts is None else consts
    t = {"In": np.asarray(x, dtype=np.int16)}
    t["T1"] = conv(t["In"], c["F1"], c["B1"])
    t["S0"] = conv(t["T1"], c["F2"], c["B2"])
    t["S1"] = conv(t["T1"], c["F3"], c["B3"])
    t["S"] = np.concatenate([t["S0"], t["S1"]])          # the stacked tensor: S0 then S1
    t["T2"] = add(t["S"], t["T1"])                        # residual join
    t["T3"] = conv(t["T2"], c["F4"], c["B4"])
    t["T4"] = add(t["T3"], t["T2"])                       # in place, in T3's buffer
    t["Out"] = conv(t["T4"], c["F5"], c["B5"])
    return t


def graph_expected(x) -> np.ndarray:
    return graph_tensors(x)["Out"]


def make_input(rng) -> np.ndarray:
    """An input of the graph: int16 [4][16][16] in [-2048, 2047] (about [-1, 1) in Q11)."""
    return rng.integers(-2048, 2048, size=IN_SHAPE, dtype=np.int16)


# ---- the generic example tests: Conv1 called alone


def make_args(rng):
    c = load_consts()
    return {"In": make_input(rng), "Filter": c["F1"].copy(), "Bias": c["B1"].copy(),
            "Out": np.full((8, 16, 16), SENTINEL, dtype=np.int16)}


def expected(args):
    return {"Out": conv(args["In"], args["Filter"], args["Bias"])}
