"""Declarations: basic kernels, C arguments, iteration spaces, kernel arguments, bindings, calls.

Every function takes the original's arguments in the original's order, or by keyword with the
original's parameter names. Both the v3 form (``KerArg(Name, KerArgSpace(...), Type, ...)``)
and the guide's v2 form (``KerArg(Name, Type, W, H, ..., NextPlaneUpdate)``) are accepted; the
form is told apart by the second argument.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping
from itertools import islice
from typing import Optional

from ..constants import (
    CALL_ATTRIBUTES,
    CALL_FLOAT_KER,
    CALL_MASK,
    ITER_PROP_MASK,
    ITER_SPACE_MASK,
    SPACE_PROP_ONE_TILE,
    SPACE_PROP_REVERT,
    ArgBindingT,
    KernelArgSelect_T,
    KernelCallLocationT,
    KernelCallTypeT,
    KernelDimT,
    KernelIterationDimT,
    KernelIteratorT,
    Object_Type_T,
)
from ..errors import ModelError
from ..model.cost import check_cost
from ..model.ctype import CTypeError, parse_ctype
from ..model.graph import NodeArgDecl
from ..model.ir import (
    AT_IGNORE_ARG_BINDING,
    AT_NO_ARG_BINDING,
    ArgSpace,
    CallDecl,
    CArg,
    CArgBinding,
    CArgForm,
    ExprBinding,
    ImmBinding,
    IterIndexBinding,
    KArgBinding,
    KerArgDecl,
    KerDimBinding,
    KerGroupArgDecl,
    KernelSpace,
    LibKernelDecl,
    Pad,
    PredListBinding,
    SpaceKind,
    SpaceRef,
    TileOperBinding,
    UserSymbBinding,
    caller_where,
)
from ..model.ir import IterSpace as IterSpaceDecl
from ..model.session import current_model
from ..model.v2 import V2Dims, V2Order
from ..model.validate import (
    BINDING_OPERS,
    C_KEYWORDS,
    check_c_name,
    check_name,
    check_not_reserved,
    check_space_props,
    check_unique,
    suggest,
    validate_kerarg_fields,
)
from .common import (
    bind,
    counted,
    describe,
    device_and_template_c_names,
    enum,
    int_arg,
    lib_c_names,
    listed,
    name_or_none,
    symbol_c_names,
)

# ----------------------------------------------------------------------------------------------
# C arguments and basic kernels


def TCArg(ArgType: str, ArgName: str) -> CArg:
    where = caller_where()
    if not isinstance(ArgType, str) or not ArgType.strip():
        raise ModelError(f"TCArg type must be a C type string, got {ArgType!r}", where=where, arg=str(ArgName),
                         hint="e.g. TCArg(\"short int * __restrict__\", \"In\")")
    check_name(ArgName, "C argument", where)
    try:
        parse_ctype(ArgType)
    except CTypeError as err:
        raise ModelError(f"TCArg type {ArgType!r} {err}", where=where, arg=ArgName,
                         hint="give a C type such as \"short int * __restrict__\", \"unsigned int\" or a typedef name"
                         ) from None
    return CArg(" ".join(ArgType.split()), ArgName, where)


def CArgs(*args) -> tuple:
    return counted("CArgs", args, CArg, caller_where())


def AllocateCArgs(ArgCount: int) -> list:
    """A list of ``ArgCount`` empty slots to fill by index (``L[i] = TCArg(...)``)."""
    return [None] * int_arg(ArgCount, "AllocateCArgs count", caller_where(), minimum=0)


def LibKernelTemplate(TemplateName: str, CArgs: tuple) -> None:
    """Declare an argument-struct type by name, usable by several basic kernels."""
    where = caller_where()
    check_name(TemplateName, "basic kernel template", where)
    check_not_reserved(TemplateName, "basic kernel template", where)
    cargs = listed("CArgs", CArgs, CArg, where, TemplateName)
    check_unique([c.name for c in cargs], "C argument", where, TemplateName)
    model = current_model()
    old = model.templates.get(TemplateName)
    if old is not None and old != cargs:
        raise ModelError(f"template '{TemplateName}' is already declared with other arguments", where=where,
                         hint="declare each template once")
    model.templates[TemplateName] = cargs


def KerTypeTemplate(TemplateName: str) -> tuple:
    """The C arguments of a template declared with LibKernelTemplate."""
    where = caller_where()
    check_name(TemplateName, "basic kernel template", where)
    model = current_model()
    if TemplateName not in model.templates:
        raise ModelError(f"no basic kernel template '{TemplateName}'", where=where,
                         hint="declare it with LibKernelTemplate first" + suggest(TemplateName, model.templates))
    return model.templates[TemplateName]


_COSTS_OK: set = set()   # (Cost text, scalar argument names) already accepted by check_cost
_GLOBAL_NAMES: list = [None, None, None, None, 0]  # [model, version, names, lib part, libs counted]


def _global_names(model) -> Mapping:
    """``global_c_names(model)`` (read only), its parts computed again only when what they read
    changed: declarations are only ever added, so the counts and last names of the templates,
    the symbols and the graphs tell the versions of the other parts apart, and each new basic
    kernel only adds to the basic kernels' part (one update per LibKernel, not a pass over all
    the basic kernels: a library declares hundreds)."""
    templates, libs = model.templates, model.libs
    version = (len(templates), next(reversed(templates), None), model.symbols.l1, model.symbols.l2,
               tuple(model.graphs), model.open_graph.name if model.open_graph is not None else None)
    cache = _GLOBAL_NAMES
    if cache[0] is not model or cache[1] != version or cache[4] > len(libs):
        part: dict = {}
        cache[:] = [model, version, ChainMap(symbol_c_names(model), part, device_and_template_c_names(model)), part, 0]
    if cache[4] < len(libs):
        cache[3].update(lib_c_names(islice(libs.values(), cache[4], None)))
        cache[4] = len(libs)
    return cache[2]


def _check_attributes(ct: int, call_type: KernelCallTypeT, attributes: int, cargs: tuple, where: str,
                      name: str) -> None:
    """CALL_FLOAT_KER marks a kernel on float data: on one without any float argument, the call
    type is a number that was not built from the names (7 is CALL_PARALLEL_CC | CALL_FLOAT_KER)."""
    if attributes & CALL_FLOAT_KER and cargs and not any(parse_ctype(c.ctype).float_data for c in cargs):
        spelled = " | ".join([call_type.name] + [n for n, bit in CALL_ATTRIBUTES.items() if attributes & bit])
        raise ModelError(f"call type {ct} is {spelled}, but no C argument of the kernel is float", where=where,
                         kernel=name, hint="use CALL_SEQUENTIAL (0), CALL_PARALLEL (1), CALL_SEQUENTIAL_STRUCT (2) or "
                         "CALL_PARALLEL_CC (3); OR CALL_FLOAT_KER in only for a kernel on float data")


def LibKernel(*args, Cost: Optional[str] = None, **kwargs) -> LibKernelDecl:
    """``LibKernel(KernelName, CallType, CArgs, ParArgTypeName, CNN_Match)``: declare a basic
    kernel. CArgs may be 0 when ParArgTypeName names a LibKernelTemplate. ``Cost`` (extension):
    cycles of one call as an integer expression over the kernel's scalar argument names and
    ``ncores`` (see :mod:`autotiler.model.cost`)."""
    where = caller_where()
    p = bind("LibKernel", ("KernelName", "CallType", "CArgs", ("ParArgTypeName", ""), ("CNN_Match", None)), args,
             kwargs, where)
    name = p["KernelName"]
    model = current_model()
    check_name(name, "basic kernel", where)
    check_not_reserved(name, "basic kernel", where, name)
    # a global of the generated code (memory and device symbols, struct types) or a local of its kernels
    gnames = _global_names(model)
    use = gnames.get(name)
    check_c_name(name, "basic kernel", where, {name: use} if use and not use.startswith("basic kernel") else {},
                 name, hint="give the basic kernel the name its C function has")
    ct = p["CallType"]
    if isinstance(ct, bool) or not isinstance(ct, int):
        raise ModelError(f"{ct!r} is not a valid call type", where=where, kernel=name,
                         hint="use CALL_SEQUENTIAL, CALL_PARALLEL, CALL_SEQUENTIAL_STRUCT or CALL_PARALLEL_CC")
    call_type = enum(KernelCallTypeT, int(ct) & CALL_MASK, "call type", where, name)
    attributes = int(ct) & ~CALL_MASK
    if attributes & ~(4 | 8 | 16):
        raise ModelError(f"call type {ct!r} has unknown attribute bits", where=where, kernel=name,
                         hint="attributes are CALL_FLOAT_KER, CALL_HWC_KER, CALL_NE16_KER")
    par = p["ParArgTypeName"] or ""
    if par and (not isinstance(par, str) or not par.isidentifier() or not par.isascii() or par in C_KEYWORDS):
        raise ModelError(f"argument struct type {par!r} is not a C identifier", where=where, kernel=name,
                         hint="give the name of the C struct type the kernel takes, e.g. \"MatrixAdd_Arg_T\"")
    if par == name:
        raise ModelError(f"argument struct type '{par}' is also the basic kernel's name", where=where, kernel=name,
                         hint=f"a C type and a function cannot share a name: give the struct type its own, e.g. "
                         f"\"{name}_T\"")
    cargs = p["CArgs"]
    if cargs in (0, None):
        if not par or par not in model.templates:
            raise ModelError("has no C arguments and no LibKernelTemplate named by ParArgTypeName", where=where,
                             kernel=name, hint="give CArgs(...) or declare LibKernelTemplate(ParArgTypeName, ...)")
        cargs = model.templates[par]
    cargs = listed("CArgs", cargs, CArg, where, name)
    if call_type != KernelCallTypeT.CALL_SEQUENTIAL and not par:
        raise ModelError("a parallel (or struct) basic kernel needs the name of its argument struct type", where=where,
                         kernel=name, hint="pass ParArgTypeName, e.g. \"MatrixAdd_Arg_T\"")
    if par:
        check_not_reserved(par, "argument struct type", where, name)
        # a type named like a global or a local of the generated code (struct types are shared)
        # (only the entry of ``par`` matters: the names of global_c_names but struct types, then
        # the user kernels and groups)
        use = gnames.get(par)
        if use and use.startswith("the argument struct"):
            use = None
        if par in model.kernels or par in model.groups:
            use = f"user kernel or group '{par}'"
        check_c_name(par, "argument struct type", where, {par: use} if use else {}, name,
                     hint="give the C struct type the kernel takes, as its header names it")
    check_unique([c.name for c in cargs], "C argument", where, name)
    _check_attributes(ct, call_type, attributes, cargs, where, name)
    if Cost is not None:
        scalars = frozenset(c.name for c in cargs if not c.is_pointer)
        if (Cost, scalars) not in _COSTS_OK:  # check_cost reads only the text and the scalar names
            check_cost(Cost, cargs, where, name)
            _COSTS_OK.add((Cost, scalars))
    decl = LibKernelDecl(name, call_type, cargs, par, Cost, attributes, p["CNN_Match"], where)
    old = model.libs.get(name)
    if old is not None and old != decl:
        raise ModelError(f"basic kernel '{name}' is already declared differently at {old.where}", where=where,
                         kernel=name, hint="declare each basic kernel once")
    if name in model.kernels or name in model.groups:
        raise ModelError(f"'{name}' is already a user kernel or group", where=where, kernel=name,
                         hint="give the basic kernel another name: basic kernels and generated functions share the "
                         "C namespace")
    model.libs[name] = decl
    return decl


# ----------------------------------------------------------------------------------------------
# Iteration spaces


def _space(value, what: str, where: str) -> tuple:
    """(KernelIteratorT, properties) of a space id that may carry SPACE_PROP_* bits."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelError(f"{value!r} is not a valid {what}", where=where,
                         hint="use KER_ITER_TILE0..2 / KER_ITER_D0..D3 (or the v2 KER_TILE, KER_IN_PLANE, ...)")
    if not 0 <= value <= ITER_SPACE_MASK | ITER_PROP_MASK:  # the masks would make another space of it
        raise ModelError(f"{value!r} is not a valid {what} (a space id, with SPACE_PROP_* bits, is 32 bits, "
                         "not negative)", where=where,
                         hint="use KER_ITER_TILE0..2 / KER_ITER_D0..D3, or SPACE_PROP(Space, SPACE_PROP_*)")
    return enum(KernelIteratorT, int(value) & ITER_SPACE_MASK, what, where), int(value) & ITER_PROP_MASK


