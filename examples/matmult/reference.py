"""Numpy reference of the SDK's MatMult generators, 16-bit (integer exact).

Interface used by the generic example tests:

* ``KERNEL``: the generated C function to call, the group
  ``MatMult(M1, M2, Out, VectOut, Norm)`` running ``ParMatMult(M1, M2, Out, Norm)`` then
  ``ParVectMatMult(M1, M2, VectOut, Norm)``.
* ``SOURCES``: the hand-written basic kernels to compile with the generated code.
* ``make_args(rng, **sizes)``: every C argument of the group, in C order (``kernel_args``:
  those of one user kernel).
* ``expected(args)``: expected final contents of each output array.

Arithmetic (MatMultBasicKernels.h): ``Out[l][c] = clip16(roundnorm(Acc, Norm))`` with
``Acc = sum_i M1[l][i] * M2[i][c]`` in int32, ``roundnorm(x, n) = (x + (1 << (n-1))) >> n``
(arithmetic shift, round half up; ``x`` for ``n = 0``) and ``clip16`` saturating to
[-32768, 32767].
"""

import numpy as np

KERNEL = "MatMult"
SOURCES = ["MatMultBasicKernels.c"]
SENTINEL = -12345                                      # pre-fills the outputs: an unwritten item is caught
SIZES = {"LineM1": 200, "ColM1": 70, "ColM2": 150}     # the SDK example's 200x70 times 70x150
NORM = 11
# |M1|, |M2| <= 4096: |Acc| <= ColM1 * 2**24 < 2**31 for ColM1 <= 127, so the C accumulator never
# overflows (signed overflow is UB in C); with Norm 11 about one output in seven saturates.
VALUE_LIMIT = 1 << 12


def kernel_args(rng, LineM1=200, ColM1=70, ColM2=150, norm=NORM):
    """C arguments of ``ParMatMult`` / ``ParVectMatMult``: M1 (int16 LineM1 x ColM1), M2 (int16
    ColM1 x ColM2), Out (int16 LineM1 x ColM2, sentinel), Norm."""
    return {
        "M1": rng.integers(-VALUE_LIMIT, VALUE_LIMIT + 1, size=(LineM1, ColM1), dtype=np.int16),
        "M2": rng.integers(-VALUE_LIMIT, VALUE_LIMIT + 1, size=(ColM1, ColM2), dtype=np.int16),
        "Out": np.full((LineM1, ColM2), SENTINEL, dtype=np.int16),
        "Norm": norm,
    }


def make_args(rng, LineM1=200, ColM1=70, ColM2=150):
    """C arguments of the group ``MatMult``: those of one kernel plus VectOut (sentinel)."""
    args = kernel_args(rng, LineM1, ColM1, ColM2)
    return {"M1": args["M1"], "M2": args["M2"], "Out": args["Out"],
            "VectOut": np.full_like(args["Out"], SENTINEL), "Norm": args["Norm"]}


def matmult16(m1, m2, norm):
    """clip16(roundnorm(M1 x M2, Norm)), exact in int64."""
    acc = m1.astype(np.int64) @ m2.astype(np.int64)
    assert np.abs(acc).max() < 2**31, "the int32 accumulator would overflow"
    if norm > 0:
        acc = (acc + (1 << (norm - 1))) >> norm
    return np.clip(acc, -32768, 32767).astype(np.int16)


def expected(args):
    """Out (and VectOut, for the group) = clip16(roundnorm(M1 x M2, Norm))."""
    out = matmult16(args["M1"], args["M2"], int(args["Norm"]))
    return {name: out for name in ("Out", "VectOut") if name in args}
