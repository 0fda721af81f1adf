"""GVSoC cycles of the SQ8 (TFLM arithmetic) regular convolutions of three imported networks,
before and after KerParConv_TFLM_SQ8's register-blocked rewrite (issue 25 item 4).

    source ~/.cache/gvsoc/env.sh
    /work/main/.venv/bin/python bench/gvsoc_sq8_conv.py [--before REV] [--json PATH] [--md PATH]

Each distinct CONV_2D layer of ds_cnn_kws, resnet8 and mobilenet_v1_025_96 (tests/models/import/)
is declared alone with the generator call ``autotiler import`` writes for it
(CNN_ConvolutionPoolAct_SQ8, Ctrl 0, Scale_DataSize 4: the network's shapes, strides, padding and
activation; random int8 data), generated for pulp_open with the import's L1 budget and run on
GVSoC through the GVSoC back-end, twice: with the SQ8 kernel sources of revision ``--before``
(default f30e983, before this work) and with the working tree's. Each run calls the
kernel once (``prog.call``: the user kernel's cycles, DMA included, code cold in the instruction
cache as in a graph) and once profiled (``prog.profile``: the cycles inside the convolution's
forks; the rest is DMA waits, the tiling loop and the fork/join). Every output is checked against
sq8_tflm (the numpy reference): a layer that differs raises. Results:
bench/results/gvsoc_sq8_conv.json and .md.

The helpers (``Case``, ``run_cases``) are shared with tests/test_gvsoc_sq8_conv.py.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import host_harness  # noqa: E402
from autotiler import KOP_CONV, KOP_NONE, KOP_RELU, KOP_RELUN, Model, SetL1MemorySize, SetUsedFilesNames  # noqa: E402
from autotiler.codegen import generate, write_files  # noqa: E402
from autotiler.generators import CNN_KERNELS_DIR  # noqa: E402
from autotiler.generators import sq8_tflm as T  # noqa: E402
from autotiler.generators.sq8_gen_tflm_conv import conv_constants  # noqa: E402
from autotiler.generators.sq8_generators import (  # noqa: E402
    CNN_ConvolutionPoolAct_SQ8,
    CNN_GroupedConvolutionPoolAct_SQ8,
)
from autotiler.generators.sq8_infos import AT_INF_TFLM_FLAGS, AT_TFLM_FLAG_SINGLE_ROUNDING  # noqa: E402
from autotiler.generators.sq8_library import CNN_SQ8_HEADER, LoadCNN_SQ8_Library  # noqa: E402

BEFORE = "f30e983"
DEFAULT_JSON = ROOT / "bench" / "results" / "gvsoc_sq8_conv.json"
DEFAULT_MD = ROOT / "bench" / "results" / "gvsoc_sq8_conv.md"
IMPORT_L1 = 48896      # the L1 budget autotiler import writes for pulp_open
SENTINEL = -99
ACT_KOP = {"NONE": KOP_NONE, "RELU": KOP_RELU, "RELU6": KOP_RELUN}
CONV_KERNEL = "KerParConv_TFLM_SQ8"


class WrongOutput(AssertionError):
    """A layer's GVSoC output differs from sq8_tflm's."""


@dataclass(frozen=True)
class Case:
    """One convolution: input h x w x cin, cout outputs, filter f = (fy, fx), stride and dilation
    (y, x), padding SAME / VALID, group_in input channels per group (0: cin, not grouped)."""

    name: str
    h: int
    w: int
    cin: int
    cout: int
    f: tuple = (3, 3)
    stride: tuple = (1, 1)
    dilation: tuple = (1, 1)
    padding: str = "SAME"
    act: str = "NONE"
    group_in: int = 0
    in_zp: int = -128
    out_zp: int = -128
    single_rounding: bool = False
    seed: int = 0
    out_scale: float = 0.5      # the output's scale (0.0005: effective scales near 1, shifts -1 .. 1)
    budget: int = IMPORT_L1

    @property
    def gin(self) -> int:
        return self.group_in or self.cin

    def out_hw(self) -> tuple:
        oh, ow, _, _ = T._pad_geometry(self.h, self.w, self.f[0], self.f[1], self.stride, self.dilation,
                                       self.padding)
        return oh, ow

    def macs(self) -> int:
        oh, ow = self.out_hw()
        return oh * ow * self.cout * self.f[0] * self.f[1] * self.gin


def declare(c: Case) -> None:
    """The layer's user kernel, as the importer declares it (lower.py _conv_layer)."""
    geometry = (c.cin, c.cout, c.w, c.h, KOP_CONV, c.f[1], c.f[0], c.dilation[1], c.dilation[0], c.stride[1],
                c.stride[0], int(c.padding == "SAME"), KOP_NONE, 0, 0, 0, 0, 0, 0, 0, ACT_KOP[c.act])
    if c.gin < c.cin:
        groups = c.cin // c.gin
        ok = CNN_GroupedConvolutionPoolAct_SQ8(c.name, 0, c.gin, c.cout // groups, 4, 4, *geometry)
    else:
        ok = CNN_ConvolutionPoolAct_SQ8(c.name, 0, 4, 4, *geometry)
    assert ok == 1, f"{c.name}: no tiling"


def reference(c: Case) -> tuple[dict, np.ndarray]:
    """(the kernel's inputs, sq8_tflm's output) on random int8 data."""
    rng = np.random.default_rng(c.seed)
    in_q, out_q = T.QParams(0.05, c.in_zp), T.QParams(c.out_scale, c.out_zp)
    w_q = T.FilterQParams(tuple(float(s) for s in rng.uniform(0.002, 0.02, c.cout)))
    x = rng.integers(-128, 128, (1, c.h, c.w, c.cin)).astype(np.int8)
    w = rng.integers(-127, 128, (c.cout, c.f[0], c.f[1], c.gin)).astype(np.int8)
    b = rng.integers(-(1 << 14), 1 << 14, c.cout).astype(np.int32)
    rounding = "single" if c.single_rounding else "double"
    y = T.conv2d(x, w, b, in_q, w_q, out_q, stride=c.stride, dilation=c.dilation, padding=c.padding,
                 activation=c.act, rounding=rounding)
    scale, scale_n, infos = conv_constants(in_q, w_q, out_q, c.act, c.cout)
    if c.single_rounding:
        words = np.asarray(infos).astype(np.int8).view("<i4").copy()
        words[AT_INF_TFLM_FLAGS] |= AT_TFLM_FLAG_SINGLE_ROUNDING
        infos = words.view(np.int8)
    return dict(In=x, Filter=w, Bias=b, Scale=scale, ScaleN=scale_n, Infos=infos), y


def kernels_at(rev: str | None, work: Path) -> Path:
    """The SQ8 kernel directory as it was at revision ``rev`` (every file of it: the other kernels of
    this tree may use what this work added to CNN_SQ8_Requant.h); None: the working tree's,
    CNN_KERNELS_DIR itself."""
    if rev is None:
        return Path(CNN_KERNELS_DIR)
    dst = work / f"kernels_{rev}"
    dst.mkdir(parents=True, exist_ok=True)
    rel = Path(CNN_KERNELS_DIR).resolve().relative_to(ROOT)
    names = subprocess.run(["git", "ls-tree", "--name-only", f"{rev}:{rel.as_posix()}"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    for name in names:
        text = subprocess.run(["git", "show", f"{rev}:{(rel / name).as_posix()}"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout
        (dst / name).write_text(text)
    return dst


def build(cases: list, work: Path, kernels: Path | None = None, backend: str = "gvsoc", cflags=()):
    """Every case in one model, built for ``backend`` with the kernels of directory ``kernels``."""
    kernels = Path(kernels or CNN_KERNELS_DIR)
    gen = work / "gen"
    with Model("pulp_open") as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        LoadCNN_SQ8_Library()
        for c in cases:
            SetL1MemorySize(c.budget)
            declare(c)
        files = generate(m)
    write_files(files, str(gen))
    sources = [kernels / "CNN_SQ8_Conv.c"]     # the only basic kernel these user kernels call
    kw = dict(backend="gvsoc", cflags=cflags) if backend == "gvsoc" else dict(platform="pulp_open")
    return host_harness.build(gen, sources=sources, include_dirs=[kernels], **kw)


def run_cases(cases: list, work: Path, kernels: Path | None = None, backend: str = "gvsoc", profile: bool = False,
              cflags=()) -> dict:
    """Build, call each case once (and once profiled when ``profile``): {name: (cycles, fork
    cycles or None)}. Raises WrongOutput where an output differs from sq8_tflm's."""
    prog = build(cases, work, kernels, backend, cflags)
    res = {}
    try:
        for c in cases:
            cycles = _call(prog, c, False)
            res[c.name] = (cycles, _call(prog, c, True) if profile else None)
    finally:
        if backend == "gvsoc":
            prog.close()
    return res


def _call(prog, c: Case, profile: bool) -> int:
    inputs, expected = reference(c)
    out = np.full(expected.size, SENTINEL, np.int8)
    flat = {k: np.ascontiguousarray(v).reshape(-1) for k, v in inputs.items()}
    counters = (prog.profile if profile else prog.call)(c.name, Out=out, **flat)
    got = out.reshape(expected.shape)
    bad = np.argwhere(got != expected)
    if bad.size:
        raise WrongOutput(f"{c.name} ({c}): {len(bad)}/{expected.size} outputs differ, first at {bad[0].tolist()}: "
                          f"got {got[tuple(bad[0])]}, expected {expected[tuple(bad[0])]}")
    if not profile:
        return int(counters["cycles"])
    return int(sum(cyc for name, (_, cyc, _) in counters["forks"].items() if name == CONV_KERNEL))


# ---- the networks' convolutions (shapes from autotiler import of tests/models/import/*.tflite) -------

def _c(name, h, w, cin, cout, f, s, padding="SAME", act="NONE"):
    return Case(name, h, w, cin, cout, f=f, stride=(s, s), padding=padding, act=act)


NETWORKS = {
    "ds_cnn_kws": [
        _c("kws_Conv2D_0", 49, 10, 1, 64, (10, 4), 2, act="RELU"),
        _c("kws_Conv2D_2", 25, 5, 64, 64, (1, 1), 1, "VALID", "RELU"),
    ],
    "resnet8": [
        _c("rn8_Conv2D_0", 32, 32, 3, 16, (3, 3), 1, act="RELU"),
        _c("rn8_Conv2D_1", 32, 32, 16, 16, (3, 3), 1, act="RELU"),
        _c("rn8_Conv2D_4", 32, 32, 16, 32, (1, 1), 2, "VALID"),
        _c("rn8_Conv2D_5", 32, 32, 16, 32, (3, 3), 2, act="RELU"),
        _c("rn8_Conv2D_6", 16, 16, 32, 32, (3, 3), 1),
        _c("rn8_Conv2D_8", 16, 16, 32, 64, (3, 3), 2, act="RELU"),
        _c("rn8_Conv2D_9", 8, 8, 64, 64, (3, 3), 1),
        _c("rn8_Conv2D_10", 16, 16, 32, 64, (1, 1), 2, "VALID"),
    ],
    "mobilenet_v1_025_96": [
        _c("mbn_Conv2D_0", 96, 96, 3, 8, (3, 3), 2, act="RELU6"),
        _c("mbn_Conv2D_2", 48, 48, 8, 16, (1, 1), 1, act="RELU6"),
        _c("mbn_Conv2D_4", 24, 24, 16, 32, (1, 1), 1, act="RELU6"),
        _c("mbn_Conv2D_6", 24, 24, 32, 32, (1, 1), 1, act="RELU6"),
        _c("mbn_Conv2D_8", 12, 12, 32, 64, (1, 1), 1, act="RELU6"),
        _c("mbn_Conv2D_10", 12, 12, 64, 64, (1, 1), 1, act="RELU6"),
        _c("mbn_Conv2D_12", 6, 6, 64, 128, (1, 1), 1, act="RELU6"),
        _c("mbn_Conv2D_14", 6, 6, 128, 128, (1, 1), 1, act="RELU6"),
        _c("mbn_Conv2D_24", 3, 3, 128, 256, (1, 1), 1, act="RELU6"),
        _c("mbn_Conv2D_26", 3, 3, 256, 256, (1, 1), 1, act="RELU6"),
    ],
}


def measure(before: str, work: Path, networks: dict) -> list:
    cases = [c for layers in networks.values() for c in layers]
    after = run_cases(cases, work / "after", profile=True)
    old = run_cases(cases, work / "before", kernels_at(before, work), profile=True)
    rows = []
    for net, layers in networks.items():
        for c in layers:
            (b, bf), (a, af) = old[c.name], after[c.name]
            rows.append(dict(network=net, layer=c.name, shape=_shape(c), macs=c.macs(), before=b, after=a,
                             speedup=round(b / a, 2), mac_per_cycle_before=round(c.macs() / b, 2),
                             mac_per_cycle_after=round(c.macs() / a, 2), conv_forks_before=bf, conv_forks_after=af,
                             mac_per_fork_cycle_after=round(c.macs() / af, 2)))
    return rows


def _shape(c: Case) -> str:
    s = f"{c.h}x{c.w}x{c.cin}->{c.cout} {c.f[0]}x{c.f[1]}"
    return s + (f" /{c.stride[0]}" if c.stride != (1, 1) else "") + f" {c.padding}"


def markdown(rows: list, before: str) -> str:
    lines = ["# SQ8 TFLM regular convolutions on GVSoC pulp-open (8 cores)\n",
             f"Cycles of each user kernel called alone, once (DMA, tiling loop and forks included; code cold in the "
             f"instruction cache), with the kernels of {before} (before) and of this tree (after); every output "
             "bit-exact with sq8_tflm. 'forks': the cycles inside the convolution's forks of a profiled call "
             "(the basic kernel itself, from releasing the cores to the join).\n",
             "| network | layer | shape | MACs | before | after | speed-up | MAC/cycle before | MAC/cycle after | "
             "forks after | MAC/fork cycle |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['network']} | {r['layer']} | {r['shape']} | {r['macs']} | {r['before']} | {r['after']} | "
                     f"{r['speedup']}x | {r['mac_per_cycle_before']} | {r['mac_per_cycle_after']} | "
                     f"{r['conv_forks_after']} | {r['mac_per_fork_cycle_after']} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default=BEFORE, help="git revision of the 'before' kernels")
    ap.add_argument("--json", type=Path, default=DEFAULT_JSON)
    ap.add_argument("--md", type=Path, default=DEFAULT_MD)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--only", default=None, help="a layer name prefix: measure those layers only")
    args = ap.parse_args(argv)
    nets = {n: [c for c in ls if args.only is None or c.name.startswith(args.only)] for n, ls in NETWORKS.items()}
    nets = {n: ls for n, ls in nets.items() if ls}
    with tempfile.TemporaryDirectory() as tmp:
        rows = measure(args.before, args.workdir or Path(tmp), nets)
    text = markdown(rows, args.before)
    if args.only is None:
        args.json.write_text(json.dumps(dict(before=args.before, platform="pulp_open", cores=8, rows=rows), indent=1)
                             + "\n")
        args.md.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
