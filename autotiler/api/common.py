"""Helpers shared by the API functions: count-prefixed lists and their items, enums and flags,
argument binding by the original's parameter names, the C names the generated files already use
(so that a script's names cannot clash with them), C type sizes."""

from __future__ import annotations

import difflib
from enum import Enum
from typing import Optional

from ..codegen.graph import MEMORY_KINDS
from ..errors import ModelError
from ..model.devices import FLASH_DEVICES, L3_DEVICES
from ..model.ir import DROPPED, ArgSpace, CallDecl, CArg, IterSpace, KerArgDecl, KerGroupArgDecl, caller_where
from ..model.validate import check_c_name, check_count, check_int

_MISSING = object()


def split_count(args: tuple) -> tuple:
    """``(3, a, b, c)`` -> ``(3, (a, b, c))``; ``(a, b)`` -> ``(None, (a, b))``; a single list
    or tuple is its items."""
    if args and isinstance(args[0], int) and not isinstance(args[0], bool):
        return args[0], args[1:]
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return None, tuple(args[0])
    return None, args


# What each count-prefixed list holds, and the constructor of its items, for messages.
LIST_ITEMS = {
    "CArgs": ("C arguments", "TCArg(Type, Name)"),
    "KerArgs": ("kernel arguments", "KerArg(...) (or KerArgP, KerArgPad, KerArgPart, ...)"),
    "Calls": ("calls", "Call(Name, Location, Bindings(...)) (UserKernelCall(...) in a kernel group)"),
    "KernelIterSpace": ("iteration spaces", "IterTiledSpace(...), IterParSpace(...) or IterFixedSpace(...)"),
    "KerGroupArgs": ("kernel group arguments", "KerGroupArg(...)"),
    "CNN_FusedLayers": ("fused layers", "CNN_FusedConv(ConvOper, OutFeat, Fcx, Fcy, Scx, Scy, ConvPad, ActOper)"),
}


def describe(item) -> str:
    """A model object as a script writes it, for messages (never a dataclass repr)."""
    if isinstance(item, Enum):
        return item.name
    if isinstance(item, KerArgDecl):
        return f"{item.ctor} '{item.name}'"
    if isinstance(item, KerGroupArgDecl):
        return f"KerGroupArg '{item.name}'"
    if isinstance(item, CArg):
        return f"TCArg '{item.name}'"
    if isinstance(item, CallDecl):
        return f"{'UserKernelCall' if item.user_kernel_call else 'Call'}({item.name!r}, ...)"
    if isinstance(item, IterSpace):
        return f"an iteration space over {item.space.name}"
    if isinstance(item, ArgSpace):
        return "KerArgSpace(...)"
    if isinstance(item, (tuple, list)):
        return f"a list of {len(item)} item(s)"
    if isinstance(item, (str, int, float, type(None))):
        return repr(item)
    return f"a {type(item).__name__}"


def counted(name: str, args: tuple, kind, where: str, kernel: Optional[str] = None) -> tuple:
    """Items of a count-prefixed list (``CArgs(3, a, b, c)``): the count, when given, must
    match; AT_NO_* placeholders count but are dropped; every other item must be a ``kind``."""
    count, items = split_count(args)
    check_count(count, items, name, where, kernel)
    out = []
    for item in items:
        if item is None:
            raise ModelError(f"{name}: an item is None (an AllocateXXX slot never filled?)", where=where,
                             kernel=kernel, hint="fill every slot, or use the AT_NO_* placeholder")
        if item in DROPPED:
            continue
        if kind is not None and not isinstance(item, kind):
            what, ctor = LIST_ITEMS.get(name, ("other items", "the matching function"))
            raise ModelError(f"{name} expects {what}, got {describe(item)}", where=where, kernel=kernel,
                             hint=f"build each item with {ctor}")
        out.append(item)
    return tuple(out)


def listed(name: str, value, kind, where: str, kernel: Optional[str] = None) -> tuple:
    """The items of a list parameter (a ``CArgs(...)``/``Calls(...)``/``KerArgs(...)`` result, a
    Python list, or 0/None for none): a single item, a string or a number is refused, where a
    plain ``tuple(value)`` would fail or split a string into characters."""
    if value in (0, None):
        return ()
    if not isinstance(value, (tuple, list)):
        ctor = LIST_ITEMS.get(name, ("", "..."))[1].split(" (")[0]
        raise ModelError(f"{name} must be a {name}(...) list, got {describe(value)}", where=where, kernel=kernel,
                         hint=f"wrap the items: {name}({ctor}, ...)")
    return counted(name, tuple(value), kind, where, kernel)


