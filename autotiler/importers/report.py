"""The import report (issue 24 §6), printed by ``autotiler import`` and ``autotiler report``.

Per layer (graph node, execution order): the source operator, its MACs, the predicted cycles of
its user kernel (the tiler's schedule, :func:`autotiler.bounds.kernel_figures`), MAC/cycle, the L1
it uses, its L2<->L1 traffic and its L3 traffic (a node spilled to L3 counts its L3 variant). For
the whole model: the latency at the platform's clock, and L2 for activations (the plan's dynamic
area) against its liveness lower bound and against TensorFlow Lite Micro's arena for the same
model.

MACs are the multiply-accumulates of convolutions (grouped and depth wise) and fully connected
layers, computed from the IR's shapes; other operators count 0 (their MAC/cycle shows ``-``).

TFLM's arena is what the ``tflite-micro`` interpreter's RecordingMicroAllocator reports after one
inference (``PrintAllocations``): the head of the arena ("Arena allocation head") is its
non-persistent part, every planned activation tensor, the graph's input and output included, and
the kernels' scratch buffers; the tail holds persistent data (tensor structs, quantisation, kernel
data). Our dynamic L2 excludes the graph's input and output (the application passes them), so the
comparison is to the head, the activations' part of TFLM's arena. An ONNX model has no TFLM arena;
a float model's arena holds float32 tensors (printed, not compared).

Clocks (cluster, where the kernels run):

* gap8: 175 MHz. gap_sdk ``benchmarks/gap8/cnn/README.md`` measures "at 1.2 V, FC 250 MHz,
  cluster 175 MHz", as GreenWaves' GAP8 NNTool benchmarks ("GAP8 RevC ... CL Freq=175MHz")
  (/work/shared/reference/int8-and-import.md).
* gap9: 370 MHz, GreenWaves' MLPerf Tiny v1.0 submission (``code/common/common.mk``:
  FREQ_FC=FREQ_CL=370 at 0.8 V) (same reference).
* pulp_open: 100 MHz, an assumption: no published clock for the virtual platform.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Sequence, Tuple

import numpy as np
import tflite

from ..bounds import kernel_figures
from ..graph.lower import plan_graph
from . import fuse as F
from . import lower as L
from . import verify as V
from .ir import Graph, Op, op_macs
from .script import read_model

CLOCK_MHZ = {"gap8": 175.0, "gap9": 370.0, "pulp_open": 100.0}
CLOCK_SOURCE = {"gap8": "gap_sdk benchmarks/gap8/cnn: cluster 175 MHz",
                "gap9": "GreenWaves MLPerf Tiny v1.0: 370 MHz",
                "pulp_open": "assumption"}
TFLM_ARENA = 64 << 20
_HEAD = re.compile(r"Arena allocation head (\d+) bytes")
_TOTAL = re.compile(r"Arena allocation total (\d+) bytes")


# ---- MACs from the IR -----------------------------------------------------------------------------


def _ops_by_layer(graph: Graph, names: Sequence[str], lowered=None) -> Dict[str, Optional[Op]]:
    """The IR operator each layer lowers: by the lowering's ``source`` ("operator <label>") when
    given, else by the layer name's ``_<operator index>`` suffix."""
    by_label = {f"operator {op.label}": op for op in graph.ops}
    by_index = {op.index: op for op in graph.ops}
    layers = {layer.name: layer for layer in getattr(lowered, "layers", ())}
    out: Dict[str, Optional[Op]] = {}
    for name in names:
        layer = layers.get(name)
        if layer is not None:
            out[name] = by_label.get(layer.source)
            continue
        m = re.search(r"_(\d+)$", name)
        out[name] = by_index.get(int(m.group(1))) if m else None
    return out


# ---- TFLM's arena ---------------------------------------------------------------------------------


@contextlib.contextmanager
def _fd_output():
    """What C code writes to file descriptors 1 and 2 inside the block (a list, filled at exit)."""
    text: list = []
    with tempfile.TemporaryFile() as tmp:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = (os.dup(1), os.dup(2))
        try:
            os.dup2(tmp.fileno(), 1)
            os.dup2(tmp.fileno(), 2)
            yield text
        finally:
            ctypes.CDLL(None).fflush(None)
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        tmp.seek(0)
        text.append(tmp.read().decode("utf-8", "replace"))


@dataclass(frozen=True)
class TflmArena:
    head: int      # non-persistent: planned activations (input and output included) and scratch
    total: int     # head + persistent tail


