"""GVSoC cycles of the SQ8 (TFLM arithmetic) depth wise, fully connected, pooling and ADD layers of
four imported networks, before and after the kernels' Xpulpv2 work (issue 25 item 4).

    source ~/.cache/gvsoc/env.sh
    /work/main/.venv/bin/python bench/gvsoc_sq8_ops.py [--before REV] [--json PATH] [--md PATH]

Each distinct layer of ds_cnn_kws, mobilenet_v1_025_96, resnet8 and autoencoder
(tests/models/import/) that runs on KerParConvDW_TFLM_SQ8, KerParLinear_TFLM_SQ8,
KerParMaxPool/AvgPool_TFLM_SQ8 or KerParAdd_TFLM_SQ8 is declared alone with its generator (the
network's shapes, strides, padding and activation; random int8 data, zero points as after a ReLU),
generated for pulp_open and run on GVSoC through the GVSoC back-end (``prog.call``: the user
kernel's cycles, its tiles' DMA included), three times: every kernel file at revision ``--before``
(default f30e983, before this work); this work's four sources at ``--before`` with the other kernel
files as committed (HEAD: what the shared headers, CNN_SQ8_Requant.h..., changed since); this work's
four sources as in the tree with the others as committed (other helpers' edits in progress stay
out). Gap.h (host_harness/runtime) is the tree's in all three. Every output is checked against
sq8_tflm (the numpy reference): a layer that differs raises. Results: bench/results/gvsoc_sq8_ops.json
and .md (cycles before/after, speed-up, MAC/cycle or cycles/element).

The helpers (``Case``, ``run_cases``) are shared with tests/test_gvsoc_sq8_ops.py.
"""

from __future__ import annotations

import argparse
import json
import shutil
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
from autotiler import (  # noqa: E402
    KOP_AVGPOOL,
    KOP_CONV_DW,
    KOP_LINEAR,
    KOP_MATADD,
    KOP_MAXPOOL,
    KOP_NONE,
    KOP_RELU,
    KOP_RELUN,
    Model,
    SetL1MemorySize,
    SetUsedFilesNames,
)
from autotiler.codegen import generate, write_files  # noqa: E402
from autotiler.generators import CNN_KERNELS_DIR  # noqa: E402
from autotiler.generators import sq8_gen_tflm_dense as TD  # noqa: E402
from autotiler.generators import sq8_tflm as T  # noqa: E402
from autotiler.generators.cnn_ctrl import CNN_GenControl_T, CNN_InitGenCtrl, CNN_SetGenCtrl  # noqa: E402
from autotiler.generators.sq8_gen_tflm_conv import conv_constants, pool_infos  # noqa: E402
from autotiler.generators.sq8_generators import (  # noqa: E402
    CNN_ConvolutionPoolAct_SQ8,
    CNN_LinearAct_SQ8,
    CNN_MatAddAct_SQ8,
    CNN_MatSubAct_SQ8,
    CNN_PoolAct_SQ8,
)
from autotiler.generators.sq8_infos import AT_INF_TFLM_FLAGS, AT_TFLM_FLAG_SINGLE_ROUNDING  # noqa: E402
from autotiler.generators.sq8_library import CNN_SQ8_HEADER, CNN_SQ8_SOURCES, LoadCNN_SQ8_Library  # noqa: E402
from autotiler.platforms import get_platform  # noqa: E402

PULP_OPEN = get_platform("pulp_open")
BEFORE = "f30e983"
MY_SOURCES = ("CNN_SQ8_ConvDW.c", "CNN_SQ8_Linear.c", "CNN_SQ8_Pooling.c", "CNN_SQ8_Eltwise.c")
DEFAULT_JSON = ROOT / "bench" / "results" / "gvsoc_sq8_ops.json"
DEFAULT_MD = ROOT / "bench" / "results" / "gvsoc_sq8_ops.md"
SENTINEL = -99
ACT_KOP = {"NONE": KOP_NONE, "RELU": KOP_RELU, "RELU6": KOP_RELUN}


class WrongOutput(AssertionError):
    """A layer's GVSoC output differs from sq8_tflm's."""


