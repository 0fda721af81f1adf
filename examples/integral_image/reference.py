"""Numpy reference of the integral image example (integer exact).

Interface used by the generic example tests:

* ``KERNEL``: the generated C function to call, ``BodyIntegralImage(ImageIn, IntegralImage)``.
* ``SOURCES``: the hand-written basic kernels to compile with the generated code.
* ``make_args(rng, **sizes)``: every C argument of the kernel, in C order.
* ``expected(args)``: expected final contents of each output array.
"""

import numpy as np

KERNEL = "BodyIntegralImage"
SOURCES = ["IntegralImgBasicKernels.c"]
SENTINEL = 0x5A5A5A5A          # pre-fills IntegralImage, so an unwritten item is caught
SIZES = {"W": 161, "H": 121}   # the SDK example's image


def make_args(rng, W=161, H=121):
    """C arguments: ImageIn (uint8 H x W, row-major), IntegralImage (uint32 H x W, sentinel)."""
    return {
        "ImageIn": rng.integers(0, 256, size=(H, W), dtype=np.uint8),
        "IntegralImage": np.full((H, W), SENTINEL, dtype=np.uint32),
    }


def expected(args):
    """IntegralImage[l][c] = sum of ImageIn[i][j] for i <= l, j <= c (modulo 2**32)."""
    img = args["ImageIn"].astype(np.uint32)
    return {"IntegralImage": np.cumsum(np.cumsum(img, axis=0, dtype=np.uint32), axis=1, dtype=np.uint32)}
