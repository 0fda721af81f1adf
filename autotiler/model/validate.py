"""Validation of declarations: every misuse is a ModelError naming the model line, the kernel,
the argument, what is wrong and what to do. Checks that need only one object run where the
object is built (:mod:`autotiler.api`); the ones that need a whole user kernel or group run in
:func:`validate_user_kernel` and :func:`validate_group`."""

from __future__ import annotations

import difflib
import re
from typing import Optional

from ..constants import (
    CONSTRAINT_BITS,
    FLAG_PAIRS,
    LOCATION_SPACE,
    OBJECT_FLAG_BITS,
    SPACE_PROP_ABS,
    SPACE_PROP_ONE_TILE,
    SPACE_PROP_PAD2PREF,
    SPACE_PROP_REVERT,
    SPACE_PROPS,
    SPACE_SHORT,
    V2_ITERATOR_NAMES,
    V2_LOCATION_NAMES,
    KernelArgConstraints_T,
    KernelArgSelect_T,
    KernelCallLocationT,
    KernelIteratorT,
    Object_Type_T,
    Tile_Orientation_T,
    is_tiled_space,
)
from ..errors import ModelError, warn
from .ctype import parse_ctype
from .ir import (
    AT_IGNORE_ARG_BINDING,
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
    KernelGroupDecl,
    KernelSpace,
    PredListBinding,
    SpaceKind,
    TileOperBinding,
    UserKernelDecl,
    UserSymbBinding,
)
from .reserved import reserved

O = Object_Type_T
C = KernelArgConstraints_T
S = KernelArgSelect_T
L = KernelCallLocationT

C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while _Bool _Complex _Imaginary""".split())

# ----------------------------------------------------------------------------------------------
# Small checks


def check_name(name, what: str, where: str, kernel: Optional[str] = None, arg: Optional[str] = None) -> str:
    if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
        raise ModelError(f"{what} name {name!r} is not a valid C identifier", where=where, kernel=kernel, arg=arg,
                         hint="use letters, digits and '_' only, not starting with a digit")
    if name in C_KEYWORDS:
        raise ModelError(f"{what} name '{name}' is a C keyword", where=where, kernel=kernel, arg=arg,
                         hint="choose another name")
    return name


def check_int(value, what: str, where: str, kernel=None, arg=None, minimum: Optional[int] = None,
              hint: Optional[str] = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ModelError(f"{what} must be an integer, got {value!r}", where=where, kernel=kernel, arg=arg,
                         hint=hint or "pass a plain int (not a string, float or bool)")
    if minimum is not None and value < minimum:
        raise ModelError(f"{what} must be at least {minimum}, got {value}", where=where, kernel=kernel, arg=arg,
                         hint=hint or f"use {minimum} or more")
    return int(value)


def check_positive(value, what: str, where: str, kernel=None, arg=None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ModelError(f"{what} must be a positive integer, got {value!r}", where=where,
                         kernel=kernel, arg=arg, hint=f"give {what} a size of at least 1")
    return int(value)


# Names every generated user kernel declares itself: loop indices (T0Ind.., the v2 names
# InPlaneInd.., with their Next<..> and <..>_Total copies), the argument structs of its calls,
# its DMA events, and the core-count builtin it calls. A C argument (a parameter of the same
# function) or a memory symbol (a global it would hide) named so breaks the generated C.
_GENERATED_LOCALS = (
    (re.compile(r"(Next)?(T[0-2]|D[0-3]|Tile[0-2]|InPlane|OutPlane)Ind(_Total)?"), "a loop index"),
    (re.compile(r"(S_)?KerArg\d+"), "an argument struct of a basic-kernel call"),
    (re.compile(r"Dma[RW]_Evt_\w+|Uchan[RW]_\w+"), "a DMA event"),
    (re.compile(r"gap_ncore"), "the core-count builtin"),
)


def generated_local(name: str) -> Optional[str]:
    """What a generated user kernel declares ``name`` as, or None."""
    return next((what for pattern, what in _GENERATED_LOCALS if pattern.fullmatch(name)), None)


def check_not_reserved(name: str, what: str, where: str, kernel=None, parameter: bool = False) -> None:
    """``name`` must not be one the headers included by generated C define (see :mod:`.reserved`);
    a ``parameter`` (C argument) may reuse a C library function's name."""
    use = reserved(name, parameter)
    if use:
        raise ModelError(f"{what} '{name}' is {use}", where=where, kernel=kernel,
                         hint=f"rename the {what} (e.g. '{name}_')" if not name.startswith("_")
                         else f"rename the {what} without the leading underscore")


def check_c_name(name: str, what: str, where: str, taken: dict, kernel=None, locals_: bool = True,
                 hint: Optional[str] = None, parameter: bool = False) -> None:
    """``name`` must not be one the generated code already uses: a name of ``taken`` (name ->
    what it is), with ``locals_`` a local of the generated user kernels, or a name of the headers
    it includes."""
    use = taken.get(name) or (generated_local(name) if locals_ else None)
    if use:
        raise ModelError(f"{what} '{name}' is also {use} in the generated code", where=where, kernel=kernel,
                         hint=hint or f"rename the {what}")
    check_not_reserved(name, what, where, kernel, parameter)


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
                         where=where, kernel=kernel, hint=f"write {what}({len(items)}, ...) or drop the count")
    return tuple(items)


