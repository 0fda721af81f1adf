"""The "dory" objective (autotiler/tiler/dory.py): DORY's conv tiler rule over our candidates --
its constraints, capacity, exact objective terms, early exit, fallback, and non-conv kernels; one
DORY tiling run bit-exactly on the simulator."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from autotiler import *
from autotiler.generators import CNN_HEADER, LoadCNNLibrary
from autotiler.generators.cnn_conv import CNN_ConvolutionPoolReLU, CNN_PoolReLU
from autotiler.objectives import OBJECTIVES, candidates, solve_options
from autotiler.platforms import get_platform
from autotiler.tiler import dory as D
from autotiler.tiler.geometry import kernel_geometry
from autotiler.tiler.tiling import Choice, build_tiling

D0, D1, T0 = KER_ITER_D0, KER_ITER_D1, KER_ITER_TILE0
GAP8 = get_platform("gap8")


def conv(name, cin, cout, w, h, f=3, s=1, pad=1, oper=KOP_CONV_DP, size=1, pool=False):
    pool_args = (KOP_MAXPOOL, 2, 2, 1, 1, 2, 2, 0) if pool else (KOP_NONE, 0, 0, 0, 0, 0, 0, 0)
    CNN_ConvolutionPoolReLU(name, 0, size, size, size, size, 7, 7, 7, 7, 0, 0, 0, 0, cin, cout, w, h,
                            oper, f, f, 1, 1, s, s, pad, *pool_args, KOP_RELU)


def tiled(l1=64 * 1024, objective="dory", declare=None):
    """{kernel: tiling} of the layers ``declare()`` makes, under ``objective``; and the model."""
    with Model(GAP8) as m:
        SetUsedFilesNames(0, 1, CNN_HEADER)
        SetL1MemorySize(l1)
        SetTilingObjective(objective)
        LoadCNNLibrary()
        declare()
    return dict(m.tilings), m


def at(m, name, sizes: dict, budget=64 * 1024):
    """The tiling of one hand-made choice of a declared kernel."""
    kg = kernel_geometry(m.kernels[name])
    return build_tiling(kg, Choice(tuple(sizes.items())), budget)


def test_registered_and_described():
    assert "dory" in OBJECTIVES and "DORY" in OBJECTIVES["dory"].doc and "36700" in OBJECTIVES["dory"].doc
    assert "not DORY's rule" in OBJECTIVES["max_l1"].doc
    assert D.DORY_L1 == 64000 - 3500 - 7 * 3400 == 36700
    assert D.dory_l1(48000) == 36700 and D.dory_l1(64 * 1024) == 36700 and D.dory_l1(20000) == 20000


@pytest.fixture(scope="module")
def layers():
    def declare():
        conv("C", 16, 32, 40, 40)                        # standard 3x3, 16 -> 32, 40x40
        conv("DWs", 16, 16, 32, 32, oper=KOP_CONV_DW)    # depth wise, input <= 32x32
        conv("DWl", 32, 32, 64, 64, oper=KOP_CONV_DW)    # depth wise, input > 32x32
        conv("Tiny", 4, 8, 8, 8)                         # fits whole
    return tiled(declare=declare)


def test_height_multiple_of_8_preferred_over_more_l1(layers):
    _, m = layers
    t7, t8, t9 = (at(m, "C", {D1: 8, T0: h, D0: 16}) for h in (7, 8, 9))
    assert [D.conv_view(t).h for t in (t7, t8, t9)] == [7, 8, 9]
    assert t7.l1_bytes < t8.l1_bytes < t9.l1_bytes          # similar L1, more with more lines
    assert all(D.fits(t, 64 * 1024) and not D.violations(t) for t in (t7, t8, t9))
    s7, s8, s9 = (D.score(t) for t in (t7, t8, t9))
    # DORY's 2000000 * ((tile_h_out - 1) % 8): graded, 14e6 at a multiple of 8, 0 at 1 mod 8
    border = 20000 * ((39 % 8) % 8) - 20000 * ((39 % 7) % 8)     # 20000 * (((H - 1) % h) % 8), H = 40
    assert s8 - s7 == 2_000_000 + (D.dory_bytes(t8) - D.dory_bytes(t7)) + border
    assert s9 < s7 < s8
    key = OBJECTIVES["dory"].key
    o = replace(solve_options(m, m.kernels["C"]), objective="dory")
    assert key(t8, o) < key(t9, o) and key(t8, o) < key(t7, o)


def test_output_channels_multiple_of_4(layers):
    _, m = layers
    t8, t9 = (at(m, "C", {D1: n, T0: 8, D0: 16}) for n in (8, 9))
    assert t8.l1_bytes < t9.l1_bytes
    # 1000000 * ((tile_n_out - 1) % 4): 3e6 for 8, 0 for 9; 100000 * tile_n_out: 1e5 more for 9
    assert D.score(t8) - D.score(t9) == 3_000_000 - 100_000 - (D.dory_bytes(t9) - D.dory_bytes(t8)) + (
        10000 * ((32 - 1) % 8) + 10000 * (((32 - 1) % 8) % 4) - 10000 * ((32 - 1) % 9) - 10000 * (((32 - 1) % 9) % 4))
    assert D.score(t8) > D.score(t9)


def test_exact_terms_of_one_tiling(layers):
    _, m = layers
    t = at(m, "C", {D1: 8, T0: 8, D0: 16})
    v = D.conv_view(t)
    assert (v.kind, v.n_out, v.n_in, v.h, v.w, v.c_out, v.c_in, v.H, v.W, v.k2) == ("conv", 8, 16, 8, 40, 32, 16, 40,
                                                                                      40, 9)
    boxes = t.arg("In").box_bytes_max + t.arg("Out").box_bytes_max + t.arg("Filter").box_bytes_max
    assert t.arg("Filter").box_bytes_max == 8 * 16 * 9
    total = 32 + 2 * boxes + 2 * 4 * 9 * 16 + 40      # whole bias, db 2, im2col 2*CORES*k*k*n_in, +40
    assert D.dory_bytes(t) == total
    assert D.score(t) == (2_000_000 * 7 + 3_000_000 * 1 + 1_000_000 * 3 + 1_000_000 + total + 100_000 * 8
                          + 10000 * (31 % 8) + 10000 * ((31 % 8) % 4) + 20000 * ((39 % 8) % 8) + 30000 * ((39 % 40) % 2))


def test_input_features_never_split(layers):
    tilings, m = layers
    t = tilings["C"]
    assert t.count(D0) == 1 and D.explain(t, 64 * 1024)["status"] == "dory"
    o = replace(solve_options(m, m.kernels["C"]), objective="dory")
    cands = candidates(m.kernels["C"], o)
    assert any(c.count(D0) > 1 for c in cands)           # the rule excluded some
    split = at(m, "C", {D1: 8, T0: 8, D0: 8})
    assert D.violations(split) and "input features split" in D.violations(split)[0]
    assert D.rank(split, 64 * 1024) == D.VIOLATES
    assert OBJECTIVES["dory"].key(t, o) < OBJECTIVES["dory"].key(split, o)


def test_capacity_is_dorys_l1(layers):
    tilings, m = layers
    for name in ("C", "DWl"):
        t = tilings[name]
        assert t.l1_bytes <= 36700 and D.dory_bytes(t) <= 36700, name
    tall = at(m, "C", {D1: 8, T0: 16, D0: 16})             # DORY's constraint_all over its L1
    assert tall.l1_bytes <= 64 * 1024 and D.dory_bytes(tall) > 36700 and D.rank(tall, 64 * 1024) == D.OVER
    wide = at(m, "C", {D1: 16, T0: 8, D0: 16})             # DORY's sum fits, our real footprint does not
    assert D.dory_bytes(wide) <= 36700 < wide.l1_bytes <= 64 * 1024 and D.rank(wide, 64 * 1024) == D.OVER
    # a model budget below DORY's L1 is the limit
    assert not D.fits(tilings["C"], tilings["C"].l1_bytes - 1)


def test_depthwise(layers):
    tilings, m = layers
    small = tilings["DWs"]
    v = D.conv_view(small)
    assert v.kind == "depthwise" and v.n_in == v.n_out and not v.red_spaces
    assert small.count(T0) == 1                          # a 32x32 input: the whole plane in one tile
    rows = at(m, "DWs", {D0: 16, T0: 8})
    assert rows.count(T0) > 1 and any("32x32" in s for s in D.violations(rows))
    large = tilings["DWl"]
    assert large.count(T0) > 1 and not D.violations(large)   # > 32x32: full-width row tiles are DORY's
    assert D.explain(large, 64 * 1024)["status"] == "dory"
    # depth wise terms: 10000*(n > 7) + 20000*((n-1) % 16) + 10000*(h % 4 == 0) + ... + 1000*w + 1000*h
    t = at(m, "DWl", {D0: 16, T0: 8})
    v = D.conv_view(t)
    H, W, C, h, w, n = v.H, v.W, v.c_out, v.h, v.w, v.n_out
    assert D.score(t) == (10000 * (n > 7) + 20000 * ((n - 1) % 16) + 10000 * (h % 4 == 0) + D.dory_bytes(t)
                          + 1000 * w + 1000 * h + 100 * ((H - 1) % h) + 100 * ((W - 1) % w)
                          + 100 * (((C - 1) % n) > 7) + 100 * (((H - 1) % h) % 4))


def test_early_exit(layers):
    tilings, _ = layers
    t = tilings["Tiny"]
    assert t.promoted and D.explain(t, 64 * 1024)["early_exit"]
    assert tilings["DWs"].promoted and D.rank(tilings["DWs"], 64 * 1024) == D.EARLY_EXIT


def test_fallback_when_no_candidate_meets_the_rule():
    # MNIST's second layer (16-bit, 32 -> 64, 5x5): with every input feature in L1, even 8 output
    # features (the generator's chunk multiple) need 2*8*32*25*2 B of filters + im2col + 5 input
    # lines > 36700 B: no candidate meets DORY's rule
    def declare():
        CNN_ConvolutionPoolReLU("L", 0, 2, 2, 2, 2, 12, 14, 14, 12, 0, 0, 0, 0, 32, 64, 12, 12, KOP_CONV_DP, 5, 5, 1, 1,
                                1, 1, 0, KOP_MAXPOOL, 2, 2, 1, 1, 2, 2, 0, KOP_RELU)
    tilings, m = tiled(48000, declare=declare)
    t = tilings["L"]
    e = D.explain(t, 48000)
    assert e["status"] == "fallback" and "input features split" in e["reason"]
    assert D.rank(t, 48000) == D.VIOLATES and t.l1_bytes <= 36700      # DORY's capacity still holds
    o = replace(solve_options(m, m.kernels["L"]), objective="dory")
    assert all(D.rank(c, 48000) >= D.VIOLATES for c in candidates(m.kernels["L"], o))


def test_not_conv_maximises_l1():
    def declare():
        CNN_PoolReLU("P", 0, 1, 1, 7, 7, 0, 0, 32, 32, 64, 64, KOP_MAXPOOL, 2, 2, 1, 1, 2, 2, 0, KOP_NONE)
    dory, _ = tiled(16 * 1024, declare=declare)
    most, _ = tiled(16 * 1024, objective="max_l1", declare=declare)
    assert D.conv_view(dory["P"]) is None and D.explain(dory["P"], 16 * 1024)["status"] == "not conv"
    assert dory["P"].l1_bytes == most["P"].l1_bytes


@pytest.mark.usefixtures("private_harness_cache")
def test_dory_tilings_run_bit_exact(tmp_path):
    spec = importlib.util.spec_from_file_location("cnn_baselines", Path(__file__).parents[1] / "bench" /
                                                  "cnn_baselines.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench        # (its dataclasses look their module up)
    spec.loader.exec_module(bench)
    layers = bench.mnist_layers()[:1] + [bench._conv("DW", 1, 1, 1, 1, 7, 7, 7, 7, 0, 0, 0, 0, 16, 16, 40, 40,
                                                     KOP_CONV_DW, 3, 3, 1, 1, 1, 1, 1, KOP_NONE, 0, 0, 0, 0, 0, 0, 0,
                                                     KOP_RELU)]
    prog, tilings, _ = bench.build(tmp_path, layers, 48000, "dory", GAP8)
    for i, layer in enumerate(layers):
        assert tilings[layer.name].iterations > 1
        c = bench.run_layer(prog, layer, seed=i)          # raises on any output differing from the reference
        assert c["cycles"] > 0
