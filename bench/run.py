"""Benchmark: every guide example x platform (gap8, gap9) x tiling objective, generated, built,
run on the simulated chip, checked against numpy, and compared with lower bounds.

    python bench/run.py [--json PATH] [--platforms gap8,gap9] [--examples a,b] [--quick]

Prints one table (a row per user kernel x platform x objective, plus a row per kernel-group call,
plus, for models with L3-homed arguments, the 'time' tiling re-staged with 2 and with 3 L2 slots),
the double-vs-triple staging comparison, then the issue's four targets with PASS/FAIL, and writes
everything as JSON (default bench/results/latest.json) for ``bench/compare.py OLD.json NEW.json``.
See bench/README.md.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import importlib.util
import json
import math
import platform as pyplatform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import host_harness  # noqa: E402
from autotiler import Model, SetTilingObjective  # noqa: E402
from autotiler.bounds import compulsory, compulsory_l3, dma_bound_cycles, kernel_figures, movement_bound  # noqa: E402
from autotiler.codegen import generate, write_files  # noqa: E402
from autotiler.constants import Object_Type_T  # noqa: E402
from autotiler.errors import PlatformError, TilingError  # noqa: E402
from autotiler.model.ir import CArgBinding  # noqa: E402
from autotiler.objectives import SolveOptions, candidates, reschedule  # noqa: E402
from autotiler.platforms import get_platform  # noqa: E402
from autotiler.schedule.build import Unsupported  # noqa: E402
from autotiler.schedule.estimate import Estimator  # noqa: E402
from autotiler.tiler.search import promoted_choice  # noqa: E402
from autotiler.tiler.tiling import build_tiling, l2_fits, with_stages  # noqa: E402

EXAMPLES_DIR = ROOT / "examples"
PLATFORMS = ("gap8", "gap9")
OBJECTIVES = ("time", "original", "naive", "max_l1", "traffic")
# Models with L3-homed (O_L2DB) arguments are also run with the 'time' tiling re-staged: every L3
# argument through STAGE_DEPTHS[i] L2 slots (row objective "stage2", "stage3").
STAGE_DEPTHS = (2, 3)
VARIANTS = tuple(f"stage{s}" for s in STAGE_DEPTHS)
# The guide's MatAdd (3 x 200x300 Word32) needs 720 KB of L2: more than GAP8's 512 KB.
L2_SIZE = 4 * 1024 * 1024
DEFAULT_JSON = ROOT / "bench" / "results" / "latest.json"
FORMAT = "autotiler-bench/1"

# Targets of issue [2/4] section 5 (checked and reported, never asserted in tests).
ROOFLINE_TARGET = 1.15      # simulated / roofline, kernels whose work can overlap
TRAFFIC_TARGET = 1.10       # geometric mean of traffic / compulsory, kernels needing no reload
PREDICTION_TARGET = 0.05    # |predicted - simulated| / simulated


# ---------------------------------------------------------------------------------------------
# Examples
# ---------------------------------------------------------------------------------------------

def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def example_names() -> list:
    return sorted(p.parent.name for p in EXAMPLES_DIR.glob("*/model.py"))


# The networks, benchmarked by their own scripts (a whole network per objective here would take
# many minutes and say less than these do).
OWN_BENCHMARKS = {"mnist": "make demo, bench/cnn_baselines.py",
                  "mobilenet": "bench/mobilenet.py, bench/cnn_baselines.py, bench/cnn_generation.py",
                  "mobilenet_sq8": "bench/mobilenet.py"}


def kernel_examples() -> list:
    """The examples with the generic kernel interface (an L1 budget, a reference making the
    arguments of the one kernel it calls), but the networks of OWN_BENCHMARKS."""
    out = []
    for name in example_names():
        mod, ref = load_example(name)
        if name not in OWN_BENCHMARKS and hasattr(mod, "L1_BUDGET") and hasattr(ref, "make_args"):
            out.append(name)
    return out


def load_example(name: str) -> tuple:
    """(model module, reference module) of examples/<name>."""
    model = load_module(EXAMPLES_DIR / name / "model.py", f"bench_model_{name}")
    ref = load_module(EXAMPLES_DIR / name / "reference.py", f"bench_reference_{name}")
    return model, ref


def budget_for(example_budget: int, platform_name: str) -> int:
    """gap8: the example's own L1 budget; other chips: scaled by their L1 size over gap8's."""
    return example_budget * get_platform(platform_name).l1_size // get_platform("gap8").l1_size


# ---------------------------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------------------------

def generate_model(mod, platform_name: str, budget: int, objective: str) -> tuple:
    """Declare (and so tile) the example's model and generate its C.
    Returns (model, files, declare+tiling ms, codegen ms)."""
    with Model(platform_name) as m:
        SetTilingObjective(objective)
        t0 = time.perf_counter()
        mod.declare(l1=budget)
        t1 = time.perf_counter()
        files = generate(m)
        t2 = time.perf_counter()
    return m, files, (t1 - t0) * 1e3, (t2 - t1) * 1e3


def restage(m, depth: int) -> None:
    """Give every L3 argument of every tiling of model ``m`` ``depth`` L2 staging slots
    (tiler.with_stages: capped by the argument's instance count) and re-predict the tiling; the
    tiles and the L1 layout stay those the objective chose. A variant that does not fit the
    model's L2 budget is a TilingError, like an objective without a solution."""
    for name, t in m.tilings.items():
        if not has_l3(t):
            continue
        v = with_stages(t, {a.name: depth for a in t.args if a.l3})
        if not l2_fits(v, m.l2_budget):
            raise TilingError(f"{depth} L2 staging slots per L3 argument need {v.l2_bytes} bytes of L2, "
                              f"more than the budget of {m.l2_budget}", kernel=name)
        m.tilings[name] = reschedule(v, m.libs, m.platform)


def has_l3(t) -> bool:
    return any(a.l3 for a in t.args)


def stages_text(t) -> str:
    """Staging depth of each L3 argument, in KerArgs order: "2/2/3" ('' without L3 arguments)."""
    return "/".join(str(a.stage) for a in t.args if a.l3)


def build_program(files: dict, gen_dir: Path, example: str, ref, platform_name: str):
    write_files(files, str(gen_dir))
    plat = get_platform(platform_name, l2_size=L2_SIZE)
    return host_harness.build(gen_dir, sources=[EXAMPLES_DIR / example / s for s in ref.SOURCES],
                              include_dirs=[EXAMPLES_DIR / example, *getattr(ref, "INCLUDE_DIRS", ())], platform=plat)


# ---------------------------------------------------------------------------------------------
# Running on the simulated chip
# ---------------------------------------------------------------------------------------------

class WrongOutput(AssertionError):
    """A benchmark of wrong code is worthless."""


def check_outputs(args: dict, expected: dict, what: str) -> None:
    for name, value in expected.items():
        if not np.array_equal(args[name], value):
            bad = int(np.count_nonzero(args[name] != value))
            raise WrongOutput(f"{what}: output '{name}' differs from the numpy reference in {bad} item(s)")


def kernel_calls(model, ref) -> list:
    """[(user kernel, {kernel arg: caller arg})] that one call of ``ref.KERNEL`` runs, in order;
    None for a group whose bindings are not plain C_Arg (then only the group total is measured)."""
    if ref.KERNEL in model.kernels:
        uk = model.kernels[ref.KERNEL]
        return [(ref.KERNEL, {c.name: c.name for c in uk.cargs})]
    calls = []
    for call in model.groups[ref.KERNEL].calls:
        uk = model.kernels[call.name]
        if not all(isinstance(b, CArgBinding) for b in call.bindings):
            return None
        calls.append((call.name, {c.name: b.name for c, b in zip(uk.cargs, call.bindings)}))
    return calls


def run_once(program, ref, example: str) -> dict:
    """Run the example's function once (seed 0), check it; {kernel name: counters}."""
    args = ref.make_args(np.random.default_rng(0))
    expected = ref.expected(args)
    counters = program.call(ref.KERNEL, **args)
    check_outputs(args, expected, f"{example}: {ref.KERNEL}")
    return counters


def run_kernels(program, ref, calls: list, example: str) -> dict:
    """Run the user kernels of a group one at a time on the group's arguments (seed 0), check
    the final outputs; {kernel name: counters}."""
    args = ref.make_args(np.random.default_rng(0))
    expected = ref.expected(args)
    counters = {}
    for name, binding in calls:
        counters[name] = program.call(name, **{k: args[v] for k, v in binding.items()})
    check_outputs(args, expected, f"{example}: {' then '.join(n for n, _ in calls)}")
    return counters


def simulate(program, model, ref, example: str) -> tuple:
    """(counters of one call of ref.KERNEL, {kernel: counters} or {} when not separable)."""
    total = run_once(program, ref, example)
    calls = kernel_calls(model, ref)
    if calls is None:
        return total, {}
    if len(calls) == 1:
        return total, {calls[0][0]: total}
    return total, run_kernels(program, ref, calls, example)


# ---------------------------------------------------------------------------------------------
# Bounds and per-kernel figures
# ---------------------------------------------------------------------------------------------

def whole_tiling(t):
    """The kernel as one tile, everything resident in L1 (fits the budget or not)."""
    return build_tiling(t.geom, promoted_choice(t.geom), t.budget)


def lower_bounds(t, libs: dict, plat) -> dict:
    """Tiling-independent bounds of a kernel at its budget: compute = the calls and forks of the
    kernel run as one tile (any tiling makes at least these calls, each at least this long);
    DMA = max(compulsory, reuse bound) bytes at the cluster DMA's bandwidth; uDMA = the L3-homed
    arguments' bytes, each crossing L3<->L2 once, at the micro-DMA's (``udma["ram"]``)."""
    try:
        whole = reschedule(whole_tiling(t), libs, plat).predicted
        compute = whole["compute_cycles"] + whole["fork_cycles"]
    except Unsupported:  # e.g. KER_ARG_TILE_NEXTDB has no next buffer in one tile: the calls' costs alone
        compute = Estimator(t.kernel, libs, plat).compute(whole_tiling(t))
    c_in, c_out = compulsory(t)
    dma = dma_bound_cycles(plat, c_in, c_out, movement_bound(t, t.budget))
    l3 = compulsory_l3(t)
    udma = math.ceil(l3 / plat.udma["ram"].bytes_per_cycle) if l3 else 0
    return {"compute_bound_cycles": compute, "dma_bound_cycles": dma, "udma_bound_cycles": udma,
            "roofline_cycles": max(compute, dma, udma), "bound": bound_name(compute, dma, udma),
            "compulsory_in": c_in, "compulsory_out": c_out, "l3_compulsory": l3}


def bound_name(compute: int, dma: int, udma: int) -> str:
    """Which bound the roofline is: compute, memory (cluster DMA, L2<->L1) or L3 (uDMA, L3<->L2)."""
    return "compute" if compute >= max(dma, udma) else "memory" if dma >= udma else "L3"


def overlap_capable(t) -> bool:
    """Target 1 applies: the kernel cannot be held whole in the L1 budget (so every tiling streams
    several tiles) and every argument it moves is double buffered (so transfers can overlap
    compute)."""
    moved = [a for a in t.args if a.reads or a.writes]
    return whole_tiling(t).l1_bytes > t.budget and all(a.decl.has(Object_Type_T.O_DB) for a in moved)


_RELOAD_FREE: dict = {}  # (kernel declaration, budget, platform name) -> bool: the same for every objective


def reload_free(t, libs: dict, plat) -> bool:
    """Target 2 applies ("the whole reduction fits L1"): some tiling within the budget moves
    every input byte L2 -> L1 exactly once (no input is re-read across planes or tiles)."""
    key = (t.kernel, t.budget, plat.name)
    if key not in _RELOAD_FREE:
        options = SolveOptions(budget=t.budget, objective="traffic", platform=plat, libs=libs)
        best = min((c.traffic_in for c in candidates(t.kernel, options)), default=None)
        _RELOAD_FREE[key] = best is not None and best <= compulsory(t)[0]
    return _RELOAD_FREE[key]


def kernel_row(t, libs: dict, plat, counters) -> dict:
    """Every figure of one kernel's tiling: plan, traffic, predicted and simulated cycles, bounds."""
    b = lower_bounds(t, libs, plat)
    comp = b["compulsory_in"] + b["compulsory_out"]
    pred = t.predicted
    row = {"tiles": t.ntiles, "l1_bytes": t.l1_bytes, "budget": t.budget, "l1_pct": 100.0 * t.l1_bytes / t.budget,
           "traffic_in": t.traffic_in, "traffic_out": t.traffic_out, "traffic": t.traffic, "compulsory": comp,
           "traffic_ratio": t.traffic / comp if comp else 1.0, "predicted_cycles": pred.cycles,
           "predicted": dict(pred), "describe": t.describe(), **b, **l3_fields(t, pred),
           "tiling_figures": {k: v for k, v in kernel_figures(t, plat).items() if k != "predicted_cycles"},
           "overlap_capable": overlap_capable(t), "reload_free": reload_free(t, libs, plat)}
    add_simulated(row, counters)
    return row


def l3_fields(t, pred) -> dict:
    """L3 level of a tiling: L3<->L2 bytes against the compulsory ones, L2 staging, depths.
    None (printed '-') for a kernel without L3-homed arguments."""
    if not has_l3(t):
        return {"l3_args": 0, "traffic_l3_in": 0, "traffic_l3_out": 0, "traffic_l3": 0, "l3_traffic_ratio": None,
                "l2_staging_bytes": 0, "stages": None, "stage_by_arg": {}, "predicted_udma_busy_cycles": None}
    l3 = compulsory_l3(t)
    return {"l3_args": sum(1 for a in t.args if a.l3), "traffic_l3_in": t.traffic_l3_in,
            "traffic_l3_out": t.traffic_l3_out, "traffic_l3": t.traffic_l3,
            "l3_traffic_ratio": t.traffic_l3 / l3 if l3 else 1.0, "l2_staging_bytes": t.l2_bytes,
            "stages": stages_text(t), "stage_by_arg": {a.name: a.stage for a in t.args if a.l3},
            "predicted_udma_busy_cycles": pred["udma_busy_cycles"]}


def add_simulated(row: dict, counters) -> None:
    """Simulated figures and the ratios that need them (None when not measured separately)."""
    roof, pred = row["roofline_cycles"], row["predicted_cycles"]
    row["pred_vs_roofline"] = pred / roof if roof else None
    if counters is None:
        row.update(simulated_cycles=None, sim_vs_roofline=None, prediction_error_pct=None, simulated=None,
                   udma_busy_cycles=None)
        return
    sim = counters["cycles"]
    row["simulated_cycles"] = sim
    row["simulated"] = {k: counters[k] for k in ("cycles", "compute_cycles", "stall_cycles", "fork_cycles",
                                                 "l2_to_l1", "l1_to_l2", "l3_to_l2", "l2_to_l3", "peak_l1",
                                                 "peak_l2", "peak_l3", "transfers")}
    row["simulated"]["dma_busy_cycles"] = counters["dma_busy_cycles"]["cluster"]
    row["simulated"]["udma_busy_cycles"] = counters["dma_busy_cycles"]["udma"]
    # Shown in the uDMA busy column for kernels with L3 arguments only (the others never use it).
    row["udma_busy_cycles"] = row["simulated"]["udma_busy_cycles"] if row.get("l3_args") else None
    row["sim_vs_roofline"] = sim / roof if roof else None
    row["prediction_error_pct"] = 100.0 * (pred - sim) / sim if sim else 0.0


def group_row(kernel_rows: list, total: dict) -> dict:
    """The group call: simulated total against the sums of its kernels' predictions and bounds."""
    keys = ("traffic_in", "traffic_out", "traffic", "compulsory", "predicted_cycles", "compute_bound_cycles",
            "dma_bound_cycles", "udma_bound_cycles", "roofline_cycles", "l3_args", "traffic_l3_in",
            "traffic_l3_out", "traffic_l3", "l3_compulsory")
    row = {k: sum(r[k] for r in kernel_rows) for k in keys}
    row.update(tiles="+".join(str(r["tiles"]) for r in kernel_rows), l1_bytes=max(r["l1_bytes"] for r in kernel_rows),
               budget=kernel_rows[0]["budget"], traffic_ratio=row["traffic"] / row["compulsory"],
               bound=bound_name(row["compute_bound_cycles"], row["dma_bound_cycles"], row["udma_bound_cycles"]))
    row["l1_pct"] = 100.0 * row["l1_bytes"] / row["budget"]
    staged = [r for r in kernel_rows if r["l3_args"]]
    row.update(l3_traffic_ratio=row["traffic_l3"] / row["l3_compulsory"] if row["l3_compulsory"] else None,
               l2_staging_bytes=max((r["l2_staging_bytes"] for r in staged), default=0),
               stages="+".join(r["stages"] for r in staged) or None)
    add_simulated(row, total)
    return row


# ---------------------------------------------------------------------------------------------
# One example x platform x objective
# ---------------------------------------------------------------------------------------------

def bench_case(example: str, mod, ref, platform_name: str, objective: str, work: Path, progress=print) -> list:
    """Rows of one (example, platform, objective): one per user kernel, plus one for a group.
    For 'time' on a model with L3-homed arguments, also the rows of its tiling re-staged to each
    of STAGE_DEPTHS L2 slots (objective "stage<N>", see restage)."""
    budget = budget_for(mod.L1_BUDGET, platform_name)
    base = {"example": example, "platform": platform_name, "objective": objective, "budget": budget}
    progress(f"  {example:<12} {platform_name} {objective}")
    try:
        model, files, tile_ms, codegen_ms = generate_model(mod, platform_name, budget, objective)
    except TilingError as err:
        return [{**base, "kernel": ref.KERNEL, "group": False, "error": str(err)}]
    base.update(tiling_ms=tile_ms, codegen_ms=codegen_ms, generation_ms=tile_ms + codegen_ms)
    rows = measure(example, ref, model, files, base, work)
    if objective == "time" and any(has_l3(t) for t in model.tilings.values()):
        for depth, label in zip(STAGE_DEPTHS, VARIANTS):
            progress(f"  {example:<12} {platform_name} {label} (the time tiling, {depth} L2 slots per L3 argument)")
            rows += bench_restaged(example, ref, model, depth, {**base, "objective": label, "variant_of": objective},
                                   work)
    return rows


def bench_restaged(example: str, ref, model, depth: int, base: dict, work: Path) -> list:
    """Rows of ``model``'s tilings re-staged to ``depth`` L2 slots per L3 argument (on a copy of
    the model). Timings: the objective's tiling plus the re-staging, and the new codegen."""
    variant = copy.copy(model)
    variant.tilings = dict(model.tilings)
    t0 = time.perf_counter()
    try:
        restage(variant, depth)
    except TilingError as err:
        return [{**base, "kernel": ref.KERNEL, "group": False, "error": str(err)}]
    t1 = time.perf_counter()
    files = generate(variant)
    t2 = time.perf_counter()
    tile_ms = base["tiling_ms"] + (t1 - t0) * 1e3
    base = {**base, "tiling_ms": tile_ms, "codegen_ms": (t2 - t1) * 1e3, "generation_ms": tile_ms + (t2 - t1) * 1e3}
    return measure(example, ref, variant, files, base, work)


def measure(example: str, ref, model, files: dict, base: dict, work: Path) -> list:
    """Build and run generated ``files`` and make the rows of every kernel (and group) of ``model``."""
    gen_dir = work / example / base["platform"] / base["objective"]
    program = build_program(files, gen_dir, example, ref, base["platform"])
    total, per_kernel = simulate(program, model, ref, example)
    rows = [{**base, "kernel": name, "group": False,
             **kernel_row(t, model.libs, model.platform, per_kernel.get(name))}
            for name, t in model.tilings.items()]
    if ref.KERNEL in model.groups:
        rows.append({**base, "kernel": ref.KERNEL, "group": True, **group_row(rows, total)})
    return rows


def warm_up(example: str) -> None:
    """Generate one model untimed, so that imports and template compilation are not charged to
    the first measured generation."""
    mod, _ = load_example(example)
    generate_model(mod, "gap8", mod.L1_BUDGET, "original")


def run_all(examples: list, platforms: list, objectives: list, progress=print) -> list:
    rows = []
    warm_up(examples[0])
    with tempfile.TemporaryDirectory(prefix="autotiler-bench-") as tmp:
        for example in examples:
            mod, ref = load_example(example)
            for platform_name in platforms:
                for objective in objectives:
                    rows += bench_case(example, mod, ref, platform_name, objective, Path(tmp), progress)
    return rows


# ---------------------------------------------------------------------------------------------
# Table
# ---------------------------------------------------------------------------------------------

COLUMNS = (
    # header, row key, format
    ("kernel", "name", "{}"), ("chip", "platform", "{}"), ("objective", "objective", "{}"),
    ("tiles", "tiles", "{}"), ("L1 B", "l1_bytes", "{}"), ("L1 %", "l1_pct", "{:.0f}"),
    ("traf/comp", "traffic_ratio", "{:.2f}"), ("predicted", "predicted_cycles", "{}"),
    ("simulated", "simulated_cycles", "{}"), ("roofline", "roofline_cycles", "{}"),
    ("pred/roof", "pred_vs_roofline", "{:.2f}"), ("sim/roof", "sim_vs_roofline", "{:.2f}"),
    ("err %", "prediction_error_pct", "{:+.1f}"), ("bound", "bound", "{}"), ("gen ms", "generation_ms", "{:.0f}"),
)
# Appended when some row has L3-homed arguments ('-' on the rows without).
L3_COLUMNS = (
    ("L3 B", "traffic_l3", "{}"), ("L3/comp", "l3_traffic_ratio", "{:.2f}"), ("uDMA busy", "udma_busy_cycles", "{}"),
    ("L2 stg B", "l2_staging_bytes", "{}"), ("stages", "stages", "{}"),
)
LEFT = {"kernel", "chip", "objective", "bound", "stages"}


def row_name(r: dict) -> str:
    return f"{r['example']}/{r['kernel']}" + (" (group)" if r.get("group") else "")


def cell(r: dict, key: str, fmt: str) -> str:
    if key == "name":
        return row_name(r)
    if "error" in r and key not in ("platform", "objective"):
        return "no tiling" if key == "tiles" else ""
    value = r.get(key)
    if key in ("traffic_l3", "l2_staging_bytes") and not r.get("l3_args"):
        value = None
    return "-" if value is None else fmt.format(value)


def table_columns(rows: list) -> tuple:
    return COLUMNS + (L3_COLUMNS if any(r.get("l3_args") for r in rows) else ())


def format_table(rows: list) -> str:
    columns = table_columns(rows)
    cells = [[cell(r, key, fmt) for _, key, fmt in columns] for r in rows]
    headers = [h for h, _, _ in columns]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(headers)]
    left = {i for i, h in enumerate(headers) if h in LEFT}

    def line(values):
        return "  ".join(v.ljust(w) if i in left else v.rjust(w)
                         for i, (v, w) in enumerate(zip(values, widths))).rstrip()

    out, previous = [line(headers), "  ".join("-" * w for w in widths)], None
    for r, c in zip(rows, cells):
        block = (r["example"], r["kernel"], r["platform"])
        if previous is not None and block != previous:
            out.append("")
        out.append(line(c))
        previous = block
    return "\n".join(out)


