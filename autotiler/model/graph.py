"""The graph IR (``CreateGraph`` ... ``CloseGraph``): graph symbols, nodes and their bindings,
stacked tensors, exported symbols and graph options, as frozen dataclasses with enums; the
constants files of ``ConstInfo`` read and converted; and the checks of a whole graph run at
``CloseGraph`` (reads before writes in node order, cycles, outputs never written).

The order of ``AddNode`` calls is the execution order of the graph runner, as in the original:
a node reads what the nodes added before it wrote.

Constants (``ConstInfo(File, Format, Binary, Size, Fract)``) are read when declared. ``Size`` is
the container, in bits (8, 16, 32, the guide's form) or in bytes (1, 2, 4, as some generated
models write it). Binary files hold raw little-endian items of the container (fixed point) or
IEEE float32 values (float format); text files hold numbers separated by white space or commas.
A float value stored into an integer container becomes ``round(value * 2**Fract)``, rounded to
nearest with ties to even (numpy's ``rint``) and saturated to the container's range (signed or
unsigned as the symbol's C type says); into a float C type it stays an IEEE float of the
container (float16 for 2 bytes, float32 for 4). Fixed-point values are stored as they are; in a
text file they must be integers within the container's range.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Optional

import networkx as nx
import numpy as np

from ..constants import (
    ArgDirection_T,
    ArgScope_T,
    AT_GraphCtrl_T,
    AT_MemLocation_T,
    CallLocationT,
    GraghNodeArgT,
)
from ..errors import ModelError
from .ctype import parse_ctype
from .ir import CArg

D = ArgDirection_T
S = ArgScope_T
G = GraghNodeArgT

# ----------------------------------------------------------------------------------------------
# Constants files

CONTAINER_SIZES = {8: 1, 16: 2, 32: 4, 1: 1, 2: 2, 4: 4}  # Size (bits or bytes) -> bytes
_INT_DTYPES = {(1, True): "<i1", (1, False): "<u1", (2, True): "<i2", (2, False): "<u2", (4, True): "<i4",
               (4, False): "<u4"}
_FLOAT_DTYPES = {2: "<f2", 4: "<f4"}
_SEPARATORS = re.compile(r"[\s,]+")


@dataclass(frozen=True)
class ConstInfoDecl:
    """``ConstInfo(File, Format, Binary, Size, Fract)``: ``float_format`` (Format 0) or fixed
    point (1), ``binary`` (1) or text (0), ``item_size``: the container in bytes, ``fract``: its
    fractional bits. ``path``: the file as resolved (const dir applied), ``count``: the number of
    values it holds. ``signed``/``float_c``: the element of the symbol it initialises, set by
    ``TCArgInfo`` (None until then); ``data``: the packed little-endian bytes."""

    file: str
    float_format: bool
    binary: bool
    item_size: int
    fract: int
    size_arg: int = 0
    path: str = ""
    count: int = 0
    signed: Optional[bool] = None
    float_c: bool = False
    data: bytes = field(default=b"", compare=False, repr=False)
    where: str = field(default="", compare=False)

    @property
    def nbytes(self) -> int:
        return self.count * self.item_size


def const_path(file: str, const_dir: Optional[str]) -> str:
    """Where a ConstInfo file is read: relative names under the const dir (SetConstDir, -c)."""
    if const_dir and not os.path.isabs(file):
        return os.path.join(const_dir, file)
    return file


def read_const_values(decl: ConstInfoDecl) -> np.ndarray:
    """The values of a constants file as numbers (int64 for fixed point, float64 for float),
    ModelError naming the ConstInfo line when the file is missing or malformed."""
    where = decl.where
    if not os.path.isfile(decl.path):
        raise ModelError(f"ConstInfo: constants file '{decl.path}' not found", where=where,
                         hint="check the name; relative names are looked up in the const dir (SetConstDir or -c DIR)"
                         + ("" if os.path.isabs(decl.file) else f", here '{os.path.dirname(decl.path) or '.'}'"))
    with open(decl.path, "rb") as f:
        raw = f.read()
    if decl.binary:
        width = 4 if decl.float_format else decl.item_size
        if len(raw) % width:
            what = "float32 values" if decl.float_format else f"{width}-byte items"
            raise ModelError(f"ConstInfo: binary file '{decl.path}' has {len(raw)} bytes, not a whole number of "
                             f"{what}", where=where,
                             hint="a binary file holds raw little-endian items of the container (Size), or float32 "
                             "values with Format 0 (float)")
        if decl.float_format:
            return np.frombuffer(raw, "<f4").astype(np.float64)
        return np.frombuffer(raw, _INT_DTYPES[(width, True)]).astype(np.int64)
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise ModelError(f"ConstInfo: text file '{decl.path}' is not ASCII text", where=where,
                         hint="pass Binary=1 for a binary file") from None
    words = [w for w in _SEPARATORS.split(text) if w]
    values = []
    for i, w in enumerate(words):
        try:
            values.append(float(w) if decl.float_format else int(w, 0))
        except ValueError:
            kind = "a number" if decl.float_format else "an integer (fixed-point values are stored as they are)"
            raise ModelError(f"ConstInfo: item {i} of text file '{decl.path}' is {w!r}, not {kind}", where=where,
                             hint="separate numbers with white space or commas" if decl.float_format else
                             "give Format 0 (float) to convert real values to fixed point with Fract bits") from None
    return np.array(values, dtype=np.float64 if decl.float_format else np.int64)


def container_range(item_size: int, signed: bool) -> tuple:
    bits = 8 * item_size
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def to_fixed(values: np.ndarray, fract: int, item_size: int, signed: bool) -> np.ndarray:
    """Float values as fixed point with ``fract`` fractional bits in an ``item_size``-byte
    container: round to nearest, ties to even, saturated to the container's range."""
    lo, hi = container_range(item_size, signed)
    scaled = np.rint(np.asarray(values, dtype=np.float64) * float(2 ** fract))
    return np.clip(scaled, lo, hi).astype(_INT_DTYPES[(item_size, signed)])


