"""Benchmark of the tiler itself: how long tiling takes and how good the time objective's search
is, against baselines measured in the same run.

    python bench/tiling.py [--json PATH] [--quick]

Targets (issue 7):

1. one 64x64-channel, 64x64 conv layer written with parametric spaces (the SDK's CNN form)
   tiles with the ``time`` objective in under 1 s of CPU;
2. a 200-kernel model (adds and 3-space convolutions of many shapes) tiles in under 5 s;
3. tiling time grows at most linearly with H (a 1-D kernel, H from 10**3 to 10**6; the tile
   count grows with H, and the verifier walks every tile of a kernel whose pipeline state never
   repeats exactly, so linear is the expectation, not constant);
4. an impossible size (H = 10**9) is a clear error in under 1 s;
5. the time objective's search finds tilings predicted within 1% of the exhaustive reference
   (``time_exhaustive``: every candidate of the full grid predicted exactly), on every kernel of
   the examples and of the sets above, at several budgets.

Times are CPU seconds (``time.process_time``) of the tiling alone (declaration, validation,
search, schedule and verification; no C generation). The baselines (exhaustive search, the
``original`` rule) run in the same process, so the ratios are comparable across machines; the
absolute seconds are this machine's.
"""

from __future__ import annotations

import argparse
import json
import math
import runpy
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autotiler import *  # noqa: E402,F403
from autotiler import objectives as objectives_mod  # noqa: E402
from autotiler.api.kernels import solve_options  # noqa: E402
from autotiler.model.session import current_model  # noqa: E402
from autotiler.platforms import get_platform  # noqa: E402

S16 = "short * __restrict__"
BIG_L1 = get_platform("gap8", l1_size=1 << 20)  # budgets above the chip's L1 for the sweeps


# ----------------------------------------------------------------------------------------------
# Models


