"""The model IR: frozen dataclasses for everything a model script declares.

Internally every user kernel is in the v3 form: an ordered iteration space (tiled spaces
T0..T2, fixed, parametric and run-time-bounded spaces D0..D3) and, per kernel argument, the
spaces it lives in (``KerArgSpace``). The guide's v2 form (``KernelDimensions`` +
``KernelIterationOrder``, 3D/4D object flags) is translated onto it by :mod:`.v2`.

Objects are created by the guide-named functions of :mod:`autotiler.api`; each remembers the
model script's ``file:line`` (``where``) so that errors point at the line that declared it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from typing import Optional

from ..constants import (
    SPACE_SHORT,
    KernelArgSelect_T,
    KernelCallLocationT,
    KernelCallTypeT,
    KernelIteratorT,
    Object_Type_T,
    Tile_Orientation_T,
    is_tiled_space,
)
from .devices import L3Device

O = Object_Type_T
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def caller_where() -> str:
    """``file:line`` of the first stack frame outside the autotiler package (the model script)."""
    frame, cwd = sys._getframe(1), os.getcwd()
    while frame is not None:
        outside = _outside_package(frame.f_code.co_filename, cwd)
        if outside is not None:
            return f"{outside}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>:0"


@cache
def _outside_package(co_filename: str, cwd: str) -> Optional[str]:
    """The short path (from ``cwd``) of a code object's file outside the autotiler package, else
    None; once per file and directory: every declaration walks the stack."""
    filename = os.path.abspath(co_filename)
    return None if filename.startswith(_PACKAGE_DIR + os.sep) else _short_path(filename)


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
        return not self.is_pointer and any(t in self.ctype.split() for t in ("float", "double", "_Float16", "f16", "f16a"))

    @property
    def base_type(self) -> str:
        """The pointed-to type of a pointer argument (``Word32 * __restrict__`` -> ``Word32``)."""
        return self.ctype.split("*")[0].strip()


@dataclass(frozen=True)
class LibKernelDecl:
    """A basic kernel. ``cost``: compute cycles of one call as an integer expression over its
    scalar argument names and ``ncores`` (extension, see :mod:`autotiler.model.cost`)."""

    name: str
    call_type: KernelCallTypeT
    cargs: tuple
    par_type: str
    cost: Optional[str] = None
    attributes: int = 0            # CALL_FLOAT_KER | CALL_HWC_KER | CALL_NE16_KER
    cnn_match: object = field(default=None, compare=False)
    where: str = field(default="", compare=False)

    def carg(self, name: str) -> Optional[CArg]:
        return next((a for a in self.cargs if a.name == name), None)

    @property
    def parallel(self) -> bool:
        return self.call_type in (KernelCallTypeT.CALL_PARALLEL, KernelCallTypeT.CALL_PARALLEL_CC)

    @property
    def struct_call(self) -> bool:
        """Arguments passed in a struct (parallel calls and CALL_SEQUENTIAL_STRUCT)."""
        return self.call_type != KernelCallTypeT.CALL_SEQUENTIAL


# ----------------------------------------------------------------------------------------------
# Bindings


class Sentinel:
    """``AT_NO_ARG_BINDING``, ``AT_IGNORE_ARG_BINDING``, ``AT_NO_CALL``, ``AT_NO_KER_ARG``,
    ``AT_NO_C_ARG``: placeholders in the count-prefixed lists."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


AT_NO_ARG_BINDING = Sentinel("AT_NO_ARG_BINDING")          # the slot is dropped from the list
AT_IGNORE_ARG_BINDING = Sentinel("AT_IGNORE_ARG_BINDING")  # the callee's argument is left unassigned
AT_NO_CALL = Sentinel("AT_NO_CALL")
AT_NO_KER_ARG = Sentinel("AT_NO_KER_ARG")
AT_NO_C_ARG = Sentinel("AT_NO_C_ARG")
DROPPED = (AT_NO_ARG_BINDING, AT_NO_CALL, AT_NO_KER_ARG, AT_NO_C_ARG)


@dataclass(frozen=True)
class KArgBinding:
    """A property of a kernel argument (``K_Arg``), optionally relative to a space (``K_ArgPar``,
    ``K_ArgPred``) and combined with an immediate (``K_ArgOp``: ``oper`` one of + - * / % << >>
    & | == !=)."""

    arg: str
    select: KernelArgSelect_T
    space: Optional[KernelIteratorT] = None
    oper: Optional[str] = None
    value: int = 0
    ctor: str = "K_Arg"
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class TileOperBinding:
    """``K_TileOper(Arg, AccessType, Oper, Value)``: the tile pointer cast to ``ctype`` combined
    with ``value``; ``'@'`` subscripts it (``((ctype)(tile))[value]``)."""

    arg: str
    ctype: str
    oper: str
    value: int
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class PredListBinding:
    """``K_ArgPredList(BIND_PRED_AND|BIND_PRED_OR, N, preds...)``."""

    conj: str  # "&&" or "||"
    preds: tuple
    where: str = field(default="", compare=False)


