"""``autotiler import`` measured on the test networks (issue 24, "Targets"): every int8 TFLite network
of tests/models/import (the ones the importer refuses are listed with its message) and the three
ONNX QDQ models of tests/models/onnx, on the simulated gap8 and gap9. Per model and platform:

* import + generation time, wall clock and CPU seconds, each of ``REPEATS`` runs from cold caches
  (``objectives.clear_cache()``: nothing tiled, no ``Cost=`` parsed), the best reported as
  ``timeit`` does (the machine is shared; its load only adds time; every run's figure is in the
  JSON). "Import" is :func:`autotiler.importers.script.import_model` without its check
  generation (read, lower, write ``NAME.py``, its constants and ``NAME.json``); "generation" is
  ``autotiler generate NAME.py`` (:func:`autotiler.importers.verify.generate`: the generators tile
  every layer, then the graph's plan and C). ``autotiler import`` itself also generates once to
  check the script (a second generation, into a scratch directory): ``import_checked_s`` times it
  once, after the best-of runs;
* one simulated inference's host time (``Graph.run`` only; build and construct apart);
* the outputs against the source's own reference on ``INPUTS`` random int8 inputs (the
  ``autotiler verify`` machinery): tflite-micro for TFLite, which must be bit-exact; onnxruntime
  for ONNX (items equal, largest difference in LSBs, top-1; issue 24 §7's bound: at least 99 %
  equal, never more than 1 LSB, same top-1). An ONNX QDQ model is computed in onnxruntime's
  arithmetic (docs/importing.md); its outputs are also compared with the importer's own int8
  reference (``importers.reference``, which the generated C implements), which they must equal.
  A wrong output (TFLite not bit-exact; ONNX outside §7's bound or not equal to its int8
  reference) makes the benchmark exit with status 2;
* per layer (the import report's rows, ``autotiler.importers.report.layer_rows``): operator,
  MACs, predicted cycles (the tiler's), simulated cycles (the node's, waits for constants from
  flash included), MAC/cycle on the simulated cycles, L1 bytes, L2<->L1 and L3 bytes;
* whole model: simulated cycles, latency at the platform's cluster clock (``report.CLOCK_MHZ``),
  MAC/cycle; L2 for activations (the plan's dynamic area) against its liveness lower bound and
  against TFLM's arena head (``report.tflm_arena``: activations and scratch, I/O included; none
  for ONNX).

Cycles are the simulator's: each basic kernel is charged its ``Cost=`` model (the chip's DMA and
micro-DMA simulated), GVSoC is not run here. Targets are reported, never asserted: import +
generation of MobileNet v1 0.25 96x96 < 2 s, one simulated inference < 2 s of host time, dynamic
L2 equal to its lower bound and never above TFLM's arena.

    python bench/import_models.py [--models NAME ...] [--platforms gap8 gap9] [--repeats 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import platform as pyplatform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from run import git_state  # noqa: E402  (bench/run.py: the commit and whether the tree is dirty)

import host_harness  # noqa: E402
from autotiler.errors import AutoTilerError  # noqa: E402
from autotiler.generators import CNN_KERNELS_DIR, CNN_SQ8_SOURCES  # noqa: E402
from autotiler.graph.lower import plan_graph  # noqa: E402
from autotiler.importers import reference as REF  # noqa: E402
from autotiler.importers import report as R  # noqa: E402
from autotiler.importers import verify as V  # noqa: E402
from autotiler.importers.script import import_model  # noqa: E402
from autotiler.objectives import clear_cache  # noqa: E402

TFLITE_DIR = ROOT / "tests" / "models" / "import"
ONNX_DIR = ROOT / "tests" / "models" / "onnx"
RESULTS = ROOT / "bench" / "results" / "import_models.json"
PLATFORMS = ("gap8", "gap9")
TARGET_MODEL = "mobilenet_v1_025_96"
GENERATION_TARGET = 2.0      # seconds: import + generation of TARGET_MODEL
INFERENCE_TARGET = 2.0       # seconds of host time for one simulated inference
REPEATS = 3                  # import + generation runs from cold caches: the best is reported
INPUTS = 4                   # random int8 inputs compared with the source's reference
QDQ_EQUAL, QDQ_LSB = V.QDQ_EQUAL, V.QDQ_LSB
STATUS = {"ok": "ok", "WRONG": "WRONG"}


def sources() -> list:
    """(name, path) of the measured models: the int8 TFLite networks (not the ``*_float`` forms,
    which need calibration), then the ONNX QDQ models."""
    tfl = sorted(p for p in TFLITE_DIR.glob("*.tflite") if not p.stem.endswith("_float"))
    return [(p.stem, p) for p in tfl] + [(p.stem, p) for p in sorted(ONNX_DIR.glob("*_qdq.onnx"))]


def reference_seconds() -> float:
    """CPU seconds of a fixed pure-Python loop (10**7 additions), best of 3 (as bench/mobilenet.py):
    how fast this machine runs Python now."""
    best = float("inf")
    for _ in range(3):
        c0, total = time.process_time(), 0
        for i in range(10 ** 7):
            total += i
        best = min(best, time.process_time() - c0)
    return best


# ---- timing ---------------------------------------------------------------------------------------


def import_and_generate(path: Path, platform: str, work: Path, k: int) -> tuple:
    """One import (no check generation) + generation from cold caches into ``work``: (import
    result, import directory, generation directory, generated Model, timings)."""
    imp, gen = work / f"imp{k}", work / f"gen{k}"
    clear_cache()
    t0, c0 = time.perf_counter(), time.process_time()
    result = import_model(str(path), str(imp), platform=platform, check=False)
    t1, c1 = time.perf_counter(), time.process_time()
    d = V.read_import_dir(imp)
    model = V.generate(d, str(gen))
    t2, c2 = time.perf_counter(), time.process_time()
    return result, d, gen, model, {"total_s": t2 - t0, "import_s": t1 - t0, "generation_s": t2 - t1,
                                   "total_cpu_s": c2 - c0, "import_cpu_s": c1 - c0, "generation_cpu_s": c2 - c1}


def import_checked_seconds(path: Path, platform: str, work: Path) -> float:
    """Wall seconds of ``autotiler import``'s own work (with its check generation), cold caches."""
    clear_cache()
    t0 = time.perf_counter()
    import_model(str(path), str(work / "checked"), platform=platform, check=True)
    return time.perf_counter() - t0


