"""The graph API, with the original's names and argument orders: ``CreateGraph``,
``TCArgInfo``/``TCArgInfoA``, ``ConstInfo``, ``AddNode`` with ``GNodeArg`` (and the operator
forms), ``AddCallToNode``, stacked tensors, exported symbols and ``CloseGraph``. It declares
the graph IR of :mod:`autotiler.model.graph` and validates each call where the mistake is made
(the whole-graph checks run at ``CloseGraph``)."""

from __future__ import annotations

import re
from typing import Optional

from ..constants import ArgDirection_T, ArgScope_T, AT_MemLocation_T, CallLocationT, GraghNodeArgT
from ..errors import ModelError
from ..graph.lower import bound_argument, indexed_argument
from ..model.ctype import parse_ctype
from ..model.graph import (
    CONTAINER_SIZES,
    ConstInfoDecl,
    ExportDecl,
    GraphArgDecl,
    GraphOptions,
    NodeArgDecl,
    NodeArgForm,
    NodeCallDecl,
    NodeDecl,
    OpenGraph,
    StackedTensorsDecl,
    check_graph_order,
    const_path,
    pack_const,
    read_const_values,
)
from ..model.ir import CArg, ImmBinding, KernelGroupDecl, caller_where
from ..model.session import current_model
from ..model.validate import BINDING_OPERS, check_name, check_not_reserved, check_unique, suggest
from .common import (
    GRAPH_FUNCTIONS,
    check_function_name,
    describe,
    enum,
    global_c_names,
    int_arg,
    listed,
    name_or_none,
)
from .declare import TCArg
from .kernels import home_in_l2

D = ArgDirection_T
S = ArgScope_T
G = GraghNodeArgT

# ----------------------------------------------------------------------------------------------
# Symbols and constants


def _flag(value, what: str, where: str, hint: str) -> bool:
    if isinstance(value, bool) or value in (0, 1):
        return bool(value)
    raise ModelError(f"ConstInfo {what} must be 0 or 1, got {value!r}", where=where, hint=hint)


def ConstInfo(FileName: str, Format: int, Binary: int, Size: int, Fract: int) -> ConstInfoDecl:
    """The initial value of a constant graph symbol, read from ``FileName`` now (relative names
    under SetConstDir / -c DIR): Format 0 float (converted to fixed point with Fract bits), 1
    fixed point; Binary 1 raw little-endian items, 0 text; Size the container in bits (8, 16,
    32) or bytes (1, 2, 4)."""
    where = caller_where()
    if not isinstance(FileName, str) or not FileName:
        raise ModelError(f"ConstInfo expects a file name, got {FileName!r}", where=where,
                         hint="e.g. ConstInfo(\"model/Step1Weights.tensor\", 1, 1, 16, 0)")
    float_format = not _flag(Format, "Format", where, "0: the file holds real values (converted to fixed point), "
                             "1: fixed-point values stored as they are")
    binary = _flag(Binary, "Binary", where, "1: raw little-endian items, 0: text")
    size = int_arg(Size, "ConstInfo Size", where)
    if size not in CONTAINER_SIZES:
        raise ModelError(f"ConstInfo Size {size} is not a container size", where=where,
                         hint="give the container in bits (8, 16, 32) or bytes (1, 2, 4)")
    item = CONTAINER_SIZES[size]
    fract = int_arg(Fract, "ConstInfo Fract", where, minimum=0)
    if fract >= 8 * item:
        raise ModelError(f"ConstInfo Fract {fract} leaves no integer bit in a {8 * item}-bit container", where=where,
                         hint=f"use 0..{8 * item - 1} fractional bits (Qx.Fract with x + Fract < Size)")
    model = current_model()
    path = const_path(FileName, model.const_dir_from_cli or model.const_dir)
    decl = ConstInfoDecl(FileName, float_format, binary, item, fract, size, path, where=where)
    values = read_const_values(decl)
    if len(values) == 0:
        raise ModelError(f"ConstInfo: '{path}' holds no item: a constant of 0 bytes", where=where,
                         hint="write the tensor's values into the file (the generator that exports the model)")
    return ConstInfoDecl(FileName, float_format, binary, item, fract, size, path, len(values), where=where)


def _loc(value, what: str, where: str, name: str) -> AT_MemLocation_T:
    loc = enum(AT_MemLocation_T, value, f"{what} (AT_MEM_*)", where)
    if loc == AT_MemLocation_T.AT_MEM_LAST:
        raise ModelError(f"{what} AT_MEM_LAST is not a memory", where=where, arg=name,
                         hint="use AT_MEM_UNDEF (the allocator decides), AT_MEM_L2 or an AT_MEM_L3_* device")
    return loc


