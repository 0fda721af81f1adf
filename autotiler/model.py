"""The model IR: frozen dataclasses for everything a model script declares, and their validation.

Objects are created by the guide-named functions in :mod:`autotiler.api`; each remembers the
model script's ``file:line`` (``where``) so that errors point at the line that declared it.
Validation that needs several objects together (bindings against a basic kernel, kernel
arguments against C arguments) lives in :func:`validate_user_kernel` and
:func:`validate_group`.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Optional, Union

from .constants import (
    FLAG_PAIRS,
    KernelCallTypeT,
    Tile_Orientation_T,
)
from .constants import (
    KernelArgConstraints_T as C,
)
from .constants import (
    KernelArgSelect_T as S,
)
from .constants import (
    KernelCallLocationT as L,
)
from .constants import (
    KernelIterationDimT as D,
)
from .constants import (
    KernelIteratorT as I,
)
from .constants import (
    Object_Type_T as O,
)
from .errors import ModelError

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def caller_where() -> str:
    """``file:line`` of the first stack frame outside the autotiler package (the model script)."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_PACKAGE_DIR + os.sep):
            return f"{_short_path(filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>:0"


def _short_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


# ----------------------------------------------------------------------------------------------
# C arguments and basic kernels


@dataclass(frozen=True)
class CArg:
    """One typed C argument, ``TCArg(type, name)``."""

    ctype: str
    name: str
    where: str = field(default="", compare=False)

    @property
    def is_pointer(self) -> bool:
        return "*" in self.ctype

    @property
    def is_float(self) -> bool:
        return not self.is_pointer and any(t in self.ctype for t in ("float", "double", "f16"))

    @property
    def base_type(self) -> str:
        """The pointed-to type of a pointer argument (``Word32 * __restrict__`` -> ``Word32``)."""
        return self.ctype.split("*")[0].strip()


@dataclass(frozen=True)
class KernelCost:
    """Compute cost of one basic-kernel call, in cycles: a C/Python integer expression over the
    basic kernel's argument names plus ``ncores`` (e.g. ``"W*H/ncores + 20"``)."""

    expr: str


@dataclass(frozen=True)
class LibKernelDecl:
    name: str
    call_type: KernelCallTypeT
    cargs: tuple
    par_type: str
    cost: Optional[KernelCost] = None
    where: str = field(default="", compare=False)

    def carg(self, name: str) -> Optional[CArg]:
        return next((a for a in self.cargs if a.name == name), None)


# ----------------------------------------------------------------------------------------------
# Bindings


@dataclass(frozen=True)
class KArgBinding:
    arg: str
    select: S
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class CArgBinding:
    name: str
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class CArgIndexBinding:
    name: str
    iterator: I
    mult: int
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class ImmBinding:
    value: int
    where: str = field(default="", compare=False)


Binding = Union[KArgBinding, CArgBinding, CArgIndexBinding, ImmBinding]

# Selectors whose value is a pointer (bound to pointer C arguments) vs an unsigned int.
POINTER_SELECTS = frozenset({S.KER_ARG_TILE, S.KER_ARG_TILE_NEXTDB, S.KER_ARG})
SUPPORTED_SELECTS = frozenset({
    S.KER_ARG_TILE, S.KER_ARG, S.KER_ARG_TILE_W, S.KER_ARG_TILE_W0, S.KER_ARG_TILE_H,
    S.KER_ARG_TILE_H0, S.KER_ARG_NTILES, S.KER_ARG_TILEINDEX, S.KER_ARG_TILEOFFSET,
    S.KER_ARG_W, S.KER_ARG_H, S.KER_ARG_TILEFIRST, S.KER_ARG_TILELAST,
})


@dataclass(frozen=True)
class CallDecl:
    """A call to a basic kernel (``Call``) or, in a group, to a user kernel (``UserKernelCall``)."""

    name: str
    location: L
    bindings: tuple
    user_kernel_call: bool = False
    where: str = field(default="", compare=False)


