"""The guide's model API, with the original's names and argument orders.

A model script written for the original ports line by line::

    LibKernel("MatSumPar", CALL_PARALLEL, CArgs(5, TCArg("Word32 * __restrict__", "In1"), ...),
              "MatrixAdd_Arg_T")
    UserKernel("MatAdd", KernelDimensions(1, W, H, 1), KernelIterationOrder(KER_DIM2, KER_TILE),
               TILE_HOR, CArgs(...), Calls(...), KerArgs(...))

Count-prefixed builders (``CArgs``, ``Calls``, ``Bindings``, ``KerArgs``) take the leading count
as in C; when given it must match, and it may be omitted. Every function acts on the current
:class:`~autotiler.session.Model`.
"""

from __future__ import annotations

import sys
from typing import Optional

from .constants import (
    AT_GraphCtrl_T,
    AT_MemLocation_T,
    KernelArgConstraints_T,
    KernelArgSelect_T,
    KernelCallLocationT,
    KernelCallTypeT,
    KernelIterationDimT,
    KernelIteratorT,
    Object_Type_T,
    Tile_Orientation_T,
)
from .errors import ModelError, OptionsError
from .model import (
    CallDecl,
    CArg,
    CArgBinding,
    CArgIndexBinding,
    ImmBinding,
    IterationOrder,
    KArgBinding,
    KerArgDecl,
    KernelCost,
    KernelDims,
    KernelGroupDecl,
    LibKernelDecl,
    UserKernelDecl,
    caller_where,
    check_count,
    check_name,
    check_unique,
    validate_group,
    validate_user_kernel,
)
from .session import Model, current_model
from .tiler import SolverOptions, solve

# ----------------------------------------------------------------------------------------------
# Small helpers


def _split_count(args: tuple) -> tuple:
    """``(3, a, b, c)`` -> ``(3, (a, b, c))``; ``(a, b)`` -> ``(None, (a, b))``."""
    if args and isinstance(args[0], int) and not isinstance(args[0], bool):
        return args[0], args[1:]
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return None, tuple(args[0])
    return None, args


def _enum(enum_type, value, what: str, where: str, kernel: Optional[str] = None):
    try:
        return enum_type(value)
    except ValueError:
        raise ModelError(f"{value!r} is not a valid {what}", where=where, kernel=kernel,
                         hint=f"use one of {', '.join(m.name for m in enum_type)}") from None


def _items_of(items, kind, what: str, where: str) -> tuple:
    for item in items:
        if not isinstance(item, kind):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise ModelError(f"{what} expects {names} items, got {item!r}", where=where,
                             hint="build each item with the matching function (e.g. TCArg for CArgs)")
    return items


_C_SIZES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "short": 2, "short int": 2, "unsigned short": 2,
    "unsigned short int": 2, "int": 4, "unsigned int": 4, "unsigned": 4, "long": 4, "unsigned long": 4,
    "long long": 8, "unsigned long long": 8, "float": 4, "double": 8, "f16": 2,
    "Word8": 1, "Wordu8": 1, "Word16": 2, "Wordu16": 2, "Word32": 4, "Wordu32": 4, "v2s": 4, "v4s": 4,
    "v2u": 4, "v4u": 4, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4,
    "uint32_t": 4, "int64_t": 8, "uint64_t": 8,
}


def sizeof(ctype: str) -> int:
    """Size in bytes of a C type on GAP (``sizeof("int")`` -> 4), for ported ``sizeof(...)``."""
    key = " ".join(str(ctype).replace("signed ", "signed ").split())
    if "*" in key:
        return 4
    if key not in _C_SIZES:
        raise ModelError(f"sizeof: unknown C type '{ctype}'", where=caller_where(),
                         hint="pass the size in bytes instead")
    return _C_SIZES[key]


def AppendNames(name1: str, name2: str) -> str:
    """Concatenation of two names, to derive names in generators."""
    return f"{name1}{name2}"


def GenTilingError(message: str, *args) -> None:
    """Abort the model with a message (``printf``-style arguments, as in C)."""
    raise ModelError(message % args if args else message, where=caller_where())


# ----------------------------------------------------------------------------------------------
# Basic kernels


def TCArg(ArgType: str, ArgName: str) -> CArg:
    where = caller_where()
    if not isinstance(ArgType, str) or not ArgType.strip():
        raise ModelError(f"TCArg type must be a C type string, got {ArgType!r}", where=where, arg=str(ArgName))
    check_name(ArgName, "C argument", where)
    return CArg(" ".join(ArgType.split()), ArgName, where)


