"""The SQ8 compute calibration's non-GVSoC logic (bench/calibrate_sq8.py): its layers are
bit-exact with numpy on the host simulator, the terms of pulp_open's own Cost= of each SQ8
kernel are valid for that kernel, the convolution's work split in the Cost= grammar is the C's,
and the ranking summary's statistics."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import host_harness
from autotiler import Model
from autotiler.codegen import write_files
from autotiler.generators import CNN_KERNELS_DIR
from autotiler.generators.sq8_library import LoadCNN_SQ8_Library
from autotiler.platforms import ComputeScale, get_platform
from autotiler.schedule.cost import check_platform_cost, cost_to_expr
from autotiler.schedule.expr import Const

from .conftest import bench_script

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import calibrate_sq8 as S  # noqa: E402

pytestmark = pytest.mark.usefixtures("private_harness_cache")


def _eval(text: str, ncores: int = 8, **values) -> int:
    """A Cost= expression's value, folded as the schedule builder folds it (C's arithmetic)."""
    return cost_to_expr(text.replace("ncores", str(ncores)), {k: Const(v) for k, v in values.items()}).value


def test_shape_terms_are_valid_costs_of_their_kernels():
    plat = get_platform("pulp_open")
    with Model(plat) as m:
        LoadCNN_SQ8_Library()
        for kernel, terms in S.SHAPES.items():
            for term in terms:
                check_platform_cost(plat.with_overrides(compute={kernel: ComputeScale(100, 0, term)}), m.libs[kernel])


def test_pulp_open_sq8_entries_name_the_formals_of_their_kernels():
    """pulp_open's own Cost= of each SQ8 kernel it models reads only that kernel's scalar formals
    (tests/test_compute_shape.py checks the CNN library's and cnn_conv_v3's)."""
    plat = get_platform("pulp_open")
    with Model(plat) as m:
        LoadCNN_SQ8_Library()
        shaped = [k for k, s in plat.compute.items() if s.cost and k in m.libs]
        assert set(S.SHAPES) <= set(shaped)
        for kernel in shaped:
            check_platform_cost(plat, m.libs[kernel])


def _c_share(chunk: int, cores: int = 8) -> tuple:
    """CNN_SQ8_Conv.c's at_sq8_conv_share: (groups, blocks of the busiest group)."""
    blocks, groups = (chunk + 3) // 4, 1
    while groups * 2 <= cores and groups * 2 <= blocks:
        groups *= 2
    return groups, -(-blocks // groups)


@pytest.mark.parametrize("chunk", [1, 3, 4, 5, 8, 9, 12, 16, 17, 28, 32, 33, 64, 100, 256])
def test_convolution_split_is_the_c_one(chunk):
    groups, blocks = _c_share(chunk)
    assert _eval(S._G, Chunk=chunk) == groups
    assert _eval(S._BLK, Chunk=chunk) == blocks
    for ho, wo in ((1, 1), (5, 7), (24, 24)):
        members = 8 // groups
        assert _eval(S._PIX, Chunk=chunk, Ho=ho, Wo=wo) == -(-ho * wo // members)


def _c_define(source: str, name: str) -> int:
    """The value of ``#define name N`` in a kernel source of cnn_kernels/."""
    text = (CNN_KERNELS_DIR / source).read_text(encoding="utf-8")
    return int(re.search(rf"^#define {name} (\d+)$", text, re.M).group(1))


@pytest.mark.parametrize("wo, ho, feat", [(6, 6, 128), (6, 6, 64), (6, 6, 63), (7, 6, 128), (1, 1, 512), (3, 3, 256),
                                          (12, 3, 200), (37, 1, 128), (16, 16, 16), (2, 2, 8)])
def test_depth_wise_small_plane_test_is_the_c_one(wo, ho, feat):
    """CNN_SQ8_ConvDW.c's channels-inner form: Wo Ho <= AT_DW_SMALL and OutFeat >=
    AT_DW_SMALL_CHUNK x the cores, both read from the C (the Cost= must follow the kernel)."""
    small, chunk = _c_define("CNN_SQ8_ConvDW.c", "AT_DW_SMALL"), _c_define("CNN_SQ8_ConvDW.c", "AT_DW_SMALL_CHUNK")
    assert _eval(S._DW_SMALL, Wo=wo, Ho=ho, OutFeat=feat) == int(wo * ho <= small and feat >= chunk * 8)


def test_layers_are_bit_exact_on_the_host_simulator(tmp_path):
    """A few of the calibration's layers (one per kind) against numpy, as the calibration checks
    every one of them on both back-ends."""
    plat = get_platform("pulp_open")
    kinds = {layer.label.split()[0]: layer for layer in reversed(S.LAYERS)}   # the first of each kind
    picks = [kinds[k] for k in ("dw", "linear", "avgpool", "add", "mean", "softmax")] + [S.LAYERS[7]]
    m, files, calls, sources, includes = S.sq8_case(plat, 20000, np.random.default_rng(0), picks)
    write_files(files, str(tmp_path / "gen"))
    prog = host_harness.build(tmp_path / "gen", sources=sources, include_dirs=includes, platform=plat)
    assert len(calls) == len(picks)
    for c in calls:
        args = {k: v.copy() for k, v in c.args.items()}
        counters = prog.call(c.kernel, **args)
        np.testing.assert_array_equal(args["Out"], c.expected["Out"], err_msg=c.label)
        assert counters["cycles"] == m.tilings[c.kernel].predicted.cycles, c.label


def test_ranking_summary():
    rows = [{"predicted": p, "gvsoc": g, "chosen": i == 0}
            for i, (p, g) in enumerate([(100, 210), (120, 200), (150, 300), (200, 400)])]
    s = S.ranking_summary({"rows": rows})
    assert s["pairs"] == 6 and s["agree"] == 5
    assert s["spearman"] == pytest.approx(0.8)
    assert s["chosen_vs_best"] == pytest.approx(0.05)
    assert S._spread(list(range(20)), 8) == [0, 1, 2, 3, 7, 11, 15, 19]


def _c_dw_lines(feat: int, ho: int, h: int, wo: int, s: int, pad_top: int, cores: int = 8) -> list:
    """CNN_SQ8_ConvDW.c's lines form (KerParConvDW_TFLM_SQ8's CNN_Chunk of the (channel, line)
    units, at_dw_lines3x3's steps): per core (units, channel segments, line pairs, single lines)."""
    seg = _c_define("CNN_SQ8_ConvDW.c", "AT_DW_SEG")
    units, chunk = feat * ho, -(-feat * ho // cores)
    two = s == 1 and 2 * wo <= seg

    def inside(y):
        return y * s - pad_top >= 0 and y * s - pad_top + 2 < h

    out = []
    for core in range(cores):
        first, last = min(core * chunk, units), min(core * chunk + chunk, units)
        segs = pairs = singles = 0
        u, c, oy = first, first // ho, first % ho
        while u < last:
            n = min(ho - oy, last - u)
            segs += 1
            y = oy
            while y < oy + n:
                if inside(y) and two and y + 1 < oy + n and inside(y + 1):
                    pairs, y = pairs + 1, y + 2
                else:
                    singles, y = singles + 1, y + 1
            u, c, oy = u + n, c + 1, 0
        out.append((last - first, segs, pairs, singles))
    return out


@pytest.mark.parametrize("feat, ho, wo, s, pads", [(8, 48, 48, 1, (1, 1)), (32, 24, 24, 1, (1, 1)), (64, 25, 5, 1, (1, 1)),
                                                   (16, 10, 48, 1, (1, 0)), (16, 10, 48, 1, (0, 1)), (16, 9, 48, 1, (0, 0)),
                                                   (8, 12, 72, 1, (1, 1)), (16, 24, 24, 2, (0, 1)), (64, 6, 6, 2, (0, 1)),
                                                   (24, 7, 5, 1, (1, 0)), (8, 1, 20, 1, (1, 1))])
def test_depth_wise_lines_work_is_the_c_one(feat, ho, wo, s, pads):
    """The depth wise lines form's terms (calibrate_sq8._UNITS, _DW_SEGS, _DW_PAIRS and the single
    lines) count the busiest core's work as the C does where each core has whole channels (the
    networks' layers); AT_DW_SEG (the pairs' condition 2 Wo <= AT_DW_SEG) is read from the C."""
    h = (ho - 1) * s + 3 - pads[0] - pads[1]
    c = max(_c_dw_lines(feat, ho, h, wo, s, pads[0]))
    values = dict(OutFeat=feat, Ho=ho, H=h, Wo=wo, Sx=s, Sy=s)
    pairs = _eval(S._DW_PAIRS, **values)
    assert (_eval(S._UNITS, **values), _eval(S._DW_SEGS, **values), pairs) == c[:3]
    assert _eval(S._UNITS, **values) - 2 * pairs == c[3]


@pytest.mark.parametrize("wo", [1, 63, 64, 65, 128])
def test_depth_wise_pairs_condition_is_the_c_one(wo):
    seg = _c_define("CNN_SQ8_ConvDW.c", "AT_DW_SEG")
    assert _eval(S._DW_TWO, Wo=wo, Sx=1) == int(2 * wo <= seg)
    assert _eval(S._DW_TWO, Wo=wo, Sx=2) == 0


@pytest.mark.parametrize("feat", [64, 128, 255, 256, 512, 1024])
def test_depth_wise_small_plane_runs_are_the_c_ones(feat):
    """The channels-inner form's runs of AT_DW_RUN channels (read from the C) per core."""
    run = _c_define("CNN_SQ8_ConvDW.c", "AT_DW_RUN")
    chans = -(-feat // 8)
    assert _eval(S._DW_RUNS, OutFeat=feat) == -(-chans // run)


def _c_dw_plane_fits(wo: int, ho: int, s: int) -> bool:
    """CNN_SQ8_ConvDW.c's at_dw_plane_fits, its bounds read from the C."""
    plane, words_max = _c_define("CNN_SQ8_ConvDW.c", "AT_DW_PLANE"), _c_define("CNN_SQ8_ConvDW.c", "AT_DW_PLANE_WORDS")
    slack = _c_define("CNN_SQ8_ConvDW.c", "AT_DW_PLANE_SLACK")
    wb, hb = s * (wo - 1) + 3, s * (ho - 1) + 3
    return s <= 2 and not (s == 1 and wb * hb > plane) and ((wb * hb + slack + 3) >> 2) + ho + 2 <= words_max


@pytest.mark.parametrize("wo, ho, s", [(5, 25, 1), (6, 6, 1), (12, 12, 1), (14, 14, 1), (13, 14, 1), (30, 6, 1),
                                       (62, 2, 1), (6, 6, 2), (3, 3, 2), (1, 1, 1), (4, 4, 1), (3, 3, 1), (4, 5, 1),
                                       (12, 12, 2), (24, 24, 2), (12, 13, 2), (14, 13, 2), (48, 48, 1), (32, 7, 1),
                                       (100, 8, 1), (64, 2, 1), (40, 40, 1)])
def test_depth_wise_forms_are_the_c_ones(wo, ho, s):
    """CNN_SQ8_ConvDW.c's forms, in its order: the padded plane at strides 1 and 2
    (at_dw_plane_fits, but not a plane of at most AT_DW_TINY outputs of the channels-inner form),
    the channels inner, the lines; every bound read from the C."""
    tiny = _c_define("CNN_SQ8_ConvDW.c", "AT_DW_TINY")
    fits = _c_dw_plane_fits(wo, ho, s)
    for feat in (16, 64, 128):
        values = dict(Wo=wo, Ho=ho, Sx=s, Sy=s, OutFeat=feat)
        small = _eval(S._DW_SMALL, **values)
        plane = int(fits and not (small and wo * ho <= tiny))
        assert (_eval(S._DW_PLANE1, **values), _eval(S._DW_PLANE2, **values)) == (plane * (s == 1), plane * (s == 2))
        assert _eval(S._DW_SMALL_TAKEN, **values) == (1 - plane) * small
        assert _eval(S._DW_LINES, **values) == (1 - plane) * (1 - small)


def _c_inner(out: int, size: int, f: int, s: int, d: int, pad: int) -> int:
    """CNN_SQ8_Conv.c's at_sq8_conv_inner: the count of interior outputs [A, B)."""
    last = size - 1 - (f - 1) * d + pad
    a = (pad + s - 1) // s
    b = 0 if last < 0 else min(last // s + 1, out)
    return max(b, a) - a


@pytest.mark.parametrize("w, fx, s, pad", [(16, 3, 1, 1), (16, 3, 2, 0), (24, 3, 2, 0), (96, 3, 2, 0), (10, 4, 2, 1),
                                           (20, 5, 1, 2), (32, 1, 2, 0), (7, 1, 1, 0), (5, 3, 1, 1)])
def test_convolution_interior_run_is_the_c_one(w, fx, s, pad):
    """The interior pixels of a line (calibrate_sq8._IX: its pairs, and its odd one left over)
    are at_sq8_conv_inner's [OxA, OxB) of a tile whose columns are the whole line (SAME: Wo =
    ceil(W / S), the left pad as the generator gives it)."""
    wo = -(-w // s)
    assert _eval(S._IX, W=w, Fx=fx, Dx=1, Sx=s, PadLeft=pad, Wo=wo) == _c_inner(wo, w, fx, s, 1, pad)


def _calibrate():
    return bench_script("calibrate")


def test_sq8_only_names_layer_kinds():
    cal = _calibrate()
    assert cal.sq8_kinds("dw, conv") == {"dw", "conv"}
    assert cal.sq8_kinds(None) is None
    with pytest.raises(SystemExit, match=r"--sq8-only pool: not a layer kind \(one of conv, dw, linear"):
        cal.sq8_kinds("conv,pool")


def test_sq8_only_keeps_the_other_kinds_rows(tmp_path):
    """--fit-sq8 --sq8-only runs some kinds; the other kinds' rows come from the earlier file."""
    rows = [{"label": "dw 8x8x64->64 3x3/1", "kernel": "L0_16000"}, {"label": "linear 64->12 zp -128", "kernel": "L1_16000"}]
    path = tmp_path / "sq8.json"
    path.write_text(json.dumps({"kernels": "abc", "rows": rows}))
    kept = _calibrate().kept_rows(path, {"dw", "conv"})
    assert [r["label"] for r in kept["rows"]] == [rows[1]["label"]]
    assert kept["kernels"] == "abc" and kept["rows"][0]["kernels"] == "abc"
    assert _calibrate().kept_rows(tmp_path / "none.json", {"dw"}) is None


def test_sq8_case_of_some_kinds_keeps_the_layers_names():
    """A layer keeps its index in LAYERS as its name (a --refit of the file finds it)."""
    plat = get_platform("pulp_open")
    calls = S.sq8_case(plat, 16000, np.random.default_rng(0), kinds={"softmax"})[2]
    want = [f"L{i}_16000" for i, layer in enumerate(S.LAYERS) if S.kind(layer) == "softmax"]
    assert [c.kernel for c in calls] == want and len(want) > 2


def test_fitted_calls_are_the_first_for_kernels_that_run_cold():
    """The depth wise convolution (always after another kernel in a graph) fits its first calls;
    the regular one the midpoint of its first and warm calls (--calls overrides both)."""
    row = {"forks_cold": {"KerParConvDW_TFLM_SQ8": [2, 1000, 7], "KerParConv_TFLM_SQ8": [1, 600, 5]},
           "forks_warm": {"KerParConvDW_TFLM_SQ8": [2, 800, 7], "KerParConv_TFLM_SQ8": [1, 400, 5]}}
    cal = _calibrate()
    assert "KerParConvDW_TFLM_SQ8" in S.COLD and "KerParConv_TFLM_SQ8" not in S.COLD
    assert cal.calls_forks(row, None) == {"KerParConvDW_TFLM_SQ8": [2, 1000, 7], "KerParConv_TFLM_SQ8": [1, 500, 5]}
    assert cal.calls_forks(row, "warm") == {"KerParConvDW_TFLM_SQ8": [2, 800, 7], "KerParConv_TFLM_SQ8": [1, 400, 5]}


@pytest.mark.parametrize("infeat, group, f, s", [(128, 128, (1, 1), 1), (256, 256, (1, 1), 1), (64, 64, (1, 1), 1),
                                                  (130, 130, (1, 1), 1), (256, 128, (1, 1), 1), (128, 128, (1, 1), 2),
                                                  (128, 128, (3, 3), 1), (1, 1, (10, 4), 2), (1, 1, (8, 4), 2),
                                                  (4, 4, (3, 1), 1), (2, 2, (3, 2), 1), (1, 1, (40, 4), 1),
                                                  (1, 1, (5, 5), 1), (3, 3, (3, 3), 2), (2, 1, (10, 4), 1)])
def test_convolution_quads_and_columns_are_the_c_ones(infeat, group, f, s):
    """CNN_SQ8_Conv.c's block forms that take whole layers: the quads (at_sq8_conv_block4_flat:
    ungrouped 1x1 stride 1, filters of whole words from AT_SQ8_CONV_QUAD_MIN bytes) and the columns
    (at_sq8_conv_cols_apply: ungrouped, filter rows of one word, filters within AT_SQ8_CONV_COL_MAX),
    their bounds read from the C."""
    quad_min, col_max = _c_define("CNN_SQ8_Conv.c", "AT_SQ8_CONV_QUAD_MIN"), _c_define("CNN_SQ8_Conv.c", "AT_SQ8_CONV_COL_MAX")
    fy, fx = f
    size, ungrouped = fy * fx * group, group == infeat
    values = dict(InFeat=infeat, GroupIn=group, Fx=fx, Fy=fy, Sx=s, Sy=s)
    quad = fy == fx == s == 1 and ungrouped and size % 4 == 0 and size >= quad_min
    cols = ungrouped and fx * group == 4 and size <= col_max
    assert _eval(S._QUAD, **values) == int(quad)
    assert _eval(S._COLS, **values) == int(cols)


def _top_level_sum(term: str) -> bool:
    """Does ``term`` add or subtract outside parentheses (a coefficient c*term would then scale its
    first part only: the fitted Cost= writes c*term, model.cost.LinearCost.text)."""
    depth = 0
    for i, ch in enumerate(term):
        depth += (ch == "(") - (ch == ")")
        if ch in "+-" and depth == 0 and i > 0:
            return True
    return False


def test_shape_terms_are_products():
    bad = [(k, t) for k, terms in S.SHAPES.items() for t in terms if _top_level_sum(t)]
    assert not bad
