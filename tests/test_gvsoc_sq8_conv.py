"""KerParConv_TFLM_SQ8 (register-blocked, Xpulpv2) and its helpers on GVSoC, bit-exact.

- Gap.h's target-only helpers (gap_lw_any: a word from any address, gap_lw_postinc: p.lw with
  post-increment, gap_clamp_i32: p.max/p.min) and CNN_SQ8_Requant.h's prepared requantisation
  (at_tflm_rq_int8, at_tflm_rq_int8_double, at_tflm_rq_int8_fast, gap_mulh_i32, gap_add_sra_i32,
  gap_add_sra1_i32, gap_add_srl30_u32) run on a cluster core of GVSoC's pulp-open over random
  operands, in the target form and in the plain C (-DAT_GAP_PLAIN_C), against numpy (sq8_tflm's
  MultiplyByQuantizedMultiplier in both rounding modes); at_tflm_rq_int8_fast2 (no low word) over
  accumulators up to its 2^29 bound, every shift 0 .. -31 and zero points at the ends.
- The convolution over a bounded sweep of shapes (1x1, 3x3 stride 1/2, SAME/VALID, grouped,
  dilated, channel counts not a multiple of 4, odd widths, several tiles and channel chunks, the
  single rounding mode) on GVSoC, each output equal to sq8_tflm's; the same sweep on the host
  simulator (the plain C block path) runs without GVSoC.

GVSoC tests are marked ``gvsoc`` and skipped when GVSOC_HOME is not set, as tests/test_gvsoc.py.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators import sq8_tflm as T
from host_harness import gvsoc
from tests import gvsoc_probe as P

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import gvsoc_sq8_conv as B  # noqa: E402

needs_gvsoc = pytest.mark.skipif(not gvsoc.available(), reason="GVSoC not installed (GVSOC_HOME unset): "
                                 + gvsoc.INSTALL_HINT)

N = 256     # operands per helper

# ---- the helpers: target form and plain C against numpy -------------------------------------

PROBE_BODY = r"""
#include "Gap.h"
#include "CNN_SQ8_Requant.h"
#include "operands.h"

/* out[0..3][i]: gap_lw_any at byte offsets 0..3 of bytes + 4 i; out[4][i]: the second of two
 * gap_lw_postinc from bytes + i, out[5][i] the pointer's advance; out[6][i] gap_clamp_i32;
 * out[7][i] at_tflm_rq_int8, out[8][i] at_tflm_rq_int8_double (0 where not is_double),
 * out[9][i] at_tflm_requant_int8_mode, out[10][i] at_tflm_rq_int8_fast (0 where not
 * at_tflm_rq_fast_of), out[11][i] gap_mulh_i32(acc, mult), out[12 .. 14][i] gap_add_sra_i32(acc,
 * mult, -shift), gap_add_sra1_i32(acc, mult), gap_add_srl30_u32(acc, mult), out[15][i]
 * at_tflm_rq_int8_fast2 of acc / 4 (0 where not at_tflm_rq_fast2_of or |acc / 4| >= 2^29). */