# ---- one model on one platform --------------------------------------------------------------------


def simulate(d, gen: Path, runs: list) -> tuple:
    """Build, construct, run each input: (outputs per run, counters of the first run, build s,
    build cache hit, host seconds of each run)."""
    t0 = time.perf_counter()
    prog = host_harness.build(str(gen), sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=d.platform)
    build_s = time.perf_counter() - t0
    g = prog.graph(d.graph)
    g.construct()
    outs, first, host = [], None, []
    try:
        for values in runs:
            got = {p.name: np.full(p.items, V.SENTINEL, dtype=p.dtype) for p in d.outputs}
            args = {name: np.ascontiguousarray(v).ravel() for name, v in values.items()}
            t1 = time.perf_counter()
            counters = g.run(**args, **got)
            host.append(time.perf_counter() - t1)
            first = first or counters
            outs.append({p.name: got[p.name].reshape(p.shape) for p in d.outputs})
    finally:
        g.destruct()
    return outs, first, build_s, prog.cache_hit, host


def check_outputs(d, runs: list, outs: list) -> tuple:
    """(status, per-output figures) against the source's reference on the same inputs. TFLite:
    "ok" when bit-exact, else "WRONG". ONNX: "ok" within issue 24 §7's bound (at least 99 % of
    the items equal, none more than 1 LSB away, same top-1), else "WRONG"."""
    want = V.run_source(d, runs)
    checks, statuses = [], []
    for p in d.outputs:
        o = V.compare(p, [w[p.name] for w in want], [g[p.name] for g in outs])
        top1 = o.top1_equal is None or o.top1_equal == o.runs
        if d.source_format == "tflite":
            status = "ok" if o.equal == o.items else "WRONG"
        else:
            status = "ok" if top1 and o.equal_ratio >= QDQ_EQUAL and o.max_lsb <= QDQ_LSB else "WRONG"
        statuses.append(status)
        checks.append({"name": o.name, "shape": list(o.shape), "items": o.items, "equal": o.equal,
                       "equal_ratio": o.equal_ratio, "max_lsb": o.max_lsb, "top1_equal": o.top1_equal,
                       "runs": o.runs, "status": status})
    worst = "WRONG" if "WRONG" in statuses else "ok"
    return worst, checks


