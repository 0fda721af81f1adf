"""What the AT_SetGraphCtrl monitoring and debugging options add to a graph's C (docs/graph.md
"Options"): the arrays of AT_GRAPH_MONITOR_CYCLES / PRODUCE_NODE_NAMES / PRODUCE_OPERINFOS (the
newer original's form: one entry per node and a last ``IO_Wait`` one, and
``<MonitorName>_CNN_Total``), the per-node bracketing of the runner, the trace lines
(AT_GRAPH_TRACE_EXEC), the tensor dumps (AT_GRAPH_DUMP_TENSOR, DUMP_ONE_NODE,
DUMP_TENSOR_TO_FILE, DUMP_GRAPH_OUTPUTS) and checksums (AT_GRAPH_CHECKSUM).

Nothing here changes a graph generated with the default options.

Dump format (one block per tensor, printed or written to ``<G>_TensorDump.txt`` in the current
directory)::

    Node: <node>, Argument: <symbol>, Dim: 1, [<items>] ItemSize: <bytes>
     <v> <v> ... (at most 30 values a line, decimal; floats with %.9g)

``<node>`` is the node's user kernel (or the graph's name for DUMP_GRAPH_OUTPUTS). Checksum line:
``Checksum: Node: <node>, Argument: <symbol>, Sum: <u>``, the sum of the tensor's bytes (as
unsigned) modulo 2**32. Trace lines: ``Graph <G>: node <i> <node> start`` / ``... end``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..constants import ArgDirection_T, AT_DumpTensor_T, GraghNodeArgT
from ..errors import ModelError
from ..model.ctype import CTypeError, parse_ctype
from ..model.graph import GraphDecl, NodeArgForm

G = GraghNodeArgT
PER_LINE = 30
IO_WAIT = "IO_Wait"


@dataclass
class GraphExtras:
    """Definitions the options add before the runner (``c``), their extern declarations (``h``),
    and whether the graph's functions are compiled for size (AT_GRAPH_SIZE_OPT)."""

    c: list = field(default_factory=list)
    h: list = field(default_factory=list)
    size_opt: bool = False


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