def _arg_info(func: str, ArgType, ArgName, Scope, Dir, HomeLoc, ExecLoc, ConstInit, user_allocated: bool,
              where: str) -> GraphArgDecl:
    carg = TCArg(ArgType, ArgName)
    name = carg.name
    scope = enum(ArgScope_T, Scope, "argument scope (ARG_SCOPE_*)", where)
    direction = enum(ArgDirection_T, Dir, "argument direction (ARG_DIR_*)", where)
    home = _loc(HomeLoc, "HomeLoc", where, name)
    exec_loc = _loc(ExecLoc, "ExecLoc", where, name)
    if scope == S.ARG_SCOPE_UNDEF or direction == D.ARG_DIR_UNDEF:
        what = "ARG_SCOPE_UNDEF" if scope == S.ARG_SCOPE_UNDEF else "ARG_DIR_UNDEF"
        raise ModelError(f"{func}: graph symbol '{name}' is declared with {what}", where=where, arg=name,
                         hint="give the scope (ARG_SCOPE_ARG, ARG_SCOPE_ARG_ALLOC, ARG_SCOPE_GLOBAL, ARG_SCOPE_LOCAL) "
                         "and the direction (ARG_DIR_IN, ARG_DIR_CONSTIN, ARG_DIR_OUT, ARG_DIR_INOUT)")
    ct = parse_ctype(carg.ctype)
    if scope in (S.ARG_SCOPE_GLOBAL, S.ARG_SCOPE_LOCAL, S.ARG_SCOPE_ARG_ALLOC) and ct.pointers != 1:
        raise ModelError(f"{func}: graph symbol '{name}' ({scope.name}) has type '{carg.ctype}', not a pointer",
                         where=where, arg=name, hint="a tensor the graph allocates is declared by a pointer to its "
                         "items, e.g. \"short int * __restrict__\"")
    const = None if ConstInit in (0, None) else ConstInit
    if const is not None and not isinstance(const, ConstInfoDecl):
        raise ModelError(f"{func}: ConstInit of '{name}' must be ConstInfo(...) or 0, got {describe(const)}",
                         where=where, arg=name, hint="e.g. ConstInfo(\"Weights.tensor\", 1, 1, 16, 0)")
    if direction == D.ARG_DIR_CONSTIN and scope == S.ARG_SCOPE_GLOBAL and const is None:
        raise ModelError(f"{func}: constant '{name}' (ARG_DIR_CONSTIN) has no ConstInfo: its value is unknown",
                         where=where, arg=name,
                         hint="pass ConstInfo(File, Format, Binary, Size, Fract) as the last argument")
    if const is not None:
        if direction != D.ARG_DIR_CONSTIN:
            raise ModelError(f"{func}: '{name}' has ConstInfo data but is {direction.name}", where=where, arg=name,
                             hint="only constants (ARG_DIR_CONSTIN, ARG_SCOPE_GLOBAL) are initialised from a file")
        const = _bind_const(const, carg, where)
    return GraphArgDecl(carg.ctype, name, where, scope, direction, home, exec_loc, const, user_allocated)


def _bind_const(const: ConstInfoDecl, carg: CArg, where: str) -> ConstInfoDecl:
    """The ConstInfo of symbol ``carg``: its container against the C type's items, the
    signedness and float-ness of the element, the data packed."""
    ct = parse_ctype(carg.ctype)
    if ct.pointers != 1:
        raise ModelError(f"constant '{carg.name}' has type '{carg.ctype}', not a pointer", where=where, arg=carg.name,
                         hint="a constant tensor is declared by a pointer to its items")
    dtype = ct.dtype
    float_c = ct.element in ("float", "double", "f16", "f16a") or bool(dtype and dtype[1] == "f")
    size = ct.item_size or ({"f16": 2, "f16a": 2}.get(ct.base))
    if size and size != const.item_size:
        raise ModelError(f"ConstInfo '{const.file}' has {const.item_size}-byte items (Size {const.size_arg}) but "
                         f"'{carg.name}' is '{carg.ctype}' ({size}-byte items)", where=where, arg=carg.name,
                         hint=f"give Size {8 * size} (bits) or use a C type of {const.item_size}-byte items")
    if float_c and not const.float_format:
        raise ModelError(f"ConstInfo '{const.file}' holds fixed-point values (Format 1) but '{carg.name}' is "
                         f"'{carg.ctype}', a float type", where=where, arg=carg.name,
                         hint="give Format 0 (float) for float data")
    if float_c and const.item_size not in (2, 4):
        raise ModelError(f"ConstInfo '{const.file}': a float symbol needs a 16- or 32-bit container, not "
                         f"{8 * const.item_size} bits", where=where, arg=carg.name, hint="give Size 16 or 32")
    signed = not (dtype and dtype[1] == "u")
    bound = ConstInfoDecl(const.file, const.float_format, const.binary, const.item_size, const.fract, const.size_arg,
                          const.path, const.count, signed, float_c, where=const.where)
    data = pack_const(bound, read_const_values(bound))
    return ConstInfoDecl(bound.file, bound.float_format, bound.binary, bound.item_size, bound.fract, bound.size_arg,
                         bound.path, bound.count, signed, float_c, data, bound.where)


def TCArgInfo(ArgType: str, ArgName: str, Scope, Dir, HomeLoc, ExecLoc, ConstInit=0) -> GraphArgDecl:
    """A graph symbol: a typed C argument with its scope (ARG_SCOPE_*), direction (ARG_DIR_*),
    home and execution memories (AT_MEM_*; AT_MEM_UNDEF lets the allocator decide) and, for a
    constant, its ConstInfo."""
    return _arg_info("TCArgInfo", ArgType, ArgName, Scope, Dir, HomeLoc, ExecLoc, ConstInit, False, caller_where())


