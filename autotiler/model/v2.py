"""The guide's v2 user-kernel form, translated onto the v3 iteration-space model.

``UserKernel(Name, KernelDimensions(Nip, W, H, Nop), KernelIterationOrder(KER_DIM4, KER_OUT_PLANE,
KER_TILE, KER_IN_PLANE), ...)`` becomes ``KernelIterSpace(3, IterFixedSpace(KER_ITER_D1, Nop),
IterTiledSpace(KER_ITER_TILE0), IterFixedSpace(KER_ITER_D0, Nip))`` (the v3 headers' own aliases:
KER_TILE = T0, KER_IN_PLANE = D0, KER_OUT_PLANE = D1, KER_IN_OUT_PLANE = D2), and each kernel
argument gets the spaces its flags imply:

* tiled (O_TILED): the tiled space (T0; T1/T2 with O_TILE1/O_TILE2), innermost;
* O_3D input: the input planes (D0), O_3D output: the output planes (D1) (both D2 under
  KER_IN_OUT_PLANE); O_4D: output then input planes (D1, D0), plane (ip, op) at op*Nip + ip.

Planes that no loop visits are an error unless there is only one. ``LOC_INNER_LOOP`` is the
body of the innermost loop of the order (the guide's diagrams); a call placed before or after a
plane loop the order does not have gets that loop as a single iteration, where the guide's
order 2 would put it (input planes innermost, output planes outermost).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..constants import (
    LOCATION_SPACE,
    SPACE_PROP_ONE_TILE,
    KernelCallLocationT,
    KernelIterationDimT,
    KernelIteratorT,
    Object_Type_T,
)
from ..errors import ModelError
from .ir import ArgSpace, CallDecl, IterSpace, KerArgDecl, KernelSpace, SpaceKind, SpaceRef, V2Form
from .validate import check_int, space_name

O = Object_Type_T
I = KernelIteratorT
L = KernelCallLocationT
T0, T1, T2 = I.KER_ITER_TILE0, I.KER_ITER_TILE1, I.KER_ITER_TILE2
D0, D1, D2 = I.KER_ITER_D0, I.KER_ITER_D1, I.KER_ITER_D2
V2_ITERATORS = (T0, T1, T2, D0, D1, D2)
_STRIPPED = O.O_3D | O.O_N3D | O.O_4D | O.O_N4D | O.O_TILE0 | O.O_TILE1 | O.O_TILE2


@dataclass(frozen=True)
class V2Dims:
    """``KernelDimensions(InPlanes, W, H, OutPlanes)``."""

    nip: int
    w: int
    h: int
    nop: int
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class V2Order:
    """``KernelIterationOrder(Dim, Iterators...)``: ``first`` is a KER_DIMn (one more than the
    iterators, the plane counting for two) or a plain count of iterators."""

    first: int
    iterators: tuple
    where: str = field(default="", compare=False)


def check_dims(d: V2Dims, kernel: str) -> None:
    for what, v in (("InPlanes", d.nip), ("W", d.w), ("H", d.h), ("OutPlanes", d.nop)):
        check_int(v, f"KernelDimensions {what}", d.where, kernel, minimum=0)


def check_order(o: V2Order, kernel: str) -> None:
    its = o.iterators
    names = ", ".join(space_name(i, True) for i in its)
    if not its:
        raise ModelError("KernelIterationOrder lists no iterator", where=o.where, kernel=kernel,
                         hint="e.g. KernelIterationOrder(KER_DIM2, KER_TILE)")
    for it in its:
        if it not in V2_ITERATORS:
            raise ModelError(f"KernelIterationOrder: {space_name(it)} is not a v2 iterator", where=o.where,
                             kernel=kernel, hint="use KER_TILE, KER_TILE1, KER_TILE2, KER_IN_PLANE, KER_OUT_PLANE, "
                             "KER_IN_OUT_PLANE (or the v3 form KernelIterSpace)")
    if len(set(its)) != len(its):
        raise ModelError(f"KernelIterationOrder({names}) lists an iterator twice", where=o.where, kernel=kernel,
                         hint="each iterator names one loop")
    if D2 in its and (D0 in its or D1 in its):
        raise ModelError("KER_IN_OUT_PLANE traverses input and output planes together: it cannot be combined with "
                         "KER_IN_PLANE or KER_OUT_PLANE", where=o.where, kernel=kernel,
                         hint="keep KER_IN_OUT_PLANE alone, or use KER_IN_PLANE and KER_OUT_PLANE")
    dim_form = isinstance(o.first, KernelIterationDimT)
    n = int(o.first)
    if n == len(its) + 1 or (n == len(its) and not dim_form):
        return
    if dim_form:
        hint = f"the dimension form takes one iterator fewer than the dimension: KER_DIM{len(its) + 1} for {names}"
    else:
        hint = f"give the number of iterators ({len(its)}) or the dimension (KER_DIM{len(its) + 1})"
    first = o.first.name if dim_form else o.first
    raise ModelError(f"KernelIterationOrder({first}, {names}): {int(o.first)} does not match {len(its)} "
                     "iterator(s)", where=o.where, kernel=kernel, hint=hint)


_PLANE_WORDS = {D0: ("input", "InPlanes"), D1: ("output", "OutPlanes"), D2: ("input and output", "InPlanes")}


def _check_planes(dims: V2Dims, order: V2Order, kernel: str) -> None:
    """A plane loop over 0 planes: the SDK's 2D kernels declare KernelDimensions(0, W, H, 0) with
    no plane iterator, but a loop of the order (or a 3D/4D argument) needs its planes."""
    for it in order.iterators:
        count = dims.nop if it == D1 else dims.nip
        if it in _PLANE_WORDS and count == 0:
            what, field_ = _PLANE_WORDS[it]
            raise ModelError(f"KernelDimensions gives 0 {what} planes but KernelIterationOrder loops over them "
                             f"({space_name(it, True)})", where=dims.where or order.where, kernel=kernel,
                             hint=f"give {field_} (at least 1), or leave {space_name(it, True)} out of the order for "
                             "a 2D kernel")


def _spaces(dims: V2Dims, order: V2Order, kernel: str) -> list:
    _check_planes(dims, order, kernel)
    nip, nop = max(dims.nip, 1), max(dims.nop, 1)
    out = []
    for it in order.iterators:
        if it in (T0, T1, T2):
            out.append(IterSpace(it, SpaceKind.TILED, where=order.where))
        elif it == D0:
            out.append(IterSpace(D0, SpaceKind.FIXED, nip, where=order.where))
        elif it == D1:
            out.append(IterSpace(D1, SpaceKind.FIXED, nop, where=order.where))
        else:
            if nip != nop:
                raise ModelError(f"KER_IN_OUT_PLANE needs as many input as output planes, KernelDimensions gives "
                                 f"{dims.nip} and {dims.nop}", where=dims.where or order.where, kernel=kernel,
                                 hint="use KER_IN_PLANE and KER_OUT_PLANE for different plane counts")
            out.append(IterSpace(D2, SpaceKind.FIXED, nip, where=order.where))
    return out


def _referenced(calls: tuple) -> set:
    """Spaces the calls name: their locations and the spaces their bindings index."""
    out = {LOCATION_SPACE[int(c.location)][0] for c in calls if int(c.location) in LOCATION_SPACE}
    for c in calls:
        for b in c.bindings:
            sp = getattr(b, "space", None)
            if sp is not None:
                out.add(int(sp))
    return out


def _add_virtual_spaces(spaces: list, calls: tuple) -> list:
    """Single-iteration loops for the plane (and tile) spaces calls name but the order lacks:
    the guide's index of a plane loop the kernel does not have is 0."""
    present = {s.space for s in spaces}
    wanted = _referenced(calls)
    for sp in sorted(wanted - present):
        space = IterSpace(I(sp), SpaceKind.TILED if sp < 3 else SpaceKind.FIXED, 0 if sp < 3 else 1)
        if sp in (D1, D2):
            spaces.insert(0, space)
        elif sp == D0:
            spaces.append(space)
        else:
            at = 1 if spaces and spaces[0].space == D1 else 0
            spaces.insert(at, space)
    return spaces