def conv_layer(name: str, in_feat=64, out_feat=64, w=64, h=64, l1=64 * 1024):
    """The SDK's CNN convolution form (CNN_ConvolutionPoolAct_SQ8 without pooling): output
    features chunked by IterParSpace(D1, OutFeat, 8), input features by IterParSpace(D0, InFeat,
    4), lines tiled, a padded input, an int32 accumulator buffer of one tile."""
    D0, D1, T0 = KER_ITER_D0, KER_ITER_D1, KER_ITER_TILE0
    SetL1MemorySize(l1)
    LibKernel("SetBias", CALL_PARALLEL, CArgs(TCArg("int *", "Out"), TCArg("unsigned short", "W"),
                                              TCArg("unsigned short", "H"), TCArg("unsigned short", "OutFeatures"),
                                              TCArg("short *", "Bias")), "SB_T", Cost="W*H*OutFeatures/ncores + 20")
    LibKernel("Conv", CALL_PARALLEL, CArgs(TCArg("short *", "In"), TCArg("unsigned short", "W"),
                                           TCArg("unsigned short", "H"), TCArg("unsigned short", "InFeatures"),
                                           TCArg("unsigned short", "OutFeatures"),
                                           TCArg("unsigned short", "TotalInFeatures"), TCArg("short *", "Filter"),
                                           TCArg("int *", "Out"), TCArg("v4s", "Pad")), "CV_T",
              Cost="W*H*InFeatures*OutFeatures*9/ncores + 30")
    LibKernel("Reduct", CALL_PARALLEL, CArgs(TCArg("int *", "In"), TCArg("unsigned short", "W"),
                                             TCArg("unsigned short", "H"), TCArg("unsigned short", "Feat"),
                                             TCArg("short *", "Out")), "RD_T", Cost="W*H*Feat*2/ncores + 20")
    p = (1, 1, 1, 1)
    return UserKernel(
        name, KernelIterSpace(3, IterParSpace(D1, out_feat, 8), IterTiledSpace(T0), IterParSpace(D0, in_feat, 4)),
        TILE_HOR, CArgs(TCArg(S16, "In"), TCArg(S16, "Filter"), TCArg(S16, "Bias"), TCArg(S16, "Out")),
        Calls(Call("SetBias", LOC_D0_PROLOG, Bindings(
                  K_Arg("ConvOut", KER_ARG_TILE), K_Arg("ConvOut", KER_ARG_TILE_W), K_Arg("ConvOut", KER_ARG_TILE_H),
                  K_ArgPar("ConvOut", KER_ARG_PARTILE_SIZE, D1), K_Arg("Bias", KER_ARG_TILE))),
              Call("Conv", LOC_D0, Bindings(
                  K_Arg("In", KER_ARG_TILE), K_Arg("In", KER_ARG_TILE_W), K_Arg("In", KER_ARG_TILE_H),
                  K_ArgPar("Filter", KER_ARG_PARTILE_SIZE, D0), K_ArgPar("ConvOut", KER_ARG_PARTILE_SIZE, D1),
                  K_ArgPar("Filter", KER_ARG_LOADEDPARTILE_SIZE, D0), K_Arg("Filter", KER_ARG_TILE),
                  K_Arg("ConvOut", KER_ARG_TILE), K_Arg("In", KER_ARG_TILE_PAD))),
              Call("Reduct", LOC_D0_EPILOG, Bindings(
                  K_Arg("ConvOut", KER_ARG_TILE), K_Arg("ConvOut", KER_ARG_TILE_W), K_Arg("ConvOut", KER_ARG_TILE_H),
                  K_ArgPar("ConvOut", KER_ARG_PARTILE_SIZE, D1), K_Arg("Out", KER_ARG_TILE)))),
        KerArgs(KerArgP("In", KerArgSpace(2, D0, T0), O_IN | O_DB, w, h, w, h, p, p, 2, 2, 0, 0, "In"),
                KerArg("Bias", KerArgSpace(1, D1), O_IN | O_DB | O_CONST, 1, 1, 2, 0, 0, 0, "Bias"),
                KerArg("Filter", KerArgSpace(2, D1, D0), O_IN | O_DB | O_CONST, 1, 1, 9 * 2, 0, 0, 0, "Filter"),
                KerArg("Out", KerArgSpace(2, D1, T0), O_OUT | O_DB, w, h, 2, 0, 0, 0, "Out"),
                KerArg("ConvOut", KerArgSpace(2, D1, T0), O_BUFF | O_ONETILE, w, h, 4, 0, 0, 0, "")))