def TCArgInfoA(ArgType: str, ArgName: str, Scope, Dir, HomeLoc, ExecLoc, ConstInit=0) -> GraphArgDecl:
    """``TCArgInfo`` for a symbol the application allocates itself (``UserAllocated``)."""
    return _arg_info("TCArgInfoA", ArgType, ArgName, Scope, Dir, HomeLoc, ExecLoc, ConstInit, True, caller_where())


# ----------------------------------------------------------------------------------------------
# Creating and closing a graph


def _open(func: str, where: str) -> OpenGraph:
    g = current_model().open_graph
    if g is None:
        raise ModelError(f"{func} outside a graph", where=where,
                         hint="call CreateGraph(Name, CArgs(...), CArgs(...)) first, and CloseGraph() after the "
                         "last node")
    return g


_RUNNER_LOCAL = re.compile(r"_?UchanHF\d+")


def _add_symbol(g: OpenGraph, a, local: bool, where: str) -> None:
    model = current_model()
    if not isinstance(a, GraphArgDecl):
        raise ModelError(f"graph '{g.name}': {describe(a)} has no location info", where=a.where or where,
                         arg=a.name, hint="declare graph symbols with TCArgInfo(Type, Name, Scope, Dir, HomeLoc, "
                         "ExecLoc, ConstInfo)")
    if local and not a.is_local:
        raise ModelError(f"graph '{g.name}': local '{a.name}' has scope {a.scope.name}", where=a.where, arg=a.name,
                         hint="locals (the second list of CreateGraph) are ARG_SCOPE_LOCAL; put arguments and "
                         "globals in the first list")
    if not local and a.is_local:
        raise ModelError(f"graph '{g.name}': argument '{a.name}' has scope ARG_SCOPE_LOCAL", where=a.where, arg=a.name,
                         hint="put locals in the second list of CreateGraph (Locals)")
    if a.is_local and a.direction == D.ARG_DIR_CONSTIN:
        raise ModelError(f"graph '{g.name}': local '{a.name}' is ARG_DIR_CONSTIN", where=a.where, arg=a.name,
                         hint="a constant is a global graph argument (ARG_SCOPE_GLOBAL) with ConstInfo")
    known = g.symbols
    if a.name in known or a.name in g.stacked_inputs:
        raise ModelError(f"graph '{g.name}': symbol '{a.name}' is declared twice", where=a.where, arg=a.name,
                         hint=f"the first is at {known[a.name].where if a.name in known else g.stacked_inputs[a.name].where}"
                         "; give each graph symbol its own name")
    check_not_reserved(a.name, "graph symbol", a.where, parameter=a.is_param)
    # A global or a local of the generated code, or a parameter of the runner (which would hide
    # the memory symbols, the flash device and the functions it calls): not a name it already uses.
    taken = global_c_names(model)
    taken.update({n: f"user kernel '{n}'" for n in model.kernels})
    taken.update({n: f"kernel group '{n}'" for n in model.groups})
    use = taken.get(a.name)
    if use is None and a.is_param and _RUNNER_LOCAL.fullmatch(a.name):
        use = f"a local of the runner '{g.name}' (a flash copy event)"
    if use:
        raise ModelError(f"graph '{g.name}': symbol '{a.name}' is also {use} in the generated code", where=a.where,
                         arg=a.name, hint="rename the graph symbol")
    (g.locals if local else g.args).append(a)


def CreateGraph(GraphName: str, CArgs=0, Locals=0) -> None:
    """Open graph ``GraphName``: ``CArgs`` its function arguments and global constants
    (TCArgInfo), ``Locals`` its intermediate tensors (ARG_SCOPE_LOCAL)."""
    where = caller_where()
    model = current_model()
    if model.open_graph is not None:
        raise ModelError(f"CreateGraph('{GraphName}'): graph '{model.open_graph.name}' (created at "
                         f"{model.open_graph.where}) is still open", where=where,
                         hint="call CloseGraph() first; graphs do not nest")
    check_name(GraphName, "graph", where)
    if GraphName in model.graphs:
        raise ModelError(f"a graph named '{GraphName}' is already declared (at {model.graphs[GraphName].where})",
                         where=where, hint="give each graph its own name")
    model.check_new_function_name(GraphName, where)
    check_function_name(model, GraphName, where)
    for suffix in GRAPH_FUNCTIONS:
        model.check_new_function_name(GraphName + suffix, where)
        check_function_name(model, GraphName + suffix, where)
    args = listed("CArgs", CArgs, CArg, where)
    locs = listed("CArgs", Locals, CArg, where)
    g = OpenGraph(GraphName, where)
    for a in args:
        _add_symbol(g, a, False, where)
    for a in locs:
        _add_symbol(g, a, True, where)
    model.open_graph = g


def AddGraphCArg(CArg) -> None:
    """Add a graph argument or global to the open graph (incremental form of CreateGraph)."""
    where = caller_where()
    _add_symbol(_open("AddGraphCArg", where), CArg, False, where)