def enum_hint(enum_type, value) -> str:
    """The names to use instead of ``value``: the closest ones to a string, else the canonical
    names (aliases such as the v2 names left out; a long list abridged to its ends and range)."""
    if isinstance(value, str):
        if value in enum_type.__members__:
            return f"pass the constant {value}, not its name as a string"
        close = difflib.get_close_matches(value, list(enum_type.__members__), n=3)
        if close:
            return f"pass a constant, not a string: did you mean {' or '.join(close)}?"
    canonical = [m for n, m in enum_type.__members__.items() if m.name == n]
    if len(canonical) <= 12:
        return "use one of " + ", ".join(m.name for m in canonical)
    values = [int(m) for m in canonical]
    return (f"use one of {', '.join(m.name for m in canonical[:6])}, ..., {canonical[-1].name} ({len(canonical)} "
            f"names, values {min(values)}..{max(values)})")


def enum(enum_type, value, what: str, where: str, kernel: Optional[str] = None):
    try:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError
        return enum_type(value)
    except ValueError:
        raise ModelError(f"{value!r} is not a valid {what}", where=where, kernel=kernel,
                         hint=enum_hint(enum_type, value)) from None


def flags(flag_type, value, what: str, where: str, kernel: Optional[str] = None):
    """A combination of ``flag_type`` bits: unknown bits are refused (an IntFlag keeps them)."""
    value = enum(flag_type, value, what, where, kernel)
    unknown = int(value) & ~sum(int(m) for m in flag_type)
    if unknown:
        raise ModelError(f"{what} {int(value)} has unknown bit(s) 0x{unknown:x}", where=where, kernel=kernel,
                         hint="combine " + ", ".join(m.name for m in flag_type))
    return value


def bind(func: str, params: tuple, args: tuple, kwargs: dict, where: str, kernel: Optional[str] = None) -> dict:
    """Bind positional and keyword arguments to the original's parameter names; ``params`` is
    a tuple of names, or (name, default) pairs for optional ones."""
    names = [p if isinstance(p, str) else p[0] for p in params]
    if len(args) > len(names):
        raise ModelError(f"{func} takes {len(names)} argument(s), got {len(args)}", where=where, kernel=kernel,
                         hint=f"{func}({', '.join(names)})")
    out = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise ModelError(f"{func} has no parameter '{k}'", where=where, kernel=kernel,
                             hint=f"{func}({', '.join(names)})")
        if k in out:
            raise ModelError(f"{func}: parameter '{k}' given twice", where=where, kernel=kernel,
                             hint="give it either by position or by keyword")
        out[k] = v
    for p in params:
        name, default = (p, _MISSING) if isinstance(p, str) else p
        if name not in out:
            if default is _MISSING:
                raise ModelError(f"{func}: missing argument '{name}'", where=where, kernel=kernel,
                                 hint=f"{func}({', '.join(names)})")
            out[name] = default
    return out


int_arg = check_int


def global_c_names(model) -> dict:
    """Global names of the generated files besides the user kernels and groups: memory and L3
    device symbols, basic kernels and their argument struct types (name -> what it is)."""
    return {**device_and_template_c_names(model), **lib_c_names(model.libs.values()), **symbol_c_names(model)}


def device_and_template_c_names(model) -> dict:
    """The L3 device symbols and the templates' struct types (the first part of global_c_names)."""
    out = {d.symbol: f"the symbol of L3 device {loc.name}" for loc, d in L3_DEVICES.items()}
    out.update({t: f"the argument struct type of template '{t}'" for t in model.templates})
    return out


def lib_c_names(libs) -> dict:
    """The basic kernels' names and struct types (the middle part of global_c_names)."""
    out = {}
    for lib in libs:
        out[lib.name] = f"basic kernel '{lib.name}'"
        if lib.par_type:
            out[lib.par_type] = f"the argument struct type of basic kernel '{lib.name}'"
    return out


def symbol_c_names(model) -> dict:
    """The memory symbols and the graphs' names (the last part of global_c_names: these win)."""
    named = model.symbols.named_at or "SetSymbolNames"
    out = {model.symbols.l1: f"the L1 memory symbol ({named})", model.symbols.l2: f"the L2 memory symbol ({named})"}
    out.update(graph_c_names(model))
    return out


def graph_c_names(model) -> dict:
    """Global names of generated graph code: the dynamic L2 symbol (``<L2>_Dyn``), the flash
    devices, ``AT_MEM_TYPE`` and its values, and each graph's ``<G>_Construct``/``_Destruct``/
    ``_Memory`` (name -> what it is)."""
    out = {model.symbols.l2 + "_Dyn": "the dynamic L2 memory symbol of graphs (<L2>_Dyn)"}
    out.update({sym: f"the flash device symbol of graph constants in {loc.name}"
                for loc, (_, sym) in FLASH_DEVICES.items()})
    out.update({k: "a value of AT_MEM_TYPE (graph memories)" for k in (*MEMORY_KINDS, "AT_CTXT_MEM")})
    out.update({"AT_MEM_TYPE": "the graph memory type AT_MEM_TYPE", "AT_MEM_TYPE_DEFINED": "the guard of AT_MEM_TYPE"})
    graphs = [*model.graphs, *([model.open_graph.name] if model.open_graph is not None else [])]
    for g in graphs:
        out.update({f"{g}{suffix}": f"a function of graph '{g}'" for suffix in GRAPH_FUNCTIONS})
    return out


