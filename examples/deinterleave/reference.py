"""Numpy reference of the deinterleave example (integer exact).

Interface used by the generic example tests:

* ``KERNEL``: the generated C function to call, ``Deinterleave(In, Out, Channel)``.
* ``SOURCES``: the hand-written basic kernels to compile with the generated code.
* ``make_args(rng, **sizes)``: every C argument of ``Deinterleave``, in C order.
* ``expected(args)``: expected final contents of each output array.
"""

import numpy as np

KERNEL = "Deinterleave"
SOURCES = ["DeinterleaveBasicKernels.c"]
SENTINEL = 0x5A5A5A5A          # pre-fills Out, so an unwritten item is caught
SIZES = {"W": 256, "H": 32, "Channels": 4}


def make_args(rng, W=256, H=32, Channels=4, Channel=2):
    """C arguments of ``Deinterleave``: In (int32, H x W frames of Channels samples), Out (int32
    H x W, sentinel), Channel (the one kept)."""
    return {
        "In": rng.integers(-(1 << 31), 1 << 31, size=(H, W * Channels), dtype=np.int64).astype(np.int32),
        "Out": np.full((H, W), SENTINEL, dtype=np.int32),
        "Channel": Channel,
    }


def expected(args):
    """Out[i][j] = In[i][j * Channels + Channel]."""
    h, w = args["Out"].shape
    channels = args["In"].shape[1] // w
    return {"Out": args["In"].reshape(h, w, channels)[:, :, args["Channel"]].copy()}