def AddGraphLocal(CArg) -> None:
    """Add a local to the open graph (incremental form of CreateGraph)."""
    where = caller_where()
    _add_symbol(_open("AddGraphLocal", where), CArg, True, where)


def CommitGraphArgsAndLocals() -> None:
    """End of the incremental declarations (AddGraphCArg, AddGraphLocal): nothing left to do."""
    _open("CommitGraphArgsAndLocals", caller_where())


def CloseGraph() -> None:
    """Close the open graph: check the order of its nodes (reads after writes, no cycle,
    every output written) and record it in the model."""
    where = caller_where()
    model = current_model()
    if model.open_graph is None:
        raise ModelError("CloseGraph() without CreateGraph()", where=where,
                         hint="open the graph with CreateGraph(Name, CArgs(...), CArgs(...)) before its nodes")
    g = model.open_graph
    if not g.nodes:
        raise ModelError(f"graph '{g.name}' has no node", where=where,
                         hint="add its nodes with AddNode(UserKernelName, Bindings(GNodeArg(...), ...))")
    check_graph_order(g, where)
    model.graphs[g.name] = g.close(GraphOptions.from_ctrl(model.graph_ctrl), where)
    model.open_graph = None


def CNNGraphName() -> Optional[str]:
    """The name of the open graph, else of the last graph declared (None without a graph)."""
    model = current_model()
    if model.open_graph is not None:
        return model.open_graph.name
    return next(reversed(model.graphs), None)


# ----------------------------------------------------------------------------------------------
# Node bindings


def _kind(value, where: str) -> GraghNodeArgT:
    kind = enum(GraghNodeArgT, value, "graph node argument kind (GNA_*)", where)
    if kind == G.GNA_UNDEF:
        raise ModelError("a graph node argument needs a direction, got GNA_UNDEF", where=where,
                         hint="use GNA_IN, GNA_OUT or GNA_INOUT")
    return kind


def _node_arg(form: NodeArgForm, Type, ArgName, AliasedArgName, where: str, **extra) -> NodeArgDecl:
    kind = _kind(Type, where)
    check_name(ArgName, "graph symbol", where)
    alias = name_or_none(AliasedArgName)
    if alias is not None:
        check_name(alias, "aliased graph symbol", where)
        if kind != G.GNA_INOUT:
            raise ModelError(f"{form.value}('{ArgName}'): an aliased symbol ('{alias}') needs GNA_INOUT, not "
                             f"{kind.name}", where=where, arg=ArgName,
                             hint="GNA_INOUT with an alias: the output ArgName is aliased to the input "
                             "AliasedArgName; otherwise pass 0")
    return NodeArgDecl(form, ArgName, kind, alias, where=where, **extra)


def _oper(oper, form: NodeArgForm, where: str, name: str) -> str:
    if oper not in BINDING_OPERS:
        raise ModelError(f"{form.value}('{name}'): unknown operator {oper!r}", where=where, arg=name,
                         hint="use one of " + " ".join(BINDING_OPERS))
    return oper


def GNodeArg(Type, ArgName: str, AliasedArgName=0) -> NodeArgDecl:
    """Bind a node argument to graph symbol ``ArgName`` (GNA_IN, GNA_OUT or GNA_INOUT; for
    GNA_INOUT the output ``ArgName`` may be aliased to the input ``AliasedArgName``)."""
    return _node_arg(NodeArgForm.PLAIN, Type, ArgName, AliasedArgName, caller_where())


def GNodeArgImmOper(Type, ArgName: str, AliasedArgName, Oper: str, Value: int) -> NodeArgDecl:
    """``ArgName Oper Value`` (e.g. an offset into a tensor)."""
    where = caller_where()
    oper = _oper(Oper, NodeArgForm.IMM_OPER, where, str(ArgName))
    return _node_arg(NodeArgForm.IMM_OPER, Type, ArgName, AliasedArgName, where, oper=oper,
                     value=int_arg(Value, "GNodeArgImmOper Value", where))


def GNodeArgCArgOper(Type, ArgName: str, AliasedArgName, Oper: str, CArgName: str) -> NodeArgDecl:
    """``ArgName Oper CArgName``, CArgName a graph C argument."""
    where = caller_where()
    oper = _oper(Oper, NodeArgForm.CARG_OPER, where, str(ArgName))
    check_name(CArgName, "graph C argument", where)
    return _node_arg(NodeArgForm.CARG_OPER, Type, ArgName, AliasedArgName, where, oper=oper, carg=CArgName)


def GNodeCArg(ArgName: str) -> NodeArgDecl:
    """Pass graph C argument ``ArgName`` straight through (e.g. a scalar)."""
    where = caller_where()
    check_name(ArgName, "graph C argument", where)
    return NodeArgDecl(NodeArgForm.CARG, ArgName, where=where)


def GArg(ArgName: str) -> NodeArgDecl:
    """A graph symbol passed to a function added with AddCallToNode."""
    where = caller_where()
    check_name(ArgName, "graph symbol", where)
    return NodeArgDecl(NodeArgForm.GARG, ArgName, where=where)


# ----------------------------------------------------------------------------------------------
# Nodes


