"""The SQ8 compute calibration's non-GVSoC logic (bench/calibrate_sq8.py): its layers are
bit-exact with numpy on the host simulator, the terms of pulp_open's own Cost= of each SQ8
kernel are valid for that kernel, the convolution's work split in the Cost= grammar is the C's,
and the ranking summary's statistics."""

from __future__ import annotations

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
