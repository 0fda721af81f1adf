"""Calibration of the cost model against GVSoC (issue 11): every example kernel and every MNIST
layer, at several L1 budgets (so several tilings per kernel), generated for the ``pulp_open``
platform, run on the host simulator and on GVSoC's pulp-open cluster (both bit-exact with
numpy), and compared with the predictor.

    source ~/.cache/gvsoc/env.sh     # GVSoC (../shared/tools/gvsoc/setup.sh builds it)
    .venv/bin/python bench/calibrate.py [--json PATH] [--examples a,b] [--quick] [--platform NAME]

Per kernel and budget: the host simulator's cycles, the predicted cycles (the ``time``
objective's figure for the chosen tiling), GVSoC's cycles (``mcycle`` on cluster core 0 around
the call) and the errors (host / GVSoC - 1, predicted / GVSoC - 1); whether the kernel is DMA
bound (the host simulator's cluster-DMA busy cycles above its compute cycles). Targets
(benchmarks, never asserted in tests): DMA-bound kernels within 10%, whole kernels within 15%,
the predictor's order of the tilings of one kernel (its budgets) agreeing with GVSoC's on at
least 90% of pairs. Results: ``bench/results/calibration.json`` (``--json``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import calibrate_sq8 as SQ8  # noqa: E402
from run import WrongOutput, check_outputs, kernel_examples, load_example  # noqa: E402

import host_harness  # noqa: E402
from autotiler import (  # noqa: E402
    KOP_CONV_DP,
    KOP_LINEAR,
    KOP_MAXPOOL,
    KOP_NONE,
    KOP_RELU,
    KOP_SOFTMAX,
    Model,
    SetGeneratedFilesNames,
    SetL1MemorySize,
    SetUsedFilesNames,
)
from autotiler.codegen import generate, write_files  # noqa: E402
from autotiler.errors import AutoTilerError, HarnessError  # noqa: E402
from autotiler.generators import CNN_HEADER, CNN_KERNELS_DIR, CNN_SOURCES, LoadCNNLibrary  # noqa: E402
from autotiler.generators import cnn_conv_reference as CONV_REF  # noqa: E402
from autotiler.generators import cnn_dense_reference as DENSE_REF  # noqa: E402
from autotiler.generators.cnn_conv import CNN_ConvolutionPoolReLU  # noqa: E402
from autotiler.generators.cnn_dense import CNN_LinearReLU, CNN_SoftMax  # noqa: E402
from autotiler.model.cost import LinearCost, linear_cost  # noqa: E402
from autotiler.platforms import ComputeScale, DmaEngine, get_platform  # noqa: E402
from autotiler.schedule.build import build_schedule  # noqa: E402
from autotiler.schedule.cost import check_platform_cost  # noqa: E402
from autotiler.schedule.walk import Machine, Program, Walker, environment  # noqa: E402
from host_harness import gvsoc  # noqa: E402

DEFAULT_JSON = ROOT / "bench" / "results" / "calibration.json"
SQ8_JSON = ROOT / "bench" / "results" / "calibration_sq8.json"
NETWORKS_JSON = ROOT / "bench" / "results" / "calibration_networks.json"
RANKING_JSON = ROOT / "bench" / "results" / "calibration_ranking.json"
MICRO_JSON = ROOT / "bench" / "results" / "gvsoc_micro.json"   # bench/gvsoc_micro.py's results
SCALES = (1.0, 0.5, 0.25)          # L1 budgets: the example's own, then a half and a quarter
MNIST_BUDGETS = (48000, 16000, 6000)
DMA_TARGET, WHOLE_TARGET, RANK_TARGET = 0.10, 0.15, 0.90


@dataclass
class Call:
    """One user-kernel call: its arguments, the expected outputs, the case it belongs to."""

    case: str
    kernel: str
    budget: int
    args: dict
    expected: dict


def example_calls(name: str, plat, scale: float, rng) -> tuple:
    """(model, calls, sources, include dirs) of an example at ``scale`` times its L1 budget (at
    most the platform's L1)."""
    mod, ref = load_example(name)
    budget = max(256, int(min(mod.L1_BUDGET, plat.l1_size) * scale))
    with Model(plat) as m:
        mod.declare(l1=budget)
        files = generate(m)
    args = ref.make_args(rng)
    calls = [Call(name, ref.KERNEL, budget, args, ref.expected(args))]
    sources = [ROOT / "examples" / name / s for s in ref.SOURCES]
    includes = [ROOT / "examples" / name, *getattr(ref, "INCLUDE_DIRS", ())]
    return m, files, calls, sources, includes


def _mnist_layers(budget: int) -> list:
    """The guide's MNIST layers, every argument in L2: (name, declare, make args, expected)."""
    sfx = f"_{budget}"

    def conv(name, cin, cout, wh):
        def declare():
            CNN_ConvolutionPoolReLU(name + sfx, 0, 2, 2, 2, 2, 12, 14, 14, 12, 0, 0, 0, 0, cin, cout, wh, wh,
                                    KOP_CONV_DP, 5, 5, 1, 1, 1, 1, 0, KOP_MAXPOOL, 2, 2, 1, 1, 2, 2, 0, KOP_RELU)

        def args(rng):
            return {"In": _values(rng, (cin, wh, wh)), "Filter": _values(rng, (cout, cin, 5, 5)),
                    "Bias": _values(rng, (cout,))}

        def expected(a):
            return CONV_REF.conv_pool_relu(a["In"], a["Filter"], a["Bias"], In_Q=12, Filter_Q=14, Bias_Q=14, Out_Q=12,
                                           ConvOper=KOP_CONV_DP, Fcx=5, Fcy=5, Dcx=1, Dcy=1, Scx=1, Scy=1, ConvPad=0,
                                           PoolOper=KOP_MAXPOOL, Fpx=2, Fpy=2, Dpx=1, Dpy=1, Spx=2, Spy=2, PoolPad=0,
                                           ReLUOper=KOP_RELU)
        return name + sfx, declare, args, expected

    def linear():
        name = "LinearLayerReLU_0" + sfx

        def declare():
            CNN_LinearReLU(name, 0, 2, 2, 2, 2, 12, 12, 8, 11, 0, 0, 0, 0, 1024, 10, KOP_LINEAR, KOP_NONE)

        def args(rng):
            return {"In": _values(rng, (1024,)), "Filter": _values(rng, (10, 1024)), "Bias": _values(rng, (10,))}

        def expected(a):
            return DENSE_REF.linear_relu(a["In"], a["Filter"], a["Bias"], 12, 12, 8, 11, 2, KOP_NONE)
        return name, declare, args, expected

    def softmax():
        name = "SoftMax_0" + sfx

        def declare():
            CNN_SoftMax(name, 0, 2, 2, 15, 15, 0, 0, 10, KOP_SOFTMAX)

        def args(rng):
            return {"In": _values(rng, (10,))}

        def expected(a):
            return DENSE_REF.softmax(a["In"], 15)
        return name, declare, args, expected

    return [conv("Conv5x5ReLUMaxPool2x2_0", 1, 32, 28), conv("Conv5x5ReLUMaxPool2x2_1", 32, 64, 12), linear(),
            softmax()]


def _values(rng, shape):
    return rng.integers(-(1 << 13), 1 << 13, size=shape).astype(np.int16)


def mnist_calls(plat, budgets, rng) -> tuple:
    with Model(plat) as m:
        SetUsedFilesNames(0, 1, CNN_HEADER)
        SetGeneratedFilesNames("MnistLayers.c", "MnistLayers.h")
        LoadCNNLibrary()
        layers = []
        for b in budgets:
            SetL1MemorySize(b)
            for name, declare, make, expected in _mnist_layers(b):
                declare()
                layers.append((name, b, make, expected))
        files = generate(m)
    calls = []
    for name, b, make, expected in layers:
        args = make(rng)
        out = np.asarray(expected(args))
        args["Out"] = np.full(out.shape, -12345, dtype=out.dtype)
        calls.append(Call("mnist", name, b, args, {"Out": out}))
    return m, files, calls, list(CNN_SOURCES), [CNN_KERNELS_DIR]


def _copy_args(args: dict) -> dict:
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}


