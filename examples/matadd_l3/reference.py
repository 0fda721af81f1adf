"""Numpy reference of the L3 matrix addition example (integer exact).

Interface used by the generic example tests:

* ``KERNEL``: the generated C function to call, ``MatAddL3(In1, In2, Out)``.
* ``SOURCES``: the hand-written basic kernels to compile with the generated code.
* ``make_args(rng, **sizes)``: every C argument of ``MatAddL3``, in C order. The generated
  manifest marks all three ``"home": "L3"``: ``host_harness`` places them in the simulated L3.
* ``expected(args)``: expected final contents of each output array.
"""

import numpy as np

KERNEL = "MatAddL3"
SOURCES = ["MatAddBasicKernels.c"]
SENTINEL = 0x5A5A5A5A          # pre-fills Out, so an unwritten item is caught
SIZES = {"W": 512, "H": 1024}  # 2 MiB a matrix: the three do not fit GAP8's 512 KiB L2


def make_args(rng, W=512, H=1024):
    """C arguments of ``MatAddL3``: In1, In2 (int32 H x W, row-major), Out (int32, sentinel).

    Values stay within +-2**30 so that the C sum never overflows (signed overflow is UB in C).
    """
    return {
        "In1": rng.integers(-(1 << 30), 1 << 30, size=(H, W), dtype=np.int32),
        "In2": rng.integers(-(1 << 30), 1 << 30, size=(H, W), dtype=np.int32),
        "Out": np.full((H, W), SENTINEL, dtype=np.int32),
    }


def expected(args):
    """Out = In1 + In2."""
    out = args["In1"].astype(np.int64) + args["In2"].astype(np.int64)
    return {"Out": out.astype(np.int32)}
