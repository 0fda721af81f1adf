"""Entering a user kernel costs the platform's ``kernel_call_cycles`` (pulp_open: what a call's
cold instruction cache costs outside its basic kernels, measured by bench/gvsoc_micro.py). The
host simulator charges it on entry of each user kernel (the generated C is compiled with
-finstrument-functions; a group, a graph's functions and helpers are not user kernels), the
predictor and the tiler's estimate before anything else: simulation and prediction still agree
cycle for cycle, and the generated code does not change."""

from __future__ import annotations

import re

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.errors import PlatformError
from autotiler.generators import LoadCNNLibrary
from autotiler.platforms import get_platform
from autotiler.schedule.estimate import Estimator

from .conftest import EXAMPLES, load_module
from .graph_helpers import declare_residual_graph

PULP = get_platform("pulp_open")
CALL = PULP.kernel_call_cycles
WARM = PULP.with_overrides(kernel_call_cycles=0)   # the same chip, entering a kernel for free
pytestmark = pytest.mark.usefixtures("private_harness_cache")


def _example(name: str, plat, out):
    """(model, generated files, program, reference) of examples/<name> at its own L1 budget."""
    mod = load_module(EXAMPLES / name / "model.py", f"kernel_call_{name}")
    ref = load_module(EXAMPLES / name / "reference.py", f"kernel_call_{name}_ref")
    with Model(plat) as m:
        mod.declare(l1=mod.L1_BUDGET)
        files = generate(m)
    write_files(files, str(out))
    prog = host_harness.build(out, sources=[EXAMPLES / name / s for s in ref.SOURCES],
                              include_dirs=[EXAMPLES / name, *getattr(ref, "INCLUDE_DIRS", ())], platform=plat)
    return m, files, prog, ref


@pytest.mark.parametrize("name, kernels", [("matadd_v3", 1), ("fft2d", 2)])
def test_each_user_kernel_call_is_charged_once_and_predicted(tmp_path, name, kernels):
    """matadd_v3 (one user kernel) and fft2d (a group of two): simulated == predicted on
    pulp_open with and without the charge, which adds kernel_call_cycles per user kernel (not
    for the group's own function) and changes nothing in the generated code (but the comments'
    predicted figures)."""
    assert CALL > 0
    cycles, texts = {}, {}
    for plat in (PULP, WARM):
        m, files, prog, ref = _example(name, plat, tmp_path / f"{name}_{plat.kernel_call_cycles}")
        args = ref.make_args(np.random.default_rng(0))
        counters = prog.call(ref.KERNEL, **args)
        for out, want in ref.expected(args).items():
            np.testing.assert_array_equal(args[out], want)
        tilings = [m.tilings[ref.KERNEL]] if ref.KERNEL in m.tilings else [m.tilings[c.name]
                                                                          for c in m.groups[ref.KERNEL].calls]
        assert len(tilings) == kernels
        assert counters["cycles"] == sum(t.predicted.cycles for t in tilings)
        cycles[plat.kernel_call_cycles] = counters["cycles"]
        texts[plat.kernel_call_cycles] = {k: re.sub(r"/\*.*?\*/", "", v, flags=re.S) for k, v in files.items()
                                          if not k.endswith(".json")}
    assert cycles[CALL] - cycles[0] == kernels * CALL
    assert texts[CALL] == texts[0]


def test_every_node_of_a_graph_pays_its_kernels_call(tmp_path):
    """The residual graph (three user-kernel nodes) on the host simulator: each node's cycles
    grow by kernel_call_cycles with the charge, the run by three times that (the graph's
    constructor, runner and helpers are not user kernels)."""
    runs = {}
    big = PULP.with_overrides(l1_size=64 * 1024)   # the graph's 51200 bytes of L1
    for plat in (big, big.with_overrides(kernel_call_cycles=0)):
        here = tmp_path / str(plat.kernel_call_cycles)
        here.mkdir()
        with Model(plat) as m:
            declare_residual_graph(here, 64 * 1024)
            files = generate(m)
        write_files(files, str(here / "gen"))
        graph = host_harness.build(here / "gen", sources=[EXAMPLES / "matrix_add" / "MatAddBasicKernels.c"],
                                   include_dirs=[EXAMPLES / "matrix_add"], platform=plat).graph("G")
        x = np.arange(graph.spec.args[0].items or 1, dtype=np.int32)
        out = np.zeros_like(x)
        graph.construct()
        runs[plat.kernel_call_cycles] = graph.run(In=x, Out=out)
        graph.destruct()
    cold, warm = runs[CALL], runs[0]
    assert [n["cycles"] - w["cycles"] for n, w in zip(cold["nodes"], warm["nodes"])] == [CALL] * 3
    assert cold["cycles"] - warm["cycles"] == 3 * CALL


def test_the_estimate_adds_the_call_as_the_prediction_does():
    """A MNIST convolution on pulp_open: the estimate and the prediction of its tiling both grow
    by exactly kernel_call_cycles with the charge."""
    figures = {}
    for plat in (PULP, WARM):
        with Model(plat) as m:
            LoadCNNLibrary()
            SetL1MemorySize(16000)
            CNN_ConvolutionPoolReLU("Conv", 0, 2, 2, 2, 2, 12, 14, 14, 12, 0, 0, 0, 0, 1, 32, 28, 28, KOP_CONV_DP,
                                    5, 5, 1, 1, 1, 1, 0, KOP_MAXPOOL, 2, 2, 1, 1, 2, 2, 0, KOP_RELU)
            t = m.tilings["Conv"]
            figures[plat.kernel_call_cycles] = (Estimator(t.kernel, m.libs, plat)(t), t.predicted.cycles)
    (est, pred), (est0, pred0) = figures[CALL], figures[0]
    assert (est - est0, pred - pred0) == (CALL, CALL)


def test_kernel_call_cycles_is_a_platform_count():
    with pytest.raises(PlatformError, match=r"platform 'gap8': kernel_call_cycles must be an int >= 0, got -1"):
        get_platform("gap8", kernel_call_cycles=-1)
    with pytest.raises(PlatformError, match=r"platform 'gap8': kernel_call_cycles must be an int >= 0, got 2\.5"):
        get_platform("gap8", kernel_call_cycles=2.5)
    assert get_platform("gap8").kernel_call_cycles == get_platform("gap9").kernel_call_cycles == 0