void PROBE_NAME(int out[16][N_OPS])
{
    for (int i = 0; i < N_OPS; i++) {
        const signed char *p = (const signed char *)op_bytes + i;
        at_tflm_rq_t q;
        at_tflm_rq_fast_t f;
        at_tflm_rq_fast2_t f2;
        int acc4 = op_acc[i] / 4;

        for (int k = 0; k < 4; k++)
            out[k][i] = gap_lw_any(op_bytes + 4 * i + k);
        (void)gap_lw_postinc(p);
        out[4][i] = gap_lw_postinc(p);
        out[5][i] = (int)(p - (const signed char *)op_bytes) - i;
        out[6][i] = gap_clamp_i32(op_acc[i], op_lo[i], op_hi[i]);
        at_tflm_rq_prep(&q, op_mult[i], op_shift[i], op_flags[i]);
        out[7][i] = at_tflm_rq_int8(&q, op_acc[i], op_zp[i], op_lo[i], op_hi[i]);
        out[8][i] = at_tflm_rq_is_double(&q) ? at_tflm_rq_int8_double(&q, op_acc[i], op_zp[i], op_lo[i], op_hi[i]) : 0;
        out[9][i] = at_tflm_requant_int8_mode(op_acc[i], op_mult[i], op_shift[i], op_zp[i], op_lo[i], op_hi[i],
                                              op_flags[i]);
        out[10][i] = at_tflm_rq_fast_of(&q, op_zp[i], &f) ? at_tflm_rq_int8_fast(&f, op_acc[i], op_lo[i], op_hi[i]) : 0;
        out[11][i] = gap_mulh_i32(op_acc[i], op_mult[i]);
        out[12][i] = gap_add_sra_i32(op_acc[i], op_mult[i], -op_shift[i]);
        out[13][i] = gap_add_sra1_i32(op_acc[i], op_mult[i]);
        out[14][i] = (int)gap_add_srl30_u32((uint32_t)op_acc[i], (uint32_t)op_mult[i]);
        out[15][i] = (at_tflm_rq_fast2_of(&q, op_zp[i], &f2) && acc4 > -(1 << 29) && acc4 < (1 << 29))
                         ? at_tflm_rq_int8_fast2(&f2, acc4, op_lo[i], op_hi[i]) : 0;
    }
}
"""

def _operands(rng) -> dict:
    """Random bytes; accumulators (with the int32 edges), TFLM multipliers in [2^30, 2^31) (a few
    INT32_MIN, 0, small ones and the edges 2^30, 2^31 - 1), shifts in [-31, 7] (the single rounding:
    [-31, 30]; every shift 0 .. -31 with the edge accumulators and multipliers, for
    at_tflm_rq_int8_fast), zero points, activation ranges lo <= hi."""
    acc = rng.integers(-(1 << 31), 1 << 31, N, dtype=np.int64)
    acc[:N // 4] = rng.integers(-(1 << 20), 1 << 20, N // 4)
    acc[N // 4: N // 4 + 4] = [-(1 << 31), (1 << 31) - 1, 0, -1]
    mult = rng.integers(1 << 30, 1 << 31, N, dtype=np.int64)
    mult[:3] = [-(1 << 31), 0, 12345]
    acc[0] = -(1 << 31)                                     # SRDHM's saturating case: INT32_MIN^2
    flags = (rng.random(N) < 0.3).astype(np.int64)          # AT_TFLM_FLAG_SINGLE_ROUNDING is bit 0
    shift = np.where(flags == 1, rng.integers(-31, 31, N), rng.integers(-31, 8, N))
    # the fast form's edges: double rounding, shifts 0 .. -31, accumulators and multipliers at the limits
    edge = np.arange(N - 96, N)
    flags[edge] = 0
    shift[edge] = -(np.arange(96) % 32)
    acc[edge] = np.array([-(1 << 31), (1 << 31) - 1, -1])[np.arange(96) // 32]
    mult[edge[::2]] = (1 << 31) - 1
    mult[edge[1::2]] = 1 << 30
    shift[0] = 0
    flags[0] = 0
    lo = rng.integers(-128, 20, N)
    hi = np.maximum(lo, rng.integers(-20, 128, N))
    zp = rng.integers(-128, 128, N)
    zp[edge] = np.array([-128, 127, 0])[np.arange(96) % 3]
    return dict(bytes=rng.integers(0, 256, 4 * N + 8).astype(np.uint8), acc=acc, mult=mult, shift=shift,
                flags=flags, zp=zp, lo=lo, hi=hi)


def _expected_rq(ops: dict, acc=None) -> np.ndarray:
    acc = ops["acc"] if acc is None else acc
    out = np.zeros(N, np.int64)
    for i in range(N):
        if ops["flags"][i]:
            v = int(T.single_rounding_multiply(acc[i], ops["mult"][i], ops["shift"][i])) + int(ops["zp"][i])
        else:
            v = int(T.wrap32(T.multiply_by_quantized_multiplier(acc[i], ops["mult"][i], ops["shift"][i])
                             + int(ops["zp"][i])))
        out[i] = min(max(v, int(ops["lo"][i])), int(ops["hi"][i]))
    return out


def _fast2(ops: dict, acc4: np.ndarray) -> np.ndarray:
    """Where at_tflm_rq_fast2_of holds and |acc| < 2^29: double rounding, M != INT32_MIN, shift in
    [-30, -1], |zp| <= 2^15, |1 + 2 zp| <= (2^30 - 3) >> R (R = -shift)."""
    right = np.clip(-ops["shift"], 0, 31)
    ok = (ops["flags"] == 0) & (ops["mult"] != -(1 << 31)) & (ops["shift"] <= -1) & (ops["shift"] >= -30)
    ok &= (ops["zp"] >= -32768) & (ops["zp"] <= 32767)
    ok &= np.abs(1 + 2 * ops["zp"]) <= (((1 << 30) - 3) >> right)
    return ok & (np.abs(acc4) < (1 << 29))


def _fast(ops: dict) -> np.ndarray:
    """Where at_tflm_rq_fast_of holds: double rounding, M != INT32_MIN, shift <= -2, |2^(R-2) +
    zp 2^(R-1)| <= 2^30 (R = -shift)."""
    right = np.maximum(-ops["shift"], 2)
    rnd = (np.int64(1) << (right - 2)) + ops["zp"] * (np.int64(1) << (right - 1))
    return (ops["flags"] == 0) & (ops["mult"] != -(1 << 31)) & (ops["shift"] <= -2) & (np.abs(rnd) <= 1 << 30)


def _header(ops: dict) -> str:
    def arr(ctype, name, values):
        return f"static const {ctype} op_{name}[] = {{{', '.join(str(int(v)) for v in values)}}};\n"
    text = f"#define N_OPS {N}\n" + arr("unsigned char", "bytes", ops["bytes"])
    for name in ("acc", "mult"):
        text += f"static const int op_{name}[] = {{{', '.join(f'(int){int(v) & 0xFFFFFFFF}u' for v in ops[name])}}};\n"
    for name in ("shift", "flags", "zp", "lo", "hi"):
        text += arr("int", name, ops[name])
    return text


@needs_gvsoc
@pytest.mark.gvsoc
@pytest.mark.usefixtures("private_harness_cache")
def test_helpers_target_form_equals_plain_c_and_numpy(tmp_path):
    ops = _operands(np.random.default_rng(251))
    got, out = P.run_probe(tmp_path, "conv_helpers", _header(ops), PROBE_BODY, 16, N, "int",
                           f"-Wextra -I{CNN_KERNELS_DIR}")
    assert not re.search(r"(probe_\w+\.c|Gap\.h|CNN_SQ8_Requant\.h):\d+:\d+: warning", out), out[:3000]
    got = got.view(np.int32).astype(np.int64)
    words = np.frombuffer(ops["bytes"].tobytes(), np.uint8)
    rq = _expected_rq(ops)
    double = (ops["flags"] == 0) & (ops["mult"] != -(1 << 31))
    expected = {k: np.array([np.frombuffer(words[4 * i + k: 4 * i + k + 4].tobytes(), "<i4")[0] for i in range(N)])
                for k in range(4)}
    expected[4] = np.array([np.frombuffer(words[i + 4: i + 8].tobytes(), "<i4")[0] for i in range(N)])
    expected[5] = np.full(N, 8)
    expected[6] = np.minimum(np.maximum(ops["acc"], ops["lo"]), ops["hi"])
    expected[7] = rq
    expected[8] = np.where(double, rq, 0)
    expected[9] = rq
    expected[10] = np.where(_fast(ops), rq, 0)
    expected[11] = (ops["acc"] * ops["mult"]) >> 32
    wsum = (ops["acc"] + ops["mult"]) & 0xFFFFFFFF                 # the wrapped 32-bit sum, unsigned
    ssum = wsum - ((wsum >> 31) << 32)
    expected[12] = ssum >> (-ops["shift"] & 31)
    expected[13] = ssum >> 1
    expected[14] = wsum >> 30
    acc4 = np.trunc(ops["acc"] / 4).astype(np.int64)                # C's division: toward zero
    fast2 = _fast2(ops, acc4)
    expected[15] = np.where(fast2, _expected_rq(ops, acc4), 0)
    assert fast2.sum() > N // 4 and (fast2 & (np.abs(acc4) >= (1 << 28))).any()   # the bound's edge reached
    names = ("gap_lw_any +0", "gap_lw_any +1", "gap_lw_any +2", "gap_lw_any +3", "gap_lw_postinc",
             "gap_lw_postinc's advance", "gap_clamp_i32", "at_tflm_rq_int8", "at_tflm_rq_int8_double",
             "at_tflm_requant_int8_mode", "at_tflm_rq_int8_fast", "gap_mulh_i32",
             "gap_add_sra_i32", "gap_add_sra1_i32", "gap_add_srl30_u32", "at_tflm_rq_int8_fast2")
    for b, name in enumerate(names):
        np.testing.assert_array_equal(got[1, b], expected[b], err_msg=f"{name}: the plain C form")
        np.testing.assert_array_equal(got[0, b], expected[b], err_msg=f"{name}: the target form")
    assert _words(tmp_path, "probe_insn", 0x0B) >= 2 and _words(tmp_path, "probe_plain", 0x0B) == 0


def _words(work: Path, function: str, opcode: int) -> int:
    """Instruction words of ``function`` on ``opcode`` (p.lw post-increment: 0x0b)."""
    return sum(w & 0x7F == opcode for w in P.code_words(work, "conv_helpers", function))


# ---- the convolution over a sweep of shapes --------------------------------------------------

C = B.Case
SWEEP = [
    C("s_1x1", 5, 7, 16, 12, f=(1, 1), padding="VALID", act="RELU"),
    C("s_3x3_same", 6, 9, 8, 8, act="RELU6"),
    C("s_3x3_s2_same", 9, 11, 12, 16, stride=(2, 2)),
    C("s_3x3_s2_valid", 9, 10, 4, 8, stride=(2, 2), padding="VALID"),
    C("s_odd_channels", 7, 5, 3, 10, seed=3),                              # InFeat 3: misaligned words, a tail
    C("s_few_outputs", 6, 7, 20, 6, f=(3, 5), stride=(1, 2), in_zp=17, out_zp=-3),
    C("s_grouped", 6, 6, 8, 8, group_in=4, seed=4),
    C("s_grouped_odd", 5, 7, 12, 18, group_in=2, seed=5),                  # 6 groups of 3 outputs: blocks straddle
    C("s_dilated", 9, 9, 8, 8, dilation=(2, 2), seed=6),
    C("s_dilated_x", 7, 11, 4, 12, dilation=(1, 3), padding="VALID", seed=7),
    C("s_kws_first", 17, 10, 1, 16, f=(10, 4), stride=(2, 2), act="RELU"),
    C("s_tiles", 20, 13, 16, 24, act="RELU", budget=6000, seed=8),         # several tiles and channel chunks
    C("s_single_rounding", 6, 5, 16, 8, f=(1, 1), single_rounding=True, seed=9),
    C("s_wide_zp", 5, 9, 32, 4, in_zp=127, out_zp=127, seed=10),
    # rows of 9 bytes padded to 12 (zero filter bytes): the last pairs would read past the tile
    C("s_padded_rows_valid", 6, 7, 3, 8, padding="VALID", seed=11),
    C("s_padded_rows_tiles", 14, 9, 3, 8, stride=(2, 2), act="RELU", budget=2500, seed=12),
    # effective scales near 1 (shifts -1 .. 1): the double rounding without at_tflm_rq_int8_fast
    C("s_large_scales", 6, 7, 16, 8, out_scale=0.0005, seed=13),
    # border columns of interior lines in vertical pairs: two per side (5x5), an odd number of
    # interior lines, and the cores' pixel ranges cut inside lines (one block of 4 channels)
    C("s_5x5_border_cols", 9, 8, 12, 8, f=(5, 5), seed=14),
    C("s_3x3_odd_lines", 7, 10, 16, 4, act="RELU", seed=15),
    # 1x1 on 128 channels: 4 channels x 4 pixels (at_sq8_conv_quads), then a pair and an odd pixel;
    # the cores sharing a block's pixels, one with fewer than 4
    C("s_1x1_quads", 5, 7, 128, 32, f=(1, 1), padding="VALID", act="RELU", seed=16),
    C("s_1x1_quads_split", 3, 5, 128, 8, f=(1, 1), in_zp=5, seed=17),
    # 1x1 on 64 channels (pairs): odd and even pixel ranges per core (the odd last pixel in a pair
    # with the one before), a core of one pixel
    C("s_1x1_pairs_odd", 5, 5, 64, 8, f=(1, 1), padding="VALID", act="RELU", seed=23),
    C("s_1x1_pairs_one", 5, 1, 64, 8, f=(1, 1), seed=24),
    # filter rows of one word (at_sq8_conv_block4_cols, cluster only): border pixels through columns
    # (1, 2 and 4 channels: the in-tile bytes at every offset of the word), several tiles, IN_ZP != -128
    C("s_cols_tiles", 29, 10, 1, 12, f=(10, 4), stride=(2, 2), act="RELU", in_zp=3, budget=3000, seed=20),
    C("s_cols_2ch", 9, 8, 2, 8, f=(3, 2), in_zp=-7, seed=21),
    C("s_cols_4ch", 7, 6, 4, 8, f=(3, 1), stride=(2, 1), seed=22),
    # biases near +-2^29 (BIG_BIAS): at_tflm_rq_int8_fast2's bound fails, at_tflm_rq_int8_fast serves
    C("s_big_bias_1x1", 5, 6, 16, 8, f=(1, 1), out_scale=2500.0, out_zp=0, seed=18),
    C("s_big_bias_3x3", 6, 7, 16, 8, out_scale=2500.0, out_zp=0, seed=19),
]
BIG_BIAS = {"s_big_bias_1x1", "s_big_bias_3x3"}
_REFERENCE = B.reference


def _reference(c):
    """B.reference, with biases of +-[2^29, 2^29 + 2^27) for the cases of BIG_BIAS (outputs about
    +-100 with their out_scale): every block fails at_tflm_rq_int8_fast2's bound."""
    inputs, y = _REFERENCE(c)
    if c.name not in BIG_BIAS:
        return inputs, y
    rng = np.random.default_rng(c.seed)
    w_q = T.FilterQParams(tuple(float(s) for s in rng.uniform(0.002, 0.02, c.cout)))   # as B.reference
    bias = (rng.choice([-1, 1], c.cout) * ((1 << 29) + rng.integers(0, 1 << 27, c.cout))).astype(np.int32)
    y = T.conv2d(inputs["In"], inputs["Filter"], bias, T.QParams(0.05, c.in_zp), w_q, T.QParams(c.out_scale, c.out_zp),
                 stride=c.stride, dilation=c.dilation, padding=c.padding, activation=c.act)
    assert int(y.max()) - int(y.min()) > 50
    return dict(inputs, Bias=bias), y


@pytest.fixture
def big_bias(monkeypatch):
    monkeypatch.setattr(B, "reference", _reference)


@needs_gvsoc
@pytest.mark.gvsoc
@pytest.mark.usefixtures("private_harness_cache", "big_bias")
def test_conv_sweep_on_gvsoc_is_bit_exact(tmp_path):
    cycles = B.run_cases(SWEEP, tmp_path)          # raises WrongOutput on the first difference
    assert set(cycles) == {c.name for c in SWEEP}


@pytest.mark.usefixtures("private_harness_cache", "big_bias")
def test_conv_sweep_on_the_host_is_bit_exact(tmp_path):
    cycles = B.run_cases(SWEEP, tmp_path, backend="host")
    assert set(cycles) == {c.name for c in SWEEP}
