"""Numpy reference of the 4D matrix addition example ("MyFavoriteKernel"), integer exact.

Interface used by the generic example tests:

* ``KERNEL``: the generated C function to call, ``MyFavoriteKernel(In1, In2, Out, Bias)``.
* ``SOURCES``: the hand-written basic kernels to compile with the generated code.
* ``make_args(rng, **sizes)``: every C argument of ``MyFavoriteKernel``, in C order.
* ``expected(args)``: expected final contents of each output array.
"""

import numpy as np

KERNEL = "MyFavoriteKernel"
SOURCES = ["MatAdd4DBasicKernels.c"]
SENTINEL = 0x5A5A5A5A          # pre-fills Out, so an unwritten item is caught
SIZES = {"InPlane": 4, "OutPlane": 4, "W": 75, "H": 75}   # KernelDimensions(4, 75, 75, 4)


def make_args(rng, InPlane=4, OutPlane=4, W=75, H=75):
    """C arguments of ``MyFavoriteKernel``:

    * In1, In2: int32 [InPlane][H][W] (plane ip at ip*W*H items);
    * Out: int32 [OutPlane][H][W], pre-filled with the sentinel;
    * Bias: int32 [OutPlane].

    Values are small (|x| < 2**20) so no sum can overflow int32.
    """
    lim = 1 << 20
    return {
        "In1": rng.integers(-lim, lim, size=(InPlane, H, W), dtype=np.int32),
        "In2": rng.integers(-lim, lim, size=(InPlane, H, W), dtype=np.int32),
        "Out": np.full((OutPlane, H, W), SENTINEL, dtype=np.int32),
        "Bias": rng.integers(-lim, lim, size=OutPlane, dtype=np.int32),
    }


def expected(args):
    """Out[op] = sum over ip of (In1[ip] + In2[ip]) + InPlane * Bias[op] (int32)."""
    in_plane = args["In1"].shape[0]
    planes = args["In1"].astype(np.int64) + args["In2"].astype(np.int64)
    out = planes.sum(axis=0)[None, :, :] + in_plane * args["Bias"].astype(np.int64)[:, None, None]
    return {"Out": out.astype(np.int32)}
