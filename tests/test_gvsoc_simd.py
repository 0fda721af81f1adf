"""Gap.h's dot-product builtins as real Xpulpv2 instructions in the GVSoC target build.

In the target build (RV_ISA_RV32) ``gap_dotp4``, ``gap_sumdotp4`` and the other ten dot products
are the cluster core's ``pv.dotsp``/``pv.sdotsp``/... instructions, written as ``.insn r``
encodings (see Gap.h); the host build keeps its plain C. Here a small pulp-runtime application
runs each builtin on a cluster core of GVSoC's pulp-open over random operands (with -128/127/0
and -32768/32767 lanes, 0xff../0xffff lanes unsigned, accumulators near the 32-bit wrap) in both
forms, the instruction (one unit) and the plain C (a unit compiled with ``AT_GAP_PLAIN_C``); both
must equal numpy's wrapped sums. Then two SQ8 layers (``CNN_LinearAct_SQ8`` and a 3x3
``CNN_ConvolutionPoolAct_SQ8``, TFLM requantisation, basic kernels built on ``gap_sumdotp4``) run on
GVSoC with and without the instructions: equal to sq8_tflm (as the host simulator is) both ways,
and faster with them.

Marked ``gvsoc`` and skipped when GVSOC_HOME is not set, as tests/test_gvsoc.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import host_harness
from autotiler import (
    KOP_CONV,
    KOP_LINEAR,
    KOP_NONE,
    KOP_RELU,
    CNN_ConvolutionPoolAct_SQ8,
    CNN_GenControl_T,
    CNN_InitGenCtrl,
    CNN_LinearAct_SQ8,
    Model,
    SetL1MemorySize,
    SetUsedFilesNames,
)
from autotiler.codegen import generate, write_files
from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_gen_tflm_conv as TC
from autotiler.generators import sq8_gen_tflm_dense as TD
from autotiler.generators import sq8_tflm as T
from autotiler.generators.sq8_library import CNN_SQ8_HEADER, CNN_SQ8_SOURCES, LoadCNN_SQ8_Library
from host_harness import gvsoc
from tests import gvsoc_probe as P

needs_gvsoc = pytest.mark.skipif(not gvsoc.available(), reason="GVSoC not installed (GVSOC_HOME unset): "
                                 + gvsoc.INSTALL_HINT)
pytestmark = [pytest.mark.usefixtures("private_harness_cache"), needs_gvsoc, pytest.mark.gvsoc]

N = 200   # operand pairs per builtin

# (builtin, lanes: "b" 4 x 8 bits or "h" 2 x 16, x signed, y signed, takes an accumulator)
BUILTINS = (
    ("gap_dotp4", "b", True, True, False), ("gap_dotpu4", "b", False, False, False),
    ("gap_dotpus4", "b", False, True, False), ("gap_sumdotp4", "b", True, True, True),
    ("gap_sumdotpu4", "b", False, False, True), ("gap_sumdotpus4", "b", False, True, True),
    ("gap_dotp2", "h", True, True, False), ("gap_dotpu2", "h", False, False, False),
    ("gap_dotpus2", "h", False, True, False), ("gap_sumdotp2", "h", True, True, True),
    ("gap_sumdotpu2", "h", False, False, True), ("gap_sumdotpus2", "h", False, True, True),
)

# The probe: each builtin over the operand words, results into out[builtin][i]. Compiled twice:
# PROBE_NAME probe_insn (Gap.h's target form) and probe_plain (AT_GAP_PLAIN_C: the plain C).
PROBE_BODY = r"""
#include "Gap.h"
#include "operands.h"

