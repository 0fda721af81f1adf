"""Micro-benchmarks of the pulp-open cluster on GVSoC (cluster DMA, barrier, fork, cluster start,
the generated code's runtime statements, cold user-kernel calls) and the cost model's constants
fitted to them.

    source ~/.cache/gvsoc/env.sh          # after ../shared/tools/gvsoc/setup.sh, once per machine
    /work/main/.venv/bin/python bench/gvsoc_micro.py [--json PATH] [--workdir DIR]

Three parts:

* the hardware, ``bench/gvsoc/micro/`` (pulp-runtime make rules), copied to a temporary directory
  (or ``--workdir``), built in three variants and run on ``gvsoc --target pulp-open``: the cluster
  benchmarks once (every figure there is already the median-ready list of REPS repetitions), and
  ``cluster_start`` + ``cluster_wait`` of an empty entry ``START_RUNS`` times cold and
  ``START_RUNS`` times with the cluster FLL locked beforehand (pulp-runtime can start the cluster
  only once per run), plus one run with a busy entry that gives the FC/cluster clock ratio;
* the runtime statements, ``bench/gvsoc/runtime/``: ``AT_L2_COPY``, ``AT_L2_COPY2D``,
  ``AT_L2_WAIT`` and ``AT_FORK`` written as generated code writes them, on the GVSoC back-end's
  target runtime (``host_harness/target``): what the cost model charges per statement;
* cold calls: generated user kernels (``COLD_KERNELS``) run through the GVSoC back-end
  (``GvsocProgram.sequence``) three times in a row in one application, then twice with the
  forks profiled: what a user kernel's first call costs beyond a warm one outside its basic
  kernels (``kernel_call_cycles``).

Every cluster figure is ``median(repetitions) - counter overhead`` (two back-to-back mcycle reads,
1 cycle). Results: ``bench/results/gvsoc_micro.json`` (raw points and fitted constants, each with
a ``source``) and tables on stdout. Method and findings: ``docs/gvsoc-calibration.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import calibrate  # noqa: E402  (bench/calibrate.py: the calibration's kernels and their arguments)
from run import WrongOutput, check_outputs  # noqa: E402

import host_harness  # noqa: E402
from autotiler.codegen import write_files  # noqa: E402
from autotiler.platforms import get_platform  # noqa: E402

MICRO_DIR = ROOT / "bench" / "gvsoc" / "micro"
RUNTIME_DIR = ROOT / "bench" / "gvsoc" / "runtime"
COMMON_DIR = ROOT / "bench" / "gvsoc" / "common"   # bench_common.h, included by both
TARGET_DIR = ROOT / "host_harness" / "target"
DEFAULT_JSON = ROOT / "bench" / "results" / "gvsoc_micro.json"
GVSOC_README = ROOT.parent / "shared" / "tools" / "gvsoc" / "README.md"
SETUP_HINT = ("set GVSoC up once with ../shared/tools/gvsoc/setup.sh, then run "
              "`source ~/.cache/gvsoc/env.sh` in this shell before bench/gvsoc_micro.py")
TOOLCHAIN = "riscv64-unknown-elf"     # Debian's gcc, as env.sh's RT_MAKE_ARGS
REQUIRED_ENV = ("GVSOC_HOME", "PULPRT_HOME", "PULPRT_TARGET", "PULPRUN_TARGET", "RV_CFLAGS", "RV_LDFLAGS")
START_RUNS = 3
SPIN_CYCLES = 50000                   # busy entry of the clock-ratio run
PRELOCK_CYCLES = 300000               # FC cycles given to the cluster FLL to lock (it needs ~100k)
RUN_TIMEOUT = 600
LIST_KEYS = {"v", "first", "issue", "max", "skew", "start", "wait"}
SKEW_KEYS = {"skew"}                  # differences of two start stamps: no counter overhead
LINEAR_FROM = 1024                    # transfers from this size on are a line in the bytes (below: latency)
BYTES_2D = 4096                       # bench/gvsoc/runtime's 2D transfers (runtime_main.c)
# Cold calls: (case, kernel) of the calibration's cases (bench/calibrate.py), each called cold
# then warm; and (case, first, second) pairs where the second kernel's first call follows another
# kernel (the runtime's code warm, its own cold).
COLD_KERNELS = (("mnist", "SoftMax_0_48000"), ("mnist", "LinearLayerReLU_0_48000"),
                ("mnist", "Conv5x5ReLUMaxPool2x2_0_48000"), ("matadd_v3", "MatADD"), ("matrix_max", "MatMax"),
                ("integral_image", "BodyIntegralImage"), ("matadd_4d", "MyFavoriteKernel"), ("graph_net", "Conv1"))
AFTER_PAIRS = (("mnist", "LinearLayerReLU_0_48000", "SoftMax_0_48000"),
               ("mnist", "SoftMax_0_48000", "LinearLayerReLU_0_48000"))
WARM_CALLS = 2                        # warm calls after the cold one


# --- environment -------------------------------------------------------------------------------

def check_environment() -> None:
    """Exit 2 with the set-up hint when env.sh has not been sourced (or GVSoC is not built)."""
    missing = [name for name in REQUIRED_ENV if not os.environ.get(name)]
    tools = [tool for tool in ("gvsoc", f"{TOOLCHAIN}-gcc") if shutil.which(tool) is None]
    if missing or tools:
        what = ", ".join([f"{name} not set" for name in missing] + [f"{tool} not on PATH" for tool in tools])
        print(f"gvsoc_micro: GVSoC is not available ({what}): {SETUP_HINT}", file=sys.stderr)
        sys.exit(2)


def simulator_versions() -> dict:
    """The commits the README of the shared GVSoC set-up names (the archive has no git history)."""
    versions = {"gvsoc": "unknown", "pulp-runtime": "unknown"}
    try:
        text = GVSOC_README.read_text()
    except OSError:
        return versions
    for key, pattern in (("gvsoc", r"github\.com/gvsoc/gvsoc at `([0-9a-f]+)`"),
                         ("pulp-runtime", r"pulp-runtime at `([0-9a-f]+)`")):
        found = re.search(pattern, text)
        if found:
            versions[key] = found.group(1)
    return versions


# --- building and running ----------------------------------------------------------------------

def make_command(defs: str, build_ext: str) -> list:
    """env.sh's RT_MAKE_ARGS (a bash array, not exported) rebuilt from the exported flags."""
    return ["make", "all", "run", "platform=gvsoc", f"PULP_CC={TOOLCHAIN}-gcc", f"PULP_LD={TOOLCHAIN}-gcc",
            f"PULP_AR={TOOLCHAIN}-ar", f"PULP_OBJDUMP={TOOLCHAIN}-objdump",
            f"PULP_ARCH_CFLAGS={os.environ['RV_CFLAGS']}", f"PULP_ARCH_LDFLAGS={os.environ['RV_LDFLAGS']}",
            f"MICRO_DEFS={defs}", f"build_dir_ext={build_ext}", f"BENCH_COMMON={COMMON_DIR}"]


