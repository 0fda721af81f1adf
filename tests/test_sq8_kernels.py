"""The SQ8 fully-connected and element-wise basic kernels with TensorFlow Lite Micro's arithmetic
(autotiler/generators/cnn_kernels/CNN_SQ8_Linear.c, CNN_SQ8_Eltwise.c) against their numpy
reference (autotiler/generators/sq8_tflm.py, itself proven bit-exact against tflite-micro), bit for
bit, on the simulated cluster, through probe user kernels (tests/sq8_probes.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_tflm as T

from .sq8_probes import P as _P
from .sq8_probes import build_probes, check, run

pytestmark = pytest.mark.usefixtures("private_harness_cache")
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
SOURCES = [CNN_KERNELS_DIR / "CNN_SQ8_Linear.c", CNN_KERNELS_DIR / "CNN_SQ8_Eltwise.c"]
MAX_IN, MAX_OUT = 300, 40

LINEAR_FIELDS = [("signed char" + _P, "In", MAX_IN), ("signed char" + _P, "Filter", MAX_IN * MAX_OUT),
                 ("int" + _P, "Bias", MAX_OUT), ("signed char" + _P, "Out", MAX_OUT),
                 ("unsigned short int", "InDim", 0), ("unsigned short int", "OutDim", 0),
                 ("int" + _P, "Multiplier", MAX_OUT), ("signed char" + _P, "Shift", MAX_OUT),
                 ("int", "InZeroPoint", 0), ("int", "OutZeroPoint", 0), ("int", "ActMin", 0), ("int", "ActMax", 0)]


@pytest.fixture(scope="module", params=[8, 3], ids=["8cores", "3cores"])
def prog(request, tmp_path_factory):
    """The probes built for GAP8's 8 cores and for 3 (chunks that do not divide evenly)."""
    probes = [("KerParLinear_TFLM_SQ8", "KerLinear_TFLM_SQ8_T", LINEAR_FIELDS),
              ("KerParAdd_TFLM_SQ8", "KerAdd_TFLM_SQ8_T", ADD_FIELDS),
              ("KerParSub_TFLM_SQ8", "KerAdd_TFLM_SQ8_T", ADD_FIELDS),
              ("KerParMul_TFLM_SQ8", "KerMul_TFLM_SQ8_T", MUL_FIELDS)]
    return build_probes(tmp_path_factory.mktemp("sq8_probes"), probes, SOURCES, request.param)


# ---- fully connected -----------------------------------------------------------------------

def fc_case(rng, cin: int, cout: int, per_channel: bool, in_zp: int, out_zp: int, bits: tuple):
    """Random int8 input within 2^bits[0] of the input zero point, weights within 2^bits[1] of 0, an
    int32 bias of up to bits[2] bits (small accumulators too, so that multipliers above 1, shifts > 0,
    give outputs inside the int8 range), and quantisation parameters whose real multipliers
    s_in s_w / s_out are log-uniform over [1e-6, 10]."""
    x_bits, w_bits, bias_bits = bits
    x = (in_zp + rng.integers(-(1 << x_bits), 1 << x_bits, cin)).clip(-128, 127).astype(np.int8)
    w = rng.integers(-(1 << w_bits), 1 << w_bits, (cout, cin)).clip(-128, 127).astype(np.int8)
    bound = 1 << bias_bits
    bias = rng.integers(-bound, bound, cout, dtype=np.int64).clip(-2**31, 2**31 - 1).astype(np.int32)
    in_q = T.QParams(float(10.0 ** rng.uniform(-3, 0)), in_zp)
    out_q = T.QParams(float(10.0 ** rng.uniform(-3, 0)), out_zp)
    reals = 10.0 ** rng.uniform(-6, 1, cout if per_channel else 1)
    w_q = T.FilterQParams(tuple(float(r) * out_q.scale / in_q.scale for r in reals))
    return x, w, bias, in_q, w_q, out_q


def multipliers(in_q, w_q, out_q, cout: int):
    """Prepare's per-channel (M, shift), computed as sq8_tflm.fully_connected computes them."""
    reqs = [T.quantize_multiplier(float(in_q.scale) * float(s) / float(out_q.scale)) for s in w_q.per_channel(cout)]
    return np.array([r.multiplier for r in reqs], np.int32), np.array([r.shift for r in reqs], np.int8)


