"""The SQ8 (TFLM arithmetic) depth wise, fully connected, pooling and ADD basic kernels on GVSoC's
pulp-open cluster (KerParConvDW_TFLM_SQ8, KerParLinear_TFLM_SQ8, KerParMax/AvgPool_TFLM_SQ8,
KerParAdd_TFLM_SQ8: their Xpulpv2 forms, p.mac, pv.sdotusp.b, misaligned word loads), bit-exact
with the numpy reference sq8_tflm over a bounded sweep: depth wise 3x3 of stride 1 and 2, SAME and
VALID, a depth multiplier of 2, channel counts that are not multiples of 4, odd widths, tiles of a
few lines, a 5x3 filter (the tap-by-tap form); dense sizes that are not multiples of 4 (misaligned
filter rows), with the input zero point -128 (no weight sums) and others; max and average windows,
a global average over one output line; ADD and SUB with every zero point moved; onnxruntime's
single rounding (Infos FLAGS) on each requantising kernel.

One model, one GVSoC build, one call per layer (bench/gvsoc_sq8_ops.py's Case and run_cases, which
the benchmark uses too). Marked ``gvsoc`` and skipped when GVSOC_HOME is not set, as
tests/test_gvsoc.py.

ADD's int8 outputs hide an off-by-one in its 2^20-scaled intermediate sums, so the inputs' rescale
without a 64-bit product (at_sq8_add_in, CNN_SQ8_Eltwise.c) is also compared with TFLM's
MultiplyByQuantizedMultiplier (at_tflm_mbqm, CNN_SQ8_Requant.h) on every input difference and a set
of multipliers and shifts, by a small host program (no GVSoC needed).
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from autotiler.generators import CNN_KERNELS_DIR
from host_harness import gvsoc

from .conftest import ROOT, bench_script

needs_gvsoc = pytest.mark.skipif(not gvsoc.available(), reason="GVSoC not installed (GVSOC_HOME unset): "
                                 + gvsoc.INSTALL_HINT)


def _cases() -> list:
    B = bench_script("gvsoc_sq8_ops")
    C = B.Case
    dw = [C(f"dw_{i}", "dw", h=h, w=w, cin=cin, cout=cout, f=f, stride=s, padding=pad, act=act, in_zp=zp,
            out_zp=-3, seed=i, budget=budget)
          for i, (h, w, cin, cout, f, s, pad, act, zp, budget) in enumerate([
              (9, 7, 5, 5, (3, 3), 1, "SAME", "RELU6", -128, None),
              (9, 7, 5, 5, (3, 3), 1, "VALID", "NONE", 100, None),
              (11, 9, 7, 7, (3, 3), 2, "SAME", "NONE", 5, None),
              (10, 9, 7, 7, (3, 3), 2, "VALID", "RELU", -7, None),
              (8, 5, 3, 6, (3, 3), 1, "SAME", "NONE", 17, None),        # depth multiplier 2
              (12, 45, 8, 8, (3, 3), 1, "SAME", "RELU6", -128, None),   # segments of 128 outputs: lines split
              (25, 5, 64, 64, (3, 3), 1, "SAME", "RELU", -20, 3000),    # tiles of a few lines
              (9, 7, 5, 5, (5, 3), 1, "SAME", "NONE", 9, None),         # any filter: tap by tap
          ])] + [C("dw_single", "dw", h=7, w=9, cin=6, cout=6, stride=2, in_zp=-50, out_zp=4, rounding="single",
                   seed=9),
                 C("dw_wrap", "dw", h=6, w=7, cin=9, cout=9, in_zp=-128, seed=10, bias_bits=31),  # bias + sum wraps
                 # effective scales 0.12 .. 1.25: per channel, the fast requantisation or the general one
                 C("dw_near1", "dw", h=5, w=9, cin=11, cout=11, in_zp=3, out_zp=-100, seed=11, out_scale=0.0008),
                 # planes of <= 36 outputs, >= 8 channels per core: channels inner (runs of 32 channels,
                 # a last short one; pixel pairs at strides 1 and 2, a last single one on odd widths)
                 C("dw_small_s1", "dw", h=3, w=3, cin=130, cout=130, in_zp=-20, out_zp=5, seed=12, act="RELU6"),
                 C("dw_small_s2", "dw", h=7, w=7, cin=136, cout=136, stride=2, padding="VALID", in_zp=100, seed=13,
                   bias_bits=31),
                 C("dw_small_6x5", "dw", h=6, w=5, cin=264, cout=264, in_zp=-128, out_zp=0, seed=14),
                 C("dw_small_4x4", "dw", h=8, w=7, cin=128, cout=128, stride=2, in_zp=7, out_zp=-9, seed=15),
                 C("dw_small_64", "dw", h=12, w=11, cin=64, cout=64, stride=2, in_zp=-5, out_zp=2, seed=18),
                 C("dw_small_near1", "dw", h=4, w=3, cin=133, cout=133, in_zp=9, out_zp=-128, seed=16,
                   out_scale=0.0008),
                 C("dw_small_single", "dw", h=2, w=5, cin=129, cout=129, in_zp=-1, out_zp=3, rounding="single",
                   seed=17)]
    fc = [C(f"fc_{i}", "fc", cin=cin, cout=cout, act=act, in_zp=zp, seed=20 + i)
          for i, (cin, cout, act, zp) in enumerate([
              (13, 7, "NONE", 5), (37, 9, "RELU", -128), (64, 12, "NONE", 0), (3, 5, "RELU6", 127),
              (130, 21, "NONE", -128), (640, 24, "RELU", 3)])] + [
        C("fc_single", "fc", cin=29, cout=6, in_zp=-11, rounding="single", seed=29),
        C("fc_wrap", "fc", cin=40, cout=8, in_zp=6, seed=30, bias_bits=31)]
    pool = [C("pool_max_2x2", "maxpool", h=9, w=7, cin=5, f=(2, 2), stride=2, padding="VALID", seed=30),
            C("pool_max_3x3", "maxpool", h=7, w=9, cin=6, f=(3, 3), stride=2, padding="SAME", act="RELU", seed=31),
            C("pool_avg_3x3", "avgpool", h=7, w=5, cin=7, f=(3, 3), stride=1, padding="SAME", seed=32),
            C("pool_avg_global", "avgpool", h=25, w=5, cin=64, f=(25, 5), stride=25, padding="VALID", seed=33)]
    add = [C("add_relu", "add", h=5, w=9, cin=7, act="RELU", in_zp=100, out_zp=-9, seed=40),
           C("add_none", "add", h=4, w=4, cin=13, in_zp=-128, out_zp=0, seed=41),
           C("add_single", "add", h=3, w=5, cin=7, in_zp=120, out_zp=-100, rounding="single", seed=42),
           C("sub_relu6", "sub", h=6, w=3, cin=9, act="RELU6", in_zp=-77, out_zp=20, seed=43)]
    return dw + fc + pool + add


@pytest.mark.usefixtures("private_harness_cache")
@needs_gvsoc
@pytest.mark.gvsoc
def test_sq8_ops_on_gvsoc_are_bit_exact(tmp_path):
    """Every layer's GVSoC output equals sq8_tflm's (run_cases raises WrongOutput otherwise)."""
    B = bench_script("gvsoc_sq8_ops")
    cycles = B.run_cases(_cases(), tmp_path)
    assert all(v > 0 for v in cycles.values()), cycles


# Every d = x - zp of int8 x and zp, multipliers from 2^30 to 2^31 - 1 (and 0), the shifts TFLM's
# ADD Prepare gives an input (<= 0) and a few left ones; LeftShift 20.
ADD_IN_CHECK = r"""
#include "CNN_SQ8_Eltwise.c"