def own_reference(result, runs: list, outs: list) -> bool:
    """Whether the generated graph's outputs equal the importer's int8 reference
    (:func:`autotiler.importers.reference.run`, by ``sq8_tflm`` in the graph's arithmetic) on the
    same inputs: for an ONNX model, tells a fault of the generated C from a difference between
    the importer's arithmetic and onnxruntime's. The graph's inputs are given dequantised where the IR takes
    float (its QUANTIZE maps them back), in the IR's NHWC where the port is the source's NCHW; a
    float output (a DEQUANTIZE at the edge) is quantised back onto the port."""
    graph, lw = result.graph, result.lowered
    for values, got in zip(runs, outs):
        feed = {}
        for name, port in zip(graph.inputs, lw.inputs):
            t = graph.tensor(name)
            x = values[port.name]
            if x.ndim == 4 and tuple(x.shape) != tuple(t.shape):
                x = x.transpose(0, 2, 3, 1)
            feed[name] = V.dequantise(x, port) if t.dtype.value.startswith("float") else x
        ref = REF.run(graph, feed)
        for port in lw.outputs:
            want = np.asarray(ref[port.tensor])
            if want.dtype.kind == "f":          # the DEQUANTIZE of a float interface: exact, undone
                want = V.quantise(want, port)
            if want.ndim == 4 and tuple(want.shape) != tuple(port.shape):
                want = want.transpose(0, 3, 1, 2)
            if not np.array_equal(want.reshape(port.shape), got[port.name]):
                return False
    return True


def layers(model, plan, result, counters) -> list:
    """Per layer: the import report's row and the node's simulated counters."""
    sim = {n["name"]: n for n in counters["nodes"]}
    out = []
    for r in R.layer_rows(model, plan, result.graph, result.lowered):
        n = sim.get(r.name, {})
        cycles = int(n.get("cycles", 0))
        out.append({"name": r.name, "operator": r.operator, "macs": r.macs, "predicted": r.cycles,
                    "cycles": cycles, "mac_per_cycle": r.macs / cycles if r.macs and cycles else None,
                    "predicted_mac_per_cycle": r.mac_per_cycle, "l1": r.l1, "l2_l1": r.l2_l1, "l3": r.l3,
                    "stall_cycles": int(n.get("stall_cycles", 0)), "flash_to_l2": int(n.get("flash_to_l2", 0))})
    return out


