"""Numpy reference of the CNN 5x5 convolution example (integer exact).

Interface used by the generic example tests:

* ``KERNEL``: the generated C function to call, ``Conv5x5(In, Filter, Out, Norm, Bias)``.
* ``SOURCES``: the hand-written basic kernels to compile with the generated code.
* ``make_args(rng, **sizes)``: every C argument of ``Conv5x5``, in C order.
* ``expected(args)``: expected final contents of each output array.

Semantics replicated exactly: for each output plane the accumulator starts at the plane's
bias; for each input plane in order 0 .. InPlane-1 a 32-bit sum of the 25 products is
arithmetically shifted right by Norm, added, and the result clipped to int16
(``gap_clip(x, 15)``) before the next input plane.
"""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

KERNEL = "Conv5x5"
SOURCES = ["Conv5x5BasicKernels.c"]
SENTINEL = -12345              # pre-fills Out, so an unwritten item is caught
SIZES = {"InPlane": 3, "OutPlane": 4, "W": 40, "H": 36}  # GenerateCnnConv5x5("Conv5x5", 3, 4, 40, 36)
NORM = 8


def make_args(rng, InPlane=3, OutPlane=4, W=40, H=36):
    """C arguments of ``Conv5x5``:

    * In: int16 [InPlane][H][W], values in [-1024, 1023];
    * Filter: int16 [OutPlane][InPlane][5][5], values in [-128, 127];
    * Out: int16 [OutPlane][H-4][W-4], pre-filled with the sentinel;
    * Norm: 8;
    * Bias: int16 [OutPlane]; the first two biases are near the int16 limits so that the
      clipping is exercised in both directions.

    |sum of 25 products| < 25 * 1024 * 128 < 2**22: no int32 overflow.
    """
    bias = rng.integers(-2000, 2000, size=OutPlane, dtype=np.int16)
    if OutPlane > 0:
        bias[0] = 32000
    if OutPlane > 1:
        bias[1] = -32000
    return {
        "In": rng.integers(-1024, 1024, size=(InPlane, H, W), dtype=np.int16),
        "Filter": rng.integers(-128, 128, size=(OutPlane, InPlane, 5, 5), dtype=np.int16),
        "Out": np.full((OutPlane, H - 4, W - 4), SENTINEL, dtype=np.int16),
        "Norm": NORM,
        "Bias": bias,
    }


def expected(args):
    """Out[op] = clip16(... clip16(clip16(Bias[op] + (conv(In[0], F[op,0]) >> Norm))
    + (conv(In[1], F[op,1]) >> Norm)) ...)."""
    inp = args["In"].astype(np.int64)
    flt = args["Filter"].astype(np.int64)
    norm = int(args["Norm"])
    in_plane, h, w = inp.shape
    out_plane = flt.shape[0]
    out = np.empty((out_plane, h - 4, w - 4), dtype=np.int64)
    out[...] = args["Bias"].astype(np.int64)[:, None, None]
    for ip in range(in_plane):
        windows = sliding_window_view(inp[ip], (5, 5))          # [h-4][w-4][5][5]
        acc = np.einsum("yxij,oij->oyx", windows, flt[:, ip])   # [op][h-4][w-4]
        assert np.abs(acc).max() < 2**31, "int32 accumulator would overflow"
        out = np.clip(out + (acc >> norm), -32768, 32767)
    return {"Out": out.astype(np.int16)}