@dataclass(frozen=True)
class Case:
    """One layer. kind 'dw' (h, w, cin, cout, stride, padding), 'fc' (cin, cout), 'maxpool' /
    'avgpool' (h, w, cin, filter (fy, fx), stride, padding), 'add' / 'sub' (h, w, cin). Zero points:
    in_zp for the (first) input, out_zp for the output. rounding 'single' (dw, fc, add, sub): Infos
    FLAGS AT_TFLM_FLAG_SINGLE_ROUNDING, onnxruntime's requantisation."""

    name: str
    kind: str
    h: int = 1
    w: int = 1
    cin: int = 1
    cout: int = 1
    f: tuple = (3, 3)
    stride: int = 1
    padding: str = "SAME"
    act: str = "NONE"
    in_zp: int = -128
    out_zp: int = -128
    seed: int = 0
    budget: int | None = None      # L1 bytes; None: the platform's
    rounding: str = "double"
    bias_bits: int = 14            # biases in [-2^bias_bits, 2^bias_bits); 31: within 2^17 of the int32
                                   # limits, so that bias + sum wraps (TFLM's int32 arithmetic)
    out_scale: float = 0.08        # the output's scale: small ones give effective scales near 1 (left
                                   # shifts, Right < 2: the requantisation's general forms)

    def work(self) -> int:
        """MACs (dw, fc), input taps read (pooling: outputs times window) or elements (add)."""
        if self.kind == "dw":
            fy, fx = self.f
            oh, ow = _pool_out(self.h, fy, self.stride, self.padding), _pool_out(self.w, fx, self.stride, self.padding)
            return oh * ow * self.cout * self.f[0] * self.f[1]
        if self.kind == "fc":
            return self.cin * self.cout
        if self.kind in ("add", "sub"):
            return self.h * self.w * self.cin
        fy, fx = self.f
        oh, ow = _pool_out(self.h, fy, self.stride, self.padding), _pool_out(self.w, fx, self.stride, self.padding)
        return oh * ow * self.cin * fy * fx

    @property
    def unit(self) -> str:
        return {"dw": "MAC", "fc": "MAC", "add": "element", "sub": "element"}.get(self.kind, "tap")