def suggest(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def space_name(space, v2: bool = False) -> str:
    if v2 and int(space) in V2_ITERATOR_NAMES:
        return V2_ITERATOR_NAMES[int(space)]
    return KernelIteratorT(int(space)).name


def location_name(loc, v2: bool = False) -> str:
    if v2 and int(loc) in V2_LOCATION_NAMES:
        return V2_LOCATION_NAMES[int(loc)]
    return L(int(loc)).name


def flag_names(bits: int) -> str:
    return "|".join(m.name for m in O if m.value & bits and bin(m.value).count("1") == 1) or "0"


# ----------------------------------------------------------------------------------------------
# Iteration spaces


def check_space_props(props: int, what: str, tiled: bool, where: str, kernel=None, arg=None) -> None:
    """SPACE_PROP_* bits of a space, in KernelIterSpace or KerArgSpace: known, supported, and
    none that only means something for a non-tiled space on a tiled one."""
    def refuse(msg: str, hint: str):
        raise ModelError(msg, where=where, kernel=kernel, arg=arg, hint=hint)

    bad = props & ~(SPACE_PROP_ABS | SPACE_PROP_REVERT | SPACE_PROP_PAD2PREF | SPACE_PROP_ONE_TILE)
    if bad:
        refuse(f"{what} has unknown property bits 0x{bad:x}", "use SPACE_PROP(Space, " + " | ".join(SPACE_PROPS) + ")")
    if props & SPACE_PROP_PAD2PREF:
        refuse(f"{what}: SPACE_PROP_PAD2PREF is not supported yet", "remove the property")
    if props & SPACE_PROP_REVERT and tiled:
        refuse(f"{what}: SPACE_PROP_REVERT applies to non-tiled spaces",
               "traverse a D space backwards, e.g. SPACE_PROP(KER_ITER_D0, SPACE_PROP_REVERT) in KerArgSpace")
    if props & SPACE_PROP_ONE_TILE and tiled:
        refuse(f"{what}: SPACE_PROP_ONE_TILE applies to non-tiled spaces",
               "remove it: the tiler chooses how many tiles; OBJ_CONSTRAINTS_ONEPREFTILE asks for a single one")


def validate_kernel_space(ks: KernelSpace, kernel: str, v2: bool = False) -> None:
    where = ks.where
    if not ks.spaces:
        raise ModelError("the iteration space has no loop", where=where, kernel=kernel,
                         hint="give at least one space, e.g. KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0))")
    seen = set()
    for s in ks.spaces:
        if s.space in seen:
            raise ModelError(f"space {space_name(s.space, v2)} appears twice in the iteration space", where=s.where or where,
                             kernel=kernel, hint="each space names one loop")
        seen.add(s.space)
        if s.kind == SpaceKind.TILED and not is_tiled_space(s.space):
            raise ModelError(f"IterTiledSpace({space_name(s.space)}): only KER_ITER_TILE0..2 can be tiled",
                             where=s.where or where, kernel=kernel,
                             hint="use IterFixedSpace or IterParSpace for D0..D3")
        if s.kind != SpaceKind.TILED and is_tiled_space(s.space):
            raise ModelError(f"{space_name(s.space)} is a tiled space: declare it with IterTiledSpace",
                             where=s.where or where, kernel=kernel,
                             hint="the non-tiled spaces are KER_ITER_D0..D3")


# ----------------------------------------------------------------------------------------------
# Kernel arguments


_UNSUPPORTED_FLAGS = {
    "O_BIT": "item sizes in bits", "O_HWC": "HWC tensors", "O_ALIAS": "aliased arguments",
    "O_NE16_PW": "NE16 weight layouts", "O_NE16_DW": "NE16 weight layouts", "O_NE16_LIN": "NE16 weight layouts",
    "O_NE16_3X3": "NE16 weight layouts", "O_NE16_RNN": "NE16 weight layouts", "O_NE16_INTER": "NE16 weight layouts",
    "O_NE16_MODE16": "NE16 weight layouts",
}
_V2_ONLY_FLAGS = ("O_3D", "O_N3D", "O_4D", "O_N4D", "O_PBUFF", "O_NPBUFF")
_TILE_FLAGS = {O.O_TILE0: KernelIteratorT.KER_ITER_TILE0, O.O_TILE1: KernelIteratorT.KER_ITER_TILE1,
               O.O_TILE2: KernelIteratorT.KER_ITER_TILE2}
_UNSUPPORTED_CONSTRAINTS = {C.OBJ_CONSTRAINTS_DYNAMIC: "run-time tile sizes (OBJ_CONSTRAINTS_DYNAMIC)",
                            C.OBJ_CONSTRAINTS_2D: "2D strided arguments (OBJ_CONSTRAINTS_2D)"}


def _err(msg: str, arg: KerArgDecl, kernel: str, hint: Optional[str] = None) -> ModelError:
    return ModelError(msg, where=arg.where, kernel=kernel, arg=arg.name, hint=hint)


def validate_kerarg_fields(arg: KerArgDecl, kernel: Optional[str] = None) -> None:
    """Checks that need only the argument itself (run by its constructor)."""
    w = arg.where
    check_name(arg.name, "kernel argument", w, kernel)
    if arg.carg_name is not None:
        check_name(arg.carg_name, "C argument", w, kernel, arg.name)
    for what, value in (("W", arg.w), ("H", arg.h), ("ItemSize", arg.item_size)):
        check_positive(value, what, w, kernel, arg.name)
    # a negative overlap makes an input's tiles skip lines (a window smaller than its stride, as
    # a 1x1 convolution of stride 2); an output's every line is written, so it cannot skip any
    check_int(arg.overlap, "TileOverlap", w, kernel, arg.name)
    if arg.overlap < 0 and arg.is_out:
        raise _err(f"TileOverlap must be at least 0 for an output, got {arg.overlap}", arg, kernel,
                   hint="only an input's tiles may skip lines (a negative overlap); every line of an output is "
                   "written")
    for what, value in (("PreferedTileSize", arg.preferred), ("BottomBuffer", arg.bottom), ("TopBuffer", arg.top),
                        ("TileWPadAlign", arg.w_pad_align), ("RawItemSize", arg.raw_item_size),
                        ("MinTileSize", arg.min_tile), ("NextPlaneUpdate", arg.next_plane_update)):
        check_int(value, what, w, kernel, arg.name, minimum=0)
    for what, pad in (("PadTile", arg.pad_tile), ("PadExec", arg.pad_exec)):
        if any(not isinstance(p, int) or p < 0 for p in pad):
            raise _err(f"{what} {tuple(pad)} must be four non-negative item counts (left, right, top, bottom)",
                       arg, kernel, hint="e.g. (1, 1, 0, 0), or 0 for none")
    for what, used, full in (("UsedW", arg.used_w, arg.w), ("UsedH", arg.used_h, arg.h)):
        if used is not None and (not isinstance(used, int) or isinstance(used, bool) or not 1 <= used <= full):
            raise _err(f"{what} {used!r} must be between 1 and {full}", arg, kernel,
                       hint=f"the used part of the plane cannot exceed the plane ({'W' if what == 'UsedW' else 'H'})")
    _validate_flags(arg, kernel)
    _validate_constraints(arg, kernel)


def _validate_flags(arg: KerArgDecl, kernel: Optional[str]) -> None:
    t = arg.obj_type
    unknown = t & ~OBJECT_FLAG_BITS
    if unknown:
        raise _err(f"object type has unknown bit(s) 0x{unknown:x}", arg, kernel,
                   hint="build it from O_* flags or OBJ_* names")
    for pos, neg in FLAG_PAIRS:
        if t & O[pos] and t & O[neg]:
            raise _err(f"object type sets both {pos} and {neg}", arg, kernel, hint=f"keep only one of {pos} / {neg}")
    for flag, what in _UNSUPPORTED_FLAGS.items():
        if t & O[flag]:
            raise _err(f"{flag} ({what}) is not supported yet", arg, kernel,
                       hint="remove the flag; see docs/semantics.md for what is supported")
    if not t & (O.O_IN | O.O_OUT | O.O_BUFF):
        raise _err("object type is neither an input, an output nor a buffer", arg, kernel,
                   hint="add O_IN, O_OUT or O_BUFF (or use an OBJ_* name)")
    if t & (O.O_ONETILE | O.O_DYNTILE) and not t & O.O_BUFF:
        flag = "O_ONETILE" if t & O.O_ONETILE else "O_DYNTILE"
        raise _err(f"{flag} is a buffer property but O_BUFF is not set", arg, kernel,
                   hint="use OBJ_BUFFER_ONETILE / OBJ_BUFFER_DYNTILE")
    if t & O.O_ONETILE and t & O.O_DYNTILE:
        raise _err("O_ONETILE and O_DYNTILE cannot be combined", arg, kernel,
                   hint="a buffer is either one tile or one slot per tile")
    if t & O.O_L2DB and not t & (O.O_IN | O.O_OUT):
        raise _err("O_L2DB homes an argument in L3, but this one is a pure L1 buffer (neither O_IN nor O_OUT): "
                   "it has no home outside L1", arg, kernel,
                   hint="drop O_L2DB, or make it an input/output (e.g. OBJ_IN_DB_L2DB)")
    if arg.l3_device is not None and arg.l3_device.kind != "ram" and (t & O.O_OUT or not t & O.O_L2DB):
        raise _err(f"is read from flash ({arg.l3_device.symbol}), which only an L3-homed (O_L2DB) pure input can be",
                   arg, kernel, hint="flash is read-only: keep outputs in L2 or L3 RAM")
    if t & O.O_CONST and (t & O.O_OUT or not t & O.O_IN):
        raise _err("O_CONST marks a constant input, but this argument is not a pure input", arg, kernel,
                   hint="drop O_CONST or make the argument O_IN only")
    for flag, need in (("O_NO_LOAD", O.O_IN), ("O_ALWAYS_LOAD", O.O_IN), ("O_NO_STORE", O.O_OUT)):
        if t & O[flag] and not (t & need and t & O.O_BUFF):
            want = "O_IN|O_BUFF" if need == O.O_IN else "O_OUT|O_BUFF"
            raise _err(f"{flag} applies to {want} arguments", arg, kernel, hint=f"use it with {want}")
    if t & O.O_NO_LOAD and t & O.O_ALWAYS_LOAD:
        raise _err("O_NO_LOAD and O_ALWAYS_LOAD contradict each other", arg, kernel, hint="keep one")
    if t & O.O_4D and t & O.O_OUT and not t & O.O_IN:
        raise _err("a 4D argument can only be an input", arg, kernel,
                   hint="declare outputs as 3D (O_3D): one plane per output plane")
    if sum(bool(t & f) for f in _TILE_FLAGS) > 1:
        raise _err("more than one of O_TILE0/O_TILE1/O_TILE2 is set", arg, kernel,
                   hint="an argument is tiled along one tiled space")


def _validate_constraints(arg: KerArgDecl, kernel: Optional[str]) -> None:
    c = arg.constraints
    unknown = c & ~CONSTRAINT_BITS
    if unknown:
        raise _err(f"constraint has unknown bit(s) 0x{unknown:x}", arg, kernel, hint="use OBJ_CONSTRAINTS_* names")
    for pair, text in (((C.OBJ_CONSTRAINTS_EVEN, C.OBJ_CONSTRAINTS_ODD), "EVEN and ODD"),
                       ((C.OBJ_CONSTRAINTS_TILE_HOR, C.OBJ_CONSTRAINTS_TILE_VER), "TILE_HOR and TILE_VER"),
                       ((C.OBJ_CONSTRAINTS_PAD_REM, C.OBJ_CONSTRAINTS_DROP_REM), "PAD_REM and DROP_REM")):
        if c & pair[0] and c & pair[1]:
            raise _err(f"constraints {text} contradict each other", arg, kernel, hint="keep one of them")
    for bit, what in _UNSUPPORTED_CONSTRAINTS.items():
        if c & bit:
            raise _err(f"{what} is not supported yet", arg, kernel, hint="remove the constraint")
    if c & C.OBJ_CONSTRAINTS_ONEPREFTILE and not arg.preferred:
        raise _err("OBJ_CONSTRAINTS_ONEPREFTILE needs a PreferedTileSize", arg, kernel,
                   hint="give the tile size the single tile must have")


def validate_arg_space(arg: KerArgDecl, uk: UserKernelDecl) -> None:
    """The argument's KerArgSpace against the kernel's iteration space."""
    v2 = uk.v2 is not None
    space = arg.space
    if not isinstance(space, ArgSpace):
        raise _err("has no KerArgSpace", arg, uk.name,
                   hint="v3 form: KerArg(Name, KerArgSpace(1, KER_ITER_TILE0), Type, W, H, ...)")
    seen = set()
    for ref in space.refs:
        if ref.space in seen:
            raise _err(f"KerArgSpace lists {space_name(ref.space, v2)} twice", arg, uk.name,
                       hint="list each space the argument lives in once")
        seen.add(ref.space)
        if ref.space not in uk.space:
            known = ", ".join(space_name(s.space, v2) for s in uk.space.spaces)
            raise _err(f"KerArgSpace names {space_name(ref.space, v2)}, which is not in the kernel's iteration space "
                       f"({known})", arg, uk.name, hint="add the space to KernelIterSpace or remove it from KerArgSpace")
        check_space_props(ref.props, f"KerArgSpace entry {space_name(ref.space)}", ref.tiled, arg.where, uk.name,
                          arg.name)
    tiled = [r for r in space.refs if r.tiled]
    if len(tiled) > 1:
        raise _err("KerArgSpace has more than one tiled space", arg, uk.name,
                   hint="an argument's plane is cut along one tiled space")
    if tiled and space.refs[-1] != tiled[0]:
        raise _err(f"the tiled space {space_name(tiled[0].space, v2)} is not the innermost entry of KerArgSpace: "
                   "layouts with the plane outside other dimensions (HWC) are not supported yet", arg, uk.name,
                   hint="list the tiled space last")
    t = arg.obj_type
    if tiled and t & O.O_BUFF and not t & (O.O_TILED | O.O_NTILED | O.O_ONETILE | O.O_DYNTILE):
        # the OBJ_BUFFER*_NTILED names are O_BUFF|O_IN/OUT without O_NTILED: in the v3 form the
        # tiled space of KerArgSpace tiles such a buffer, which the name seems to deny
        warn(f"O_BUFF without O_TILED or O_NTILED, and its KerArgSpace holds {space_name(tiled[0].space, v2)}: "
             "under the v3 rule it is tiled along that space", where=arg.where, kernel=uk.name, arg=arg.name,
             hint="add O_NTILED to keep it whole, or O_TILED to say it is tiled and silence this")
    if t & O.O_TILED and not t & O.O_NTILED and not tiled:
        raise _err("is tiled (O_TILED) but its KerArgSpace has no tiled space", arg, uk.name,
                   hint="add a tiled space (KER_ITER_TILE0..2) to KerArgSpace, or drop O_TILED")
    if t & (O.O_ONETILE | O.O_DYNTILE) and not tiled:
        raise _err("a ONETILE/DYNTILE buffer needs a tiled space in its KerArgSpace", arg, uk.name,
                   hint="give it the tiled space its tiles follow")
    for flag, sp in _TILE_FLAGS.items():
        if t & flag and (not tiled or tiled[0].space != sp):
            raise _err(f"{flag.name} says the argument is tiled along {space_name(sp)}, its KerArgSpace says otherwise",
                       arg, uk.name, hint=f"drop {flag.name}: in the v3 form KerArgSpace gives the spaces")
    if uk.v2 is None:
        v2_flags = [f for f in _V2_ONLY_FLAGS if t & O[f]]
        if v2_flags:
            raise _err(f"{v2_flags[0]} is a v2 flag; a v3 kernel gives the planes as spaces of KerArgSpace", arg,
                       uk.name, hint="e.g. KerArgSpace(2, KER_ITER_D0, KER_ITER_TILE0) for a 3D input")


def _validate_carg_binding(arg: KerArgDecl, uk: UserKernelDecl) -> None:
    if not arg.carg_name:
        if arg.in_l3:
            raise _err("is homed in L3 (O_L2DB) but has no C argument to point to its L3 data", arg, uk.name,
                       hint="bind it to a pointer C argument of the user kernel (CArgName)")
        if arg.is_in or arg.is_out:
            raise _err("has no C argument but is an input or output", arg, uk.name,
                       hint="bind it to a C argument of the user kernel (CArgName) or declare a pure buffer (O_BUFF)")
        return
    if not (arg.is_in or arg.is_out):  # never loaded nor stored: the C argument would be ignored
        raise _err(f"is a pure L1 buffer (neither O_IN nor O_OUT) but is bound to C argument '{arg.carg_name}', "
                   "which it would never read nor write", arg, uk.name,
                   hint="drop the CArgName (pass 0), or make it an input or output (O_IN / O_OUT)")
    carg = uk.carg(arg.carg_name)
    if carg is None:
        raise _err(f"is bound to C argument '{arg.carg_name}', which the user kernel does not declare", arg, uk.name,
                   hint=f"C arguments are: {', '.join(c.name for c in uk.cargs) or 'none'}"
                   + suggest(arg.carg_name, [c.name for c in uk.cargs]))
    if not carg.is_pointer:
        raise _err(f"is bound to C argument '{carg.name}' of type '{carg.ctype}', which is not a pointer", arg, uk.name,
                   hint="kernel arguments live in memory: bind them to pointer C arguments")
    _check_item_size(arg, carg.ctype, "its C argument binding", f"C argument '{carg.name}'", arg.where, uk.name)


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


# ----------------------------------------------------------------------------------------------
# User kernels


def validate_user_kernel(uk: UserKernelDecl, libs: dict) -> None:
    """Everything that can be checked once the whole user kernel is declared (and, for the v2
    form, translated onto spaces)."""
    name, w = uk.name, uk.where
    check_name(name, "user kernel", w)
    v2 = uk.v2 is not None
    validate_kernel_space(uk.space, name, v2)
    if uk.orientation == Tile_Orientation_T.TILE_HWC:
        raise ModelError("TILE_HWC is not supported yet", where=w, kernel=name, hint="use TILE_HOR or TILE_VER")
    for c in uk.cargs:
        check_name(c.name, "C argument", c.where or w, name)
    check_unique([c.name for c in uk.cargs], "C argument", w, name)
    check_unique([a.name for a in uk.kerargs], "kernel argument", w, name)
    for s in uk.space.spaces:
        if s.kind == SpaceKind.DYNAMIC:
            carg, what = uk.carg(s.bound), f"IterFixedSpaceDynBound({s.short}, {s.dim}, \"{s.bound}\")"
            if carg is None:
                raise ModelError(f"{what}: '{s.bound}' must be an integer C argument of the user kernel",
                                 where=s.where or w, kernel=name,
                                 hint="add TCArg(\"int\", \"" + str(s.bound) + "\") to the kernel's CArgs")
            if carg.is_pointer or carg.is_float:
                raise ModelError(f"{what}: '{s.bound}' is '{carg.ctype}', not an integer", where=s.where or w,
                                 kernel=name, hint=f"a run-time bound is an iteration count: declare '{s.bound}' with "
                                 "an integer type, or name an integer C argument")
            if s is not uk.space.spaces[0]:
                raise ModelError(f"IterFixedSpaceDynBound({s.short}, {s.dim}, \"{s.bound}\"): a run-time bound is "
                                 "supported on the outermost space only (not supported yet elsewhere)",
                                 where=s.where or w, kernel=name,
                                 hint="make it the first space of KernelIterSpace (as the SDK's RNN and MFCC "
                                      "generators do)")
    for arg in uk.kerargs:
        validate_kerarg_fields(arg, name)
        validate_arg_space(arg, uk)
        _validate_carg_binding(arg, uk)
    _validate_homes(uk)
    for call in uk.calls:
        _validate_call(call, uk, libs)


def _validate_location(call: CallDecl, uk: UserKernelDecl) -> None:
    v2 = uk.v2 is not None
    loc = call.location
    if call.user_kernel_call or loc == L.LOC_GROUP:
        raise ModelError(f"call to '{call.name}' uses LOC_GROUP/UserKernelCall inside a user kernel",
                         where=call.where, kernel=uk.name,
                         hint="user kernel calls belong in UserKernelGroup; use Call(..., LOC_LOOP, ...)")
    if loc in (L.LOC_PROLOG, L.LOC_EPILOG):
        return
    space, part = LOCATION_SPACE[int(loc)]
    if space not in uk.space:
        known = ", ".join(space_name(s.space, v2) for s in uk.space.spaces)
        raise ModelError(f"call to '{call.name}' at {location_name(loc, v2)}: space {space_name(space, v2)} is not in "
                         f"the kernel's iteration space ({known})", where=call.where, kernel=uk.name,
                         hint="place the call at a location of an existing space, LOC_PROLOG or LOC_EPILOG")
    inner = uk.space.innermost
    if part == "body" and inner.space != space:
        raise ModelError(f"call to '{call.name}' at {location_name(loc, v2)}: the body of {space_name(space, v2)} "
                         f"is not the innermost loop ({space_name(inner.space, v2)} runs inside it), so where the call "
                         f"goes is unclear", where=call.where, kernel=uk.name,
                         hint=f"use {location_name(_location(inner.space, 'prolog'))} (before the inner loop) or "
                         f"{location_name(_location(inner.space, 'epilog'))} (after it)")


def _location(space, part: str) -> L:
    return L(3 * int(space) + ("body", "prolog", "epilog").index(part))


def _validate_call(call: CallDecl, uk: UserKernelDecl, libs: dict) -> None:
    _validate_location(call, uk)
    lib = libs.get(call.name)
    if lib is None:
        raise ModelError(f"calls unknown basic kernel '{call.name}'", where=call.where, kernel=uk.name,
                         hint="declare it with LibKernel(...) before the user kernel" + suggest(call.name, libs))
    if len(call.bindings) != len(lib.cargs):
        raise ModelError(f"call to '{call.name}' has {len(call.bindings)} binding(s) but the basic "
                         f"kernel takes {len(lib.cargs)} argument(s)", where=call.where, kernel=uk.name,
                         hint="bind, in order: " + ", ".join(f"{a.name}" for a in lib.cargs))
    for binding, formal in zip(call.bindings, lib.cargs):
        if binding is AT_IGNORE_ARG_BINDING:
            if not lib.struct_call:
                raise ModelError(f"call to '{call.name}': AT_IGNORE_ARG_BINDING for '{formal.name}' of a sequential "
                                 "basic kernel (its arguments are passed in the call, none can be left out)",
                                 where=call.where, kernel=uk.name, hint="bind a value, e.g. Imm(0)")
            continue
        validate_binding(binding, formal, call, uk)


# ----------------------------------------------------------------------------------------------
# Bindings

POINTER_SELECTS = frozenset({S.KER_ARG_TILE, S.KER_ARG_TILE_NEXTDB, S.KER_ARG})
VECTOR_SELECTS = frozenset({S.KER_ARG_PAD, S.KER_ARG_TILE_PAD})
SUPPORTED_SELECTS = frozenset({
    S.KER_ARG_TILE, S.KER_ARG_TILE_NEXTDB, S.KER_ARG_TILE_OFF, S.KER_ARG_TILE_W, S.KER_ARG_TILE_USEDW,
    S.KER_ARG_TILE_H, S.KER_ARG_TILE_USEDH, S.KER_ARG_TILE_W0, S.KER_ARG_TILE_H0, S.KER_ARG, S.KER_ARG_W,
    S.KER_ARG_H, S.KER_ARG_NTILES, S.KER_ARG_TILEFIRST, S.KER_ARG_TILELAST, S.KER_ARG_TILEINDEX,
    S.KER_ARG_TILE_BASE, S.KER_ARG_IT_INDEX, S.KER_ARG_PAD, S.KER_ARG_TILE_PAD, S.KER_ARG_PARTILE_DIM,
    S.KER_ARG_PARTILE_SIZE, S.KER_ARG_LOADEDPARTILE_SIZE, S.KER_ARG_INPLANEINDEX, S.KER_ARG_OUTPLANEINDEX,
})
PARTILE_SELECTS = frozenset({S.KER_ARG_PARTILE_DIM, S.KER_ARG_PARTILE_SIZE, S.KER_ARG_LOADEDPARTILE_SIZE})
BINDING_OPERS = ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "==", "!=")  # checked by the constructors


