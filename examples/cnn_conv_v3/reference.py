"""Numpy reference of the CNN convolution layer example (CNN_ConvolutionPoolReLU form, 16-bit DP),
integer exact.

Interface used by the generic example tests:

* ``KERNEL``: the generated C function to call, ``ConvV3(In, Filter, Bias, Out)``.
* ``SOURCES``: the hand-written basic kernels to compile with the generated code.
* ``make_args(rng, **conv)``: every C argument of ``ConvV3``, in C order.
* ``expected(args, **conv)``: expected final contents of each output array.

``conv`` overrides entries of ``CONV`` (the example's layer: the same values as model.py, written
again here so that the reference does not depend on the generator).

Semantics replicated exactly (independently of the C code's loop structure):

* padding: with ``ConvPad`` the total padding of a dimension is ``max(F - S, 0)`` when ``S``
  divides it, ``max(F - Dim % S, 0)`` otherwise, split PAD_BALANCED_LEFT (left/top get the extra
  unit); the outputs are ``(Dim - F + Pad) // S + 1``; padded items are zero;
* accumulator (int32): ``Bias[of] << NormBias`` (``NormBias = In_Q + Filter_Q - Bias_Q``), plus
  every product ``In * Filter`` (int16 x int16), summed modulo 2**32 (two's complement wrap);
* result: ``roundnorm(acc, Norm)`` with ``Norm = In_Q + Filter_Q - Out_Q``, i.e. ``acc + 2**(Norm-1)``
  wrapped to int32, then an arithmetic shift right by Norm (round half up; Norm 0 leaves acc
  unchanged); clamped to [-32768, 32767] (KOP_NONE), [0, 32767] (KOP_RELU) or
  [0, ReluN << Out_Q] (KOP_RELUN); stored as int16.
"""

import numpy as np

from autotiler.generators import CNN_KERNELS_DIR

KERNEL = "ConvV3"
# the example's convolution and DP reduction, and the CNN library's KerParSetBias_DP_fp
SOURCES = ["ConvV3BasicKernels.c", str(CNN_KERNELS_DIR / "CNN_BiasReLULinear_BasicKernels.c")]
SENTINEL = -12345              # pre-fills Out, so an unwritten item is caught
CONV = {"InFeat": 16, "OutFeat": 32, "Width": 24, "Height": 24, "Fcx": 3, "Fcy": 3, "Scx": 1, "Scy": 1,
        "ConvPad": 1, "In_Q": 11, "Filter_Q": 8, "Bias_Q": 11, "Out_Q": 12, "ReLUOper": "KOP_RELU", "ReluN": 6}


def _conf(conv: dict) -> dict:
    unknown = set(conv) - set(CONV)
    if unknown:
        raise TypeError(f"unknown layer parameter(s): {sorted(unknown)}")
    return dict(CONV, **conv)


def padding(dim: int, f: int, s: int, pad: bool) -> tuple:
    """(before, after) zero padding of one dimension."""
    if not pad:
        return 0, 0
    total = max(f - s, 0) if dim % s == 0 else max(f - dim % s, 0)
    return total - total // 2, total // 2


def out_dim(dim: int, f: int, s: int, pad: bool) -> int:
    return (dim - f + sum(padding(dim, f, s, pad))) // s + 1


def out_shape(**conv) -> tuple:
    c = _conf(conv)
    return (c["OutFeat"], out_dim(c["Height"], c["Fcy"], c["Scy"], c["ConvPad"]),
            out_dim(c["Width"], c["Fcx"], c["Scx"], c["ConvPad"]))


def make_args(rng, **conv):
    """C arguments of ``ConvV3``:

    * In: int16 [InFeat][Height][Width], values in [-2048, 2047] (about [-1, 1) in Q11);
    * Filter: int16 [OutFeat][InFeat][Fcy][Fcx], values in [-256, 255];
    * Bias: int16 [OutFeat], values in [-4096, 4095];
    * Out: int16 [OutFeat][Ho][Wo], pre-filled with the sentinel.

    With Norm 7 and the ReLU, about half of the outputs are clamped at 0 and a few percent
    saturate at 32767.
    """
    c = _conf(conv)
    return {
        "In": rng.integers(-2048, 2048, size=(c["InFeat"], c["Height"], c["Width"]), dtype=np.int16),
        "Filter": rng.integers(-256, 256, size=(c["OutFeat"], c["InFeat"], c["Fcy"], c["Fcx"]), dtype=np.int16),
        "Bias": rng.integers(-4096, 4096, size=c["OutFeat"], dtype=np.int16),
        "Out": np.full(out_shape(**conv), SENTINEL, dtype=np.int16),
    }


def wrap32(x):
    """Two's complement wrap of int64 values to int32."""
    return ((np.asarray(x, dtype=np.int64) + 2**31) % 2**32) - 2**31


def accumulator(args, **conv):
    """The exact (unwrapped, int64) accumulator of every output: shifted bias plus convolution."""
    c = _conf(conv)
    inp = args["In"].astype(np.int64)
    flt = args["Filter"].astype(np.int64)
    n_in, h, w = inp.shape
    n_out, _, fy, fx = flt.shape
    sx, sy = c["Scx"], c["Scy"]
    (pl, _), (pt, _) = padding(w, fx, sx, c["ConvPad"]), padding(h, fy, sy, c["ConvPad"])
    ho, wo = out_dim(h, fy, sy, c["ConvPad"]), out_dim(w, fx, sx, c["ConvPad"])
    # Zero-padded input, large enough for every tap of every output
    padded = np.zeros((n_in, pt + h + fy + sy, pl + w + fx + sx), dtype=np.int64)
    padded[:, pt:pt + h, pl:pl + w] = inp
    acc = np.zeros((n_out, ho, wo), dtype=np.int64)
    for i in range(fy):
        for j in range(fx):
            window = padded[:, i:i + sy * ho:sy, j:j + sx * wo:sx]          # [in][ho][wo]
            acc += np.einsum("ihw,oi->ohw", window, flt[:, :, i, j])
    norm_bias = c["In_Q"] + c["Filter_Q"] - c["Bias_Q"]
    bias = args["Bias"].astype(np.int64)
    bias = bias << norm_bias if norm_bias >= 0 else bias >> -norm_bias
    return acc + bias[:, None, None]


def bounds(**conv) -> tuple:
    c = _conf(conv)
    return {"KOP_NONE": (-32768, 32767), "KOP_RELU": (0, 32767),
            "KOP_RELUN": (0, c["ReluN"] << c["Out_Q"])}[c["ReLUOper"]]


def expected(args, **conv):
    c = _conf(conv)
    acc = wrap32(accumulator(args, **conv))
    norm = c["In_Q"] + c["Filter_Q"] - c["Out_Q"]
    res = wrap32(acc + (1 << (norm - 1))) >> norm if norm else acc
    lb, ub = bounds(**conv)
    return {"Out": np.clip(res, lb, ub).astype(np.int16)}