def tflm_arena(model_bytes: bytes) -> Optional[TflmArena]:
    """TFLM's arena for ``model_bytes`` (a .tflite model) after one inference on zeros; None when
    tflite-micro is not installed or does not report it."""
    if V.tflm_runtime is None:     # optional (verify's import): the report says when it is missing
        return None
    interp = V.tflm_runtime.Interpreter.from_bytes(model_bytes, arena_size=TFLM_ARENA)
    for i in range(tflite.Model.GetRootAsModel(model_bytes, 0).Subgraphs(0).InputsLength()):
        det = interp.get_input_details(i)
        interp.set_input(np.zeros([int(d) for d in det["shape"]], dtype=det["dtype"]), i)
    interp.invoke()
    with _fd_output() as out:
        interp.print_allocations()
    text = "".join(out)
    head, total = _HEAD.search(text), _TOTAL.search(text)
    if head is None or total is None:
        return None
    return TflmArena(int(head.group(1)), int(total.group(1)))


# ---- the report -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LayerRow:
    name: str
    operator: str
    macs: int
    cycles: int
    l1: int
    l2_l1: int
    l3: int

    @property
    def mac_per_cycle(self) -> Optional[float]:
        return self.macs / self.cycles if self.macs and self.cycles else None


def layer_rows(model, plan, graph: Graph, lowered=None) -> Tuple[LayerRow, ...]:
    """One row per node of ``plan`` (the graph's memory plan), in execution order."""
    names = list(plan.nodes)
    ops = _ops_by_layer(graph, names, lowered)
    kinds = {layer.name: layer.kind for layer in getattr(lowered, "layers", ())}
    macs = {layer.name: layer.macs for layer in getattr(lowered, "layers", ())}
    rows = []
    for i, name in enumerate(names):
        variant = plan.variant(i)
        tiling = variant.tiling if variant is not None else model.tilings.get(name)
        op = ops.get(name)
        kind = kinds.get(name) or (op.kind.value if op is not None else "-")
        if tiling is None:
            rows.append(LayerRow(name, kind, macs.get(name, op_macs(graph, op) if op else 0), 0, 0, 0, 0))
            continue
        figures = kernel_figures(tiling, model.platform)
        cycles = int(figures.get("predicted_cycles") or (tiling.predicted.cycles if tiling.predicted else 0))
        rows.append(LayerRow(name, kind, macs.get(name, op_macs(graph, op) if op else 0), cycles, tiling.l1_bytes,
                             tiling.traffic, tiling.traffic_l3))
    return tuple(rows)


def _table(rows: Sequence[LayerRow]) -> list:
    head = ("layer", "operator", "MACs", "cycles", "MAC/cyc", "L1 B", "L2<->L1 B", "L3 B")
    cells = [head]
    for r in rows:
        mpc = "-" if r.mac_per_cycle is None else f"{r.mac_per_cycle:.2f}"
        cells.append((r.name, r.operator, str(r.macs), str(r.cycles), mpc, str(r.l1), str(r.l2_l1), str(r.l3)))
    macs, cycles = sum(r.macs for r in rows), sum(r.cycles for r in rows)
    cells.append(("total", "", str(macs), str(cycles), f"{macs / cycles:.2f}" if macs and cycles else "-",
                  str(max((r.l1 for r in rows), default=0)), str(sum(r.l2_l1 for r in rows)),
                  str(sum(r.l3 for r in rows))))
    widths = [max(len(c[k]) for c in cells) for k in range(len(head))]
    lines = []
    for c in cells:
        lines.append("  " + "  ".join(v.ljust(w) if k < 2 else v.rjust(w)
                                      for k, (v, w) in enumerate(zip(c, widths))).rstrip())
    return lines


