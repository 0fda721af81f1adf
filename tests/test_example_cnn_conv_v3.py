"""examples/cnn_conv_v3 (CNN_ConvolutionPoolReLU form, 16-bit DP): the three spaces iterate at the
example's budget, bit-exact results from barely fitting budgets to everything fitting (with and
without padding, strides 1 and 2, square and non-square filters), simulated cycles equal to the
predicted ones, and the filter's KER_ARG_LOADEDPARTILE_SIZE with and without partial promotion."""

import re

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.platforms import get_platform

from .conftest import EXAMPLES, load_module

HERE = EXAMPLES / "cnn_conv_v3"
MODEL = load_module(HERE / "model.py", "model_cnn_conv_v3_tests")
REF = load_module(HERE / "reference.py", "reference_cnn_conv_v3_tests")
# A GAP8 with more L1 and L2 than the chip, so that a whole layer can fit (the tiler is given
# budgets above the chip's 64 KB of L1 only with this platform)
PLATFORM = get_platform("gap8", l1_size=256 * 1024, l2_size=2 * 1024 * 1024)
D0, D1, T0 = KER_ITER_D0, KER_ITER_D1, KER_ITER_TILE0

# Layers (model.declare overrides of the example's CONFIG) and the smallest L1 budget each fits in
# (feature chunks of one when nothing else fits: PrefDiv is a preference)
LAYERS = {
    # the example: 16 -> 32 features, 24x24, 3x3, stride 1, "same" padding, ReLU
    "s1_3x3_pad": ({}, 528),
    # 5x5 without padding (outputs 16x14), no ReLU, 10 output features (a last D1 chunk of 2 when chunked)
    "s1_5x5_valid": (dict(InFeat=6, OutFeat=10, Width=20, Height=18, Fcx=5, Fcy=5, ConvPad=0,
                          ReLUOper=MODEL.KOP_NONE), 640),
    # stride 2 with padding, odd sizes (25x23 -> 13x12)
    "s2_3x3_pad": (dict(InFeat=8, OutFeat=12, Width=25, Height=23, Scx=2, Scy=2, ConvPad=1), 460),
    # stride 2 without padding: only 23 of the 24 columns and 21 of the 22 lines are used (10x9)
    "s2_5x5_valid": (dict(InFeat=8, OutFeat=12, Width=24, Height=22, Fcx=5, Fcy=5, Scx=2, Scy=2, ConvPad=0,
                          ReLUOper=MODEL.KOP_NONE), 672),
    # 3 wide x 5 high filter, strides 2 x 1, padding 1 left and 2 top and bottom (26x17 -> 13x17)
    "s2x1_3x5_pad": (dict(InFeat=4, OutFeat=9, Width=26, Height=17, Fcx=3, Fcy=5, Scx=2, Scy=1, ConvPad=1), 1116),
}
EVERYTHING_FITS = 200_000  # more than In + Filter + Bias + Out + the int32 ConvOut of any layer above


def generate_layer(out_dir, l1, partial=True, objective=None, **conv):
    """(tiling, generated C text) of the layer, files written to out_dir."""
    with Model(PLATFORM) as m:
        if not partial:
            AT_SetKernelCtrl(AT_KERNEL_PARTIAL_BUFFER_PROMOTE, AT_OPT_OFF)
        if objective:
            SetTilingObjective(objective)
        tiling = MODEL.declare(l1, **conv)
        files = generate(m)
    write_files(files, str(out_dir))
    return tiling, files["ConvV3Kernels.c"]


def run_layer(gen_dir, tiling, seed=1, make_args=None, sanitize=False, **conv):
    """Build and run the generated layer on the simulated chip: bit-exact with the reference and
    simulated cycles equal to the tiling's predicted cycles. Returns the counters."""
    prog = host_harness.build(gen_dir, sources=[HERE / s for s in REF.SOURCES], include_dirs=[HERE],
                              platform=PLATFORM, sanitize=sanitize)
    args = (make_args or REF.make_args)(np.random.default_rng(seed), **conv)
    expected = REF.expected(args, **conv)
    counters = prog.call(REF.KERNEL, **args)
    np.testing.assert_array_equal(args["Out"], expected["Out"])
    assert counters["cycles"] == tiling.predicted.cycles
    assert counters["peak_l1"] == tiling.l1_bytes <= tiling.budget
    return counters


