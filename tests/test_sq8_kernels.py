"""The SQ8 fully-connected, element-wise and matrix-product basic kernels with TensorFlow Lite Micro's
arithmetic (autotiler/generators/cnn_kernels/CNN_SQ8_Linear.c, CNN_SQ8_Eltwise.c, CNN_SQ8_MatMul.c)
against their numpy reference (autotiler/generators/sq8_tflm.py, itself proven bit-exact against
tflite-micro; the matrix product's in sq8_gen_tflm_dense.py), bit for bit, on the simulated cluster,
through probe user kernels (tests/sq8_probes.py). Every kernel reads its zero points, clamp and
per-tensor multipliers from the layer's Infos vector (sq8_infos.tflm_infos).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autotiler.generators import sq8_gen_tflm_dense as TD
from autotiler.generators import sq8_tflm as T
from autotiler.generators.sq8_infos import AT_INF_TFLM_DIM, read_tflm_infos, tflm_infos
from autotiler.generators.sq8_kernels_tflm_dense import SOURCES

from .sq8_probes import P as _P
from .sq8_probes import build_probes, check, run

pytestmark = pytest.mark.usefixtures("private_harness_cache")
SETTINGS = settings(max_examples=20, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
MAX_IN, MAX_OUT = 300, 40

INFOS = ("signed char" + _P, "Infos", AT_INF_TFLM_DIM)
LINEAR_FIELDS = [("signed char" + _P, "In", MAX_IN), ("signed char" + _P, "Filter", MAX_IN * MAX_OUT),
                 ("int" + _P, "Bias", MAX_OUT), ("signed char" + _P, "Out", MAX_OUT),
                 ("unsigned short int", "InDim", 0), ("unsigned short int", "OutDim", 0),
                 ("int" + _P, "Scale", MAX_OUT), ("signed char" + _P, "ScaleN", MAX_OUT), INFOS]


@pytest.fixture(scope="module", params=[8, 3], ids=["8cores", "3cores"])
def prog(request, tmp_path_factory):
    """The probes built for GAP8's 8 cores and for 3 (chunks that do not divide evenly)."""
    probes = [("KerParLinear_TFLM_SQ8", "KerLinear_TFLM_SQ8_T", LINEAR_FIELDS),
              ("KerParAdd_TFLM_SQ8", "KerEltwise_TFLM_SQ8_T", ELT_FIELDS),
              ("KerParSub_TFLM_SQ8", "KerEltwise_TFLM_SQ8_T", ELT_FIELDS),
              ("KerParMul_TFLM_SQ8", "KerEltwise_TFLM_SQ8_T", ELT_FIELDS),
              ("KerParTensorVectMul_TFLM_SQ8", "KerTensorVectMul_TFLM_SQ8_T", TVM_FIELDS),
              ("KerParMatMul_TFLM_SQ8", "KerMatMul_TFLM_SQ8_T", MM_FIELDS),
              ("KerParMatMulTransposed_TFLM_SQ8", "KerMatMul_TFLM_SQ8_T", MM_FIELDS)]
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
    infos = tflm_infos(in_zp=in_zp, out_zp=out_zp, act_min=lo, act_max=hi)
    out = run(prog, "KerParLinear_TFLM_SQ8", LINEAR_FIELDS, In=x, Filter=w, Bias=bias, InDim=cin, OutDim=cout,
              Scale=mult, ScaleN=shift, Infos=infos)["Out"]
    check(out, expected)


# ---- element-wise ADD / SUB / MUL ----------------------------------------------------------

ELT_MAX = 65536 + 64      # every int8 pair, and room past it for the sentinel
ELT_FIELDS = [*[("signed char" + _P, name, ELT_MAX) for name in ("In1", "In2", "Out")], ("unsigned int", "N", 0),
              INFOS]
ELT_SETTINGS = settings(SETTINGS, max_examples=15)
# scales log-uniform over [1e-4, 10], the range the issue asks the reference's Prepare to take
ELT_DRAWS = dict(n=st.integers(1, 200), log_scales=st.tuples(*[st.floats(-4, 1)] * 3),
                 zps=st.tuples(*[st.integers(-128, 127)] * 3),
                 activation=st.sampled_from([*T.ACTIVATIONS, "range"]), seed=st.integers(0, 2**32 - 1))


ELTWISE = {"add": ("KerParAdd_TFLM_SQ8", T.add, TD.add_infos),
           "sub": ("KerParSub_TFLM_SQ8", T.sub, TD.sub_infos),
           "mul": ("KerParMul_TFLM_SQ8", T.mul, TD.mul_infos)}


def with_clamp(infos, lo: int, hi: int):
    """Infos with its clamp words replaced."""
    words = read_tflm_infos(infos)
    words.update(act_min=lo, act_max=hi)
    return tflm_infos(**words)


def check_eltwise(prog, op: str, x1, x2, qs, activation: str, rng=None) -> None:
    """ELTWISE[op]'s kernel = its sq8_tflm reference on x1, x2; "range" is an arbitrary clamp of the
    unclamped result (drawn from rng)."""
    kernel, reference, make_infos = ELTWISE[op]
    act = "NONE" if activation == "range" else activation
    expected = reference(x1, x2, *qs, act)
    infos = make_infos(*qs, act)
    if activation == "range":
        lo, hi = sorted(int(v) for v in rng.integers(-128, 128, 2))
        expected = np.clip(expected, lo, hi).astype(np.int8)
        infos = with_clamp(infos, lo, hi)
    out = run(prog, kernel, ELT_FIELDS, In1=x1, In2=x2, N=x1.size, Infos=infos)["Out"]
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
    infos = TD.sub_infos(*qs, "NONE")
    sub = run(prog, "KerParSub_TFLM_SQ8", ELT_FIELDS, In1=x, In2=x, N=1, Infos=infos)["Out"]
    words = read_tflm_infos(infos)
    words["mult3"] = -words["mult3"]
    neg = run(prog, "KerParAdd_TFLM_SQ8", ELT_FIELDS, In1=x, In2=x, N=1, Infos=tflm_infos(**words))["Out"]
    check(sub, T.sub(x, x, *qs))
    assert (int(sub[0]), int(neg[0])) == (-1, 0)