def _arena_lines(plan, descriptor: Mapping, arena: Optional[TflmArena]) -> list:
    dyn = plan.dyn
    ratio = dyn.peak / dyn.lower_bound if dyn.lower_bound else 1.0
    lines = [f"L2 for activations: {dyn.peak} B dynamic ({dyn.algorithm}), liveness lower bound {dyn.lower_bound} B "
             f"({ratio:.2f}x); static L2 {plan.static_bytes} B (constants promoted from flash)"]
    fusion = descriptor.get("fusion")
    if fusion:
        lines.append(f"fused layers ({fusion['mode']}): {len(fusion['groups'])} fused kernel(s); the layer-by-layer "
                     f"liveness lower bound is {fusion['unfused_peak_l2']} B, "
                     f"{dyn.peak / fusion['unfused_peak_l2']:.2f}x of it used" if fusion["unfused_peak_l2"] else
                     f"fused layers ({fusion['mode']}): {len(fusion['groups'])} fused kernel(s)")
        lines += [f"  {g['name']} = {' + '.join(g['layers'])} ({g['reason']}: {g['detail']})" for g in fusion["groups"]]
    fmt = descriptor.get("format") or os.path.splitext(str(descriptor.get("source", "")))[1].lstrip(".")
    if fmt != "tflite":
        lines.append("TFLM arena: none (the source is not a TFLite model)")
    elif arena is None:
        lines.append("TFLM arena: unknown (tflite-micro is not installed: pip install tflite-micro)")
    elif descriptor.get("quantized_by_import"):
        lines.append(f"TFLM arena of the float source: {arena.head} B activations + scratch ({arena.total} B in "
                     "all), float32 tensors: not compared")
    else:
        verdict = "within" if dyn.peak <= arena.head else "ABOVE"
        lines.append(f"TFLM arena for the same model: {arena.head} B activations + scratch (input and output "
                     f"included; {arena.total} B in all): our dynamic L2 is {verdict} it "
                     f"({dyn.peak} B, {dyn.peak / arena.head:.2f}x)" if arena.head else
                     f"TFLM arena for the same model: {arena.total} B in all")
    return lines


def import_report(model, plan, graph: Graph, descriptor: Mapping, lowered=None,
                  arena: Optional[TflmArena] = None) -> str:
    """The report of an import: ``model`` the generated Model (its tilings and platform), ``plan``
    its graph's :class:`~autotiler.graph.lower.GraphPlan` (None: planned here), ``graph`` the int8
    IR graph, ``descriptor`` the ``NAME.json`` data; ``lowered`` (optional) the lowering, naming
    each layer's operator; ``arena`` TFLM's arena if already measured (else measured here from the
    source file the descriptor names)."""
    name = str(descriptor.get("graph"))
    if plan is None:
        plan = plan_graph(model, model.graphs[name], model.l2_budget)
    platform = model.platform.name
    if lowered is None and (descriptor.get("fusion") or {}).get("groups") and not descriptor.get("quantized_by_import"):
        lowered = F.replay(L.lower(graph), descriptor)    # fused layers are named after their first layer
    rows = layer_rows(model, plan, graph, lowered)
    cycles = sum(r.cycles for r in rows)
    macs = sum(r.macs for r in rows)
    clock = CLOCK_MHZ.get(platform)
    if arena is None and (descriptor.get("format") or "tflite") == "tflite":
        source = str(descriptor.get("source", ""))
        if os.path.isfile(source) and source.endswith(".tflite"):
            arena = tflm_arena(open(source, "rb").read())
    lines = [f"import report: graph {name} on {platform} ({len(rows)} layers, {macs} MACs)"]
    lines += _table(rows)
    if clock is not None:
        lines.append(f"latency: {cycles} cycles predicted = {cycles / clock / 1000:.3f} ms at {clock:g} MHz "
                     f"({CLOCK_SOURCE[platform]}); {macs / cycles if cycles else 0:.2f} MAC/cycle")
    else:
        lines.append(f"latency: {cycles} cycles predicted (no clock known for {platform})")
    lines += _arena_lines(plan, descriptor, arena)
    return "\n".join(lines)


def report_of_import(directory, gen_dir: Optional[str] = None) -> str:
    """The report of an import directory (``NAME.json`` + ``NAME.py``): its script generated into
    ``gen_dir`` (else a temporary directory), its source read and lowered again for the operators."""
    d = V.read_import_dir(directory)
    with contextlib.ExitStack() as stack:
        if gen_dir is None:
            gen_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="autotiler-report-"))
        model = V.generate(d, gen_dir)
    descriptor = json.loads(d.descriptor_path.read_text(encoding="utf-8"))
    graph = read_model(str(d.source))
    if descriptor.get("quantized_by_import"):
        return import_report(model, None, graph, descriptor)   # the float graph: operators and MACs only
    return import_report(model, None, graph, descriptor, lowered=F.replay(L.lower(graph), descriptor))


__all__ = ["CLOCK_MHZ", "LayerRow", "TflmArena", "import_report", "layer_rows", "op_macs", "report_of_import", "tflm_arena"]
