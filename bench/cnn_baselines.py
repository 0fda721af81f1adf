"""Honest baselines: every CNN layer of MNIST and MobileNet tiled by our ``time`` objective, the
original's rule (``original``) and DORY's conv tiler's rule (``dory``,
``autotiler/tiler/dory.py``), generated, built and run on the simulated GAP8 in the same run.

    python bench/cnn_baselines.py [--json PATH] [--only mnist|mobilenet] [--quiet]

Per network and objective, every layer is declared as a standalone user kernel in one model (the
generator calls of ``examples/mnist/model.py``'s ``MnistModel`` and of ``examples/mobilenet``'s
layer table), generated and built once; each distinct layer is then called with ``Program.call``
on random inputs of its dtypes and its output compared bit for bit with the layer reference
(``autotiler/generators/cnn_conv_reference.py``, ``cnn_dense_reference.py``), so that a baseline
cannot win by being wrong. Reported per layer and objective: simulated cycles, L2<->L1 traffic
(bytes moved by the simulator's DMA, both directions), L1 use (the tiling's footprint); for
``dory`` whether DORY's rule applied, its early exit, or a fallback and why. Then the geometric
means over the distinct layers of each network of dory/ours and original/ours for cycles and
traffic. Layers repeated in a network (MobileNet's blocks 7-11, its five classifier parts) are
run once and counted once (the ``x`` column says how many times the network has them).

Budgets: MNIST the guide's (L1 48000 B, the model's ``MnistModel(48000, ...)``), MobileNet
GAP8's (L1 64 KiB, ``examples/mobilenet/model.py``'s ``L1_BUDGET``). DORY's rule is held to
``min(budget, 36700 B)``, DORY's own GAP8 L1 (64000 B minus the stacks).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import host_harness  # noqa: E402
from autotiler import Model, SetGeneratedFilesNames, SetL1MemorySize, SetTilingObjective, SetUsedFilesNames  # noqa: E402
from autotiler.codegen import generate, write_files  # noqa: E402
from autotiler.constants import KernelOper_T as K  # noqa: E402
from autotiler.generators import CNN_HEADER, CNN_KERNELS_DIR, CNN_SOURCES, LoadCNNLibrary  # noqa: E402
from autotiler.generators import cnn_conv_reference as CONV_REF  # noqa: E402
from autotiler.generators import cnn_dense_reference as DENSE_REF  # noqa: E402
from autotiler.generators.cnn_conv import CNN_ConvolutionPoolReLU  # noqa: E402
from autotiler.generators.cnn_dense import CNN_GlobalPool, CNN_LinearReLU, CNN_SoftMax  # noqa: E402
from autotiler.platforms import get_platform  # noqa: E402
from autotiler.tiler import dory as DORY  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "cnn_baselines.json"
OBJECTIVES = ("time", "original", "dory")
BASELINES = ("dory", "original")
DTYPE = {1: np.int8, 2: np.int16, 4: np.int32}
SENTINEL = {1: -99, 2: -12345, 4: -123456789}
CONV_NAMES = ["In_DataSize", "Filter_DataSize", "Bias_DataSize", "Out_DataSize", "In_Q", "Filter_Q", "Bias_Q",
              "Out_Q", "In_InL3", "Filter_InL3", "Bias_InL3", "Out_InL3", "InFeat", "OutFeat", "Width", "Height",
              "ConvOper", "Fcx", "Fcy", "Dcx", "Dcy", "Scx", "Scy", "ConvPad", "PoolOper", "Fpx", "Fpy", "Dpx", "Dpy",
              "Spx", "Spy", "PoolPad", "ReLUOper"]
LINEAR_NAMES = ["In_DataSize", "Filter_DataSize", "Bias_DataSize", "Out_DataSize", "In_Q", "Filter_Q", "Bias_Q",
                "Out_Q", "In_InL3", "Filter_InL3", "Bias_InL3", "Out_InL3", "InDim", "OutDim", "LinearOper",
                "ReLUOper"]
SOFTMAX_NAMES = ["In_DataSize", "Out_DataSize", "In_Q", "Out_Q", "In_InL3", "Out_InL3", "Dim", "SoftMaxOper"]
GPOOL_NAMES = ["In_DataSize", "Out_DataSize", "In_Q", "Out_Q", "In_InL3", "Out_InL3", "InFeat", "OutFeat", "Width",
               "Height", "PoolOper"]
GENERATORS = {"conv": (CNN_ConvolutionPoolReLU, CONV_NAMES), "linear": (CNN_LinearReLU, LINEAR_NAMES),
              "softmax": (CNN_SoftMax, SOFTMAX_NAMES), "gpool": (CNN_GlobalPool, GPOOL_NAMES)}


@dataclass
class Layer:
    """One generator call (``kind`` conv, linear, softmax or gpool) by its parameters' names;
    ``count``: how many layers of the network are this one."""

    name: str
    kind: str
    p: dict
    count: int = 1
    same_as: list = field(default_factory=list)

    def declare(self) -> None:
        gen, names = GENERATORS[self.kind]
        if not gen(self.name, 0, *[self.p[n] for n in names]):
            raise RuntimeError(f"{self.name}: the generator declared nothing")

    def key(self) -> tuple:
        return (self.kind, tuple(sorted((k, int(v)) for k, v in self.p.items())))


def _conv(name, *values) -> Layer:
    return Layer(name, "conv", dict(zip(CONV_NAMES, values)))


def mnist_layers() -> list:
    """The four generator calls of examples/mnist/model.py's MnistModel, parameter for parameter."""
    return [
        _conv("Conv5x5ReLUMaxPool2x2_0", 2, 2, 2, 2, 12, 14, 14, 12, 1, 1, 1, 1, 1, 32, 28, 28,
              K.KOP_CONV_DP, 5, 5, 1, 1, 1, 1, 0, K.KOP_MAXPOOL, 2, 2, 1, 1, 2, 2, 0, K.KOP_RELU),
        _conv("Conv5x5ReLUMaxPool2x2_1", 2, 2, 2, 2, 12, 14, 14, 12, 1, 1, 1, 1, 32, 64, 12, 12,
              K.KOP_CONV_DP, 5, 5, 1, 1, 1, 1, 0, K.KOP_MAXPOOL, 2, 2, 1, 1, 2, 2, 0, K.KOP_RELU),
        Layer("LinearLayerReLU_0", "linear", dict(zip(LINEAR_NAMES, (2, 2, 2, 2, 12, 12, 8, 11, 2, 2, 2, 2, 1024, 10,
                                                                     K.KOP_LINEAR, K.KOP_NONE)))),
        Layer("SoftMax_0", "softmax", dict(zip(SOFTMAX_NAMES, (2, 2, 15, 15, 1, 1, 10, K.KOP_SOFTMAX)))),
    ]


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mobilenet_layers() -> tuple:
    """examples/mobilenet's layers (network.py's table, model.py's MobileNetLayers arguments) and
    the model's L1 budget."""
    model = _load(ROOT / "examples" / "mobilenet" / "model.py", "bench_cnn_baselines_mobilenet")
    net = model.NET
    out = []
    for c in net.CONVS:
        out.append(_conv(c.name, 1, 1, 1, 1, c.in_q, net.Q_W, net.Q_ACT, net.Q_ACT, 0, 0, 0, 0, c.in_feat,
                         c.out_feat, c.width, c.height, K.KOP_CONV_DW if c.kind == "dw" else K.KOP_CONV_DP, c.f, c.f,
                         1, 1, c.stride, c.stride, 1 if c.f == 3 else 0, K.KOP_NONE, 0, 0, 0, 0, 0, 0, 0, K.KOP_RELU))
    out.append(Layer("Pool", "gpool", dict(zip(GPOOL_NAMES, (1, 1, net.Q_ACT, net.Q_ACT, 0, 0, net.POOL_FEAT,
                                                             net.POOL_FEAT, net.POOL_W, net.POOL_H,
                                                             K.KOP_GLOBAL_AVGPOOL)))))
    for name in net.LINEARS:
        out.append(Layer(name, "linear", dict(zip(LINEAR_NAMES, (1, 1, 1, 1, net.Q_ACT, net.Q_W, net.Q_ACT,
                                                                 net.Q_LOGITS, 0, 0, 0, 0, net.POOL_FEAT, net.PART,
                                                                 K.KOP_LINEAR, K.KOP_NONE)))))
    out.append(Layer("SoftMax", "softmax", dict(zip(SOFTMAX_NAMES, (1, 2, net.Q_LOGITS, 15, 0, 0, net.CLASSES,
                                                                     K.KOP_SOFTMAX)))))
    return out, model.L1_BUDGET