def validate_binding(b, formal: CArg, call: CallDecl, uk: UserKernelDecl) -> None:
    where = getattr(b, "where", "") or call.where
    ctx = f"binding of '{formal.name}' in call to '{call.name}'"
    kernel = uk.name
    if isinstance(b, KArgBinding):
        _validate_karg(b, formal, ctx, where, uk)
    elif isinstance(b, TileOperBinding):
        if uk.kerarg(b.arg) is None:
            raise ModelError(f"{ctx}: K_TileOper names unknown kernel argument '{b.arg}'", where=where, kernel=kernel,
                             hint="kernel arguments are: " + ", ".join(a.name for a in uk.kerargs))
        _check_pointer_match(b.oper != "@" and "*" in b.ctype, formal, ctx, where, kernel, b.arg,
                             "K_TileOper with '@' reads one item; other operators give a pointer")
    elif isinstance(b, PredListBinding):
        for p in b.preds:
            if not isinstance(p, KArgBinding) or p.select not in (S.KER_ARG_TILEFIRST, S.KER_ARG_TILELAST):
                raise ModelError(f"{ctx}: K_ArgPredList takes K_ArgPred(..., KER_ARG_TILEFIRST|KER_ARG_TILELAST, ...)",
                                 where=where, kernel=kernel,
                                 hint="build each predicate with K_ArgPred(Arg, KER_ARG_TILEFIRST, Space)")
            _validate_karg(p, formal, ctx, where, uk)
    elif isinstance(b, CArgBinding):
        _validate_carg(b, formal, ctx, where, uk)
    elif isinstance(b, ImmBinding):
        _check_imm(b, formal, ctx, where, kernel,
                   "only Imm(0) (a null pointer) makes sense for a pointer; bind a tile with K_Arg")
    elif isinstance(b, KerDimBinding):
        if uk.v2 is None:
            raise ModelError(f"{ctx}: KerDim needs a kernel declared with KernelDimensions (v2 form)", where=where,
                             kernel=kernel, hint="bind the value with Imm(...)")
        _check_pointer_match(False, formal, ctx, where, kernel, None, "KerDim gives an integer")
    elif isinstance(b, IterIndexBinding):
        if b.space not in uk.space:
            raise ModelError(f"{ctx}: Ker_IteratorIndex({space_name(b.space)}): no such space in the kernel",
                             where=where, kernel=kernel, hint=_spaces_hint(uk))
        _check_pointer_match(False, formal, ctx, where, kernel, None, "Ker_IteratorIndex gives an integer")
    elif isinstance(b, UserSymbBinding):
        raise ModelError(f"{ctx}: UserSymb('{b.name}') is not supported yet (user symbols)", where=where,
                         kernel=kernel, hint="bind the value with Imm(...) or a C argument")
    elif isinstance(b, ExprBinding):
        raise ModelError(f"{ctx}: {'BindKGExpr' if b.group else 'BindKExpr'}({b.text!r}) is not supported yet "
                         "(the original's binding expression language)", where=where, kernel=kernel,
                         hint="use K_Arg / K_ArgOp / C_Arg* / Imm bindings")
    else:
        raise ModelError(f"{ctx}: {b!r} is not a binding", where=where, kernel=kernel,
                         hint="use K_Arg, C_Arg, Imm, ... (or AT_IGNORE_ARG_BINDING)")


