"""A platform's own Cost= of a basic kernel (``ComputeScale.cost``): it replaces the library's
Cost= in the generated code's AT_SIM_COMPUTE, the host simulator, the predictor and the tiler's
estimate alike; it is checked (grammar when the platform is built, names when a user kernel
calls the basic kernel); and bench/calibrate.py fits its coefficients (recovered here from
synthetic measurements, the term sums walked off real schedules)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import PlatformError
from autotiler.generators import LoadCNN_SQ8_Library, LoadCNNLibrary
from autotiler.model.cost import LinearCost, linear_cost
from autotiler.model.session import current_model
from autotiler.platforms import PLATFORMS, ComputeScale
from autotiler.schedule.cost import check_platform_cost
from autotiler.schedule.estimate import Estimator

from .conftest import EXAMPLES, bench_script, load_module
from .test_clock import PLATFORM, run_generated, win_kernel

SHAPE = "3*W*H + 2*H + 11"     # KerWin_u32's formals W and H: per item, per line, per call


def _calibrate():
    return bench_script("calibrate")


def _generate(plat, gen, h=100):
    with Model(plat) as m:
        SetL1MemorySize(2048)
        t = win_kernel(h=h)
        write_files(generate(m), str(gen))
        uk, libs = m.kernels["K"], dict(m.libs)
    return t, uk, libs, (gen / "ClockGen.c").read_text()


def test_platform_cost_replaces_the_library_cost_everywhere_alike(tmp_path):
    """With compute={"KerWin_u32": ComputeScale(100, 7, cost=SHAPE)} every call of KerWin_u32
    costs SHAPE (in long long) + 7 instead of its Cost=100: in the generated AT_SIM_COMPUTE, in
    the host simulator's compute cycles (exactly the hand sum: tiles of whole lines), in the
    predictor (cycle for cycle) and in the tiler's estimate of the chosen tiling's compute;
    KerInit_u32, not in the model, keeps its Cost=0."""
    shaped = PLATFORM.with_overrides(compute={"KerWin_u32": ComputeScale(100, 7, cost=SHAPE)})
    runs = {}
    for plat in (PLATFORM, shaped):
        gen = tmp_path / ("shaped" if plat.compute else "library")
        t, uk, libs, code = _generate(plat, gen)
        c = run_generated(gen, 100, platform=plat)
        assert c["cycles"] == t.predicted.cycles and c["compute_cycles"] == t.predicted["compute_cycles"]
        estimate = Estimator(uk, libs, plat).compute(t)
        assert estimate == t.predicted["compute_cycles"] + t.predicted["fork_cycles"]
        assert "AT_SIM_COMPUTE(0);" in code
        runs[bool(plat.compute)] = (t, c, code)
    (t, c, code), (ts, cs, codes) = runs[False], runs[True]
    assert "AT_SIM_COMPUTE(100);" in code and c["compute_cycles"] == 100 * t.ntiles
    computes = re.findall(r"AT_SIM_COMPUTE\((.*)\);", codes)
    shaped_line = [x for x in computes if x != "0"]
    assert len(shaped_line) == 1 and shaped_line[0].startswith("(long long) ((long long) ((unsigned int) (16))*3*")
    assert shaped_line[0].endswith("*2 + 11) + 7")    # percent 100: no scaling printed
    assert cs["compute_cycles"] == 3 * 16 * 100 + 2 * 100 + (11 + 7) * ts.ntiles


@pytest.mark.parametrize("cost, match", [
    ("W*", r"platform 'gap8': compute\['KerWin_u32'\]\.cost: Cost expression 'W\*' is not a valid expression "
           r"\(write e\.g\. \"W\*H/ncores \+ 20\"\)"),
    ("W*1.5", r"platform 'gap8': compute\['KerWin_u32'\]\.cost: Cost expression 'W\*1\.5' may only use integers, "
              r"\+ - \* / % and names"),
    ("W**2", r"compute\['KerWin_u32'\]\.cost: Cost expression 'W\*\*2' may only use integers"),
    ("W/(2-2)", r"compute\['KerWin_u32'\]\.cost: Cost expression 'W/\(2-2\)' divides by zero"),
    ("3-5", r"compute\['KerWin_u32'\]\.cost: Cost expression '3-5' is a negative cycle count \(-2\)"),
])
def test_a_bad_platform_cost_is_refused_when_the_platform_is_built(cost, match):
    with pytest.raises(PlatformError, match=match):
        PLATFORM.with_overrides(compute={"KerWin_u32": ComputeScale(100, 0, cost=cost)})


def test_a_platform_cost_is_a_string_and_names_one_basic_kernel():
    with pytest.raises(PlatformError, match=r"ComputeScale\.cost must be a Cost expression \(a string\) or None, "
                                            r"got 12"):
        ComputeScale(100, 0, cost=12)
    with pytest.raises(PlatformError, match=r"platform 'gap8': compute\['\*'\]\.cost: 'W' is given for any basic "
                                            r"kernel, but a cost names the formal arguments of one \(give the cost "
                                            r"to the basic kernel's own entry; '\*' takes percent and per_call\)"):
        PLATFORM.with_overrides(compute={"*": ComputeScale(100, 0, cost="W")})


@pytest.mark.parametrize("cost, name", [("Q*W + 3", "Q"), ("In*2", "In")])
def test_a_platform_cost_naming_no_scalar_formal_is_refused_when_a_kernel_calls_it(cost, name):
    """The platform does not know a basic kernel's formals: a user kernel calling it does. An
    unknown name and a pointer formal are refused there, with the kernel's scalar formals."""
    plat = PLATFORM.with_overrides(compute={"KerWin_u32": ComputeScale(100, 0, cost=cost)})
    with Model(plat):
        SetL1MemorySize(2048)
        with pytest.raises(PlatformError, match=rf"kernel 'K': platform 'gap8': compute\['KerWin_u32'\]\.cost: Cost "
                                                rf"expression '{re.escape(cost)}' uses '{name}', which is not a "
                                                r"scalar argument \(scalar arguments: H, Ov, Vertical, W, and ncores\)"):
            win_kernel(h=100)