@SETTINGS
@given(cin=st.one_of(st.integers(1, 12), st.integers(1, MAX_IN)), cout=st.integers(1, MAX_OUT),
       per_channel=st.booleans(), in_zp=st.integers(-128, 127), out_zp=st.integers(-128, 127),
       activation=st.sampled_from([*T.ACTIVATIONS, "range"]),
       bits=st.tuples(st.integers(0, 8), st.integers(0, 7), st.integers(0, 31)),
       seed=st.integers(0, 2**32 - 1))
def test_linear_tflm_sq8(prog, cin, cout, per_channel, in_zp, out_zp, activation, bits, seed):
    """KerParLinear_TFLM_SQ8 = sq8_tflm.fully_connected; "range" is an arbitrary clamp [lo, hi] of
    the unclamped result (the kernel takes any activation range, TFLM's fused ones are some)."""
    rng = np.random.default_rng(seed)
    x, w, bias, in_q, w_q, out_q = fc_case(rng, cin, cout, per_channel, in_zp, out_zp, bits)
    act = "NONE" if activation == "range" else activation
    expected = T.fully_connected(x, w, bias, in_q, w_q, out_q, act).reshape(-1)
    lo, hi = T.activation_range(act, out_q)
    if activation == "range":
        lo, hi = sorted(int(v) for v in rng.integers(-128, 128, 2))
        expected = np.clip(expected, lo, hi).astype(np.int8)
    mult, shift = multipliers(in_q, w_q, out_q, cout)
    out = run(prog, "KerParLinear_TFLM_SQ8", LINEAR_FIELDS, In=x, Filter=w, Bias=bias, InDim=cin, OutDim=cout,
              Multiplier=mult, Shift=shift, InZeroPoint=in_zp, OutZeroPoint=out_zp, ActMin=lo, ActMax=hi)["Out"]
    check(out, expected)


# ---- element-wise ADD / SUB / MUL ----------------------------------------------------------

ELT_MAX = 65536 + 64      # every int8 pair, and room past it for the sentinel
ELT_PTRS = [("signed char" + _P, name, ELT_MAX) for name in ("In1", "In2", "Out")]
ELT_ZPS = [("unsigned int", "N", 0), ("int", "In1ZeroPoint", 0), ("int", "In2ZeroPoint", 0),
           ("int", "OutZeroPoint", 0)]
ADD_FIELDS = [*ELT_PTRS, *ELT_ZPS, *[("int", n, 0) for n in (
    "LeftShift", "Input1Multiplier", "Input1Shift", "Input2Multiplier", "Input2Shift", "OutputMultiplier",
    "OutputShift", "ActMin", "ActMax")]]
MUL_FIELDS = [*ELT_PTRS, *ELT_ZPS, *[("int", n, 0) for n in ("Multiplier", "Shift", "ActMin", "ActMax")]]
ELT_SETTINGS = settings(SETTINGS, max_examples=40)
# scales log-uniform over [1e-4, 10], the range the issue asks the reference's Prepare to take
ELT_DRAWS = dict(n=st.integers(1, 200), log_scales=st.tuples(*[st.floats(-4, 1)] * 3),
                 zps=st.tuples(*[st.integers(-128, 127)] * 3),
                 activation=st.sampled_from([*T.ACTIVATIONS, "range"]), seed=st.integers(0, 2**32 - 1))


def add_args(in1: T.QParams, in2: T.QParams, out: T.QParams) -> dict:
    """KerAdd_TFLM_SQ8_T's scalars from sq8_tflm.add_params (Prepare), the clamp left to the caller."""
    p = T.add_params(in1, in2, out)
    return dict(In1ZeroPoint=in1.zero_point, In2ZeroPoint=in2.zero_point, OutZeroPoint=out.zero_point,
                LeftShift=p.left_shift, Input1Multiplier=p.input1.multiplier, Input1Shift=p.input1.shift,
                Input2Multiplier=p.input2.multiplier, Input2Shift=p.input2.shift,
                OutputMultiplier=p.output.multiplier, OutputShift=p.output.shift)