def _spaces_hint(uk: UserKernelDecl) -> str:
    return "the kernel's spaces: " + ", ".join(space_name(s.space, uk.v2 is not None) for s in uk.space.spaces)


def _check_pointer_match(is_pointer: bool, formal: CArg, ctx: str, where: str, kernel: str, arg, why: str,
                         what: str = "the binding") -> None:
    if is_pointer != formal.is_pointer:
        gives = "a pointer" if is_pointer else "an integer"
        raise ModelError(f"{ctx}: {what} gives {gives} but '{formal.name}' is '{formal.ctype}'", where=where,
                         kernel=kernel, arg=arg, hint=why)


def _validate_karg(b: KArgBinding, formal: CArg, ctx: str, where: str, uk: UserKernelDecl) -> None:
    kernel = uk.name
    arg = uk.kerarg(b.arg)
    if arg is None:
        raise ModelError(f"{ctx}: {b.ctor} names unknown kernel argument '{b.arg}'", where=where, kernel=kernel,
                         hint="kernel arguments are: " + ", ".join(a.name for a in uk.kerargs)
                         + suggest(b.arg, [a.name for a in uk.kerargs]))
    sel = b.select
    if sel not in SUPPORTED_SELECTS:
        raise ModelError(f"{ctx}: selector {sel.name} is not supported yet", where=where, kernel=kernel, arg=b.arg,
                         hint="see docs/semantics.md for the supported KER_ARG_* selectors")
    if sel == S.KER_ARG_TILE_NEXTDB and not arg.has(O.O_DB):
        # refused at the argument, where the fix goes; a double-buffered argument that a tiling
        # moves once (or promotes) has no next buffer either, which the tiler refuses per tiling
        raise ModelError(f"{ctx}: KER_ARG_TILE_NEXTDB needs a double-buffered argument, but '{b.arg}' is declared "
                         "without O_DB", where=arg.where, kernel=kernel, arg=b.arg,
                         hint="add O_DB to its object type (e.g. OBJ_IN_DB)")
    v2 = uk.v2 is not None
    if b.space is not None:
        if b.space not in uk.space:
            raise ModelError(f"{ctx}: {b.ctor}(..., {space_name(b.space, v2)}): no such space in the kernel",
                             where=where, kernel=kernel, arg=b.arg, hint=_spaces_hint(uk))
    if sel in PARTILE_SELECTS:
        if b.space is None:
            raise ModelError(f"{ctx}: {sel.name} needs a space: use K_ArgPar('{b.arg}', {sel.name}, Space)",
                             where=where, kernel=kernel, arg=b.arg,
                             hint="Space: a D space of the argument's KerArgSpace")
        ref = arg.space.ref(b.space) if arg.space else None
        if ref is None or ref.tiled:
            raise ModelError(f"{ctx}: {sel.name} of {space_name(b.space, v2)}: '{b.arg}' has no such non-tiled space "
                             "in its KerArgSpace", where=where, kernel=kernel, arg=b.arg,
                             hint="name a D space listed in the argument's KerArgSpace")
    if sel in (S.KER_ARG_INPLANEINDEX, S.KER_ARG_OUTPLANEINDEX):
        sp = KernelIteratorT.KER_ITER_D0 if sel == S.KER_ARG_INPLANEINDEX else KernelIteratorT.KER_ITER_D1
        if sp not in uk.space:
            v3 = f"add a {space_name(sp)} space to KernelIterSpace ({space_name(sp, True)} is {space_name(sp)})"
            raise ModelError(f"{ctx}: {sel.name} needs the {space_name(sp, True)} loop", where=where, kernel=kernel,
                             arg=b.arg, hint=f"add {space_name(sp, True)} to KernelIterationOrder" if v2 else v3)
    if sel == S.KER_ARG_IT_INDEX and b.space is None:
        raise ModelError(f"{ctx}: KER_ARG_IT_INDEX needs a space: K_ArgPar('{b.arg}', KER_ARG_IT_INDEX, Space)",
                         where=where, kernel=kernel, arg=b.arg, hint="Space: the loop whose index is meant")
    if sel in VECTOR_SELECTS:
        if formal.is_pointer or not any(t in formal.ctype for t in ("v4s", "v4u")):
            raise ModelError(f"{ctx}: {sel.name} gives a v4s padding but '{formal.name}' is '{formal.ctype}'",
                             where=where, kernel=kernel, arg=b.arg, hint="bind it to a v4s argument")
        return
    if not formal.is_pointer and any(t in formal.ctype.split() for t in ("v4s", "v4u", "v2s", "v2u")):
        raise ModelError(f"{ctx}: {sel.name} gives a number but '{formal.name}' is '{formal.ctype}' (a vector)",
                         where=where, kernel=kernel, arg=b.arg,
                         hint="a v4s takes the padding of a tile: K_Arg(Arg, KER_ARG_TILE_PAD)")
    pointer = sel in POINTER_SELECTS and b.oper in (None, "+", "-")
    _check_pointer_match(pointer, formal, ctx, where, kernel, b.arg,
                         "KER_ARG_TILE/KER_ARG_TILE_NEXTDB/KER_ARG bind pointers; sizes and indexes bind integers",
                         sel.name)
    if pointer:
        _check_item_size(arg, formal.ctype, f"{ctx}: {sel.name} of '{b.arg}'", f"'{formal.name}'", where, kernel)


