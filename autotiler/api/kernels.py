"""User kernels and kernel groups: declared, validated, tiled and recorded in the current model."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ..constants import AT_KernelInfo_T, KernelIteratorT, Object_Type_T, Tile_Orientation_T
from ..errors import ModelError, TilingError
from ..model.ir import (
    CallDecl,
    CArg,
    KerArgDecl,
    KerGroupArgDecl,
    KernelGroupDecl,
    KernelSpace,
    UserKernelDecl,
    caller_where,
)
from ..model.session import Model, current_model
from ..model.v2 import V2Dims, V2Order, translate
from ..model.validate import check_name, suggest, validate_group, validate_user_kernel
from ..objectives import solve, solve_options
from ..schedule.cost import check_platform_cost
from ..tiler.tiling import ArgTiling, KernelTiling
from .common import (
    bind,
    check_function_name,
    check_group_c_names,
    check_kernel_c_names,
    describe,
    enum,
    int_arg,
    listed,
)

_V3 = ("Name", "KerIter", "Orientation", "CArg", "CCalls", "KerArg")
_V2 = ("TemplateName", "KerDim", "KerIter", "Orientation", "CArg", "CCalls", "KerArg")


def UserKernel(*args, **kwargs) -> Optional[KernelTiling]:
    """Declare and tile a user kernel: v3 ``UserKernel(Name, KernelIterSpace(...), Orientation,
    CArgs, Calls, KerArgs)`` or the guide's v2 ``UserKernel(TemplateName, KernelDimensions(...),
    KernelIterationOrder(...), Orientation, CArgs, Calls, KerArgs)``. Returns the tiling, or None
    when no tiling exists and AT_KERNEL_NOSOLUTION_ERROR is off (the original returns NULL)."""
    where = caller_where()
    v2 = len(args) + len(kwargs) == 7 or "KerDim" in kwargs or "TemplateName" in kwargs
    p = bind("UserKernel", _V2 if v2 else _V3, args, kwargs, where)
    name = p["TemplateName" if v2 else "Name"]
    model = current_model()
    check_name(name, "user kernel", where)
    model.check_new_function_name(name, where)
    check_function_name(model, name, where)
    orient = enum(Tile_Orientation_T, p["Orientation"], "tile orientation (TILE_HOR/TILE_VER)", where, name)
    cargs = listed("CArgs", p["CArg"], CArg, where, name)
    calls = listed("Calls", p["CCalls"], CallDecl, where, name)
    kerargs = listed("KerArgs", p["KerArg"], KerArgDecl, where, name)
    form = None
    if v2:
        dims, order = p["KerDim"], p["KerIter"]
        if dims in (0, None):
            dims = V2Dims(0, 0, 0, 0, where)
        if not isinstance(dims, V2Dims) or not isinstance(order, V2Order):
            raise ModelError("the v2 form expects KernelDimensions(...) and KernelIterationOrder(...) as 2nd and 3rd "
                             "arguments", where=where, kernel=name,
                             hint="or use the v3 form UserKernel(Name, KernelIterSpace(...), Orientation, ...)")
        space, kerargs, calls, form = translate(name, dims, order, kerargs, calls)
    else:
        space = p["KerIter"]
        if not isinstance(space, KernelSpace):
            raise ModelError("expects KernelIterSpace(...) as its 2nd argument", where=where, kernel=name,
                             hint="v3: UserKernel(Name, KernelIterSpace(...), Orientation, CArgs, Calls, KerArgs)")
        for a in kerargs:
            if a.space is None:
                raise ModelError("is declared in the v2 form (no KerArgSpace) in a v3 kernel", where=a.where,
                                 kernel=name, arg=a.name,
                                 hint="give its spaces: KerArg(Name, KerArgSpace(1, KER_ITER_TILE0), Type, ...)")
    objective = model.per_kernel_objective.get(name, model.ctrl.objective)
    uk = UserKernelDecl(name, space, orient, cargs, calls, kerargs, model.open_group, form,
                        model.ctrl.options(objective), where)
    validate_user_kernel(uk, model.libs)
    check_kernel_c_names(model, uk)
    return _tile_and_record(model, uk)


def _tile_and_record(model: Model, uk: UserKernelDecl) -> Optional[KernelTiling]:
    p = model.platform
    if model.l1_budget > p.l1_size:
        raise ModelError(f"the L1 budget of {model.l1_budget} bytes exceeds the {p.l1_size} bytes of L1 of platform "
                         f"'{p.name}'", where=uk.where, kernel=uk.name,
                         hint="lower SetL1MemorySize / --L1, or model a chip with more L1: "
                              f"Model(autotiler.platforms.get_platform('{p.name}', l1_size=...))")
    for call in uk.calls:   # the platform's own Cost= of a basic kernel names its formals
        check_platform_cost(p, model.libs[call.name], call.where, uk.name)
    try:
        tiling = solve(uk, solve_options(model, uk))
    except TilingError as err:
        if uk.options.nosolution_error:
            raise
        # AT_KERNEL_NOSOLUTION_ERROR off: the generator probes (e.g. an untiled variant first);
        # the reason is kept, and reported only if no declaration of this name produces code
        model.unsolved[uk.name] = err
        return None
    model.kernels[uk.name] = uk
    model.tilings[uk.name] = tiling
    model.used_objects.update(id(a) for a in uk.kerargs)
    if model.open_group:
        model.group_members[model.open_group].append(uk.name)
    return tiling


def _kernel(name, what: str, where: str) -> UserKernelDecl:
    model = current_model()
    if isinstance(name, KernelTiling):
        name = name.name
    uk = model.kernels.get(name) if isinstance(name, str) else None
    if uk is None:
        raise ModelError(f"{what}: no user kernel named {name!r}", where=where,
                         hint="declare it with UserKernel first" + suggest(str(name), model.kernels))
    return uk


def SetKerArgInL3(Name: str, ArgName: str) -> KernelTiling:
    """Home an argument of an existing user kernel in L3 (O_L2DB) and tile the kernel again."""
    where = caller_where()
    model = current_model()
    uk = _kernel(Name, "SetKerArgInL3", where)
    arg = uk.kerarg(ArgName)
    if arg is None:
        raise ModelError(f"SetKerArgInL3: kernel '{uk.name}' has no argument '{ArgName}'", where=where, kernel=uk.name,
                         hint="arguments: " + ", ".join(a.name for a in uk.kerargs)
                         + suggest(str(ArgName), [a.name for a in uk.kerargs]))
    if not (arg.is_in or arg.is_out):
        raise ModelError(f"SetKerArgInL3: '{arg.name}' is a pure L1 buffer (neither O_IN nor O_OUT): only inputs and "
                         "outputs can be homed in L3", where=where, kernel=uk.name, arg=arg.name,
                         hint="home an input or an output argument of the kernel")
    new = replace(uk, kerargs=tuple(replace(a, obj_type=int(a.obj_type | Object_Type_T.O_L2DB))
                                    if a.name == ArgName else a for a in uk.kerargs))
    try:
        validate_user_kernel(new, model.libs)
    except ModelError as err:  # a consequence of the new home: named at this call
        raise ModelError(f"SetKerArgInL3: {err.message}", where=where, kernel=err.kernel, arg=err.arg,
                         hint=err.hint) from None
    tiling = solve(new, solve_options(model, new))
    model.kernels[uk.name], model.tilings[uk.name] = new, tiling
    return tiling


def home_in_l2(model: Model, name: str, where: str) -> bool:
    """Tile user kernel ``name`` again with every L3-homed (O_L2DB) argument homed in L2: a graph
    node's arguments live where the graph plans them (L2, or L3 RAM through a kernel variant when
    they do not fit), as the original's *_InL3 generator flags are overridden in graph mode.
    False when the kernel has no L3 argument."""
    uk = model.kernels[name]
    if not any(a.in_l3 for a in uk.kerargs):
        return False
    new = replace(uk, kerargs=tuple(replace(a, obj_type=int(a.obj_type & ~Object_Type_T.O_L2DB), l3_device=None)
                                    for a in uk.kerargs))
    try:
        validate_user_kernel(new, model.libs)
        tiling = solve(new, solve_options(model, new))
    except (ModelError, TilingError) as err:
        raise ModelError(f"kernel '{name}' homes arguments in L3 (O_L2DB, a generator's *_InL3 flag); as a graph node "
                         f"they live where the graph plans them, but with them in L2 the kernel cannot be tiled: "
                         f"{err.message}", where=where, kernel=name,
                         hint="give the kernels more L1 (SetL1MemorySize, --L1)") from None
    model.kernels[name], model.tilings[name] = new, tiling
    return True


def _pop(model: Model, name: str, what: str, where: str) -> None:
    """Remove a user kernel, unless a kernel group calls it (its code would call a function that
    is no longer generated)."""
    caller = next((g for g in model.groups.values() if any(c.name == name for c in g.calls)), None)
    if caller is not None:
        raise ModelError(f"{what}: kernel group '{caller.name}' calls '{name}'", where=where, kernel=name,
                         hint=f"pop it before UserKernelGroup('{caller.name}', ...) declares the call, or keep it")
    model.drop_kernel(name)


def PopUserKernel() -> None:
    """Drop the last user kernel declared."""
    where = caller_where()
    model = current_model()
    if not model.kernels:
        raise ModelError("PopUserKernel: no user kernel to pop", where=where,
                         hint="declare it with UserKernel first")
    _pop(model, next(reversed(model.kernels)), "PopUserKernel", where)


def CopyAndPopUserKernel(Kernel) -> KernelTiling:
    """Remove a user kernel from the model and return it (PushBackUserKernel puts it back)."""
    where = caller_where()
    uk = _kernel(Kernel, "CopyAndPopUserKernel", where)
    model = current_model()
    tiling = model.tilings[uk.name]
    _pop(model, uk.name, "CopyAndPopUserKernel", where)
    return tiling


def PushBackUserKernel(Kernel: KernelTiling) -> None:
    where = caller_where()
    if not isinstance(Kernel, KernelTiling):
        raise ModelError(f"PushBackUserKernel expects a kernel returned by CopyAndPopUserKernel, got {describe(Kernel)}",
                         where=where, hint="pass the value CopyAndPopUserKernel returned")
    model = current_model()
    model.check_new_function_name(Kernel.name, where)
    model.kernels[Kernel.name] = Kernel.kernel
    model.tilings[Kernel.name] = Kernel


def ReleaseUserKerne(Kernel) -> None:
    """The original frees a popped kernel (its name lacks the final l); memory is Python's here."""