def CArgs(*args) -> tuple:
    where = caller_where()
    count, items = _split_count(args)
    return _items_of(check_count(count, items, "CArgs", where), CArg, "CArgs", where)


def LibKernel(KernelName: str, CallType, CArgs: tuple, ParArgTypeName: Optional[str] = "",
              CNN_Match=None, *, Cost: Optional[str] = None) -> LibKernelDecl:
    """Declare a basic kernel. ``Cost`` (extension): cycles of one call as an integer expression
    over the kernel's argument names and ``ncores`` (see :mod:`autotiler.costmodel`)."""
    where = caller_where()
    model = current_model()
    check_name(KernelName, "basic kernel", where)
    call_type = _enum(KernelCallTypeT, CallType, "call type (CALL_SEQUENTIAL/CALL_PARALLEL)", where, KernelName)
    cargs = tuple(CArgs or ())
    par = ParArgTypeName or ""
    if call_type == KernelCallTypeT.CALL_PARALLEL and not par:
        raise ModelError("a parallel basic kernel needs the name of its argument struct type", where=where,
                         kernel=KernelName, hint="pass ParArgTypeName, e.g. \"MatrixAdd_Arg_T\"")
    if par and not str(par).isidentifier():
        raise ModelError(f"argument struct type {par!r} is not a C identifier", where=where, kernel=KernelName)
    check_unique([c.name for c in cargs], "C argument", where, KernelName)
    if Cost is not None:
        from .costmodel import parse_cost

        parse_cost(str(Cost), cargs, where, KernelName)
    decl = LibKernelDecl(KernelName, call_type, cargs, par, KernelCost(Cost) if Cost else None, where)
    old = model.libs.get(KernelName)
    if old is not None and old != decl:
        raise ModelError(f"basic kernel '{KernelName}' is already declared differently at {old.where}",
                         where=where, kernel=KernelName, hint="declare each basic kernel once")
    if KernelName in model.kernels or KernelName in model.groups:
        raise ModelError(f"'{KernelName}' is already a user kernel or group", where=where, kernel=KernelName)
    model.libs[KernelName] = decl
    return decl


# ----------------------------------------------------------------------------------------------
# Bindings and calls


def K_Arg(KerArgName: str, Select) -> KArgBinding:
    where = caller_where()
    return KArgBinding(KerArgName, _enum(KernelArgSelect_T, Select, "kernel argument selector", where), where)


def C_Arg(ArgName: str) -> CArgBinding:
    return CArgBinding(ArgName, caller_where())


def C_ArgIndex(ArgName: str, Iterator, MultFactor: int) -> CArgIndexBinding:
    where = caller_where()
    it = _enum(KernelIteratorT, Iterator, "iterator (KER_IN_PLANE, KER_OUT_PLANE, KER_TILE)", where)
    return CArgIndexBinding(ArgName, it, int(MultFactor), where)


def Imm(Value: int) -> ImmBinding:
    where = caller_where()
    if not isinstance(Value, int) or isinstance(Value, bool):
        raise ModelError(f"Imm expects an integer, got {Value!r}", where=where)
    return ImmBinding(Value, where)


_BINDING_TYPES = (KArgBinding, CArgBinding, CArgIndexBinding, ImmBinding)


def Bindings(*args) -> tuple:
    where = caller_where()
    count, items = _split_count(args)
    return _items_of(check_count(count, items, "Bindings", where), _BINDING_TYPES, "Bindings", where)


def Call(CallName: str, CallLocation, BindingList: tuple) -> CallDecl:
    where = caller_where()
    loc = _enum(KernelCallLocationT, CallLocation, "call location", where)
    return CallDecl(CallName, loc, tuple(BindingList or ()), False, where)


def UserKernelCall(CallName: str, CallLocation, BindingList: tuple) -> CallDecl:
    where = caller_where()
    loc = _enum(KernelCallLocationT, CallLocation, "call location", where)
    if loc != KernelCallLocationT.LOC_GROUP:
        raise ModelError(f"UserKernelCall('{CallName}') must use LOC_GROUP, not {loc.name}", where=where,
                         hint="calls inside a kernel group have no iteration: use LOC_GROUP")
    return CallDecl(CallName, loc, tuple(BindingList or ()), True, where)