def _check_item_size(arg: KerArgDecl, ctype: str, ctx: str, target: str, where: str, kernel: str) -> None:
    """A kernel argument's items against the pointee of the C pointer type it is passed as: a
    different size strides the data wrongly (a multiple is fine: e.g. complex pairs)."""
    size = parse_ctype(ctype).item_size
    if size and not arg.has(O.O_BIT) and arg.item_size % size:
        raise ModelError(f"{ctx} gives {arg.item_size}-byte items but {target} is '{ctype}' ({size}-byte items)",
                         where=where, kernel=kernel, arg=arg.name,
                         hint=f"declare '{arg.name}' with item size {size} (or a multiple of it), or use a C type "
                         f"whose items are {arg.item_size} bytes")


def _validate_carg(b: CArgBinding, formal: CArg, ctx: str, where: str, uk: UserKernelDecl) -> None:
    kernel = uk.name
    carg = uk.carg(b.name)
    if carg is None:
        raise ModelError(f"{ctx}: {b.form.value} names unknown C argument '{b.name}'", where=where, kernel=kernel,
                         hint="C arguments are: " + (", ".join(c.name for c in uk.cargs) or "none")
                         + suggest(b.name, [c.name for c in uk.cargs]))
    if b.form == CArgForm.GROUP_OPER:
        raise ModelError(f"{ctx}: KG_ArgOper belongs in a kernel group's UserKernelCall", where=where, kernel=kernel,
                         hint="in a user kernel use C_ArgImmOper (an operator) or C_ArgPlusImmOffset (an offset)")
    if b.cvar is not None and uk.carg(b.cvar) is None:
        raise ModelError(f"{ctx}: {b.form.value} names unknown C argument '{b.cvar}'", where=where, kernel=kernel,
                         hint="C arguments are: " + ", ".join(c.name for c in uk.cargs))
    if b.form in (CArgForm.PLUS_PLANE, CArgForm.INDEX):
        if b.space not in uk.space:
            raise ModelError(f"{ctx}: {b.form.value}('{b.name}', {space_name(b.space, uk.v2 is not None)}, ...): no "
                             "such space in the kernel", where=where, kernel=kernel,
                             hint="use a space of the kernel's iteration space")
    _check_carg_value(b, carg, formal, ctx, where, kernel)


