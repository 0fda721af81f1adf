"""``autotiler verify DIR [--inputs N] [--input NAME=x.npy]`` (issue 24 §5): the source model's own
reference and the generated C, on the same inputs, output by output.

DIR is an import directory (``NAME.json`` + ``NAME.py``, see :mod:`.script`). ``verify`` reads the
descriptor, generates the model script into a temporary directory, builds it for the simulated chip
(:mod:`host_harness`), and runs the graph and the source model on each input:

* the source's reference is TensorFlow Lite Micro's interpreter (the ``tflite-micro`` package) for
  a ``.tflite`` file, onnxruntime for an ``.onnx`` file;
* the inputs are the graph's (the descriptor's shape and dtype: int8); where the source takes float
  there (a float interface, a QDQ or a float model), it gets the same values dequantised
  (``scale * (q - zero_point)``), which its QUANTIZE maps back to ``q``;
* a float output of the source is quantised with the descriptor's scale and zero point (TFLite's
  rounding: half away from zero, clamped to int8) before it is compared with the generated graph's.

Per output it prints how many items are equal and the largest difference in LSBs, plus top-1
agreement for a vector output and, for a float source, the SQNR of the generated graph's output
(dequantised) against the source's float one. The verdict follows issue 24 §7: an int8 TFLite model
must be bit-exact; an ONNX QDQ model equal on at least 99 % of the items and never more than 1 LSB
away; a model quantised by the import (float source) at least 25 dB SQNR.

Inputs are random int8 (``--inputs N``, fixed seed) unless given (``--input NAME=x.npy``: the
graph input's shape and dtype, or N of them stacked on a new first axis).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import runpy
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

import host_harness

from ..errors import AutoTilerError, ImportModelError
from ..generators import CNN_KERNELS_DIR, CNN_SQ8_SOURCES
from ..model.session import current_model, reset_default_model

try:  # tflite-micro: the reference of TFLite models (an extra: verify says how to install it)
    from tflite_micro.python.tflite_micro import runtime as tflm_runtime
except ImportError:  # pragma: no cover - depends on the environment
    tflm_runtime = None
try:
    import onnxruntime
except ImportError:  # pragma: no cover
    onnxruntime = None

PROG = "autotiler verify"
SEED = 2024
QDQ_EQUAL = 0.99          # issue 24 §7: ONNX QDQ, at least 99 % of the items equal ...
QDQ_LSB = 1               # ... and never more than 1 LSB away
FLOAT_SQNR_DB = 25.0      # a model quantised by the import: at least 25 dB at the output
SENTINEL = 0x5A           # the generated graph's outputs are pre-filled with it
TFLM_ARENA = 64 << 20     # bytes given to the interpreter; its planner uses what it needs


# ---- the import directory -------------------------------------------------------------------------


@dataclass(frozen=True)
class Port:
    """A graph input or output as the descriptor states it."""

    name: str
    shape: Tuple[int, ...]
    dtype: str
    scale: float
    zero_point: int

    @classmethod
    def of(cls, d: Mapping, where: str) -> Port:
        try:
            return cls(str(d["name"]), tuple(int(v) for v in d["shape"]), str(d["dtype"]), float(d["scale"]),
                       int(d["zero_point"]))
        except (KeyError, TypeError, ValueError) as err:
            raise ImportModelError(f"malformed input/output entry {dict(d)!r} ({err})", where=where,
                                   hint="import the model again: autotiler import MODEL -o DIR") from None

    @property
    def items(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class ImportDir:
    """What ``verify`` needs of an import directory."""

    directory: Path
    descriptor_path: Path
    graph: str
    script: Path
    source: Path
    source_format: str        # "tflite" or "onnx"
    float_source: bool        # the import quantised a float model (its outputs are compared in dB)
    platform: Optional[str]   # the platform the import targets (None: the default)
    inputs: Tuple[Port, ...]
    outputs: Tuple[Port, ...]


def _descriptor(directory: Path) -> Tuple[Path, dict]:
    """The one ``NAME.json`` of ``directory`` that is an import descriptor."""
    if not directory.is_dir():
        raise ImportModelError(f"directory '{directory}' not found",
                               hint="import a model into it first: autotiler import MODEL -o DIR")
    found = []
    for path in sorted(directory.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and {"graph", "model_script", "inputs", "outputs"} <= set(data):
            found.append((path, data))
    if len(found) != 1:
        what = "no import descriptor" if not found else f"{len(found)} import descriptors"
        raise ImportModelError(f"{what} (NAME.json with graph, model_script, inputs, outputs) in '{directory}'",
                               hint="give the directory autotiler import wrote (one model per directory)")
    return found[0]


def read_import_dir(directory, source: Optional[str] = None) -> ImportDir:
    """The import directory ``directory``; ``source`` overrides the model file the descriptor names."""
    directory = Path(directory)
    path, d = _descriptor(directory)
    where = str(path)
    script = directory / str(d["model_script"])
    if not script.is_file():
        raise ImportModelError(f"model script '{script.name}' named by {path.name} is missing", where=where,
                               hint="import the model again")
    src = Path(source) if source is not None else Path(str(d.get("source", "")))
    if not src.is_absolute() and not src.is_file():
        src = directory / src
    if not src.is_file():
        raise ImportModelError(f"the source model '{src}' named by {path.name} is not found", where=where,
                               hint="verify needs the model file: give its path (verify(..., source=PATH))")
    fmt = str(d.get("format") or src.suffix.lower().lstrip("."))
    if fmt not in ("tflite", "onnx"):
        raise ImportModelError(f"the source model '{src.name}' is neither TFLite nor ONNX", where=where)
    ports = [tuple(Port.of(p, where) for p in d[key]) for key in ("inputs", "outputs")]
    return ImportDir(directory, path, str(d["graph"]), script, src, fmt, bool(d.get("quantized_by_import")),
                     d.get("platform"), ports[0], ports[1])


# ---- inputs ---------------------------------------------------------------------------------------


def _load_input(port: Port, path: str) -> np.ndarray:
    """``path`` as a stack [N, *shape] of ``port``'s dtype (one array of its shape: N = 1)."""
    if not os.path.isfile(path):
        raise ImportModelError(f"input file '{path}' not found", arg=port.name)
    try:
        a = np.load(path, allow_pickle=False)
    except ValueError as err:
        raise ImportModelError(f"'{path}' is not a .npy array: {err}", arg=port.name) from None
    if a.dtype != np.dtype(port.dtype):
        raise ImportModelError(f"input '{path}' is {a.dtype}, graph input {port.name} takes {port.dtype}",
                               arg=port.name, hint=f"quantise it: q = round(x / {port.scale:g}) + "
                               f"{port.zero_point}, clipped to {port.dtype}")
    if a.shape == port.shape:
        return a[None]
    if a.ndim == len(port.shape) + 1 and a.shape[1:] == port.shape and a.shape[0] > 0:
        return a
    raise ImportModelError(f"input '{path}' has shape {a.shape}, graph input {port.name} takes {port.shape}",
                           arg=port.name, hint=f"give shape {port.shape} or (N, *{port.shape})")