int at_sim_core_id(void) { return 0; }
void at_sim_barrier(void) {}

int main(void)
{
    static const int32_t Mults[] = {0, 1 << 30, (1 << 30) + 1, 1518500250, 1686629713, 2147483647, 1234567891,
                     2004318071, 1431655765};
    long checked = 0, bad = 0;
    unsigned m;
    int shift, d, used;

    for (m = 0; m < sizeof(Mults) / sizeof(Mults[0]); m++)
        for (shift = -31; shift <= 2; shift++) {
            at_tflm_rq_t q;
            at_sq8_add_in_t r;

            at_tflm_rq_prep(&q, Mults[m], shift, 0);
            used = at_sq8_add_in_prep(&r, &q, 20);
            if (!used)
                continue;
            for (d = -255; d <= 255; d++) {
                int32_t want = at_tflm_mbqm((int32_t) ((uint32_t) d << 20), Mults[m], shift);

                checked++;
                if (at_sq8_add_in(&r, d) != want && bad++ < 5)
                    printf("M %d shift %d d %d: %d, want %d\n", (int) Mults[m], shift, d,
                           (int) at_sq8_add_in(&r, d), (int) want);
            }
        }
    printf("checked %ld bad %ld\n", checked, bad);
    return bad != 0;
}
"""


def test_add_input_rescale_equals_tflm_mbqm(tmp_path):
    """at_sq8_add_in (d Mh + (d Ml + 2^(S-1)) >> S, then RoundingDivideByPOT) equals at_tflm_mbqm
    (d 2^20, M, shift) on every d in [-255, 255] for the multipliers and shifts where ADD takes it."""
    src = tmp_path / "add_in_check.c"
    src.write_text(ADD_IN_CHECK)
    exe = tmp_path / "add_in_check"
    subprocess.run(["gcc", "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-DAT_SIM_NCORES=8", "-D__EMUL__",
                    f"-I{CNN_KERNELS_DIR}", f"-I{ROOT / 'host_harness' / 'runtime'}", str(src), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout
    checked = int(out.stdout.split("checked ")[1].split()[0])
    assert checked >= 9 * 10 * 511 // 2, out.stdout     # most (M, shift) pairs take the fast form


def _plane_cases() -> list:
    """Depth wise layers on small planes (KerParConvDW_TFLM_SQ8's padded plane and channels-inner
    forms and their choice): widths and heights 1..8, 1..24 channels, strides 1 and 2, SAME and
    VALID, output heights of 1 (no pair of outputs in a column), odd and even; biases near the int32
    limits (the general requantisation), single rounding, near-1 effective scales; L1 budgets that
    make several tiles of lines; a depth multiplier of 2."""
    C = bench_script("gvsoc_sq8_ops").Case
    rng = np.random.default_rng(2026)
    cases = []
    for i in range(28):
        s, pad = (1, 2)[i % 2], ("SAME", "VALID")[(i // 2) % 2]
        lo = 3 if pad == "VALID" else 1
        h, w, cin = int(rng.integers(lo, 9)), int(rng.integers(lo, 9)), int(rng.integers(1, 25))
        cases.append(C(f"plane_{i}", "dw", h=h, w=w, cin=cin, cout=cin, stride=s, padding=pad,
                       act=("NONE", "RELU", "RELU6")[i % 3], in_zp=int(rng.integers(-128, 128)),
                       out_zp=int(rng.integers(-128, 128)), seed=100 + i,
                       bias_bits=(14, 31, 28)[i % 3], rounding="single" if i % 7 == 3 else "double",
                       out_scale=0.0008 if i % 5 == 4 else 0.08))
    cases += [C("plane_h1", "dw", h=3, w=7, cin=16, cout=16, padding="VALID", in_zp=4, seed=140),
              C("plane_h1_same", "dw", h=1, w=8, cin=24, cout=24, in_zp=-9, seed=141),
              C("plane_w1", "dw", h=8, w=1, cin=24, cout=24, in_zp=-100, seed=142),
              C("plane_mult2", "dw", h=7, w=5, cin=6, cout=12, in_zp=17, seed=143),
              C("plane_tiles", "dw", h=8, w=8, cin=24, cout=24, in_zp=-128, seed=144, budget=1400),
              C("plane_tiles_s2", "dw", h=8, w=7, cin=20, cout=20, stride=2, in_zp=3, seed=145, budget=1200),
              C("plane_25x5", "dw", h=25, w=5, cin=24, cout=24, act="RELU", in_zp=-20, seed=146, budget=3000),
              C("plane_tiny_many", "dw", h=4, w=4, cin=264, cout=264, in_zp=-7, seed=147),
              # stride 2's padded plane (with its column, up to AT_DW_PLANE_WORDS): MobileNet's 24x24 -> 12x12 and
              # 12x12 -> 6x6, odd sizes, one output line, a depth multiplier of 2, tiles, limit biases
              C("plane2_24", "dw", h=24, w=24, cin=9, cout=9, stride=2, act="RELU6", in_zp=-128, seed=150),
              C("plane2_12_valid", "dw", h=12, w=13, cin=10, cout=10, stride=2, padding="VALID", in_zp=50,
                seed=151, bias_bits=31),
              C("plane2_odd", "dw", h=17, w=11, cin=5, cout=5, stride=2, in_zp=-3, out_zp=7, seed=152,
                rounding="single"),
              C("plane2_h1", "dw", h=3, w=21, cin=8, cout=8, stride=2, padding="VALID", in_zp=11, seed=153),
              C("plane2_h2", "dw", h=4, w=9, cin=8, cout=8, stride=2, in_zp=-60, seed=154, bias_bits=28),
              C("plane2_mult2", "dw", h=9, w=10, cin=4, cout=8, stride=2, in_zp=17, seed=155),
              C("plane2_tiles", "dw", h=24, w=24, cin=16, cout=16, stride=2, in_zp=-9, seed=156, budget=4000),
              C("plane2_near1", "dw", h=10, w=14, cin=7, cout=7, stride=2, in_zp=1, out_zp=-128, seed=157,
                out_scale=0.0008),
              # planes too large for the stack at stride 1 (the line path): long lines, VALID, a depth
              # multiplier of 2, tiles
              C("band_9x64", "dw", h=9, w=64, cin=5, cout=5, in_zp=-128, seed=160, act="RELU6"),
              C("band_valid", "dw", h=23, w=37, cin=3, cout=3, padding="VALID", in_zp=40, seed=161, bias_bits=31),
              C("band_mult2", "dw", h=13, w=33, cin=2, cout=4, in_zp=-5, seed=162, rounding="single"),
              C("band_tiles", "dw", h=30, w=48, cin=8, cout=8, in_zp=9, seed=163, budget=6000),
              C("band_wide", "dw", h=5, w=125, cin=3, cout=3, in_zp=-1, seed=164, out_scale=0.0008)]
    return cases


@pytest.mark.usefixtures("private_harness_cache")
@needs_gvsoc
@pytest.mark.gvsoc
def test_sq8_dw_small_planes_on_gvsoc_are_bit_exact(tmp_path):
    """The depth wise small-plane sweep: every output equals sq8_tflm's on GVSoC."""
    B = bench_script("gvsoc_sq8_ops")
    cycles = B.run_cases(_plane_cases(), tmp_path)
    assert len(cycles) == len(_plane_cases())