def pack_const(decl: ConstInfoDecl, values: np.ndarray) -> bytes:
    """The packed little-endian bytes of ``values`` for ``decl`` (its signedness and C element
    set by TCArgInfo); ModelError for NaN, and for fixed-point values outside the container."""
    where = decl.where
    signed = True if decl.signed is None else decl.signed
    if decl.float_c:
        return np.asarray(values, dtype=np.float64).astype(_FLOAT_DTYPES[decl.item_size]).tobytes()
    if decl.float_format:
        bad = np.flatnonzero(np.isnan(values))
        if bad.size:
            raise ModelError(f"ConstInfo: item {int(bad[0])} of '{decl.path}' is NaN, which has no fixed-point value",
                             where=where, hint="fix the data")
        return to_fixed(values, decl.fract, decl.item_size, signed).tobytes()
    if decl.binary:  # raw items of the container, stored as they are
        return np.asarray(values).astype(_INT_DTYPES[(decl.item_size, True)]).tobytes()
    lo, hi = container_range(decl.item_size, signed)
    bad = np.flatnonzero((values < lo) | (values > hi))
    if bad.size:
        i = int(bad[0])
        raise ModelError(f"ConstInfo: item {i} of '{decl.path}' is {int(values[i])}, outside the {decl.item_size}-byte "
                         f"{'signed' if signed else 'unsigned'} container ({lo}..{hi})", where=where,
                         hint="fixed-point values are stored as they are: fix the data or the container (Size)")
    return values.astype(_INT_DTYPES[(decl.item_size, signed)]).tobytes()


def load_const(decl: ConstInfoDecl, items: int) -> bytes:
    """The packed little-endian bytes of a constant of ``items`` items (for the memory planner
    and code generation): ModelError when the file does not hold exactly that many."""
    if decl.count != items:
        raise ModelError(f"ConstInfo: '{decl.path}' holds {decl.count} item(s), {items} expected", where=decl.where,
                         hint=f"the symbol is {items} items of {decl.item_size} byte(s): regenerate the data")
    return decl.data if decl.data or not items else pack_const(decl, read_const_values(decl))