def make_inputs(d: ImportDir, count: int, files: Mapping[str, str], seed: int = SEED) -> List[Dict[str, np.ndarray]]:
    """The runs: one {graph input name: array} per run; given files first, random int8 otherwise."""
    names = [p.name for p in d.inputs]
    for name in files:
        if name not in names:
            raise ImportModelError(f"--input {name}: the graph has no input '{name}'",
                                   hint=f"its inputs are {', '.join(names)}")
    stacks = {p.name: _load_input(p, files[p.name]) for p in d.inputs if p.name in files}
    sizes = {len(s) for s in stacks.values()}
    if len(sizes) > 1:
        raise ImportModelError(f"the input files hold different numbers of inputs ({sorted(sizes)})",
                               hint="give every input the same N")
    n = sizes.pop() if sizes else count
    if n < 1:
        raise ImportModelError(f"--inputs {count}: at least one input is needed")
    rng = np.random.default_rng(seed)
    for p in d.inputs:
        if p.name not in stacks:
            info = np.iinfo(np.dtype(p.dtype))
            stacks[p.name] = rng.integers(info.min, info.max + 1, size=(n, *p.shape)).astype(p.dtype)
    return [{name: np.ascontiguousarray(stacks[name][k]) for name in names} for k in range(n)]


# ---- the source's reference -----------------------------------------------------------------------


