"""Numpy reference of the matrix maximum example (integer exact).

Interface used by the generic example tests:

* ``KERNEL``: the generated C function to call, ``MatMax(In, Out)``.
* ``SOURCES``: the hand-written basic kernels to compile with the generated code.
* ``make_args(rng, **sizes)``: every C argument of ``MatMax``, in C order.
* ``expected(args)``: expected final contents of each output array.
"""

import numpy as np

KERNEL = "MatMax"
SOURCES = ["MatMaxBasicKernels.c"]
SENTINEL = 0x5A5A5A5A          # pre-fills Out, so an unwritten result is caught
SIZES = {"W": 200, "H": 300}   # the guide's MatrixMax("MatMax", 200, 300)


def make_args(rng, W=200, H=300):
    """C arguments of ``MatMax``: In (int32 H x W, row-major) and Out (one int32, sentinel).

    All values are negative (down to the smallest int32), so a kernel that starts its search
    from 0, or that lets the sentinel win, gives a wrong answer.
    """
    return {
        "In": rng.integers(np.iinfo(np.int32).min, 0, size=(H, W), dtype=np.int32),
        "Out": np.full(1, SENTINEL, dtype=np.int32),
    }


def expected(args):
    """*Out = max(In)."""
    return {"Out": np.array([args["In"].max()], dtype=np.int32)}