def sort_rows(rows: list) -> list:
    """Kernel, then platform, then objective in OBJECTIVES order, then the staging variants (group
    rows after their kernels)."""
    order = {o: i for i, o in enumerate(OBJECTIVES + VARIANTS)}
    first = {}
    for i, r in enumerate(rows):
        first.setdefault((r["example"], r["kernel"]), i)
    return sorted(rows, key=lambda r: (first[(r["example"], r["kernel"])], r["platform"],
                                       order.get(r["objective"], len(order))))


# ---------------------------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------------------------

def kernel_rows(rows: list, objective: str = None) -> list:
    return [r for r in rows if not r.get("group") and "error" not in r
            and (objective is None or r["objective"] == objective)]


def target_roofline(rows: list) -> dict:
    applies = [r for r in kernel_rows(rows, "time") if r["overlap_capable"] and r["simulated_cycles"] is not None]
    fails = [r for r in applies if r["sim_vs_roofline"] > ROOFLINE_TARGET]
    lines = [f"{row_name(r)} @{r['platform']}: simulated {r['simulated_cycles']} / roofline {r['roofline_cycles']} "
             f"= {r['sim_vs_roofline']:.2f} ({r['bound']}-bound)" + (_why_slow(r) if r in fails else "")
             for r in applies]
    return {"name": "roofline", "title": f"simulated cycles <= {ROOFLINE_TARGET}x roofline (objective 'time')",
            "applies_to": "kernels that do not fit the L1 budget whole (so they stream several tiles) and move "
                          "only double-buffered arguments: DMA and compute can overlap",
            "passed": bool(applies) and not fails, "lines": lines, "failed": [_key(r) for r in fails]}