_OPER_FORMS = (CArgForm.ARG_OPER, CArgForm.IMM_OPER, CArgForm.ARG_COPER, CArgForm.GROUP_OPER)


def _gives_pointer(b: CArgBinding, carg: CArg) -> bool:
    """Whether the C value of a C_Arg* binding of ``carg`` is a pointer: indexing or indirection
    removes one level, an operator keeps a pointer only as an offset (+, - ; V + N only)."""
    if b.form in (CArgForm.INDEX, CArgForm.INDIRECT):
        return carg.ctype.count("*") > 1
    if b.form == CArgForm.GROUP_OPER and b.oper == "*":  # N + Iter*(V)
        return carg.is_pointer
    if b.form in (CArgForm.ARG_OPER, CArgForm.ARG_COPER, CArgForm.GROUP_OPER):
        return carg.is_pointer and b.oper in ("+", "-")
    if b.form == CArgForm.IMM_OPER:
        return carg.is_pointer and b.oper == "+"
    return carg.is_pointer


def _check_carg_value(b: CArgBinding, carg: CArg, formal: CArg, ctx: str, where: str, kernel: str) -> None:
    """A C_Arg* binding of C argument ``carg`` (of a user kernel or a group) passed to ``formal``."""
    if b.form in (CArgForm.PLUS_PLANE, CArgForm.INDEX, CArgForm.INDIRECT) and not carg.is_pointer:
        raise ModelError(f"{ctx}: {b.form.value} needs a pointer but '{carg.name}' is '{carg.ctype}'", where=where,
                         kernel=kernel, hint="use C_Arg for scalar arguments")
    pointer = _gives_pointer(b, carg)
    why = f"C argument '{carg.name}' is '{carg.ctype}'"
    if carg.is_pointer and formal.is_pointer and not pointer and b.form in _OPER_FORMS:
        why = "only + and - keep a pointer (C_ArgPlusImmOffset)"
    _check_pointer_match(pointer, formal, ctx, where, kernel, None, why, f"{b.form.value}('{b.name}')")


