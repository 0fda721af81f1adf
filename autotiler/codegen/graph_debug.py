"""What the AT_SetGraphCtrl monitoring and debugging options add to a graph's C (docs/graph.md
"Options"): the arrays of AT_GRAPH_MONITOR_CYCLES / PRODUCE_NODE_NAMES / PRODUCE_OPERINFOS (the
newer original's form: one entry per node and a last ``IO_Wait`` one, and
``<MonitorName>_CNN_Total``), the per-node bracketing of the runner, the trace lines
(AT_GRAPH_TRACE_EXEC), the tensor dumps (AT_GRAPH_DUMP_TENSOR, DUMP_ONE_NODE,
DUMP_TENSOR_TO_FILE, DUMP_GRAPH_OUTPUTS) and checksums (AT_GRAPH_CHECKSUM).

This module computes the options' render model (:class:`GraphDebug`); ``templates/graph_debug.j2``
prints it, in the plain runner and in the reentrant one's layers (the reentrant runner keeps a
run's state in its context: see that template and graph.py's reentrant section). Nothing here
changes a graph generated with the default options.

Dump format (one block per tensor, printed or written to ``<G>_TensorDump.txt`` in the current
directory)::

    Node: <node>, Argument: <symbol>, Dim: 1, [<items>] ItemSize: <bytes>
     <v> <v> ... (at most 30 values a line, decimal; floats with %.9g)

``<node>`` is the node's user kernel (or the graph's name for DUMP_GRAPH_OUTPUTS). Checksum line:
``Checksum: Node: <node>, Argument: <symbol>, Sum: <u>``, the sum of the tensor's bytes (as
unsigned) modulo 2**32. Trace lines: ``Graph <G>: node <i> <node> start`` / ``... end``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ..constants import ArgDirection_T, AT_DumpTensor_T, GraghNodeArgT
from ..errors import ModelError
from ..model.ctype import CTypeError, parse_ctype
from ..model.graph import GraphDecl, NodeArgForm

G = GraghNodeArgT
PER_LINE = 30
IO_WAIT = "IO_Wait"
# How a dump prints a tensor's items (the helper's Kind argument).
DUMP_KINDS = "dug"   # 0: signed, 1: unsigned, 2: float


@dataclass(frozen=True)
class Dump:
    """One tensor dump: ``addr`` (an ``Addr`` of graph.py) printed without its type."""

    node: str       # the node's user kernel (the graph's name for a graph output)
    symbol: str
    addr: object
    items: int
    item_size: int
    kind: int       # DUMP_KINDS.index


@dataclass(frozen=True)
class Checksum:
    node: str
    symbol: str
    addr: object    # an Addr of graph.py
    size: int


@dataclass(frozen=True)
class NodeDebug:
    """What the options add after node ``index``: its dumps and checksums."""

    index: int
    name: str
    dumps: tuple
    checksums: tuple


@dataclass(frozen=True)
class GraphDebug:
    """The options' render model: flags, names and, per node, what is dumped or summed."""

    graph: str
    entries: int                 # the arrays' entries: one per node, then IO_Wait
    io: int                      # the IO_Wait entry
    monitor: bool                # AT_GRAPH_MONITOR_CYCLES
    perf: str                    # its array
    total: str                   # <perf>_CNN_Total
    operinfos: Optional[str]     # AT_GRAPH_PRODUCE_OPERINFOS' array, None when off
    opers: tuple                 # its entries (one per node)
    node_names: Optional[str]    # AT_GRAPH_PRODUCE_NODE_NAMES' array, None when off
    names: tuple                 # the nodes' user kernels
    io_wait: str
    defines: bool                # the options define arrays or helpers
    prints: bool                 # dumps or checksums: stdio, fflush
    dump_helper: bool            # <G>_DumpTensor is defined
    checksum: bool               # <G>_Checksum is defined
    to_file: bool                # the dumps go to <G>_TensorDump.txt
    trace: bool                  # the trace lines
    running: bool                # reentrant: the context's Running flag
    per_line: int
    size_opt: bool               # AT_GRAPH_SIZE_OPT
    nodes: tuple                 # NodeDebug per node
    outputs: tuple               # Dump per graph output (AT_GRAPH_DUMP_GRAPH_OUTPUTS)


def check_dump_node(graph: GraphDecl) -> None:
    node = graph.options.dump_one_node
    if node is not None and all(n.name != node for n in graph.nodes):
        raise ModelError(f"graph '{graph.name}': AT_GRAPH_DUMP_ONE_NODE names '{node}', which no node of the graph "
                         "calls", where=graph.where,
                         hint="name a node's user kernel: " + ", ".join(dict.fromkeys(n.name for n in graph.nodes)))


def oper_count(model, name: str) -> int:
    """A node's operation count for AT_GRAPH_PRODUCE_OPERINFOS: AddKernelInfos(AT_KERINFO_OPER)
    when the kernel has one, else the predicted compute cycles of its basic-kernel calls (a
    group: of its kernels', as often as it runs them)."""
    info = model.kernel_infos.get(name, {}).get("AT_KERINFO_OPER")
    if info is not None:
        return int(info[0])
    group = model.groups.get(name)
    if group is not None:
        return sum(oper_count(model, c.name) for c in group.calls) * getattr(group, "iterations", 1)
    t = model.tilings.get(name)
    if t is None or t.predicted is None:
        return 0
    return int(t.predicted["compute_cycles"])