def quantise(x: np.ndarray, port: Port) -> np.ndarray:
    """TFLite's QUANTIZE of a float array onto ``port``: round half away from zero, then clamp."""
    v = np.asarray(x, dtype=np.float64) / port.scale
    q = np.sign(v) * np.floor(np.abs(v) + 0.5) + port.zero_point
    info = np.iinfo(np.dtype(port.dtype))
    return np.clip(q, info.min, info.max).astype(port.dtype)


def dequantise(q: np.ndarray, port: Port) -> np.ndarray:
    return ((q.astype(np.float64) - port.zero_point) * port.scale).astype(np.float32)


def _feed(x: np.ndarray, port: Port, dtype, shape) -> np.ndarray:
    """The graph input ``x`` as the source takes it (dtype, shape: same items in the same order)."""
    shape = tuple(int(s) if isinstance(s, (int, np.integer)) and int(s) > 0 else 1 for s in shape)
    if math.prod(shape) != x.size:
        shape = x.shape
    value = dequantise(x, port) if np.dtype(dtype).kind == "f" else x.astype(dtype)
    return np.ascontiguousarray(value.reshape(shape))


@dataclass(frozen=True)
class SourceOutput:
    """One output of the source on one input: ``q`` on the descriptor's quantisation, ``real`` the
    float values when the source computes them in float (else None)."""

    q: np.ndarray
    real: Optional[np.ndarray]


def _collect(value: np.ndarray, port: Port) -> SourceOutput:
    value = np.asarray(value)
    if value.size != port.items:
        raise ImportModelError(f"the source's output has {value.size} items, graph output {port.name} "
                               f"{port.items}", arg=port.name)
    if value.dtype.kind == "f":
        return SourceOutput(quantise(value, port).reshape(port.shape), value.astype(np.float32).reshape(port.shape))
    return SourceOutput(value.astype(port.dtype).reshape(port.shape), None)


def run_tflm(d: ImportDir, runs: Sequence[Mapping[str, np.ndarray]]) -> List[Dict[str, SourceOutput]]:
    if tflm_runtime is None:
        raise ImportModelError("TensorFlow Lite Micro's interpreter is not installed (the reference of a TFLite "
                               "model)", hint="pip install tflite-micro")
    interp = tflm_runtime.Interpreter.from_bytes(d.source.read_bytes(), arena_size=TFLM_ARENA)
    out = []
    for values in runs:
        for i, port in enumerate(d.inputs):
            det = interp.get_input_details(i)
            interp.set_input(_feed(values[port.name], port, det["dtype"], det["shape"]), i)
        interp.invoke()
        out.append({port.name: _collect(interp.get_output(i), port) for i, port in enumerate(d.outputs)})
    return out


ORT_TYPES = {"tensor(float)": np.float32, "tensor(int8)": np.int8, "tensor(uint8)": np.uint8,
             "tensor(int16)": np.int16, "tensor(double)": np.float64}


def run_onnxruntime(d: ImportDir, runs: Sequence[Mapping[str, np.ndarray]]) -> List[Dict[str, SourceOutput]]:
    if onnxruntime is None:
        raise ImportModelError("onnxruntime is not installed (the reference of an ONNX model)",
                               hint="pip install onnxruntime")
    opts = onnxruntime.SessionOptions()
    opts.log_severity_level = 3
    session = onnxruntime.InferenceSession(str(d.source), opts, providers=["CPUExecutionProvider"])
    ins = session.get_inputs()
    if len(ins) != len(d.inputs):
        raise ImportModelError(f"the source takes {len(ins)} inputs, the import {len(d.inputs)}",
                               where=str(d.source))
    out = []
    for values in runs:
        feed = {i.name: _feed(values[p.name], p, ORT_TYPES.get(i.type, np.float32), i.shape)
                for i, p in zip(ins, d.inputs)}
        got = session.run(None, feed)
        out.append({p.name: _collect(v, p) for p, v in zip(d.outputs, got)})
    return out


def run_source(d: ImportDir, runs) -> List[Dict[str, SourceOutput]]:
    return run_tflm(d, runs) if d.source_format == "tflite" else run_onnxruntime(d, runs)