def _int_ranges() -> dict:
    """Values of the integer C types an Imm may be passed to (plain char: signed or not, as the
    compiler chooses, so either)."""
    families = ((("char",), 8, None), (("signed char", "int8_t", "Word8"), 8, True),
                (("unsigned char", "uint8_t", "Wordu8"), 8, False),
                (("short", "short int", "signed short", "signed short int", "int16_t", "Word16"), 16, True),
                (("unsigned short", "unsigned short int", "uint16_t", "Wordu16"), 16, False),
                (("int", "signed", "signed int", "long", "long int", "int32_t", "Word32"), 32, True),
                (("unsigned", "unsigned int", "unsigned long", "uint32_t", "Wordu32"), 32, False))
    out = {}
    for names, bits, signed in families:
        lo = 0 if signed is False else -(1 << (bits - 1))
        hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        out.update({n: (lo, hi) for n in names})
    return out


_INT_RANGES = _int_ranges()


def _check_imm(b: ImmBinding, formal: CArg, ctx: str, where: str, kernel: str, pointer_hint: str) -> None:
    if formal.is_pointer:
        if b.value != 0:
            raise ModelError(f"{ctx}: Imm({b.value}) bound to pointer argument '{formal.name}' ('{formal.ctype}')",
                             where=where, kernel=kernel, hint=pointer_hint)
        return
    lo, hi = _INT_RANGES.get(" ".join(w for w in formal.ctype.split() if w not in ("const", "volatile")),
                             (b.value, b.value))
    if not lo <= b.value <= hi:
        raise ModelError(f"{ctx}: Imm({b.value}) does not fit '{formal.name}' ('{formal.ctype}', {lo}..{hi})",
                         where=where, kernel=kernel, hint="give a value of the argument's range, or widen its type")