# ----------------------------------------------------------------------------------------------
# Graph symbols, nodes, bindings


@dataclass(frozen=True)
class GraphArgDecl(CArg):
    """A graph symbol: ``TCArgInfo(Type, Name, Scope, Dir, HomeLoc, ExecLoc, ConstInfo)`` (a C
    argument with location info). ``user_allocated``: ``TCArgInfoA`` (the application allocates
    the symbol)."""

    scope: ArgScope_T = S.ARG_SCOPE_UNDEF
    direction: ArgDirection_T = D.ARG_DIR_UNDEF
    home: AT_MemLocation_T = AT_MemLocation_T.AT_MEM_UNDEF
    exec_loc: AT_MemLocation_T = AT_MemLocation_T.AT_MEM_UNDEF
    const: Optional[ConstInfoDecl] = None
    user_allocated: bool = False

    @property
    def is_local(self) -> bool:
        return self.scope == S.ARG_SCOPE_LOCAL

    @property
    def is_param(self) -> bool:
        """A parameter of the graph function (ARG_SCOPE_ARG, ARG_SCOPE_ARG_ALLOC)."""
        return self.scope in (S.ARG_SCOPE_ARG, S.ARG_SCOPE_ARG_ALLOC)

    @property
    def read_only(self) -> bool:
        return self.direction in (D.ARG_DIR_IN, D.ARG_DIR_CONSTIN)

    @property
    def has_initial_value(self) -> bool:
        """Its content is defined before the first node runs (graph inputs, constants, in-outs)."""
        return self.direction in (D.ARG_DIR_IN, D.ARG_DIR_CONSTIN, D.ARG_DIR_INOUT) and not self.is_local


class NodeArgForm(Enum):
    PLAIN = "GNodeArg"                # the symbol
    IMM_OPER = "GNodeArgImmOper"      # symbol op immediate
    CARG_OPER = "GNodeArgCArgOper"    # symbol op graph C argument
    CARG = "GNodeCArg"                # a graph C argument passed straight through
    GARG = "GArg"                     # simplified form (AddCallToNode)


@dataclass(frozen=True)
class NodeArgDecl:
    """One binding of a node (or of a call added to it): ``kind`` GNA_IN/OUT/INOUT (None for
    GNodeCArg and GArg); for GNA_INOUT with an ``alias``, the output ``symbol`` is aliased to
    the input ``alias``; ``oper`` with ``value`` (IMM_OPER) or ``carg`` (CARG_OPER)."""

    form: NodeArgForm
    symbol: str
    kind: Optional[GraghNodeArgT] = None
    alias: Optional[str] = None
    oper: Optional[str] = None
    value: int = 0
    carg: Optional[str] = None
    where: str = field(default="", compare=False)

    @property
    def reads(self) -> tuple:
        """Symbols whose content the node reads through this binding."""
        if self.form in (NodeArgForm.CARG, NodeArgForm.GARG) or self.kind == G.GNA_IN:
            return (self.symbol,)
        if self.kind == G.GNA_INOUT:
            return (self.alias or self.symbol,)
        return ()

    @property
    def writes(self) -> tuple:
        return (self.symbol,) if self.kind in (G.GNA_OUT, G.GNA_INOUT) else ()


@dataclass(frozen=True)
class NodeCallDecl:
    """``AddCallToNode(Node, CALL_PROLOG|CALL_EPILOG, Function, Bindings(GArg(...), ...))``."""

    location: CallLocationT
    function: str
    args: tuple
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class NodeDecl:
    """``AddNode(Name, Bindings(...))``: a call of user kernel (or group, ``group``) ``name``,
    one binding per C argument, in order; ``calls``: the C calls added before/after it."""

    name: str
    args: tuple
    group: bool = False
    calls: tuple = ()
    where: str = field(default="", compare=False)

    @property
    def reads(self) -> tuple:
        return tuple(s for a in self.args for s in a.reads)

    @property
    def writes(self) -> tuple:
        return tuple(s for a in self.args for s in a.writes)