def many_kernels(n=200):
    """n kernels of distinct shapes: element-wise adds (1 tiled space) and 4D-form convolutions
    (output planes > tiles > input planes)."""
    SetL1MemorySize(48000)
    LibKernel("Add", CALL_PARALLEL, CArgs(TCArg(S16, "A"), TCArg(S16, "B"), TCArg(S16, "O"), TCArg("unsigned", "W"),
                                          TCArg("unsigned", "H")), "Add_T", Cost="W*H*3/ncores + 20")
    LibKernel("Conv", CALL_PARALLEL, CArgs(TCArg(S16, "In"), TCArg(S16, "F"), TCArg(S16, "O"), TCArg("unsigned", "W"),
                                           TCArg("unsigned", "H")), "Conv_T", Cost="W*H*25/ncores + 20")
    for i in range(n):
        w, h = 32 + (i % 7) * 8, 24 + (i % 11) * 6
        if i % 2:
            UserKernel(f"Add{i}", KernelDimensions(1, w, h, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,
                       CArgs(TCArg(S16, "A"), TCArg(S16, "B"), TCArg(S16, "O")),
                       Calls(Call("Add", LOC_INNER_LOOP, Bindings(
                           K_Arg("A", KER_ARG_TILE), K_Arg("B", KER_ARG_TILE), K_Arg("O", KER_ARG_TILE),
                           K_Arg("A", KER_ARG_TILE_W), K_Arg("A", KER_ARG_TILE_H)))),
                       KerArgs(KerArg("A", OBJ_IN_DB, w, h, 2, 0, 0, 0, "A", 0), KerArg("B", OBJ_IN_DB, w, h, 2, 0, 0, 0, "B", 0),
                               KerArg("O", OBJ_OUT_DB, w, h, 2, 0, 0, 0, "O", 0)))
        else:
            nip, nop = 2 + i % 3, 2 + i % 5
            UserKernel(f"Conv{i}", KernelDimensions(nip, w, h, nop),
                       KernelIterationOrder(KER_DIM4, KER_OUT_PLANE, KER_TILE, KER_IN_PLANE), TILE_HOR,
                       CArgs(TCArg(S16, "In"), TCArg(S16, "F"), TCArg(S16, "O")),
                       Calls(Call("Conv", LOC_INNER_LOOP, Bindings(
                           K_Arg("In", KER_ARG_TILE), K_Arg("F", KER_ARG_TILE), K_Arg("O", KER_ARG_TILE),
                           K_Arg("In", KER_ARG_TILE_W), K_Arg("In", KER_ARG_TILE_H)))),
                       KerArgs(KerArg("In", OBJ_IN_DB_3D, w, h, 2, 4, 0, 0, "In", 0),
                               KerArg("F", OBJ_IN_DB_NTILED_4D, 5, 5, 2, 0, 0, 0, "F", 0),
                               KerArg("O", OBJ_OUT_DB_3D, w - 4, h - 4, 2, 0, 0, 0, "O", 0)))


def column(h: int, w=16):
    """A 1-D kernel over H lines of W shorts: Out = In + 1."""
    SetL1MemorySize(16000)
    LibKernel("Inc", CALL_PARALLEL, CArgs(TCArg(S16, "In"), TCArg(S16, "Out"), TCArg("unsigned", "W"),
                                          TCArg("unsigned", "H")), "Inc_T", Cost="W*H/ncores + 10")
    return UserKernel("Column", KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0)), TILE_HOR,
                      CArgs(TCArg(S16, "In"), TCArg(S16, "Out")),
                      Calls(Call("Inc", LOC_LOOP, Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
                                                          K_Arg("In", KER_ARG_TILE_W), K_Arg("In", KER_ARG_TILE_H)))),
                      KerArgs(KerArg("In", KerArgSpace(1, KER_ITER_TILE0), OBJ_IN_DB, w, h, 2, 0, 0, 0, "In"),
                              KerArg("Out", KerArgSpace(1, KER_ITER_TILE0), OBJ_OUT_DB, w, h, 2, 0, 0, 0, "Out")))


# ----------------------------------------------------------------------------------------------
# Measurements


def cpu(fn, *args, objective="time", platform="gap8", **kw):
    """(seconds of CPU, result, model) of declaring ``fn`` in a fresh model (tiling cache cleared)."""
    objectives_mod._CACHE.clear()
    with Model(platform) as m:
        SetTilingObjective(objective)
        t0 = time.process_time()
        out = fn(*args, **kw)
        return time.process_time() - t0, out, m


def conv_target() -> dict:
    sec, t, _ = cpu(conv_layer, "ConvLayer")
    sec_ex, t_ex, _ = cpu(conv_layer, "ConvLayer", objective="time_exhaustive")
    sec_or, t_or, _ = cpu(conv_layer, "ConvLayer", objective="original")
    return {"name": "conv layer 64x64 ch, 64x64, parametric spaces tiles in < 1 s (time objective)",
            "ok": sec < 1.0, "seconds": sec, "tiling": t.describe(), "cycles": t.predicted.cycles,
            "candidates": t.candidates, "predicted_exactly": t.predicted_candidates,
            "exhaustive_seconds": sec_ex, "exhaustive_cycles": t_ex.predicted.cycles,
            "vs_exhaustive": t.predicted.cycles / t_ex.predicted.cycles,
            "original_seconds": sec_or, "original_cycles": t_or.predicted.cycles,
            "detail": f"{sec:.3f} s, {t.predicted.cycles} cycles ({t.predicted_candidates} of {t.candidates} "
                      f"candidates predicted exactly); exhaustive {sec_ex:.2f} s, {t_ex.predicted.cycles} cycles "
                      f"(x{t.predicted.cycles / t_ex.predicted.cycles:.4f}); original rule {sec_or:.3f} s, "
                      f"{t_or.predicted.cycles} cycles"}