def _library(loader):
    with Model("pulp_open"):
        loader()
        return dict(current_model().libs)


def test_every_platform_cost_names_the_formals_of_the_kernels_it_models():
    """pulp_open's shaped costs: the CNN library's, cnn_conv_v3's own (ConvV3_*) and the SQ8
    library's basic kernels take the formals their costs read."""
    conv_v3 = load_module(EXAMPLES / "cnn_conv_v3" / "model.py", "shape_conv_v3_model")
    libraries = [_library(LoadCNNLibrary), _library(conv_v3.LoadConvV3Library), _library(LoadCNN_SQ8_Library)]
    shaped = [(p, k) for p in PLATFORMS.values() for k, s in p.compute.items() if s.cost]
    assert {k for _, k in shaped} >= {"KerParConv5x5Stride1_DP_fp", "ConvV3_KerParConvNxMStrideSxSy_DP_fp"}
    for plat, kernel in shaped:
        libs = [lib[kernel] for lib in libraries if kernel in lib]
        assert libs, kernel
        for lib in libs:
            check_platform_cost(plat, lib)


def test_linear_cost_reads_terms_coefficients_and_divisor():
    c = linear_cost("(72972*((OutFeatures + ncores - 1)/ncores)*InFeatures*(UsedW - 4) + 3*N - 20) / 100")
    assert c == LinearCost(("((OutFeatures + ncores - 1) / ncores)*InFeatures*(UsedW - 4)", "N", "1"),
                           (72972, 3, -20), 100)
    assert linear_cost(c.text()) == c
    # an integer division is not a product: 3*A/4 stays whole; A/4*5 is 5 times (A/4)
    assert linear_cost("3*A/4 + A/4*5").terms == ("(3 * A / 4)", "(A / 4)")
    assert linear_cost("3*A/4 + A/4*5").coefficients == (1, 5)