@dataclass(frozen=True)
class StackedTensorsDecl:
    """``AT_StackedTensors(Out, Count, In1, ...)`` / ``AddStackedTensors``: ``inputs`` are
    aliases of consecutive parts of ``out``, in order (concatenation without copies)."""

    out: str
    inputs: tuple
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class ExportDecl:
    """``AddGraphArgExportSymbols(GraphCArg, ExportAddrName, ExportLocName)``."""

    symbol: str
    addr_name: str
    loc_name: str
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class GraphOptions:
    """The graph controls (AT_SetGraphCtrl) in force when the graph was closed, with the
    original's defaults (GraphControl_T)."""

    monitor_cycles: bool = False
    monitor_cvar_name: str = "AT_GraphPerf"
    produce_node_names: bool = False
    node_cvar_name: str = "AT_GraphNodeNames"
    produce_operinfos: bool = False
    operinfos_cvar_name: str = "AT_GraphOperInfosNames"
    reorder_constant_in: bool = True
    trace_exec: bool = True
    noinline_node: bool = False
    pref_l3_exec: AT_MemLocation_T = AT_MemLocation_T.AT_MEM_L3_HRAM
    const_exec_from_flash: bool = False
    pref_l3_home: AT_MemLocation_T = AT_MemLocation_T.AT_MEM_L3_HFLASH
    dump_tensor: int = 0
    dump_one_node: Optional[str] = None
    arg2struct: bool = False
    size_opt: bool = False
    warm_construct: int = 0          # WARM_DISABLED, WARM_L1, WARM_L2_DYN_L1, WARM_ALL
    checksum: bool = False
    privileged_l3_home: AT_MemLocation_T = AT_MemLocation_T.AT_MEM_UNDEF
    dump_tensor_to_file: bool = False
    group_weights: bool = False
    async_fork: bool = False
    dump_graph_outputs: bool = False
    runner_re_entrant: bool = False
    l1_promotion: bool = False
    disable_const_l2_promotion: bool = False
    use_merged_dma: bool = False
    l2_static_memory_budget: int = 0
    l3_static_memory_budget: int = 0

    @classmethod
    def from_ctrl(cls, ctrl: dict) -> GraphOptions:
        """From ``Model.graph_ctrl`` ({AT_GraphCtrl_T: value}); kernel controls are ignored."""
        values = {GRAPH_OPTION_FIELDS[k]: v for k, v in ctrl.items() if k in GRAPH_OPTION_FIELDS}
        return cls(**values)


C = AT_GraphCtrl_T
GRAPH_OPTION_FIELDS = {
    C.AT_GRAPH_MONITOR_CYCLES: "monitor_cycles", C.AT_GRAPH_MONITOR_CVAR_NAME: "monitor_cvar_name",
    C.AT_GRAPH_PRODUCE_NODE_NAMES: "produce_node_names", C.AT_GRAPH_PRODUCE_NODE_CVAR_NAME: "node_cvar_name",
    C.AT_GRAPH_PRODUCE_OPERINFOS: "produce_operinfos", C.AT_GRAPH_PRODUCE_OPERINFOS_CVAR_NAME: "operinfos_cvar_name",
    C.AT_GRAPH_REORDER_CONSTANT_IN: "reorder_constant_in", C.AT_GRAPH_TRACE_EXEC: "trace_exec",
    C.AT_GRAPH_NOINLINE_NODE: "noinline_node", C.AT_GRAPH_PREF_L3_EXEC: "pref_l3_exec",
    C.AT_GRAPH_CONST_EXEC_FROM_FLASH: "const_exec_from_flash", C.AT_GRAPH_PREF_L3_HOME: "pref_l3_home",
    C.AT_GRAPH_DUMP_TENSOR: "dump_tensor", C.AT_GRAPH_DUMP_ONE_NODE: "dump_one_node",
    C.AT_GRAPH_ARG2STRUCT: "arg2struct", C.AT_GRAPH_SIZE_OPT: "size_opt",
    C.AT_GRAPH_WARM_CONSTRUCT: "warm_construct", C.AT_GRAPH_CHECKSUM: "checksum",
    C.AT_GRAPH_PRIVILEGED_L3_HOME: "privileged_l3_home", C.AT_GRAPH_DUMP_TENSOR_TO_FILE: "dump_tensor_to_file",
    C.AT_GRAPH_GROUP_WEIGHTS: "group_weights", C.AT_GRAPH_ASYNC_FORK: "async_fork",
    C.AT_GRAPH_DUMP_GRAPH_OUTPUTS: "dump_graph_outputs", C.AT_GRAPH_RUNNER_RE_ENTRANT: "runner_re_entrant",
    C.AT_GRAPH_L1_PROMOTION: "l1_promotion", C.AT_GRAPH_DISABLE_CONST_L2_PROMOTION: "disable_const_l2_promotion",
    C.AT_GRAPH_USE_MERGED_DMA: "use_merged_dma", C.AT_GRAPH_L2_STATIC_MEMORY_BUDGET: "l2_static_memory_budget",
    C.AT_GRAPH_L3_STATIC_MEMORY_BUDGET: "l3_static_memory_budget",
}