# ---- the generated C ------------------------------------------------------------------------------


def generate(d: ImportDir, gen_dir: str, platform: Optional[str] = None):
    """Run ``NAME.py`` as ``autotiler generate`` does, into ``gen_dir``; the model it declared."""
    reset_default_model()
    saved = sys.argv
    sys.argv = [str(d.script), "-o", gen_dir, "-q"] + (["--platform", platform] if platform else [])
    try:
        runpy.run_path(str(d.script), run_name="__main__")
    except SystemExit as ex:
        if ex.code not in (0, None):
            raise ImportModelError(f"the model script {d.script.name} does not generate (status {ex.code})",
                                   where=str(d.script)) from None
    finally:
        sys.argv = saved
    model = current_model()
    reset_default_model()
    return model


def run_generated(d: ImportDir, gen_dir: str, runs: Sequence[Mapping[str, np.ndarray]]):
    """The generated graph's outputs on each run ({output name: array of its descriptor shape}) and
    the counters of the last run, on the host simulator."""
    prog = host_harness.build(gen_dir, sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=d.platform)
    return run_graph(prog, d, runs)


def run_graph(prog, d: ImportDir, runs: Sequence[Mapping[str, np.ndarray]]):
    """run_generated on a built program (host or GVSoC back-end): one Construct, the runs (outputs
    pre-filled with SENTINEL), one Destruct."""
    graph = prog.graph(d.graph)
    graph.construct()
    outs, counters = [], {}
    try:
        for values in runs:
            got = {p.name: np.full(p.items, SENTINEL, dtype=p.dtype) for p in d.outputs}
            args = {name: np.ascontiguousarray(v).ravel() for name, v in values.items()}
            counters = graph.run(**args, **got)
            outs.append({p.name: got[p.name].reshape(p.shape) for p in d.outputs})
    finally:
        if graph.constructed:
            graph.destruct()
    return outs, counters


# ---- comparison -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class OutputCheck:
    """One output over every run."""

    name: str
    shape: Tuple[int, ...]
    items: int                 # compared items (all runs)
    equal: int
    max_lsb: int
    top1_equal: Optional[int]  # runs whose argmax agree (vector outputs), else None
    runs: int
    sqnr_db: Optional[float]   # float sources: generated (dequantised) vs the source's float output

    @property
    def equal_ratio(self) -> float:
        return self.equal / self.items if self.items else 1.0

    def line(self) -> str:
        text = (f"{self.name} {list(self.shape)}: {self.equal}/{self.items} items equal "
                f"({100 * self.equal_ratio:.2f} %), largest difference {self.max_lsb} LSB")
        if self.top1_equal is not None:
            text += f", top-1 equal on {self.top1_equal}/{self.runs} inputs"
        if self.sqnr_db is not None:
            text += f", SQNR {self.sqnr_db:.1f} dB against the source's float output"
        return text


def _sqnr(ref: np.ndarray, got: np.ndarray) -> float:
    noise = float(np.sum((ref.astype(np.float64) - got) ** 2))
    signal = float(np.sum(ref.astype(np.float64) ** 2))
    if noise == 0.0:
        return math.inf
    return 10.0 * math.log10(signal / noise) if signal > 0 else -math.inf


def compare(port: Port, want: Sequence[SourceOutput], got: Sequence[np.ndarray]) -> OutputCheck:
    w = np.stack([s.q for s in want]).astype(np.int64)
    g = np.stack(got).astype(np.int64)
    diff = np.abs(w - g)
    vector = port.items > 1 and sum(s > 1 for s in port.shape) == 1
    top1 = None
    if vector:
        top1 = int(np.sum(np.argmax(w.reshape(len(w), -1), axis=1) == np.argmax(g.reshape(len(g), -1), axis=1)))
    sqnr = None
    if all(s.real is not None for s in want):
        ref = np.stack([s.real for s in want])
        sqnr = _sqnr(ref, dequantise(np.stack(got), port))
    return OutputCheck(port.name, port.shape, int(diff.size), int(np.sum(diff == 0)), int(diff.max(initial=0)),
                       top1, len(w), sqnr)