# ----------------------------------------------------------------------------------------------
# Groups


def validate_group(group: KernelGroupDecl, members: dict) -> None:
    """``members``: name -> UserKernelDecl of the kernels declared inside the group."""
    check_name(group.name, "kernel group", group.where)
    check_unique([c.name for c in group.cargs], "C argument", group.where, group.name)
    check_unique([a.name for a in group.kerargs], "kernel group argument", group.where, group.name)
    for a in group.kerargs:
        if a.carg_name is not None and not any(c.name == a.carg_name for c in group.cargs):
            raise ModelError(f"is bound to C argument '{a.carg_name}', which the group does not declare",
                             where=a.where, kernel=group.name, arg=a.name,
                             hint="group C arguments are: " + (", ".join(c.name for c in group.cargs) or "none"))
    for call in group.calls:
        if not call.user_kernel_call:
            raise ModelError(f"Call('{call.name}', ...) in a kernel group: a group calls user kernels",
                             where=call.where, kernel=group.name,
                             hint=f"use UserKernelCall('{call.name}', LOC_GROUP, Bindings(...))")
        callee = members.get(call.name)
        if callee is None:
            raise ModelError(f"UserKernelCall names '{call.name}', which is not a user kernel of this group",
                             where=call.where, kernel=group.name,
                             hint="kernels of the group: " + (", ".join(members) or "none"))
        if len(call.bindings) != len(callee.cargs):
            raise ModelError(f"call to '{call.name}' has {len(call.bindings)} binding(s) but the user kernel "
                             f"takes {len(callee.cargs)}", where=call.where, kernel=group.name,
                             hint="bind, in order: " + ", ".join(c.name for c in callee.cargs))
        for b, formal in zip(call.bindings, callee.cargs):
            _validate_group_binding(b, formal, call, group)
    group_homes(group, members)


def _validate_group_binding(b, formal: CArg, call: CallDecl, group: KernelGroupDecl) -> None:
    where = getattr(b, "where", "") or call.where
    ctx = f"call to '{call.name}'"
    if isinstance(b, CArgBinding):
        carg = next((c for c in group.cargs if c.name == b.name), None)
        if carg is None:
            raise ModelError(f"{ctx}: {b.form.value} names unknown group C argument '{b.name}'", where=where,
                             kernel=group.name, hint="group C arguments are: " + ", ".join(c.name for c in group.cargs)
                             + suggest(b.name, [c.name for c in group.cargs]))
        if b.form not in (CArgForm.PLAIN, CArgForm.GROUP_OPER, CArgForm.PLUS_IMM, CArgForm.INDIRECT):
            raise ModelError(f"{ctx}: {b.form.value} has no iterator in a kernel group", where=where, kernel=group.name,
                             hint="use C_Arg, KG_ArgOper, C_ArgIndirect or Imm")
        _check_carg_value(b, carg, formal, ctx, where, group.name)
        return
    if isinstance(b, ImmBinding):
        _check_imm(b, formal, ctx, where, group.name, "pass a group C argument")
        return
    raise ModelError(f"{ctx}: only C_Arg, KG_ArgOper, C_ArgIndirect and Imm bindings are allowed in a kernel group",
                     where=where, kernel=group.name, hint="use C_Arg(...) or Imm(...)")


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


__all__ = [
    "C_KEYWORDS", "generated_local", "check_c_name", "check_not_reserved", "check_name", "check_int", "check_space_props", "check_positive", "check_unique", "check_count", "suggest",
    "space_name", "location_name", "flag_names", "validate_kernel_space", "validate_kerarg_fields",
    "validate_arg_space", "validate_user_kernel", "validate_binding", "validate_group", "carg_homes", "group_homes",
    "SPACE_SHORT", "POINTER_SELECTS", "SUPPORTED_SELECTS", "BINDING_OPERS",
]