def mul_args(in1: T.QParams, in2: T.QParams, out: T.QParams) -> dict:
    """KerMul_TFLM_SQ8_T's scalars, the multiplier as sq8_tflm.mul computes it (double)."""
    r = T.quantize_multiplier(float(in1.scale) * float(in2.scale) / float(out.scale))
    return dict(In1ZeroPoint=in1.zero_point, In2ZeroPoint=in2.zero_point, OutZeroPoint=out.zero_point,
                Multiplier=r.multiplier, Shift=r.shift)


ELTWISE = {"add": ("KerParAdd_TFLM_SQ8", ADD_FIELDS, T.add, add_args),
           "sub": ("KerParSub_TFLM_SQ8", ADD_FIELDS, T.sub, add_args),
           "mul": ("KerParMul_TFLM_SQ8", MUL_FIELDS, T.mul, mul_args)}


def check_eltwise(prog, op: str, x1, x2, qs, activation: str, rng=None) -> None:
    """ELTWISE[op]'s kernel = its sq8_tflm reference on x1, x2; "range" is an arbitrary clamp of the
    unclamped result (drawn from rng)."""
    kernel, fields, reference, scalars = ELTWISE[op]
    act = "NONE" if activation == "range" else activation
    expected = reference(x1, x2, *qs, act)
    lo, hi = T.activation_range(act, qs[2])
    if activation == "range":
        lo, hi = sorted(int(v) for v in rng.integers(-128, 128, 2))
        expected = np.clip(expected, lo, hi).astype(np.int8)
    out = run(prog, kernel, fields, In1=x1, In2=x2, N=x1.size, ActMin=lo, ActMax=hi, **scalars(*qs))["Out"]
    check(out, expected)


@ELT_SETTINGS
@pytest.mark.parametrize("op", sorted(ELTWISE))
@given(**ELT_DRAWS)
def test_eltwise_tflm_sq8(prog, op, n, log_scales, zps, activation, seed):
    """KerPar{Add,Sub,Mul}_TFLM_SQ8 = sq8_tflm.{add,sub,mul} on random int8 inputs of n items."""
    rng = np.random.default_rng(seed)
    x1, x2 = (rng.integers(-128, 128, n).astype(np.int8) for _ in range(2))
    qs = tuple(T.QParams(float(10.0 ** e), zp) for e, zp in zip(log_scales, zps))
    check_eltwise(prog, op, x1, x2, qs, activation, rng)


def all_int8_pairs():
    x1, x2 = np.meshgrid(np.arange(-128, 128), np.arange(-128, 128))
    return x1.astype(np.int8).reshape(-1), x2.astype(np.int8).reshape(-1)


@pytest.mark.parametrize("op", ["add", "mul"])
def test_eltwise_all_int8_pairs(prog, op):
    """Every int8 pair, in one call of 65536 items, with fixed asymmetric scales and zero points (MUL's
    real multiplier 0.05 * 0.031 / 0.0007 > 1: a positive shift)."""
    qs = (T.QParams(0.05, 3), T.QParams(0.031, -7), T.QParams(0.0007 if op == "mul" else 0.07, 10))
    check_eltwise(prog, op, *all_int8_pairs(), qs, "NONE")


def test_sub_is_not_add_with_negated_multiplier(prog):
    """Why SUB has its own kernel: SRDHM rounds ties half up, so negating Input2Multiplier in ADD
    differs from TFLM's SUB where the second input's product is a tie (found by search over scales)."""
    qs = (T.QParams(1.0, 0), T.QParams(float(np.float32(1 - 17 * 2.0**-24)), 0), T.QParams(2.0**-12, 0))
    x = np.array([-120], np.int8)
    args = add_args(*qs)
    sub = run(prog, "KerParSub_TFLM_SQ8", ADD_FIELDS, In1=x, In2=x, N=1, ActMin=-128, ActMax=127, **args)["Out"]
    args["Input2Multiplier"] = -args["Input2Multiplier"]
    neg = run(prog, "KerParAdd_TFLM_SQ8", ADD_FIELDS, In1=x, In2=x, N=1, ActMin=-128, ActMax=127, **args)["Out"]
    check(sub, T.sub(x, x, *qs))
    assert (int(sub[0]), int(neg[0])) == (-1, 0)
