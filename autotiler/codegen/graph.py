"""A closed graph as C: the render model of its constructor, destructor, runner and memory query,
computed from the graph's memory plan (:func:`autotiler.graph.lower.plan_graph`); the templates
``graph.c.j2`` / ``graph.h.j2`` only loop and print.

What this slice generates (the guide's non-warm, non-reentrant form, against the original's
runtime macros): ``<G>_Construct()`` opens the flash image of the constants (error 1), allocates
the static L2 area (promoted constants), the dynamic L2 area (activations and constants fetched
at each run) and the L1 area of the user kernels (errors 3, 3, 4), then copies every promoted
constant from flash to static L2; ``<G>_Destruct()`` frees in reverse and closes the flash;
``<G>(args)`` calls the nodes in order, each argument replaced by its address, with each
prefetched constant's copy issued after the node the plan says and waited right before its first
user; ``<G>_Memory(Which)`` returns the sizes. What it does not do yet is refused with a
ModelError naming the line (see :func:`check_supported`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional

from ..constants import ArgDirection_T, ArgScope_T, AT_MemLocation_T, CallLocationT
from ..errors import ModelError
from ..graph.lower import GraphPlan, bound_argument, plan_graph
from ..model.graph import GraphDecl, NodeArgForm
from ..model.ir import ImmBinding

M = AT_MemLocation_T
S = ArgScope_T


@dataclass(frozen=True)
class FlashDevice:
    """A flash file system as generated code names it: ``AT_<family>_*`` macros on ``symbol``."""

    family: str        # e.g. HYPERFLASH_FS
    symbol: str        # the static AT_<family>_T the constructor opens
    location: M        # AT_MEM_L3_* given to CONF_INIT
    file: str          # the flash image, written next to the generated C


FLASH_DEVICES = {
    M.AT_MEM_L3_HFLASH: ("HYPERFLASH_FS", "HyperFlash"),
    M.AT_MEM_L3_QSPIFLASH: ("QSPIFLASH_FS", "QspiFlash"),
    M.AT_MEM_L3_OSPIFLASH: ("OSPIFLASH_FS", "OspiFlash"),
    M.AT_MEM_L3_MRAMFLASH: ("EMRAMFLASH_FS", "EmramFlash"),
    M.AT_MEM_L3_DEFAULTFLASH: ("DEFAULTFLASH_FS", "DefaultFlash"),
}
L3_RAMS = (M.AT_MEM_L3_HRAM, M.AT_MEM_L3_QSPIRAM, M.AT_MEM_L3_OSPIRAM, M.AT_MEM_L3_DEFAULTRAM)
# The original's AT_MEM_TYPE, in order (G_Memory's argument).
MEMORY_KINDS = ("AT_L1_MEM", "AT_L2_MEM", "AT_L2_DYN_MEM", "AT_L3_MEM", "AT_L3_DYN_MEM")


@dataclass
class RenderGraph:
    name: str
    comment: list
    l2: str                   # static L2 area (promoted constants)
    l2_dyn: str               # dynamic L2 area (activations, prefetched constants)
    flash: Optional[FlashDevice]
    params: list              # the runner's parameters
    construct: list           # body lines (one tab of indent added by the template)
    destruct: list
    runner: list
    memory: list              # ("AT_L1_MEM:" padded, bytes, comment)
    sizes: dict = field(default_factory=dict)


# ----------------------------------------------------------------------------------------------
# What this slice does not generate yet


def _refuse(graph: GraphDecl, what: str, where: Optional[str] = None, hint: str = "") -> None:
    raise ModelError(f"graph '{graph.name}': {what} is not supported yet", where=where or graph.where,
                     hint=hint or "remove it; graph code generation supports the guide's plain form for now")


def _check_options(graph: GraphDecl) -> None:
    o = graph.options
    if o.warm_construct:
        _refuse(graph, "a warm constructor (AT_GRAPH_WARM_CONSTRUCT)")
    if o.runner_re_entrant:
        _refuse(graph, "a re-entrant runner (AT_GRAPH_RUNNER_RE_ENTRANT)")
    acting = ("noinline_node", "pref_l3_exec", "l2_static_memory_budget", "reorder_constant_in", "trace_exec",
              "pref_l3_home")
    defaults = type(o)()
    for name in o.__dataclass_fields__:
        if name not in acting and getattr(o, name) != getattr(defaults, name):
            _refuse(graph, f"graph option '{name}'")


def _check_symbols(graph: GraphDecl) -> None:
    for s in (*graph.args, *graph.locals):
        if s.scope == S.ARG_SCOPE_ARG_ALLOC:
            _refuse(graph, f"symbol '{s.name}' with ARG_SCOPE_ARG_ALLOC", s.where, "use ARG_SCOPE_ARG")
        if s.scope == S.ARG_SCOPE_GLOBAL and s.const is None:
            _refuse(graph, f"global symbol '{s.name}' that is not a constant", s.where,
                    "declare it as a local (ARG_SCOPE_LOCAL) or a graph argument")
        if s.user_allocated and not s.is_param:
            _refuse(graph, f"application-allocated symbol '{s.name}' (TCArgInfoA)", s.where, "use TCArgInfo")
        if s.home in L3_RAMS or s.exec_loc in L3_RAMS:
            _refuse(graph, f"symbol '{s.name}' in L3 RAM (activations or constants in L3)", s.where,
                    "home it in L2 (AT_MEM_L2) or, for a constant, in flash")
        if s.const is not None and s.home in (M.AT_MEM_L3_PRI1, M.AT_MEM_L3_PRI2):
            _refuse(graph, f"constant '{s.name}' in a prioritised flash ({s.home.name})", s.where,
                    "home it in AT_MEM_L3_HFLASH (or another flash)")
    if graph.exports:
        _refuse(graph, "AddGraphArgExportSymbols", graph.exports[0].where)


def check_supported(model, graph: GraphDecl) -> None:
    """ModelError for what this slice does not generate (options, scopes, L3 homes, several
    graphs, kernels staging L3 arguments)."""
    if len(model.graphs) > 1:
        _refuse(graph, "more than one graph in a model (they would share the memory symbols)")
    if any(a.l3 for t in model.tilings.values() for a in t.args):
        _refuse(graph, "a graph whose model has user kernels with arguments in L3 (the L2 staging area is not "
                "part of the graph's memory yet)")
    _check_options(graph)
    _check_symbols(graph)


# ----------------------------------------------------------------------------------------------
# Names


def flash_device(model, graph: GraphDecl) -> Optional[FlashDevice]:
    """The flash holding the graph's constants (their home, else AT_GRAPH_PREF_L3_HOME), with
    the image's file name (SetMemoryDeviceInfos' ConstFileName, else ``<G>_L3_Flash_Const.dat``)."""
    if not graph.constants:
        return None
    homes = {c.home if c.home in FLASH_DEVICES else graph.options.pref_l3_home for c in graph.constants}
    if len(homes) > 1:
        _refuse(graph, "constants in two flashes (" + ", ".join(sorted(h.name for h in homes)) + ")")
    loc = homes.pop()
    if loc not in FLASH_DEVICES:
        _refuse(graph, f"constants homed in {loc.name}")
    family, symbol = FLASH_DEVICES[loc]
    info = model.memory_devices.get(loc)
    given = info[2] if info and info[2] not in (0, "0", None, "") else None
    return FlashDevice(family, symbol, loc, os.path.basename(given) if given else f"{graph.name}_L3_Flash_Const.dat")


def _addr(plan: GraphPlan, names: dict, graph: GraphDecl, symbol: str, typed: bool = True) -> str:
    """C expression of a symbol's address: its own C type when ``typed``, else the bare
    ``(<area> + <offset>)`` (a char pointer) for the caller to cast."""
    sp = plan.symbol(symbol)
    if sp.area == "arg":
        return symbol
    area = names["l2"] if sp.area == "static" else names["l2_dyn"]
    sym = graph.symbol(symbol) or _stacked_parent(graph, symbol)
    return f"({sym.ctype}) ({area} + {sp.offset})" if typed else f"({area} + {sp.offset})"


def _stacked_parent(graph: GraphDecl, child: str):
    return graph.symbol(next(st.out for st in graph.stacked if child in st.inputs))


def _fetch_point(start: int) -> str:
    return "before node 0" if start < 0 else f"after node {start}"


def _where(sp) -> str:
    return {"arg": "argument", "dyn": "dynamic L2", "static": "promoted constant, static L2",
            "flash": "constant fetched from flash, dynamic L2"}[sp.area]


# ----------------------------------------------------------------------------------------------
# Bodies


def _flash_copy(dev: FlashDevice, side: str, sp, area: str, where: str, event: str, verb: str) -> list:
    """A flash -> L2 copy of constant ``sp`` into ``area`` at its offset (``where`` names the area)."""
    f = dev.family
    return [f"/* {verb}, size {sp.size} from {dev.symbol} at {sp.flash_offset} to (size {sp.size}) {where} at "
            f"{sp.offset}..{sp.offset + sp.size - 1} */",
            f"AT_{f}_{side}_COPY(&{dev.symbol}, ((AT_{f}_EXT_ADDR_TYPE) 0 + {sp.flash_offset}), "
            f"((AT_{f}_INT_ADDR_TYPE) {area} + {sp.offset}), {sp.size}, 0, {event});"]


def _construct(plan: GraphPlan, names: dict, dev: Optional[FlashDevice], sizes: dict) -> list:
    promoted = sorted((s for s in plan.symbols if s.area == "static"), key=lambda s: s.offset)
    lines = []
    if dev:
        f = dev.family
        lines += [f"AT_{f}_CONF_T {dev.symbol}Conf;", "int Error;"]
        if promoted:
            lines.append(f"AT_{f}_FC_EVENT _UchanHF1, *UchanHF1 = &_UchanHF1;")
        lines += ["", f"/* Open the flash image of the constants ({plan.flash.total} bytes) */",
                  f"AT_{f}_CONF_INIT(&{dev.symbol}Conf, {int(dev.location)} /* {dev.location.name} */, 0);",
                  f"AT_{f}_OPEN(&{dev.symbol}, &{dev.symbol}Conf, \"{dev.file}\", &Error);",
                  "if (Error) return 1;"]
    for sym, size, what, level, code in _areas(names, sizes):
        lines += [f"/* {what} */", f"{sym} = (AT_{level}_POINTER) AT_{level}_ALLOC(0, {size});",
                  f"if ({sym} == 0) return {code};"]
    for s in promoted:
        lines += _flash_copy(dev, "FC", s, names["l2"], "L2", "UchanHF1", f"Moving {s.name}")
        lines.append(f"AT_{dev.family}_FC_WAIT(&{dev.symbol}, UchanHF1);")
    return lines + ["return 0;"]


def _areas(names: dict, sizes: dict) -> list:
    """(symbol, bytes, comment, level, error code) of each area the constructor allocates."""
    out = [(names["l2"], sizes["L2"], "Static L2: the constants promoted at construction", "L2", 3),
           (names["l2_dyn"], sizes["L2_DYN"], "Dynamic L2: activations and the constants fetched at each run", "L2",
            3),
           (names["l1"], sizes["L1"], "L1: the tiles of every user kernel", "L1", 4)]
    return [a for a in out if a[1] > 0]


def _destruct(names: dict, dev: Optional[FlashDevice], sizes: dict) -> list:
    lines = [f"AT_{level}_FREE(0, {sym}, {size});" for sym, size, _, level, _ in reversed(_areas(names, sizes))]
    if dev:
        lines.append(f"AT_{dev.family}_CLOSE(&{dev.symbol});")
    return lines + ["return 0;"]


def _node_value(model, plan: GraphPlan, names: dict, graph: GraphDecl, b, formal) -> str:
    if b.form == NodeArgForm.CARG:
        return f"(({formal.ctype}) {b.symbol})"
    base = _addr(plan, names, graph, b.symbol)
    if b.form == NodeArgForm.IMM_OPER:
        return f"(({formal.ctype}) (({base}) {b.oper} ({b.value})))"
    if b.form == NodeArgForm.CARG_OPER:
        return f"(({formal.ctype}) (({base}) {b.oper} ({b.carg})))"
    return f"(({formal.ctype}) {_addr(plan, names, graph, b.symbol, typed=False)})"


def _call_args(plan: GraphPlan, names: dict, graph: GraphDecl, args: tuple) -> str:
    out = []
    for a in args:
        if isinstance(a, ImmBinding):
            out.append(str(a.value))
        elif a.form == NodeArgForm.CARG or plan.symbol(a.symbol).area == "arg":
            out.append(a.symbol)
        else:
            out.append(f"({_addr(plan, names, graph, a.symbol)})")
    return ", ".join(out)


def _node(model, plan: GraphPlan, names: dict, graph: GraphDecl, index: int) -> list:
    node = graph.nodes[index]
    callee = model.kernels.get(node.name) or model.groups.get(node.name)
    kind = "kernel group" if node.name in model.groups else "user kernel"
    lines = [f"/* Node {index}: {kind} {node.name} */"]
    calls = {loc: [c for c in node.calls if c.location == loc] for loc in (CallLocationT.CALL_PROLOG,
                                                                           CallLocationT.CALL_EPILOG)}
    lines += [f"{c.function}({_call_args(plan, names, graph, c.args)}); /* prolog */"
              for c in calls[CallLocationT.CALL_PROLOG]]
    args = []
    for i, (b, formal) in enumerate(zip(node.args, callee.cargs)):
        sep = "," if i < len(callee.cargs) - 1 else ""
        what = b.symbol if b.form == NodeArgForm.CARG else f"{b.symbol}, {_where(plan.symbol(b.symbol))}"
        args.append(f"\t{_node_value(model, plan, names, graph, b, formal)}{sep} /* {formal.name}: {what} */")
    lines += [f"{node.name}("] + args + [");"] if args else [f"{node.name}();"]
    lines += [f"{c.function}({_call_args(plan, names, graph, c.args)}); /* epilog */"
              for c in calls[CallLocationT.CALL_EPILOG]]
    return lines


def _runner(model, plan: GraphPlan, names: dict, graph: GraphDecl, dev: Optional[FlashDevice]) -> list:
    fetched = sorted((s for s in plan.symbols if s.area == "flash"), key=lambda s: (s.first, s.name))
    event = {s.name: f"UchanHF{i}" for i, s in enumerate(fetched)}
    lines = [f"AT_{dev.family}_CL_EVENT _{e}, *{e} = &_{e};" for e in event.values()]
    if fetched:
        lines.append("")
    for i in range(-1, len(graph.nodes)):
        if i >= 0:
            for s in fetched:
                if s.first == i:
                    lines += [f"/* Waiting completion of transfer of {s.name} */",
                              f"AT_{dev.family}_CL_WAIT(&{dev.symbol}, {event[s.name]});"]
            lines += _node(model, plan, names, graph, i)
        for s in fetched:
            if s.prefetch_start == i:
                lines += _flash_copy(dev, "CL", s, names["l2_dyn"], "dynamic L2", event[s.name],
                                     f"Prefetching {s.name} (first used by node {s.first})")
    return lines + ["return 0;"]


# ----------------------------------------------------------------------------------------------


def graph_names(model) -> dict:
    """C names of the graph's areas: the L1 symbol of the user kernels, the L2 base name and its
    dynamic twin (``<L2>_Dyn``)."""
    return {"l1": model.symbols.l1, "l2": model.symbols.l2, "l2_dyn": model.symbols.l2 + "_Dyn"}


def render_graph(model, graph: GraphDecl, l1_size: int) -> tuple[RenderGraph, GraphPlan]:
    """The render model of a closed graph, and its plan."""
    check_supported(model, graph)
    dev = flash_device(model, graph)
    plan = plan_graph(model, graph, model.l2_budget)
    names = graph_names(model)
    sizes = {"L1": l1_size, "L2": plan.static_bytes, "L2_DYN": plan.dyn.peak, "L3": 0, "L3_DYN": 0}
    params = [f"{a.ctype} {a.name}" for a in graph.args if a.is_param]
    comment = [f"Graph {graph.name}: {len(graph.nodes)} node(s); static L2 {plan.static_bytes} B "
               f"({sum(s.area == 'static' for s in plan.symbols)} promoted constant(s)), dynamic L2 {plan.dyn.peak} B "
               f"(lower bound {plan.dyn.lower_bound} B), L1 {l1_size} B; flash image {plan.flash.total} B"
               + (f" ({dev.file})" if dev else "") + "."]
    comment += [f"  {s.name:<10} {s.size:>6} B  {_where(s)}" + ("" if s.offset is None else f" @{s.offset}")
                + ("" if s.flash_offset is None else f", flash @{s.flash_offset}")
                + (f", fetched {_fetch_point(s.prefetch_start)}" if s.area == "flash" else "")
                + f", nodes {s.first}..{s.last}" for s in plan.symbols]
    what = ("L1 Memory", "L2 Memory, permanent", "L2 Memory, dynamic", "L3 Memory, permanent", "L3 Memory, dynamic")
    memory = [(f"{kind}:".ljust(15), sizes[key], w)
              for kind, key, w in zip(MEMORY_KINDS, ("L1", "L2", "L2_DYN", "L3", "L3_DYN"), what)]
    render = RenderGraph(graph.name, comment, names["l2"], names["l2_dyn"], dev, params,
                         _construct(plan, names, dev, sizes), _destruct(names, dev, sizes),
                         _runner(model, plan, names, graph, dev), memory, sizes)
    return render, plan


# ----------------------------------------------------------------------------------------------
# Manifest


def graph_args_json(model, graph: GraphDecl, specs: dict, arg_json, default_spec) -> list:
    """The runner's parameters for the harness, with the fields of kernel arguments: shape and
    items from the kernel argument each is bound to (``default_spec(ctype)`` when none), direction
    from the graph's declaration."""
    out = []
    for a in (a for a in graph.args if a.is_param):
        spec = _bound_spec(model, graph, a.name, specs) or default_spec(a.ctype)
        data = arg_json(a, spec)
        if a.is_pointer:
            data["direction"] = _DIRECTIONS.get(a.direction)
        out.append(data)
    return out


