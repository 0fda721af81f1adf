"""The SQ8 (TFLM arithmetic) depth wise, fully connected, pooling and ADD basic kernels on GVSoC's
pulp-open cluster (KerParConvDW_TFLM_SQ8, KerParLinear_TFLM_SQ8, KerParMax/AvgPool_TFLM_SQ8,
KerParAdd_TFLM_SQ8: their Xpulpv2 forms, p.mac, pv.sdotusp.b, misaligned word loads), bit-exact
with the numpy reference sq8_tflm over a bounded sweep: depth wise 3x3 of stride 1 and 2, SAME and
VALID, a depth multiplier of 2, channel counts that are not multiples of 4, odd widths, tiles of a
few lines, a 5x3 filter (the tap-by-tap form); dense sizes that are not multiples of 4 (misaligned
filter rows), with the input zero point -128 (no weight sums) and others; max and average windows,
a global average over one output line; ADD with every zero point moved.

One model, one GVSoC build, one call per layer (bench/gvsoc_sq8_ops.py's Case and run_cases, which
the benchmark uses too). Marked ``gvsoc`` and skipped when GVSOC_HOME is not set, as
tests/test_gvsoc.py.
"""

from __future__ import annotations

import pytest

from host_harness import gvsoc

from .conftest import bench_script

needs_gvsoc = pytest.mark.skipif(not gvsoc.available(), reason="GVSoC not installed (GVSOC_HOME unset): "
                                 + gvsoc.INSTALL_HINT)
pytestmark = [pytest.mark.usefixtures("private_harness_cache"), needs_gvsoc, pytest.mark.gvsoc]


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
              (12, 45, 8, 8, (3, 3), 1, "SAME", "RELU6", -128, None),   # segments of 32 outputs + 13
              (25, 5, 64, 64, (3, 3), 1, "SAME", "RELU", -20, 3000),    # tiles of a few lines
              (9, 7, 5, 5, (5, 3), 1, "SAME", "NONE", 9, None),         # any filter: tap by tap
          ])]
    fc = [C(f"fc_{i}", "fc", cin=cin, cout=cout, act=act, in_zp=zp, seed=20 + i)
          for i, (cin, cout, act, zp) in enumerate([
              (13, 7, "NONE", 5), (37, 9, "RELU", -128), (64, 12, "NONE", 0), (3, 5, "RELU6", 127),
              (130, 21, "NONE", -128), (640, 24, "RELU", 3)])]
    pool = [C("pool_max_2x2", "maxpool", h=9, w=7, cin=5, f=(2, 2), stride=2, padding="VALID", seed=30),
            C("pool_max_3x3", "maxpool", h=7, w=9, cin=6, f=(3, 3), stride=2, padding="SAME", act="RELU", seed=31),
            C("pool_avg_3x3", "avgpool", h=7, w=5, cin=7, f=(3, 3), stride=1, padding="SAME", seed=32),
            C("pool_avg_global", "avgpool", h=25, w=5, cin=64, f=(25, 5), stride=25, padding="VALID", seed=33)]
    add = [C("add_relu", "add", h=5, w=9, cin=7, act="RELU", in_zp=100, out_zp=-9, seed=40),
           C("add_none", "add", h=4, w=4, cin=13, in_zp=-128, out_zp=0, seed=41)]
    return dw + fc + pool + add


def test_sq8_ops_on_gvsoc_are_bit_exact(tmp_path):
    """Every layer's GVSoC output equals sq8_tflm's (run_cases raises WrongOutput otherwise)."""
    B = bench_script("gvsoc_sq8_ops")
    cycles = B.run_cases(_cases(), tmp_path)
    assert all(v > 0 for v in cycles.values()), cycles
