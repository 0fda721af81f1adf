"""A closed graph as C: the render model of its constructor, destructor, runner and memory query,
computed from the graph's memory plan (:func:`autotiler.graph.lower.plan_graph`); the templates
``graph.c.j2`` / ``graph.h.j2`` only loop and print.

What this slice generates (the guide's non-reentrant form, against the original's runtime
macros; AT_GRAPH_WARM_CONSTRUCT changes the constructor's and destructor's parameters and guards
as the guide's WARM_L1 / WARM_L2_DYN_L1 / WARM_ALL show, and adds WARM_ALL's ``_L1_Memory`` to
the runner; see docs/graph.md "Warm construct modes"): ``<G>_Construct()`` opens the flash image of the constants (error 1), allocates
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

from ..constants import (
    WARM_ALL,
    WARM_DISABLED,
    WARM_L1,
    WARM_L2_DYN_L1,
    ArgDirection_T,
    ArgScope_T,
    AT_MemLocation_T,
    CallLocationT,
)
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
    warm: int = WARM_DISABLED     # AT_GRAPH_WARM_CONSTRUCT
    construct_params: list = field(default_factory=list)   # empty: (void)
    destruct_params: list = field(default_factory=list)
    construct_doc: str = ("Opens the constants' flash image (error 1), allocates L2 (error 3) and L1 (error 4), "
                          "copies the\n * promoted constants into static L2.")
    destruct_doc: str = "Frees what {g}_Construct allocated, in reverse, and closes the flash."


# ----------------------------------------------------------------------------------------------
# What this slice does not generate yet


def _refuse(graph: GraphDecl, what: str, where: Optional[str] = None, hint: str = "") -> None:
    raise ModelError(f"graph '{graph.name}': {what} is not supported yet", where=where or graph.where,
                     hint=hint or "remove it; graph code generation supports the guide's plain form for now")


def _check_options(graph: GraphDecl) -> None:
    o = graph.options
    if o.runner_re_entrant:
        _refuse(graph, "a re-entrant runner (AT_GRAPH_RUNNER_RE_ENTRANT)")
    if o.warm_construct == WARM_ALL and graph.symbol("_L1_Memory") is not None:
        _refuse(graph, "a graph symbol named '_L1_Memory' with WARM_ALL (the runner's L1 parameter)",
                hint="rename the symbol")
    acting = ("noinline_node", "pref_l3_exec", "l2_static_memory_budget", "reorder_constant_in", "trace_exec",
              "pref_l3_home", "warm_construct")
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


def _open_flash(plan: GraphPlan, dev: FlashDevice, event: bool) -> list:
    f = dev.family
    lines = [f"AT_{f}_CONF_T {dev.symbol}Conf;", "int Error;"]
    if event:
        lines.append(f"AT_{f}_FC_EVENT _UchanHF1, *UchanHF1 = &_UchanHF1;")
    return lines + ["", f"/* Open the flash image of the constants ({plan.flash.total} bytes) */",
                    f"AT_{f}_CONF_INIT(&{dev.symbol}Conf, {int(dev.location)} /* {dev.location.name} */, 0);",
                    f"AT_{f}_OPEN(&{dev.symbol}, &{dev.symbol}Conf, \"{dev.file}\", &Error);",
                    "if (Error) return 1;"]


def _alloc(area: tuple) -> list:
    sym, size, what, level, code = area
    return [f"/* {what} */", f"{sym} = (AT_{level}_POINTER) AT_{level}_ALLOC(0, {size});",
            f"if ({sym} == 0) return {code};"]


def _promote(plan: GraphPlan, names: dict, dev: Optional[FlashDevice]) -> list:
    lines = []
    for s in sorted((s for s in plan.symbols if s.area == "static"), key=lambda s: s.offset):
        lines += _flash_copy(dev, "FC", s, names["l2"], "L2", "UchanHF1", f"Moving {s.name}")
        lines.append(f"AT_{dev.family}_FC_WAIT(&{dev.symbol}, UchanHF1);")
    return lines


def _block(cond: str, body: list) -> list:
    """``if (cond) { body }`` (nothing when the body is empty)."""
    return [f"if ({cond}) {{", *(("\t" + b) if b else "" for b in body), "}"] if body else []


def _unused(params: list, used: set) -> list:
    """``(void)P;`` for the parameters the body does not read (-Wunused-parameter)."""
    return [f"(void){p}; /* nothing to do for it in this graph */" for p in params if p not in used]


# WARM_ALL's parameters (the guide's), in order.
WARM_ALL_CONSTRUCT = ("DoL1Alloc", "DoL2Alloc", "DoL2DynAlloc", "DoL3Init", "DoL3Alloc", "DoPromotion")
WARM_ALL_DESTRUCT = ("DoL1Dealloc", "DoL2Dealloc", "DoL2DynDealloc", "DoL3Dealloc", "DoL3DeInit")


def _construct(plan: GraphPlan, names: dict, dev: Optional[FlashDevice], sizes: dict, warm: int = WARM_DISABLED) \
        -> list:
    promote = _promote(plan, names, dev)
    areas = {a[0]: a for a in _areas(names, sizes)}
    l1, l2, dyn = (areas.get(names[k]) for k in ("l1", "l2", "l2_dyn"))
    if warm == WARM_ALL:
        body, used = [], set()
        for param, lines in (("DoL3Init", _open_flash(plan, dev, False) if dev else []),
                             ("DoL2Alloc", _alloc(l2) if l2 else []), ("DoL2DynAlloc", _alloc(dyn) if dyn else []),
                             ("DoL1Alloc", _alloc(l1) if l1 else []), ("DoL3Alloc", []),
                             ("DoPromotion", ([f"AT_{dev.family}_FC_EVENT _UchanHF1, *UchanHF1 = &_UchanHF1;"]
                                              + promote) if promote else [])):
            if lines:
                body += _block(param, lines)
                used.add(param)
        return _unused(list(WARM_ALL_CONSTRUCT), used) + body + ["return 0;"]
    lines = []
    if warm in (WARM_L1, WARM_L2_DYN_L1):
        warm_body = _alloc(l1) if l1 else []
        if warm == WARM_L2_DYN_L1:
            warm_body += _block("Warm==2", _alloc(dyn) if dyn else [])
        lines += _block("Warm", warm_body + ["return 0;"])
    if dev:
        lines += _open_flash(plan, dev, bool(promote))
    if warm == WARM_L1 and (l2 or dyn):
        # WARM_L1: one L2 allocation for the static and the dynamic areas, the dynamic one after
        whole = sizes["L2"] + sizes["L2_DYN"]
        lines += _alloc((names["l2"], whole, f"L2: static ({sizes['L2']} bytes, the constants promoted at "
                         f"construction) then dynamic ({sizes['L2_DYN']} bytes)", "L2", 3))
        lines.append(f"{names['l2_dyn']} = {names['l2']} + {sizes['L2']};")
        lines += _alloc(l1) if l1 else []
    else:
        for area in areas.values():
            lines += _alloc(area)
    return lines + promote + ["return 0;"]


def _areas(names: dict, sizes: dict) -> list:
    """(symbol, bytes, comment, level, error code) of each area the constructor allocates."""
    out = [(names["l2"], sizes["L2"], "Static L2: the constants promoted at construction", "L2", 3),
           (names["l2_dyn"], sizes["L2_DYN"], "Dynamic L2: activations and the constants fetched at each run", "L2",
            3),
           (names["l1"], sizes["L1"], "L1: the tiles of every user kernel", "L1", 4)]
    return [a for a in out if a[1] > 0]


def _free(area: tuple) -> str:
    sym, size, _, level, _ = area
    return f"AT_{level}_FREE(0, {sym}, {size});"


def _destruct(names: dict, dev: Optional[FlashDevice], sizes: dict, warm: int = WARM_DISABLED) -> list:
    areas = {a[0]: a for a in _areas(names, sizes)}
    l1, l2, dyn = (areas.get(names[k]) for k in ("l1", "l2", "l2_dyn"))
    close = [f"AT_{dev.family}_CLOSE(&{dev.symbol});"] if dev else []
    if warm == WARM_ALL:
        body, used = [], set()
        for param, lines in (("DoL2Dealloc", [_free(l2)] if l2 else []), ("DoL2DynDealloc", [_free(dyn)] if dyn else []),
                             ("DoL1Dealloc", [_free(l1)] if l1 else []), ("DoL3Dealloc", []), ("DoL3DeInit", close)):
            if lines:
                body += _block(param, lines)
                used.add(param)
        return _unused(list(WARM_ALL_DESTRUCT), used) + body + ["return 0;"]
    lines = []
    if warm in (WARM_L1, WARM_L2_DYN_L1):
        warm_body = [_free(l1)] if l1 else []
        if warm == WARM_L2_DYN_L1:
            warm_body += _block("Warm==2", [_free(dyn)] if dyn else [])
        lines += _block("Warm", warm_body + ["return 0;"])
    if warm == WARM_L1 and (l2 or dyn):
        whole = (names["l2"], sizes["L2"] + sizes["L2_DYN"], "", "L2", 3)
        lines += ([_free(l1)] if l1 else []) + [_free(whole)]
    else:
        lines += [_free(a) for a in reversed(list(areas.values()))]
    return lines + close + ["return 0;"]


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
    args, restricted = [], []
    for i, (b, formal) in enumerate(zip(node.args, callee.cargs)):
        sep = "," if i < len(callee.cargs) - 1 else ""
        what = b.symbol if b.form == NodeArgForm.CARG else f"{b.symbol}, {_where(plan.symbol(b.symbol))}"
        value = _node_value(model, plan, names, graph, b, formal)
        restricted += [value] if "restrict" in formal.ctype else []
        args.append(f"\t{value}{sep} /* {formal.name}: {what} */")
    call = [f"{node.name}("] + args + [");"] if args else [f"{node.name}();"]
    if len(set(restricted)) < len(restricted):
        # One address given to two restrict-qualified parameters (K(X, X, Out), an INOUT alias
        # updated in place): gcc's -Wrestrict (-Wall) flags the call, but a generated user kernel
        # only hands its arguments to DMA transfers, never dereferences them, so nothing relies
        # on the pointers not aliasing.
        call = ["#pragma GCC diagnostic push", '#pragma GCC diagnostic ignored "-Wrestrict"', *call,
                "#pragma GCC diagnostic pop"]
    lines += call
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
    if graph.options.warm_construct == WARM_ALL:
        # the application may give the runner its own L1 (NULL: the constructor's)
        l1 = names["l1"]
        lines = [f"if (_L1_Memory) {l1} = (AT_L1_POINTER) _L1_Memory;"] + lines + [f"if (_L1_Memory) {l1} = 0;"]
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
    warm = graph.options.warm_construct
    params = [f"{a.ctype} {a.name}" for a in graph.args if a.is_param]
    if warm == WARM_ALL:
        params.append("void * _L1_Memory")
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
                         _construct(plan, names, dev, sizes, warm), _destruct(names, dev, sizes, warm),
                         _runner(model, plan, names, graph, dev), memory, sizes, warm, **_warm_render(warm))
    return render, plan


def _warm_render(warm: int) -> dict:
    """The constructor's and destructor's parameters and comments under AT_GRAPH_WARM_CONSTRUCT."""
    if warm == WARM_DISABLED:
        return {}
    if warm == WARM_ALL:
        return {"construct_params": [f"int {p}" for p in WARM_ALL_CONSTRUCT],
                "destruct_params": [f"int {p}" for p in WARM_ALL_DESTRUCT],
                "construct_doc": "WARM_ALL: opens the constants' flash image if DoL3Init (error 1), allocates static L2 "
                                 "if DoL2Alloc and\n * dynamic L2 if DoL2DynAlloc (error 3), L1 if DoL1Alloc (error 4), "
                                 "copies the promoted constants into\n * static L2 if DoPromotion (DoL3Alloc: no L3 "
                                 "area in this graph).",
                "destruct_doc": "WARM_ALL: frees static L2 if DoL2Dealloc, dynamic L2 if DoL2DynDealloc, L1 if "
                                "DoL1Dealloc, closes the\n * flash if DoL3DeInit (DoL3Dealloc: no L3 area in this "
                                "graph)."}
    what = "L1 only" if warm == WARM_L1 else "L1 only (Warm == 2: and dynamic L2)"
    whole = " (static and dynamic L2 in one area)" if warm == WARM_L1 else ""
    return {"construct_params": ["int Warm"], "destruct_params": ["int Warm"],
            "construct_doc": f"{WARM_NAMES[warm]}: Warm != 0 allocates {what} (error 3, 4);\n * Warm == 0 opens "
                             f"the constants' flash image (error 1), allocates L2{whole} (error 3) and L1\n * "
                             "(error 4), copies the promoted constants into static L2.",
            "destruct_doc": f"{WARM_NAMES[warm]}: Warm != 0 frees {what};\n * Warm == 0 frees everything "
                            "{g}_Construct(0) allocated and closes the flash."}


WARM_NAMES = {WARM_DISABLED: "WARM_DISABLED", WARM_L1: "WARM_L1", WARM_L2_DYN_L1: "WARM_L2_DYN_L1",
              WARM_ALL: "WARM_ALL"}


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
            "memory": f"{render.name}_Memory", "args": args, "sizes": dict(render.sizes), "warm": render.warm,
            "flash": ({"family": render.flash.family, "symbol": render.flash.symbol, "file": render.flash.file}
                      if render.flash else None)}


__all__ = ["FlashDevice", "FLASH_DEVICES", "MEMORY_KINDS", "RenderGraph", "check_supported", "flash_device",
           "graph_names", "render_graph", "graph_args_json", "graph_json"]