def kernel_tilings(m, name: str) -> list:
    """The kernel's tiling, or the group's kernels' (predicted cycles summed)."""
    if name in m.tilings:
        return [m.tilings[name]]
    return [m.tilings[c.name] for c in m.groups[name].calls]


def _host_and_target(files, sources, includes, plat, work: Path) -> tuple:
    """The generated files written to work/gen and built for the host simulator and for GVSoC."""
    gen_dir = work / "gen"
    write_files(files, str(gen_dir))
    host = host_harness.build(gen_dir, sources=sources, include_dirs=includes, platform=plat)
    return host, host_harness.build(gen_dir, sources=sources, include_dirs=includes, platform=plat, backend="gvsoc")


def _host_call(host, c) -> dict:
    """c's call on the host simulator, its outputs checked; its counters."""
    args = _copy_args(c.args)
    counters = host.call(c.kernel, **args)
    check_outputs(args, c.expected, f"{c.case}/{c.kernel} on the host simulator")
    return counters


def run_case(m, files, calls, sources, includes, plat, work: Path, profile: bool = False,
             shapes: Optional[dict] = None) -> list:
    host, target = _host_and_target(files, sources, includes, plat, work)
    rows = []
    try:
        for c in calls:
            a_gv = _copy_args(c.args)
            counters = _host_call(host, c)
            got = target.call(c.kernel, **a_gv)
            check_outputs(a_gv, c.expected, f"{c.case}/{c.kernel} on GVSoC")
            forks = target.profile(c.kernel, **_copy_args(c.args))["forks"] if profile else {}
            ts = kernel_tilings(m, c.kernel)
            terms = shape_sums(ts, m.libs, plat, {k: v for k, v in (shapes or {}).items() if k in forks}, forks)
            predicted = sum(t.predicted.cycles for t in ts)
            rows.append({"case": c.case, "kernel": c.kernel, "label": getattr(c, "label", ""), "budget": c.budget,
                         "tiling": "; ".join(t.describe() for t in ts), "host": counters["cycles"],
                         "predicted": predicted, "gvsoc": got["cycles"],
                         "compute": counters["compute_cycles"], "dma": counters["dma_busy_cycles"]["cluster"],
                         "dma_bound": counters["dma_busy_cycles"]["cluster"] > counters["compute_cycles"],
                         "forks": {k: list(v) for k, v in forks.items()}, "terms": terms})
    finally:
        target.close()
    for r in rows:
        r["err_host"] = r["host"] / r["gvsoc"] - 1
        r["err_predicted"] = r["predicted"] / r["gvsoc"] - 1
    return rows