def _pool_out(n: int, f: int, s: int, padding: str) -> int:
    return -(-n // s) if padding == "SAME" else (n - f) // s + 1


def _ctrl():
    ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(ctrl)
    CNN_SetGenCtrl(ctrl, "SCALE_DATASIZE", 4)
    return ctrl


def declare(c: Case) -> None:
    """The layer's user kernel, as the importer declares it."""
    pad, act = int(c.padding == "SAME"), ACT_KOP[c.act]
    if c.kind == "dw":
        ok = CNN_ConvolutionPoolAct_SQ8(c.name, _ctrl(), 4, 4, c.cin, c.cout, c.w, c.h, KOP_CONV_DW, c.f[1], c.f[0],
                                        1, 1, c.stride, c.stride, pad, KOP_NONE, 0, 0, 0, 0, 0, 0, 0, act)
    elif c.kind == "fc":
        ok = CNN_LinearAct_SQ8(c.name, 0, 4, 4, c.cin, c.cout, KOP_LINEAR, act)
    elif c.kind == "add":
        ok = CNN_MatAddAct_SQ8(c.name, _ctrl(), c.cin, c.w, c.h, KOP_MATADD, act)
    elif c.kind == "sub":
        ok = CNN_MatSubAct_SQ8(c.name, _ctrl(), c.cin, c.w, c.h, act)
    else:
        kop = KOP_MAXPOOL if c.kind == "maxpool" else KOP_AVGPOOL
        ok = CNN_PoolAct_SQ8(c.name, _ctrl(), c.cin, c.w, c.h, kop, c.f[1], c.f[0], 1, 1, c.stride, c.stride, pad, act)
    assert ok == 1, f"{c.name}: no tiling"


def reference(c: Case) -> tuple[dict, np.ndarray]:
    """(the kernel's inputs, sq8_tflm's output) on random int8 data."""
    rng = np.random.default_rng(c.seed)
    in_q, out_q = T.QParams(0.05, c.in_zp), T.QParams(c.out_scale, c.out_zp)
    if c.kind in ("dw", "fc"):
        return _reference_weighted(c, rng, in_q, out_q)
    x = rng.integers(-128, 128, (1, c.h, c.w, c.cin)).astype(np.int8)
    if c.kind in ("add", "sub"):
        in2_q = T.QParams(0.03, min(127, c.in_zp + 7))
        x2 = rng.integers(-128, 128, x.shape).astype(np.int8)
        fn, infos = (T.add, TD.add_infos) if c.kind == "add" else (T.sub, TD.sub_infos)
        y = fn(x, x2, in_q, in2_q, out_q, c.act, rounding=c.rounding)
        return dict(In1=x, In2=x2, Infos=_flags(infos(in_q, in2_q, out_q, c.act), c)), y
    fn = T.max_pool2d if c.kind == "maxpool" else T.average_pool2d
    y = fn(x, in_q, in_q, c.f, (c.stride, c.stride), c.padding, c.act)
    return dict(In=x, Infos=pool_infos(in_q, c.act)), y


def _reference_weighted(c: Case, rng, in_q, out_q) -> tuple[dict, np.ndarray]:
    w_q = T.FilterQParams(tuple(float(s) for s in rng.uniform(0.002, 0.02, c.cout)))
    b = _biases(c, rng)
    if c.kind == "fc":
        x = rng.integers(-128, 128, c.cin).astype(np.int8)
        w = rng.integers(-127, 128, (c.cout, c.cin)).astype(np.int8)
        k = TD.linear_constants(in_q, w_q, out_q, c.act, c.cout)
        y = T.fully_connected(x, w, b, in_q, w_q, out_q, c.act, rounding=c.rounding)
        return dict(In=x, Filter=w, Bias=b, Scale=k.scale, ScaleN=k.scale_n, Infos=_flags(k.infos, c)), y
    x = rng.integers(-128, 128, (1, c.h, c.w, c.cin)).astype(np.int8)
    w = rng.integers(-127, 128, (1, *c.f, c.cout)).astype(np.int8)
    y = T.depthwise_conv2d(x, w, b, in_q, w_q, out_q, depth_multiplier=c.cout // c.cin,
                           stride=(c.stride, c.stride), padding=c.padding, activation=c.act, rounding=c.rounding)
    scale, scale_n, infos = conv_constants(in_q, w_q, out_q, c.act, c.cout)
    return dict(In=x, Filter=w, Bias=b, Scale=scale, ScaleN=scale_n, Infos=_flags(infos, c)), y


def _biases(c: Case, rng) -> np.ndarray:
    if c.bias_bits < 31:
        return rng.integers(-(1 << c.bias_bits), 1 << c.bias_bits, c.cout).astype(np.int32)
    near = rng.integers(0, 1 << 17, c.cout, dtype=np.int64)
    return np.where(rng.random(c.cout) < 0.5, (1 << 31) - 1 - near, -(1 << 31) + near).astype(np.int32)


def _flags(infos: np.ndarray, c: Case) -> np.ndarray:
    """Infos with FLAGS set for the case's rounding."""
    words = infos.view("<i4").copy()
    words[AT_INF_TFLM_FLAGS] = AT_TFLM_FLAG_SINGLE_ROUNDING if c.rounding == "single" else 0
    return words.view(np.int8)


def kernels_at(rev: str | None, work: Path, base: str = "HEAD") -> Path:
    """A SQ8 kernel directory: every file as committed at ``base`` (other helpers' work in progress
    stays out), this work's four sources at revision ``rev`` (None: the working tree's)."""
    dst = work / f"kernels_{rev or 'tree'}"
    dst.mkdir(parents=True, exist_ok=True)
    rel = "autotiler/generators/cnn_kernels"
    tar = subprocess.run(["git", "archive", base, rel], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(work)], input=tar, check=True)
    shutil.copytree(work / rel, dst, dirs_exist_ok=True)
    for name in MY_SOURCES:
        if rev is None:
            shutil.copy(Path(CNN_KERNELS_DIR) / name, dst / name)
            continue
        text = subprocess.run(["git", "show", f"{rev}:{rel}/{name}"], cwd=ROOT, check=True, capture_output=True,
                              text=True).stdout
        (dst / name).write_text(text)
    return dst