def _space_id(value, what: str, where: str):
    """A space named by a binding or an iteration order: SPACE_PROP_* bits mean nothing there."""
    space, props = _space(value, what, where)
    if props:
        raise ModelError(f"{value!r} is not a valid {what}: it carries property bits 0x{props:x}", where=where,
                         hint=f"name the space alone ({space.name}); SPACE_PROP_* properties belong in "
                         "KernelIterSpace or KerArgSpace")
    return space


def _iter_space(ctor: str, value, where: str) -> tuple:
    """(space, properties) of a KernelIterSpace entry. Only IterParSpace takes one
    (SPACE_PROP_ONE_TILE: a single chunk); SPACE_PROP_REVERT reverses an argument's traversal and
    so belongs in its KerArgSpace; either would be ignored here."""
    space, props = _space(value, "tiled space" if ctor == "IterTiledSpace" else "space", where)
    what = f"{ctor}({space.name})"
    check_space_props(props, what, ctor == "IterTiledSpace", where)
    if props & SPACE_PROP_REVERT:
        raise ModelError(f"{what}: SPACE_PROP_REVERT belongs in KerArgSpace, not in KernelIterSpace", where=where,
                         hint=f"give it in the KerArgSpace of the arguments to traverse backwards, e.g. "
                         f"KerArgSpace(1, SPACE_PROP({space.name}, SPACE_PROP_REVERT))")
    if props & SPACE_PROP_ONE_TILE and ctor != "IterParSpace":
        raise ModelError(f"{what}: SPACE_PROP_ONE_TILE applies to IterParSpace (a single chunk)", where=where,
                         hint="remove the property: a fixed space visits each index")
    return space, props