def distinct(layers: list) -> list:
    """The first of each set of identical layers, with its count and the others' names."""
    seen: dict = {}
    for layer in layers:
        first = seen.setdefault(layer.key(), layer)
        if first is not layer:
            first.count += 1
            first.same_as.append(layer.name)
    return list(seen.values())


# ----------------------------------------------------------------------------------------------
# Generating, building, running


def build(out_dir: Path, layers: list, l1: int, objective: str, platform) -> tuple:
    """All layers in one model under ``objective``: (program, {name: tiling}, seconds to tile)."""
    t0 = time.perf_counter()
    with Model(platform) as m:
        SetUsedFilesNames(0, 1, CNN_HEADER)
        SetGeneratedFilesNames("Layers.c", "Layers.h")
        SetL1MemorySize(l1)
        SetTilingObjective(objective)
        LoadCNNLibrary()
        for layer in layers:
            layer.declare()
        tilings = dict(m.tilings)
        files = generate(m)
    seconds = time.perf_counter() - t0
    write_files(files, str(out_dir))
    prog = host_harness.build(out_dir, sources=CNN_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=platform)
    return prog, tilings, seconds


def _values(rng, shape, size: int) -> np.ndarray:
    lim = 1 << (8 * size - 3)     # a quarter of the container's range: results mostly unsaturated
    return rng.integers(-lim, lim, size=shape).astype(DTYPE[size])