class RunnerDebug:
    """The lines the options add to ``<G>(...)``; ``addr(symbol)`` is a symbol's address in C."""

    def __init__(self, model, graph: GraphDecl, plan, addr: Callable[[str], str]):
        self.model, self.graph, self.plan, self.addr = model, graph, plan, addr
        o = graph.options
        self.o = o
        self.n = len(graph.nodes) + 1   # the arrays' entries: one per node, then IO_Wait
        self.monitor = o.monitor_cycles
        self.perf = o.monitor_cvar_name
        self.total = f"{o.monitor_cvar_name}_CNN_Total"
        self.dump = o.dump_tensor
        self.to_file = o.dump_tensor_to_file and bool(o.dump_tensor or o.dump_graph_outputs)
        self.dump_file = "DumpFile" if self.to_file else "stdout"   # the dumps' FILE * in C
        self.prints = bool(o.dump_tensor or o.checksum or o.dump_graph_outputs)
        # The runtime trace: TRACE_EXEC (on by default, as in the original) traces the nodes of a
        # runner that prints anyway (dumps, checksums); alone it adds nothing.
        self.trace = o.trace_exec and self.prints

    # ---- definitions ---------------------------------------------------------------------

    def extras(self) -> GraphExtras:
        o, g, n = self.o, self.graph, self.n
        out = GraphExtras(size_opt=o.size_opt)
        if o.monitor_cycles:
            out.c += [f"unsigned int {self.perf}[{n}];", f"unsigned int {self.total} = 0;"]
            out.h += [f"extern unsigned int {self.perf}[{n}];", f"extern unsigned int {self.total};"]
        if o.produce_operinfos:
            out.c += [f"unsigned int {o.operinfos_cvar_name}[{n}] = {{"]
            out.c += [f"\t{oper_count(self.model, node.name)}," for node in g.nodes] + ["\t0,", "};"]
            out.h.append(f"extern unsigned int {o.operinfos_cvar_name}[{n}];")
        if o.produce_node_names:
            out.c += [f"char *{o.node_cvar_name}[{n}] = {{"]
            out.c += [f"\t\"{node.name}\"," for node in g.nodes] + [f"\t\"{IO_WAIT}\",", "};"]
            out.h.append(f"extern char * {o.node_cvar_name}[{n}];")
        if self.prints:
            out.c += ["#include <stdio.h>"]
        if self.dump or o.dump_graph_outputs:
            out.c += self._dump_helper()
        if o.checksum:
            out.c += ["/* AT_GRAPH_CHECKSUM: the sum of a tensor's bytes, modulo 2^32 */",
                      f"static unsigned int {g.name}_Checksum(const void *Addr, int Bytes)", "{",
                      "\tconst unsigned char *P = (const unsigned char *) Addr;", "\tunsigned int Sum = 0;",
                      "\tfor (int i = 0; i < Bytes; i++) Sum += P[i];", "\treturn Sum;", "}"]
        return out

    def _dump_helper(self) -> list:
        g = self.graph.name
        return ["/* AT_GRAPH_DUMP_TENSOR: one tensor as text (Kind 0: signed, 1: unsigned, 2: float) */",
                f"static void {g}_DumpTensor(FILE *F, const char *Node, const char *Arg, const void *Addr, int Items, "
                "int ItemSize, int Kind)",
                "{",
                "\tconst char *P = (const char *) Addr;",
                "\tfprintf(F, \"Node: %s, Argument: %s, Dim: 1, [%d] ItemSize: %d\\n\", Node, Arg, Items, ItemSize);",
                "\tfor (int i = 0; i < Items; i++) {",
                "\t\tconst char *V = P + (long) i * ItemSize;",
                "\t\tif (Kind == 2 && ItemSize == 4) fprintf(F, \" %.9g\", (double) *(const float *) V);",
                "\t\telse if (Kind == 2) fprintf(F, \" %.17g\", *(const double *) V);",
                "\t\telse if (ItemSize == 1) fprintf(F, Kind ? \" %u\" : \" %d\", Kind ? (int) *(const unsigned char *) V "
                ": (int) *(const signed char *) V);",
                "\t\telse if (ItemSize == 2) fprintf(F, Kind ? \" %u\" : \" %d\", Kind ? (int) *(const unsigned short *) V "
                ": (int) *(const short *) V);",
                "\t\telse if (Kind) fprintf(F, \" %u\", *(const unsigned int *) V);",
                "\t\telse fprintf(F, \" %d\", *(const int *) V);",
                f"\t\tif ((i + 1) % {PER_LINE} == 0 || i + 1 == Items) fputc('\\n', F);",
                "\t}",
                "}"]

    # ---- runner lines ----------------------------------------------------------------------

    def top(self) -> list:
        lines = []
        if self.monitor:
            lines += [f"{self.total} = gap_cl_readhwtimer();", f"{self.perf}[{self.n - 1}] = 0;"]
        if self.to_file:
            lines += [f"FILE *DumpFile = fopen(\"{self.graph.name}_TensorDump.txt\", \"w\");",
                      "if (DumpFile == 0) DumpFile = stdout; /* cannot write the file: print */"]
        return lines

    def decls(self, waits: bool) -> list:
        return ["unsigned int Start_IO;"] if self.monitor and waits else []

    def waits(self, i: int, waits: list) -> list:
        """The waits before node ``i``, timed into the IO_Wait entry when monitoring."""
        if not self.monitor or not waits:
            return waits
        return ["Start_IO = gap_cl_readhwtimer();", *waits, f"{self.perf}[{i}] = gap_cl_readhwtimer();",
                f"{self.perf}[{self.n - 1}] += {self.perf}[{i}] - Start_IO;"]

    def before(self, i: int, waited: bool) -> list:
        node = self.graph.nodes[i].name
        lines = [f"printf(\"Graph {self.graph.name}: node {i} {node} start\\n\");"] if self.trace else []
        if self.monitor and not waited:
            lines.append(f"{self.perf}[{i}] = gap_cl_readhwtimer();")
        return lines

    def after(self, i: int) -> list:
        node = self.graph.nodes[i]
        lines = [f"{self.perf}[{i}] = gap_cl_readhwtimer() - {self.perf}[{i}];"] if self.monitor else []
        if self.trace:
            lines.append(f"printf(\"Graph {self.graph.name}: node {i} {node.name} end\\n\");")
        one = self.o.dump_one_node
        if self.dump and (one is None or one == node.name):
            for b in node.args:
                # a constant read from flash by the kernel (CONST_EXEC_FROM_FLASH) has no address to print
                if b.form == NodeArgForm.PLAIN and self._dump_bits(b) & self.dump \
                        and self.plan.symbol(b.symbol).area != "flash_exec":
                    lines.append(self._dump_call(node.name, b.symbol))
        if self.o.checksum:
            for b in node.args:
                if b.form == NodeArgForm.PLAIN and b.kind in (G.GNA_OUT, G.GNA_INOUT):
                    lines.append(self._checksum(node.name, b.symbol))
        return lines

    def end(self) -> list:
        lines = []
        if self.o.dump_graph_outputs:
            for a in self.graph.args:
                if a.is_param and a.is_pointer and a.direction in (ArgDirection_T.ARG_DIR_OUT,
                                                                    ArgDirection_T.ARG_DIR_INOUT):
                    lines.append(self._dump_call(self.graph.name, a.name))
        if self.monitor:
            lines.append(f"{self.total} = gap_cl_readhwtimer() - {self.total};")
        if self.to_file:
            lines.append("if (DumpFile != stdout) fclose(DumpFile);")
        if self.prints:
            lines.append("fflush(stdout);")
        return lines

    # ---- helpers ---------------------------------------------------------------------------

    def _dump_bits(self, b) -> int:
        sym = self.graph.symbol(b.symbol)
        if b.kind == G.GNA_OUT:
            return AT_DumpTensor_T.AT_DUMP_OUT
        if b.kind == G.GNA_INOUT:
            return AT_DumpTensor_T.AT_DUMP_IN | AT_DumpTensor_T.AT_DUMP_OUT
        if sym is not None and sym.const is not None:
            return AT_DumpTensor_T.AT_DUMP_CONSTANT_IN
        return AT_DumpTensor_T.AT_DUMP_IN

    def _ctype(self, name: str) -> str:
        sym = self.graph.symbol(name)
        if sym is None:  # a stacked tensor's part: its parent's type
            sym = self.graph.symbol(next(st.out for st in self.graph.stacked if name in st.inputs))
        return sym.ctype

    def _dump_call(self, node: str, name: str) -> str:
        size = self.plan.symbol(name).size
        item, kind = _elem(self._ctype(name))
        f = self.dump_file
        return (f"{self.graph.name}_DumpTensor({f}, \"{node}\", \"{name}\", (const void *) {self.addr(name)}, "
                f"{size // item}, {item}, {'dug'.index(kind)});")

    def _checksum(self, node: str, name: str) -> str:
        size = self.plan.symbol(name).size
        return (f"printf(\"Checksum: Node: {node}, Argument: {name}, Sum: %u\\n\", "
                f"{self.graph.name}_Checksum((const void *) {self.addr(name)}, {size}));")