def run_cases(cases: list, work: Path, kernels: Path | None = None, backend: str = "gvsoc") -> dict:
    """Every case in one model, built once for ``backend`` with the kernels of directory
    ``kernels`` and called once: {name: cycles}. Raises WrongOutput where an output differs."""
    kernels = Path(kernels or CNN_KERNELS_DIR)
    gen = work / "gen"
    with Model("pulp_open") as m:
        SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
        LoadCNN_SQ8_Library()
        for c in cases:
            SetL1MemorySize(c.budget or PULP_OPEN.l1_size)
            declare(c)
        files = generate(m)
    write_files(files, str(gen))
    # an older revision's directory lacks the sources added since (CNN_SQ8_Fused.c...): its layers
    # call none of them
    sources = [kernels / Path(s).name for s in CNN_SQ8_SOURCES if (kernels / Path(s).name).exists()]
    kw = dict(backend="gvsoc") if backend == "gvsoc" else dict(platform="pulp_open")
    prog = host_harness.build(gen, sources=sources, include_dirs=[kernels], **kw)
    cycles = {}
    try:
        for c in cases:
            cycles[c.name] = _call(prog, c)
    finally:
        if backend == "gvsoc":
            prog.close()
    return cycles


def _call(prog, c: Case) -> int:
    inputs, expected = reference(c)
    out = np.full(expected.size, SENTINEL, np.int8)
    flat = {k: np.ascontiguousarray(v).reshape(-1) for k, v in inputs.items()}
    counters = prog.call(c.name, Out=out, **flat)
    got = out.reshape(expected.shape)
    bad = np.argwhere(got != expected)
    if bad.size:
        raise WrongOutput(f"{c.name} ({c}): {len(bad)}/{expected.size} outputs differ, first at {bad[0].tolist()}: "
                          f"got {got[tuple(bad[0])]}, expected {expected[tuple(bad[0])]}")
    return int(counters["cycles"])


# ---- the networks' layers (shapes from autotiler import of tests/models/import/*.tflite) -------

def _dw(name, h, w, c, s, act="RELU6"):
    return Case(name, "dw", h=h, w=w, cin=c, cout=c, stride=s, act=act)


NETWORKS = {
    "ds_cnn_kws": [
        _dw("kws_DepthwiseConv2D_1", 25, 5, 64, 1, "RELU"),
        Case("kws_AveragePool2D_9", "avgpool", h=25, w=5, cin=64, f=(25, 5), stride=25, padding="VALID"),
        Case("kws_FullyConnected_10", "fc", cin=64, cout=12),
    ],
    "mobilenet_v1_025_96": [
        _dw("mbn_DepthwiseConv2D_1", 48, 48, 8, 1), _dw("mbn_DepthwiseConv2D_3", 48, 48, 16, 2),
        _dw("mbn_DepthwiseConv2D_5", 24, 24, 32, 1), _dw("mbn_DepthwiseConv2D_7", 24, 24, 32, 2),
        _dw("mbn_DepthwiseConv2D_9", 12, 12, 64, 1), _dw("mbn_DepthwiseConv2D_11", 12, 12, 64, 2),
        _dw("mbn_DepthwiseConv2D_13", 6, 6, 128, 1), _dw("mbn_DepthwiseConv2D_23", 6, 6, 128, 2),
        _dw("mbn_DepthwiseConv2D_25", 3, 3, 256, 1),
    ],
    "resnet8": [
        Case("rn8_Add_3", "add", h=32, w=32, cin=16, act="RELU", in_zp=-20),
        Case("rn8_Add_7", "add", h=16, w=16, cin=32, act="RELU", in_zp=-20),
        Case("rn8_Add_11", "add", h=8, w=8, cin=64, act="RELU", in_zp=-20),
        Case("rn8_AveragePool2D_12", "avgpool", h=8, w=8, cin=64, f=(8, 8), stride=8, padding="VALID"),
        Case("rn8_FullyConnected_13", "fc", cin=64, cout=10),
    ],
    "autoencoder": [
        Case("ae_FullyConnected_0", "fc", cin=640, cout=128, act="RELU", in_zp=3),
        Case("ae_FullyConnected_1", "fc", cin=128, cout=128, act="RELU"),
        Case("ae_FullyConnected_4", "fc", cin=128, cout=8, act="RELU"),
        Case("ae_FullyConnected_5", "fc", cin=8, cout=128, act="RELU"),
        Case("ae_FullyConnected_9", "fc", cin=128, cout=640),
    ],
}