def _elem(ctype: str) -> tuple:
    """(item size, printf kind: "d", "u" or "g") of what a graph symbol's C type points to."""
    try:
        dt = parse_ctype(ctype).dtype
    except CTypeError:
        dt = None
    if dt is None:
        return 1, "u"
    d = np.dtype(dt)
    return d.itemsize, {"i": "d", "u": "u", "f": "g"}.get(d.kind, "u")


def _to_file(o) -> bool:
    return bool(o.dump_tensor_to_file and (o.dump_tensor or o.dump_graph_outputs))


def _prints(o) -> bool:
    return bool(o.dump_tensor or o.checksum or o.dump_graph_outputs)


def _running(o) -> bool:
    """Whether a reentrant runner keeps ``Ctxt->Running`` (monitoring, a dump file, output dumps)."""
    return bool(o.monitor_cycles or _to_file(o) or o.dump_graph_outputs)


def ctxt_members(graph: GraphDecl) -> list:
    """The members the options add to a reentrant graph's context (graph arguments may not take
    these names), as graph_reentrant.h.j2 declares them."""
    o = graph.options
    return ((["Running"] if _running(o) else []) + (["PerfTotal", "PerfIO"] if o.monitor_cycles else [])
            + (["DumpFile"] if _to_file(o) else []))


def _dump_bits(graph: GraphDecl, b) -> int:
    sym = graph.symbol(b.symbol)
    if b.kind == G.GNA_OUT:
        return AT_DumpTensor_T.AT_DUMP_OUT
    if b.kind == G.GNA_INOUT:
        return AT_DumpTensor_T.AT_DUMP_IN | AT_DumpTensor_T.AT_DUMP_OUT
    if sym is not None and sym.const is not None:
        return AT_DumpTensor_T.AT_DUMP_CONSTANT_IN
    return AT_DumpTensor_T.AT_DUMP_IN


def _ctype(graph: GraphDecl, name: str) -> str:
    sym = graph.symbol(name)
    if sym is None:  # a stacked tensor's part: its parent's type
        sym = graph.symbol(next(st.out for st in graph.stacked if name in st.inputs))
    return sym.ctype


def _dump(graph: GraphDecl, plan, addr: Callable, node: str, name: str) -> Dump:
    item, kind = _elem(_ctype(graph, name))
    return Dump(node, name, addr(name), plan.symbol(name).size // item, item, DUMP_KINDS.index(kind))


def _node_debug(graph: GraphDecl, plan, addr: Callable, i: int) -> NodeDebug:
    o, node = graph.options, graph.nodes[i]
    dumps, sums = [], []
    if o.dump_tensor and o.dump_one_node in (None, node.name):
        # a constant read from flash by the kernel (CONST_EXEC_FROM_FLASH) has no address to print
        dumps = [_dump(graph, plan, addr, node.name, b.symbol) for b in node.args
                 if b.form == NodeArgForm.PLAIN and _dump_bits(graph, b) & o.dump_tensor
                 and plan.symbol(b.symbol).area != "flash_exec"]
    if o.checksum:
        sums = [Checksum(node.name, b.symbol, addr(b.symbol), plan.symbol(b.symbol).size) for b in node.args
                if b.form == NodeArgForm.PLAIN and b.kind in (G.GNA_OUT, G.GNA_INOUT)]
    return NodeDebug(i, node.name, tuple(dumps), tuple(sums))


def _outputs(graph: GraphDecl, plan, addr: Callable) -> tuple:
    if not graph.options.dump_graph_outputs:
        return ()
    return tuple(_dump(graph, plan, addr, graph.name, a.name) for a in graph.args
                 if a.is_param and a.is_pointer and a.direction in (ArgDirection_T.ARG_DIR_OUT,
                                                                     ArgDirection_T.ARG_DIR_INOUT))


def graph_debug(model, graph: GraphDecl, plan, addr: Callable) -> GraphDebug:
    """The options' render model; ``addr(symbol)``: a symbol's ``Addr`` where the nodes run."""
    o, n = graph.options, len(graph.nodes) + 1
    prints = _prints(o)
    return GraphDebug(
        graph=graph.name, entries=n, io=n - 1, monitor=bool(o.monitor_cycles), perf=o.monitor_cvar_name,
        total=f"{o.monitor_cvar_name}_CNN_Total",
        operinfos=o.operinfos_cvar_name if o.produce_operinfos else None,
        opers=tuple(oper_count(model, node.name) for node in graph.nodes) if o.produce_operinfos else (),
        node_names=o.node_cvar_name if o.produce_node_names else None, names=tuple(nd.name for nd in graph.nodes),
        io_wait=IO_WAIT, defines=bool(o.monitor_cycles or o.produce_operinfos or o.produce_node_names or prints),
        prints=prints, dump_helper=bool(o.dump_tensor or o.dump_graph_outputs),
        checksum=bool(o.checksum), to_file=_to_file(o),
        # The runtime trace: TRACE_EXEC (on by default, as in the original) traces the nodes of a
        # runner that prints anyway (dumps, checksums); alone it adds nothing.
        trace=bool(o.trace_exec and prints), running=_running(o), per_line=PER_LINE, size_opt=bool(o.size_opt),
        nodes=tuple(_node_debug(graph, plan, addr, i) for i in range(len(graph.nodes))),
        outputs=_outputs(graph, plan, addr))


__all__ = ["GraphDebug", "NodeDebug", "Dump", "Checksum", "graph_debug", "ctxt_members", "check_dump_node",
           "oper_count", "IO_WAIT"]