# ----------------------------------------------------------------------------------------------
# User kernels


@dataclass(frozen=True)
class KernelDims:
    nip: int
    w: int
    h: int
    nop: int
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class IterationOrder:
    dim: D
    iterators: tuple
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class KerArgDecl:
    name: str
    obj_type: O
    w: int
    h: int
    item_size: int
    overlap: int
    constraints: C
    preferred: int
    carg_name: Optional[str]
    next_plane_update: int
    where: str = field(default="", compare=False)

    def has(self, flag: O) -> bool:
        return bool(self.obj_type & flag)

    @property
    def is_in(self) -> bool:
        return self.has(O.O_IN)

    @property
    def is_out(self) -> bool:
        return self.has(O.O_OUT)

    @property
    def is_buffer(self) -> bool:
        return self.has(O.O_BUFF)

    @property
    def is_tiled(self) -> bool:
        return self.has(O.O_TILED)

    @property
    def ndim(self) -> int:
        return 4 if self.has(O.O_4D) else 3 if self.has(O.O_3D) else 2

    @property
    def in_l3(self) -> bool:
        """Home in external L3 RAM (O_L2DB): staged through L2 by the micro-DMA."""
        return self.has(O.O_L2DB)


@dataclass(frozen=True)
class UserKernelDecl:
    name: str
    dims: KernelDims
    order: IterationOrder
    orientation: Tile_Orientation_T
    cargs: tuple
    calls: tuple
    kerargs: tuple
    group: Optional[str] = None
    where: str = field(default="", compare=False)

    def kerarg(self, name: str) -> Optional[KerArgDecl]:
        return next((a for a in self.kerargs if a.name == name), None)

    def carg(self, name: str) -> Optional[CArg]:
        return next((a for a in self.cargs if a.name == name), None)

    @property
    def nip(self) -> int:
        """Input planes the iteration space really traverses."""
        return self.dims.nip if I.KER_IN_PLANE in self.order.iterators else 1

    @property
    def nop(self) -> int:
        return self.dims.nop if I.KER_OUT_PLANE in self.order.iterators else 1


@dataclass(frozen=True)
class KernelGroupDecl:
    name: str
    cargs: tuple
    calls: tuple
    where: str = field(default="", compare=False)


# ----------------------------------------------------------------------------------------------
# Validation helpers


def check_name(name, what: str, where: str, kernel: Optional[str] = None) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise ModelError(f"{what} name {name!r} is not a valid C identifier", where=where,
                         kernel=kernel, hint="use letters, digits and '_' only, not starting with a digit")
    return name