_DIRECTIONS = {ArgDirection_T.ARG_DIR_IN: "in", ArgDirection_T.ARG_DIR_CONSTIN: "in", ArgDirection_T.ARG_DIR_OUT: "out",
               ArgDirection_T.ARG_DIR_INOUT: "inout"}


def _bound_spec(model, graph: GraphDecl, name: str, specs: dict):
    """The ArgSpec of the largest kernel argument ``name`` is bound to whole (GNodeArg), or None."""
    best = None
    for node in graph.nodes:
        callee = model.kernels.get(node.name) or model.groups.get(node.name)
        for b, formal in zip(node.args, callee.cargs):
            if b.symbol == name and b.form == NodeArgForm.PLAIN and bound_argument(model, callee, formal):
                spec = specs[node.name][formal.name]
                if best is None or (spec.nbytes or 0) > (best.nbytes or 0):
                    best = spec
    return best


def graph_json(render: RenderGraph, args: list) -> dict:
    return {"name": render.name, "construct": f"{render.name}_Construct", "destruct": f"{render.name}_Destruct",
            "memory": f"{render.name}_Memory", "args": args, "sizes": dict(render.sizes),
            "flash": ({"family": render.flash.family, "symbol": render.flash.symbol, "file": render.flash.file}
                      if render.flash else None)}


__all__ = ["FlashDevice", "FLASH_DEVICES", "MEMORY_KINDS", "RenderGraph", "check_supported", "flash_device",
           "graph_names", "render_graph", "graph_args_json", "graph_json"]