def _why_slow(r: dict) -> str:
    """Where the cycles above the roofline went (simulated counters)."""
    s = r["simulated"]
    extra_compute = s["compute_cycles"] + s["fork_cycles"] - r["compute_bound_cycles"]
    moved_dma = s["dma_busy_cycles"]
    l3 = (f", uDMA {r['udma_bound_cycles']}" if r.get("l3_args") else "")
    l3_busy = (f", uDMA busy {s['udma_busy_cycles']} (L3 traffic {r['l3_traffic_ratio']:.2f}x compulsory)"
               if r.get("l3_args") else "")
    return (f"  <-- FAIL: compute {r['compute_bound_cycles']} vs DMA {r['dma_bound_cycles']}{l3} bound; "
            f"stalls {s['stall_cycles']}, per-tile calls/forks +{extra_compute}, DMA busy {moved_dma} "
            f"(traffic {r['traffic_ratio']:.2f}x compulsory){l3_busy}")


def target_traffic(rows: list) -> dict:
    applies = [r for r in kernel_rows(rows, "time") if r["reload_free"]]
    ratios = [r["traffic_ratio"] for r in applies]
    gmean = math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else None
    lines = [f"{row_name(r)} @{r['platform']}: traffic {r['traffic']} B / compulsory {r['compulsory']} B "
             f"= {r['traffic_ratio']:.2f}" for r in applies]
    excluded = sorted({f"{row_name(r)} @{r['platform']}" for r in kernel_rows(rows, "time") if not r["reload_free"]})
    if excluded:
        lines.append("not applicable (every tiling within the budget re-reads some input): " + ", ".join(excluded))
    lines.append("geometric mean: " + ("-" if gmean is None else f"{gmean:.3f}"))
    return {"name": "traffic", "title": f"geometric-mean traffic / compulsory <= {TRAFFIC_TARGET} (objective 'time')",
            "applies_to": "kernels with a tiling within the budget that moves every input byte once "
                          "(no input argument moved more than its size): 'the whole reduction fits L1'",
            "passed": gmean is not None and gmean <= TRAFFIC_TARGET, "value": gmean, "lines": lines}