def IterTiledSpace(IterSpace) -> IterSpaceDecl:
    where = caller_where()
    space, props = _iter_space("IterTiledSpace", IterSpace, where)
    return IterSpaceDecl(space, SpaceKind.TILED, props=props, where=where)


def IterFixedSpace(IterSpace, Dim: int) -> IterSpaceDecl:
    where = caller_where()
    space, props = _iter_space("IterFixedSpace", IterSpace, where)
    return IterSpaceDecl(space, SpaceKind.FIXED, int_arg(Dim, "IterFixedSpace Dim", where, minimum=1), props=props,
                     where=where)


def IterParSpace(IterSpace, Dim: int, PrefDiv: int) -> IterSpaceDecl:
    where = caller_where()
    space, props = _iter_space("IterParSpace", IterSpace, where)
    return IterSpaceDecl(space, SpaceKind.PARAMETRIC, int_arg(Dim, "IterParSpace Dim", where, minimum=1),
                     int_arg(PrefDiv, "IterParSpace PrefDiv", where, minimum=1), props=props, where=where)


def IterFixedSpaceDynBound(IterSpace, Dim: int, Name: str) -> IterSpaceDecl:
    where = caller_where()
    space, props = _iter_space("IterFixedSpaceDynBound", IterSpace, where)
    check_name(Name, "run-time bound C argument", where)
    return IterSpaceDecl(space, SpaceKind.DYNAMIC, int_arg(Dim, "IterFixedSpaceDynBound Dim", where, minimum=1),
                     bound=Name, props=props, where=where)


def KernelIterSpace(*args) -> KernelSpace:
    where = caller_where()
    return KernelSpace(counted("KernelIterSpace", args, IterSpaceDecl, where), where)


def KerArgSpace(*args) -> ArgSpace:
    where = caller_where()
    if not args:
        raise ModelError("KerArgSpace() needs the number of spaces, then the spaces", where=where,
                         hint="e.g. KerArgSpace(1, KER_ITER_TILE0); KerArgSpace(0) for an argument in no space")
    count, items = args[0], args[1:]
    if isinstance(count, bool) or not isinstance(count, int):
        raise ModelError("KerArgSpace(N, spaces...) starts with the number of spaces", where=where,
                         hint=f"write KerArgSpace({len(args)}, ...) (got {describe(count)} first)")
    if count != len(items):
        raise ModelError(f"KerArgSpace({count}, ...) announces {count} space(s) but {len(items)} follow", where=where,
                         hint=f"write KerArgSpace({len(items)}, ...)")
    refs = []
    for v in items:
        space, props = _space(v, "KerArgSpace entry", where)
        refs.append(SpaceRef(space, props))
    return ArgSpace(tuple(refs), where)


def KernelDimensions(InPlanes: int, W: int, H: int, OutPlanes: int) -> V2Dims:
    """v2: the kernel's input/output plane counts and default plane size."""
    return V2Dims(InPlanes, W, H, OutPlanes, caller_where())


def KernelOuterDimensions(InPlanes: int, OutPlanes: int) -> V2Dims:
    """v2 shortcut for KernelDimensions when every argument gives its own W and H."""
    return V2Dims(InPlanes, 0, 0, OutPlanes, caller_where())


def KernelIterationOrder(IterDim, *Iterators) -> V2Order:
    """v2: ``KernelIterationOrder(KER_DIMn, iterators...)`` (n one more than the iterators) or
    the count form ``KernelIterationOrder(k, k iterators...)``."""
    where = caller_where()
    if isinstance(IterDim, bool) or not isinstance(IterDim, int):
        raise ModelError(f"KernelIterationOrder: {IterDim!r} is not a dimension (KER_DIMn) or a count", where=where,
                         hint="e.g. KernelIterationOrder(KER_DIM2, KER_TILE)")
    its = tuple(_space_id(i, "iterator", where) for i in Iterators)
    first = IterDim if isinstance(IterDim, KernelIterationDimT) else int(IterDim)
    return V2Order(first, its, where)