def measure(name: str, path: Path, platform: str, repeats: int, arena) -> dict:
    fmt = path.suffix.lstrip(".")
    row = {"model": name, "source": str(path.relative_to(ROOT)), "format": fmt, "platform": platform}
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        work = Path(tmp)
        timings, last = [], None
        try:
            for k in range(repeats):
                *last, timing = import_and_generate(path, platform, work, k)
                timings.append(timing)
        except AutoTilerError as err:
            return {**row, "status": "refused", "error": str(err).splitlines()[0].replace(f"{ROOT}/", "")}
        result, d, gen, model = last
        best = min(timings, key=lambda t: t["total_s"])
        checked_s = import_checked_seconds(path, platform, work)
        plan = plan_graph(model, model.graphs[d.graph], model.l2_budget)
        runs = V.make_inputs(d, INPUTS, {})
        outs, counters, build_s, hit, host = simulate(d, gen, runs)
    status, checks = check_outputs(d, runs, outs)
    exact = own_reference(result, runs, outs) if fmt == "onnx" else None
    if exact is False:
        status = "WRONG"           # the C does not compute what its own arithmetic says
    rows = layers(model, plan, result, counters)
    macs = sum(r["macs"] for r in rows)
    cycles = int(counters["cycles"])
    clock = R.CLOCK_MHZ[platform]
    dyn = plan.dyn
    return {
        **row, "status": status, "correct": status != "WRONG", "within_issue_bound": status == "ok",
        "bit_exact_with_autotiler_reference": exact,
        "reference": "tflite-micro" if fmt == "tflite" else "onnxruntime", "outputs": checks,
        **best, "runs_total_s": [t["total_s"] for t in timings], "import_checked_s": checked_s,
        "build_s": build_s, "build_cache_hit": hit, "inference_host_s": host[0], "inference_host_runs_s": host,
        "l1_budget": model.l1_budget, "l2_budget": model.l2_budget,
        "layers": rows, "macs": macs, "cycles": cycles, "predicted_cycles": sum(r["predicted"] for r in rows),
        "mac_per_cycle": macs / cycles if cycles else None, "clock_mhz": clock,
        "latency_ms": cycles / clock / 1000.0, "stall_cycles": int(counters.get("stall_cycles", 0)),
        "flash_to_l2": int(counters.get("flash_to_l2", 0)),
        "l3_traffic": int(counters.get("l3_to_l2", 0)) + int(counters.get("l2_to_l3", 0)),
        "l2_dynamic": dyn.peak, "l2_lower_bound": dyn.lower_bound, "l2_algorithm": dyn.algorithm,
        "l2_static": plan.static_bytes, "tflm_arena_head": arena.head if arena else None,
        "tflm_arena_total": arena.total if arena else None,
        "l2_equal_bound": dyn.peak == dyn.lower_bound,
        "l2_within_arena": None if arena is None else dyn.peak <= arena.head,
    }


# ---- printing -------------------------------------------------------------------------------------


def _f(v, fmt=".2f") -> str:
    return "-" if v is None else format(v, fmt)


def report(r: dict) -> list:
    head = f"{r['model']} ({r['format']}) on {r['platform']}: "
    if r["status"] == "refused":
        return [head + f"refused by the importer: {r['error']}"]
    outs = "; ".join(f"{o['name']} {o['equal']}/{o['items']} equal, max {o['max_lsb']} LSB"
                     + (f", top-1 {o['top1_equal']}/{o['runs']}" if o["top1_equal"] is not None else "")
                     for o in r["outputs"])
    arena = ("no TFLM arena (ONNX)" if r["tflm_arena_head"] is None else
             f"TFLM arena head {r['tflm_arena_head']} B ({'within' if r['l2_within_arena'] else 'ABOVE'})")
    lines = [
        head + f"output {STATUS[r['status']]} against {r['reference']} ({outs})"
        + ("" if r["bit_exact_with_autotiler_reference"] is None else
           f"; {'bit-exact with' if r['bit_exact_with_autotiler_reference'] else 'DIFFERENT from'} "
           "autotiler's int8 reference"),
        f"  import + generation {r['total_s']:.2f} s (import {r['import_s']:.2f} + generation {r['generation_s']:.2f}; "
        f"CPU {r['total_cpu_s']:.2f} s; best of {', '.join(f'{t:.2f}' for t in r['runs_total_s'])} s); "
        f"autotiler import with its check {r['import_checked_s']:.2f} s; build {r['build_s']:.2f} s "
        f"({'cache hit' if r['build_cache_hit'] else 'built'}); one inference {r['inference_host_s']:.2f} s host",
        f"  {r['cycles']} cycles simulated ({r['predicted_cycles']} predicted), {r['macs']} MAC, "
        f"{_f(r['mac_per_cycle'])} MAC/cycle, {r['latency_ms']:.3f} ms at {r['clock_mhz']:g} MHz; L2 activations "
        f"{r['l2_dynamic']} B, bound {r['l2_lower_bound']} B, {arena}",
        f"  {'layer':<28} {'operator':<22} {'MAC':>9} {'predicted':>9} {'cycles':>9} {'MAC/cyc':>7} {'L1 B':>6} "
        f"{'L2<->L1':>8}",
    ]
    for n in r["layers"]:
        lines.append(f"  {n['name']:<28} {n['operator']:<22} {n['macs']:>9} {n['predicted']:>9} {n['cycles']:>9} "
                     f"{_f(n['mac_per_cycle']):>7} {n['l1']:>6} {n['l2_l1']:>8}")
    return lines