def _same_kernel(a: dict, r: dict) -> bool:
    return a["example"] == r["example"] and a["kernel"] == r["kernel"] and a["platform"] == r["platform"] \
        and a.get("group") == r.get("group")


def _best_alternative(rows: list, r: dict, key: str, objectives=OBJECTIVES):
    alts = [a for a in rows if _same_kernel(a, r) and a["objective"] != "time" and a["objective"] in objectives
            and a.get(key) is not None]
    return min(alts, key=lambda a: a[key], default=None)


def _versus(r: dict, best: dict, what: str) -> tuple:
    ok = r["simulated_cycles"] <= best["simulated_cycles"]
    return ok, (f"{what} {best['objective']} {best['simulated_cycles']} "
                f"({r['simulated_cycles'] / best['simulated_cycles']:.3f}x){'' if ok else '  <-- worse'}")


def target_alternatives(rows: list) -> dict:
    """Per kernel (and per group call), simulated cycles of 'time' against every other objective
    and, for kernels with L3 arguments, against its own tiling re-staged with 2 and 3 L2 slots."""
    lines, fails = [], []
    for r in [x for x in rows if x["objective"] == "time" and "error" not in x]:
        if r["simulated_cycles"] is None:
            continue
        parts, ok = [], True
        best = _best_alternative(rows, r, "simulated_cycles")
        if best is not None:
            good, text = _versus(r, best, "best other")
            parts.append(text)
            ok &= good
        staged = _best_alternative(rows, r, "simulated_cycles", VARIANTS)
        if staged is not None:
            good, text = _versus(r, staged, "best re-staging")
            parts.append(text)
            ok &= good
        if not parts:
            continue
        chosen = f" ({r['stages']} L2 slots)" if r.get("stages") else ""
        lines.append(f"{row_name(r)} @{r['platform']}: time{chosen} {r['simulated_cycles']}, " + ", ".join(parts))
        if not ok:
            fails.append(_key(r))
    return {"name": "alternatives",
            "title": "objective 'time' never slower (simulated) than any other objective, nor than its own "
                     "tiling re-staged with " + " or ".join(str(d) for d in STAGE_DEPTHS) + " L2 slots per L3 argument",
            "applies_to": "every kernel and kernel-group call, each platform; re-staging: kernels with L3-homed "
                          "(O_L2DB) arguments",
            "passed": bool(lines) and not fails, "lines": lines, "failed": fails}