def Calls(*args) -> tuple:
    where = caller_where()
    count, items = _split_count(args)
    return _items_of(check_count(count, items, "Calls", where), CallDecl, "Calls", where)


# ----------------------------------------------------------------------------------------------
# Kernel arguments and user kernels


def KerArg(KerArgName: str, ObjType, W: int, H: int, ItemSize: int, TileOverlap: int = 0,
           Constraint=0, PreferedTileSize: int = 0, CArgName: Optional[str] = None,
           NextPlaneUpdate: int = 0) -> KerArgDecl:
    where = caller_where()
    try:
        obj = Object_Type_T(int(ObjType))
        cons = KernelArgConstraints_T(int(Constraint or 0))
    except (ValueError, TypeError):
        raise ModelError(f"invalid object type or constraint ({ObjType!r}, {Constraint!r})", where=where,
                         arg=str(KerArgName), hint="use OBJ_* names or O_* flags, OBJ_CONSTRAINTS_*") from None
    carg = CArgName if CArgName not in (0, "", None) else None
    return KerArgDecl(KerArgName, obj, W, H, ItemSize, TileOverlap, cons, PreferedTileSize or 0, carg,
                      NextPlaneUpdate or 0, where)


def KerArgs(*args) -> tuple:
    where = caller_where()
    count, items = _split_count(args)
    return _items_of(check_count(count, items, "KerArgs", where), KerArgDecl, "KerArgs", where)


def KernelDimensions(InPlanes: int, W: int, H: int, OutPlanes: int) -> KernelDims:
    return KernelDims(InPlanes, W, H, OutPlanes, caller_where())


def KernelIterationOrder(Dim, *Iterators) -> IterationOrder:
    where = caller_where()
    dim = _enum(KernelIterationDimT, Dim, "iteration dimension (KER_DIM2..KER_DIM4)", where)
    its = tuple(_enum(KernelIteratorT, i, "iterator", where) for i in Iterators)
    return IterationOrder(dim, its, where)


def UserKernel(TemplateName: str, KerDim: KernelDims, KerIter: IterationOrder, Orientation,
               CArg: tuple, CCalls: tuple, KerArg: tuple):
    """Declare and tile a user kernel. Returns its tiling, or None when no tiling exists and
    AT_KERNEL_NOSOLUTION_ERROR is off (as the original returns NULL)."""
    where = caller_where()
    model = current_model()
    check_name(TemplateName, "user kernel", where)
    model.check_new_function_name(TemplateName, where)
    orient = _enum(Tile_Orientation_T, Orientation, "tile orientation (TILE_HOR/TILE_VER)", where, TemplateName)
    if not isinstance(KerDim, KernelDims) or not isinstance(KerIter, IterationOrder):
        raise ModelError("expects KernelDimensions(...) and KernelIterationOrder(...) as 2nd and 3rd arguments",
                         where=where, kernel=TemplateName)
    uk = UserKernelDecl(TemplateName, KerDim, KerIter, orient, tuple(CArg or ()), tuple(CCalls or ()),
                        tuple(KerArg or ()), model.open_group, where)
    validate_user_kernel(uk, model.libs)
    tiling = solve(uk, _solver_options(model, TemplateName))
    if tiling is None:
        return None
    model.kernels[TemplateName] = uk
    model.tilings[TemplateName] = tiling
    if model.open_group:
        model.group_members[model.open_group].append(TemplateName)
    return tiling


def _solver_options(model: Model, kernel: str) -> SolverOptions:
    return SolverOptions(budget=model.l1_budget, promote=model.ctrl.buffer_promote,
                         partial_promote=model.ctrl.partial_buffer_promote,
                         nosolution_error=model.ctrl.nosolution_error,
                         objective=model.per_kernel_objective.get(kernel, model.ctrl.objective),
                         platform=model.platform, libs=dict(model.libs), l2_budget=model.l2_budget)


# ----------------------------------------------------------------------------------------------
# Kernel groups


def OpenKernelGroup(GroupName: str) -> None:
    where = caller_where()
    model = current_model()
    check_name(GroupName, "kernel group", where)
    if model.open_group:
        raise ModelError(f"kernel group '{model.open_group}' (opened at {model.open_group_where}) is still open",
                         where=where, kernel=GroupName, hint="call CloseKernelGroup() first; groups do not nest")
    model.check_new_function_name(GroupName, where)
    model.open_group, model.open_group_where = GroupName, where
    model.group_members[GroupName] = []


