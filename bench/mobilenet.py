"""examples/mobilenet (issue 10 §3, 8-bit "fps" fixed point) and examples/mobilenet_sq8 (issue 23 §5,
int8 with TensorFlow Lite Micro's arithmetic) measured side by side: MobileNet v1 (width 0.25,
128x128x3) as one 34-node graph, at the GAP8 budget (L1 64 KiB, L2 512 KiB less the application's input and output:
460 KiB) and at a tight L2 budget where activations spill to L3 RAM (80 KiB). Per budget:

* generation time with the ``time`` objective (declare = the generators tiling every layer, then
  plan + C), wall clock and CPU seconds, each of ``GENERATION_REPEATS`` generations from cold
  caches (``objectives.clear_cache()``: nothing tiled, no Cost= parsed), the best one reported
  (as ``timeit``: the machine may be shared, and its load only ever adds time; every run's figure
  is in the JSON), target < 2 s; with the CPU seconds of a fixed pure-Python loop on the same
  machine in the same run (``reference_loop_s``), since the absolute seconds move with the
  machine's load;
* one simulated inference's host time (``run`` only; build and construct reported apart), target
  < 2 s;
* the dynamic L2 plan's peak over its lower bound, target <= 1.05;
* simulated cycles per node (and the tiler's prediction of the node's kernel alone: the node's
  simulated cycles also hold its waits for constants still arriving from flash, "stall"), MACs per node, MAC/cycle per node and
  for the whole network; flash -> L2 and L3 <-> L2 bytes.

The output is checked against the numpy reference (a benchmark of wrong code is worthless: exit
status 2). Targets are reported, not asserted (tests/test_example_mobilenet*.py assert what must
hold). Results go to bench/results/<example>.json (or --json DIR).

    python bench/mobilenet.py [--example mobilenet mobilenet_sq8] [--L2 BYTES ...] [--json DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
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
from autotiler import Model, SetTilingObjective  # noqa: E402
from autotiler.codegen import generate, write_files  # noqa: E402
from autotiler.graph.lower import plan_graph  # noqa: E402
from autotiler.objectives import clear_cache  # noqa: E402

EXAMPLES = ("mobilenet", "mobilenet_sq8")
RESULTS = ROOT / "bench" / "results"
GENERATION_TARGET = 2.0       # seconds, objective 'time'
INFERENCE_TARGET = 2.0        # seconds of host time for one simulated inference
RATIO_TARGET = 1.05           # dynamic L2 peak / lower bound
TIGHT = 80 * 1024
GENERATION_REPEATS = 3     # generations timed per budget, each from cold caches: the best is reported


def load(example: str, name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{example}_{name}", ROOT / "examples" / example / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Example:
    """An example's model, reference and network modules (the same interface in both)."""

    def __init__(self, name: str):
        self.name = name
        self.model, self.ref = load(name, "model"), load(name, "reference")
        self.net = self.model.NET

    def node_macs(self) -> dict:
        """Multiply-accumulates of each node (pooling and softmax: none)."""
        macs = {c.name: c.macs for c in self.net.CONVS}
        macs.update({n: self.net.POOL_FEAT * self.net.PART for n in self.net.LINEARS})
        return macs


def generation(ex: Example, l2: int, tmp: str) -> tuple:
    """(model, timings) of one generation at L2 budget ``l2`` into ``tmp``, from cold caches:
    wall clock and CPU seconds of the declarations (the generators tiling every layer) and of
    the plan and C."""
    clear_cache()
    with Model() as m:
        SetTilingObjective("time")
        t0, c0 = time.perf_counter(), time.process_time()
        ex.model.declare(l2=l2)
        t1, c1 = time.perf_counter(), time.process_time()
        write_files(generate(m), tmp)
        t2, c2 = time.perf_counter(), time.process_time()
    return m, {"generation_s": t2 - t0, "tiling_s": t1 - t0, "plan_and_codegen_s": t2 - t1,
               "generation_cpu_s": c2 - c0, "tiling_cpu_s": c1 - c0, "plan_and_codegen_cpu_s": c2 - c1}