def _location(call: CallDecl, space: KernelSpace) -> CallDecl:
    if call.location == L.LOC_LOOP and space.innermost.space != T0:
        inner = space.innermost.space
        return replace(call, location=L(3 * int(inner)))
    return call


def _arg(a: KerArgDecl, space: KernelSpace, dims: V2Dims, kernel: str) -> KerArgDecl:
    t = a.obj_type
    refs = []
    plane_spaces = []
    if t & O.O_4D:
        plane_spaces = [(D1, dims.nop), (D0, dims.nip)]
    elif t & O.O_3D:
        if D2 in space:
            plane_spaces = [(D2, dims.nip)]
        elif a.is_in:
            plane_spaces = [(D0, dims.nip)]
        else:
            plane_spaces = [(D1, dims.nop)]
    for sp, count in plane_spaces:
        if count == 0:
            what = "input" if sp == D0 else "output"
            raise ModelError(f"is {'4D' if t & O.O_4D else '3D'} but KernelDimensions gives 0 {what} planes", where=a.where,
                             kernel=kernel, arg=a.name, hint=f"give KernelDimensions at least 1 {what} plane, or make "
                             "the argument 2D")
        if sp in space:
            props = SPACE_PROP_ONE_TILE if (sp == D0 and t & O.O_PBUFF) else 0
            refs.append(SpaceRef(sp, props))
        elif count > 1:
            what = "input" if sp == D0 else "output"
            done = "read and written" if a.is_in and a.is_out else "read" if a.is_in else "written"
            raise ModelError(f"has {count} {what} planes but no loop of the iteration order visits them (only plane 0 "
                             f"would be {done})", where=a.where, kernel=kernel, arg=a.name,
                             hint=f"add {space_name(sp, True)} to KernelIterationOrder, or make the argument 2D")
    if t & O.O_TILED and not t & O.O_NTILED:
        tile = T1 if t & O.O_TILE1 else T2 if t & O.O_TILE2 else T0
        if tile not in space:
            raise ModelError(f"is tiled along {space_name(tile, True)}, which the iteration order does not have",
                             where=a.where, kernel=kernel, arg=a.name,
                             hint=f"add {space_name(tile, True)} to KernelIterationOrder")
        refs.append(SpaceRef(tile))
    return replace(a, space=ArgSpace(tuple(refs), a.where), obj_type=int(t) & ~int(_STRIPPED))


def translate(name: str, dims: V2Dims, order: V2Order, kerargs: tuple, calls: tuple) -> tuple:
    """(KernelSpace, kernel arguments with their spaces, calls with v3 locations, V2Form)."""
    check_dims(dims, name)
    check_order(order, name)
    spaces = _add_virtual_spaces(_spaces(dims, order, name), calls)
    space = KernelSpace(tuple(spaces), order.where)
    args = tuple(a if a.space is not None else _arg(a, space, dims, name) for a in kerargs)
    calls = tuple(_location(c, space) for c in calls)
    return space, args, calls, V2Form(dims.nip, dims.w, dims.h, dims.nop, tuple(order.iterators))


__all__ = ["V2Dims", "V2Order", "check_dims", "check_order", "translate"]
