"""Numpy reference of the FIR example (integer exact).

Interface used by the generic example tests:

* ``KERNEL``: the generated C function to call, the group ``Fir(In, Coeffs10, Coeffs20,
  <Kernel>Out for each kernel of GENERATORS, Norm)`` running every generated FIR on In.
* ``SOURCES``: the hand-written basic kernels to compile with the generated code.
* ``make_args(rng, **sizes)``: every C argument of the group, in C order (``kernel_args``:
  those of one user kernel, ``<Kernel>(In, Coeffs, Out, Norm)``).
* ``expected(args)``: expected final contents of each output array.

Arithmetic (FirBasicKernels.h): with x[k] = 0 for k < 0 (the zeroed first delay line),
``Out[k] = clip16(roundnorm(sum_j x[k-N+1+j] * Coeffs[j], Norm))``, 32-bit sums,
``roundnorm(a, n) = (a + 2**(n-1)) >> n`` (arithmetic shift; ``a`` for n = 0).
"""

import numpy as np

KERNEL = "Fir"
SOURCES = ["FirBasicKernels.c"]
SENTINEL = 0x5A5A              # pre-fills the outputs, so an unwritten sample is caught
NSAMPLES = 32768               # the SDK's FirModel.c
# (kernel, taps) of the group, as GENERATORS in model.py
GENERATORS = (("TiledFir10GenericScalar", 10), ("TiledFir10Generic", 10), ("TiledFir10Opt", 10),
              ("TiledFir20GenericScalar", 20), ("TiledFir20Generic", 20), ("TiledFir20Opt", 20))
NORM = 13                      # with the coefficients below, 2% (20 taps) to 19% (10 taps) of the outputs saturate
SIZES = {"NSamples": NSAMPLES}


def coeff_bound(NCoeffs):
    """Largest |coefficient| for which no 32-bit sum, nor its rounding term for a Norm up to 16,
    can overflow: NCoeffs * 2**15 * bound + 2**15 < 2**31."""
    return (2**31 - 2**16) // (NCoeffs * 2**15)


def kernel_args(rng, NSamples=NSAMPLES, NCoeffs=20, Norm=NORM):
    """C arguments of one FIR kernel: In (int16 [NSamples], full range), Coeffs (int16
    [NCoeffs], within ``coeff_bound``: signed overflow would be undefined in the scalar C), Out
    (int16 [NSamples], sentinel), Norm."""
    bound = coeff_bound(NCoeffs)
    return {
        "In": rng.integers(-(1 << 15), 1 << 15, size=NSamples, dtype=np.int16),
        "Coeffs": rng.integers(-bound, bound + 1, size=NCoeffs, dtype=np.int16),
        "Out": np.full(NSamples, SENTINEL, dtype=np.int16),
        "Norm": Norm,
    }


def make_args(rng, NSamples=NSAMPLES, Norm=NORM):
    """C arguments of the group: In, Coeffs<N> for each number of taps N, one output per kernel
    (sentinel), Norm."""
    args = {"In": rng.integers(-(1 << 15), 1 << 15, size=NSamples, dtype=np.int16)}
    for n in sorted({n for _, n in GENERATORS}):
        args["Coeffs%d" % n] = rng.integers(-coeff_bound(n), coeff_bound(n) + 1, size=n, dtype=np.int16)
    for kernel, _ in GENERATORS:
        args[kernel + "Out"] = np.full(NSamples, SENTINEL, dtype=np.int16)
    args["Norm"] = Norm
    return args


def _wrap32(a):
    return ((a + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def fir(x, coeffs, norm):
    """Out of the FIR on the whole signal x, starting from a zero delay line."""
    n = len(coeffs)
    padded = np.concatenate([np.zeros(n - 1, dtype=np.int64), x.astype(np.int64)])
    # convolve with the reversed taps: acc[k] = sum_j padded[k+j] * coeffs[j] = sum_j x[k-n+1+j] * coeffs[j]
    acc = _wrap32(np.convolve(padded, coeffs.astype(np.int64)[::-1], mode="valid"))
    if norm:
        acc = _wrap32(acc + (1 << (norm - 1))) >> norm
    return np.clip(acc, -(1 << 15), (1 << 15) - 1).astype(np.int16)


def expected(args):
    """Each output (group arguments) or Out (one kernel's arguments) = the filtered signal."""
    if "Coeffs" in args:
        return {"Out": fir(args["In"], args["Coeffs"], args["Norm"])}
    return {kernel + "Out": fir(args["In"], args["Coeffs%d" % n], args["Norm"]) for kernel, n in GENERATORS}