def run_case_warm(m, files, calls, sources, includes, plat, work: Path, profile: bool = True,
                  shapes: Optional[dict] = None) -> list:
    """As :func:`run_case` for user kernels of one basic kernel (the SQ8 layers), each run twice
    in one application (``GvsocProgram.sequence``, forks profiled): ``gvsoc`` is the first call's
    cycles; ``forks_cold`` the first call's fork cycles (the basic kernel's code fetched cold),
    ``forks_warm`` the second's (cached), each with the calls and summed Cost= the schedules give
    (:func:`call_sums`); ``forks`` (what is fitted) their midpoint. In a graph a node's basic kernel
    is cold after a node of another kernel and warm after one of its own kind, which the per-call
    model cannot tell: the midpoint halves the worst of the two errors (``--refit --calls``)."""
    host, target = _host_and_target(files, sources, includes, plat, work)
    rows = []
    try:
        for c in calls:
            a_gv = _copy_args(c.args)
            counters = _host_call(host, c)
            cold, warm = target.sequence([c.kernel, c.kernel], {c.kernel: a_gv}, profile=True)
            check_outputs(a_gv, c.expected, f"{c.case}/{c.kernel} on GVSoC")
            ts = kernel_tilings(m, c.kernel)
            kernels = {call.name for t in ts for call in t.kernel.calls}
            if len(kernels) != 1:
                raise WrongTermSums(f"'{c.kernel}' calls {sorted(kernels)}: the warm runs need one basic kernel")
            kernel = kernels.pop()
            n, cost = call_sums(ts, m.libs, plat, kernel)
            # the midpoint of the first (cold) and second (warm) calls: see calls_forks
            forks = {kernel: (n, (cold["fork_cycles"] + warm["fork_cycles"]) // 2, cost)}
            terms = shape_sums(ts, m.libs, plat, {k: v for k, v in (shapes or {}).items() if k in forks}, forks)
            rows.append({"case": c.case, "kernel": c.kernel, "label": getattr(c, "label", ""), "budget": c.budget,
                         "tiling": "; ".join(t.describe() for t in ts), "host": counters["cycles"],
                         "predicted": sum(t.predicted.cycles for t in ts), "gvsoc": cold["cycles"],
                         "gvsoc_warm": warm["cycles"], "compute": counters["compute_cycles"],
                         "dma": counters["dma_busy_cycles"]["cluster"],
                         "dma_bound": counters["dma_busy_cycles"]["cluster"] > counters["compute_cycles"],
                         "forks": {kernel: list(forks[kernel])}, "forks_cold": {kernel: [n, cold["fork_cycles"], cost]},
                         "forks_warm": {kernel: [n, warm["fork_cycles"], cost]},
                         "terms": terms})
    finally:
        target.close()
    for r in rows:
        r["err_host"] = r["host"] / r["gvsoc"] - 1
        r["err_predicted"] = r["predicted"] / r["gvsoc"] - 1
    return rows


def rank_agreement(rows: list) -> tuple:
    """(agreeing pairs, pairs): tilings of one kernel (its budgets) ordered by predicted cycles
    and by GVSoC's; ties in either count as agreeing."""
    agree = total = 0
    by_kernel: dict = {}
    for r in rows:
        by_kernel.setdefault((r["case"], r["kernel"].rsplit("_", 1)[0] if r["case"] in ("mnist", "sq8") else r["kernel"]),
                             []).append(r)
    for group in by_kernel.values():
        for a, b in itertools.combinations(group, 2):
            if a["tiling"] == b["tiling"]:
                continue
            total += 1
            dp, dg = a["predicted"] - b["predicted"], a["gvsoc"] - b["gvsoc"]
            agree += dp * dg > 0 or dp == 0 or dg == 0
    return agree, total


def summary(rows: list) -> dict:
    dma = [r for r in rows if r["dma_bound"]]
    agree, pairs = rank_agreement(rows)

    def worst(rs, key):
        return max((abs(r[key]) for r in rs), default=0.0)
    out = {"kernels": len(rows), "dma_bound": len(dma),
           "worst_dma_bound_predicted": worst(dma, "err_predicted"), "worst_predicted": worst(rows, "err_predicted"),
           "worst_host": worst(rows, "err_host"),
           "median_abs_predicted": float(np.median([abs(r["err_predicted"]) for r in rows])) if rows else 0.0,
           "rank_pairs": pairs, "rank_agree": agree, "rank_ratio": agree / pairs if pairs else 1.0}
    # no DMA-bound row checks nothing: the target is then not met (None), not passed
    out["targets"] = {"dma_bound_within_10pct": out["worst_dma_bound_predicted"] <= DMA_TARGET if dma else None,
                      "whole_within_15pct": out["worst_predicted"] <= WHOLE_TARGET,
                      "ranking_90pct": out["rank_ratio"] >= RANK_TARGET}
    return out


class WrongTermSums(Exception):
    """The schedules walked for the term sums are not the code GVSoC profiled (a bug: abort)."""


class _CallTally(Machine):
    """Counts one basic kernel's calls in a walk of a schedule and sums their cost (the walker
    skips repeated iterations: the figures are additive and there is no state)."""

    def __init__(self, kernel: str):
        self.kernel = kernel
        self.f = [0, 0]     # calls, summed cost

    def copy(self, node, env: dict, size: int, lines: int, event: tuple) -> None:
        pass

    def wait(self, node, env: dict, event: tuple) -> None:
        pass

    def compute(self, node, env: dict, cost: int) -> None:
        if node.kernel == self.kernel:
            self.f[0] += 1
            self.f[1] += cost

    def key(self):
        return ()

    def figures(self) -> tuple:
        return tuple(self.f)

    def repeat(self, delta: tuple, reps: int) -> None:
        self.f = [x + reps * d for x, d in zip(self.f, delta)]

    def restore(self, key, delta: tuple) -> None:
        self.repeat(delta, 1)


def call_sums(tilings: list, libs: dict, plat, kernel: str) -> tuple:
    """(calls, summed cost) of basic kernel ``kernel`` in the schedules of ``tilings`` on
    ``plat``: what the generated code's ``AT_SIM_COMPUTE`` adds up for it (C arguments count as
    1, as in the prediction)."""
    calls = total = 0
    for t in tilings:
        schedule = build_schedule(t, libs, None, plat)
        tally = _CallTally(kernel)
        Walker(Program(schedule), tally, environment(schedule, [c.name for c in t.kernel.cargs], plat.cores)).run()
        calls, total = calls + tally.f[0], total + tally.f[1]
    return calls, total


def shape_sums(tilings: list, libs: dict, plat, shapes: dict, forks: dict) -> dict:
    """{basic kernel: [sum of each term of its shape over its calls]} of a run, for the fit of a
    platform's own Cost= (``shapes``: {basic kernel: terms}). GVSoC's profile gives a basic
    kernel's summed Cost= only; the term sums come from walking the very schedules the generated
    code runs, each term in turn made the kernel's cost. The walk of the Cost= the run charged
    must give the profile's calls and summed Cost= (``forks``), else the sums are not the run's."""
    out = {}
    for kernel, terms in shapes.items():
        check_platform_cost(plat.with_overrides(compute={kernel: ComputeScale(100, 0, "+".join(terms))}),
                            libs[kernel])
        calls, cost = call_sums(tilings, libs, plat, kernel)
        if [calls, cost] != list(forks[kernel][::2]):
            raise WrongTermSums(f"the schedules give {calls} calls of '{kernel}' costing {cost} in all, GVSoC's "
                                f"profile {forks[kernel][0]} costing {forks[kernel][2]}: the term sums would not be "
                                "the run's")
        out[kernel] = [call_sums(tilings, libs, plat.with_overrides(compute={kernel: ComputeScale(100, 0, term)}),
                                 kernel)[1] for term in terms]
    return out


def platform_shapes(plat) -> dict:
    """{basic kernel: its terms} of every basic kernel the platform gives its own Cost= (the
    constant part left to ``per_call``)."""
    return {k: [t for t in linear_cost(v.cost).terms if t != "1"] for k, v in plat.compute.items() if v.cost}


SHAPE_DIVISOR = 100   # a fitted shape's coefficients are in hundredths of a cycle


@dataclass(frozen=True)
class ForkFit:
    """A basic kernel's fitted compute model: ``percent`` of its Cost= or, for a shaped kernel,
    ``coefficients`` (cycles per unit of each of ``terms``), plus ``per_call`` beyond the fork window;
    over ``runs`` profiled runs (``calls`` calls), worst relative error ``worst_fit_error``."""

    percent: int
    per_call: int
    runs: int
    calls: int
    worst_fit_error: float
    terms: tuple = ()
    coefficients: tuple = ()

    def cost(self) -> Optional[str]:
        """The platform's own Cost= of a shaped kernel (coefficients in hundredths of a cycle)."""
        if not self.terms:
            return None
        hundredths = tuple(round(SHAPE_DIVISOR * k) for k in self.coefficients)
        return LinearCost(self.terms, hundredths, SHAPE_DIVISOR).text()

    def cycles(self, calls: float, cost: float, sums, window: float) -> float:
        """The profiled fork cycles this model gives ``calls`` calls of summed Cost= ``cost`` and
        summed terms ``sums`` (as the generated code computes them, per call, in integers), each
        call's window of an empty basic kernel ``window`` included."""
        if self.terms:
            hundredths = [round(SHAPE_DIVISOR * k) for k in self.coefficients]
            work = sum(c * x for c, x in zip(hundredths, sums)) / SHAPE_DIVISOR
        else:
            work = self.percent / 100 * cost
        return work + (self.per_call + window) * calls

    def entry(self) -> dict:
        out = {"percent": self.percent, "per_call": self.per_call, "runs": self.runs, "calls": self.calls,
               "worst_fit_error": self.worst_fit_error}
        if self.terms:
            out.update(terms=list(self.terms), coefficients=list(self.coefficients), cost=self.cost())
        return out


def fork_window_cycles(path: Path = MICRO_JSON) -> float:
    """The window GvsocProgram.profile times of an empty basic kernel's fork (bench/gvsoc_micro.py,
    the runtime statements): what a basic kernel's per-call figure is measured beyond."""
    try:
        return float(json.loads(Path(path).read_text())["fit"]["runtime"]["fork_window_cycles"]["value"])
    except (OSError, ValueError, KeyError) as err:
        raise SystemExit(f"calibrate: no fork window in {path} ({err!r}): run bench/gvsoc_micro.py first") from None


def fit_compute(rows: list, window: float, shapes: Optional[dict] = None) -> dict:
    """Per basic kernel, the :class:`ForkFit` that best maps its runs to GVSoC's fork cycles, over
    every profiled run (calls n, measured fork cycles y, summed Cost= c; the Cost= values as
    written, so run with ``compute={}``), in the least-squares sense on relative errors.

    A kernel of ``shapes`` ({basic kernel: terms}, the platform's own Cost= of it) fits
    y = sum_i k_i * T_i + k * n (T_i: the run's sum of term i, ``row["terms"]``), every
    coefficient >= 0 (:func:`_fit_shape`); any other y = f * c + k * n: ``percent`` = 100 f,
    ``per_call`` = k less the profiled window of an empty basic kernel (``window``: the model's
    fork_cycles charges it, with what the fork costs outside the window), never below 0. One
    run, runs in one proportion, or a per-call part that would be more than half of some run's
    cycles (the Cost= then does not follow the code's shape: the fit would trade the proportion
    for a fixed cost) fit f alone."""
    shapes = shapes or {}
    out = {}
    for name, pts in sorted(_fork_points(rows).items()):
        n, y, c = (np.array([p[i] for p in pts], dtype=float) for i in range(1, 4))
        if name in shapes:
            sums = np.array([rows[p[0]]["terms"][name] for p in pts], dtype=float)
            if sums.shape[1] != len(shapes[name]):
                raise ValueError(f"'{name}': the runs sum {sums.shape[1]} terms, its shape has {len(shapes[name])}")
            coefficients, per_call = _fit_shape(sums, n, y, window)
            fit = ForkFit(100, per_call, len(pts), int(n.sum()), 0.0, tuple(shapes[name]), coefficients)
        else:
            fit = ForkFit(*_fit_scale(n, y, c, window), len(pts), int(n.sum()), 0.0)
            sums = [()] * len(pts)
        model = np.array([fit.cycles(n[j], c[j], sums[j], window) for j in range(len(pts))])
        out[name] = ForkFit(fit.percent, fit.per_call, fit.runs, fit.calls, float(np.max(np.abs(model / y - 1))),
                            fit.terms, fit.coefficients)
    if out:
        mean = float(np.exp(np.mean([np.log(v.percent) for k, v in out.items() if k not in shapes] or [0.0])))
        out["*"] = ForkFit(round(mean), 0, 0, 0, 0.0)
    return out


def _fit_scale(n, y, c, window: float) -> tuple:
    """(percent, per_call) of y = f * c + k * n (see :func:`fit_compute`)."""
    a = np.stack([c / y, n / y], axis=1)
    f, k = np.linalg.lstsq(a, np.ones_like(y), rcond=None)[0] if np.linalg.matrix_rank(a) == 2 else (0.0, -1.0)
    if f <= 0 or k < window or np.any(k * n > 0.5 * y):   # then the rest scales with Cost=
        k = float(window)
        f = max(float(np.mean((y - k * n) / c)), 0.01)
    return max(1, round(100 * f)), max(0, round(k - window))


def _fit_shape(sums, n, y, window: float) -> tuple:
    """((k_1, ...), per_call) of y = sum_i k_i * sums[:, i] + (per_call + fork) * n, relative
    least squares with every unknown >= 0 (:func:`nnls`). The per-call part is fitted only when
    the runs separate it from the terms (their matrix has full rank), else it is 0: the terms
    carry all."""
    columns = np.column_stack([sums, n]) / y[:, None]
    target = 1 - window * n / y
    free = list(range(columns.shape[1]))
    if np.linalg.matrix_rank(columns) < len(free):
        free.pop()
    x = np.zeros(columns.shape[1])
    x[free] = nnls(columns[:, free], target)
    return tuple(float(v) for v in x[:-1]), max(0, round(float(x[-1])))


def nnls(a, b) -> np.ndarray:
    """argmin |a x - b| over x >= 0 (Lawson and Hanson's active set, on columns scaled to unit
    norm: the terms' sums span orders of magnitude). A column of zeros gets 0."""
    norms = np.linalg.norm(a, axis=0)
    scale = np.where(norms > 0, norms, 1.0)
    a = a / scale
    m, k = a.shape
    x, passive = np.zeros(k), np.zeros(k, dtype=bool)
    tol = 10 * np.finfo(float).eps * max(m, k) * max(1.0, float(np.abs(a).sum(axis=0).max()))
    for _ in range(3 * k + 10):
        w = a.T @ (b - a @ x)
        w[passive | (norms == 0)] = -np.inf
        if w.max() <= tol:
            break
        passive[int(np.argmax(w))] = True
        while True:
            z = np.zeros(k)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if np.all(z[passive] > tol):
                break
            bad = passive & (z <= tol)
            alpha = float(np.min(x[bad] / (x[bad] - z[bad])))
            x = x + alpha * (z - x)
            passive &= x > tol
        x = z
    return x / scale


def _fork_points(rows: list) -> dict:
    """{basic kernel: [(row index, calls, fork cycles, summed Cost=)]} of profiled rows."""
    points: dict = {}
    for i, r in enumerate(rows):
        for name, (calls, cycles, cost) in r.get("forks", {}).items():
            if calls and cost > 0:
                points.setdefault(name, []).append((i, calls, cycles, cost))
    return points


def holdout(rows: list, window: float, shapes: Optional[dict] = None) -> dict:
    """Out-of-sample check of :func:`fit_compute`: per basic kernel profiled in at least two
    runs (other tilings, other budgets), each run's fork cycles predicted by the table fitted
    on the other runs alone (leave one run out; a run with a label, an SQ8 layer, leaves out the
    layer's runs at every budget, often the same tiling). {name: {"runs", "in_sample",
    "held_out"}}: the worst relative errors of the in-sample fit and of the held-out predictions."""
    fit_all = fit_compute(rows, window, shapes)
    out = {}
    for name, pts in sorted(_fork_points(rows).items()):
        if len(pts) < 2:
            continue
        errors = []
        for i, calls, cycles, cost in pts:
            label = rows[i].get("label")
            rest = [r for j, r in enumerate(rows) if j != i and not (label and r.get("label") == label)]
            fit = fit_compute(rest, window, shapes).get(name)
            if fit is None:     # the layer was the kernel's only one
                continue
            sums = rows[i]["terms"][name] if fit.terms else ()
            errors.append(fit.cycles(calls, cost, sums, window) / cycles - 1)
        out[name] = {"runs": len(pts), "in_sample": fit_all[name].worst_fit_error,
                     "held_out": float(max(errors, key=abs)) if errors else float("nan")}
    return out


def format_holdout(result: dict) -> str:
    head = f"{'basic kernel':40} {'runs':>4} {'in-sample':>10} {'held-out':>9}"
    lines = [head, "-" * len(head)]
    for name, v in result.items():
        lines.append(f"{name:40} {v['runs']:>4} {100 * v['in_sample']:>9.1f}% {100 * v['held_out']:>+8.1f}%")
    held = [abs(v["held_out"]) for v in result.values()]
    if held:
        lines.append(f"held-out |error|: median {100 * float(np.median(held)):.1f}%, worst {100 * max(held):.1f}%, "
                     f"{sum(h <= WHOLE_TARGET for h in held)}/{len(held)} within {100 * WHOLE_TARGET:.0f}%")
    return "\n".join(lines)


def compute_literal(fit: dict) -> str:
    """The fit as the platform entry's ``compute=`` literal (autotiler/platforms.py)."""
    lines = ["compute={"]
    for k, v in fit.items():
        cost = f', cost="{v.cost()}"' if v.terms else ""
        lines.append(f'    "{k}": ComputeScale({v.percent}, {v.per_call}{cost}),')
    return "\n".join(lines + ["},"])


def format_comparison(before: list, after: list) -> str:
    """Before and after side by side, per kernel and budget both runs have: GVSoC's cycles (the
    same code when the tiling did not change), the host simulator's and the predictor's, and the
    predictor's error."""
    old = {(r["case"], r["kernel"], r["budget"]): r for r in before}
    head = (f"{'kernel':34} {'L1':>6} | {'gvsoc':>9} {'host':>9} {'pred':>9} {'err%':>7} | "
            f"{'gvsoc':>9} {'host':>9} {'pred':>9} {'err%':>7}")
    lines = [f"{'':41} | {'before':^37} | {'after':^37}", head, "-" * len(head)]
    for r in after:
        b = old.get((r["case"], r["kernel"], r["budget"]))
        if b is None:
            continue
        lines.append(f"{r['kernel']:34} {r['budget']:>6} | {b['gvsoc']:>9} {b['host']:>9} {b['predicted']:>9} "
                     f"{100 * b['err_predicted']:>+7.1f} | {r['gvsoc']:>9} {r['host']:>9} {r['predicted']:>9} "
                     f"{100 * r['err_predicted']:>+7.1f}")
    return "\n".join(lines)


def format_rows(rows: list) -> str:
    head = f"{'case':14} {'kernel':34} {'L1':>6} {'host':>9} {'pred':>9} {'gvsoc':>9} {'host%':>7} {'pred%':>7} dma"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['case']:14} {r['kernel']:34} {r['budget']:>6} {r['host']:>9} {r['predicted']:>9} "
                     f"{r['gvsoc']:>9} {100 * r['err_host']:>+7.1f} {100 * r['err_predicted']:>+7.1f} "
                     f"{'yes' if r['dma_bound'] else ''}")
    return "\n".join(lines)