def test_the_fit_recovers_a_shapes_coefficients():
    """Synthetic runs of a shaped kernel (cycles = 7.25 A + 130 B + (40 + fork) per call, to the
    cycle) and of a scaled one (cycles = 2.5 Cost + (12 + fork) per call): the fit recovers the
    coefficients, the per-call parts and the printed literal; the held-out errors are ~0."""
    cal = _calibrate()
    fork = 50
    rng = np.random.default_rng(1)
    rows = []
    for _ in range(6):
        calls = int(rng.integers(2, 40))
        a, b, cost = int(rng.integers(10_000, 90_000)), int(rng.integers(50, 900)), int(rng.integers(2000, 9000))
        rows.append({"forks": {"K": [calls, round(7.25 * a + 130 * b + (40 + fork) * calls), 1],
                               "S": [calls, round(2.5 * cost + (12 + fork) * calls), cost]},
                     "terms": {"K": [a, b]}})
    shapes = {"K": ["A", "B"]}
    fit = cal.fit_compute(rows, fork, shapes)
    k, s = fit["K"], fit["S"]
    assert k.coefficients == pytest.approx((7.25, 130), rel=1e-3) and k.per_call == 40
    assert k.cost() == "(725*A + 13000*B) / 100" and k.worst_fit_error < 1e-3
    assert (s.percent, s.per_call) == (250, 12) and not s.terms
    literal = cal.compute_literal(fit)
    assert '"K": ComputeScale(100, 40, cost="(725*A + 13000*B) / 100"),' in literal
    assert '"S": ComputeScale(250, 12),' in literal and '"*": ComputeScale(250, 0),' in literal
    held = cal.holdout(rows, fork, shapes)
    assert abs(held["K"]["held_out"]) < 1e-3 and abs(held["S"]["held_out"]) < 1e-2


def test_the_fit_keeps_coefficients_non_negative_and_needs_runs_to_separate_the_per_call_part():
    """A term the runs do not need gets 0 (not a negative coefficient compensated by another);
    runs in one proportion (here one run) cannot separate a per-call part: the terms carry all."""
    cal = _calibrate()
    rows = [{"forks": {"K": [n, 10 * a + 50 * n, 1]}, "terms": {"K": [a, a // 7 + (n % 3)]}}
            for n, a in ((4, 1000), (9, 5000), (20, 3000), (3, 8000))]
    k = cal.fit_compute(rows, 50, {"K": ["A", "B"]})["K"]
    assert min(k.coefficients) >= 0 and k.coefficients[0] == pytest.approx(10, rel=1e-2)
    one = cal.fit_compute([{"forks": rows[0]["forks"], "terms": {"K": [1000]}}], 50, {"K": ["A"]})["K"]
    assert one.per_call == 0 and one.coefficients[0] * 1000 + 50 * 4 == pytest.approx(10 * 1000 + 50 * 4)


def test_the_term_sums_are_walked_off_the_schedules_the_code_runs(tmp_path):
    """call_sums walks a tiling's schedule as the generated code runs it: KerWin_u32's calls and
    summed Cost= (100 a call) are what the host simulator's compute adds up; shape_sums then
    sums each term of a shape over those calls (W*H: every item once; H: every line once), and
    refuses to when the profile's calls or Cost= disagree with the walk."""
    cal = _calibrate()
    t, uk, libs, _ = _generate(PLATFORM, tmp_path / "gen")
    assert cal.call_sums([t], libs, PLATFORM, "KerWin_u32") == (t.ntiles, 100 * t.ntiles)
    forks = {"KerWin_u32": [t.ntiles, 0, 100 * t.ntiles]}
    assert cal.shape_sums([t], libs, PLATFORM, {"KerWin_u32": ["W*H", "H"]}, forks) == {"KerWin_u32": [1600, 100]}
    with pytest.raises(cal.WrongTermSums, match=r"the schedules give \d+ calls of 'KerWin_u32' costing \d+ in all, "
                                             r"GVSoC's profile \d+ costing 7"):
        cal.shape_sums([t], libs, PLATFORM, {"KerWin_u32": ["W*H"]}, {"KerWin_u32": [t.ntiles, 0, 7]})