void PROBE_NAME(unsigned int out[12][N_OPS])
{
    for (int i = 0; i < N_OPS; i++) {
        int x = (int)op_x[i], y = (int)op_y[i], acc = (int)op_acc[i];
        out[0][i] = (unsigned int)gap_dotp4(x, y);
        out[1][i] = (unsigned int)gap_dotpu4(x, y);
        out[2][i] = (unsigned int)gap_dotpus4(x, y);
        out[3][i] = (unsigned int)gap_sumdotp4(x, y, acc);
        out[4][i] = (unsigned int)gap_sumdotpu4(x, y, (unsigned int)acc);
        out[5][i] = (unsigned int)gap_sumdotpus4(x, y, acc);
        out[6][i] = (unsigned int)gap_dotp2(x, y);
        out[7][i] = (unsigned int)gap_dotpu2(x, y);
        out[8][i] = (unsigned int)gap_dotpus2(x, y);
        out[9][i] = (unsigned int)gap_sumdotp2(x, y, acc);
        out[10][i] = (unsigned int)gap_sumdotpu2(x, y, (unsigned int)acc);
        out[11][i] = (unsigned int)gap_sumdotpus2(x, y, acc);
    }
}
"""

def _operands(rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """N words x, y, acc: random bytes, with the edge lanes (0, -1, -128/127, -32768/32767 as
    bytes 0x00/0xff/0x80/0x7f) over-represented, and accumulators near the 32-bit wrap."""
    edges = np.array([0x00, 0xFF, 0x80, 0x7F, 0x01], dtype=np.uint8)
    lanes = rng.integers(0, 256, size=(2, N, 4), dtype=np.uint8)
    pick = rng.random(size=lanes.shape) < 0.4
    lanes[pick] = rng.choice(edges, size=int(pick.sum()))
    x, y = (lanes[k].view("<u4").reshape(N) for k in (0, 1))
    acc = rng.integers(0, 1 << 32, size=N, dtype=np.uint64).astype(np.uint32)
    acc[: N // 4] = np.uint32(0x7FFFFFFF) - rng.integers(0, 4, size=N // 4).astype(np.uint32)
    acc[N // 4: N // 2] = np.uint32(0x80000000) + rng.integers(0, 4, size=N // 4).astype(np.uint32)
    x[:4], y[:4] = [0x80808080, 0x7F7F7F7F, 0x80008000, 0xFFFFFFFF], [0x80808080, 0x80808080, 0x80008000, 0xFFFFFFFF]
    return x, y, acc


def _lanes(words: np.ndarray, kind: str, signed: bool) -> np.ndarray:
    dtype = {("b", True): "<i1", ("b", False): "<u1", ("h", True): "<i2", ("h", False): "<u2"}[kind, signed]
    return words.view(dtype).reshape(len(words), -1).astype(np.int64)


def _expected(x, y, acc) -> np.ndarray:
    """numpy's results of the 12 builtins: lane products summed, plus acc, modulo 2**32."""
    rows = []
    for _, kind, xs, ys, with_acc in BUILTINS:
        dot = (_lanes(x, kind, xs) * _lanes(y, kind, ys)).sum(axis=1)
        rows.append((dot + (acc.astype(np.int64) if with_acc else 0)) % (1 << 32))
    return np.array(rows, dtype=np.uint64)


def _c_words(name: str, words: np.ndarray) -> str:
    body = ", ".join(f"0x{int(w):08x}u" for w in words)
    return f"static const unsigned int {name}[N_OPS] = {{{body}}};\n"


def test_each_builtin_is_its_instruction_and_equals_the_plain_c(tmp_path):
    x, y, acc = _operands(np.random.default_rng(25))
    operands = f"#define N_OPS {N}\n" + _c_words("op_x", x) + _c_words("op_y", y) + _c_words("op_acc", acc)
    got, _ = P.run_probe(tmp_path, "simd", operands, PROBE_BODY, len(BUILTINS), N, "unsigned int")
    got = got.astype(np.uint64)
    expected = _expected(x, y, acc)
    for b, (name, *_) in enumerate(BUILTINS):
        np.testing.assert_array_equal(got[1, b], expected[b], err_msg=f"{name}: the plain C form")
        np.testing.assert_array_equal(got[0, b], expected[b], err_msg=f"{name}: the Xpulpv2 instruction")
    # The instructions are really there: the insn unit's code has no multiplications left.
    assert _pulp_simd_words(tmp_path, "probe_insn") == 12 and _pulp_simd_words(tmp_path, "probe_plain") == 0


def _pulp_simd_words(work: Path, function: str) -> int:
    """How many instruction words of ``function`` are on PULP's SIMD opcode 0x57."""
    return sum(w & 0x7F == 0x57 for w in P.code_words(work, "simd", function))


# ---- SQ8 layers with and without the instructions --------------------------------------------

IN_DIM, OUT_DIM, SENTINEL = 512, 64, -99
CIN, COUT, W, H = 16, 16, 12, 12