@dataclass(frozen=True)
class GraphDecl:
    """A closed graph: ``args`` (graph function parameters and globals), ``locals``, ``nodes``
    in execution order, ``stacked`` tensors, ``exports``, ``options``."""

    name: str
    args: tuple
    locals: tuple
    nodes: tuple
    stacked: tuple = ()
    exports: tuple = ()
    options: GraphOptions = GraphOptions()
    where: str = field(default="", compare=False)
    close_where: str = field(default="", compare=False)

    @property
    def symbols(self) -> dict:
        return {a.name: a for a in (*self.args, *self.locals)}

    def symbol(self, name: str) -> Optional[GraphArgDecl]:
        return self.symbols.get(name)

    def node(self, name: str) -> Optional[NodeDecl]:
        return next((n for n in self.nodes if n.name == name), None)

    @property
    def constants(self) -> tuple:
        return tuple(a for a in self.args if a.const is not None)


@dataclass
class OpenGraph:
    """The graph being declared (between CreateGraph and CloseGraph)."""

    name: str
    where: str
    args: list = field(default_factory=list)
    locals: list = field(default_factory=list)
    nodes: list = field(default_factory=list)
    stacked: list = field(default_factory=list)
    exports: list = field(default_factory=list)

    @property
    def symbols(self) -> dict:
        return {a.name: a for a in (*self.args, *self.locals)}

    @property
    def stacked_inputs(self) -> dict:
        """Stacked input name -> its StackedTensorsDecl."""
        return {i: s for s in self.stacked for i in s.inputs}

    def node(self, name: str) -> Optional[NodeDecl]:
        return next((n for n in self.nodes if n.name == name), None)

    def replace_node(self, node: NodeDecl) -> None:
        self.nodes = [node if n.name == node.name else n for n in self.nodes]

    def writers(self, symbol: str) -> list:
        """Nodes (in order) writing ``symbol``, or a part of it (stacked tensors)."""
        parts = {symbol} | set(next((s.inputs for s in self.stacked if s.out == symbol), ()))
        st = self.stacked_inputs.get(symbol)
        if st is not None:
            parts.add(st.out)
        return [n for n in self.nodes if parts & set(n.writes)]

    def close(self, options: GraphOptions, where: str) -> GraphDecl:
        return GraphDecl(self.name, tuple(self.args), tuple(self.locals), tuple(self.nodes), tuple(self.stacked),
                         tuple(self.exports), options, self.where, where)


# ----------------------------------------------------------------------------------------------
# Whole-graph checks (CloseGraph)


def _initially_defined(g: OpenGraph, name: str) -> bool:
    st = g.stacked_inputs.get(name)
    sym = g.symbols.get(st.out if st else name)
    return sym is not None and sym.has_initial_value


def _written_before(g: OpenGraph, name: str, index: int) -> bool:
    """Is ``name`` entirely written by nodes before node ``index``? A stacked output is written
    when itself or all its parts are; a part when itself or its output is."""
    done = {s for n in g.nodes[:index] for s in n.writes}
    if name in done:
        return True
    st_out = next((s for s in g.stacked if s.out == name), None)
    if st_out is not None and all(i in done for i in st_out.inputs):
        return True
    st = g.stacked_inputs.get(name)
    return st is not None and st.out in done