# ----------------------------------------------------------------------------------------------
# Kernel arguments


def _obj_type(value, where: str, name) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ModelError(f"invalid object type {value!r}", where=where, arg=str(name),
                         hint="use OBJ_* names or O_* flags")
    return int(value)


def _constraint(value, where: str, name) -> int:
    value = value or 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ModelError(f"invalid constraint {value!r}", where=where, arg=str(name),
                         hint="use OBJ_CONSTRAINTS_* names")
    return int(value)


def _pad(value, what: str, where: str, name) -> Pad:
    """A v4s padding given as (left, right, top, bottom), a Pad, or 0."""
    if value in (0, None):
        return Pad()
    if isinstance(value, Pad):
        return value
    if isinstance(value, (tuple, list)) and len(value) == 4 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                    for v in value):
        if any(v > 127 for v in value):  # the original's v4s; KER_ARG_TILE_PAD passes it as one
            raise ModelError(f"{what} {tuple(value)}: a padding is a v4s, whose items are signed chars (at most 127)",
                             where=where, arg=str(name),
                             hint="pad by 127 items or fewer on each side (a larger padding is a larger plane: "
                             "declare W/H accordingly)")
        return Pad(*value)
    raise ModelError(f"{what} {value!r} must be a v4s: (left, right, top, bottom)", where=where, arg=str(name),
                     hint="four item counts, e.g. (1, 1, 0, 0), or 0 for none")


def _make(ctor: str, p: dict, where: str, space: Optional[ArgSpace], **extra) -> KerArgDecl:
    name = p["KerArgName"]
    decl = KerArgDecl(
        name=name, space=space, obj_type=_obj_type(p["ObjType"], where, name), w=p["W"], h=p["H"],
        item_size=p["ItemSize"], overlap=p.get("TileOverlap", 0), constraints=_constraint(p.get("Constraint"), where, name),
        preferred=p.get("PreferedTileSize", 0) or 0, carg_name=name_or_none(p.get("CArgName")),
        next_plane_update=p.get("NextPlaneUpdate", 0) or 0, ctor=ctor, where=where, **extra)
    validate_kerarg_fields(decl)
    return decl


_TAIL_V3 = ("ItemSize", ("TileOverlap", 0), ("Constraint", 0), ("PreferedTileSize", 0), ("CArgName", None))
_TAIL_V2 = _TAIL_V3 + (("NextPlaneUpdate", 0),)


def _is_v3(args: tuple, kwargs: dict) -> bool:
    second = args[1] if len(args) > 1 else kwargs.get("KerArgSpace")
    return isinstance(second, ArgSpace)


def KerArg(*args, **kwargs) -> KerArgDecl:
    """v3: ``KerArg(KerArgName, KerArgSpace, ObjType, W, H, ItemSize, TileOverlap, Constraint,
    PreferedTileSize, CArgName)``; v2: ``KerArg(KerArgName, ObjType, W, H, ItemSize, TileOverlap,
    Constraint, PreferedTileSize, CArgName, NextPlaneUpdate)``."""
    where = caller_where()
    if _is_v3(args, kwargs):
        p = bind("KerArg", ("KerArgName", "KerArgSpace", "ObjType", "W", "H") + _TAIL_V3, args, kwargs, where)
        return _make("KerArg", p, where, p["KerArgSpace"])
    p = bind("KerArg", ("KerArgName", "ObjType", "W", "H") + _TAIL_V2, args, kwargs, where)
    return _make("KerArg", p, where, None)


def KerArgP(*args, **kwargs) -> KerArgDecl:
    """v3: ``KerArgP(KerArgName, KerArgSpace, ObjType, W, H, UsedW, UsedH, PadTile, PadExec,
    ItemSize, TileOverlap, Constraint, PreferedTileSize, CArgName)`` (pads as (left, right, top,
    bottom)); v2: ``KerArgP(KerArgName, ObjType, W, H, PadL, PadR, PadT, PadB, ItemSize, ...,
    CArgName, NextPlaneUpdate)``."""
    where = caller_where()
    if _is_v3(args, kwargs):
        p = bind("KerArgP", ("KerArgName", "KerArgSpace", "ObjType", "W", "H", "UsedW", "UsedH", "PadTile", "PadExec")
                 + _TAIL_V3, args, kwargs, where)
        return _make("KerArgP", p, where, p["KerArgSpace"], used_w=p["UsedW"], used_h=p["UsedH"],
                     pad_tile=_pad(p["PadTile"], "PadTile", where, p["KerArgName"]),
                     pad_exec=_pad(p["PadExec"], "PadExec", where, p["KerArgName"]))
    p = bind("KerArgP", ("KerArgName", "ObjType", "W", "H", "PadL", "PadR", "PadT", "PadB") + _TAIL_V2, args, kwargs,
             where)
    pad = _pad((p["PadL"], p["PadR"], p["PadT"], p["PadB"]), "padding", where, p["KerArgName"])
    return _make("KerArgP", p, where, None, pad_tile=pad, pad_exec=pad)


def KerArgPV(*args, **kwargs) -> KerArgDecl:
    """``KerArgPV(KerArgName, KerArgSpace, ObjType, W, H, UsedW, UsedH, PadTile, PadExec,
    PadValue, ItemSize, TileOverlap, Constraint, PreferedTileSize, CArgName)``: KerArgP with the
    value the padding stands for (recorded for the basic kernels' documentation; the tiler never
    materialises padding)."""
    where = caller_where()
    p = bind("KerArgPV", ("KerArgName", "KerArgSpace", "ObjType", "W", "H", "UsedW", "UsedH", "PadTile", "PadExec",
                          "PadValue") + _TAIL_V3, args, kwargs, where)
    return _make("KerArgPV", p, where, p["KerArgSpace"], used_w=p["UsedW"], used_h=p["UsedH"],
                 pad_tile=_pad(p["PadTile"], "PadTile", where, p["KerArgName"]),
                 pad_exec=_pad(p["PadExec"], "PadExec", where, p["KerArgName"]),
                 pad_value=int_arg(p["PadValue"], "PadValue", where, arg=p["KerArgName"]))