def inputs_and_expected(layer: Layer, seed: int) -> tuple:
    """(C arguments but Out, expected Out) on random inputs of the layer's dtypes."""
    rng = np.random.default_rng(seed)
    p = layer.p
    if layer.kind == "conv":
        size = p["In_DataSize"]
        dw = p["ConvOper"] in (K.KOP_CONV_DW, K.KOP_CONV_DWDP)
        fshape = (p["OutFeat"], p["Fcy"], p["Fcx"]) if dw else (p["OutFeat"], p["InFeat"], p["Fcy"], p["Fcx"])
        args = dict(In=_values(rng, (p["InFeat"], p["Height"], p["Width"]), size), Filter=_values(rng, fshape, size),
                    Bias=_values(rng, p["OutFeat"], size))
        keys = CONV_NAMES[CONV_NAMES.index("ConvOper"):]
        exp = CONV_REF.conv_pool_relu(args["In"], args["Filter"], args["Bias"], p["In_Q"], p["Filter_Q"], p["Bias_Q"],
                                      p["Out_Q"], **{k: p[k] for k in keys})
        return args, exp
    if layer.kind == "linear":
        args = dict(In=_values(rng, p["InDim"], p["In_DataSize"]),
                    Filter=_values(rng, (p["OutDim"], p["InDim"]), p["Filter_DataSize"]),
                    Bias=_values(rng, p["OutDim"], p["Bias_DataSize"]))
        exp = DENSE_REF.linear_relu(args["In"], args["Filter"], args["Bias"], p["In_Q"], p["Filter_Q"], p["Bias_Q"],
                                    p["Out_Q"], p["Out_DataSize"], p["ReLUOper"])
        return args, exp
    if layer.kind == "softmax":
        args = dict(In=_values(rng, p["Dim"], p["In_DataSize"]))
        return args, DENSE_REF.softmax(args["In"], p["In_Q"])
    args = dict(In=_values(rng, (p["InFeat"], p["Height"], p["Width"]), p["In_DataSize"]))
    return args, DENSE_REF.global_pool(args["In"], p["PoolOper"])


def run_layer(prog, layer: Layer, seed: int) -> dict:
    args, exp = inputs_and_expected(layer, seed)
    size = exp.dtype.itemsize
    out = np.full(exp.size, SENTINEL[size], dtype=exp.dtype)
    exp = exp.ravel()
    counters = prog.call(layer.name, Out=out, **{k: v.ravel() for k, v in args.items()})
    if not np.array_equal(out, exp):
        bad = int(np.count_nonzero(out != exp))
        raise AssertionError(f"{layer.name}: {bad} of {out.size} outputs differ from the reference")
    return counters


def _traffic(c: dict) -> int:
    return int(c["l2_to_l1"] + c["l1_to_l2"])