ReleaseUserKernel = ReleaseUserKerne


def GetKernelTileSize(Kernel, ArgName: str, IterSpace) -> int:
    """The standard tile (lines or columns) of an argument along a tiled space, or its chunk
    along a parametric one."""
    where = caller_where()
    uk = _kernel(Kernel, "GetKernelTileSize", where)
    t = current_model().tilings[uk.name]
    a = next((x for x in t.args if x.name == ArgName), None)
    if a is None:
        names = [x.name for x in t.args]
        raise ModelError(f"GetKernelTileSize: kernel '{uk.name}' has no argument {ArgName!r}", where=where,
                         kernel=uk.name, hint="arguments: " + ", ".join(names) + suggest(str(ArgName), names))
    return _tile_size("GetKernelTileSize", a, IterSpace, where, uk.name)


def GetKernelArgTileSize(Arg, IterSpace) -> int:
    where = caller_where()
    if not isinstance(Arg, ArgTiling):
        raise ModelError(f"GetKernelArgTileSize expects an argument of a kernel's tiling, got {describe(Arg)}",
                         where=where, hint="use GetKernelTileSize(Kernel, ArgName, Space), or pass an element of "
                         "the tiling's .args")
    return _tile_size("GetKernelArgTileSize", Arg, IterSpace, where)


