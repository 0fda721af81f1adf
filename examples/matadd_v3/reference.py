"""Numpy reference of the SDK's MatAdd generator, v3 form (integer exact).

Interface used by the generic example tests:

* ``KERNEL``: the generated C function to call, ``MatADD(In1, In2, Out)``.
* ``SOURCES``: the hand-written basic kernels to compile with the generated code.
* ``make_args(rng, **sizes)``: every C argument of ``MatADD``, in C order.
* ``expected(args)``: expected final contents of each output array.
"""

import numpy as np

KERNEL = "MatADD"
SOURCES = ["MatAddBasicKernels.c"]
SENTINEL = 0x5A5A5A5A          # pre-fills Out, so an unwritten item is caught
SIZES = {"W": 100, "H": 100}   # the SDK test's MAT_W x MAT_H


def make_args(rng, W=100, H=100):
    """C arguments of ``MatADD``: In1, In2 (int32 H x W, row-major), Out (int32, sentinel).

    Values stay within +-2**30 so that the C sum never overflows (signed overflow is UB in C).
    """
    return {
        "In1": rng.integers(-(1 << 30), 1 << 30, size=(H, W), dtype=np.int32),
        "In2": rng.integers(-(1 << 30), 1 << 30, size=(H, W), dtype=np.int32),
        "Out": np.full((H, W), SENTINEL, dtype=np.int32),
    }


def expected(args):
    """Out = In1 + In2, computed in int64 (exact, no overflow by construction)."""
    out = args["In1"].astype(np.int64) + args["In2"].astype(np.int64)
    assert np.abs(out).max() < 2**31
    return {"Out": out.astype(np.int32)}