def check_graph_order(g: OpenGraph, close_where: str) -> None:
    """Reads before writes in node order, cycles, outputs never written: ModelError naming the
    node whose AddNode is wrong (or CloseGraph for a missing write)."""
    late = []   # (reader index, symbol, writer indexes after it)
    dep = nx.DiGraph()
    dep.add_nodes_from(range(len(g.nodes)))
    for j, node in enumerate(g.nodes):
        for s in dict.fromkeys(node.reads):
            if _initially_defined(g, s) or _written_before(g, s, j):
                continue
            later = [g.nodes.index(w) for w in g.writers(s) if g.nodes.index(w) > j]
            late.append((j, s, later))
            for w in later:
                dep.add_edge(w, j, symbol=s)
        # in-order dependencies: the last earlier writer of each symbol read
        for s in node.reads:
            earlier = [g.nodes.index(w) for w in g.writers(s) if g.nodes.index(w) < j]
            if earlier:
                dep.add_edge(earlier[-1], j, symbol=s)
    try:
        cycle = nx.find_cycle(dep)
    except nx.NetworkXNoCycle:
        cycle = None
    if cycle:
        first, last = min(u for u, _ in cycle), max(u for u, _ in cycle)
        start = next(i for i, (u, _) in enumerate(cycle) if u == first)
        cycle = cycle[start:] + cycle[:start]
        path = "; ".join(f"'{g.nodes[u].name}' writes '{dep.edges[u, v]['symbol']}', read by '{g.nodes[v].name}'"
                         for u, v in cycle)
        raise ModelError(f"graph '{g.name}': nodes form a cycle: {path}",
                         where=g.nodes[last].where, kernel=g.nodes[last].name,
                         hint="each node runs once, in AddNode order, reading what earlier nodes wrote: "
                         "break the cycle (a node cannot read its own output through other nodes)")
    for j, s, later in late:
        node = g.nodes[j]
        what = _describe_symbol(g, s)
        if later:
            raise ModelError(f"graph '{g.name}': node '{node.name}' reads {what} '{s}' before node "
                             f"'{g.nodes[later[0]].name}' writes it", where=node.where, kernel=node.name, arg=s,
                             hint=f"AddNode order is the execution order: add node '{g.nodes[later[0]].name}' "
                             f"before node '{node.name}'")
        raise ModelError(f"graph '{g.name}': node '{node.name}' reads {what} '{s}', which no node writes",
                         where=node.where, kernel=node.name, arg=s,
                         hint=f"bind '{s}' as GNA_OUT of the node that produces it, before node '{node.name}'")
    for a in g.args:
        if a.direction == D.ARG_DIR_OUT and not g.writers(a.name):
            raise ModelError(f"graph '{g.name}': output '{a.name}' (declared at {a.where}) is never written",
                             where=close_where, arg=a.name,
                             hint=f"bind '{a.name}' as GNA_OUT of the node that produces it")


def _describe_symbol(g: OpenGraph, name: str) -> str:
    st = g.stacked_inputs.get(name)
    if st is not None:
        return f"stacked part (of '{st.out}')"
    sym = g.symbols.get(name)
    return "local" if sym is not None and sym.is_local else "output"


def item_dtype(ctype: str) -> Optional[str]:
    """numpy dtype of a pointer's element (None when unknown)."""
    return parse_ctype(ctype).dtype


__all__ = [
    "CONTAINER_SIZES", "ConstInfoDecl", "const_path", "read_const_values", "container_range", "to_fixed",
    "pack_const", "load_const", "GraphArgDecl", "NodeArgForm", "NodeArgDecl", "NodeCallDecl", "NodeDecl",
    "StackedTensorsDecl", "ExportDecl", "GraphOptions", "GRAPH_OPTION_FIELDS", "GraphDecl", "OpenGraph",
    "check_graph_order", "item_dtype",
]