class CArgForm(Enum):
    PLAIN = "C_Arg"                      # Name
    PLUS_IMM = "C_ArgPlusImmOffset"      # Name + V
    ARG_OPER = "C_ArgImmOper"            # Name op V
    IMM_OPER = "C_ImmArgOper"            # V op Name
    ARG_COPER = "C_ArgCOper"             # Name op Cvar
    PLUS_CVAR = "C_ArgPlusCvarOffset"    # Name + Cvar
    PLUS_PLANE = "C_ArgPlusPlaneOffset"  # Name + Index(Space)*Mult
    INDEX = "C_ArgIndex"                 # Name[Index(Space)*Mult]
    INDIRECT = "C_ArgIndirect"           # *(Name + V)
    GROUP_OPER = "KG_ArgOper"            # group: Name op V


@dataclass(frozen=True)
class CArgBinding:
    name: str
    form: CArgForm = CArgForm.PLAIN
    oper: str = "+"
    value: int = 0
    cvar: Optional[str] = None
    space: Optional[KernelIteratorT] = None
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class ImmBinding:
    value: int
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class KerDimBinding:
    """``KerDim(K_INP|K_OUTP|K_W|K_H)``: a dimension of the user kernel."""

    dim: int
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class IterIndexBinding:
    """``Ker_IteratorIndex(Space)``: the current index of a space's loop."""

    space: KernelIteratorT
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class UserSymbBinding:
    name: str
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class ExprBinding:
    """``BindKExpr`` / ``BindKGExpr``: a binding in the original's expression language."""

    text: str
    group: bool = False
    where: str = field(default="", compare=False)


Binding = object  # any of the binding classes above


@dataclass(frozen=True)
class CallDecl:
    """A call to a basic kernel (``Call``) or, in a group, to a user kernel (``UserKernelCall``)."""

    name: str
    location: KernelCallLocationT
    bindings: tuple
    user_kernel_call: bool = False
    where: str = field(default="", compare=False)


# ----------------------------------------------------------------------------------------------
# Iteration spaces


class SpaceKind(Enum):
    TILED = "tiled"
    FIXED = "fixed"
    PARAMETRIC = "parametric"
    DYNAMIC = "fixed, bound at run time"


@dataclass(frozen=True)
class IterSpace:
    """One loop of a kernel's iteration space (``IterTiledSpace``, ``IterFixedSpace``,
    ``IterParSpace``, ``IterFixedSpaceDynBound``). ``dim``: the extent of a non-tiled space
    (the static bound of a run-time-bounded one); ``pref_div``: a parametric space's preferred
    chunk multiple; ``bound``: the C argument holding a run-time bound."""

    space: KernelIteratorT
    kind: SpaceKind
    dim: int = 0
    pref_div: int = 0
    bound: Optional[str] = None
    props: int = 0  # SPACE_PROP_* given with the space (SPACE_PROP_ONE_TILE: a single chunk)
    where: str = field(default="", compare=False)

    @property
    def short(self) -> str:
        return SPACE_SHORT[int(self.space)]

    @property
    def tiled(self) -> bool:
        return self.kind == SpaceKind.TILED


@dataclass(frozen=True)
class KernelSpace:
    """``KernelIterSpace(N, ...)``: loops outer to inner."""

    spaces: tuple
    where: str = field(default="", compare=False)

    def get(self, space) -> Optional[IterSpace]:
        return next((s for s in self.spaces if s.space == space), None)

    def position(self, space) -> int:
        return next(i for i, s in enumerate(self.spaces) if s.space == space)

    def __contains__(self, space) -> bool:
        return self.get(space) is not None

    @property
    def innermost(self) -> Optional[IterSpace]:
        return self.spaces[-1] if self.spaces else None


@dataclass(frozen=True)
class SpaceRef:
    """One ``KerArgSpace`` entry: a space and its ``SPACE_PROP_*`` properties."""

    space: KernelIteratorT
    props: int = 0

    @property
    def short(self) -> str:
        return SPACE_SHORT[int(self.space)]

    @property
    def tiled(self) -> bool:
        return is_tiled_space(self.space)


@dataclass(frozen=True)
class ArgSpace:
    """``KerArgSpace(N, ...)``: the spaces a kernel argument lives in, outer to inner, in the
    order of its layout in memory (each non-tiled space a dimension, a tiled space the plane)."""

    refs: tuple
    where: str = field(default="", compare=False)

    @property
    def spaces(self) -> tuple:
        return tuple(r.space for r in self.refs)

    def ref(self, space) -> Optional[SpaceRef]:
        return next((r for r in self.refs if r.space == space), None)

    @property
    def tiled(self) -> Optional[SpaceRef]:
        return next((r for r in self.refs if r.tiled), None)