def _declare_layers() -> None:
    """CNN_LinearAct_SQ8 IN_DIM -> OUT_DIM and a 3x3 CNN_ConvolutionPoolAct_SQ8 CIN -> COUT on W x H
    (padding 1), both with TFLM's requantisation (Scale_DataSize 4) and a ReLU."""
    SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
    LoadCNN_SQ8_Library()
    SetL1MemorySize(40000)
    assert CNN_LinearAct_SQ8("Linear", 0, 4, 4, IN_DIM, OUT_DIM, KOP_LINEAR, KOP_RELU) == 1
    ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(ctrl)
    assert CNN_ConvolutionPoolAct_SQ8("Conv", ctrl, 4, 4, CIN, COUT, W, H, KOP_CONV, 3, 3, 1, 1, 1, 1, 1,
                                      KOP_NONE, 1, 1, 1, 1, 1, 1, 0, KOP_RELU) == 1


def _linear_case(rng) -> tuple[dict, np.ndarray]:
    x = rng.integers(-128, 128, IN_DIM).astype(np.int8)
    w = rng.integers(-128, 128, (OUT_DIM, IN_DIM)).astype(np.int8)
    bias = rng.integers(-(1 << 16), 1 << 16, OUT_DIM).astype(np.int32)
    in_q, out_q = T.QParams(0.05, -3), T.QParams(0.9, 5)
    w_q = T.FilterQParams(tuple(float(s) for s in rng.uniform(0.002, 0.02, OUT_DIM)))
    k = TD.linear_constants(in_q, w_q, out_q, "RELU", OUT_DIM)
    args = dict(In=x, Filter=w.reshape(-1), Bias=bias, Scale=k.scale, ScaleN=k.scale_n, Infos=k.infos)
    return args, T.fully_connected(x, w, bias, in_q, w_q, out_q, "RELU").reshape(-1)


def _conv_case(rng) -> tuple[dict, np.ndarray]:
    x = rng.integers(-128, 128, (H, W, CIN)).astype(np.int8)
    w = rng.integers(-128, 128, (COUT, 3, 3, CIN)).astype(np.int8)   # OHWI
    bias = rng.integers(-(1 << 14), 1 << 14, COUT).astype(np.int32)
    in_q, out_q = T.QParams(0.05, -3), T.QParams(2.0, 5)
    w_q = T.FilterQParams(tuple(float(s) for s in rng.uniform(0.002, 0.02, COUT)))
    scale, scale_n, infos = TC.conv_constants(in_q, w_q, out_q, "RELU")
    args = dict(In=x.reshape(-1), Filter=w.reshape(-1), Bias=bias, Scale=scale, ScaleN=scale_n, Infos=infos)
    return args, T.conv2d(x[None], w, bias, in_q, w_q, out_q, padding="SAME", activation="RELU").reshape(-1)


def test_sq8_layers_are_bit_exact_and_faster_with_the_instructions(tmp_path):
    """CNN_LinearAct_SQ8 (KerParLinear_TFLM_SQ8: two gap_sumdotp4 per 4 inputs) and a 3x3 TFLM
    convolution on GVSoC with the Xpulpv2 instructions and with the plain C (-DAT_GAP_PLAIN_C):
    all equal sq8_tflm's output, as the host simulator's does; the instructions make each call
    faster (the figures are printed: pytest -s)."""
    with Model("pulp_open") as m:
        _declare_layers()
        files = generate(m)
    write_files(files, str(tmp_path / "gen"))
    rng = np.random.default_rng(7)
    cases = {"Linear": _linear_case(rng), "Conv": _conv_case(rng)}
    build = dict(sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR])
    cycles = {}
    for form, cflags in (("host", None), ("insn", ()), ("plain", ("-DAT_GAP_PLAIN_C",))):
        prog = host_harness.build(tmp_path / "gen", platform="pulp_open", **build) if cflags is None else \
            host_harness.build(tmp_path / "gen", backend="gvsoc", cflags=cflags, **build)
        try:
            for name, (args, expected) in cases.items():
                out = np.full(expected.size, SENTINEL, np.int8)
                cycles[name, form] = prog.call(name, Out=out, **args)["cycles"]
                np.testing.assert_array_equal(out, expected, err_msg=f"{name}, {form}")
        finally:
            if cflags is not None:
                prog.close()
    for name in cases:
        insn, plain = cycles[name, "insn"], cycles[name, "plain"]
        print(f"\n{name} on GVSoC: {insn} cycles with the Xpulpv2 dot products, {plain} with the plain C "
              f"({plain / insn:.2f}x); the host simulator's prediction {cycles[name, 'host']}")
        assert insn < plain, name
