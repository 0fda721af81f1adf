"""The SQ8 basic kernels' requantisations in C (cnn_kernels/CNN_SQ8_Requant.h, issue 23): each
TFLM primitive equals its definition as exact rational arithmetic, over the whole int32 range, and
the original's AT_SCALE equals the numpy reference (sq8_original.at_scale).

* SaturatingRoundingDoublingHighMul(a, b) = floor(a * b / 2^31 + 1/2), INT32_MAX for
  INT32_MIN * INT32_MIN (the only product that does not fit);
* RoundingDivideByPOT(x, e) = x / 2^e rounded to nearest, ties away from zero;
* MultiplyByQuantizedMultiplier(x, M, s) = RoundingDivideByPOT(SRDHM(x * 2^max(s,0) wrapped to
  int32, M), max(-s, 0)): TFLM's default double rounding;
* the int8 epilogue adds the output zero point and clamps.
"""

from __future__ import annotations

import subprocess
from fractions import Fraction
from math import floor

import pytest
from cffi import FFI
from hypothesis import given, settings
from hypothesis import strategies as st

from autotiler.generators import CNN_KERNELS_DIR, sq8_original

from .conftest import ROOT

I32 = st.integers(-(2 ** 31), 2 ** 31 - 1)
WRAPPERS = """
#include "CNN_SQ8_Requant.h"
int32_t srdhm(int32_t a, int32_t b) { return at_tflm_srdhm(a, b); }
int32_t rdbpot(int32_t x, int e) { return at_tflm_rdbpot(x, e); }
int32_t mbqm(int32_t x, int32_t m, int s) { return at_tflm_mbqm(x, m, s); }
int requant(int32_t acc, int32_t m, int s, int32_t zp, int32_t lo, int32_t hi)
{ return at_tflm_requant_int8(acc, m, s, zp, lo, hi); }
int32_t sq8_scale(int32_t x, int scale, int n) { return at_sq8_scale(x, (uint8_t) scale, n); }
"""
CDEFS = """
int32_t srdhm(int32_t a, int32_t b);
int32_t rdbpot(int32_t x, int e);
int32_t mbqm(int32_t x, int32_t m, int s);
int requant(int32_t acc, int32_t m, int s, int32_t zp, int32_t lo, int32_t hi);
int32_t sq8_scale(int32_t x, int scale, int n);
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    """The header compiled warning-free as strict C99 (as the generated code's units are)."""
    d = tmp_path_factory.mktemp("requant")
    (d / "w.c").write_text(WRAPPERS)
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-shared", "-fPIC",
                    f"-I{CNN_KERNELS_DIR}", f"-I{ROOT / 'host_harness' / 'runtime'}", str(d / "w.c"),
                    "-o", str(d / "w.so")], check=True)
    ffi = FFI()
    ffi.cdef(CDEFS)
    return ffi.dlopen(str(d / "w.so"))


def wrap32(v: int) -> int:
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def srdhm(a: int, b: int) -> int:
    if a == b == -(2 ** 31):
        return 2 ** 31 - 1
    return floor(Fraction(a * b, 2 ** 31) + Fraction(1, 2))


def rdbpot(x: int, e: int) -> int:
    q = Fraction(abs(x), 2 ** e) + Fraction(1, 2)
    return floor(q) if x >= 0 else -floor(q)


def mbqm(x: int, m: int, s: int) -> int:
    return rdbpot(srdhm(wrap32(x * 2 ** max(s, 0)), m), max(-s, 0))


EDGES = [-(2 ** 31), -(2 ** 31) + 1, -(2 ** 30), -3, -2, -1, 0, 1, 2, 3, 2 ** 30, 2 ** 31 - 1]


def test_srdhm_at_the_edges(lib):
    for a in EDGES:
        for b in EDGES:
            assert lib.srdhm(a, b) == srdhm(a, b), (a, b)


@settings(max_examples=400, deadline=None)
@given(a=I32, b=I32)
def test_srdhm_is_the_rounded_doubled_high_product(lib, a, b):
    assert lib.srdhm(a, b) == srdhm(a, b)


@settings(max_examples=300, deadline=None)
@given(x=I32)
def test_rdbpot_rounds_half_away_from_zero_for_every_exponent(lib, x):
    for e in range(32):
        assert lib.rdbpot(x, e) == rdbpot(x, e), e


def test_rdbpot_ties():
    """-3 / 2 is -2 and 3 / 2 is 2 (ties away from zero), -5 / 4 is -1."""
    assert [rdbpot(-3, 1), rdbpot(3, 1), rdbpot(-5, 2), rdbpot(-6, 2)] == [-2, 2, -1, -2]


@settings(max_examples=400, deadline=None)
@given(x=I32, m=st.integers(2 ** 30, 2 ** 31 - 1), s=st.integers(-31, 30))
def test_mbqm_is_tflms_double_rounding(lib, x, m, s):
    assert lib.mbqm(x, m, s) == mbqm(x, m, s)


def test_double_rounding_differs_from_a_single_rounding():
    """Why the double rounding matters: x = 1, M = 2^30 + 1, shift -1 is 1 * M / 2^32 = 0.25..,
    0 when rounded once (TFLITE_SINGLE_ROUNDING); TFLM's default first rounds 1 * M / 2^31 =
    0.50.. to 1, then 1 / 2 = 0.5 away from zero to 1."""
    m = 2 ** 30 + 1
    single = floor(Fraction(1 * m, 2 ** 32) + Fraction(1, 2))
    assert (single, mbqm(1, m, -1)) == (0, 1)


@settings(max_examples=300, deadline=None)
@given(acc=I32, m=st.integers(2 ** 30, 2 ** 31 - 1), s=st.integers(-31, 30), zp=st.integers(-128, 127),
       act=st.sampled_from([(-128, 127), (-128 + 5, 127), (-10, 40)]))
def test_int8_epilogue_adds_the_zero_point_and_clamps(lib, acc, m, s, zp, act):
    lo, hi = act
    want = min(max(wrap32(mbqm(acc, m, s) + zp), lo), hi)
    assert lib.requant(acc, m, s, zp, lo, hi) == want


@settings(max_examples=400, deadline=None)
@given(x=I32, scale=st.integers(0, 255), n=st.integers(0, 31))
def test_original_at_scale_is_the_numpy_reference(lib, x, scale, n):
    """The 32-bit product wraps, the shift rounds half up (-2.5 -> -2), no rounding for n = 0."""
    assert lib.sq8_scale(x, scale, n) == int(sq8_original.at_scale(x, scale, n))