def many_target(n: int) -> dict:
    sec, _, m = cpu(many_kernels, n)
    sec_or, _, m_or = cpu(many_kernels, n, objective="original")
    cyc = sum(t.predicted.cycles for t in m.tilings.values())
    cyc_or = sum(t.predicted.cycles for t in m_or.tilings.values())
    return {"name": f"{n}-kernel model tiles in < 5 s (time objective)", "ok": sec < 5.0 * n / 200,
            "seconds": sec, "kernels": len(m.tilings), "original_seconds": sec_or,
            "cycles": cyc, "original_cycles": cyc_or,
            "detail": f"{sec:.2f} s for {len(m.tilings)} kernels ({sec / len(m.tilings) * 1e3:.1f} ms each); the "
                      f"original rule {sec_or:.2f} s; predicted total {cyc} cycles vs {cyc_or} with the original "
                      f"rule (x{cyc / cyc_or:.3f})"}


def scaling_target(heights: list) -> dict:
    rows = []
    for h in heights:
        sec, t, _ = cpu(column, h)
        rows.append((h, sec, t.ntiles))
    h0, s0, _ = rows[0]
    worst = max((s / s0) / (h / h0) for h, s, _ in rows[1:])
    return {"name": "tiling time grows at most linearly with H", "ok": worst <= 1.0,
            "rows": [{"H": h, "seconds": s, "tiles": n} for h, s, n in rows], "worst_growth_vs_linear": worst,
            "detail": ", ".join(f"H={h}: {s * 1e3:.0f} ms ({n} tiles)" for h, s, n in rows)
                      + f"; worst (t/t0)/(H/H0) = {worst:.4f}"}


def impossible_target() -> dict:
    objectives_mod._CACHE.clear()
    t0 = time.process_time()
    try:
        with Model():
            column(10 ** 9)
        message, ok = "no error", False
    except AutoTilerError as err:  # noqa: F405
        message, ok = str(err), True
    sec = time.process_time() - t0
    return {"name": "H = 10**9 is a clear error in < 1 s", "ok": ok and sec < 1.0, "seconds": sec, "message": message,
            "detail": f"{sec * 1e3:.0f} ms: {message}"}


def _example_kernels() -> list:
    """(model, kernel declaration) of every user kernel of the examples at their budgets."""
    out = []
    captured = []
    from autotiler.api import kernels as api_kernels
    record = api_kernels._tile_and_record

    def spy(model, uk):
        captured.append((model, uk))
        return record(model, uk)

    api_kernels._tile_and_record = spy
    try:
        for path in sorted((ROOT / "examples").glob("*/model.py")):
            argv = sys.argv
            sys.argv = [str(path), "-o", str(Path("/tmp") / f"at_bench_{path.parent.name}"), "-q"]
            try:
                with Model():
                    runpy.run_path(str(path), run_name="__main__")
            except SystemExit:
                pass
            finally:
                sys.argv = argv
            out += captured
            captured.clear()
    finally:
        api_kernels._tile_and_record = record
    return out


