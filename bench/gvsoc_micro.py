"""Micro-benchmarks of the pulp-open cluster on GVSoC (cluster DMA, barrier, fork, cluster start)
and a least-squares fit of the cost model's constants to them.

    source ~/.cache/gvsoc/env.sh          # after ../shared/tools/gvsoc/setup.sh, once per machine
    /work/main/.venv/bin/python bench/gvsoc_micro.py [--json PATH] [--workdir DIR]

The C program is ``bench/gvsoc/micro/`` (pulp-runtime make rules). It is copied to a temporary
directory (or ``--workdir``), built in three variants and run on ``gvsoc --target pulp-open``:
the cluster benchmarks once (every figure there is already the median-ready list of REPS
repetitions), and ``cluster_start`` + ``cluster_wait`` of an empty entry ``START_RUNS`` times
cold and ``START_RUNS`` times with the cluster FLL locked beforehand (pulp-runtime can start the
cluster only once per run), plus one run with a busy entry that gives the FC/cluster clock ratio.

Every cluster figure is ``median(repetitions) - counter overhead`` (two back-to-back mcycle reads,
1 cycle). Results: ``bench/results/gvsoc_micro.json`` (raw points and fitted constants, each with
a ``source``) and tables on stdout. Method and findings: ``docs/gvsoc-calibration.md``.
Needs only the standard library and numpy.
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
MICRO_DIR = ROOT / "bench" / "gvsoc" / "micro"
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
            f"MICRO_DEFS={defs}", f"build_dir_ext={build_ext}"]


def run_variant(workdir: Path, defs: str, build_ext: str) -> list:
    """Builds (first call only: make is incremental) and runs one variant; its result records."""
    command = make_command(defs, build_ext)
    try:
        done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"variant '{defs or 'bench'}' did not finish in {RUN_TIMEOUT} s") from exc
    records = parse_records(done.stdout)
    if done.returncode != 0 or not records:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
        raise RuntimeError(f"variant '{defs or 'bench'}' failed (exit {done.returncode}):\n{tail}")
    return records


def run_all(workdir: Path) -> dict:
    shutil.copytree(MICRO_DIR, workdir, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("build*"))
    bench = run_variant(workdir, "", "_bench")
    if not any(r["kind"] == "done" for r in bench):
        raise RuntimeError("the cluster benchmarks stopped before their end")
    cold = [run_variant(workdir, "-DMICRO_START_SPIN=0", "_cold")[0] for _ in range(START_RUNS)]
    locked_defs = f"-DMICRO_START_SPIN=0 -DMICRO_START_PRELOCK={PRELOCK_CYCLES}"
    locked = [run_variant(workdir, locked_defs, "_locked")[0] for _ in range(START_RUNS)]
    spin_defs = f"-DMICRO_START_SPIN={SPIN_CYCLES} -DMICRO_START_PRELOCK={PRELOCK_CYCLES}"
    spin = run_variant(workdir, spin_defs, "_spin")[0]
    return {"bench": bench, "start_cold": cold, "start_locked": locked, "start_spin": spin}


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
    }
    return fits, model_suggestion(fits, source)


def model_suggestion(fits: dict, source: str) -> dict:
    """The platform fields of autotiler/platforms.py from the ext path (pulp-runtime's
    plp_dma_memcpy, what a runtime issuing from core 0 uses), both directions in one engine."""
    both = fits["cluster_dma"]["ext"]["both"]
    return {
        "cluster_dma": {"setup_cycles": round(both["setup_cycles"]), "bytes_per_cycle": both["bytes_per_cycle"],
                        "line_cycles": round(fits["line_cycles"]["out"]["line_cycles"])},
        "dma_issue_cycles": round(fits["dma_issue_cycles"]["ext"]["value"]),
        "wait_cycles": round(fits["wait_cycles"]["ext"]["value"]),
        "fork_cycles": round(fits["fork_cycles"]["value"]),
        "source": f"{source}: ext path, in and out fitted together; line_cycles from the out direction "
                  f"(in is 0); see docs/gvsoc-calibration.md for what this one-engine FIFO model misses",
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
                      per_core_report(fits), fit_report(fits, suggestion)])


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
    return text + f"\nplatform fields (ext path): {json.dumps(model)}\n"


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
    except RuntimeError as exc:
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