def _type_check(g: OpenGraph, node: str, b: NodeArgDecl, sym: GraphArgDecl, formal: CArg, where: str) -> None:
    st, ft = parse_ctype(sym.ctype), parse_ctype(formal.ctype)
    why = None
    if st.pointers != ft.pointers:
        why = "a pointer" if st.pointers else "not a pointer"
        why = f"is {why} but C argument '{formal.name}' is '{formal.ctype}'"
    elif st.dtype and ft.dtype and st.dtype != ft.dtype:
        why = f"has '{st.element}' items but C argument '{formal.name}' is '{formal.ctype}'"
    elif st.item_size and ft.item_size and st.item_size != ft.item_size:
        why = f"has {st.item_size}-byte items but C argument '{formal.name}' is '{formal.ctype}'"
    if why:
        raise ModelError(f"graph '{g.name}': node '{node}' binds '{sym.name}' ('{sym.ctype}'), which {why}",
                         where=where, kernel=node, arg=sym.name,
                         hint=f"declare '{sym.name}' with the type of the kernel's C argument, or bind another symbol")


def _symbol(g: OpenGraph, node: str, name: str, where: str) -> GraphArgDecl:
    """The symbol ``name`` (a stacked part has the type of its output)."""
    sym = g.symbols.get(name)
    st = g.stacked_inputs.get(name)
    if sym is None and st is not None:
        out = g.symbols[st.out]
        return GraphArgDecl(out.ctype, name, st.where, S.ARG_SCOPE_LOCAL, D.ARG_DIR_INOUT)
    if sym is None:
        known = [*g.symbols, *g.stacked_inputs]
        raise ModelError(f"graph '{g.name}': node '{node}' binds unknown symbol '{name}'", where=where, kernel=node,
                         arg=name, hint="declare it with TCArgInfo in CreateGraph (arguments or locals)"
                         + suggest(name, known))
    return sym


def _check_oper(g: OpenGraph, node: str, b: NodeArgDecl, sym: GraphArgDecl, target) -> None:
    """A pointer symbol moves by ``+``/``-`` only, and an immediate offset stays inside a constant
    (a local or argument is sized to hold the offset view: :func:`~autotiler.graph.lower.symbol_sizes`)."""
    if b.form not in (NodeArgForm.IMM_OPER, NodeArgForm.CARG_OPER) or parse_ctype(sym.ctype).pointers == 0:
        return
    operand = b.value if b.form == NodeArgForm.IMM_OPER else b.carg
    if b.oper not in ("+", "-"):
        raise ModelError(f"graph '{g.name}': node '{node}': {b.form.value}('{b.symbol}', '{b.oper}', {operand!r}) "
                         f"applies '{b.oper}' to a pointer ({sym.ctype})", where=b.where, kernel=node, arg=b.symbol,
                         hint="a tensor symbol moves by an offset in items: use '+' (or '-')")
    if b.form != NodeArgForm.IMM_OPER:
        return
    offset = b.value if b.oper == "+" else -b.value
    if offset < 0:
        raise ModelError(f"graph '{g.name}': node '{node}': GNodeArgImmOper('{b.symbol}', '{b.oper}', {b.value}) "
                         f"points {-offset} item(s) before the start of '{b.symbol}'", where=b.where, kernel=node,
                         arg=b.symbol, hint="give an offset >= 0 into the tensor")
    item = parse_ctype(sym.ctype).item_size or 1
    size = target[2] if target is not None else None
    if sym.const is not None and size and offset * item + size > sym.const.nbytes:
        raise ModelError(f"graph '{g.name}': node '{node}': GNodeArgImmOper('{b.symbol}', '+', {b.value}) reads "
                         f"bytes {offset * item}..{offset * item + size - 1} of constant '{b.symbol}', which holds "
                         f"{sym.const.nbytes} bytes", where=b.where, kernel=node, arg=b.symbol,
                         hint=f"the offset can be at most {(sym.const.nbytes - size) // item} item(s)")


def _check_indexed_const(model, g: OpenGraph, node: str, callee, formal: CArg, sym: GraphArgDecl, where: str) -> None:
    """A constant a kernel indexes (``C_ArgIndex``) holds every item the kernel reads."""
    use = indexed_argument(model, callee, formal)
    c = sym.const
    if use is not None and use.nbytes > c.nbytes:
        raise ModelError(f"graph '{g.name}': node '{node}' binds constant '{sym.name}' to '{formal.name}', which kernel "
                         f"'{use.kernel}' reads as {use.binding} up to byte {use.nbytes - 1}, but '{c.path}' holds "
                         f"{c.count} item(s) of {c.item_size} byte(s) ({c.nbytes} bytes)", where=where, kernel=node,
                         arg=sym.name, hint=f"the file must hold at least {-(-use.nbytes // c.item_size)} item(s): "
                         "regenerate it or check the kernel's dimensions")