def _sweep_kernels(quick: bool) -> list:
    """Multi-space kernels at budgets from small to large: matmult (two tiled spaces), the CNN
    conv example (three spaces) and the conv layer above."""
    out = []
    mm = runpy.run_path(str(ROOT / "examples" / "matmult" / "model.py"))
    cv = runpy.run_path(str(ROOT / "examples" / "cnn_conv_v3" / "model.py"))
    budgets = (3000, 9000, 21000, 33000, 45000, 57000) if not quick else (9000, 33000)
    for declare, b in [(mm["declare"], b) for b in budgets] + [(cv["declare"], b) for b in (2720, 6000, 16000, 64000)]:
        with Model(BIG_L1) as m:
            declare(b)
            out += [(m, uk) for uk in m.kernels.values()]
    for l1 in ((32 * 1024, 64 * 1024) if not quick else (64 * 1024,)):
        with Model() as m:
            conv_layer("CL", l1=l1)
            out += [(m, uk) for uk in m.kernels.values()]
    return out


def _best(model, uk, objective: str):
    objectives_mod._CACHE.clear()
    options = replace(solve_options(model, uk), objective=objective)
    t0 = time.process_time()
    t = objectives_mod.solve(uk, options)
    return t, time.process_time() - t0


def quality_target(quick: bool) -> dict:
    cases = _example_kernels() + _sweep_kernels(quick)
    with Model():
        many_kernels(12 if quick else 40)
        m = current_model()
        cases += [(m, uk) for uk in m.kernels.values()]
    rows, worst, sec, sec_ex = [], 1.0, 0.0, 0.0
    for model, uk in cases:
        try:
            t, s = _best(model, uk, "time")
            te, se = _best(model, uk, "time_exhaustive")
        except TilingError:  # noqa: F405  (a generator's deliberate probe: no tiling at that budget)
            continue
        ratio = t.predicted.cycles / te.predicted.cycles
        worst = max(worst, ratio)
        sec, sec_ex = sec + s, sec_ex + se
        rows.append({"kernel": uk.name, "budget": model.l1_budget, "cycles": t.predicted.cycles,
                     "exhaustive_cycles": te.predicted.cycles, "ratio": ratio, "predicted": t.predicted_candidates,
                     "exhaustive_predicted": te.predicted_candidates})
    mean_pred = sum(r["predicted"] for r in rows) / len(rows)
    mean_ex = sum(r["exhaustive_predicted"] for r in rows) / len(rows)
    geo = math.exp(sum(math.log(r["ratio"]) for r in rows) / len(rows))
    off = [r for r in rows if r["ratio"] > 1.0005]
    return {"name": "time objective within 1% of the exhaustive search on every kernel", "ok": worst <= 1.01,
            "kernels": len(rows), "worst_ratio": worst, "geomean_ratio": geo, "seconds": sec, "exhaustive_seconds": sec_ex,
            "mean_predicted": mean_pred, "mean_exhaustive_predicted": mean_ex, "rows": rows,
            "detail": f"{len(rows)} kernels: worst x{worst:.4f}, geomean x{geo:.5f}; {sec:.1f} s vs {sec_ex:.1f} s "
                      f"exhaustive ({sec_ex / sec:.0f}x); {mean_pred:.1f} vs {mean_ex:.1f} exact predictions per "
                      f"kernel" + "".join(f"\n     {r['kernel']}@{r['budget']}: x{r['ratio']:.4f}" for r in off)}


# ----------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--json", default=str(ROOT / "bench" / "results" / "tiling.json"))
    p.add_argument("--quick", action="store_true", help="fewer kernels and budgets")
    args = p.parse_args(argv)
    heights = [10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6]
    targets = [conv_target(), many_target(200), scaling_target(heights), impossible_target(),
               quality_target(args.quick)]
    for i, t in enumerate(targets, 1):
        print(f"{i}. [{'PASS' if t['ok'] else 'FAIL'}] {t['name']}\n   {t['detail']}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"targets": targets}, indent=1, default=str) + "\n")
    print(f"wrote {args.json}")
    return 0 if all(t["ok"] for t in targets) else 1


if __name__ == "__main__":
    sys.exit(main())