def CloseKernelGroup() -> None:
    where = caller_where()
    model = current_model()
    if not model.open_group:
        raise ModelError("CloseKernelGroup() without OpenKernelGroup()", where=where,
                         hint="open the group with OpenKernelGroup(name) before its user kernels")
    model.open_group = None


def UserKernelGroup(GroupName: str, CArg: tuple, CCalls: tuple) -> KernelGroupDecl:
    where = caller_where()
    model = current_model()
    if GroupName not in model.group_members:
        raise ModelError(f"no kernel group '{GroupName}' was opened", where=where, kernel=GroupName,
                         hint="bracket its user kernels with OpenKernelGroup/CloseKernelGroup first")
    if model.open_group == GroupName:
        raise ModelError("the group is still open", where=where, kernel=GroupName,
                         hint="call CloseKernelGroup() before UserKernelGroup(...)")
    if GroupName in model.groups:
        raise ModelError("the group's C template is already defined", where=where, kernel=GroupName)
    group = KernelGroupDecl(GroupName, tuple(CArg or ()), tuple(CCalls or ()), where)
    members = {n: model.kernels[n] for n in model.group_members[GroupName]}
    validate_group(group, members)
    model.groups[GroupName] = group
    return group


# ----------------------------------------------------------------------------------------------
# Model control


def SetUsedFilesNames(StdTypedefsName, LibKernelFileCount: Optional[int] = None, *names) -> None:
    where = caller_where()
    files = current_model().files
    files.std_types = StdTypedefsName or "KernelLibStdTypes.h"
    headers = tuple(names)
    if LibKernelFileCount is not None and LibKernelFileCount != len(headers):
        raise ModelError(f"SetUsedFilesNames announces {LibKernelFileCount} header(s) but {len(headers)} follow",
                         where=where, hint=f"pass {len(headers)} as the count")
    files.lib_headers = headers


def SetGeneratedFilesNames(*names) -> None:
    """``(Kernels.c, Kernels.h)`` or the guide's 4-name form ``(Init.c, Init.h, Kernels.c, Kernels.h)``."""
    where = caller_where()
    files = current_model().files
    if len(names) == 2:
        files.kernels_c, files.kernels_h = names
        files.init_c = files.init_h = None
    elif len(names) == 4:
        files.init_c, files.init_h, files.kernels_c, files.kernels_h = names
    else:
        raise ModelError(f"SetGeneratedFilesNames takes 2 or 4 file names, got {len(names)}", where=where,
                         hint="(\"XKernels.c\", \"XKernels.h\") or (\"XInit.c\", \"XInit.h\", \"XKernels.c\", \"XKernels.h\")")
    for n in names:
        if not isinstance(n, str) or not n or "/" in n or "\\" in n:
            raise ModelError(f"generated file name {n!r} must be a plain file name", where=where,
                             hint="choose the output directory with -o DIR")


def SetSymbolNames(L1SymbName: str, L2SymbName: str, KernelDescrName: Optional[str] = None,
                   KernelDescArgName: Optional[str] = None) -> None:
    where = caller_where()
    sym = current_model().symbols
    for n in (L1SymbName, L2SymbName, KernelDescrName, KernelDescArgName):
        if n is not None:
            check_name(n, "symbol", where)
    sym.l1, sym.l2 = L1SymbName, L2SymbName
    sym.kernel_descr = KernelDescrName or sym.kernel_descr
    sym.kernel_descr_args = KernelDescArgName or sym.kernel_descr_args


def SetSymbolDynamics() -> None:
    current_model().symbols.dynamic = True


def SetL1MemorySize(Size: int) -> None:
    where = caller_where()
    if not isinstance(Size, int) or Size <= 0:
        raise ModelError(f"L1 memory size must be a positive number of bytes, got {Size!r}", where=where)
    current_model().l1_size = Size


def SetMemorySizes(L1Size: int, L2Size: int, L3Size: int = 0) -> None:
    SetL1MemorySize(L1Size)
    model = current_model()
    model.l2_size, model.l3_size = L2Size, L3Size


def SetInlineMode(Mode) -> None:
    """Accepted for compatibility: user kernels are always emitted as plain C functions."""