def _check_binding(model, g: OpenGraph, node: str, callee, formal: CArg, b: NodeArgDecl, written: set) -> None:
    where = b.where
    sym = _symbol(g, node, b.symbol, where)
    if b.form == NodeArgForm.GARG:
        raise ModelError(f"graph '{g.name}': node '{node}': GArg('{b.symbol}') binds arguments of AddCallToNode",
                         where=where, kernel=node, arg=b.symbol, hint=f"use GNodeArg(GNA_IN, \"{b.symbol}\", 0)")
    if b.form == NodeArgForm.CARG and not sym.is_param:
        raise ModelError(f"graph '{g.name}': node '{node}': GNodeCArg('{b.symbol}') names a {sym.scope.name} symbol, "
                         "not a graph C argument", where=where, kernel=node, arg=b.symbol,
                         hint=f"bind it with GNodeArg(GNA_IN, \"{b.symbol}\", 0)")
    if b.alias is not None:
        _symbol(g, node, b.alias, where)
    if b.carg is not None:
        c = g.symbols.get(b.carg)
        if c is None or not c.is_param:
            raise ModelError(f"graph '{g.name}': node '{node}': GNodeArgCArgOper names '{b.carg}', which is not a "
                             "graph C argument", where=where, kernel=node, arg=b.symbol,
                             hint="graph C arguments: " + (", ".join(a.name for a in g.args if a.is_param) or "none")
                             + suggest(b.carg, [a.name for a in g.args if a.is_param]))
    if b.writes and sym.read_only:
        raise ModelError(f"graph '{g.name}': node '{node}' binds graph input '{b.symbol}' ({sym.direction.name}) as "
                         f"{b.kind.name}", where=where, kernel=node, arg=b.symbol,
                         hint="a graph input is only read: bind it as GNA_IN, and write the result to a local or an "
                         "output")
    _type_check(g, node, b, sym, formal, where)
    target = bound_argument(model, callee, formal)
    _check_oper(g, node, b, sym, target)
    if target is None and sym.const is not None:
        _check_indexed_const(model, g, node, callee, formal, sym, where)
    if target is not None:
        kernel, arg, size, reads, writes = target
        if b.kind == G.GNA_IN and writes and not reads:
            raise ModelError(f"graph '{g.name}': node '{node}' binds '{b.symbol}' as GNA_IN to '{formal.name}', which "
                             f"kernel '{kernel}' writes (kernel argument '{arg}')", where=where, kernel=node,
                             arg=b.symbol, hint="bind it as GNA_OUT (or GNA_INOUT)")
        if b.kind == G.GNA_OUT and reads and not writes:
            raise ModelError(f"graph '{g.name}': node '{node}' binds '{b.symbol}' as GNA_OUT to '{formal.name}', which "
                             f"kernel '{kernel}' only reads (kernel argument '{arg}')", where=where, kernel=node,
                             arg=b.symbol, hint="bind it as GNA_IN")
        if sym.const is not None and size and b.form == NodeArgForm.PLAIN and sym.const.nbytes != size:
            c = sym.const
            raise ModelError(f"graph '{g.name}': node '{node}' binds constant '{sym.name}' to '{formal.name}' "
                             f"(kernel argument '{arg}' of '{kernel}', {size} bytes) but '{c.path}' holds {c.count} "
                             f"item(s) of {c.item_size} byte(s) ({c.nbytes} bytes)", where=where, kernel=node,
                             arg=sym.name, hint=f"the file must hold {size // c.item_size} item(s): regenerate it or "
                             "check the kernel's dimensions")
    if b.kind == G.GNA_OUT:
        st = g.stacked_inputs.get(b.symbol)
        parts = {b.symbol} | ({st.out} if st else set()) | set(
            next((s.inputs for s in g.stacked if s.out == b.symbol), ()))
        previous = next((n for n in g.nodes if parts & set(n.writes)), None)
        if previous is not None or b.symbol in written:
            by = f"node '{previous.name}' (at {previous.where})" if previous else "this node"
            raise ModelError(f"graph '{g.name}': node '{node}' writes '{b.symbol}', already written by {by}",
                             where=where, kernel=node, arg=b.symbol,
                             hint="each symbol has one producer: write to another local (GNA_INOUT updates a "
                             "symbol in place)")
        written.add(b.symbol)