def measure(ex: Example, l2: int, x) -> dict:
    """Generate (GENERATION_REPEATS times, the best kept), build, construct, run once at L2
    budget ``l2``: every figure of the run."""
    with tempfile.TemporaryDirectory() as tmp:
        timings = []
        for _ in range(GENERATION_REPEATS):   # every run generates the same files: the last one's model is kept
            m, timing = generation(ex, l2, tmp)
            timings.append(timing)
        timing = min(timings, key=lambda r: r["generation_s"])
        t2 = time.perf_counter()
        with m:
            plan = plan_graph(m, m.graphs[ex.model.NAME], l2)     # the plan generate() made (its tilings cached)
        # the tiler's prediction of each node's kernel (its L3 variant's where the node calls one)
        predicted = {n: (plan.variant(i).tiling if plan.variant(i) else m.tilings[n]).predicted.cycles
                     for i, n in enumerate(ex.model.NODES)}
        prog = host_harness.build(tmp, sources=ex.ref.SOURCES, include_dirs=ex.ref.INCLUDE_DIRS)
        t3 = time.perf_counter()
        g = prog.graph(ex.model.NAME)
        g.construct()
        expected = ex.ref.expected_output(x)
        got = np.full(ex.ref.OUT_SHAPE, ex.ref.SENTINEL, dtype=expected.dtype)
        t4 = time.perf_counter()
        c = g.run(Input=x.ravel(), Output=got)
        t5 = time.perf_counter()
        g.destruct()
    ok = bool(np.array_equal(got, expected))
    macs = ex.node_macs()
    nodes = [{"name": n["name"], "cycles": n["cycles"], "predicted": predicted[n["name"]], "macs": macs.get(n["name"], 0),
              "mac_per_cycle": macs.get(n["name"], 0) / n["cycles"], "l2_to_l1": n["l2_to_l1"],
              "l1_to_l2": n["l1_to_l2"], "flash_to_l2": n["flash_to_l2"], "l3": n["l3_to_l2"] + n["l2_to_l3"],
              "stall_cycles": n["stall_cycles"]} for n in c["nodes"]]
    by_area: dict = {}
    for s in plan.symbols:
        by_area.setdefault(s.area, []).append(s.name)
    return {
        "example": ex.name, "l1": ex.model.L1_BUDGET, "l2": l2, "correct": ok,
        **timing, "generation_runs_s": [r["generation_s"] for r in timings],
        "build_s": t3 - t2, "build_cache_hit": prog.cache_hit, "inference_host_s": t5 - t4,
        "plan": {"static_bytes": plan.static_bytes, "dynamic_bytes": plan.dyn.peak,
                 "dynamic_lower_bound": plan.dyn.lower_bound, "ratio": plan.dyn.peak / plan.dyn.lower_bound,
                 "algorithm": plan.dyn.algorithm, "promoted": sorted(by_area.get("static", [])),
                 "prefetched": sorted(by_area.get("flash", [])), "spilled": sorted(by_area.get("l3", [])),
                 "l3_bytes": plan.l3_bytes, "l3_traffic": plan.l3_traffic, "flash_image_bytes": plan.flash_bytes,
                 "variants": [v.name for v in plan.variants]},
        "cycles": c["cycles"], "macs": ex.net.MACS, "mac_per_cycle": ex.net.MACS / c["cycles"],
        "compute_cycles": c["compute_cycles"], "stall_cycles": c["stall_cycles"],
        "flash_to_l2": c["flash_to_l2"], "l3_traffic": c["l3_to_l2"] + c["l2_to_l3"],
        "l2_to_l1": c["l2_to_l1"], "l1_to_l2": c["l1_to_l2"], "peak_l1": c["peak_l1"], "peak_l2": c["peak_l2"],
        "peak_l3": c["peak_l3"], "nodes": nodes,
    }