def measure(network: str, layers: list, l1: int, work: Path, quiet: bool) -> dict:
    platform = get_platform("gap8")
    runs = distinct(layers)
    rows = {layer.name: {"layer": layer.name, "kind": layer.kind, "count": layer.count, "same_as": layer.same_as}
            for layer in runs}
    tiling_seconds = {}
    for objective in OBJECTIVES:
        prog, tilings, secs = build(work / f"{network}_{objective}", layers, l1, objective, platform)
        tiling_seconds[objective] = round(secs, 2)
        for i, layer in enumerate(runs):
            c = run_layer(prog, layer, seed=1000 + i)
            t = tilings[layer.name]
            r = {"cycles": int(c["cycles"]), "traffic": _traffic(c), "l1": int(t.l1_bytes),
                 "l3_traffic": int(c["l3_to_l2"] + c["l2_to_l3"]),
                 "tiling": t.describe()}
            if t.predicted is not None and t.predicted.cycles != c["cycles"]:
                r["predicted"] = int(t.predicted.cycles)
            if objective == "dory":
                r["dory"] = DORY.explain(t, l1)
            rows[layer.name][objective] = r
        if not quiet:
            print(f"  {network}: {objective} generated ({secs:.1f} s), built and run", file=sys.stderr)
    return {"network": network, "l1_budget": l1, "dory_l1": DORY.dory_l1(l1), "layers": list(rows.values()),
            "tiling_seconds": tiling_seconds}


# ----------------------------------------------------------------------------------------------
# Report


def geomean(values: list) -> float:
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def ratios(net: dict) -> dict:
    """Geometric means over the network's distinct layers of baseline/ours for cycles and traffic
    (traffic: layers where ours moves bytes)."""
    out = {}
    for base in BASELINES:
        for what in ("cycles", "traffic"):
            vals = [row[base][what] / row["time"][what] for row in net["layers"] if row["time"][what] > 0]
            out[f"{base}/ours {what}"] = round(geomean(vals), 4)
    return out


def _status(d: dict) -> str:
    if d["status"] == "not conv":
        return "max L1"
    if d["status"] == "fallback":
        return "fallback"
    return "DORY (whole)" if d["early_exit"] else "DORY"


def table(net: dict) -> list:
    lines = [f"{net['network']} (L1 budget {net['l1_budget']} B; DORY held to {net['dory_l1']} B)",
             f"{'layer':<24}{'x':>2} | {'cycles ours':>11} {'original':>10} {'dory':>10} | "
             f"{'traffic ours':>12} {'original':>10} {'dory':>10} | {'L1 ours':>7} {'orig':>6} {'dory':>6} | dory rule"]
    for row in net["layers"]:
        t, o, d = row["time"], row["original"], row["dory"]
        lines.append(f"{row['layer']:<24}{row['count']:>2} | {t['cycles']:>11} {o['cycles']:>10} {d['cycles']:>10} | "
                     f"{t['traffic']:>12} {o['traffic']:>10} {d['traffic']:>10} | {t['l1']:>7} {o['l1']:>6} "
                     f"{d['l1']:>6} | {_status(d['dory'])}")
    g = net["geomean"]
    lines.append("geometric means over the distinct layers: " + ", ".join(f"{k} {v:.3f}" for k, v in g.items()))
    for row in net["layers"]:
        d = row["dory"]["dory"]
        if d["status"] == "fallback":
            lines.append(f"  {row['layer']}: dory fallback: {d['reason']}")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", default=str(RESULTS), help="where to write the results (default: %(default)s)")
    ap.add_argument("--only", choices=("mnist", "mobilenet"), help="one network only")
    ap.add_argument("--work", default=str(ROOT / "build" / "bench_cnn_baselines"), help="generated code goes here")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    nets = []
    if args.only in (None, "mnist"):
        nets.append(measure("mnist", mnist_layers(), 48000, work, args.quiet))
    if args.only in (None, "mobilenet"):
        layers, l1 = mobilenet_layers()
        nets.append(measure("mobilenet", layers, l1, work, args.quiet))
    for net in nets:
        net["geomean"] = ratios(net)
    allrows = {"layers": [row for net in nets for row in net["layers"]]}
    overall = ratios(allrows)
    for net in nets:
        print("\n".join(table(net)))
        print()
    print("all layers: " + ", ".join(f"{k} {v:.3f}" for k, v in overall.items()))
    result = {"bench": "cnn_baselines", "objectives": list(OBJECTIVES), "dory_l1_gap8": DORY.DORY_L1,
              "networks": nets, "geomean_all": overall, "seconds": round(time.perf_counter() - t0, 1)}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.json} ({result['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