def AddNode(NodeName: str, BindingList) -> None:
    """Add a call of user kernel (or kernel group) ``NodeName`` to the open graph, after the
    nodes already added; one GNodeArg/GNodeCArg binding per C argument, in order."""
    where = caller_where()
    model = current_model()
    g = _open(f"AddNode('{NodeName}')", where)
    check_name(NodeName, "graph node", where)
    callee = model.kernels.get(NodeName) or model.groups.get(NodeName)
    if callee is None:
        if NodeName in model.group_members:
            hint = f"declare its C template with UserKernelGroup('{NodeName}', CArgs(...), Calls(...))"
        else:
            hint = "declare the user kernel (UserKernel or a generator) before the graph" + suggest(
                NodeName, [*model.kernels, *model.groups])
        raise ModelError(f"graph '{g.name}': node '{NodeName}' is neither a user kernel nor a kernel group",
                         where=where, kernel=NodeName, hint=hint)
    if g.node(NodeName) is not None:
        raise ModelError(f"graph '{g.name}': node '{NodeName}' is already in the graph (at {g.node(NodeName).where})",
                         where=where, kernel=NodeName, hint="a user kernel is one node: declare another user kernel "
                         "for a second use")
    if BindingList in (0, None):
        bindings = ()
    elif isinstance(BindingList, (tuple, list)):
        bindings = tuple(BindingList)
    else:
        raise ModelError(f"graph '{g.name}': node '{NodeName}': the binding list must be Bindings(...), got "
                         f"{describe(BindingList)}", where=where, kernel=NodeName,
                         hint="wrap the bindings: Bindings(GNodeArg(GNA_IN, \"In\", 0), ...)")
    for b in bindings:
        if not isinstance(b, NodeArgDecl):
            raise ModelError(f"graph '{g.name}': node '{NodeName}' is bound with {describe(b)}",
                             where=getattr(b, "where", "") or where, kernel=NodeName,
                             hint="graph nodes bind GNodeArg, GNodeArgImmOper, GNodeArgCArgOper or GNodeCArg")
    what = "kernel group" if isinstance(callee, KernelGroupDecl) else "user kernel"
    if len(bindings) != len(callee.cargs):
        raise ModelError(f"graph '{g.name}': node '{NodeName}' has {len(bindings)} binding(s) but {what} "
                         f"'{NodeName}' takes {len(callee.cargs)} C argument(s)", where=where, kernel=NodeName,
                         hint="bind, in order: " + (", ".join(c.name for c in callee.cargs) or "nothing"))
    written: set = set()
    for b, formal in zip(bindings, callee.cargs):
        _check_binding(model, g, NodeName, callee, formal, b, written)
    # the graph plans where a node's arguments live: L3 homes of its kernels are dropped
    kernels = [c.name for c in callee.calls if c.name in model.kernels] if isinstance(callee, KernelGroupDecl) \
        else [NodeName]
    for k in kernels:
        home_in_l2(model, k, where)
    g.nodes.append(NodeDecl(NodeName, bindings, isinstance(callee, KernelGroupDecl), (), where))


def _check_called_name(g: OpenGraph, node: str, name: str, where: str) -> None:
    """The runner calls ``name``: not a name its parameters or the generated data take there."""
    sym = g.symbols.get(name)
    if sym is not None and sym.is_param:
        raise ModelError(f"AddCallToNode('{node}', ..., '{name}'): '{name}' is graph argument '{name}' (declared at "
                         f"{sym.where}), a parameter of the runner: the call would not reach the function",
                         where=where, kernel=node, hint="rename the graph argument or the function")
    what = global_c_names(current_model()).get(name)
    if what is not None and not what.startswith(("basic kernel", "a function of graph")):
        raise ModelError(f"AddCallToNode('{node}', ..., '{name}'): '{name}' is {what} in the generated code, not a "
                         "function", where=where, kernel=node, hint="call a C function of yours (declared in a header "
                         "of SetUsedFilesNames)")


def AddCallToNode(NodeName: str, Where, FunName: str, FunArgs=0) -> None:
    """Call C function ``FunName`` before (CALL_PROLOG) or after (CALL_EPILOG) graph node
    ``NodeName``, with graph symbols (GArg) or immediates (Imm) as arguments."""
    where = caller_where()
    g = _open("AddCallToNode", where)
    check_name(NodeName, "graph node", where)
    node = g.node(NodeName)
    if node is None:
        raise ModelError(f"graph '{g.name}': AddCallToNode names node '{NodeName}', which is not in the graph",
                         where=where, kernel=NodeName, hint="add the node with AddNode first"
                         + suggest(NodeName, [n.name for n in g.nodes]))
    loc = enum(CallLocationT, Where, "call location (CALL_PROLOG or CALL_EPILOG)", where)
    if loc not in (CallLocationT.CALL_PROLOG, CallLocationT.CALL_EPILOG):
        raise ModelError(f"AddCallToNode('{NodeName}', {loc.name}, ...): the call goes before or after the node",
                         where=where, kernel=NodeName, hint="use CALL_PROLOG (before) or CALL_EPILOG (after)")
    check_name(FunName, "called function", where)
    _check_called_name(g, NodeName, FunName, where)
    args = () if FunArgs in (0, None) else tuple(FunArgs)
    for a in args:
        if isinstance(a, NodeArgDecl) and a.form in (NodeArgForm.GARG, NodeArgForm.CARG):
            _symbol(g, NodeName, a.symbol, a.where or where)
        elif not isinstance(a, ImmBinding):
            raise ModelError(f"AddCallToNode('{NodeName}', ..., '{FunName}'): argument {describe(a)}", where=where,
                             kernel=NodeName, hint="pass graph symbols with GArg(Name) and constants with Imm(Value)")
    g.replace_node(NodeDecl(node.name, node.args, node.group,
                            node.calls + (NodeCallDecl(loc, FunName, args, where),), node.where))


# ----------------------------------------------------------------------------------------------
# Stacked tensors, exported symbols