def measure(before: str, work: Path) -> list:
    """Each case three times: 'before' (every kernel file at ``before``), 'mine_before' (this
    work's four files at ``before``, the others as committed: what the shared headers changed since
    is left out) and 'after' (this work's files as in the tree, the others as committed)."""
    cases = [c for layers in NETWORKS.values() for c in layers]
    after = run_cases(cases, work / "after", kernels_at(None, work))
    mine_before = run_cases(cases, work / "mine_before", kernels_at(before, work))
    old = run_cases(cases, work / "before", kernels_at(before, work / "all", base=before))
    rows = []
    for net, layers in NETWORKS.items():
        for c in layers:
            b, m, a = old[c.name], mine_before[c.name], after[c.name]
            rows.append(dict(network=net, layer=c.name, kind=c.kind, work=c.work(), unit=c.unit, before=b,
                             mine_before=m, after=a, speedup=round(b / a, 2), speedup_mine=round(m / a, 2),
                             per_cycle_before=round(c.work() / b, 3), per_cycle_after=round(c.work() / a, 3)))
    return rows


def describe(rev: str) -> str:
    """Revision ``rev`` as '<hash> (<date>: <subject's first 80 characters>)' for the tables."""
    out = subprocess.run(["git", "log", "-1", "--format=%h|%cs|%s", rev], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout.strip()
    h, date, subject = out.split("|", 2)
    return f"{h} ({date}: {subject[:80]}{'...' if len(subject) > 80 else ''})"


def markdown(rows: list, before: str) -> str:
    lines = ["# SQ8 TFLM depth wise / dense / pooling / add on GVSoC pulp-open (8 cores)\n",
             "Cycles of each user kernel (its tiles' DMA included; every output bit-exact with sq8_tflm). "
             f"before: every SQ8 kernel file at {describe(before)}; the sources missing there "
             "(CNN_SQ8_Fused.c...) are left out of its build (its layers call none of them); mine before: the four "
             "files of this work "
             f"(CNN_SQ8_ConvDW.c, CNN_SQ8_Linear.c, CNN_SQ8_Pooling.c, CNN_SQ8_Eltwise.c) at {before}, the "
             "others (CNN_SQ8_Requant.h...) as committed; after: this tree's four files, the others as "
             "committed. Work: MACs (dw, fc), window taps (pooling) or elements (add).\n",
             "| network | layer | kind | work | before | mine before | after | speed-up | speed-up (mine) "
             "| work/cycle before | work/cycle after |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['network']} | {r['layer']} | {r['kind']} | {r['work']} {r['unit']} | {r['before']} | "
                     f"{r['mine_before']} | {r['after']} | {r['speedup']}x | {r['speedup_mine']}x | "
                     f"{r['per_cycle_before']} | {r['per_cycle_after']} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default=BEFORE, help="git revision of the 'before' kernels")
    ap.add_argument("--json", type=Path, default=DEFAULT_JSON)
    ap.add_argument("--md", type=Path, default=DEFAULT_MD)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        rows = measure(args.before, args.workdir or Path(tmp))
    args.json.write_text(json.dumps(dict(before=args.before, platform="pulp_open", cores=8, rows=rows), indent=1) + "\n")
    text = markdown(rows, args.before)
    args.md.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