def KerArgPBuff(*args, **kwargs) -> KerArgDecl:
    """``KerArgPBuff(KerArgName, KerArgSpace, ObjType, W, H, UsedW, UsedH, BottomBuffer,
    TopBuffer, PadTile, PadExec, ItemSize, TileOverlap, Constraint, PreferedTileSize, CArgName)``."""
    where = caller_where()
    p = bind("KerArgPBuff", ("KerArgName", "KerArgSpace", "ObjType", "W", "H", "UsedW", "UsedH", "BottomBuffer",
                             "TopBuffer", "PadTile", "PadExec") + _TAIL_V3, args, kwargs, where)
    return _make("KerArgPBuff", p, where, p["KerArgSpace"], used_w=p["UsedW"], used_h=p["UsedH"],
                 bottom=p["BottomBuffer"], top=p["TopBuffer"],
                 pad_tile=_pad(p["PadTile"], "PadTile", where, p["KerArgName"]),
                 pad_exec=_pad(p["PadExec"], "PadExec", where, p["KerArgName"]))


def KerArgPad(*args, **kwargs) -> KerArgDecl:
    """v3: ``KerArgPad(KerArgName, KerArgSpace, ObjType, W, H, BottomBuffer, TopBuffer, ItemSize,
    TileOverlap, Constraint, PreferedTileSize, CArgName)``: BottomBuffer (TopBuffer) items kept
    before (after) each tile in L1 -- a delay line; v2: the same without the space, plus
    NextPlaneUpdate."""
    where = caller_where()
    if _is_v3(args, kwargs):
        p = bind("KerArgPad", ("KerArgName", "KerArgSpace", "ObjType", "W", "H", "BottomBuffer", "TopBuffer")
                 + _TAIL_V3, args, kwargs, where)
        return _make("KerArgPad", p, where, p["KerArgSpace"], bottom=p["BottomBuffer"], top=p["TopBuffer"])
    p = bind("KerArgPad", ("KerArgName", "ObjType", "W", "H", "BottomBuffer", "TopBuffer") + _TAIL_V2, args, kwargs,
             where)
    return _make("KerArgPad", p, where, None, bottom=p["BottomBuffer"], top=p["TopBuffer"])


def KerArgPart(*args, **kwargs) -> KerArgDecl:
    """v3: ``KerArgPart(KerArgName, KerArgSpace, ObjType, W, UsedW, H, UsedH, ItemSize,
    TileOverlap, Constraint, PreferedTileSize, CArgName)`` (note W, UsedW, H, UsedH); v2: the same
    without the space, plus NextPlaneUpdate."""
    where = caller_where()
    head = ("W", "UsedW", "H", "UsedH")
    if _is_v3(args, kwargs):
        p = bind("KerArgPart", ("KerArgName", "KerArgSpace", "ObjType") + head + _TAIL_V3, args, kwargs, where)
        return _make("KerArgPart", p, where, p["KerArgSpace"], used_w=p["UsedW"], used_h=p["UsedH"])
    p = bind("KerArgPart", ("KerArgName", "ObjType") + head + _TAIL_V2, args, kwargs, where)
    return _make("KerArgPart", p, where, None, used_w=p["UsedW"], used_h=p["UsedH"])


def KerArgPadAlign(*args, **kwargs) -> KerArgDecl:
    """``KerArgPadAlign(KerArgName, KerArgSpace, ObjType, W, H, TileWPadAlign, ItemSize,
    RawItemSize, TileOverlap, Constraint, PreferedTileSize, CArgName)``."""
    where = caller_where()
    p = bind("KerArgPadAlign", ("KerArgName", "KerArgSpace", "ObjType", "W", "H", "TileWPadAlign", "ItemSize",
                                "RawItemSize", ("TileOverlap", 0), ("Constraint", 0), ("PreferedTileSize", 0),
                                ("CArgName", None)), args, kwargs, where)
    if p["TileWPadAlign"]:
        raise ModelError("KerArgPadAlign with a TileWPadAlign is not supported yet (tile lines longer in L1 than in "
                         "L2 need a strided L1 side, which the cluster DMA does not have)", where=where,
                         arg=p["KerArgName"], hint="use KerArg, or align W yourself")
    return _make("KerArgPadAlign", p, where, p["KerArgSpace"], raw_item_size=p["RawItemSize"])


def KerArgAliased(*args, **kwargs) -> KerArgDecl:
    """``KerArgAliased(KerArgName, KerArgSpace, Alias, ObjType, W, H, ...)``: refused for now."""
    where = caller_where()
    p = bind("KerArgAliased", ("KerArgName", "KerArgSpace", "Alias", "ObjType", "W", "H") + _TAIL_V3, args, kwargs,
             where)
    raise ModelError("KerArgAliased (arguments sharing L1 memory, O_ALIAS) is not supported yet", where=where,
                     arg=p["KerArgName"], hint="declare a separate argument")


def _v2_refused(name: str):
    def ctor(*args, **kwargs):
        raise ModelError(f"{name} (v2 strided/3D argument) is not supported yet", where=caller_where(),
                         hint="declare the planes as a space: KerArg with O_3D in the v2 form, or KerArgSpace in v3")
    ctor.__name__ = name
    ctor.__doc__ = f"v2 ``{name}``: refused (not supported yet)."
    return ctor


KerArg2D = _v2_refused("KerArg2D")
KerArg3D = _v2_refused("KerArg3D")
KerArg2DP = _v2_refused("KerArg2DP")
KerArg3DP = _v2_refused("KerArg3DP")


def KerArgs(*args) -> tuple:
    """Kernel arguments, or a kernel group's (KerGroupArg: the original's KerArgs takes both)."""
    return counted("KerArgs", args, (KerArgDecl, KerGroupArgDecl), caller_where())