def _each(rs: list, key: str, fmt: str = "{}") -> str:
    return " / ".join(fmt.format(r[key]) for r in rs)


def summary(results: list) -> list:
    """The README's table: one row per model, each figure ``gap8 / gap9`` (the platforms run; the
    liveness bound and TFLM's arena do not depend on the platform)."""
    by_model: dict = {}
    for r in results:
        by_model.setdefault(r["model"], []).append(r)
    lines = ["| model | status | MAC | cycles | latency ms | MAC/cycle | L2 activations B; bound; TFLM arena "
             "| import + generation s (CPU) | one inference s |", "|---|---|---|---|---|---|---|---|---|"]
    for name, rs in by_model.items():
        if any(r["status"] == "refused" for r in rs):
            lines.append(f"| {name} | refused: {rs[0].get('error', '')} | | | | | | | |")
            continue

        arena = "-" if rs[0]["tflm_arena_head"] is None else str(rs[0]["tflm_arena_head"])
        status = " / ".join(r["status"] for r in rs)
        times = " / ".join(f"{r['total_s']:.2f} ({r['total_cpu_s']:.2f})" for r in rs)
        lines.append(f"| {name} | {status} | {rs[0]['macs']} | {_each(rs, 'cycles')} | {_each(rs, 'latency_ms', '{:.3f}')} | "
                     f"{' / '.join(_f(r['mac_per_cycle']) for r in rs)} | {_each(rs, 'l2_dynamic')}; "
                     f"{rs[0]['l2_lower_bound']}; {arena} | {times} | {_each(rs, 'inference_host_s', '{:.2f}')} |")
    return lines


def targets(results: list) -> dict:
    """The issue's targets, each PASS / FAIL with its figures (None: not measured in this run)."""
    ok = [r for r in results if r["status"] != "refused"]
    mob = [r for r in ok if r["model"] == TARGET_MODEL]
    verdict = {}
    if mob:
        worst = max(r["total_s"] for r in mob)
        verdict["mobilenet_import_generation"] = {"target_s": GENERATION_TARGET, "worst_s": worst,
                                                  "pass": worst < GENERATION_TARGET}
    if ok:
        slow = max(ok, key=lambda r: r["inference_host_s"])
        verdict["inference_host"] = {"target_s": INFERENCE_TARGET, "worst_s": slow["inference_host_s"],
                                     "worst": f"{slow['model']} {slow['platform']}",
                                     "pass": slow["inference_host_s"] < INFERENCE_TARGET}
        above = [f"{r['model']} {r['platform']}" for r in ok if not r["l2_equal_bound"]]
        verdict["l2_equal_bound"] = {"above": above, "pass": not above}
        over = [f"{r['model']} {r['platform']}" for r in ok if r["l2_within_arena"] is False]
        verdict["l2_within_tflm_arena"] = {"above": over, "compared": sum(r["l2_within_arena"] is not None for r in ok),
                                           "pass": not over}
        onnx = [r for r in ok if r["format"] == "onnx"]
        if onnx:
            short = [f"{r['model']} {r['platform']}: {min(o['equal_ratio'] for o in r['outputs']):.1%} equal, "
                     f"max {max(o['max_lsb'] for o in r['outputs'])} LSB" for r in onnx if not r["within_issue_bound"]]
            verdict["onnx_qdq_bound"] = {"equal": QDQ_EQUAL, "lsb": QDQ_LSB, "below": short, "pass": not short}
    return verdict