def run_variant(workdir: Path, defs: str, build_ext: str, extra: tuple = ()) -> tuple:
    """Builds (first call only: make is incremental) and runs one variant; its result records
    and its output."""
    command = make_command(defs, build_ext) + list(extra)
    try:
        done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"variant '{defs or 'bench'}' did not finish in {RUN_TIMEOUT} s") from exc
    records = parse_records(done.stdout)
    if done.returncode != 0 or not records:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
        raise RuntimeError(f"variant '{defs or 'bench'}' failed (exit {done.returncode}):\n{tail}")
    return records, done.stdout


def run_all(workdir: Path) -> dict:
    shutil.copytree(MICRO_DIR, workdir, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("build*"))
    bench = run_variant(workdir, "", "_bench")[0]
    if not any(r["kind"] == "done" for r in bench):
        raise RuntimeError("the cluster benchmarks stopped before their end")
    cold = [run_variant(workdir, "-DMICRO_START_SPIN=0", "_cold")[0][0] for _ in range(START_RUNS)]
    locked_defs = f"-DMICRO_START_SPIN=0 -DMICRO_START_PRELOCK={PRELOCK_CYCLES}"
    locked = [run_variant(workdir, locked_defs, "_locked")[0][0] for _ in range(START_RUNS)]
    spin_defs = f"-DMICRO_START_SPIN={SPIN_CYCLES} -DMICRO_START_PRELOCK={PRELOCK_CYCLES}"
    spin = run_variant(workdir, spin_defs, "_spin")[0][0]
    return {"bench": bench, "start_cold": cold, "start_locked": locked, "start_spin": spin,
            "runtime": run_runtime(workdir / "runtime"), "cold_calls": run_cold_calls(workdir / "cold")}


def run_runtime(workdir: Path) -> dict:
    """The runtime statements (bench/gvsoc/runtime) on the target runtime: their records, and the
    profiled fork window of the empty basic kernel (at_target_print_forks: calls, cycles)."""
    shutil.copytree(RUNTIME_DIR, workdir, dirs_exist_ok=True, ignore=shutil.ignore_patterns("build*"))
    records, out = run_variant(workdir, "", "_runtime", (f"TARGET_DIR={TARGET_DIR}",))
    if not any(r["kind"] == "done" for r in records):
        raise RuntimeError("the runtime benchmarks stopped before their end")
    window = [line.split()[1:] for line in out.splitlines() if line.startswith("@ATK ")]
    if len(window) != 1:
        raise RuntimeError(f"the runtime benchmarks printed {len(window)} fork profiles, expected 1")
    return {"records": records, "fork_window": {"calls": int(window[0][1]), "cycles": int(window[0][2])}}