def staging_summary(rows: list) -> list:
    """Double vs triple L2 staging, per kernel (and group call) with L3 arguments and platform:
    simulated (and predicted) cycles of the 'time' tiling with every L3 argument at 2 and at 3
    slots, and what 'time' chose."""
    out = []
    for r in [x for x in rows if x["objective"] == "time" and x.get("l3_args") and "error" not in x]:
        entry = {"kernel": row_name(r), "platform": r["platform"], "chosen_stages": r["stages"],
                 "chosen_simulated": r["simulated_cycles"], "chosen_predicted": r["predicted_cycles"],
                 "chosen_l2_bytes": r["l2_staging_bytes"],
                 "peak_l2": (r["simulated"] or {}).get("peak_l2"),
                 "chip_l2": get_platform(r["platform"]).l2_size}
        for label in VARIANTS:
            v = next((a for a in rows if _same_kernel(a, r) and a["objective"] == label), None)
            entry[label] = None if v is None else {
                "stages": v.get("stages"), "simulated": v.get("simulated_cycles"), "predicted": v.get("predicted_cycles"),
                "l2_bytes": v.get("l2_staging_bytes"), "error": v.get("error")}
        out.append(entry)
    return out


def _staged_figures(v) -> str:
    if v is None:
        return "not run"
    if v["simulated"] is None:
        return v["error"] or "not measured"
    return f"{v['simulated']} cycles ({v['stages']}, {v['l2_bytes']} B L2, predicted {v['predicted']})"