_KERNEL_CTRL = {
    AT_GraphCtrl_T.AT_KERNEL_BUFFER_PROMOTE: "buffer_promote",
    AT_GraphCtrl_T.AT_KERNEL_PARTIAL_BUFFER_PROMOTE: "partial_buffer_promote",
    AT_GraphCtrl_T.AT_KERNEL_NOSOLUTION_ERROR: "nosolution_error",
}


def AT_SetKernelCtrl(Ctrl, Val) -> None:
    where = caller_where()
    ctrl = _enum(AT_GraphCtrl_T, Ctrl, "kernel control option", where)
    if ctrl not in _KERNEL_CTRL:
        raise ModelError(f"{ctrl.name} is not a kernel option", where=where,
                         hint="kernel options: " + ", ".join(c.name for c in _KERNEL_CTRL))
    setattr(current_model().ctrl, _KERNEL_CTRL[ctrl], bool(Val))


def AT_SetGraphCtrl(Ctrl, Val) -> None:
    where = caller_where()
    ctrl = _enum(AT_GraphCtrl_T, Ctrl, "graph control option", where)
    if ctrl in _KERNEL_CTRL:
        AT_SetKernelCtrl(ctrl, Val)
    elif ctrl == AT_GraphCtrl_T.AT_GRAPH_PREF_L3_EXEC:
        current_model().graph_ctrl[ctrl] = _l3_exec_location(Val, where)
    else:
        current_model().graph_ctrl[ctrl] = Val


def _l3_exec_location(value, where: str):
    from .codegen import L3_DEVICES

    loc = _enum(AT_MemLocation_T, value, "AT_GRAPH_PREF_L3_EXEC location", where)
    if loc not in L3_DEVICES:
        raise ModelError(f"AT_GRAPH_PREF_L3_EXEC must be an L3 RAM, got {loc.name}", where=where,
                         hint="use " + ", ".join(d.name for d in L3_DEVICES) + " (flash is read-only)")
    return loc


def AT_GetKernelCtrl(Ctrl):
    ctrl = _enum(AT_GraphCtrl_T, Ctrl, "kernel control option", caller_where())
    return int(getattr(current_model().ctrl, _KERNEL_CTRL[ctrl]))


def SetTilingObjective(Objective: str, KernelName: Optional[str] = None) -> None:
    """Extension: choose the tiling objective for the model, or for one kernel declared later."""
    from .tiler import OBJECTIVES

    where = caller_where()
    if Objective not in OBJECTIVES:
        raise ModelError(f"unknown tiling objective '{Objective}'", where=where,
                         hint=f"objectives: {', '.join(sorted(OBJECTIVES))}")
    model = current_model()
    if KernelName is None:
        model.ctrl.objective = Objective
    else:
        model.per_kernel_objective[KernelName] = Objective


def TilerParseOptions(argv) -> int:
    """Parse the generator's options, program name first as in C: ``-o DIR``, ``--L1 N``,
    ``--objective NAME``, ``-h``. Returns 0 on success; on a bad option prints one line and
    returns 1. Also makes autotiler errors print as one line and exit with status 1."""
    from .cli import install_error_hook, parse_generator_options

    install_error_hook()
    try:
        parse_generator_options(list(argv)[1:], current_model())
    except OptionsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


def GenerateTilingCode():
    """Generate the C code of every user kernel and group into the output directory.
    Returns a :class:`~autotiler.reports.GenerationReport`."""
    from .codegen import write_model

    model = current_model()
    if model.open_group:
        raise ModelError(f"kernel group '{model.open_group}' is still open", where=caller_where(),
                         kernel=model.open_group, hint="call CloseKernelGroup()")
    return write_model(model)


__all__ = [
    "AppendNames", "AT_GetKernelCtrl", "AT_SetGraphCtrl", "AT_SetKernelCtrl", "Bindings", "C_Arg", "C_ArgIndex",
    "Call", "Calls", "CArgs", "CloseKernelGroup", "GenerateTilingCode", "GenTilingError", "Imm", "K_Arg",
    "KerArg", "KerArgs", "KernelDimensions", "KernelIterationOrder", "LibKernel", "Model", "OpenKernelGroup",
    "SetGeneratedFilesNames", "SetInlineMode", "SetL1MemorySize", "SetMemorySizes", "SetSymbolDynamics",
    "SetSymbolNames", "SetTilingObjective", "SetUsedFilesNames", "TCArg", "TilerParseOptions", "UserKernel",
    "UserKernelCall", "UserKernelGroup", "sizeof",
]
