"""The SQ8 pooling basic kernels with TensorFlow Lite Micro's arithmetic
(autotiler/generators/cnn_kernels/CNN_SQ8_Pooling.c) against their numpy reference
(autotiler/generators/sq8_tflm.py, itself proven bit-exact against tflite-micro), bit for bit, on
the simulated cluster, through probe user kernels (tests/sq8_probes.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_tflm as T

from .sq8_probes import P as _P
from .sq8_probes import build_probes, check, run

pytestmark = pytest.mark.usefixtures("private_harness_cache")
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SOURCES = [CNN_KERNELS_DIR / "CNN_SQ8_Pooling.c"]
POOL_MAX_HW, POOL_MAX_C = 16, 12
POOL_FIELDS = [("signed char" + _P, "In", POOL_MAX_HW * POOL_MAX_HW * POOL_MAX_C),
               ("signed char" + _P, "Out", POOL_MAX_HW * POOL_MAX_HW * POOL_MAX_C),
               *[("unsigned short int", n, 0) for n in ("W", "H", "C", "Wo", "Ho")],
               *[("unsigned char", n, 0) for n in ("Fx", "Fy", "Sx", "Sy", "PadLeft", "PadTop")],
               ("int", "ActMin", 0), ("int", "ActMax", 0)]


@pytest.fixture(scope="module", params=[8, 3], ids=["8cores", "3cores"])
def prog(request, tmp_path_factory):
    """The probes built for GAP8's 8 cores and for 3 (chunks that do not divide evenly)."""
    probes = [("KerParMaxPool_TFLM_SQ8", "KerPool_TFLM_SQ8_T", POOL_FIELDS),
              ("KerParAvgPool_TFLM_SQ8", "KerPool_TFLM_SQ8_T", POOL_FIELDS)]
    return build_probes(tmp_path_factory.mktemp("sq8_pool_probes"), probes, SOURCES, request.param)


# ---- max and average pooling ---------------------------------------------------------------

POOL_SETTINGS = settings(SETTINGS, max_examples=40)
POOL_DRAWS = dict(h=st.integers(1, POOL_MAX_HW), w=st.integers(1, POOL_MAX_HW), c=st.integers(1, POOL_MAX_C),
                  fy=st.integers(1, 4), fx=st.integers(1, 4), sy=st.integers(1, 3), sx=st.integers(1, 3),
                  padding=st.sampled_from(T.PADDINGS), zp=st.integers(-128, 127),
                  activation=st.sampled_from([*T.ACTIVATIONS, "range"]), seed=st.integers(0, 2**32 - 1))


def pool_geometry(h, w, fy, fx, sy, sx, padding):
    """(Ho, Wo, PadTop, PadLeft) as sq8_tflm computes them; None when VALID leaves no output (a filter
    larger than the image, which TFLM refuses)."""
    ho, wo = T.compute_out_size(padding, h, fy, sy), T.compute_out_size(padding, w, fx, sx)
    if ho <= 0 or wo <= 0:
        return None
    return ho, wo, T.compute_padding(sy, 1, h, fy, ho)[0], T.compute_padding(sx, 1, w, fx, wo)[0]


def check_pool(prog, kernel, reference, h, w, c, fy, fx, sy, sx, padding, zp, activation, seed):
    """kernel = reference (sq8_tflm's pooling) on a random int8 image; "range" is an arbitrary clamp
    of the unclamped result. The kernel gets the pads the caller computes."""
    geometry = pool_geometry(h, w, fy, fx, sy, sx, padding)
    assume(geometry is not None)
    ho, wo, pad_top, pad_left = geometry
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, (1, h, w, c)).astype(np.int8)
    q = T.QParams(float(10.0 ** rng.uniform(-3, 0)), zp)
    act = "NONE" if activation == "range" else activation
    expected = reference(x, q, q, (fy, fx), (sy, sx), padding, act)
    lo, hi = T.activation_range(act, q)
    if activation == "range":
        lo, hi = sorted(int(v) for v in rng.integers(-128, 128, 2))
        expected = np.clip(expected, lo, hi).astype(np.int8)
    out = run(prog, kernel, POOL_FIELDS, In=x, W=w, H=h, C=c, Wo=wo, Ho=ho, Fx=fx, Fy=fy, Sx=sx, Sy=sy,
              PadLeft=pad_left, PadTop=pad_top, ActMin=lo, ActMax=hi)["Out"]
    check(out, expected)


@POOL_SETTINGS
@given(**POOL_DRAWS)
def test_max_pool_tflm_sq8(prog, **case):
    """KerParMaxPool_TFLM_SQ8 = sq8_tflm.max_pool2d."""
    check_pool(prog, "KerParMaxPool_TFLM_SQ8", T.max_pool2d, **case)


@POOL_SETTINGS
@given(**POOL_DRAWS)
def test_avg_pool_tflm_sq8(prog, **case):
    """KerParAvgPool_TFLM_SQ8 = sq8_tflm.average_pool2d (border windows divide by their in-image taps)."""
    check_pool(prog, "KerParAvgPool_TFLM_SQ8", T.average_pool2d, **case)