def target_lines(t: dict) -> list:
    def pf(ok):
        return "PASS" if ok else "FAIL"

    lines = []
    if "mobilenet_import_generation" in t:
        m = t["mobilenet_import_generation"]
        lines.append(f"  {TARGET_MODEL} import + generation < {m['target_s']:g} s: {pf(m['pass'])} "
                     f"(worst of the platforms {m['worst_s']:.2f} s)")
    if "inference_host" in t:
        m = t["inference_host"]
        lines.append(f"  one simulated inference < {m['target_s']:g} s of host time: {pf(m['pass'])} "
                     f"(slowest {m['worst']}: {m['worst_s']:.2f} s)")
        m = t["l2_equal_bound"]
        lines.append(f"  L2 for activations equal to its lower bound: {pf(m['pass'])}"
                     + (f" (above: {', '.join(m['above'])})" if m["above"] else ""))
        m = t["l2_within_tflm_arena"]
        lines.append(f"  L2 for activations never above TFLM's arena: {pf(m['pass'])} ({m['compared']} compared"
                     + (f"; above: {', '.join(m['above'])}" if m["above"] else "") + ")")
    if "onnx_qdq_bound" in t:
        m = t["onnx_qdq_bound"]
        lines.append(f"  ONNX QDQ against onnxruntime (issue 24 §7: >= {m['equal']:.0%} of the items equal, <= "
                     f"{m['lsb']} LSB, same top-1): {pf(m['pass'])}" + (f" ({'; '.join(m['below'])})" if m["below"] else ""))
    return lines


def main(argv=None) -> int:
    names = [n for n, _ in sources()]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", choices=names, default=names, metavar="NAME",
                   help="models (default: all): " + ", ".join(names))
    p.add_argument("--platforms", nargs="+", choices=PLATFORMS, default=list(PLATFORMS))
    p.add_argument("--repeats", type=int, default=REPEATS, help=f"import + generation runs (default {REPEATS})")
    p.add_argument("--json", type=Path, default=RESULTS, help=f"results file (default {RESULTS.relative_to(ROOT)})")
    args = p.parse_args(argv)
    t_start = time.perf_counter()
    ref_s = reference_seconds()
    print(f"this machine: a pure-Python loop of 10**7 additions takes {ref_s:.2f} s of CPU (times below scale with it)")
    results = []
    for name, path in sources():
        if name not in args.models:
            continue
        arena = R.tflm_arena(path.read_bytes()) if path.suffix == ".tflite" else None
        for platform in args.platforms:
            results.append(measure(name, path, platform, args.repeats, arena))
            print("\n".join(report(results[-1])), flush=True)
    t = targets(results)
    elapsed = time.perf_counter() - t_start
    print("\n".join(summary(results)))
    print("targets (reported, not asserted):\n" + "\n".join(target_lines(t)))
    data = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "git": git_state(), "python": sys.version.split()[0],
            "machine": pyplatform.machine(), "reference_loop_s": ref_s, "numpy": np.__version__,
            "elapsed_s": elapsed, "repeats": args.repeats, "inputs_compared": INPUTS,
            "clocks_mhz": {k: R.CLOCK_MHZ[k] for k in args.platforms},
            "clock_sources": {k: R.CLOCK_SOURCE[k] for k in args.platforms},
            "cycles": "simulated: each basic kernel charged its Cost= model; GVSoC not run",
            "targets": t, "results": results}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(data, indent=1, sort_keys=True, default=_json_default) + "\n", encoding="utf-8")
    print(f"wrote {args.json} ({elapsed:.0f} s)")
    return 0 if all(r["status"] != "WRONG" for r in results) else 2   # a benchmark of wrong code is worthless


def _json_default(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return None if math.isnan(v) else float(v)
    raise TypeError(f"{type(v).__name__} is not JSON serialisable")


if __name__ == "__main__":
    sys.exit(main())