@dataclass(frozen=True)
class Pad:
    """A ``v4s`` padding: (left, right, top, bottom) items."""

    left: int = 0
    right: int = 0
    top: int = 0
    bottom: int = 0

    def __iter__(self):
        return iter((self.left, self.right, self.top, self.bottom))

    @property
    def any(self) -> bool:
        return any(self)


@dataclass(frozen=True)
class KerArgDecl:
    """A kernel argument, from any of the constructors (``KerArg``, ``KerArgP``, ``KerArgPad``,
    ...). Sizes are in items (``item_size`` bytes each). ``used_w``/``used_h``: the part of the
    plane actually consumed (None: all of it); ``pad_tile``: padding that sets the tile
    geometry, ``pad_exec``: padding the basic kernel applies; ``bottom``/``top``: extra items
    before/after each tile in L1 (delay lines)."""

    name: str
    space: Optional[ArgSpace]
    obj_type: int
    w: int
    h: int
    item_size: int
    overlap: int = 0
    constraints: int = 0
    preferred: int = 0
    carg_name: Optional[str] = None
    used_w: Optional[int] = None
    used_h: Optional[int] = None
    pad_tile: Pad = Pad()
    pad_exec: Pad = Pad()
    pad_value: Optional[int] = None
    bottom: int = 0
    top: int = 0
    w_pad_align: int = 0
    raw_item_size: int = 0
    alias: Optional[int] = None
    min_tile: int = 0
    next_plane_update: int = 0
    ctor: str = "KerArg"
    where: str = field(default="", compare=False)
    # the external memory of an L3-homed (O_L2DB) argument: None is the model's L3 RAM
    # (AT_GRAPH_PREF_L3_EXEC); a graph node's variant reads a constant from its flash
    # (AT_GRAPH_CONST_EXEC_FROM_FLASH)
    l3_device: Optional[L3Device] = None

    def has(self, flag) -> bool:
        return bool(self.obj_type & int(flag))

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
    def in_l3(self) -> bool:
        """Home in external L3 RAM (O_L2DB): staged through L2 by the micro-DMA."""
        return self.has(O.O_L2DB)

    @property
    def uw(self) -> int:
        return self.w if self.used_w is None else self.used_w

    @property
    def uh(self) -> int:
        return self.h if self.used_h is None else self.used_h


# ----------------------------------------------------------------------------------------------
# User kernels and groups


@dataclass(frozen=True)
class V2Form:
    """How a kernel was declared with the guide's v2 API, for messages and reports."""

    nip: int
    w: int
    h: int
    nop: int
    order: tuple  # the KernelIterationOrder iterators as given


@dataclass(frozen=True)
class KernelOptions:
    """Per-kernel controls in force when the kernel was declared (AT_SetKernelCtrl,
    SetKernelOpts, SetTilingObjective, SetInlineMode)."""

    buffer_promote: bool = True
    partial_buffer_promote: bool = True
    nosolution_error: bool = True
    objective: str = "time"
    inline: int = 1  # InlineModeT


@dataclass(frozen=True)
class UserKernelDecl:
    name: str
    space: KernelSpace
    orientation: Tile_Orientation_T
    cargs: tuple
    calls: tuple
    kerargs: tuple
    group: Optional[str] = None
    v2: Optional[V2Form] = None
    options: KernelOptions = KernelOptions()
    where: str = field(default="", compare=False)

    def kerarg(self, name: str) -> Optional[KerArgDecl]:
        return next((a for a in self.kerargs if a.name == name), None)

    def carg(self, name: str) -> Optional[CArg]:
        return next((a for a in self.cargs if a.name == name), None)


@dataclass(frozen=True)
class KerGroupArgDecl:
    """``KerGroupArg(Name, O_IN|O_OUT, ArgSize, ItemSize, CArgName)``."""

    name: str
    obj_type: int
    size: int
    item_size: int
    carg_name: Optional[str]
    where: str = field(default="", compare=False)


@dataclass(frozen=True)
class KernelGroupDecl:
    name: str
    cargs: tuple
    calls: tuple
    iterations: int = 1
    kerargs: tuple = ()
    where: str = field(default="", compare=False)


__all__ = [
    "caller_where", "CArg", "LibKernelDecl", "Sentinel", "AT_NO_ARG_BINDING", "AT_IGNORE_ARG_BINDING", "AT_NO_CALL",
    "AT_NO_KER_ARG", "AT_NO_C_ARG", "DROPPED", "KArgBinding", "TileOperBinding", "PredListBinding", "CArgForm",
    "CArgBinding", "ImmBinding", "KerDimBinding", "IterIndexBinding", "UserSymbBinding", "ExprBinding", "CallDecl", "SpaceKind", "IterSpace", "KernelSpace", "SpaceRef", "ArgSpace", "Pad",
    "KerArgDecl", "V2Form", "KernelOptions", "UserKernelDecl", "KerGroupArgDecl", "KernelGroupDecl",
]