def check_positive(value, what: str, where: str, kernel=None, arg=None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ModelError(f"{what} must be a positive integer, got {value!r}", where=where,
                         kernel=kernel, arg=arg, hint=f"give {what} a size of at least 1")
    return value


def check_unique(names, what: str, where: str, kernel=None) -> None:
    seen = set()
    for n in names:
        if n in seen:
            raise ModelError(f"duplicate {what} '{n}'", where=where, kernel=kernel,
                             hint=f"each {what} needs a distinct name")
        seen.add(n)


def check_count(count, items, what: str, where: str, kernel=None) -> tuple:
    """Count-prefixed builders (``CArgs(3, a, b, c)``): the count, when given, must match."""
    if count is not None and count != len(items):
        raise ModelError(f"{what}({count}, ...) announces {count} item(s) but {len(items)} follow",
                         where=where, kernel=kernel,
                         hint=f"write {what}({len(items)}, ...) or drop the count")
    return tuple(items)


# Iteration orders the tiler implements: the guide's "Order 2" (and forms shared by both orders).
ORDER2_FORMS = {
    (D.KER_DIM2, (I.KER_TILE,)),
    (D.KER_DIM3, (I.KER_TILE, I.KER_IN_PLANE)),
    (D.KER_DIM3, (I.KER_OUT_PLANE, I.KER_TILE)),
    (D.KER_DIM4, (I.KER_OUT_PLANE, I.KER_TILE, I.KER_IN_PLANE)),
}
ORDER1_FORMS = {
    (D.KER_DIM3, (I.KER_IN_PLANE, I.KER_TILE)),
    (D.KER_DIM4, (I.KER_OUT_PLANE, I.KER_IN_PLANE, I.KER_TILE)),
}

KERNEL_LOCATIONS = frozenset({
    L.LOC_PROLOG, L.LOC_EPILOG, L.LOC_INNER_LOOP, L.LOC_INNER_LOOP_PROLOG, L.LOC_INNER_LOOP_EPILOG,
    L.LOC_IN_PLANE_PROLOG, L.LOC_IN_PLANE_EPILOG,
})


def validate_order(order: IterationOrder, kernel: str) -> None:
    form = (order.dim, order.iterators)
    if form in ORDER2_FORMS:
        return
    names = ", ".join(i.name for i in order.iterators)
    if form in ORDER1_FORMS:
        raise ModelError(
            f"iteration order 1 ({order.dim.name}, {names}) is not supported", where=order.where,
            kernel=kernel, hint="use iteration order 2, e.g. KernelIterationOrder(KER_DIM4, "
            "KER_OUT_PLANE, KER_TILE, KER_IN_PLANE); the guide notes only order 2 is fully supported")
    raise ModelError(f"KernelIterationOrder({order.dim.name}, {names}) is not a valid iteration order",
                     where=order.where, kernel=kernel,
                     hint="valid: (KER_DIM2, KER_TILE), (KER_DIM3, KER_TILE, KER_IN_PLANE), "
                     "(KER_DIM3, KER_OUT_PLANE, KER_TILE), (KER_DIM4, KER_OUT_PLANE, KER_TILE, KER_IN_PLANE)")


def validate_kerarg(arg: KerArgDecl, kernel: str) -> None:
    w = arg.where
    check_name(arg.name, "kernel argument", w, kernel)
    for what, value in (("W", arg.w), ("H", arg.h), ("ItemSize", arg.item_size)):
        check_positive(value, what, w, kernel, arg.name)
    if not isinstance(arg.overlap, int) or arg.overlap < 0:
        raise ModelError(f"TileOverlap must be >= 0, got {arg.overlap!r}", where=w, kernel=kernel,
                         arg=arg.name, hint="give the number of lines shared by adjacent tiles")
    if not isinstance(arg.preferred, int) or arg.preferred < 0:
        raise ModelError(f"PreferedTileSize must be >= 0, got {arg.preferred!r}", where=w,
                         kernel=kernel, arg=arg.name, hint="use 0 for no preference")
    _validate_flags(arg, kernel)


def _validate_flags(arg: KerArgDecl, kernel: str) -> None:
    w, t = arg.where, arg.obj_type
    for pos, neg in FLAG_PAIRS:
        if t & O[pos] and t & O[neg]:
            raise ModelError(f"object type sets both {pos} and {neg}", where=w, kernel=kernel,
                             arg=arg.name, hint=f"keep only one of {pos} / {neg}")
    if not (t & (O.O_IN | O.O_OUT | O.O_BUFF)):
        raise ModelError("object type is neither an input, an output nor a buffer", where=w,
                         kernel=kernel, arg=arg.name, hint="add O_IN, O_OUT or O_BUFF (or use an OBJ_* name)")
    if t & (O.O_ONETILE | O.O_DYNTILE) and not t & O.O_BUFF:
        flag = "O_ONETILE" if t & O.O_ONETILE else "O_DYNTILE"
        raise ModelError(f"{flag} is a buffer property but O_BUFF is not set", where=w, kernel=kernel,
                         arg=arg.name, hint="use OBJ_BUFFER_ONETILE / OBJ_BUFFER_DYN")
    if t & O.O_ONETILE and t & O.O_DYNTILE:
        raise ModelError("O_ONETILE and O_DYNTILE cannot be combined", where=w, kernel=kernel,
                         arg=arg.name, hint="a buffer is either one tile or one slot per tile")
    if t & O.O_4D and t & O.O_OUT:
        raise ModelError("a 4D argument can only be an input", where=w, kernel=kernel, arg=arg.name,
                         hint="declare outputs as 3D (O_3D): one plane per output plane")
    if t & O.O_4D and not t & O.O_3D:
        raise ModelError("O_4D requires O_3D (a 4D argument is also a 3D one)", where=w, kernel=kernel,
                         arg=arg.name, hint="use OBJ_IN_DB_4D or add O_3D")
    both = C.OBJ_CONSTRAINTS_EVEN | C.OBJ_CONSTRAINTS_ODD
    if arg.constraints & both == both:
        raise ModelError("constraints EVEN and ODD contradict each other", where=w, kernel=kernel,
                         arg=arg.name, hint="keep one of OBJ_CONSTRAINTS_EVEN / OBJ_CONSTRAINTS_ODD")
    hv = C.OBJ_CONSTRAINTS_TILE_HOR | C.OBJ_CONSTRAINTS_TILE_VER
    if arg.constraints & hv == hv:
        raise ModelError("constraints TILE_HOR and TILE_VER contradict each other", where=w,
                         kernel=kernel, arg=arg.name, hint="keep one orientation override")
    if t & O.O_L2DB and not t & (O.O_IN | O.O_OUT):
        raise ModelError("O_L2DB homes an argument in L3, but this one is a pure L1 buffer "
                         "(neither O_IN nor O_OUT): it has no home outside L1", where=w, kernel=kernel,
                         arg=arg.name, hint="drop O_L2DB, or make it an input/output (e.g. OBJ_IN_DB_L2DB)")


def validate_user_kernel(uk: UserKernelDecl, libs: dict) -> None:
    """Everything that can be checked once the whole user kernel is declared."""
    name, w = uk.name, uk.where
    check_name(name, "user kernel", w)
    for what, value in (("InPlanes", uk.dims.nip), ("W", uk.dims.w), ("H", uk.dims.h),
                        ("OutPlanes", uk.dims.nop)):
        check_positive(value, f"KernelDimensions {what}", uk.dims.where or w, name)
    validate_order(uk.order, name)
    for c in uk.cargs:
        check_name(c.name, "C argument", c.where or w, name)
    check_unique([c.name for c in uk.cargs], "C argument", w, name)
    check_unique([a.name for a in uk.kerargs], "kernel argument", w, name)
    for arg in uk.kerargs:
        validate_kerarg(arg, name)
        _validate_kerarg_carg(arg, uk)
    _validate_homes(uk)
    for call in uk.calls:
        _validate_call(call, uk, libs)


def _validate_homes(uk: UserKernelDecl) -> None:
    """A C argument points into one memory: all kernel arguments bound to it agree on L2 or L3."""
    seen = {}
    for a in uk.kerargs:
        if not a.carg_name:
            continue
        other = seen.setdefault(a.carg_name, a)
        if other.in_l3 != a.in_l3:
            l3, l2 = (other, a) if other.in_l3 else (a, other)
            raise ModelError(f"C argument '{a.carg_name}' is bound to '{l3.name}' (home L3, O_L2DB) and to "
                             f"'{l2.name}' (home L2): a pointer lives in one memory", where=a.where,
                             kernel=uk.name, arg=a.name, hint="set O_L2DB on both or on neither")


def _validate_kerarg_carg(arg: KerArgDecl, uk: UserKernelDecl) -> None:
    if not arg.carg_name:
        if arg.in_l3:
            raise ModelError("is homed in L3 (O_L2DB) but has no C argument to point to its L3 data",
                             where=arg.where, kernel=uk.name, arg=arg.name,
                             hint="bind it to a pointer C argument of the user kernel (CArgName)")
        if not arg.is_buffer:
            raise ModelError("has no C argument and is not a buffer", where=arg.where, kernel=uk.name,
                             arg=arg.name, hint="bind it to a C argument of the user kernel "
                             "(CArgName) or declare it as a buffer (O_BUFF)")
        return
    carg = uk.carg(arg.carg_name)
    if carg is None:
        raise ModelError(f"is bound to C argument '{arg.carg_name}', which the user kernel does not declare",
                         where=arg.where, kernel=uk.name, arg=arg.name,
                         hint=f"C arguments are: {', '.join(c.name for c in uk.cargs) or 'none'}")
    if not carg.is_pointer:
        raise ModelError(f"is bound to C argument '{carg.name}' of type '{carg.ctype}', which is not a pointer",
                         where=arg.where, kernel=uk.name, arg=arg.name,
                         hint="kernel arguments live in memory: bind them to pointer C arguments")


def _validate_call(call: CallDecl, uk: UserKernelDecl, libs: dict) -> None:
    if call.user_kernel_call or call.location == L.LOC_GROUP:
        raise ModelError(f"call to '{call.name}' uses LOC_GROUP/UserKernelCall inside a user kernel",
                         where=call.where, kernel=uk.name,
                         hint="user kernel calls belong in UserKernelGroup; use Call(..., LOC_INNER_LOOP, ...)")
    if call.location not in KERNEL_LOCATIONS:
        raise ModelError(f"call location {call.location.name} is not supported", where=call.where,
                         kernel=uk.name, hint="use one of " + ", ".join(sorted(x.name for x in KERNEL_LOCATIONS)))
    lib = libs.get(call.name)
    if lib is None:
        raise ModelError(f"calls unknown basic kernel '{call.name}'", where=call.where, kernel=uk.name,
                         hint="declare it with LibKernel(...) before the user kernel"
                         + _suggest(call.name, libs))
    if len(call.bindings) != len(lib.cargs):
        raise ModelError(f"call to '{call.name}' has {len(call.bindings)} binding(s) but the basic "
                         f"kernel takes {len(lib.cargs)} argument(s)", where=call.where, kernel=uk.name,
                         hint="bind, in order: " + ", ".join(f"{a.name}" for a in lib.cargs))
    for binding, formal in zip(call.bindings, lib.cargs):
        _validate_binding(binding, formal, call, uk)


def _validate_binding(b: Binding, formal: CArg, call: CallDecl, uk: UserKernelDecl) -> None:
    where = b.where or call.where
    ctx = f"binding of '{formal.name}' in call to '{call.name}'"
    if isinstance(b, KArgBinding):
        if uk.kerarg(b.arg) is None:
            raise ModelError(f"{ctx}: K_Arg names unknown kernel argument '{b.arg}'", where=where,
                             kernel=uk.name, hint="kernel arguments are: "
                             + ", ".join(a.name for a in uk.kerargs))
        if b.select not in SUPPORTED_SELECTS:
            raise ModelError(f"{ctx}: selector {b.select.name} is not supported", where=where,
                             kernel=uk.name, arg=b.arg)
        wants_ptr = b.select in POINTER_SELECTS
        if wants_ptr != formal.is_pointer:
            raise ModelError(f"{ctx}: {b.select.name} gives {'a pointer' if wants_ptr else 'an integer'} "
                             f"but '{formal.name}' is '{formal.ctype}'", where=where, kernel=uk.name, arg=b.arg,
                             hint="KER_ARG_TILE/KER_ARG bind pointers; sizes and indexes bind integers")
    elif isinstance(b, (CArgBinding, CArgIndexBinding)):
        carg = uk.carg(b.name)
        if carg is None:
            kind = "C_Arg" if isinstance(b, CArgBinding) else "C_ArgIndex"
            raise ModelError(f"{ctx}: {kind} names unknown C argument '{b.name}'", where=where,
                             kernel=uk.name, hint="C arguments are: " + ", ".join(c.name for c in uk.cargs))
        if isinstance(b, CArgIndexBinding):
            _validate_carg_index(b, carg, ctx, where, uk)


def _validate_carg_index(b: CArgIndexBinding, carg: CArg, ctx: str, where: str, uk) -> None:
    if not carg.is_pointer:
        raise ModelError(f"{ctx}: C_ArgIndex needs a pointer but '{carg.name}' is '{carg.ctype}'",
                         where=where, kernel=uk.name, hint="use C_Arg for scalar arguments")
    if b.iterator not in (I.KER_IN_PLANE, I.KER_OUT_PLANE, I.KER_TILE):
        raise ModelError(f"{ctx}: C_ArgIndex iterator must be KER_IN_PLANE, KER_OUT_PLANE or KER_TILE",
                         where=where, kernel=uk.name)


def validate_group(group: KernelGroupDecl, members: dict) -> None:
    """``members``: name -> UserKernelDecl of the kernels declared inside the group."""
    check_name(group.name, "kernel group", group.where)
    check_unique([c.name for c in group.cargs], "C argument", group.where, group.name)
    for call in group.calls:
        callee = members.get(call.name)
        if callee is None:
            raise ModelError(f"UserKernelCall names '{call.name}', which is not a user kernel of this group",
                             where=call.where, kernel=group.name,
                             hint="kernels of the group: " + (", ".join(members) or "none"))
        if len(call.bindings) != len(callee.cargs):
            raise ModelError(f"call to '{call.name}' has {len(call.bindings)} binding(s) but the user kernel "
                             f"takes {len(callee.cargs)}", where=call.where, kernel=group.name,
                             hint="bind, in order: " + ", ".join(c.name for c in callee.cargs))
        for b in call.bindings:
            _validate_group_binding(b, call, group)
    group_homes(group, members)


def carg_homes(uk: UserKernelDecl) -> dict:
    """{C argument: "L3"} for the pointers into L3 (bound to O_L2DB kernel arguments)."""
    return {a.carg_name: "L3" for a in uk.kerargs if a.in_l3 and a.carg_name}


def group_homes(group: KernelGroupDecl, kernels: dict) -> dict:
    """{group C argument: "L3"}: the ones passed to L3 arguments of its user kernels. A pointer
    lives in one memory, so passing one to both an L2 and an L3 argument is an error."""
    mine = {}
    for call in group.calls:
        callee = kernels[call.name]
        homes = carg_homes(callee)
        for b, formal in zip(call.bindings, callee.cargs):
            if not isinstance(b, CArgBinding):
                continue
            home = homes.get(formal.name, "L2")
            if mine.setdefault(b.name, home) != home:
                raise ModelError(f"group argument '{b.name}' is passed to '{call.name}' as '{formal.name}' "
                                 f"(home {home}) and elsewhere with home {mine[b.name]}",
                                 where=b.where or call.where, kernel=group.name, arg=b.name,
                                 hint="a pointer lives in one memory: give the kernel arguments bound "
                                 "to it the same O_L2DB setting")
    return {name: home for name, home in mine.items() if home == "L3"}


def _validate_group_binding(b: Binding, call: CallDecl, group: KernelGroupDecl) -> None:
    where = b.where or call.where
    if isinstance(b, KArgBinding):
        raise ModelError(f"call to '{call.name}': K_Arg is not allowed in a kernel group", where=where,
                         kernel=group.name, hint="use C_Arg(...) or Imm(...)")
    if isinstance(b, (CArgBinding, CArgIndexBinding)):
        if not any(c.name == b.name for c in group.cargs):
            raise ModelError(f"call to '{call.name}': C_Arg names unknown group C argument '{b.name}'",
                             where=where, kernel=group.name,
                             hint="group C arguments are: " + ", ".join(c.name for c in group.cargs))
        if isinstance(b, CArgIndexBinding):
            raise ModelError(f"call to '{call.name}': C_ArgIndex has no iterator in a kernel group",
                             where=where, kernel=group.name, hint="use C_Arg(...) or Imm(...)")


def _suggest(name: str, known: dict) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""