def _stacked(func: str, OutTensorName: str, Count: int, names: tuple, where: str) -> StackedTensorsDecl:
    check_name(OutTensorName, "stacked output tensor", where)
    count = int_arg(Count, f"{func} Count", where, minimum=1)
    if count != len(names):
        raise ModelError(f"{func}('{OutTensorName}', {count}, ...) announces {count} tensor(s) but {len(names)} "
                         "follow", where=where, arg=OutTensorName, hint=f"pass {len(names)} as the count")
    for n in names:
        check_name(n, "stacked tensor", where)
    check_unique((OutTensorName, *names), "stacked tensor", where)
    return StackedTensorsDecl(OutTensorName, tuple(names), where)


def AT_StackedTensors(OutTensorName: str, Count: int, *names) -> StackedTensorsDecl:
    """``Count`` tensors ``names`` stacked, in order, into ``OutTensorName``."""
    return _stacked("AT_StackedTensors", OutTensorName, Count, names, caller_where())


def AT_StackedTensorsList(Count: int, *lists) -> tuple:
    """A list of ``Count`` AT_StackedTensors(...)."""
    where = caller_where()
    if int_arg(Count, "AT_StackedTensorsList Count", where, minimum=0) != len(lists) or not all(
            isinstance(s, StackedTensorsDecl) for s in lists):
        raise ModelError(f"AT_StackedTensorsList({Count}, ...) needs {Count} AT_StackedTensors(...)", where=where,
                         hint=f"pass {len(lists)} as the count, and AT_StackedTensors(...) items")
    return tuple(lists)


def AddStackedTensors(OutTensorName: str, Count: int, *names) -> None:
    """In the open graph, ``names`` become aliases of consecutive parts of ``OutTensorName``
    (a declared output or local): nodes writing them assemble it without copies."""
    where = caller_where()
    g = _open("AddStackedTensors", where)
    st = _stacked("AddStackedTensors", OutTensorName, Count, names, where)
    out = g.symbols.get(OutTensorName)
    if out is None or out.read_only:
        raise ModelError(f"graph '{g.name}': stacked output '{OutTensorName}' is "
                         + ("not a graph symbol" if out is None else f"a graph input ({out.direction.name})"),
                         where=where, arg=OutTensorName,
                         hint="declare it as a local or an output with TCArgInfo" + suggest(OutTensorName, g.symbols))
    taken = {**g.symbols, **g.stacked_inputs}
    for n in names:
        if n in taken:
            raise ModelError(f"graph '{g.name}': stacked tensor '{n}' is also a graph symbol or another stacked "
                             "tensor", where=where, arg=n, hint="the parts of a stacked tensor are names of their "
                             "own: do not declare them with TCArgInfo")
    if any(OutTensorName in n.writes for n in g.nodes):
        raise ModelError(f"graph '{g.name}': AddStackedTensors('{OutTensorName}', ...) after a node wrote it",
                         where=where, arg=OutTensorName, hint="declare stacked tensors before the nodes")
    g.stacked.append(st)


def AddGraphArgExportSymbols(GraphCArgName: str, ExportAddrName: str, ExportLocName: str) -> None:
    """Export the address (``ExportAddrName``, unsigned int) and the memory (``ExportLocName``,
    int) where global graph symbol ``GraphCArgName`` is allocated."""
    where = caller_where()
    g = _open("AddGraphArgExportSymbols", where)
    check_name(GraphCArgName, "graph symbol", where)
    sym = g.symbols.get(GraphCArgName)
    if sym is None or sym.scope != S.ARG_SCOPE_GLOBAL:
        raise ModelError(f"graph '{g.name}': AddGraphArgExportSymbols names '{GraphCArgName}', which is "
                         + ("not a graph symbol" if sym is None else f"{sym.scope.name}, not ARG_SCOPE_GLOBAL"),
                         where=where, arg=GraphCArgName,
                         hint="only global graph symbols (ARG_SCOPE_GLOBAL) are allocated by the graph at a fixed place"
                         + suggest(GraphCArgName, [a.name for a in g.args if a.scope == S.ARG_SCOPE_GLOBAL]))
    for n in (ExportAddrName, ExportLocName):
        check_name(n, "exported symbol", where)
        check_not_reserved(n, "exported symbol", where)
    taken = {**{a.name: "a graph symbol" for a in (*g.args, *g.locals)},
             **{n: "an exported symbol" for e in g.exports for n in (e.addr_name, e.loc_name)}}
    for n in (ExportAddrName, ExportLocName):
        if n in taken or ExportAddrName == ExportLocName:
            raise ModelError(f"graph '{g.name}': exported symbol '{n}' is "
                             + (taken.get(n) or "given twice"), where=where, arg=GraphCArgName,
                             hint="give each exported symbol its own name")
    g.exports.append(ExportDecl(GraphCArgName, ExportAddrName, ExportLocName, where))


__all__ = [
    "ConstInfo", "TCArgInfo", "TCArgInfoA", "CreateGraph", "AddGraphCArg", "AddGraphLocal", "CommitGraphArgsAndLocals",
    "CloseGraph", "CNNGraphName", "GNodeArg", "GNodeArgImmOper", "GNodeArgCArgOper", "GNodeCArg", "GArg", "AddNode",
    "AddCallToNode", "AT_StackedTensors", "AT_StackedTensorsList", "AddStackedTensors", "AddGraphArgExportSymbols",
]