def test_every_space_iterates_at_the_example_budget():
    with Model():
        t = MODEL.declare()
    assert t.budget == MODEL.L1_BUDGET
    assert t.count(D1) > 1 and t.count(T0) > 1 and t.count(D0) > 1, t.describe()
    assert t.l1_bytes <= MODEL.L1_BUDGET
    # the accumulator is one tile of the output chunk, never moved
    conv_out = t.arg("ConvOut")
    assert conv_out.role == "onetile" and not conv_out.moves


def test_example_predicted_cycles_are_the_simulated_ones(tmp_path):
    t, _ = generate_layer(tmp_path, MODEL.L1_BUDGET)
    counters = run_layer(tmp_path, t)
    assert counters["cycles"] == t.predicted.cycles


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_smallest_budget_is_barely_fitting(layer):
    conv, smallest = LAYERS[layer]
    with Model():
        t = MODEL.declare(smallest, **conv)
    assert t.l1_bytes == smallest
    with Model() as m:
        AT_SetKernelCtrl(AT_KERNEL_NOSOLUTION_ERROR, AT_OPT_OFF)
        assert MODEL.declare(smallest - 4, **conv) is None
        assert "no tiling fits" in m.unsolved[MODEL.NAME].message


BUDGETS = [
    ("s1_3x3_pad", None), ("s1_3x3_pad", 4000), ("s1_3x3_pad", 9600), ("s1_3x3_pad", 20000),
    ("s1_3x3_pad", EVERYTHING_FITS),
    ("s1_5x5_valid", None), ("s1_5x5_valid", 9600), ("s1_5x5_valid", EVERYTHING_FITS),
    ("s2_3x3_pad", None), ("s2_3x3_pad", EVERYTHING_FITS),
    ("s2_5x5_valid", None), ("s2_5x5_valid", EVERYTHING_FITS),
    ("s2x1_3x5_pad", None), ("s2x1_3x5_pad", 9600), ("s2x1_3x5_pad", EVERYTHING_FITS),
]


@pytest.mark.parametrize("layer,l1", BUDGETS, ids=[f"{n}-{b or 'smallest'}" for n, b in BUDGETS])
def test_bit_exact_at_l1_budgets(tmp_path, layer, l1):
    conv, smallest = LAYERS[layer]
    t, _ = generate_layer(tmp_path, l1 or smallest, **conv)
    run_layer(tmp_path, t, **conv)


@pytest.mark.parametrize("layer", ["s1_3x3_pad", "s2_3x3_pad", "s2x1_3x5_pad", "s2_5x5_valid"])
def test_everything_promoted(tmp_path, layer):
    """The original's objective (largest tile that fits) at a budget the whole layer fits in:
    one iteration of every space, every argument a single L1 buffer."""
    conv, _ = LAYERS[layer]
    t, code = generate_layer(tmp_path, EVERYTHING_FITS, objective="original", **conv)
    assert t.promoted and t.iterations == 1
    assert _field(code, "TotalInFeatures") == _field(code, "InFeatures") == [str(conv.get("InFeat", MODEL.IN_FEAT))]
    run_layer(tmp_path, t, **conv)


@pytest.mark.slow
@pytest.mark.parametrize("layer", ["s2_5x5_valid", "s2x1_3x5_pad"])
def test_smallest_budget_under_sanitizers(tmp_path, layer):
    conv, smallest = LAYERS[layer]
    t, _ = generate_layer(tmp_path, smallest, **conv)
    run_layer(tmp_path, t, sanitize=True, **conv)


@pytest.mark.parametrize("layer,l1", [("s2_3x3_pad", 2040), ("s2_3x3_pad", 4000), ("s2_5x5_valid", 3232),
                                      ("s2_5x5_valid", 6000)])
def test_stride_2_in_several_tiles(tmp_path, layer, l1):
    """The In tile constraint of the original (PreferedTileSize = Scy) holds on the step of the
    tiles (odd tiles of 2k + 1 lines for a 3x3 stride-2 layer), so stride-2 layers tile along T0;
    the geometry of stride-2 tiles (odd overlaps, top padding on the first tile only) is exercised."""
    conv, _ = LAYERS[layer]
    t, _ = generate_layer(tmp_path, l1, **conv)
    assert t.count(T0) > 1, t.describe()
    assert t.arg("In").step % 2 == 0
    run_layer(tmp_path, t, **conv)