def report(r: dict) -> list:
    p = r["plan"]
    lines = [
        f"{r['example']}: L1 {r['l1']} B, L2 {r['l2']} B: output {'bit-exact' if r['correct'] else 'WRONG'}",
        f"  generation {r['generation_s']:.2f} s (best of {', '.join(f'{t:.2f}' for t in r['generation_runs_s'])} s "
        f"from cold caches; tiling {r['tiling_s']:.2f} s, plan + C {r['plan_and_codegen_s']:.2f} s; "
        f"CPU {r['generation_cpu_s']:.2f} s: {r['tiling_cpu_s']:.2f} + {r['plan_and_codegen_cpu_s']:.2f}; "
        f"target < {GENERATION_TARGET:g} s: {'PASS' if r['generation_s'] < GENERATION_TARGET else 'FAIL'}), "
        f"build {r['build_s']:.2f} s ({'cache hit' if r['build_cache_hit'] else 'built'})",
        f"  one inference: {r['inference_host_s']:.2f} s of host time (target < {INFERENCE_TARGET:g} s: "
        f"{'PASS' if r['inference_host_s'] < INFERENCE_TARGET else 'FAIL'})",
        f"  L2 plan: static {p['static_bytes']} B ({len(p['promoted'])} constants promoted), dynamic "
        f"{p['dynamic_bytes']} B, lower bound {p['dynamic_lower_bound']} B, ratio {p['ratio']:.3f} ({p['algorithm']}; "
        f"target <= {RATIO_TARGET}: {'PASS' if p['ratio'] <= RATIO_TARGET else 'FAIL'}); {len(p['prefetched'])} "
        f"constants prefetched from flash; in L3 RAM: {', '.join(p['spilled']) or '-'} ({p['l3_bytes']} B)",
        f"  {r['cycles']} cycles, {r['macs']} MAC: {r['mac_per_cycle']:.2f} MAC/cycle; flash->L2 {r['flash_to_l2']} B, "
        f"L3<->L2 {r['l3_traffic']} B (plan {p['l3_traffic']}), L2<->L1 {r['l2_to_l1'] + r['l1_to_l2']} B, "
        f"stalls {r['stall_cycles']} cycles; peak L1 {r['peak_l1']} B, peak L2 {r['peak_l2']} B (with the I/O)",
        f"  {'node':<8} {'cycles':>8} {'predicted':>9} {'MAC':>8} {'MAC/cyc':>7} {'stall':>6} {'flash B':>7} {'L3 B':>6}",
    ]
    for n in r["nodes"]:
        lines.append(f"  {n['name']:<8} {n['cycles']:>8} {n['predicted']:>9} {n['macs']:>8} {n['mac_per_cycle']:>7.2f} "
                     f"{n['stall_cycles']:>6} {n['flash_to_l2']:>7} {n['l3']:>6}")
    return lines


def reference_seconds() -> float:
    """CPU seconds of a fixed pure-Python loop (10**7 additions), best of 3: how fast this machine
    runs Python now, so that generation times of runs on other machines (or on a loaded VM) can
    be compared as ratios to it."""
    best = float("inf")
    for _ in range(3):
        c0, total = time.process_time(), 0
        for i in range(10 ** 7):
            total += i
        best = min(best, time.process_time() - c0)
    return best


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--example", nargs="+", choices=EXAMPLES, default=list(EXAMPLES), help="examples (default: both)")
    p.add_argument("--L2", type=int, nargs="+", default=None, help="L2 budgets (default: each example's GAP8 "
                   f"budget and {TIGHT})")
    p.add_argument("--json", type=Path, default=RESULTS, help=f"results directory (default {RESULTS.relative_to(ROOT)})")
    args = p.parse_args(argv)
    ref_s = reference_seconds()
    print(f"this machine: a pure-Python loop of 10**7 additions takes {ref_s:.2f} s of CPU (generation times below "
          "scale with it)")
    ok = True
    summary = []
    for name in args.example:
        ex = Example(name)
        ex.net.ensure_weights()               # written once, before any timing
        x = ex.ref.make_input(np.random.default_rng(1))
        print(f"examples/{name}: {len(ex.model.NODES)} nodes, {ex.net.MACS} MAC, "
              f"{sum(v.nbytes for v in ex.ref.load_weights().values())} B of constants")
        runs = []
        for l2 in args.L2 or [ex.model.L2_BUDGET, TIGHT]:
            runs.append(measure(ex, l2, x))
            print("\n".join(report(runs[-1])), flush=True)
        data = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "git": git_state(), "python": sys.version.split()[0],
                "machine": pyplatform.machine(), "reference_loop_s": ref_s, "numpy": np.__version__,
                "platform": "gap8", "example": name,
                "targets": {"generation_s": GENERATION_TARGET, "inference_host_s": INFERENCE_TARGET,
                            "dynamic_ratio": RATIO_TARGET},
                "runs": runs}
        path = args.json / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {path}")
        ok = ok and all(r["correct"] for r in runs)
        summary += [f"  {name:<14} L2 {r['l2']:>7} B: {r['cycles']:>9} cycles, {r['mac_per_cycle']:.2f} MAC/cycle, "
                    f"generation {r['generation_s']:.2f} s, L2 dynamic {r['plan']['dynamic_bytes']} B / bound "
                    f"{r['plan']['dynamic_lower_bound']} B" for r in runs]
    print("side by side:\n" + "\n".join(summary))
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