def AllocateKerArgs(KerArgCount: int) -> list:
    return [None] * int_arg(KerArgCount, "AllocateKerArgs count", caller_where(), minimum=0)


def SetKerArgMinTileSize(Obj: KerArgDecl, MinTileSize: int) -> None:
    """The smallest tile the argument accepts along its tiled dimension (needs a
    PreferedTileSize). Call it before the argument is used in a UserKernel."""
    where = caller_where()
    if not isinstance(Obj, KerArgDecl):
        raise ModelError(f"SetKerArgMinTileSize expects a kernel argument, got {describe(Obj)}", where=where,
                         hint="pass the object KerArg(...) returned")
    if id(Obj) in current_model().used_objects:
        raise ModelError("SetKerArgMinTileSize on an argument already part of a user kernel", where=where,
                         arg=Obj.name, hint="set it before passing the argument to UserKernel")
    size = int_arg(MinTileSize, "MinTileSize", where, arg=Obj.name, minimum=0)
    if size and not Obj.preferred:
        raise ModelError("SetKerArgMinTileSize needs a PreferedTileSize", where=where, arg=Obj.name,
                         hint=f"the minimum applies to the preferred multiple: give '{Obj.name}' a PreferedTileSize")
    object.__setattr__(Obj, "min_tile", size)  # checked first: a refused minimum leaves the argument as it was


def KerGroupArg(KerArgName: str, ObjType, ArgSize: int, ItemSize: int, CArgName: Optional[str] = None):
    """An argument of a kernel group (O_IN / O_OUT, ArgSize items of ItemSize bytes)."""
    where = caller_where()
    check_name(KerArgName, "kernel group argument", where)
    t = _obj_type(ObjType, where, KerArgName)
    if not t & (Object_Type_T.O_IN | Object_Type_T.O_OUT):
        raise ModelError("a kernel group argument is O_IN or O_OUT", where=where, arg=KerArgName,
                         hint="use O_IN, O_OUT or O_IN|O_OUT")
    carg = name_or_none(CArgName)
    if carg is not None:
        check_name(carg, "C argument", where, arg=KerArgName)
    return KerGroupArgDecl(KerArgName, t, int_arg(ArgSize, "ArgSize", where, arg=KerArgName, minimum=1),
                           int_arg(ItemSize, "ItemSize", where, arg=KerArgName, minimum=1), carg, where)


# ----------------------------------------------------------------------------------------------
# Bindings


def _select(value, where: str):
    return enum(KernelArgSelect_T, value, "kernel argument selector", where)