def _tile_size(func: str, a: ArgTiling, IterSpace, where: str, kernel: Optional[str] = None) -> int:
    space = enum(KernelIteratorT, IterSpace, "space", where, kernel)
    d = a.dim(space)
    if d is None:
        spaces = [KernelIteratorT(x.space).name for x in a.dims if x.space is not None]
        raise ModelError(f"{func}: argument '{a.name}' has no space {space.name}", where=where, kernel=kernel,
                         hint="its spaces: " + (", ".join(dict.fromkeys(spaces)) or "none"))
    return d.std if d.iterates else d.only


def AddKernelInfos(Name: str, Info, NumVal: int, Val=None) -> None:
    """Record an operation count (AT_KERINFO_OPER) or a bandwidth (AT_KERINFO_BANDWIDTH) of a
    kernel; reports and the manifest show them."""
    where = caller_where()
    uk = _kernel(Name, "AddKernelInfos", where)
    info = enum(AT_KernelInfo_T, Info, "kernel info (AT_KERINFO_OPER/AT_KERINFO_BANDWIDTH)", where)
    current_model().kernel_infos.setdefault(uk.name, {})[info.name] = (int_arg(NumVal, "NumVal", where), Val)


def _arg_dim(Name: str, ArgName: str, NDim: int, dims: tuple, is_float: bool, where: str) -> None:
    uk = _kernel(Name, "AddKernelArgDim", where)
    if uk.kerarg(ArgName) is None:
        raise ModelError(f"AddKernelArgDim: kernel '{uk.name}' has no argument {ArgName!r}", where=where,
                         kernel=uk.name, hint="arguments: " + ", ".join(a.name for a in uk.kerargs)
                         + suggest(str(ArgName), [a.name for a in uk.kerargs]))
    if NDim == -1:
        dims = tuple(dims[: dims.index(0)]) if 0 in dims else tuple(dims)
    elif NDim != len(dims):
        raise ModelError(f"AddKernelArgDim announces {NDim} dimension(s) but {len(dims)} follow", where=where,
                         kernel=uk.name, arg=ArgName, hint=f"pass {len(dims)} as NDim (or -1 before a 0-terminated list)")
    dims = tuple(int_arg(d, "dimension", where, uk.name, ArgName, minimum=1) for d in dims)
    current_model().arg_dims[(uk.name, ArgName)] = (dims, is_float)


