"""Fused layers measured (issue 26, "Targets"): ``autotiler import`` with ``--fusion none`` (layer
by layer), ``fit`` at ``--fusion-l2`` = half the layer-by-layer liveness bound, and ``min``, on
MobileNet v1 0.25 96x96 and MobileNet v2 0.35 96x96 (the targets) and on DS-CNN, ResNet-8 and
patch_stage_128 (context rows), platform pulp_open (``--platform gap8`` for GAP8). Per model and variant:

* peak L2 of the activations (the graph plan's dynamic area) against the layer-by-layer liveness
  lower bound and against TFLM's arena head (``report.tflm_arena``: activations and scratch, I/O
  included), both as ratios (target: at most 0.5 each);
* L2<->L1 bytes (the tilings' traffic, ``report.layer_rows``) of the whole network, and of each
  fused group against the same layers in the unfused graph (target: lower);
* cycles: predicted (the tiler's, summed over the nodes), host-simulated (each basic kernel charged
  its ``Cost=``), and GVSoC's (``mcycle`` around the run on pulp-open's cluster, Construct apart)
  when GVSOC_HOME is set and the platform is pulp_open; fused / unfused (target: at most 1.05),
  for the network and per fused group (the group's node against the sum of its layers' nodes);
* bit-exact: the outputs (one random int8 input) equal tflite-micro's, the unfused graph's, and on
  GVSoC the host simulator's; any difference makes the benchmark exit with status 2.

Then the smallest ``--L2`` each target network (and patch_stage_128, a MobileNet-like stage whose
activations are large and weights small) imports in (its check generation plans the graph;
a budget it does not fit raises ImportModelError), for ``none`` and for ``fit`` (default target:
the L2 budget itself), by bisection: a failed import's message says how many bytes the plan needs
at once, which is tried next; then 4 KiB steps, then 256 B. The answer B is a budget that imports
with B - 256 failing, both tried (fusion choices change with the budget, so the search does not
assume monotony beyond that). Whether the plan at B spills activations to L3 RAM is reported.

A GVSoC run that fails or does not finish in ``--gvsoc-timeout`` seconds is reported as "not run"
with its reason, not hidden; after a fused
variant times out, the model's other fused variants are not tried on GVSoC. MobileNet v2's application
is over pulp-open's L2 at the default budget: ``--l2 mobilenet_v2_035_96=401408`` imports it smaller.

    python bench/fusion.py [--models NAME ...] [--platform pulp_open|gap8] [--no-gvsoc] [--gvsoc-timeout S]
                           [--smallest NAME ...] [--l2 MODEL=B ...] [--update] [--jobs N] [--json PATH]
    python bench/fusion.py --render      # the Markdown again from the JSON

The models and the smallest-L2 searches run in ``--jobs`` worker processes (default 2). ``--update``
keeps the results file's other models.
Writes PATH (default bench/results/fusion.json) and a Markdown summary beside it (.md).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable, Optional

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from gvsoc_networks import _exact, _graph_run, revision  # noqa: E402  (bench/gvsoc_networks.py)
from run import git_state  # noqa: E402  (bench/run.py)

import host_harness  # noqa: E402
from autotiler.errors import AutoTilerError  # noqa: E402
from autotiler.generators import CNN_KERNELS_DIR, CNN_SQ8_SOURCES  # noqa: E402
from autotiler.graph.lower import plan_graph  # noqa: E402
from autotiler.importers import report as R  # noqa: E402
from autotiler.importers import verify as V  # noqa: E402
from autotiler.importers.script import import_model  # noqa: E402
from autotiler.platforms import get_platform  # noqa: E402
from host_harness import gvsoc  # noqa: E402

MODELS_DIR = ROOT / "tests" / "models" / "import"
RESULTS = ROOT / "bench" / "results" / "fusion.json"
TARGETS = ("mobilenet_v1_025_96", "mobilenet_v2_035_96")
CONTEXT = ("ds_cnn_kws", "resnet8", "patch_stage_128")
SMALLEST = TARGETS + ("patch_stage_128",)   # patch_stage_128: activations fit L2 only fused
VARIANTS = ("none", "fit", "min")
PLATFORMS = ("pulp_open", "gap8")
L2_RATIO = 0.5          # issue 26: peak L2 at most half the bound and half TFLM's arena
CYCLES_RATIO = 1.05     # issue 26: fused cycles no worse than unfused by more than 5 %
COARSE, FINE = 4096, 256
_NEED = re.compile(r"(\d+) bytes are alive at once")
GVSOC_TIMEOUT = 300     # seconds for one GVSoC build + run (host_harness.gvsoc.RUN_TIMEOUT for this bench)


# ---- one variant ----------------------------------------------------------------------------------


def fusion_l2(variant: str, bound: int) -> Optional[int]:
    """``--fusion-l2`` of a variant: half the layer-by-layer bound for ``fit``, else none."""
    return bound // 2 if variant == "fit" else None


def _nodes(counters: Optional[dict]) -> dict:
    return {n["name"]: int(n["cycles"]) for n in counters["nodes"]} if counters else {}


def _run_gvsoc(gen: Path, d, x: dict) -> tuple:
    """(outputs, counters, None) of a GVSoC run, or (None, None, why it did not run)."""
    try:
        prog = host_harness.build(str(gen), sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR],
                                  platform="pulp_open", backend="gvsoc")
    except AutoTilerError as err:
        return None, None, str(err).splitlines()[0]
    try:
        y, counters = _graph_run(prog, d, x)
        return y, counters, None
    except AutoTilerError as err:
        return None, None, str(err).splitlines()[0]
    finally:
        prog.close()


def run_variant(path: Path, variant: str, bound: int, platform: str, work: Path, use_gvsoc: bool,
                simulate: bool = True, l2: Optional[int] = None) -> dict:
    """Import, generate, plan, run on the host simulator (unless not ``simulate``: predicted figures
    only) and on GVSoC one variant: its figures, and its outputs and import (keys starting with ``_``,
    dropped before the JSON)."""
    imp, gen = work / f"imp_{variant}", work / f"gen_{variant}"
    t0 = time.perf_counter()
    result = import_model(str(path), str(imp), name="net", platform=platform, l2=l2, check=False, fusion=variant,
                          fusion_l2=fusion_l2(variant, bound))
    d = V.read_import_dir(imp)
    model = V.generate(d, str(gen))
    plan = plan_graph(model, model.graphs[d.graph], model.l2_budget)
    rows = R.layer_rows(model, plan, result.graph, result.lowered)
    runs = V.make_inputs(d, 1, {})
    y_host, host = (None, None) if not simulate else _graph_run(
        host_harness.build(str(gen), sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=platform),
        d, runs[0])
    y_gv, gv, why = (None, None, "GVSoC not asked for or not installed (GVSOC_HOME unset)") if not use_gvsoc else \
        (None, None, f"GVSoC runs pulp_open only, not {platform}") if platform != "pulp_open" else \
        _run_gvsoc(gen, d, runs[0])
    return {"variant": variant, "fusion_l2": fusion_l2(variant, bound), "l2_budget": model.l2_budget,
            "peak_l2": plan.dyn.peak, "peak_l2_bound": plan.dyn.lower_bound, "l3_activations": plan.l3_bytes,
            "descriptor_fusion": result.descriptor["fusion"],
            "groups": [f.to_json() for f in result.fusions], "node_count": len(rows),
            "nodes": [{"name": r.name, "operator": r.operator, "macs": r.macs, "predicted": r.cycles,
                       "l2_l1": r.l2_l1, "l3": r.l3,
                       "host_cycles": _nodes(host).get(r.name) if host else None,
                       "gvsoc_cycles": _nodes(gv).get(r.name) if gv else None} for r in rows],
            "traffic_l2_l1": sum(r.l2_l1 for r in rows), "predicted_cycles": sum(r.cycles for r in rows),
            "host_cycles": int(host["cycles"]) if host else None, "gvsoc_cycles": int(gv["cycles"]) if gv else None,
            "gvsoc_not_run": why, "seconds": time.perf_counter() - t0,
            "_d": d, "_runs": runs, "_host": y_host, "_gvsoc": y_gv}


def _ratio(a, b) -> Optional[float]:
    return a / b if a is not None and b else None


def group_figures(group: dict, fused: dict, unfused: dict) -> dict:
    """A fused group's node against the same layers' nodes in the unfused graph."""
    f = next(n for n in fused["nodes"] if n["name"] == group["name"])
    layers = [n for n in unfused["nodes"] if n["name"] in group["layers"]]
    out = {**group}
    for key in ("l2_l1", "predicted", "host_cycles", "gvsoc_cycles"):
        apart = None if any(n[key] is None for n in layers) else sum(n[key] for n in layers)
        out[key], out[f"{key}_unfused"] = f[key], apart
        out[f"{key}_ratio"] = _ratio(f[key], apart)
    return out


def compare(variants: dict, want: list, arena) -> None:
    """Ratios against the unfused variant and TFLM, bit-exactness; in place."""
    base = variants["none"]
    for v in variants.values():
        d = v["_d"]
        v["ratio_bound"] = _ratio(v["peak_l2"], base["peak_l2_bound"])
        v["ratio_tflm"] = _ratio(v["peak_l2"], arena.head if arena else None)
        for key in ("traffic_l2_l1", "predicted_cycles", "host_cycles", "gvsoc_cycles"):
            v[f"{key}_ratio"] = _ratio(v[key], base[key])
        host = v["_host"]
        v["bit_exact_tflm"] = None if host is None else _exact(d, want, host)
        v["bit_exact_unfused"] = None if host is None else all(np.array_equal(host[k], base["_host"][k]) for k in host)
        v["bit_exact_gvsoc_host"] = None if v["_gvsoc"] is None or host is None else all(
            np.array_equal(v["_gvsoc"][k], host[k]) for k in host)
        v["groups"] = [group_figures(g, v, base) for g in v["groups"]]
        v["group_traffic_l2_l1"] = sum(g["l2_l1"] for g in v["groups"])
        v["group_traffic_l2_l1_unfused"] = sum(g["l2_l1_unfused"] for g in v["groups"])
        checks = (v["bit_exact_tflm"], v["bit_exact_unfused"], v["bit_exact_gvsoc_host"])
        v["correct"] = None if host is None else False not in checks      # None: not simulated


def measure(name: str, platform: str, use_gvsoc: bool, variants=VARIANTS, log=print, simulate: bool = True,
            l2: Optional[int] = None) -> dict:
    """Every variant of one model (``none`` first: the others are compared with it), imported with
    ``--L2 l2`` (None: the platform's L2 less the graph's inputs and outputs)."""
    path = MODELS_DIR / f"{name}.tflite"
    arena = R.tflm_arena(path.read_bytes())
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-fusion-") as tmp:
        bound = None
        skip = None
        for variant in ("none",) + tuple(v for v in variants if v != "none"):
            v = run_variant(path, variant, bound or 0, platform, Path(tmp), use_gvsoc and not skip, simulate, l2)
            if skip:
                v["gvsoc_not_run"] = skip
            elif variant != "none" and "did not finish" in (v["gvsoc_not_run"] or ""):
                skip = f"not tried: the {variant} variant did not finish on GVSoC in {gvsoc.RUN_TIMEOUT} s"
            bound = bound or v["descriptor_fusion"]["unfused_peak_l2"]
            out[variant] = v
            log(f"  {name} {variant}: peak L2 {v['peak_l2']} B, {len(v['groups'])} fused groups, traffic "
                f"{v['traffic_l2_l1']} B, predicted {v['predicted_cycles']}, host {v['host_cycles']}, GVSoC "
                f"{v['gvsoc_cycles'] if v['gvsoc_cycles'] is not None else 'not run: ' + v['gvsoc_not_run']} "
                f"({v['seconds']:.0f} s)")
        want = V.run_source(out["none"]["_d"], out["none"]["_runs"]) if simulate else None
    compare(out, want, arena)
    return {"model": name, "role": "target" if name in TARGETS else "context", "platform": platform,
            "liveness_bound": bound, "tflm_arena_head": arena.head if arena else None,
            "tflm_arena_total": arena.total if arena else None,
            "variants": [{k: x for k, x in v.items() if not k.startswith("_")} for v in out.values()]}


# ---- the smallest L2 ------------------------------------------------------------------------------


def _next_probe(lo: int, hi: int, hint: Optional[int], tried: set) -> int:
    if hint is not None and lo < hint < hi and hint not in tried:
        return hint
    if hint == hi and hi - FINE > lo and hi - FINE not in tried:
        return hi - FINE                 # is the need a failed import reported exact?
    step = COARSE if hi - lo > 2 * COARSE else FINE
    return lo + max((hi - lo) // 2 // step, 1) * step


def smallest_l2(attempt: Callable[[int], tuple], hi: int, log=print, lo: int = 0) -> dict:
    """The smallest L2 budget ``attempt`` succeeds with, to FINE bytes: ``attempt(B)`` gives (ok,
    bytes the plan needs at once when it failed, or None; the plan's L3 activation bytes when it
    succeeded). ``hi`` succeeds; ``lo`` is taken as failing."""
    hint, tried, trail, l3 = COARSE, set(), [], None
    while hi - lo > FINE:
        probe = _next_probe(lo, hi, hint, tried)
        tried.add(probe)
        ok, extra = attempt(probe)
        trail.append({"l2": probe, "ok": ok, ("l3_activations" if ok else "need"): extra})
        log(f"    --L2 {probe}: {'imports' if ok else 'fails'}" + (f" (needs {extra} B at once)" if not ok and extra else ""))
        if ok:
            hint = probe if probe == hint else None
            hi, l3 = probe, extra
        else:
            lo = probe
            hint = -(-extra // FINE) * FINE if extra else None
    if hi not in tried:             # nothing below ``hi`` imports: does ``hi`` itself?
        ok, l3 = attempt(hi)
        trail.append({"l2": hi, "ok": ok})
        hi = hi if ok else None
    return {"smallest_l2": hi, "failing_l2": lo, "l3_activations_at_smallest": l3, "imports": trail}


def import_attempt(path: Path, variant: str, platform: str, work: Path, no_l3: bool = False) -> Callable[[int], tuple]:
    """``attempt(B)`` for :func:`smallest_l2`: ``autotiler import --L2 B`` with its check generation
    (``no_l3``: a plan that puts activations in L3 RAM counts as a failure)."""
    def attempt(l2: int) -> tuple:
        try:
            result = import_model(str(path), str(work / f"imp_{variant}_{l2}"), name="net", platform=platform,
                                  l2=l2, check=True, fusion=variant)
        except AutoTilerError as err:
            need = _NEED.search(str(err))
            return False, int(need.group(1)) if need else None
        model = result.model
        l3 = plan_graph(model, model.graphs["net"], model.l2_budget).l3_bytes
        return (False, None) if no_l3 and l3 else (True, l3)
    return attempt


def smallest(name: str, platform: str, log=print) -> dict:
    """The smallest ``--L2`` of ``none`` and ``fit`` (searched below the platform's L2); where the plan
    there puts activations in L3 RAM, also the smallest without (``none_no_l3``, ``fit_no_l3``)."""
    path = MODELS_DIR / f"{name}.tflite"
    hi = get_platform(platform).l2_size // FINE * FINE
    out = {}
    with tempfile.TemporaryDirectory(prefix="bench-fusion-l2-") as tmp:
        for variant in ("none", "fit"):
            log(f"  {name} {variant}: smallest --L2")
            t0 = time.perf_counter()
            out[variant] = smallest_l2(import_attempt(path, variant, platform, Path(tmp)), hi,
                                       lambda s, v=variant: log(f"  {name} {v}: {s.strip()}"))
            out[variant]["seconds"] = time.perf_counter() - t0
            if out[variant]["l3_activations_at_smallest"]:
                key, t0 = f"{variant}_no_l3", time.perf_counter()
                out[key] = smallest_l2(import_attempt(path, variant, platform, Path(tmp), no_l3=True), hi,
                                       lambda s, k=key: log(f"  {name} {k}: {s.strip()}"),
                                       lo=out[variant]["smallest_l2"])
                out[key]["seconds"] = time.perf_counter() - t0
    return out


# ---- targets and printing -------------------------------------------------------------------------


def _pf(ok) -> str:
    return "n/a" if ok is None else "PASS" if ok else "FAIL"


def targets(models: list) -> list:
    """One line per target, model and fused variant: (text, PASS/FAIL/n/a)."""
    lines = []
    for m in models:
        if m["role"] != "target":
            continue
        for v in m["variants"]:
            if v["variant"] == "none":
                continue
            head = f"{m['model']} {v['variant']}"
            gv = v["gvsoc_cycles_ratio"]
            lines += [
                (f"{head}: peak L2 {v['peak_l2']} B <= {L2_RATIO} x the layer-by-layer bound {m['liveness_bound']} B "
                 f"({_f(v['ratio_bound'])}x)", v["ratio_bound"] <= L2_RATIO),
                (f"{head}: peak L2 <= {L2_RATIO} x TFLM's arena head {m['tflm_arena_head']} B ({_f(v['ratio_tflm'])}x)",
                 None if v["ratio_tflm"] is None else v["ratio_tflm"] <= L2_RATIO),
                (f"{head}: L2<->L1 bytes of the fused groups lower than the same layers unfused "
                 f"({v['group_traffic_l2_l1']} vs {v['group_traffic_l2_l1_unfused']} B)",
                 None if not v["groups"] else v["group_traffic_l2_l1"] < v["group_traffic_l2_l1_unfused"]),
                (f"{head}: predicted cycles fused / unfused <= {CYCLES_RATIO} ({_f(v['predicted_cycles_ratio'], '.3f')})",
                 v["predicted_cycles_ratio"] <= CYCLES_RATIO),
                (f"{head}: GVSoC cycles fused / unfused <= {CYCLES_RATIO} (" + (_f(gv, ".3f") if gv is not None else
                 "not run: " + _why(v["gvsoc_not_run"] or "unfused: " + str(m["variants"][0]["gvsoc_not_run"]))) + ")",
                 None if gv is None else gv <= CYCLES_RATIO),
                (f"{head}: bit-exact with tflite-micro, the unfused graph" + (", GVSoC = host"
                 if v["bit_exact_gvsoc_host"] is not None else ""), v["correct"])]
    return [{"target": t, "status": _pf(ok)} for t, ok in lines]


def _f(v, fmt=".2f") -> str:
    return "-" if v is None else format(v, fmt)


def _why(text: Optional[str]) -> str:
    """A reason in a table: its first clause (the JSON keeps it whole)."""
    return str(text).split(" (")[0]


def _gv(v: dict) -> str:
    return str(v["gvsoc_cycles"]) if v["gvsoc_cycles"] is not None else f"not run: {_why(v['gvsoc_not_run'])}"


def markdown(data: dict) -> str:
    lines = ["# Fused layers (bench/fusion.py, issue 26)", "",
             f"Commit {data['git']['commit'][:12]}{' (dirty tree)' if data['git']['dirty'] else ''}, platform "
             f"{data['platform']}; variants: `none` (layer by layer), `fit` at `--fusion-l2` = 0.5 x the layer-by-layer "
             "liveness bound, `min`. Peak L2: the activations' dynamic area of the graph plan. Cycles: predicted "
             "(tiler), host-simulated (Cost= models), GVSoC (pulp-open, Run only). One random int8 input.", "",
             "## Targets", ""]
    lines += [f"- {t['status']}: {t['target']}" for t in data["targets"]]
    lines += ["", "## Per variant", "",
              "| model | variant | --L2 | fused groups | peak L2 B | / bound | / TFLM head | L2<->L1 B (ratio) | "
              "predicted (ratio) | host sim (ratio) | GVSoC (ratio) | bit-exact TFLM, unfused, GVSoC=host |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in data["models"]:
        for v in m["variants"]:
            lines.append(
                f"| {m['model']} ({m['role']}) | {v['variant']} | {v['l2_budget']} | {len(v['groups'])} | {v['peak_l2']} | "
                f"{_f(v['ratio_bound'])} | {_f(v['ratio_tflm'])} | {v['traffic_l2_l1']} ({_f(v['traffic_l2_l1_ratio'])}) | "
                f"{v['predicted_cycles']} ({_f(v['predicted_cycles_ratio'], '.3f')}) | {v['host_cycles']} "
                f"({_f(v['host_cycles_ratio'], '.3f')}) | {_gv(v)} ({_f(v['gvsoc_cycles_ratio'], '.3f')}) | "
                f"{v['bit_exact_tflm']}, {v['bit_exact_unfused']}, {v['bit_exact_gvsoc_host']} |")
    lines += ["", "Layer-by-layer liveness bound and TFLM arena head: " + "; ".join(
        f"{m['model']} {m['liveness_bound']} B, {m['tflm_arena_head']} B" for m in data["models"]), ""]
    lines += _group_tables(data)
    lines += _smallest_table(data)
    return "\n".join(lines) + "\n"


def _group_tables(data: dict) -> list:
    lines = ["## Fused groups against the same layers unfused", "",
             "| model | variant | group | layers | reason | L2<->L1 B fused / unfused | predicted | host sim | GVSoC |",
             "|---|---|---|---|---|---|---|---|---|"]
    for m in data["models"]:
        for v in m["variants"]:
            for g in v["groups"]:
                lines.append(
                    f"| {m['model']} | {v['variant']} | {g['name']} | {len(g['layers'])} | {g['reason']} | "
                    f"{g['l2_l1']} / {g['l2_l1_unfused']} | {g['predicted']} / {g['predicted_unfused']} "
                    f"({_f(g['predicted_ratio'], '.3f')}) | {g['host_cycles']} / {g['host_cycles_unfused']} "
                    f"({_f(g['host_cycles_ratio'], '.3f')}) | {_f(g['gvsoc_cycles'], 'd')} / "
                    f"{_f(g['gvsoc_cycles_unfused'], 'd')} ({_f(g['gvsoc_cycles_ratio'], '.3f')}) |")
    return lines + [""]


def _need(search: dict) -> str:
    return str(next((i.get("need") for i in search["imports"] if i["l2"] == search["failing_l2"]), None) or "-")


def _cell(search: dict) -> str:
    l3 = search["l3_activations_at_smallest"]
    return f"{search['smallest_l2']} (needs {_need(search)}{f'; L3 {l3} B' if l3 else ''})"


def _smallest_table(data: dict) -> list:
    rows = [m for m in data["models"] if m.get("smallest_l2")]
    if not rows:
        return []
    lines = ["## The smallest L2 each network imports in (`--L2 B`, 256 B resolution)", "",
             "Each B imports and B - 256 does not; \"needs\": the bytes the plan needs at once at B - 256 (the "
             "import's message: activations and the node's constants staged in L2); \"L3\": the activations the "
             "plan puts in L3 RAM there; \"no L3\": the smallest B whose plan keeps every activation in L2.", "",
             "| model | unfused (none) | unfused, no L3 | fused (fit) | fused, no L3 | fused / unfused, no L3 "
             "| imports tried |", "|---|---|---|---|---|---|---|"]
    for m in rows:
        s = m["smallest_l2"]
        n, f = s["none"], s["fit"]
        n3, f3 = s.get("none_no_l3", n), s.get("fit_no_l3", f)
        tried = sum(len(v["imports"]) for v in s.values())
        lines.append(f"| {m['model']} | {_cell(n)} | {n3['smallest_l2']} | {_cell(f)} | {f3['smallest_l2']} | "
                     f"{_f(_ratio(f3['smallest_l2'], n3['smallest_l2']))} | {tried} |")
    return lines + [""]


# ---- main -----------------------------------------------------------------------------------------


def _task(task: tuple):
    """One unit of work, in a worker process: ("measure" | "smallest", model, platform, GVSoC on, L2)."""
    kind, name, platform, use_gvsoc, l2 = task
    log = lambda s: print(s, flush=True)        # noqa: E731  (the workers print their progress)
    if kind == "measure":
        return measure(name, platform, use_gvsoc, log=log, l2=l2)
    return smallest(name, platform, log=log)


def run_tasks(tasks: list, jobs: int) -> list:
    """The tasks' results in order, ``jobs`` worker processes at a time (1: in this process)."""
    if jobs <= 1:
        return [_task(t) for t in tasks]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(_task, tasks))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", choices=TARGETS + CONTEXT, default=list(TARGETS + CONTEXT))
    ap.add_argument("--platform", choices=PLATFORMS, default="pulp_open")
    ap.add_argument("--no-gvsoc", action="store_true", help="do not run GVSoC even when GVSOC_HOME is set")
    ap.add_argument("--gvsoc-timeout", type=int, default=GVSOC_TIMEOUT, metavar="S",
                    help=f"seconds for one GVSoC build and run (default {GVSOC_TIMEOUT})")
    ap.add_argument("--smallest", nargs="*", choices=TARGETS + CONTEXT, default=list(SMALLEST), metavar="NAME",
                    help="models whose smallest --L2 is searched (default: " + ", ".join(SMALLEST) + "; none: skip)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--l2", nargs="*", default=[], metavar="MODEL=B",
                    help="import MODEL's variants with --L2 B (e.g. a budget whose application fits GVSoC's L2)")
    ap.add_argument("--update", action="store_true",
                    help="keep the models of the existing results file that this run does not measure")
    ap.add_argument("--json", type=Path, default=RESULTS, metavar="PATH")
    ap.add_argument("--render", action="store_true", help="only write the Markdown again from the results file")
    ns = ap.parse_args(argv)
    if ns.render:
        data = json.loads(ns.json.read_text())
        data["targets"] = targets(data["models"])
        ns.json.with_suffix(".md").write_text(markdown(data))
        return 0
    ns.l2 = {k: int(v) for k, v in (item.split("=", 1) for item in ns.l2)}
    use_gvsoc = gvsoc.available() and not ns.no_gvsoc
    gvsoc.RUN_TIMEOUT = ns.gvsoc_timeout      # inherited by the workers (forked)
    t0 = time.perf_counter()
    print(f"fusion: platform {ns.platform}, GVSoC {'on' if use_gvsoc else 'off'}, {ns.jobs} jobs", flush=True)
    tasks = [("smallest", n, ns.platform, use_gvsoc, None) for n in ns.models if n in ns.smallest]
    tasks += [("measure", n, ns.platform, use_gvsoc, ns.l2.get(n)) for n in ns.models]
    done = run_tasks(tasks, ns.jobs)
    searched = {t[1]: r for t, r in zip(tasks, done) if t[0] == "smallest"}
    models = [r for t, r in zip(tasks, done) if t[0] == "measure"]
    for m in models:
        if m["model"] in searched:
            m["smallest_l2"] = searched[m["model"]]
    if ns.update and ns.json.exists():
        old = {m["model"]: m for m in json.loads(ns.json.read_text())["models"]}
        fresh = {m["model"]: m for m in models}
        models = [fresh.get(name) or old[name] for name in dict.fromkeys([*old, *fresh])]
        for m in models:
            if m["model"] in fresh and "smallest_l2" not in m and "smallest_l2" in old.get(m["model"], {}):
                m["smallest_l2"] = old[m["model"]]["smallest_l2"]
    data = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "git": git_state(), "revision": revision(),
            "platform": ns.platform, "gvsoc": use_gvsoc, "elapsed_s": time.perf_counter() - t0,
            "l2_ratio_target": L2_RATIO, "cycles_ratio_target": CYCLES_RATIO, "models": models,
            "targets": targets(models)}
    ns.json.parent.mkdir(parents=True, exist_ok=True)
    ns.json.write_text(json.dumps(data, indent=1) + "\n")
    ns.json.with_suffix(".md").write_text(markdown(data))
    print("\n".join(f"{t['status']}: {t['target']}" for t in data["targets"]))
    print(f"wrote {ns.json} and {ns.json.with_suffix('.md')} ({data['elapsed_s']:.0f} s)")
    wrong = [f"{m['model']} {v['variant']}" for m in models for v in m["variants"] if v["correct"] is False]
    if wrong:
        print(f"fusion: NOT bit-exact: {', '.join(wrong)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