def _case_calls(case: str, plat, rng) -> tuple:
    """(model, files, calls, sources, include dirs) of a calibration case at its own budget."""
    if case == "mnist":
        return calibrate.mnist_calls(plat, calibrate.MNIST_BUDGETS[:1], rng)
    return calibrate.example_calls(case, plat, 1.0, rng)


def run_cold_calls(workdir: Path) -> dict:
    """Per kernel of COLD_KERNELS: its cycles cold then warm (WARM_CALLS) in one application, the
    same with the forks profiled, its code size; per pair of AFTER_PAIRS the second kernel's
    first call after the first kernel's. Each output is checked against numpy after the first
    call of a case (a wrong result aborts)."""
    plat = get_platform("pulp_open")
    rows, pairs = [], []
    for case in dict.fromkeys([c for c, _ in COLD_KERNELS] + [c for c, _, _ in AFTER_PAIRS]):
        m, files, calls, sources, includes = _case_calls(case, plat, np.random.default_rng(0))
        gen = workdir / case
        write_files(files, str(gen))
        prog = host_harness.build(gen, sources=sources, include_dirs=includes, platform=plat, backend="gvsoc")
        try:
            args = {c.kernel: c.args for c in calls}
            for k in [k for c, k in COLD_KERNELS if c == case]:
                seq = [k] * (1 + WARM_CALLS)
                timed = prog.sequence(seq, args)
                sizes = prog.text_sizes()
                check_outputs(args[k], next(c for c in calls if c.kernel == k).expected, f"{case}/{k} on GVSoC")
                profiled = prog.sequence(seq[:2], args, profile=True)
                rows.append({"case": case, "kernel": k, "cycles": [t["cycles"] for t in timed],
                             "fork_cycles": [t["fork_cycles"] for t in profiled], "text_bytes": sizes.get(k, 0),
                             "predicted": sum(t.predicted.cycles for t in calibrate.kernel_tilings(m, k))})
            for first, second in [(a, b) for c, a, b in AFTER_PAIRS if c == case]:
                timed = prog.sequence([first, second, second], args)
                pairs.append({"case": case, "first": first, "kernel": second,
                              "cycles": [t["cycles"] for t in timed[1:]]})
        finally:
            prog.close()
    return {"kernels": rows, "after": pairs}


# --- parsing -----------------------------------------------------------------------------------

def _value(key: str, text: str):
    if key in LIST_KEYS:
        return [int(item) for item in text.split(",")]
    return int(text) if re.fullmatch(r"-?\d+", text) else text


def parse_records(stdout: str) -> list:
    """``@ kind key=value ...`` lines; comma lists become int lists."""
    records = []
    for line in stdout.splitlines():
        if not line.startswith("@ "):
            continue
        kind, *tokens = line[2:].split()
        record = {"kind": kind}
        for token in tokens:
            key, _, text = token.partition("=")
            record[key] = _value(key, text)
        records.append(record)
    return records


def add_medians(records: list, overhead: float) -> None:
    """``<key>_cycles`` = median of each list minus the counter overhead (not for skews, which
    are differences of two start stamps)."""
    for record in records:
        for key in [k for k in record if k in LIST_KEYS]:
            cut = 0 if key in SKEW_KEYS else overhead
            record[f"{key}_cycles"] = statistics.median(record[key]) - cut


def select(records: list, kind: str, **fields) -> list:
    return [r for r in records if r["kind"] == kind and all(r.get(k) == v for k, v in fields.items())]


# --- fits --------------------------------------------------------------------------------------

def linear_fit(x, y) -> tuple:
    """Least squares y = a + b x; (a, b, worst relative error, x of the worst point)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    design = np.column_stack([np.ones_like(x), x])
    (a, b), *_ = np.linalg.lstsq(design, y, rcond=None)
    relative = np.abs(design @ np.array([a, b]) - y) / y
    worst = int(np.argmax(relative))
    return float(a), float(b), float(relative[worst]), float(x[worst])


def constant_fit(values) -> tuple:
    """A constant's value (median) and the worst relative deviation of the points from it."""
    value = statistics.median(values)
    return float(value), float(max(abs(v - value) for v in values) / value)


def r3(value: float) -> float:
    return round(float(value), 3) + 0.0    # + 0.0: no "-0.0" in the results


def fit_dma_1d(records: list, issue: dict, source: str) -> dict:
    """Per path and direction: issue-to-wait = intercept + bytes / bytes_per_cycle. The cost model
    charges a transfer ``dma_issue_cycles`` then ``setup + bytes / bytes_per_cycle`` (its wait
    overlaps a stalled wait), so setup_cycles = intercept - issue cycles of that path."""
    fits = {}
    for path in ("ext", "core"):
        for direction in ("in", "out", "both"):
            dirs = ("in", "out") if direction == "both" else (direction,)
            points = [r for d in dirs for r in select(records, "dma1d", what="total", path=path, dir=d)]
            x = [r["bytes"] for r in points]
            y = [r["v_cycles"] for r in points]
            a, b, worst, at = linear_fit(x, y)
            floored = max(abs(max(min(y), a + b * xi) - yi) / yi for xi, yi in zip(x, y))
            fits.setdefault(path, {})[direction] = {
                "intercept_cycles": r3(a), "bytes_per_cycle": r3(1 / b),
                "setup_cycles": r3(a - issue[path]["value"]),
                "floor_cycles": min(y), "worst_relative_error": r3(worst), "worst_at_bytes": int(at),
                "worst_relative_error_with_floor": r3(floored),
                "points": len(points),
                "source": f"{source}: least squares over {len(points)} sizes 4..16384 B, "
                          f"issue to completed wait ({path} path, {direction})",
            }
    return fits