def format_staging(summary: list) -> str:
    out = ["L3 staging: the 'time' tiling with every L3 argument staged through 2 (double) or 3 (triple) L2 slots"]
    for e in summary:
        d, t = e.get("stage2"), e.get("stage3")
        gain = ""
        if d and t and d["simulated"] and t["simulated"]:
            gain = f"; triple / double {t['simulated'] / d['simulated']:.4f}"
        out.append(f"  {e['kernel']} @{e['platform']}: double {_staged_figures(d)}; triple {_staged_figures(t)}{gain}")
        peak = "-" if e["peak_l2"] is None else f"{e['peak_l2']} B"
        out.append(f"    time chose {e['chosen_stages']}: {e['chosen_simulated']} cycles, {e['chosen_l2_bytes']} B of "
                   f"L2 staging; simulated peak L2 {peak} of the chip's {e['chip_l2'] // 1024} KiB")
    return "\n".join(out)


def target_prediction(rows: list) -> dict:
    measured = [r for r in rows if "error" not in r and r.get("simulated_cycles") is not None]
    worst = max(measured, key=lambda r: abs(r["prediction_error_pct"]), default=None)
    fails = [r for r in measured if abs(r["prediction_error_pct"]) > 100 * PREDICTION_TARGET]
    lines = [f"{len(measured)} rows measured, {len(fails)} outside +-{100 * PREDICTION_TARGET:.0f}%"]
    if worst is not None:
        lines.append(f"worst: {_key(worst)}: predicted {worst['predicted_cycles']}, simulated "
                     f"{worst['simulated_cycles']} ({worst['prediction_error_pct']:+.2f}%)")
    return {"name": "prediction", "title": f"predicted cycles within {100 * PREDICTION_TARGET:.0f}% of simulated",
            "applies_to": "every row (all objectives, kernels and group calls)",
            "passed": bool(measured) and not fails, "lines": lines, "failed": [_key(r) for r in fails]}