def _oper(value, where: str, ctor: str) -> str:
    """A binding operator; ``'@'`` (subscript) only for K_TileOper, the one binding with an item
    type to subscript with."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 256:
        value = chr(value)
    op = {"=": "==", "<": "<<", ">": ">>"}.get(value, value) if isinstance(value, str) else value
    if op == "@" and ctor != "K_TileOper":
        raise ModelError(f"{ctor}: operator '@' (subscript) belongs to K_TileOper", where=where,
                         hint="use one of " + " ".join(BINDING_OPERS))
    if op not in BINDING_OPERS + ("@",):
        raise ModelError(f"{value!r} is not a binding operator", where=where,
                         hint="use one of " + " ".join(BINDING_OPERS) + " (and '@' for K_TileOper)")
    return op


def _karg(name, ctor: str, where: str) -> str:
    """The kernel-argument name of a K_Arg* binding (checked here: a non-string would only fail
    deep in the validation's suggestions)."""
    return check_name(name, f"{ctor} kernel argument", where)


def _cname(name, ctor: str, where: str) -> str:
    return check_name(name, f"{ctor} C argument", where)


def K_Arg(KerArgName: str, ArgSelect) -> KArgBinding:
    where = caller_where()
    return KArgBinding(_karg(KerArgName, "K_Arg", where), _select(ArgSelect, where), where=where)


def K_ArgOp(KerArgName: str, ArgSelect, Oper, Value: int) -> KArgBinding:
    """A property of a kernel argument combined with an immediate (``K_ArgOperSel``; the v2 ``K_ArgOper``)."""
    where = caller_where()
    return KArgBinding(_karg(KerArgName, "K_ArgOp", where), _select(ArgSelect, where), None,
                       _oper(Oper, where, "K_ArgOp"), int_arg(Value, "K_ArgOp value", where), "K_ArgOp", where)


K_ArgOperSel = K_ArgOp


def _space_or_select(value, where: str):
    """K_ArgOper's second argument: a space (v3, KernelIteratorT) or a selector (v2). A plain
    int is a selector, as in the guide; one that is neither is named as both."""
    if isinstance(value, KernelIteratorT):
        return value
    if isinstance(value, KernelArgSelect_T) or (isinstance(value, int) and not isinstance(value, bool)
                                                and value in KernelArgSelect_T._value2member_map_):
        return KernelArgSelect_T(value)
    raise ModelError(f"{value!r} is not a valid space (KER_ITER_*) nor kernel argument selector (KER_ARG_*)",
                     where=where, hint="K_ArgOper(Name, Space, Oper, Value) takes a KER_ITER_* space (v3) or, in "
                     "the guide's v2 form, a KER_ARG_* selector")


def K_ArgOper(KerArgName: str, Sel, Oper, Value: int) -> KArgBinding:
    """v3 ``K_ArgOper(Name, KernelIteratorT, Oper, Value)``: the index of a space combined with an
    immediate; the v2 form ``K_ArgOper(Name, KernelArgSelect_T, Oper, Value)`` is K_ArgOp."""
    where = caller_where()
    name, sel = _karg(KerArgName, "K_ArgOper", where), _space_or_select(Sel, where)
    oper, value = _oper(Oper, where, "K_ArgOper"), int_arg(Value, "K_ArgOper value", where)
    if isinstance(sel, KernelIteratorT):
        return KArgBinding(name, KernelArgSelect_T.KER_ARG_IT_INDEX, sel, oper, value, "K_ArgOper", where)
    return KArgBinding(name, sel, None, oper, value, "K_ArgOper", where)


def K_ArgPar(KerArgName: str, ArgSelect, ItSpace) -> KArgBinding:
    where = caller_where()
    return KArgBinding(_karg(KerArgName, "K_ArgPar", where), _select(ArgSelect, where),
                       _space_id(ItSpace, "space", where), ctor="K_ArgPar", where=where)


def K_ArgParOper(KerArgName: str, ArgSelect, ItSpace, Oper, Value: int) -> KArgBinding:
    where = caller_where()
    return KArgBinding(_karg(KerArgName, "K_ArgParOper", where), _select(ArgSelect, where),
                       _space_id(ItSpace, "space", where), _oper(Oper, where, "K_ArgParOper"),
                       int_arg(Value, "K_ArgParOper value", where), "K_ArgParOper", where)


def K_ArgPred(KerArgName: str, ArgSelect, ItSpace) -> KArgBinding:
    where = caller_where()
    name, sel = _karg(KerArgName, "K_ArgPred", where), _select(ArgSelect, where)
    if sel not in (KernelArgSelect_T.KER_ARG_TILEFIRST, KernelArgSelect_T.KER_ARG_TILELAST):
        raise ModelError(f"K_ArgPred takes KER_ARG_TILEFIRST or KER_ARG_TILELAST, not {sel.name}", where=where,
                         arg=name, hint="for other values of the argument use K_Arg or K_ArgPar")
    return KArgBinding(name, sel, _space_id(ItSpace, "space", where), ctor="K_ArgPred", where=where)


def K_ArgPredList(Conj, N: int, *Preds) -> PredListBinding:
    where = caller_where()
    conj = enum(ArgBindingT, Conj, "predicate conjunction (BIND_PRED_AND/BIND_PRED_OR)", where)
    if conj not in (ArgBindingT.BIND_PRED_AND, ArgBindingT.BIND_PRED_OR):
        raise ModelError("K_ArgPredList takes BIND_PRED_AND or BIND_PRED_OR", where=where,
                         hint=f"{conj.name} is not a conjunction: use BIND_PRED_AND (&&) or BIND_PRED_OR (||)")
    n = int_arg(N, "K_ArgPredList count", where, minimum=0)
    if n != len(Preds):
        raise ModelError(f"K_ArgPredList announces {n} predicate(s) but {len(Preds)} follow", where=where,
                         hint=f"pass {len(Preds)} as the count")
    return PredListBinding("&&" if conj == ArgBindingT.BIND_PRED_AND else "||", tuple(Preds), where)


def K_TileOper(KerArgName: str, ArgAccessType: str, Oper, Value: int) -> TileOperBinding:
    where = caller_where()
    name = _karg(KerArgName, "K_TileOper", where)
    if not isinstance(ArgAccessType, str) or "*" not in ArgAccessType:
        raise ModelError(f"K_TileOper's access type must be a C pointer type, got {ArgAccessType!r}", where=where,
                         arg=name, hint="e.g. \"char *\": the tile pointer is cast to it before the operator")
    return TileOperBinding(name, " ".join(ArgAccessType.split()), _oper(Oper, where, "K_TileOper"),
                           int_arg(Value, "K_TileOper value", where), where)


def C_Arg(ArgName: str) -> CArgBinding:
    where = caller_where()
    return CArgBinding(_cname(ArgName, "C_Arg", where), where=where)


def C_ArgPlusImmOffset(ArgName: str, Offset: int) -> CArgBinding:
    where = caller_where()
    return CArgBinding(_cname(ArgName, "C_ArgPlusImmOffset", where), CArgForm.PLUS_IMM, "+",
                       int_arg(Offset, "C_ArgPlusImmOffset offset", where), where=where)


def C_ArgImmOper(ArgName: str, Oper, Value: int) -> CArgBinding:
    where = caller_where()
    return CArgBinding(_cname(ArgName, "C_ArgImmOper", where), CArgForm.ARG_OPER, _oper(Oper, where, "C_ArgImmOper"),
                       int_arg(Value, "C_ArgImmOper value", where), where=where)


def C_ImmArgOper(Value: int, Oper, ArgName: str) -> CArgBinding:
    where = caller_where()
    return CArgBinding(_cname(ArgName, "C_ImmArgOper", where), CArgForm.IMM_OPER, _oper(Oper, where, "C_ImmArgOper"),
                       int_arg(Value, "C_ImmArgOper value", where), where=where)


def C_ArgCOper(ArgName: str, Oper, Cvar: str) -> CArgBinding:
    where = caller_where()
    return CArgBinding(_cname(ArgName, "C_ArgCOper", where), CArgForm.ARG_COPER, _oper(Oper, where, "C_ArgCOper"),
                       cvar=_cname(Cvar, "C_ArgCOper", where), where=where)


def C_ArgPlusCvarOffset(ArgName: str, Cvar: str) -> CArgBinding:
    where = caller_where()
    return CArgBinding(_cname(ArgName, "C_ArgPlusCvarOffset", where), CArgForm.PLUS_CVAR,
                       cvar=_cname(Cvar, "C_ArgPlusCvarOffset", where), where=where)


def C_ArgPlusPlaneOffset(ArgName: str, Sel, Mult: int) -> CArgBinding:
    where = caller_where()
    return CArgBinding(_cname(ArgName, "C_ArgPlusPlaneOffset", where), CArgForm.PLUS_PLANE,
                       value=int_arg(Mult, "C_ArgPlusPlaneOffset Mult", where),
                       space=_space_id(Sel, "iterator", where), where=where)


def C_ArgIndex(ArgName: str, Sel, Mult: int) -> CArgBinding:
    where = caller_where()
    return CArgBinding(_cname(ArgName, "C_ArgIndex", where), CArgForm.INDEX,
                       value=int_arg(Mult, "C_ArgIndex Mult", where), space=_space_id(Sel, "iterator", where),
                       where=where)


def C_ArgIndirect(ArgName: str, Offset: int) -> CArgBinding:
    where = caller_where()
    return CArgBinding(_cname(ArgName, "C_ArgIndirect", where), CArgForm.INDIRECT,
                       value=int_arg(Offset, "C_ArgIndirect offset", where), where=where)


def KG_ArgOper(ArgName: str, Oper, Value: int) -> CArgBinding:
    """In a kernel group: ``'*'`` passes ``Arg + Iter*Value`` (Iter: the group's iteration), other
    operators ``Arg Oper Value``."""
    where = caller_where()
    return CArgBinding(_cname(ArgName, "KG_ArgOper", where), CArgForm.GROUP_OPER, _oper(Oper, where, "KG_ArgOper"),
                       int_arg(Value, "KG_ArgOper value", where), where=where)


def Imm(Value: int) -> ImmBinding:
    where = caller_where()
    return ImmBinding(int_arg(Value, "Imm value", where), where)


def KerDim(Dim) -> KerDimBinding:
    where = caller_where()
    return KerDimBinding(int(enum(KernelDimT, Dim, "kernel dimension (K_INP, K_OUTP, K_W, K_H)", where)), where)


def Ker_IteratorIndex(Sel) -> IterIndexBinding:
    where = caller_where()
    return IterIndexBinding(_space_id(Sel, "iterator", where), where)


def UserSymb(Name: str) -> UserSymbBinding:
    return UserSymbBinding(Name, caller_where())


def BindKExpr(Expr: str) -> ExprBinding:
    return ExprBinding(str(Expr), False, caller_where())


def BindKGExpr(Expr: str) -> ExprBinding:
    return ExprBinding(str(Expr), True, caller_where())


_BINDINGS = (KArgBinding, TileOperBinding, PredListBinding, CArgBinding, ImmBinding, KerDimBinding, IterIndexBinding,
             UserSymbBinding, ExprBinding, NodeArgDecl)  # NodeArgDecl: GNodeArg & co, for AddNode


def Bindings(*args) -> tuple:
    where = caller_where()
    count, items = (args[0], args[1:]) if args and isinstance(args[0], int) and not isinstance(args[0], bool) \
        else (None, args)
    if len(items) == 1 and isinstance(items[0], (list, tuple)) and count is None:
        items = tuple(items[0])
    if count is not None and count != len(items):
        raise ModelError(f"Bindings({count}, ...) announces {count} item(s) but {len(items)} follow", where=where,
                         hint=f"write Bindings({len(items)}, ...) or drop the count")
    out = []
    for b in items:
        if b is AT_NO_ARG_BINDING:
            continue
        if b is not AT_IGNORE_ARG_BINDING and not isinstance(b, _BINDINGS):
            raise ModelError(f"Bindings expects bindings, got {b!r}", where=where,
                             hint="use K_Arg, C_Arg, Imm, ... or AT_IGNORE_ARG_BINDING")
        out.append(b)
    return tuple(out)


def _bindings(value, call: str, where: str) -> tuple:
    """A call's binding list: Bindings(...) (a tuple), a Python list, or 0/None for none."""
    if value in (0, None):
        return ()
    if not isinstance(value, (tuple, list)):
        raise ModelError(f"call to '{call}': the binding list must be Bindings(...), got {describe(value)}",
                         where=where, hint="wrap the bindings: Bindings(K_Arg(...), C_Arg(...), Imm(...), ...)")
    return tuple(value)


def Call(CallName: str, CallLocation, BindingList: tuple) -> CallDecl:
    where = caller_where()
    name = check_name(CallName, "called basic kernel", where)
    loc = enum(KernelCallLocationT, CallLocation, "call location", where)
    return CallDecl(name, loc, _bindings(BindingList, name, where), False, where)


def UserKernelCall(CallName: str, CallLocation, BindingList: tuple) -> CallDecl:
    where = caller_where()
    name = check_name(CallName, "called user kernel", where)
    loc = enum(KernelCallLocationT, CallLocation, "call location", where)
    if loc != KernelCallLocationT.LOC_GROUP:
        raise ModelError(f"UserKernelCall('{name}') must use LOC_GROUP, not {loc.name}", where=where,
                         hint="calls inside a kernel group have no iteration: use LOC_GROUP")
    return CallDecl(name, loc, _bindings(BindingList, name, where), True, where)


def Calls(*args) -> tuple:
    return counted("Calls", args, CallDecl, caller_where())


def AllocateCalls(CallCount: int) -> list:
    return [None] * int_arg(CallCount, "AllocateCalls count", caller_where(), minimum=0)


__all__ = [
    "TCArg", "CArgs", "AllocateCArgs", "LibKernelTemplate", "KerTypeTemplate", "LibKernel", "IterTiledSpace",
    "IterFixedSpace", "IterParSpace", "IterFixedSpaceDynBound", "KernelIterSpace", "KerArgSpace", "KernelDimensions",
    "KernelOuterDimensions", "KernelIterationOrder", "KerArg", "KerArgP", "KerArgPV", "KerArgPBuff", "KerArgPad",
    "KerArgPart", "KerArgPadAlign", "KerArgAliased", "KerArg2D", "KerArg3D", "KerArg2DP", "KerArg3DP", "KerArgs",
    "AllocateKerArgs", "SetKerArgMinTileSize", "KerGroupArg", "K_Arg", "K_ArgOp", "K_ArgOperSel", "K_ArgOper",
    "K_ArgPar", "K_ArgParOper", "K_ArgPred", "K_ArgPredList", "K_TileOper", "C_Arg", "C_ArgPlusImmOffset",
    "C_ArgImmOper", "C_ImmArgOper", "C_ArgCOper", "C_ArgPlusCvarOffset", "C_ArgPlusPlaneOffset", "C_ArgIndex",
    "C_ArgIndirect", "KG_ArgOper", "Imm", "KerDim", "Ker_IteratorIndex", "UserSymb", "BindKExpr", "BindKGExpr",
    "Bindings", "Call", "UserKernelCall", "Calls", "AllocateCalls", "AT_NO_ARG_BINDING", "AT_IGNORE_ARG_BINDING",
]
