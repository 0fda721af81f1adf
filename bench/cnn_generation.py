"""Benchmark of generating a whole network from the CNN generators: MobileNet v1 (width 0.25,
128x128x3 input, 8-bit "fps") under GAP8 budgets (L1 64 KiB, L2 512 KiB).

    python bench/cnn_generation.py [--json PATH] [--objective NAME] [--repeat N] [--baseline PATH]

Target (issue 10, section 3): the whole network's user kernels are declared and tiled with the
``time`` objective in under 2 s (wall clock, best of ``--repeat`` runs, tiling cache cleared
before each run, ``LoadCNNLibrary()`` included; C generation is not). The CPU seconds of the
process are printed next to it: on a machine shared with other jobs the wall clock is theirs too.

Layers: conv 3x3 stride 2, 3->8 (padded); 13 depth-wise separable blocks (depth wise 3x3, padded,
stride 2 at blocks 2, 4, 6 and 12, then point wise 1x1), channels 8->16, 16->32, 32->32, 32->64,
64->64, 64->128, 5x 128->128, 128->256, 256->256; a global average pool of the 4x4x256 features;
a linear layer 256->1000. ReLU after every convolution (``KOP_RELU``), DP convolutions
(``KOP_CONV_DP``, ``KOP_CONV_DWDP``), every data size 1 and every Q format 7 (Norm = 7).

Per layer: the candidates the objective considered, the chosen tiling, its predicted cycles and
the wall-clock seconds of its generator call (best of the runs). ``--baseline PATH`` compares
the predicted cycles of each layer with a previous run's JSON (quality must not drop: at most
x1.005) and says which layers' tilings changed (description, L1 bytes, cycles, candidates).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autotiler import Model, SetMemorySizes, SetTilingObjective  # noqa: E402
from autotiler import objectives as objectives_mod  # noqa: E402
from autotiler.constants import KernelOper_T as K  # noqa: E402
from autotiler.generators import LoadCNNLibrary  # noqa: E402
from autotiler.generators.cnn_conv import CNN_ConvolutionPoolReLU  # noqa: E402
from autotiler.generators.cnn_dense import CNN_GlobalPool, CNN_LinearReLU  # noqa: E402
from autotiler.model.session import current_model  # noqa: E402

L1, L2 = 64 * 1024, 512 * 1024
TARGET_SECONDS = 2.0
QUALITY_SLACK = 1.005

# (in channels, out channels, stride of the depth-wise convolution) of the 13 blocks
BLOCKS = [(8, 16, 1), (16, 32, 2), (32, 32, 1), (32, 64, 2), (64, 64, 1), (64, 128, 2)] + [(128, 128, 1)] * 5 + [
    (128, 256, 2), (256, 256, 1)]


def layers() -> list:
    """(name, generator, arguments) of every layer, in network order."""
    q = (7, 7, 7, 7)
    out = []
    size = 128

    def conv(name, cin, cout, w, oper, f, s):
        return (name, CNN_ConvolutionPoolReLU,
                (name, 0, 1, 1, 1, 1, *q, 0, 0, 0, 0, cin, cout, w, w, oper, f, f, 1, 1, s, s, 1,
                 K.KOP_NONE, 1, 1, 1, 1, 1, 1, 0, K.KOP_RELU))

    out.append(conv("Conv0", 3, 8, size, K.KOP_CONV_DP, 3, 2))
    size //= 2
    for i, (cin, cout, s) in enumerate(BLOCKS, 1):
        out.append(conv(f"Dw{i}", cin, cin, size, K.KOP_CONV_DWDP, 3, s))
        size = -(-size // s)
        out.append(conv(f"Pw{i}", cin, cout, size, K.KOP_CONV_DP, 1, 1))
    out.append(("Pool", CNN_GlobalPool, ("Pool", 0, 1, 1, 7, 7, 0, 0, 256, 256, size, size,
                                         K.KOP_GLOBAL_AVGPOOL)))
    out.append(("Linear", CNN_LinearReLU, ("Linear", 0, 1, 1, 1, 1, *q, 0, 0, 0, 0, 256, 1000, K.KOP_LINEAR,
                                           K.KOP_NONE)))
    return out


def run_once(objective: str) -> tuple:
    """(total wall seconds, {layer: wall seconds}, model, total CPU seconds) of declaring the
    network in a fresh model."""
    objectives_mod._CACHE.clear()
    per = {}
    with Model("gap8") as m:
        SetMemorySizes(L1, L2)
        SetTilingObjective(objective)
        t_all, cpu_all = time.perf_counter(), time.process_time()
        LoadCNNLibrary()
        per["LoadCNNLibrary"] = time.perf_counter() - t_all
        for name, gen, args in layers():
            t0 = time.perf_counter()
            if not gen(*args):
                raise SystemExit(f"{name}: no tiling")
            per[name] = time.perf_counter() - t0
        total, cpu = time.perf_counter() - t_all, time.process_time() - cpu_all
        assert current_model() is m
    return total, per, m, cpu


def _tiling_of(row: dict) -> tuple:
    """What says a layer's tiling is the same as a baseline's: its description (tile counts and
    sizes, staging), L1 bytes, predicted cycles and the candidates compared."""
    return row["tiling"], row["l1_bytes"], row["cycles"], row["candidates"], row["predicted_exactly"]


def _git() -> dict:
    def out(*cmd):
        try:
            return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""
    return {"commit": out("git", "rev-parse", "HEAD"), "dirty": bool(out("git", "status", "--porcelain", "autotiler"))}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "cnn_generation.json"))
    p.add_argument("--objective", default="time")
    p.add_argument("--repeat", type=int, default=3, help="runs; the best wall-clock time of each is kept")
    p.add_argument("--baseline", help="a previous run's JSON: per-layer predicted cycles must not grow > x1.005")
    args = p.parse_args(argv)

    runs = [run_once(args.objective) for _ in range(max(1, args.repeat))]
    total = min(r[0] for r in runs)
    cpu = min(r[3] for r in runs)
    per = {name: min(r[1][name] for r in runs) for name in runs[0][1]}
    m = runs[-1][2]
    rows = []
    for name, _, _ in layers():
        kernels = [k for k in m.tilings if k == name or k.startswith(name + "_")] or [name]
        for k in kernels:
            t = m.tilings[k]
            rows.append({"layer": name, "kernel": k, "seconds": per[name], "candidates": t.candidates,
                         "predicted_exactly": t.predicted_candidates, "tiling": t.describe(),
                         "cycles": t.predicted.cycles if t.predicted else None, "l1_bytes": t.l1_bytes})
    base = None
    if args.baseline:
        base = {r["kernel"]: r for r in json.loads(Path(args.baseline).read_text())["layers"]}

    print(f"MobileNet v1 0.25 @128x128 fps, gap8 L1 {L1} B, L2 {L2} B, objective '{args.objective}', "
          f"best of {len(runs)}")
    print(f"{'layer':8} {'cand':>5} {'exact':>5} {'cycles':>9} {'ms':>7}  tiling")
    changed = []
    for r in rows:
        extra = ""
        if base and r["kernel"] in base:
            ratio = r["cycles"] / base[r["kernel"]]["cycles"]
            extra = f"  x{ratio:.4f} vs baseline" + ("  <-- WORSE" if ratio > QUALITY_SLACK else "")
            r["vs_baseline"] = ratio
            if _tiling_of(r) != _tiling_of(base[r["kernel"]]):
                changed.append(r["kernel"])
                extra += "  (tiling changed)"
        print(f"{r['kernel']:8} {r['candidates']:>5} {r['predicted_exactly']:>5} {r['cycles']:>9} "
              f"{r['seconds'] * 1e3:>7.1f}  {r['tiling']}{extra}")
    cycles = sum(r["cycles"] for r in rows)
    ok = total < TARGET_SECONDS if args.objective == "time" else None
    print(f"total: {total:.3f} s wall, {cpu:.3f} s CPU (LoadCNNLibrary {per['LoadCNNLibrary'] * 1e3:.0f} ms), "
          f"{len(rows)} kernels, "
          f"predicted {cycles} cycles; target < {TARGET_SECONDS} s: "
          f"{'PASS' if ok else 'FAIL' if ok is not None else 'n/a'}")
    quality = None
    if base:
        worse = [r for r in rows if r.get("vs_baseline", 1.0) > QUALITY_SLACK]
        quality = not worse
        print(f"quality vs {args.baseline}: {'PASS' if quality else 'FAIL'} "
              f"(worst x{max(r.get('vs_baseline', 1.0) for r in rows):.4f}, limit x{QUALITY_SLACK}); tilings "
              + (f"changed: {', '.join(changed)}" if changed else
                 f"unchanged ({sum(r['kernel'] in base for r in rows)} kernels: description, L1 bytes, cycles, "
                 "candidates)"))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({
        "network": "MobileNet v1 0.25 128x128x3 fps", "platform": "gap8", "l1": L1, "l2": L2,
        "objective": args.objective, "repeat": len(runs), "total_seconds": total, "cpu_seconds": cpu,
        "all_totals": [r[0] for r in runs], "all_cpu": [r[3] for r in runs], "target_seconds": TARGET_SECONDS, "ok": ok,
        "quality_vs_baseline": quality, "tilings_changed": changed if base else None, "predicted_cycles": cycles,
        "git": _git(), "layers": rows}, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0 if ok in (True, None) and quality in (True, None) else 1


if __name__ == "__main__":
    sys.exit(main())