def fit_line_cycles(records: list, source: str) -> dict:
    """Per direction, over the 2D points of BYTES_2D bytes: cycles = c + line_cycles * lines.
    Also against 256-byte bursts (a line longer than MCHAN's burst is cut into bursts), which is
    what the out direction's cost follows."""
    fits = {}
    for direction in ("in", "out"):
        points = select(records, "dma2d", dir=direction)
        y = [r["v_cycles"] for r in points]
        c, line_cycles, worst, at = linear_fit([r["lines"] for r in points], y)
        bursts = [r["lines"] * -(-r["line"] // 256) for r in points]
        c_b, burst_cycles, worst_b, _ = linear_fit(bursts, y)
        fits[direction] = {
            "line_cycles": r3(line_cycles), "intercept_cycles": r3(c), "worst_relative_error": r3(worst),
            "worst_at_lines": int(at), "burst_cycles": r3(burst_cycles), "burst_intercept_cycles": r3(c_b),
            "burst_worst_relative_error": r3(worst_b), "bad_bytes": sum(r["bad"] for r in points),
            "source": f"{source}: least squares over {len(points)} line lengths 16..4096 B, "
                      f"{points[0]['bytes']} B total, L2 stride two lines ({direction})",
        }
    return fits


def constant_entry(values, source: str) -> dict:
    value, worst = constant_fit(values)
    return {"value": r3(value), "worst_relative_error": r3(worst), "points": len(values), "source": source}


def fit_issue_wait(records: list, what: str, source: str) -> dict:
    return {path: constant_entry([r["v_cycles"] for r in select(records, "dma1d", what=what, path=path)],
                                 f"{source}: median over 7 sizes x 2 directions ({path} path)")
            for path in ("ext", "core")}


def channel_findings(records: list, source: str) -> dict:
    """Overlap of two back-to-back transfers: (single0 + single1 - pair) / min(single0, single1),
    1 when the shorter one is hidden entirely (separate channels), 0 when they add up (one
    queue). ``added_cycles``: what the second transfer adds over the first alone."""
    found = {}
    for size in sorted({r["bytes"] for r in select(records, "channel")}):
        single = {p: select(records, "channel", pair=p, bytes=size)[0]["v_cycles"] for p in ("r", "w")}
        for pair in ("rw", "wr", "rr", "ww"):
            total = select(records, "channel", pair=pair, bytes=size)[0]["v_cycles"]
            first, second = single[pair[0]], single[pair[1]]
            found.setdefault(pair, {})[str(size)] = {
                "pair_cycles": total, "sum_cycles": first + second, "max_cycles": max(first, second),
                "overlap": r3((first + second - total) / min(first, second)),
                "added_cycles": total - first,
            }
    found["source"] = f"{source}: two plp_dma_memcpy issued back to back on core 0, then both waited"
    return found


def per_core_findings(records: list, source: str, overhead: float) -> dict:
    """Each core's cycles per repetition, and the same sorted: the k-th served core's time."""
    cores = sorted(select(records, "per_core"), key=lambda r: r["core"])
    reps = len(cores[0]["v"])
    ranked = [sorted(c["v"][r] - overhead for c in cores) for r in range(reps)]
    by_rank = [statistics.median(ranked[r][k] for r in range(reps)) for k in range(len(cores))]
    first, step, worst, _ = linear_fit(range(len(cores)), by_rank)
    span = select(records, "per_core_span")[0]
    return {
        "per_core_cycles": {str(c["core"]): [v - overhead for v in c["v"]] for c in cores},
        "per_core_median_cycles": {str(c["core"]): c["v_cycles"] for c in cores},
        "by_rank_cycles": by_rank, "rank_first_cycles": r3(first), "rank_step_cycles": r3(step),
        "rank_worst_relative_error": r3(worst),
        "span_cycles": span["v_cycles"], "start_skew_cycles": span["skew_cycles"], "bad_bytes": span["bad"],
        "bytes_per_core": span["bytes"],
        "source": f"{source}: {len(cores)} cores, one barrier, each its own {span['bytes']} B L2->L1 "
                  f"transfer on its private MCHAN channel, mcycle per core",
    }


def start_findings(runs: dict, source: str) -> dict:
    cold = [r["v"][0] for r in runs["start_cold"]]
    locked = [r["v"][0] for r in runs["start_locked"]]
    spin = runs["start_spin"]["v"][0]
    ratio = (spin - statistics.median(locked)) / SPIN_CYCLES
    return {
        "cold_fc_cycles": constant_entry(cold, f"{source}: FC mcycle around cluster_start + cluster_wait of "
                                               f"an empty entry, first start (FLL lock included), {len(cold)} runs"),
        "cold_start_call_fc_cycles": statistics.median(r["start"][0] for r in runs["start_cold"]),
        "locked_fc_cycles": constant_entry(locked, f"{source}: the same with the cluster FLL configured and "
                                                   f"locked beforehand, {len(locked)} runs"),
        "locked_start_call_fc_cycles": statistics.median(r["start"][0] for r in runs["start_locked"]),
        "fc_cycles_per_cluster_cycle": r3(ratio),
        "ratio_source": f"{source}: growth of the FC figure when core 0's entry spins {SPIN_CYCLES} cluster cycles",
    }


def sync_constant(record: dict, overhead: float, source: str) -> dict:
    """A barrier or fork figure: median of the repetitions, each less the counter overhead."""
    entry = constant_entry([v - overhead for v in record["v"]], source)
    if "max" in record:
        entry["max_over_cores"] = record["max_cycles"]
    return entry


def fit_runtime(runtime: dict, overhead: float, source: str) -> dict:
    """The generated code's statements on the target runtime: issue and wait (every size and
    direction), the transfer line from LINEAR_FROM bytes on per direction (``setup_cycles`` =
    intercept - issue: the cost model charges issuing on the core, then the transfer), the floor
    below, line_cycles from the 2D transfers, the AT_FORK statement of an empty basic kernel and
    the profiled fork window of that kernel (what GvsocProgram.profile times)."""
    records = runtime["records"]
    add_medians(records, overhead)
    where = f"{source}: bench/gvsoc/runtime on host_harness/target"
    issue = constant_entry([r["v_cycles"] for r in select(records, "rt_dma1d", what="issue")],
                           f"{where}, AT_L2_COPY issue, 7 sizes x 2 directions")
    out = {"dma_issue_cycles": issue,
           "dma_issue_2d_cycles": constant_entry([r["v_cycles"] for r in select(records, "rt_dma2d", what="issue")],
                                                 f"{where}, AT_L2_COPY2D issue, 4 line lengths x 2 directions"),
           "wait_cycles": constant_entry([r["v_cycles"] for r in select(records, "rt_dma1d", what="wait")],
                                         f"{where}, AT_L2_WAIT on a finished transfer, 7 sizes x 2 directions")}
    for d in ("in", "out"):
        points = select(records, "rt_dma1d", what="total", dir=d)
        big = [r for r in points if r["bytes"] >= LINEAR_FROM]
        a, b, worst, at = linear_fit([r["bytes"] for r in big], [r["v_cycles"] for r in big])
        small = [r for r in points if r["bytes"] < LINEAR_FROM]
        out[f"transfer_{d}"] = {
            "intercept_cycles": r3(a), "bytes_per_cycle": r3(1 / b), "setup_cycles": r3(a - issue["value"]),
            "worst_relative_error": r3(worst), "worst_at_bytes": int(at),
            "small": {str(r["bytes"]): r["v_cycles"] for r in small},
            "source": f"{where}, AT_L2_COPY + AT_L2_WAIT ({d}), least squares over {len(big)} sizes "
                      f"{LINEAR_FROM}..{max(r['bytes'] for r in big)} B"}
        lines = select(records, "rt_dma2d", what="total", dir=d)
        c, per_line, worst2, _ = linear_fit([BYTES_2D // r["line"] for r in lines], [r["v_cycles"] for r in lines])
        out[f"line_cycles_{d}"] = {"line_cycles": r3(per_line), "intercept_cycles": r3(c),
                                   "worst_relative_error": r3(worst2),
                                   "points": {str(r["line"]): r["v_cycles"] for r in lines},
                                   "source": f"{where}, AT_L2_COPY2D + AT_L2_WAIT of {BYTES_2D} B ({d}), "
                                             "least squares over the line counts"}
    fork = select(records, "rt_fork", what="statement")[0]
    window = runtime["fork_window"]
    out["fork_cycles"] = constant_entry([v - overhead for v in fork["v"]],
                                        f"{where}, AT_FORK of an empty basic kernel on 8 cores with its 4 struct "
                                        "fields and AT_SIM_COMPUTE")
    out["fork_window_cycles"] = {"value": r3(window["cycles"] / window["calls"]), "calls": window["calls"],
                                 "source": f"{where}, GvsocProgram.profile's window (release to join) of the same "
                                           "empty basic kernel, mean of its calls"}
    return out


def fit_cold_calls(cold: dict, source: str) -> dict:
    """What a user kernel's first call costs beyond a warm one outside its basic kernels:
    (cold - warm) - (cold forks - warm forks), per kernel (warm: the median of the warm calls;
    forks: the profiled run's); their median is ``kernel_call_cycles``. Also the least-squares
    line of that figure in the kernel's code size, to see whether it grows with the code, and the
    calls that follow another kernel (its runtime code warm)."""
    rows = []
    for r in cold["kernels"]:
        warm = statistics.median(r["cycles"][1:])
        cold_all = r["cycles"][0] - warm
        cold_forks = r["fork_cycles"][0] - r["fork_cycles"][1]
        rows.append({"case": r["case"], "kernel": r["kernel"], "cold_cycles": r["cycles"][0], "warm_cycles": warm,
                     "cold_extra": cold_all, "cold_extra_forks": cold_forks, "cold_extra_outside": cold_all - cold_forks,
                     "text_bytes": r["text_bytes"], "predicted": r["predicted"]})
    outside = [r["cold_extra_outside"] for r in rows]
    a, b, worst, _ = linear_fit([r["text_bytes"] for r in rows], outside)
    value = statistics.median(outside)
    after = []
    for p in cold["after"]:
        mine = next((r for r in rows if r["kernel"] == p["kernel"] and r["case"] == p["case"]), None)
        if mine is not None:
            after.append({"first": p["first"], "kernel": p["kernel"], "after_cycles": p["cycles"][0],
                          "cold_cycles": mine["cold_cycles"], "warm_cycles": mine["warm_cycles"]})
    return {"kernels": rows, "after": after,
            "kernel_call_cycles": {"value": r3(value), "min": min(outside), "max": max(outside),
                                   "points": len(outside),
                                   "source": f"{source}: median over {len(outside)} generated user kernels of "
                                             "(cold - warm call) - (cold - warm profiled forks), "
                                             "GvsocProgram.sequence"},
            "by_code_size": {"intercept_cycles": r3(a), "cycles_per_byte": r3(b), "worst_relative_error": r3(worst),
                             "source": "least squares of the same figures in the user kernel's code bytes (nm -S)"}}


def fit_all(runs: dict, source: str) -> tuple:
    records = runs["bench"]
    overhead = statistics.median(select(records, "overhead")[0]["v"])
    add_medians(records, overhead)
    issue = fit_issue_wait(records, "issue", source)
    fits = {
        "counter_overhead_cycles": overhead,
        "dma_issue_cycles": issue,
        "wait_cycles": fit_issue_wait(records, "wait", source),
        "cluster_dma": fit_dma_1d(records, issue, source),
        "line_cycles": fit_line_cycles(records, source),
        "channels": channel_findings(records, source),
        "master8": {k: select(records, "master8")[0][k] for k in ("v_cycles", "issue_cycles", "bytes", "count")},
        "per_core": per_core_findings(records, source, overhead),
        "barrier_cycles": sync_constant(select(records, "barrier")[0], overhead,
                                        f"{source}: synch_barrier() on core 0, 8 cores arriving together"),
        "fork_cycles": sync_constant(select(records, "fork")[0], overhead,
                                     f"{source}: master's round trip of a barrier fork (publish, barrier, "
                                     f"empty task, barrier) on 8 cores"),
        "cluster_start": start_findings(runs, source),
        "runtime": fit_runtime(runs["runtime"], overhead, source),
        "cold_calls": fit_cold_calls(runs["cold_calls"], source),
    }
    return fits, model_suggestion(fits, source)


def model_suggestion(fits: dict, source: str) -> dict:
    """The platform fields of autotiler/platforms.py: the generated code's statements on the
    target runtime (issue, wait, fork; set-up from the L2->L1 line, whose bytes per cycle is 8;
    line_cycles from the 2D L1->L2 transfers, L2->L1 lines cost nothing) and the cold call."""
    rt = fits["runtime"]
    return {
        "cluster_dma": {"setup_cycles": round(rt["transfer_in"]["setup_cycles"]),
                        "bytes_per_cycle": rt["transfer_in"]["bytes_per_cycle"],
                        "line_cycles": round(rt["line_cycles_out"]["line_cycles"])},
        "dma_issue_cycles": round(rt["dma_issue_cycles"]["value"]),
        "wait_cycles": round(rt["wait_cycles"]["value"]),
        "fork_cycles": round(rt["fork_cycles"]["value"]),
        "kernel_call_cycles": round(fits["cold_calls"]["kernel_call_cycles"]["value"]),
        "source": f"{source}: the runtime statements (bench/gvsoc/runtime) and the cold calls; the hardware "
                  "figures (plp_dma_memcpy inline, micro_sync's fork) are the tables above them",
    }


# --- report ------------------------------------------------------------------------------------

def table(title: str, header: list, rows: list) -> str:
    """Fixed-width text table, numbers right-aligned, a first column of names left-aligned."""
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    names = any(isinstance(r[0], str) for r in rows)
    line = lambda cells: "  ".join(str(c).ljust(w) if i == 0 and names else str(c).rjust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([title, line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]) + "\n"


def fmt(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def report(records: list, fits: dict, suggestion: dict) -> str:
    return "\n".join([dma_1d_report(records), dma_2d_report(records), channel_report(fits),
                      per_core_report(fits), runtime_report(fits["runtime"]), cold_report(fits["cold_calls"]),
                      fit_report(fits, suggestion)])


def runtime_report(rt: dict) -> str:
    rows = [[name, fmt(rt[key]["value"]), fmt(rt[key]["worst_relative_error"])]
            for name, key in (("AT_L2_COPY issue", "dma_issue_cycles"), ("AT_L2_COPY2D issue", "dma_issue_2d_cycles"),
                              ("AT_L2_WAIT, transfer done", "wait_cycles"), ("AT_FORK, empty kernel", "fork_cycles"))]
    rows.append(["profiled fork window, empty kernel", fmt(rt["fork_window_cycles"]["value"]), ""])
    for d in ("in", "out"):
        t = rt[f"transfer_{d}"]
        rows.append([f"COPY + WAIT {d}", f"{fmt(t['intercept_cycles'])} + bytes / {fmt(t['bytes_per_cycle'])} "
                     f"(set-up {fmt(t['setup_cycles'])}); below {LINEAR_FROM} B: "
                     + ", ".join(f"{k} B {fmt(v)}" for k, v in t["small"].items()), fmt(t["worst_relative_error"])])
        lc = rt[f"line_cycles_{d}"]
        rows.append([f"COPY2D + WAIT {d}", f"{fmt(lc['intercept_cycles'])} + {fmt(lc['line_cycles'])} per line",
                     fmt(lc["worst_relative_error"])])
    return table("The generated code's runtime statements on the target runtime (host_harness/target), cycles",
                 ["statement", "cycles", "worst rel. error"], rows)


def cold_report(cold: dict) -> str:
    rows = [[r["kernel"], r["text_bytes"], r["cold_cycles"], fmt(r["warm_cycles"]), fmt(r["cold_extra"]),
             fmt(r["cold_extra_forks"]), fmt(r["cold_extra_outside"])] for r in cold["kernels"]]
    k, by = cold["kernel_call_cycles"], cold["by_code_size"]
    text = table("User kernels called cold then warm in one application (GvsocProgram.sequence), cycles",
                 ["kernel", "code B", "cold", "warm", "cold extra", "in forks", "outside"], rows)
    after = [[f"{a['kernel']} after {a['first']}", a["cold_cycles"], a["after_cycles"], fmt(a["warm_cycles"])]
             for a in cold["after"]]
    text += "\n" + table("A kernel's first call after another kernel's, cycles", ["call", "cold", "after", "warm"], after)
    return text + (f"kernel_call_cycles: median {fmt(k['value'])} (min {fmt(k['min'])}, max {fmt(k['max'])}); "
                   f"in the code size: {fmt(by['intercept_cycles'])} + {fmt(by['cycles_per_byte'])} per byte "
                   f"(worst {fmt(by['worst_relative_error'])})\n")


def dma_1d_report(records: list) -> str:
    cell = lambda what, path, d, size: fmt(select(records, "dma1d", what=what, path=path, dir=d, bytes=size)[0]["v_cycles"])  # noqa: E731
    sizes = sorted({r["bytes"] for r in select(records, "dma1d")})
    columns = [(p, d) for p in ("ext", "core") for d in ("in", "out")]
    text = table("1D transfers on core 0, issue to completed wait, cycles (in = L2->L1, out = L1->L2; ext = "
                 "plp_dma_memcpy on the shared channel, core = the core's private channel)",
                 ["bytes"] + [f"{p} {d}" for p, d in columns],
                 [[s] + [cell("total", p, d, s) for p, d in columns] for s in sizes])
    rows = [[what] + [value_range(select(records, "dma1d", what=what, path=p, dir=d)) for p, d in columns]
            for what in ("issue", "wait")]
    return text + "\n" + table("Issue only / wait on a finished transfer, cycles (all 7 sizes)",
                               [""] + [f"{p} {d}" for p, d in columns], rows)


def value_range(points: list) -> str:
    """"21" when every point agrees, "21..23" otherwise."""
    values = sorted(r["v_cycles"] for r in points)
    return fmt(values[0]) if values[0] == values[-1] else f"{fmt(values[0])}..{fmt(values[-1])}"


def dma_2d_report(records: list) -> str:
    rows = [[r["line"], r["lines"], fmt(r["v_cycles"]), fmt(o["v_cycles"])]
            for r, o in zip(select(records, "dma2d", dir="in"), select(records, "dma2d", dir="out"))]
    return table("2D transfers of 4096 B, L2 side strided by two lines, L1 contiguous (ext path), cycles",
                 ["line B", "lines", "in", "out"], rows)


def channel_report(fits: dict) -> str:
    ch = fits["channels"]
    rows = [[p, s, fmt(ch[p][s]["pair_cycles"]), fmt(ch[p][s]["sum_cycles"]), fmt(ch[p][s]["max_cycles"]),
             fmt(ch[p][s]["added_cycles"]), fmt(ch[p][s]["overlap"])] for p in ("rw", "wr", "rr", "ww") for s in ch[p]]
    m8 = fits["master8"]
    return table("Two transfers issued back to back, then both waited (r = L2->L1, w = L1->L2; sum/max of the "
                 "two alone), cycles", ["pair", "bytes", "pair", "sum", "max", "added", "overlap"], rows) + (
        f"core 0 issuing {m8['count']} x {m8['bytes']} B L2->L1 then waiting all: {fmt(m8['v_cycles'])} cycles, "
        f"of which issuing {fmt(m8['issue_cycles'])}\n")


def per_core_report(fits: dict) -> str:
    pc = fits["per_core"]
    rows = [[c, " ".join(fmt(v) for v in pc["per_core_cycles"][c])] for c in pc["per_core_cycles"]]
    rows.append(["by rank", " ".join(fmt(v) for v in pc["by_rank_cycles"])])
    return table(f"8 cores each moving {pc['bytes_per_core']} B L2->L1 at once (one column per repetition), "
                 f"cycles; span {fmt(pc['span_cycles'])}, start skew {fmt(pc['start_skew_cycles'])}",
                 ["core", "cycles"], rows)


def fit_report(fits: dict, suggestion: dict) -> str:
    rows = []
    for path, by_dir in fits["cluster_dma"].items():
        for d, f in by_dir.items():
            rows.append([f"dma {path} {d}", f"intercept {fmt(f['intercept_cycles'])}, setup {fmt(f['setup_cycles'])}, "
                         f"{fmt(f['bytes_per_cycle'])} B/cycle, floor {fmt(f['floor_cycles'])}",
                         f"{fmt(f['worst_relative_error'])} @ {f['worst_at_bytes']} B "
                         f"({fmt(f['worst_relative_error_with_floor'])} with floor)"])
    for d, f in fits["line_cycles"].items():
        rows.append([f"2D {d}", f"line_cycles {fmt(f['line_cycles'])} (per 256-B burst {fmt(f['burst_cycles'])})",
                     f"{fmt(f['worst_relative_error'])} (bursts {fmt(f['burst_worst_relative_error'])})"])
    for name in ("dma_issue_cycles", "wait_cycles"):
        for path, f in fits[name].items():
            rows.append([f"{name} {path}", fmt(f["value"]), fmt(f["worst_relative_error"])])
    rows.append(["barrier_cycles", f"{fmt(fits['barrier_cycles']['value'])} (max over cores "
                 f"{fmt(fits['barrier_cycles']['max_over_cores'])})", fmt(fits["barrier_cycles"]["worst_relative_error"])])
    rows.append(["fork_cycles", fmt(fits["fork_cycles"]["value"]), fmt(fits["fork_cycles"]["worst_relative_error"])])
    start = fits["cluster_start"]
    for key, label in (("cold", "cold"), ("locked", "FLL locked")):
        rows.append([f"cluster_start+wait {label} (FC cycles)", f"{fmt(start[key + '_fc_cycles']['value'])} "
                     f"(cluster_start call {fmt(start[key + '_start_call_fc_cycles'])})",
                     fmt(start[key + "_fc_cycles"]["worst_relative_error"])])
    rows.append(["FC cycles per cluster cycle", fmt(start["fc_cycles_per_cluster_cycle"]), ""])
    text = table("Fitted constants (worst relative error of the fit over its points)",
                 ["constant", "value", "worst rel. error"], rows)
    model = {k: v for k, v in suggestion.items() if k != "source"}
    return text + f"\nplatform fields: {json.dumps(model)}\n"


# --- main --------------------------------------------------------------------------------------

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="result file (default %(default)s)")
    parser.add_argument("--workdir", type=Path, help="build here and keep it (default: a temporary directory)")
    args = parser.parse_args(argv)
    check_environment()
    versions = simulator_versions()
    source = (f"GVSoC pulp-open {versions['gvsoc'][:12]}, pulp-runtime {versions['pulp-runtime'][:12]}, "
              f"bench/gvsoc_micro.py")
    try:
        if args.workdir:
            args.workdir.mkdir(parents=True, exist_ok=True)
            runs = run_all(args.workdir)
        else:
            with tempfile.TemporaryDirectory(prefix="gvsoc_micro_") as tmp:
                runs = run_all(Path(tmp))
    except (RuntimeError, WrongOutput) as exc:
        print(f"gvsoc_micro: {exc}", file=sys.stderr)
        return 1
    fits, suggestion = fit_all(runs, source)
    result = {"source": source, "simulator": versions, "target": "pulp-open", "reps": len(runs["bench"][0]["v"]),
              "raw": runs, "fit": fits, "platform_fields": suggestion}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(report(runs["bench"], fits, suggestion))
    print(f"written {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