# ---- tensor x vector (MUL broadcast over pixels) ----------------------------------------------

TVM_PIX, TVM_FEAT = 64, 40
TVM_FIELDS = [("signed char" + _P, "In1", TVM_PIX * TVM_FEAT), ("signed char" + _P, "In2", TVM_FEAT),
              ("signed char" + _P, "Out", TVM_PIX * TVM_FEAT), ("unsigned int", "NPix", 0),
              ("unsigned short int", "Feat", 0), INFOS]


@ELT_SETTINGS
@given(pix=st.integers(1, TVM_PIX), feat=st.integers(1, TVM_FEAT), log_scales=ELT_DRAWS["log_scales"],
       zps=ELT_DRAWS["zps"], activation=st.sampled_from(T.ACTIVATIONS), seed=ELT_DRAWS["seed"])
def test_tensor_vect_mul_tflm_sq8(prog, pix, feat, log_scales, zps, activation, seed):
    """KerParTensorVectMul_TFLM_SQ8 = sq8_tflm.mul of a [pix][feat] tensor by a [feat] vector (numpy's
    broadcasting, as TFLite's MUL broadcasts)."""
    rng = np.random.default_rng(seed)
    x1 = rng.integers(-128, 128, (pix, feat)).astype(np.int8)
    x2 = rng.integers(-128, 128, feat).astype(np.int8)
    qs = tuple(T.QParams(float(10.0 ** e), zp) for e, zp in zip(log_scales, zps))
    out = run(prog, "KerParTensorVectMul_TFLM_SQ8", TVM_FIELDS, In1=x1, In2=x2, NPix=pix, Feat=feat,
              Infos=TD.mul_infos(*qs, activation))["Out"]
    check(out, T.mul(x1, x2, *qs, activation))


# ---- matrix product ----------------------------------------------------------------------------

MM_L, MM_K, MM_W = 24, 70, 20
MM_FIELDS = [("signed char" + _P, "In1", MM_L * MM_K), ("signed char" + _P, "In2", MM_K * MM_W),
             ("int" + _P, "Bias", MM_L), ("signed char" + _P, "Out", MM_L * MM_W),
             ("unsigned short int", "ColM1", 0), ("unsigned short int", "Lines", 0), ("unsigned short int", "W", 0),
             ("int" + _P, "Scale", MM_L), ("signed char" + _P, "ScaleN", MM_L), INFOS]


@ELT_SETTINGS
@pytest.mark.parametrize("transposed", [False, True], ids=["plain", "transposed"])
@given(lines=st.integers(1, MM_L), k=st.one_of(st.integers(1, 9), st.integers(1, MM_K)), w=st.integers(1, MM_W),
       zp=st.integers(-128, 127), out_zp=st.integers(-128, 127), per_channel=st.booleans(),
       activation=st.sampled_from(T.ACTIVATIONS), bias_bits=st.integers(0, 31), seed=st.integers(0, 2**32 - 1))
def test_mat_mul_tflm_sq8(prog, transposed, lines, k, w, zp, out_zp, per_channel, activation, bias_bits, seed):
    """KerParMatMul{,Transposed}_TFLM_SQ8 = sq8_gen_tflm_dense.mat_mul (FULLY_CONNECTED of each column)."""
    rng = np.random.default_rng(seed)
    in1 = rng.integers(-128, 128, (lines, k)).astype(np.int8)
    in2 = rng.integers(-128, 128, (w, k) if transposed else (k, w)).astype(np.int8)
    bias = rng.integers(-(1 << bias_bits), 1 << bias_bits, lines, dtype=np.int64).clip(-2**31, 2**31 - 1)
    bias = bias.astype(np.int32)
    in2_q, out_q = T.QParams(float(10.0 ** rng.uniform(-3, 0)), zp), T.QParams(float(10.0 ** rng.uniform(-3, 0)), out_zp)
    reals = 10.0 ** rng.uniform(-6, 2, lines if per_channel else 1)
    w_q = T.FilterQParams(tuple(float(r) * out_q.scale / in2_q.scale for r in reals))
    c = TD.mat_mul_constants(in2_q, w_q, out_q, activation, lines)
    kernel = "KerParMatMulTransposed_TFLM_SQ8" if transposed else "KerParMatMul_TFLM_SQ8"
    out = run(prog, kernel, MM_FIELDS, In1=in1, In2=in2, Bias=bias, ColM1=k, Lines=lines, W=w, Scale=c.scale,
              ScaleN=c.scale_n, Infos=c.infos)["Out"]
    expected = TD.mat_mul(in1, in2, bias, in2_q, w_q, out_q, activation, transposed)
    check(out, expected)
    x = (in2 if transposed else in2.T)
    fc = T.fully_connected(x, in1, bias, in2_q, w_q, out_q, activation)     # the TFLite operator it equals
    assert (fc.T == expected).all()