def _key(r: dict) -> str:
    return f"{row_name(r)}@{r['platform']}:{r['objective']}"


def check_targets(rows: list) -> list:
    return [target_roofline(rows), target_traffic(rows), target_alternatives(rows), target_prediction(rows)]


def format_targets(targets: list) -> str:
    out = ["Targets"]
    for i, t in enumerate(targets, 1):
        out.append(f"{i}. [{'PASS' if t['passed'] else 'FAIL'}] {t['title']}")
        out.append(f"   applies to: {t['applies_to']}")
        out += [f"   {line}" for line in t["lines"]]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------------------------

def git_state() -> dict:
    def git(*args):
        proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
        return proc.stdout.strip() if proc.returncode == 0 else None

    try:
        commit = git("rev-parse", "HEAD")
        status = git("status", "--porcelain")
    except OSError:
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def platform_json(name: str) -> dict:
    plat = get_platform(name, l2_size=L2_SIZE)
    data = dataclasses.asdict(plat)
    data.pop("notes", None)
    return data


def results_json(rows: list, targets: list, platforms: list, examples: list) -> dict:
    return {
        "format": FORMAT, "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "git": git_state(),
        "python": sys.version.split()[0], "machine": pyplatform.machine(), "numpy": np.__version__,
        "l2_size": L2_SIZE, "platforms": {p: platform_json(p) for p in platforms}, "examples": examples,
        "objectives": list(OBJECTIVES), "staging_variants": list(VARIANTS),
        "rows": [{"key": _key(r), **r} for r in rows], "staging": staging_summary(rows), "targets": targets,
    }