GRAPH_FUNCTIONS = ("_Construct", "_Destruct", "_Memory")


def check_function_name(model, name: str, where: str) -> None:
    """A user kernel or group name against the other global names of the generated files (user
    kernels, groups and basic kernels are checked by Model.check_new_function_name)."""
    check_c_name(name, "user kernel or group name", where, global_c_names(model), name, locals_=False,
                 hint="give the kernel or group another name")


def check_kernel_c_names(model, uk) -> None:
    """A user kernel's C arguments are parameters of its function: none may be a local of it, or
    hide a global it uses (memory and device symbols, the basic kernels it calls, their structs)."""
    glob = global_c_names(model)
    used = {model.symbols.l1, model.symbols.l2} | {d.symbol for d in L3_DEVICES.values()}
    for call in uk.calls:
        lib = model.libs.get(call.name)
        used |= {call.name} | ({lib.par_type} if lib and lib.par_type else set())
    taken = {n: glob[n] for n in used if n in glob}
    for c in uk.cargs:
        check_c_name(c.name, "C argument", c.where or uk.where, taken, uk.name, parameter=True)


def check_group_c_names(group) -> None:
    """A group's C arguments must not hide the user kernels it calls, nor its iteration index."""
    taken = {c.name: f"user kernel '{c.name}' (called by the group)" for c in group.calls}
    if group.iterations > 1:
        taken["Iter"] = "the group's iteration index"
    for c in group.cargs:
        check_c_name(c.name, "C argument", c.where or group.where, taken, group.name, locals_=False, parameter=True)


def _at(where: str) -> str:
    return f" (declared at {where})" if where else ""


def check_memory_symbols(model, l1: str, l2: str, where: str) -> None:
    """New L1/L2 memory symbol names: distinct, and not a name the generated code uses already
    (the kernels' locals and C arguments would hide them, a function would clash with them)."""
    if l1 == l2:
        raise ModelError(f"the L1 and L2 memory symbols are both named '{l1}'", where=where,
                         hint="give each memory symbol its own name (tiles and L3 staging slots are separate areas)")
    taken = {k: v for k, v in global_c_names(model).items()
             if k not in (model.symbols.l1, model.symbols.l2, model.symbols.l2 + "_Dyn")}
    # with the lines that declared them: the clash is found at the symbols' line
    taken.update({lib.name: f"basic kernel '{lib.name}'" + _at(lib.where) for lib in model.libs.values()})
    taken.update({n: f"user kernel '{n}'" + _at(uk.where) for n, uk in model.kernels.items()})
    taken.update({n: f"kernel group '{n}'" + _at(getattr(model.groups.get(n), "where", ""))
                  for n in {*model.groups, *model.group_members}})
    for uk in model.kernels.values():
        taken.update({c.name: f"a C argument of user kernel '{uk.name}'" + _at(uk.where) for c in uk.cargs
                      if c.name not in taken})
    for name, what in ((l1, "memory symbol"), (l2, "memory symbol"), (l2 + "_Dyn", "dynamic L2 symbol of graphs")):
        check_c_name(name, what, where, taken, hint="choose another symbol name")


def name_or_none(value) -> Optional[str]:
    return None if value in (0, "", None) else value


C_SIZES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "short": 2, "short int": 2, "unsigned short": 2,
    "unsigned short int": 2, "signed short": 2, "int": 4, "unsigned int": 4, "unsigned": 4, "signed int": 4,
    "long": 4, "unsigned long": 4, "long int": 4, "long long": 8, "unsigned long long": 8, "float": 4,
    "double": 8, "f16": 2, "f16a": 2, "Word8": 1, "Wordu8": 1, "Word16": 2, "Wordu16": 2, "Word32": 4,
    "Wordu32": 4, "v2s": 4, "v4s": 4, "v2u": 4, "v4u": 4, "v2h": 4, "v2ah": 4, "int8_t": 1, "uint8_t": 1,
    "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8,
}


def sizeof(ctype: str) -> int:
    """Size in bytes of a C type on GAP (``sizeof("int")`` -> 4), for ported ``sizeof(...)``."""
    key = " ".join(str(ctype).split())
    if "*" in key:
        return 4
    if key not in C_SIZES:
        raise ModelError(f"sizeof: unknown C type '{ctype}'", where=caller_where(),
                         hint="pass the size in bytes instead")
    return C_SIZES[key]


__all__ = ["split_count", "LIST_ITEMS", "describe", "counted", "listed", "enum_hint", "enum", "flags", "bind",
           "int_arg", "global_c_names", "device_and_template_c_names", "lib_c_names", "symbol_c_names", "graph_c_names", "GRAPH_FUNCTIONS", "check_function_name", "check_kernel_c_names", "check_group_c_names",
           "check_memory_symbols", "name_or_none", "sizeof", "C_SIZES"]