def cases(examples: list, plat, quick: bool, rng, sq8=None, kinds=None):
    """(name, make) of each case; ``sq8``: the SQ8 kernels' (sources, include dirs) to run the SQ8
    TFLM layers (bench/calibrate_sq8.py) with, at each budget, instead of the examples (``kinds``:
    only the layers of these kinds)."""
    if sq8:
        for b in SQ8.BUDGETS[:1] if quick else SQ8.BUDGETS:
            yield f"sq8@{b}", lambda b=b: SQ8.sq8_case(plat, b, rng, sources=sq8, kinds=kinds)
        return
    scales = SCALES[:2] if quick else SCALES
    for name in examples:
        for s in scales:
            yield f"{name}@{s}", lambda name=name, s=s: example_calls(name, plat, s, rng)
    yield "mnist", lambda: mnist_calls(plat, MNIST_BUDGETS[:2] if quick else MNIST_BUDGETS, rng)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--json", default=str(DEFAULT_JSON))
    p.add_argument("--examples", help="comma-separated example names (default: every example the back-end runs)")
    p.add_argument("--platform", default="pulp_open")
    p.add_argument("--quick", action="store_true", help="two budgets per example, two MNIST budgets")
    p.add_argument("--compare", metavar="JSON", help="a results file of an earlier run (e.g. --before's) to print "
                                                   "side by side with this one")
    p.add_argument("--before", action="store_true",
                   help="the model before this calibration (pulp_open's first constants, one cluster-DMA queue, "
                        "every Cost= as written)")
    p.add_argument("--holdout", metavar="JSON",
                   help="no simulation: the out-of-sample check of the compute fit on a --fit-compute results file "
                        "(each profiled run predicted by the table fitted on the other runs)")
    p.add_argument("--fit-compute", action="store_true",
                   help="also profile each call's forks and fit the platform's compute model (runs with every "
                        "Cost= as written; a basic kernel the platform gives its own cost= gets the coefficients of "
                        "that cost's terms); prints the compute= entry for autotiler/platforms.py")
    p.add_argument("--fit-sq8", action="store_true",
                   help="as --fit-compute on the SQ8 TFLM layers of bench/calibrate_sq8.py (each basic kernel of the "
                        "imported networks over a spread of shapes, at two L1 budgets) with the terms of their "
                        "pulp_open Cost= (calibrate_sq8.SHAPES); prints the compute= entries; --json defaults to "
                        "bench/results/calibration_sq8.json")
    p.add_argument("--sq8-only", metavar="KINDS",
                   help="with --fit-sq8: run only the layers of these kinds (comma-separated: "
                        f"{', '.join(SQ8.KINDS)}); the other kinds' rows are kept from the --json file of an "
                        "earlier run (their basic kernels unchanged), so the fit and the file cover every kernel")
    p.add_argument("--kernels-rev", metavar="REV",
                   help="with --fit-sq8, --networks, --ranking: measure the SQ8 kernels (and Gap.h) of git revision "
                        "REV, not the working tree's")
    p.add_argument("--refit", metavar="JSON",
                   help="no simulation: a --fit-sq8 results file fitted again with the current terms "
                        "(calibrate_sq8.SHAPES: the layers are declared again and their schedules walked for the term "
                        "sums); prints the fit, each run's error and the out-of-sample check, writes --json")
    p.add_argument("--calls", choices=("mean", "first", "warm"),
                   help="with --fit-sq8 or --refit: fit, for every basic kernel, the midpoint of the first and second "
                        "calls' fork cycles, the first (cold) calls' or the second (warm) calls' (default: "
                        "calibrate_sq8.COLD's kernels their first calls, the others the midpoint)")
    p.add_argument("--networks", action="store_true",
                   help="the four imported networks (tests/models/import) on the host simulator and on GVSoC, node by "
                        "node: bench/results/calibration_networks.json and .md")
    p.add_argument("--ranking", action="store_true",
                   help="candidate tilings of three SQ8 layers, predicted and run on GVSoC: "
                        "bench/results/calibration_ranking.json")
    return p.parse_args(argv)