def _finite(value):
    """Strict JSON: infinities and NaN become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def write_json(data: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_finite(data), indent=1, sort_keys=True, default=str, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------

def parse_args(argv) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write the results (default %(default)s)")
    p.add_argument("--platforms", default=",".join(PLATFORMS), help="comma-separated (default %(default)s)")
    p.add_argument("--examples", default=None, help="comma-separated example names (default: every one with "
                   "a kernel to bench; the graphs have their own benchmarks)")
    p.add_argument("--quick", action="store_true", help="gap8 only")
    args = p.parse_args(argv)
    args.platforms = ["gap8"] if args.quick else [x for x in args.platforms.split(",") if x]
    known = kernel_examples()
    args.examples = known if args.examples is None else [x for x in args.examples.split(",") if x]
    unknown = [x for x in args.examples if x not in known]
    if unknown:
        p.error(f"unknown example(s) {', '.join(unknown)}; examples with a kernel to bench: {', '.join(known)}")
    for name in args.platforms:
        try:
            get_platform(name)
        except PlatformError as err:
            p.error(str(err))
    return args


def header(args) -> str:
    lines = [f"autotiler benchmark: {len(args.examples)} example(s) x {', '.join(args.platforms)} x "
             f"objectives {', '.join(OBJECTIVES)}",
             f"L2 raised to {L2_SIZE // 1024} KiB on every chip: the guide's MatAdd (3 x 200x300 Word32) needs "
             f"720 KB, more than GAP8's 512 KB. L1 budgets: gap8 = the example's L1_BUDGET, other chips scaled by "
             f"their L1 size / gap8's. L2 staging of L3 arguments is tiled within the chip's own L2.",
             f"Models with L3 arguments also run the 'time' tiling re-staged: {', '.join(VARIANTS)}."]
    for name in args.platforms:
        p = get_platform(name)
        ram = p.udma["ram"]
        lines.append(f"  {name}: {p.cores} cores, L1 {p.l1_size // 1024} KiB, L2 {p.l2_size // 1024} KiB, "
                     f"L3 RAM {p.l3_ram_size // (1024 * 1024)} MiB, cluster DMA "
                     f"{p.cluster_dma.bytes_per_cycle:g} B/cycle + {p.cluster_dma.setup_cycles} setup, uDMA (RAM) "
                     f"{ram.bytes_per_cycle:g} B/cycle + {ram.setup_cycles} setup, fork {p.fork_cycles}")
    return "\n".join(lines)


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    print(header(args))
    start = time.perf_counter()
    try:
        rows = sort_rows(run_all(args.examples, args.platforms, list(OBJECTIVES),
                                 progress=lambda s: print(s, file=sys.stderr)))
    except WrongOutput as err:
        print(f"\nBENCHMARK ABORTED, generated code computes a wrong result: {err}", file=sys.stderr)
        return 2
    targets = check_targets(rows)
    print()
    print(format_table(rows))
    staging = staging_summary(rows)
    if staging:
        print()
        print(format_staging(staging))
    print()
    print(format_targets(targets))
    write_json(results_json(rows, targets, args.platforms, args.examples), args.json)
    print(f"\nwrote {args.json} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
