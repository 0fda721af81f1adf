"""The SQ8 basic kernels with TensorFlow Lite Micro's arithmetic (autotiler/generators/cnn_kernels/
CNN_SQ8_*.c) against their numpy reference (autotiler/generators/sq8_tflm.py, itself proven
bit-exact against tflite-micro), bit for bit, on the simulated cluster.

The kernels are not in a library loader yet: the test declares them with LibKernelTemplate and
LibKernel, and one probe user kernel per basic kernel whose buffers are promoted whole to L1 and
whose scalar fields are run-time arguments, so one build serves every hypothesis draw (as
tests/cnn_kernels_helpers.py does for the 16-bit library). Outputs are pre-filled with a sentinel
that must survive past the written items.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_tflm as T
from autotiler.platforms import get_platform

pytestmark = pytest.mark.usefixtures("private_harness_cache")
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
PLATFORM = get_platform("gap8", l1_size=512 * 1024, l2_size=4 * 1024 * 1024)
SOURCES = [CNN_KERNELS_DIR / "CNN_SQ8_Linear.c"]
MAX_IN, MAX_OUT = 300, 40
SENTINEL = -99
_P = " * __restrict__"

# The struct of CNN_SQ8_BasicKernels.h, field by field: (C type, name, capacity in items for a pointer)
LINEAR_FIELDS = [("signed char" + _P, "In", MAX_IN), ("signed char" + _P, "Filter", MAX_IN * MAX_OUT),
                 ("int" + _P, "Bias", MAX_OUT), ("signed char" + _P, "Out", MAX_OUT),
                 ("unsigned short int", "InDim", 0), ("unsigned short int", "OutDim", 0),
                 ("int" + _P, "Multiplier", MAX_OUT), ("signed char" + _P, "Shift", MAX_OUT),
                 ("int", "InZeroPoint", 0), ("int", "OutZeroPoint", 0), ("int", "ActMin", 0), ("int", "ActMax", 0)]
OUTPUTS = ("Out",)
ITEM_SIZE = {"signed char": 1, "int": 4}


def _probe(kernel: str, struct: str, fields: list) -> None:
    """User kernel P_<kernel>: every pointer field a buffer of its capacity promoted whole to L1
    (outputs O_IN|O_OUT, so the sentinel comes back where the kernel does not write), every scalar
    a C argument of the same name."""
    LibKernelTemplate(struct, CArgs(len(fields), *[TCArg(t, n) for t, n, _ in fields]))
    LibKernel(kernel, CALL_PARALLEL, 0, struct)
    binds, kas = [], []
    for ctype, name, cap in fields:
        if cap:
            binds.append(K_Arg(name, KER_ARG_TILE))
            flags = O_IN | O_OUT if name in OUTPUTS else O_IN
            size = ITEM_SIZE[ctype.replace(_P, "")]
            kas.append(KerArg(name, KerArgSpace(1, KER_ITER_TILE0), flags, cap, 1, size, 0, 0, 0, name))
        else:
            binds.append(C_Arg(name))
    cargs = [TCArg(t, n) for t, n, _ in fields]
    UserKernel("P_" + kernel, KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0)), TILE_HOR,
               CArgs(len(cargs), *cargs), Calls(1, Call(kernel, LOC_LOOP, Bindings(len(binds), *binds))),
               KerArgs(len(kas), *kas))


@pytest.fixture(scope="module", params=[8, 3], ids=["8cores", "3cores"])
def prog(request, tmp_path_factory):
    """The probes built for GAP8's 8 cores and for 3 (chunks that do not divide evenly)."""
    out_dir = tmp_path_factory.mktemp("sq8_probes")
    with Model(PLATFORM) as model:
        SetUsedFilesNames(0, 1, "CNN_SQ8_BasicKernels.h")
        SetGeneratedFilesNames("Sq8Probes.c", "Sq8Probes.h")
        SetL1MemorySize(PLATFORM.l1_size)
        _probe("KerParLinear_TFLM_SQ8", "KerLinear_TFLM_SQ8_T", LINEAR_FIELDS)
        files = generate(model)
    write_files(files, str(out_dir))
    return host_harness.build(out_dir, sources=SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM,
                              cores=request.param)


def run(prog, kernel: str, fields: list, **values) -> dict:
    """Call probe P_<kernel>: each array is copied into a sentinel-filled buffer of its field's
    capacity, scalars are passed as they are. Returns every buffer after the call."""
    args, bufs = {}, {}
    for ctype, name, cap in fields:
        if not cap:
            args[name] = int(values[name])
            continue
        dtype = np.int32 if ctype.startswith("int") else np.int8
        buf = np.full(cap, SENTINEL, dtype=dtype)
        if name in values:
            v = np.asarray(values[name], dtype=dtype).reshape(-1)
            buf[:v.size] = v
        args[name] = bufs[name] = buf
    prog.call("P_" + kernel, **args)
    return bufs


def check(buf: np.ndarray, expected: np.ndarray) -> None:
    """buf's first items equal expected bit for bit, the rest still holds the sentinel."""
    exp = np.asarray(expected).reshape(-1)
    got = buf[:exp.size]
    bad = np.flatnonzero(got != exp)
    assert bad.size == 0, (f"{bad.size} of {exp.size} outputs differ, first at {bad[:1].tolist()}: "
                           f"got {got[bad[:8]].tolist()} expected {exp[bad[:8]].tolist()}")
    assert (buf[exp.size:] == SENTINEL).all(), f"written past its {exp.size} outputs"


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
