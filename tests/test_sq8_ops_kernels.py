"""gemmlowp's fixed-point functions as the SQ8 activation and softmax kernels compute them in C
(cnn_kernels/CNN_SQ8_TFLM_Ops.h) against their numpy twins in autotiler/generators/sq8_tflm.py,
bit for bit, on hypothesis draws over the whole int32 input range and its edges (the header
compiled warning-free as strict C99, as the generated code's units are)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from cffi import FFI
from hypothesis import example, given, settings
from hypothesis import strategies as st

from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_tflm as R

from .conftest import ROOT

I32 = st.integers(-(2 ** 31), 2 ** 31 - 1)
NEG = st.integers(-(2 ** 31), 0)
EDGES = [-(2 ** 31), -(2 ** 31) + 1, -(2 ** 30), -(2 ** 26), -1, 0, 1, 2 ** 26, 2 ** 30, 2 ** 31 - 1]
WRAPPERS = """
#include "CNN_SQ8_TFLM_Ops.h"
int32_t exp_neg(int32_t a, int ib) { return at_tflm_exp_on_negative_values(a, ib); }
int32_t logistic(int32_t a, int ib) { return at_tflm_logistic(a, ib); }
int32_t tanh_q(int32_t a, int ib) { return at_tflm_tanh(a, ib); }
int32_t one_over(int32_t a) { return at_tflm_one_over_one_plus_x(a); }
int32_t reciprocal(int32_t x, int digits, int *bits) { return at_tflm_reciprocal(x, digits, bits); }
int32_t srmbpot(int32_t x, int e) { return at_tflm_srmbpot(x, e); }
"""
CDEFS = """
int32_t exp_neg(int32_t a, int ib);
int32_t logistic(int32_t a, int ib);
int32_t tanh_q(int32_t a, int ib);
int32_t one_over(int32_t a);
int32_t reciprocal(int32_t x, int digits, int *bits);
int32_t srmbpot(int32_t x, int e);
"""
SETTINGS = dict(max_examples=25, deadline=None, derandomize=True, database=None)


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("ops_fixed_point")
    (d / "w.c").write_text(WRAPPERS)
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-shared", "-fPIC",
                    f"-I{CNN_KERNELS_DIR}", f"-I{ROOT / 'host_harness' / 'runtime'}", str(d / "w.c"),
                    "-o", str(d / "w.so")], check=True)
    ffi = FFI()
    ffi.cdef(CDEFS)
    return ffi, ffi.dlopen(str(d / "w.so"))


def _one(f, *args) -> int:
    return int(np.asarray(f(*args)).reshape(-1)[0])


@settings(**SETTINGS)
@given(a=NEG, ib=st.sampled_from([4, 5, 6, 10]))
def test_exp_on_negative_values(lib, a, ib):
    for v in [a] + [e for e in EDGES if e <= 0]:
        assert lib[1].exp_neg(v, ib) == _one(R.exp_on_negative_values, v, ib), (v, ib)


@settings(**SETTINGS)
@given(a=I32)
@example(a=0)
def test_logistic_tanh(lib, a):
    for v in [a] + EDGES:
        assert lib[1].logistic(v, 4) == _one(R.fixed_logistic, v, 4), v
        assert lib[1].tanh_q(v, 4) == _one(R.fixed_tanh, v, 4), v


@settings(**SETTINGS)
@given(a=st.integers(0, 2 ** 31 - 1), x=st.integers(1, 2 ** 31 - 1), e=st.integers(-31, 31))
def test_reciprocal_and_shifts(lib, a, x, e):
    ffi, c = lib
    assert c.one_over(a) == _one(R.one_over_one_plus_x_for_x_in_0_1, a)
    bits = ffi.new("int *")
    r = c.reciprocal(x, 12, bits)
    want_r, want_bits = R.get_reciprocal(x, 12)
    assert (r, bits[0]) == (_one(lambda v: v, want_r), _one(lambda v: v, want_bits))
    for v in [x, -x] + EDGES:
        assert c.srmbpot(v, e) == _one(R.saturating_rounding_multiply_by_pot, v, e), (v, e)