def _field(code: str, name: str) -> list:
    return re.findall(rf"KerArg1->{name} = \(.*?\) \((.*)\);", code)


# Filter promoted over D0 (partial promotion) or not, with equal D0 chunks or a smaller last one.
# The objective is given explicitly: 'traffic' promotes the filters whenever that saves traffic
# and fits, 'original' takes the largest tiles; the default (time) objective may choose either.
LOADED = {
    "promoted": (dict(), 9600, "traffic", True, False),
    "promoted_remainder": (dict(), 20000, "traffic", True, True),
    "moving": (dict(), 9600, "traffic", False, False),
    "moving_remainder": (dict(InFeat=10, OutFeat=16, Width=16, Height=16), 3000, "original", False, True),
}


@pytest.mark.parametrize("case", sorted(LOADED))
def test_filter_loaded_partile_size(tmp_path, case):
    """KER_ARG_LOADEDPARTILE_SIZE of Filter along D0 (the convolution's TotalInFeatures, its
    filter row stride per output feature): InFeat when the filters of the output chunk stay in L1
    over all the input chunks (the filter pointer then moves inside that block), the current
    chunk's size when they move with every D0 chunk (AT_KERNEL_PARTIAL_BUFFER_PROMOTE off)."""
    conv, l1, objective, promoted, remainder = LOADED[case]
    t, code = generate_layer(tmp_path, l1, partial=promoted, objective=objective, **conv)
    f, d0 = t.arg("Filter"), t.loop(D0)
    assert d0.count > 1 and (d0.last != d0.std) == remainder, t.describe()
    chunk = f"(D0Ind=={d0.count - 1})?{d0.last}:{d0.std}" if remainder else f"{d0.std}"
    assert _field(code, "InFeatures") == [chunk]
    if promoted:
        assert ("Filter", D0) in t.choice.partial
        assert f.role == "partial" and f.level in (D1, None) and f.dim(D0).resident  # never moved along D0
        assert _field(code, "TotalInFeatures") == [str(d0.dim)]
        item = conv.get("Fcx", MODEL.FCX) * conv.get("Fcy", MODEL.FCY) * 2
        assert f"D0Ind*{d0.std * item}" in _field(code, "Filter")[0]
    else:
        assert not t.choice.partial
        assert f.level == D0 and not f.dim(D0).resident
        assert _field(code, "TotalInFeatures") == [chunk]
    run_layer(tmp_path, t, **conv)


def test_int32_accumulator_wraps_and_norm_zero(tmp_path):
    """Full-range int16 data: the 32-bit accumulator wraps around (two's complement) and, with
    every Q at 0, the reduction neither shifts nor rounds -- only clamps."""
    conv = dict(InFeat=8, OutFeat=8, Width=12, Height=10, In_Q=0, Filter_Q=0, Bias_Q=0, Out_Q=0,
                ReLUOper=MODEL.KOP_NONE)

    def extreme_args(rng, **c):
        args = REF.make_args(rng, **c)
        for name in ("In", "Filter", "Bias"):
            args[name] = rng.choice(np.array([-32768, -32767, 32767], dtype=np.int16), size=args[name].shape)
        return args

    t, _ = generate_layer(tmp_path, 4000, **conv)
    assert t.count(T0) > 1
    run_layer(tmp_path, t, make_args=extreme_args, **conv)
    # the accumulators do leave the int32 range
    acc = REF.accumulator(extreme_args(np.random.default_rng(1), **conv), **conv)
    assert np.abs(acc).max() >= 2**31


def test_relun_clamps_at_n_in_out_q(tmp_path):
    """KOP_RELUN: results in [0, ReluN << Out_Q] (6 in Q12 = 24576)."""
    conv = dict(InFeat=4, OutFeat=8, Width=16, Height=12, ReLUOper=MODEL.KOP_RELUN, ReluN=6)
    t, code = generate_layer(tmp_path, 6000, **conv)
    assert "KerArg2->UB = (int) (24576);" in code
    args = REF.make_args(np.random.default_rng(4), **conv)
    assert (REF.expected(args, **conv)["Out"] == 24576).any()
    run_layer(tmp_path, t, seed=4, **conv)