def sq8_kinds(text: Optional[str]) -> Optional[set]:
    """--sq8-only's kinds, each one of calibrate_sq8.KINDS."""
    if not text:
        return None
    kinds = {k.strip() for k in text.split(",") if k.strip()}
    unknown = sorted(kinds - set(SQ8.KINDS))
    if unknown:
        raise SystemExit(f"calibrate: --sq8-only {', '.join(unknown)}: not a layer kind (one of {', '.join(SQ8.KINDS)})")
    return kinds


def kept_rows(path: Path, kinds: set) -> Optional[dict]:
    """The rows of an earlier --fit-sq8 file (``path``) whose layers are not of ``kinds``, with the
    kernels' revision they measured ({"rows", "kernels"}); None when there is no such file."""
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    rows = [r for r in data["rows"] if r.get("label", "").split()[:1] and r["label"].split()[0] not in kinds]
    kept = data.get("kept", {})
    for r in rows:   # the revision each row measured: its file's, or the file's kept rows' own
        r.setdefault("kernels", kept["kernels"] if r["label"].split()[0] in kept.get("kinds", ()) else data.get("kernels"))
    return {"rows": rows, "kernels": ", ".join(sorted({str(r["kernels"]) for r in rows}))}


def calls_forks(row: dict, which: Optional[str]) -> dict:
    """A --fit-sq8 row's forks to fit: the first calls', the warm ones', or their midpoint; None:
    the first calls' for a kernel of calibrate_sq8.COLD (in a graph it always follows another
    kernel: its code is cold), else the midpoint."""
    def one(k: str, v: list) -> list:
        how = which or ("first" if k in SQ8.COLD else "mean")
        if how == "mean":
            return [v[0], (v[1] + row["forks_warm"][k][1]) // 2, v[2]]
        return list(row["forks_cold" if how == "first" else "forks_warm"][k])
    return {k: one(k, v) for k, v in row["forks_cold"].items()}


def sq8_terms(rows: list, plat, shapes: dict) -> None:
    """Each SQ8 row's term sums with the current terms (``shapes``), no simulation: the layers
    declared again at the row's budget (the same tilings: ``plat`` as the fit ran it) and their
    schedules walked (the profiled fork cycles do not depend on the terms)."""
    rng = np.random.default_rng(0)
    for budget in sorted({r["budget"] for r in rows}, reverse=True):
        m = SQ8.sq8_case(plat, budget, rng)[0]
        for r in (r for r in rows if r["budget"] == budget):
            forks = {k: tuple(v) for k, v in r["forks"].items()}
            r["terms"] = shape_sums(kernel_tilings(m, r["kernel"]), m.libs, plat,
                                    {k: v for k, v in shapes.items() if k in forks}, forks)


def refit_sq8(args) -> int:
    """--refit: the SQ8 fit of a --fit-sq8 file again with the current terms, no simulation (the
    profiled fork cycles do not depend on the terms; their sums come from the schedules)."""
    data = json.loads(Path(args.refit).read_text())
    plat = model_platform(data["platform"], False, True)
    shapes, rows = dict(SQ8.SHAPES), data["rows"]
    for r in rows:   # the first and the warm calls' forks are both kept, whichever is fitted
        r["forks"] = calls_forks(r, args.calls)
    sq8_terms(rows, plat, shapes)
    window = data["constants"]["fork_window_cycles"]
    fit = fit_compute(rows, window, shapes)
    fit.pop("*", None)
    for r in rows:
        for k, (calls, cycles, cost) in r["forks"].items():
            model = fit[k].cycles(calls, cost, r["terms"].get(k, ()), window)
            print(f"  {r.get('label', r['kernel']):34} {r['budget']:>6} {k:32} {cycles:>9} {model:>11.0f} "
                  f"{100 * (model / cycles - 1):>+7.1f}%")
    print(compute_literal(fit))
    print(format_holdout(holdout(rows, window, shapes)))
    data.update(rows=rows, shapes=shapes, compute_fit={k: v.entry() for k, v in fit.items()})
    out = args.json if args.json != str(DEFAULT_JSON) else args.refit
    Path(out).write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


def networks_and_ranking(args) -> int:
    """--networks: the imported networks node by node; --ranking: the tiler's candidates of three
    layers on GVSoC (both on the platform as defined, with its fitted compute table)."""
    work = Path(tempfile.mkdtemp(prefix="calib-net-"))
    if args.kernels_rev:   # one commit for the whole run, whatever is committed meanwhile
        args.kernels_rev = SQ8.revision(args.kernels_rev)
    sources = SQ8.kernel_sources(args.kernels_rev, work / "kernels")
    try:
        if args.networks:
            results = []
            for name in SQ8.NETWORKS:
                results.append(SQ8.network_rows(name, work / name, sources))
                print(SQ8.format_networks(results[-1:]), flush=True)
            NETWORKS_JSON.parent.mkdir(parents=True, exist_ok=True)
            NETWORKS_JSON.write_text(json.dumps({"platform": args.platform, "kernels": SQ8.revision(args.kernels_rev),
                                                 "networks": results}, indent=1) + "\n")
            NETWORKS_JSON.with_suffix(".md").write_text(SQ8.networks_markdown(results))
            print(f"wrote {NETWORKS_JSON} and {NETWORKS_JSON.with_suffix('.md')}")
        if args.ranking:
            entries = SQ8.ranking_rows(get_platform(args.platform), work, sources=sources)
            print(SQ8.format_ranking(entries))
            for e in entries:
                e["summary"] = SQ8.ranking_summary(e)
            RANKING_JSON.write_text(json.dumps({"platform": args.platform, "kernels": SQ8.revision(args.kernels_rev),
                                                "layers": entries}, indent=1) + "\n")
            RANKING_JSON.with_suffix(".md").write_text(SQ8.ranking_markdown(entries))
            print(f"wrote {RANKING_JSON} and {RANKING_JSON.with_suffix('.md')}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


# pulp_open as first defined (commit 7441534: DMA figures from the GVSoC README and gap8's
# assumptions), before the micro-benchmarks, the duplex channels and the compute model.
BEFORE = {"cluster_dma": DmaEngine(setup_cycles=40, bytes_per_cycle=8.0, line_cycles=4, duplex=False),
          "dma_issue_cycles": 10, "wait_cycles": 4, "fork_cycles": 60, "compute": {}, "kernel_call_cycles": 0}


def model_platform(name: str, before: bool, fit: bool):
    """The platform to calibrate: as defined; as before this calibration (``before``, pulp_open
    only); or with every Cost= as written (``fit``: the compute model is fitted on them)."""
    plat = get_platform(name)
    if before:
        plat = plat.with_overrides(**BEFORE)
    if fit:
        plat = plat.with_overrides(compute={})
    return plat


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.holdout:
        data = json.loads(Path(args.holdout).read_text())
        constants = data["constants"]   # files before the window was measured: the fork was the window
        window = constants.get("fork_window_cycles", constants["fork_cycles"])
        print(format_holdout(holdout(data["rows"], window, data.get("shapes"))))
        return 0
    if args.refit:
        return refit_sq8(args)
    if not gvsoc.available():
        print(f"GVSoC is not installed: {gvsoc.INSTALL_HINT}", file=sys.stderr)
        return 2
    if args.before and args.platform != "pulp_open":
        print(f"--before describes pulp_open's first model, not {args.platform}'s", file=sys.stderr)
        return 2
    if args.networks or args.ranking:
        return networks_and_ranking(args)

    fit_mode = args.fit_compute or args.fit_sq8
    plat = model_platform(args.platform, args.before, fit_mode)
    # the terms of each platform's own Cost=, summed per run to fit their coefficients
    shapes = platform_shapes(get_platform(args.platform)) if args.fit_compute else {}
    if args.fit_sq8:
        shapes = dict(SQ8.SHAPES)
        if args.json == str(DEFAULT_JSON):
            args.json = str(SQ8_JSON)
    examples = args.examples.split(",") if args.examples else kernel_examples()
    rng = np.random.default_rng(0)
    rows, skipped = [], []
    kernels_dir = Path(tempfile.mkdtemp(prefix="calib-kernels-"))
    if args.kernels_rev:   # one commit for the whole run, whatever is committed meanwhile
        args.kernels_rev = SQ8.revision(args.kernels_rev)
    sq8 = SQ8.kernel_sources(args.kernels_rev, kernels_dir) if args.fit_sq8 else None
    kinds = sq8_kinds(args.sq8_only)
    for name, make in cases(examples, plat, args.quick, rng, sq8, kinds):
        work = Path(tempfile.mkdtemp(prefix="calib-"))
        try:
            runner = run_case_warm if args.fit_sq8 else run_case
            rows += runner(*make(), plat, work, profile=fit_mode, shapes=shapes)
            print(f"{name}: done", flush=True)
        except WrongOutput as err:
            print(f"CALIBRATION ABORTED, generated code computes a wrong result: {err}", file=sys.stderr)
            return 2
        except WrongTermSums as err:
            print(f"CALIBRATION ABORTED, the compute fit's term sums are not the run's: {err}", file=sys.stderr)
            return 2
        except (AutoTilerError, HarnessError) as err:
            skipped.append({"case": name, "why": str(err).splitlines()[0][:300]})
            print(f"{name}: skipped ({skipped[-1]['why']})", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    kept = kept_rows(Path(args.json), kinds) if args.fit_sq8 and kinds else None
    for r in kept["rows"] if kept else ():   # their term sums with the current terms
        r["forks"] = calls_forks(r, args.calls)
    if kept:
        sq8_terms(kept["rows"], plat, shapes)
        rows += kept["rows"]
    for r in rows if args.fit_sq8 else ():   # the calls each kernel's fit takes (--calls)
        r["forks"] = calls_forks(r, args.calls)
    print(format_rows(rows))
    s = summary(rows)
    print(f"\nplatform {plat.name}: {s['kernels']} kernel runs ({s['dma_bound']} DMA bound); predicted vs GVSoC: "
          f"median |err| {100 * s['median_abs_predicted']:.1f}%, worst {100 * s['worst_predicted']:.1f}% "
          f"(DMA bound {100 * s['worst_dma_bound_predicted']:.1f}%); ranking {s['rank_agree']}/{s['rank_pairs']} "
          f"pairs ({100 * s['rank_ratio']:.0f}%)")
    for k, ok in s["targets"].items():
        print(f"  [{'NONE: no such row' if ok is None else 'PASS' if ok else 'FAIL'}] {k}")
    if args.compare:
        print("\n" + format_comparison(json.loads(Path(args.compare).read_text())["rows"], rows))
    window = fork_window_cycles()
    fit = fit_compute(rows, window, shapes) if fit_mode else {}
    if args.fit_sq8:   # the SQ8 entries join the table: '*' stays the other kernels' mean
        fit.pop("*", None)
    if fit:
        print("\nfitted compute model (basic kernel: percent of Cost= or its own cost, cycles per call beyond "
              "an empty kernel's fork window; worst fit error):")
        for k, v in fit.items():
            model = v.cost() if v.terms else f"{v.percent}%"
            print(f"  {k:40} {model} +{v.per_call}  {v.runs} runs  {100 * v.worst_fit_error:.1f}%")
        print(compute_literal(fit))
        if args.fit_sq8:
            print("\nout of sample (each run predicted by the table fitted on the other runs):")
            print(format_holdout(holdout(rows, window, shapes)))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    constants = {"cluster_dma": vars(plat.cluster_dma), "dma_issue_cycles": plat.dma_issue_cycles,
                 "wait_cycles": plat.wait_cycles, "fork_cycles": plat.fork_cycles, "fork_window_cycles": window,
                 "kernel_call_cycles": plat.kernel_call_cycles,
                 "compute": {k: vars(v) for k, v in plat.compute.items()}}
    shutil.rmtree(kernels_dir, ignore_errors=True)
    extra = {"kernels": SQ8.revision(args.kernels_rev)} if args.fit_sq8 else {}
    if kept:
        extra["kept"] = {"kinds": sorted(set(SQ8.KINDS) - kinds), "kernels": kept["kernels"], "rows": len(kept["rows"])}
    for r in rows if args.fit_sq8 else ():   # each row's kernels (a later --sq8-only keeps it with them)
        r.setdefault("kernels", extra["kernels"])
    Path(args.json).write_text(json.dumps({"platform": plat.name, "model": "before" if args.before else "current", **extra,
                                           "constants": constants, "summary": s, "rows": rows, "shapes": shapes,
                                           "compute_fit": {k: v.entry() for k, v in fit.items()},
                                           "skipped": skipped}, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