def AddKernelArgDim(Name: str, ArgName: str, NDim: int, *Dims) -> None:
    """Record the logical shape of an argument, outer to inner, the last one its item size."""
    _arg_dim(Name, ArgName, NDim, Dims, False, caller_where())


def AddKernelFloatArgDim(Name: str, ArgName: str, NDim: int, *Dims) -> None:
    _arg_dim(Name, ArgName, NDim, Dims, True, caller_where())


def SetKernelArgInterleave(Name: str, ArgName: str, TileLineInterleave: int) -> None:
    raise ModelError("SetKernelArgInterleave (re-laid-out constant arguments) is not supported yet",
                     where=caller_where(), kernel=str(Name), arg=str(ArgName),
                     hint="drop the call: the argument keeps its layout")


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
    check_function_name(model, GroupName, where)
    if GroupName in model.group_members:  # reopening would forget the kernels declared in it
        raise ModelError(f"kernel group '{GroupName}' was already opened at {model.group_where[GroupName]}",
                         where=where, kernel=GroupName, hint="give each group its own name")
    model.open_group, model.open_group_where = GroupName, where
    model.group_members[GroupName] = []
    model.group_where[GroupName] = where


def _close(keep: bool) -> None:
    where = caller_where()
    model = current_model()
    if not model.open_group:
        raise ModelError("CloseKernelGroup() without OpenKernelGroup()", where=where,
                         hint="open the group with OpenKernelGroup(name) before its user kernels")
    model.keep_group[model.open_group] = keep
    model.open_group = None


def CloseKernelGroup() -> None:
    _close(current_model().ctrl.keep_group)


def CloseKernelGroupNoMerge() -> None:
    """Close the group, keeping its kernels together when a graph expands it (KER_OPT_KEEP_GROUP)."""
    _close(True)


def _group(GroupName: str, iterations: int, cargs, calls, kerargs, where: str) -> KernelGroupDecl:
    model = current_model()
    check_name(GroupName, "kernel group", where)
    if GroupName not in model.group_members:
        raise ModelError(f"no kernel group '{GroupName}' was opened", where=where, kernel=GroupName,
                         hint="bracket its user kernels with OpenKernelGroup/CloseKernelGroup first")
    if model.open_group == GroupName:
        raise ModelError("the group is still open", where=where, kernel=GroupName,
                         hint="call CloseKernelGroup() before UserKernelGroup(...)")
    if GroupName in model.groups:
        raise ModelError("the group's C template is already defined", where=where, kernel=GroupName,
                         hint="declare UserKernelGroup once per group")
    group = KernelGroupDecl(GroupName, listed("CArgs", cargs, CArg, where, GroupName),
                            listed("Calls", calls, CallDecl, where, GroupName), iterations,
                            listed("KerGroupArgs", kerargs, KerGroupArgDecl, where, GroupName), where)
    members = {n: model.kernels[n] for n in model.group_members[GroupName]}
    validate_group(group, members)
    check_group_c_names(group)
    model.groups[GroupName] = group
    return group


def UserKernelGroup(GroupName: str, CArg: tuple, CCalls: tuple) -> KernelGroupDecl:
    return _group(GroupName, 1, CArg, CCalls, (), caller_where())


def UserKernelGroupK(GroupName: str, IterCount: int, CArg: tuple, StackedTensors, CCalls: tuple,
                     KerArg: tuple = ()) -> KernelGroupDecl:
    """A group whose calls run ``IterCount`` times; ``KG_ArgOper(Arg, '*', V)`` passes
    ``Arg + Iter*V`` (e.g. grouped convolutions). Stacked tensors belong to graphs."""
    where = caller_where()
    if StackedTensors not in (0, None):
        raise ModelError("UserKernelGroupK: stacked tensors are not supported yet", where=where, kernel=GroupName,
                         hint="pass 0")
    return _group(GroupName, int_arg(IterCount, "IterCount", where, GroupName, minimum=1), CArg, CCalls, KerArg, where)


__all__ = [
    "UserKernel", "SetKerArgInL3", "PopUserKernel", "CopyAndPopUserKernel", "PushBackUserKernel", "ReleaseUserKerne",
    "ReleaseUserKernel", "GetKernelTileSize", "GetKernelArgTileSize", "AddKernelInfos", "AddKernelArgDim",
    "AddKernelFloatArgDim", "SetKernelArgInterleave", "OpenKernelGroup", "CloseKernelGroup", "CloseKernelGroupNoMerge",
    "UserKernelGroup", "UserKernelGroupK",
]