@dataclass(frozen=True)
class VerifyReport:
    directory: str
    graph: str
    source: str
    reference: str             # "tflite-micro" or "onnxruntime"
    criterion: str             # what "ok" means for this source
    runs: int
    outputs: Tuple[OutputCheck, ...]
    cycles: int                # simulated cycles of one inference (the last run)
    ok: bool

    def format(self) -> str:
        lines = [f"{PROG} {self.directory}: graph {self.graph} against {self.reference} on {Path(self.source).name}, "
                 f"{self.runs} input(s); simulated inference {self.cycles} cycles"]
        lines += [f"  {o.line()}" for o in self.outputs]
        lines.append(f"  {'OK' if self.ok else 'MISMATCH'}: {self.criterion}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def _criterion(d: ImportDir) -> Tuple[str, Callable[[OutputCheck], bool]]:
    if d.float_source:
        return (f"quantised by the import: at least {FLOAT_SQNR_DB:g} dB SQNR against the float model",
                lambda o: o.sqnr_db is not None and o.sqnr_db >= FLOAT_SQNR_DB)
    if d.source_format == "onnx":
        return (f"ONNX QDQ: at least {100 * QDQ_EQUAL:g} % of the items equal, none more than {QDQ_LSB} LSB away",
                lambda o: o.equal_ratio >= QDQ_EQUAL and o.max_lsb <= QDQ_LSB)
    return "int8 TFLite: bit-exact with TFLite Micro", lambda o: o.equal == o.items


def verify(directory, inputs: int = 1, input_files: Optional[Mapping[str, str]] = None,
           gen_dir: Optional[str] = None, source: Optional[str] = None) -> VerifyReport:
    """Run the import in ``directory`` and its source model on the same inputs (``inputs`` random
    ones, or ``input_files`` {graph input name: .npy path}); ``gen_dir``: generate there (else a
    temporary directory); ``source``: the model file, if not where the descriptor says."""
    d = read_import_dir(directory, source)
    runs = make_inputs(d, inputs, dict(input_files or {}))
    want = run_source(d, runs)
    with contextlib.ExitStack() as stack:
        if gen_dir is None:
            gen_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="autotiler-verify-"))
        generate(d, gen_dir)
        got, counters = run_generated(d, gen_dir, runs)
    checks = tuple(compare(p, [w[p.name] for w in want], [g[p.name] for g in got]) for p in d.outputs)
    criterion, passes = _criterion(d)
    return VerifyReport(str(directory), d.graph, str(d.source),
                        "tflite-micro" if d.source_format == "tflite" else "onnxruntime", criterion, len(runs),
                        checks, int(counters.get("cycles", 0)), all(passes(o) for o in checks))


# ---- command --------------------------------------------------------------------------------------


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The sub-command's arguments (``autotiler verify``)."""
    p.add_argument("dir", metavar="DIR", help="an import directory (autotiler import MODEL -o DIR)")
    p.add_argument("--inputs", type=int, default=1, metavar="N", help="random int8 inputs to try (default 1)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=x.npy",
                   help="a graph input from a file (its shape and dtype, or N of them stacked)")


def _pairs(items: Sequence[str]) -> Dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise ImportModelError(f"--input '{item}' is not NAME=FILE")
        if name in out:
            raise ImportModelError(f"--input {name} given twice")
        out[name] = value
    return out


def run_command(ns: argparse.Namespace) -> int:
    """``autotiler verify`` on parsed arguments: print the report; status 0 when the outputs meet the
    source's criterion, 1 when they do not (errors propagate as :class:`AutoTilerError`)."""
    report = verify(ns.dir, inputs=ns.inputs, input_files=_pairs(ns.input))
    print(report.format())
    return 0 if report.ok else 1


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Stand-alone entry: errors end in one line on stderr and status 1."""
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    add_arguments(p)
    ns = p.parse_args(argv)
    try:
        return run_command(ns)
    except AutoTilerError as err:
        print(f"{PROG}: error: {str(err).splitlines()[0]}", file=sys.stderr)
        return 1


__all__ = ["ImportDir", "OutputCheck", "Port", "VerifyReport", "add_arguments", "compare", "main", "make_inputs",
           "read_import_dir", "run_command", "verify"]