class ReentrantDebug(RunnerDebug):
    """The options' lines in a reentrant runner (-R, see graph.py ``_reentrant``): the same
    observable behaviour as :class:`RunnerDebug`'s across suspensions. A run may span several
    calls of the runner (and the simulated clock restarts at each call), and two contexts may run
    interleaved, so what a run keeps between its layers lives in its context: the cycles of the
    run so far (``PerfTotal``, accumulated per layer, published into ``<Perf>_CNN_Total`` when the
    run ends) and of its constant fetches (``PerfIO``, the IO_Wait entry), the dump file
    (``DumpFile``, opened when a run starts, closed when it ends, an aborted run included, or by
    DeAllocCtxt) and whether a run is open (``Running``: a run ended without starting, e.g.
    aborted before its first layer, dumps and closes nothing). Per layer: the node's cycles into
    ``<Perf>[i]`` (its constant fetches, issued and waited in the layer, into IO_Wait), the
    trace, dump and checksum lines, and ``fflush(stdout)`` so that a suspended run's lines are out.
    ``addr(symbol)``: a symbol's address in a layer; ``arg(name)``: a graph argument in the runner
    (``Ctxt-><name>``)."""

    def __init__(self, model, graph: GraphDecl, plan, addr: Callable[[str], str]):
        super().__init__(model, graph, plan, addr)
        if self.to_file:
            self.dump_file = "((FILE *) Ctxt->DumpFile)"
        self.running = bool(self.monitor or self.to_file or self.o.dump_graph_outputs)

    def members(self) -> list:
        """The context's members the options need (and that graph arguments may not be named)."""
        out = []
        if self.running:
            out.append(("int", "Running", "a run started and has not ended (monitoring and dumps)"))
        if self.monitor:
            out += [("unsigned int", "PerfTotal", f"cycles of the run so far ({self.total} when it ends)"),
                    ("unsigned int", "PerfIO", f"cycles of its constant fetches so far ({self.perf}[{self.n - 1}])")]
        if self.to_file:
            out.append(("void *", "DumpFile", f"FILE * of {self.graph.name}_TensorDump.txt while a run is open"))
        return out

    def _close_file(self) -> list:
        return ["if (Ctxt->DumpFile != 0 && Ctxt->DumpFile != (void *) stdout) fclose((FILE *) Ctxt->DumpFile);",
                "Ctxt->DumpFile = 0;"]

    def run_start(self) -> list:
        """In the runner when a run starts (LayerIndex 0), after the arguments are kept."""
        lines = ["Ctxt->Running = 1;"] if self.running else []
        if self.monitor:
            lines += ["Ctxt->PerfTotal = 0;", "Ctxt->PerfIO = 0;", f"{self.perf}[{self.n - 1}] = 0;"]
        if self.to_file:   # a run dropped by ControlCtxt(reset) left its file open
            lines += self._close_file()
            lines += [f"Ctxt->DumpFile = (void *) fopen(\"{self.graph.name}_TensorDump.txt\", \"w\");",
                      "if (Ctxt->DumpFile == 0) Ctxt->DumpFile = (void *) stdout; /* cannot write the file: print */"]
        return lines

    def layer(self, i: int, fetches: list, node: list) -> tuple:
        """(declarations, statements) of layer ``i``: its constant fetches (copies and waits) and
        its node, with the options' lines."""
        decls, lines = [], []
        if self.monitor:
            decls.append("unsigned int Start_Layer = gap_cl_readhwtimer();")
        if self.monitor and fetches:
            decls.append("unsigned int Start_IO;")
            lines += ["Start_IO = gap_cl_readhwtimer();", *fetches, f"{self.perf}[{i}] = gap_cl_readhwtimer();",
                      f"Ctxt->PerfIO += {self.perf}[{i}] - Start_IO;", f"{self.perf}[{self.n - 1}] = Ctxt->PerfIO;"]
        else:
            lines += fetches
        lines += self.before(i, bool(fetches)) + node + self.after(i)
        if self.monitor:
            lines.append("Ctxt->PerfTotal += gap_cl_readhwtimer() - Start_Layer;")
        if self.prints:
            lines.append("fflush(stdout);")
        return decls, lines

    def run_end(self, arg: Callable[[str], str]) -> list:
        """In the runner when a run ends (all its layers run, or aborted by ControlCtxt)."""
        body = []
        if self.o.dump_graph_outputs:
            addr, self.addr = self.addr, arg
            try:
                body += [line for line in RunnerDebug.end(self) if "_DumpTensor(" in line]
            finally:
                self.addr = addr
        if self.monitor:
            body.append(f"{self.total} = Ctxt->PerfTotal;")
        if self.to_file:
            body += self._close_file()
        lines = ([] if not body else ["if (Ctxt->Running) {", *("\t" + b for b in body), "\tCtxt->Running = 0;", "}"])
        return lines + (["fflush(stdout);"] if self.prints else [])

    def dealloc(self) -> list:
        """In DeAllocCtxt: the file of a run still open."""
        return self._close_file() if self.to_file else []


__all__ = ["GraphExtras", "RunnerDebug", "ReentrantDebug", "check_dump_node", "oper_count", "IO_WAIT"]
