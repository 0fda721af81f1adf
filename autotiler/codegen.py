"""Code generation: a render model computed in Python, printed by jinja2 templates.

For each user kernel the tiling (:mod:`autotiler.tiler`) is turned into C statements placed in a
loop tree (OutPlane > Tile > InPlane, loops of extent 1 dropped). The DMA pipeline per argument:

* input moved at loop level L, double buffered: first instance read before the loops; at the top
  of each L iteration wait for the current instance, then prefetch the next one (the next
  iteration of the loops up to L) into the other half;
* input single buffered: read and wait at the top of each L iteration;
* output at level L: after the iteration's calls, wait for the argument's previous write (it used
  the half we fill next), then issue this instance's write; the last write is waited after the
  loops;
* in-out double buffered: as an input, but the previous write is waited before the prefetch
  overwrites its half;
* arguments with no level (one instance) are read before the loops and written after them.

Templates only loop and print; see ``templates/``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Optional

import jinja2

from .constants import AT_MemLocation_T, KernelCallTypeT
from .constants import KernelArgSelect_T as S
from .constants import KernelCallLocationT as L
from .constants import KernelIteratorT as I
from .constants import Tile_Orientation_T as T
from .errors import CodegenError
from .model import CArgBinding, CArgIndexBinding, ImmBinding, KArgBinding, carg_homes, group_homes
from .tiler import (
    ROLE_DYNTILE,
    ROLE_ONETILE,
    ROLE_PARTIAL,
    ROLE_PLANE,
    ROLE_RESIDENT,
    ROLE_TILE,
    ArgTiling,
    KernelTiling,
    decode_instance,
    levels_upto,
)

LOOP_VARS = {I.KER_OUT_PLANE: "OutPlane", I.KER_TILE: "Tile", I.KER_IN_PLANE: "InPlane"}


@dataclass(frozen=True)
class L3Device:
    """An external RAM as generated code names it: macro family and device symbol."""

    family: str     # AT_<family>_CL_COPY, ...
    symbol: str     # the AT_<family>_T the application opens


# Where L3-homed (O_L2DB) user-kernel arguments execute from: AT_GRAPH_PREF_L3_EXEC.
L3_DEVICES = {
    AT_MemLocation_T.AT_MEM_L3_HRAM: L3Device("HYPERRAM", "HyperRam"),
    AT_MemLocation_T.AT_MEM_L3_QSPIRAM: L3Device("QSPIRAM", "QspiRam"),
    AT_MemLocation_T.AT_MEM_L3_OSPIRAM: L3Device("OSPIRAM", "OspiRam"),
    AT_MemLocation_T.AT_MEM_L3_DEFAULTRAM: L3Device("DEFAULTRAM", "DefaultRam"),
}
AT_MEM_L3_DEFAULT_EXEC = AT_MemLocation_T.AT_MEM_L3_HRAM  # the original's default
NEST = (I.KER_OUT_PLANE, I.KER_TILE, I.KER_IN_PLANE)
# Call locations hosted by each level: (before the inner loop, after it).
LEVEL_CALLS = {
    None: (L.LOC_PROLOG, L.LOC_EPILOG),
    I.KER_OUT_PLANE: (L.LOC_INNER_LOOP_PROLOG, L.LOC_INNER_LOOP_EPILOG),
    I.KER_TILE: (L.LOC_IN_PLANE_PROLOG, L.LOC_IN_PLANE_EPILOG),
    I.KER_IN_PLANE: (L.LOC_INNER_LOOP, None),
}
MANIFEST_FORMAT = "autotiler-manifest/1"


def _version() -> str:
    from . import __version__

    return __version__


# ----------------------------------------------------------------------------------------------
# Render model


@dataclass
class Block:
    """One level of the loop tree: ``for (var=0; var<extent; var++) { head; pre; inner; post; tail }``
    (no ``for`` when ``var`` is None: the kernel's top level)."""

    var: Optional[str]
    extent: int
    head: list = field(default_factory=list)
    pre: list = field(default_factory=list)
    inner: Optional[Block] = None
    post: list = field(default_factory=list)
    tail: list = field(default_factory=list)


@dataclass
class RenderKernel:
    name: str
    params: list
    comment: list
    locals: list
    invariants: list
    prolog: list
    body: Block
    epilog: list


@dataclass
class RenderGroup:
    name: str
    params: list
    comment: list
    calls: list


# ----------------------------------------------------------------------------------------------
# Expressions


def _lin(terms, const: int = 0) -> str:
    """``[(coef, var), ...] + const`` as a C expression, zero terms dropped, numbers folded."""
    parts = []
    for coef, var in terms:
        if coef == 0 or var in (None, "0"):
            continue
        if var.isdigit():
            const += coef * int(var)
            continue
        parts.append(var if coef == 1 else f"({var})*{coef}")
    if const or not parts:
        parts.append(str(const))
    return " + ".join(parts)


def _sel(cond: Optional[str], a: int, b: int) -> str:
    """``cond ? a : b`` folded when both sides agree or there is no condition."""
    if cond is None or a == b:
        return str(b)
    if cond == "1":
        return str(a)
    return f"({cond}?{a}:{b})"


class KernelContext:
    """Naming and expression helpers for one tiled user kernel."""

    def __init__(self, tiling: KernelTiling, l1_symbol: str, l2_symbol: str = "L2_Memory"):
        self.t = tiling
        self.l1 = l1_symbol
        self.l2 = l2_symbol
        self.extents = dict(tiling.loops)
        self.live = set(NEST)  # loops whose variable is in scope where the expression is used
        self.fixed: Optional[dict] = None  # loop indices known when generating (prolog/epilog)

    def var(self, it: I, prefix: Optional[str] = "") -> str:
        """Loop variable (``prefix`` "Next" for the next iteration, "Ahead"/"Prev" for a decoded
        instance); "0" where the loop does not exist, is not live at this point, or ``prefix`` is
        None (before/after the loops); a number under ``fixed``."""
        if self.fixed is not None:
            return str(self.fixed.get(it, 0))
        if it not in self.extents or prefix is None or (prefix == "" and it not in self.live):
            return "0"
        return f"{prefix}{LOOP_VARS[it]}"

    def last_tile(self, prefix: Optional[str] = "") -> Optional[str]:
        """Condition 'this (or the next) tile is the last one'; None where it is known false."""
        if I.KER_TILE not in self.extents or prefix is None:
            return None
        if self.fixed is not None:
            return "1" if self.fixed.get(I.KER_TILE, 0) == self.extents[I.KER_TILE] - 1 else None
        if prefix:
            return f"({prefix}Tile=={self.extents[I.KER_TILE] - 1})"
        return "Last" if I.KER_TILE in self.live else None

    # -- L3 staging ---------------------------------------------------------------------------
    def decode(self, a: ArgTiling, j: int) -> dict:
        """Loop indices of instance ``j`` of the argument."""
        return decode_instance(self.t.loops, a.level, j)

    def decode_decl(self, a: ArgTiling, prefix: str, j_expr: str) -> str:
        """C declarations of ``<prefix>Tile`` etc. (the loops of the argument's space) for the
        instance numbered ``j_expr``."""
        levels = levels_upto(self.t.loops, a.level)
        decls, inner = [f"{prefix}J = {j_expr}"], 1
        for it in reversed(levels):
            extent = self.extents[it]
            if it in a.space:
                expr = f"{prefix}J" if inner == 1 else f"{prefix}J/{inner}"
                if it != levels[0]:
                    expr = f"({expr})%{extent}"
                decls.append(f"{prefix}{LOOP_VARS[it]} = {expr}")
            inner *= extent
        return "int " + ", ".join(decls) + ";"

    def stage_index(self, a: ArgTiling, counter) -> str:
        """Staging slot (and uDMA event) of instance ``counter`` (an int or a C expression)."""
        if a.stage == 1:
            return "0"
        if isinstance(counter, int):
            return str(counter % a.stage)
        return f"{counter}%{a.stage}" if counter.isidentifier() else f"({counter})%{a.stage}"

    def stage_slot(self, a: ArgTiling, direction: str, counter) -> str:
        """L2 address of the staging slot of instance ``counter``."""
        base = a.stage_read_offset if direction == "in" else a.stage_write_offset
        index = self.stage_index(a, counter)
        if index.isdigit():
            base, index = base + a.slot_bytes * int(index), "0"
        head = f"{self.l2} + {base}" if base else self.l2
        return head if index == "0" else f"{head} + {a.slot_bytes}*({index})"

    def plane_index(self, a: ArgTiling, prefix: str = "") -> list:
        """Plane index of the argument as linear terms over loop variables."""
        nd = a.decl.ndim
        if nd == 4:
            return [(self.t.kernel.nip, self.var(I.KER_OUT_PLANE, prefix)), (1, self.var(I.KER_IN_PLANE, prefix))]
        if nd == 3:
            it = I.KER_IN_PLANE if a.decl.is_in else I.KER_OUT_PLANE
            return [(1, self.var(it, prefix))]
        return []

    def l2_offset(self, a: ArgTiling, prefix: str = "") -> str:
        """Byte offset in the L2 argument of the instance named by the loop variables."""
        terms = [(c * a.plane_bytes * a.plane_step, v) for c, v in self.plane_index(a, prefix)
                 if not (a.role == ROLE_PARTIAL and v.endswith("InPlane"))]
        if a.role == ROLE_TILE and I.KER_TILE in a.space:
            unit = a.line_bytes() if a.orientation == T.TILE_HOR else a.item
            terms.append((a.step * unit, self.var(I.KER_TILE, prefix)))
        return _lin(terms)

    def base(self, a: ArgTiling) -> str:
        return f"{self.l1} + {a.offset}" if a.offset else self.l1

    def slot(self, a: ArgTiling, next_instance: bool = False, first: bool = False) -> str:
        """L1 address of the argument's current (or next) slot; ``first``: instance 0."""
        if a.nbuf == 1 or first:
            return self.base(a)
        counter = f"(N_{a.name}+1)" if next_instance else f"N_{a.name}"
        if a.role == ROLE_ONETILE:
            counter = "(Tile+1)" if next_instance else self.var(I.KER_TILE)
        return f"{self.base(a)} + {a.slot_bytes}*({counter}%2)"

    def tile_pointer(self, a: ArgTiling) -> str:
        if a.role in (ROLE_TILE, ROLE_PLANE, ROLE_ONETILE):
            return self.slot(a)
        if a.role == ROLE_PARTIAL:
            plane = _lin([(a.plane_bytes, self.var(I.KER_IN_PLANE))])
            return self.slot(a) if plane == "0" else f"{self.slot(a)} + {plane}"
        if a.role == ROLE_DYNTILE:
            line = a.line_bytes()
            terms = [(c * self.t.ntiles * line, v) for c, v in self.plane_index(a)] if a.decl.ndim > 2 else []
            terms.append((line, self.var(I.KER_TILE)))
            return f"{self.base(a)} + {_lin(terms)}"
        terms = [(c * a.plane_bytes, v) for c, v in self.plane_index(a)]
        if a.decl.is_tiled and a.step:
            unit = a.line_bytes() if a.orientation == T.TILE_HOR else a.item
            terms.append((a.step * unit, self.var(I.KER_TILE)))
        offset = _lin(terms)
        return self.base(a) if offset == "0" else f"{self.base(a)} + {offset}"

    def tile_dim(self, a: ArgTiling, width: bool, standard: bool = False) -> str:
        std = a.tile_w() if width else a.tile_h()
        last = a.tile_w(True) if width else a.tile_h(True)
        return str(std) if standard else _sel(self.last_tile(), last, std)


# ----------------------------------------------------------------------------------------------
# Bindings


def binding_expr(ctx: KernelContext, b, formal) -> str:
    """C expression of one binding, cast to the basic kernel's argument type."""
    if isinstance(b, ImmBinding):
        value = str(b.value)
    elif isinstance(b, CArgBinding):
        value = b.name
    elif isinstance(b, CArgIndexBinding):
        value = f"{b.name}[{_lin([(b.mult, ctx.var(b.iterator))])}]"
    else:
        value = _karg_expr(ctx, b)
    return f"({formal.ctype}) ({value})"


def _karg_expr(ctx: KernelContext, b: KArgBinding) -> str:
    a = ctx.t.arg(b.arg)
    sel = b.select
    simple = {
        S.KER_ARG: lambda: ctx.base(a),
        S.KER_ARG_TILE: lambda: ctx.tile_pointer(a),
        S.KER_ARG_TILE_W: lambda: ctx.tile_dim(a, True),
        S.KER_ARG_TILE_H: lambda: ctx.tile_dim(a, False),
        S.KER_ARG_TILE_W0: lambda: ctx.tile_dim(a, True, standard=True),
        S.KER_ARG_TILE_H0: lambda: ctx.tile_dim(a, False, standard=True),
        S.KER_ARG_W: lambda: str(a.w),
        S.KER_ARG_H: lambda: str(a.h),
        S.KER_ARG_NTILES: lambda: str(ctx.t.ntiles),
        S.KER_ARG_TILEINDEX: lambda: ctx.var(I.KER_TILE),
        S.KER_ARG_TILEOFFSET: lambda: _lin([(a.step, ctx.var(I.KER_TILE))]),
        S.KER_ARG_TILEFIRST: lambda: f"({ctx.var(I.KER_TILE)}==0)",
        S.KER_ARG_TILELAST: lambda: ctx.last_tile() or "1",
    }
    return simple[sel]()


_LOOP_NAMES = re.compile(r"\b(OutPlane|Tile|InPlane|Last|N_\w+|Next\w+)\b")


def is_invariant(expr: str) -> bool:
    return _LOOP_NAMES.search(expr) is None


def cost_expr(ctx: KernelContext, call, lib, exprs: list) -> str:
    """Compute cycles of a call as C (see :mod:`autotiler.costmodel`)."""
    from .costmodel import cost_c_expr, default_cost_c_expr

    if lib.cost is not None:
        return cost_c_expr(lib.cost.expr, {f.name: e for f, e in zip(lib.cargs, exprs)})
    tiles = [ctx.t.arg(b.arg) for b in call.bindings
             if isinstance(b, KArgBinding) and b.select == S.KER_ARG_TILE]
    items = None
    if tiles:
        a = max(tiles, key=lambda x: x.tile_w() * x.tile_h())
        items = f"{ctx.tile_dim(a, True)}*{ctx.tile_dim(a, False)}"
    return default_cost_c_expr(items, lib.call_type == KernelCallTypeT.CALL_PARALLEL)


# ----------------------------------------------------------------------------------------------
# Kernel rendering


class KernelRenderer:
    def __init__(self, tiling: KernelTiling, libs: dict, l1_symbol: str, platform=None,
                 l2_symbol: str = "L2_Memory", device: Optional[L3Device] = None):
        self.t = tiling
        self.libs = libs
        self.ctx = KernelContext(tiling, l1_symbol, l2_symbol)
        self.platform = platform
        self.dev = device or L3_DEVICES[AT_MEM_L3_DEFAULT_EXEC]
        self.invariants: list = []
        self.locals: list = []

    # -- DMA statements ---------------------------------------------------------------------------
    def _size(self, a: ArgTiling, last_cond: Optional[str]) -> str:
        """Bytes of one transfer of the argument (``last_cond``: the last, shorter tile)."""
        if a.role == ROLE_RESIDENT:
            return str(a.plane_bytes * a.planes)
        if a.role == ROLE_PARTIAL:
            return str(a.plane_bytes * a.partial_planes)
        if a.role == ROLE_PLANE:
            return str(a.plane_bytes)
        if a.strided:
            return _sel(last_cond, a.tile_last * a.item * a.h, a.tile_std * a.item * a.h)
        return _sel(last_cond, a.tile_bytes(True), a.tile_bytes())

    @staticmethod
    def _line_length(a: ArgTiling, last_cond: Optional[str]) -> str:
        """Bytes per line of a 2D (strided) transfer: one row of the vertical tile."""
        return _sel(last_cond, a.tile_last * a.item, a.tile_std * a.item)

    def _copy(self, a: ArgTiling, direction: str, loc: str, prefix: Optional[str] = "",
              last_cond: Optional[str] = None, stage=None) -> str:
        """Cluster-DMA transfer L2 <-> L1. An L3 argument moves between its L2 staging slot of
        instance ``stage`` (contiguous: the uDMA did any 2D gather) and L1."""
        if a.l3:
            ext = f"(AT_L2_EXT_ADDR_TYPE) ({self.ctx.stage_slot(a, direction, stage)})"
        else:
            ext = f"(AT_L2_EXT_ADDR_TYPE) ((char *) {a.decl.carg_name} + {self.ctx.l2_offset(a, prefix)})"
        loc_expr = f"(AT_L2_INT_ADDR_TYPE) ({loc})"
        evt = f"&Dma{'R' if direction == 'in' else 'W'}_Evt_{a.name}"
        dir_name = "AT_L2_EXT2LOC" if direction == "in" else "AT_L2_LOC2EXT"
        size = self._size(a, last_cond)
        if a.strided and not a.l3:
            length = self._line_length(a, last_cond)
            return f"AT_L2_COPY2D(0, {ext}, {loc_expr}, {size}, {a.w * a.item}, {length}, {dir_name}, {evt});"
        return f"AT_L2_COPY(0, {ext}, {loc_expr}, {size}, {dir_name}, {evt});"

    def _ucopy(self, a: ArgTiling, direction: str, counter, prefix: Optional[str] = "") -> str:
        """Micro-DMA transfer between the L3 home of an instance (its loop indices named by
        ``prefix``, or ``ctx.fixed``) and the instance's L2 staging slot ``counter``."""
        fam, dev = self.dev.family, self.dev.symbol
        last = self.ctx.last_tile(prefix) if I.KER_TILE in a.space else None
        ext = f"(AT_{fam}_EXT_ADDR_TYPE) ((char *) {a.decl.carg_name} + {self.ctx.l2_offset(a, prefix)})"
        loc = f"(AT_{fam}_INT_ADDR_TYPE) ({self.ctx.stage_slot(a, direction, counter)})"
        evt = f"&Uchan{'R' if direction == 'in' else 'W'}_{a.name}[{self.ctx.stage_index(a, counter)}]"
        dir_name = f"AT_{fam}_EXT2LOC" if direction == "in" else f"AT_{fam}_LOC2EXT"
        size = self._size(a, last)
        if a.strided:
            length = self._line_length(a, last)
            return f"AT_{fam}_CL_COPY2D(&{dev}, {ext}, {loc}, {size}, {a.w * a.item}, {length}, {dir_name}, {evt});"
        return f"AT_{fam}_CL_COPY(&{dev}, {ext}, {loc}, {size}, {dir_name}, {evt});"

    def _uwait(self, a: ArgTiling, direction: str, counter) -> str:
        evt = f"Uchan{'R' if direction == 'in' else 'W'}_{a.name}[{self.ctx.stage_index(a, counter)}]"
        return f"AT_{self.dev.family}_CL_WAIT(&{self.dev.symbol}, &{evt});"

    def _ucopy_fixed(self, a: ArgTiling, direction: str, j: int) -> str:
        """uDMA transfer of instance ``j`` (known when generating: prolog and epilog)."""
        self.ctx.fixed = self.ctx.decode(a, j)
        try:
            return self._ucopy(a, direction, j)
        finally:
            self.ctx.fixed = None

    def _ucopy_decoded(self, a: ArgTiling, direction: str, prefix: str, j_expr: str, counter: str) -> str:
        """uDMA transfer of instance ``j_expr``, its loop indices decoded into ``<prefix>*``."""
        return f"{{ {self.ctx.decode_decl(a, prefix, j_expr)} {self._ucopy(a, direction, counter, prefix)} }}"

    def _fetch_ahead(self, a: ArgTiling) -> str:
        """Refill the staging slot just emptied with the instance ``stage`` ahead."""
        n, s = a.instances, a.stage
        copy = self._ucopy_decoded(a, "in", "Ahead", f"N_{a.name} + {s}", f"N_{a.name}")
        return f"if (N_{a.name} + {s} < {n}) {copy} /* L3 -> L2: instance {s} ahead of '{a.name}' */"

    def _drain_previous(self, a: ArgTiling) -> str:
        """After the previous instance's L1 -> L2 write landed, send it on to L3."""
        copy = self._ucopy_decoded(a, "out", "Prev", f"N_{a.name} - 1", f"N_{a.name} - 1")
        return f"{copy} /* L2 -> L3: previous instance of '{a.name}' */"

    def _wait_previous_write(self, a: ArgTiling) -> str:
        wait = f"AT_L2_WAIT(0, &DmaW_Evt_{a.name});"
        return f"{{ {wait} {self._drain_previous(a)} }}" if a.l3 else wait

    def _describe_move(self, a: ArgTiling, what: str) -> str:
        return f"/* {what} of '{a.name}' ({a.role}, {a.nbuf} L1 slot{'s' if a.nbuf > 1 else ''} at {a.offset}) */"

    def _read_statements(self, a: ArgTiling, level_block: Block) -> None:
        ctx, head, n = self.ctx, level_block.head, f"N_{a.name}"
        cur_last = ctx.last_tile() if I.KER_TILE in a.space else None
        if a.nbuf == 2:
            head.append(f"AT_L2_WAIT(0, &DmaR_Evt_{a.name}); /* tile of '{a.name}' for this iteration */")
            if a.writes:
                head.append(f"if ({n}) {self._wait_previous_write(a)} "
                            f"/* previous write-back of '{a.name}' used the half we prefetch into */")
            if a.l3:
                head.append(self._fetch_ahead(a))
            nxt_last = ctx.last_tile("Next") if I.KER_TILE in a.space else None
            prefetch = self._copy(a, 'in', ctx.slot(a, True), 'Next', nxt_last, f'{n}+1')
            if a.l3:
                prefetch = f"{{ {self._uwait(a, 'in', f'{n}+1')} {prefetch} }}"
            head.append(f"if (HasNext) {prefetch} /* prefetch next tile of '{a.name}' */")
            return
        if a.l3:
            head.append(f"{self._uwait(a, 'in', n)} /* staged in L2 */")
        head.append(f"{self._copy(a, 'in', ctx.slot(a), '', cur_last, n)} /* single buffer: read '{a.name}' */")
        head.append(f"AT_L2_WAIT(0, &DmaR_Evt_{a.name});")
        if a.l3:
            head.append(self._fetch_ahead(a))

    def _write_statements(self, a: ArgTiling, level_block: Block) -> None:
        tail, n, s = level_block.tail, f"N_{a.name}", a.stage
        cur_last = self.ctx.last_tile() if I.KER_TILE in a.space else None
        copy = self._copy(a, "out", self.ctx.slot(a), "", cur_last, n)
        if a.nbuf == 2 and not a.reads:
            tail.append(f"if ({n}) {self._wait_previous_write(a)} /* previous write-back of '{a.name}' done */")
        if a.l3:
            tail.append(f"if ({n} >= {s}) {self._uwait(a, 'out', n)} /* its staging slot was sent to L3 */")
        if a.nbuf == 2:
            tail.append(f"{copy} /* write back this tile of '{a.name}' */")
            return
        tail.append(f"{copy} /* single buffer: write '{a.name}' */")
        tail.append(f"AT_L2_WAIT(0, &DmaW_Evt_{a.name});")
        if a.l3:
            tail.append(f"{self._ucopy(a, 'out', n)} /* L2 -> L3 */")

    # -- calls --------------------------------------------------------------------------------------
    def _call_statements(self, call, index: int) -> list:
        lib = self.libs[call.name]
        exprs = [binding_expr(self.ctx, b, f) for b, f in zip(call.bindings, lib.cargs)]
        lines = [f"/* {call.location.name}: {call.name} */"]
        cost = cost_expr(self.ctx, call, lib, exprs)
        if lib.call_type == KernelCallTypeT.CALL_PARALLEL:
            var = f"KerArg{index}"
            self.locals.append(f"{lib.par_type} S_{var}, *{var} = &S_{var};")
            for formal, e in zip(lib.cargs, exprs):
                stmt = f"{var}->{formal.name} = {e};"
                (self.invariants if is_invariant(e) else lines).append(stmt)
            lines.append(f"AT_SIM_COMPUTE({cost});")
            lines.append(f"AT_FORK(gap_ncore(), (void *) {call.name}, (void *) {var});")
            lines.append(f"__CALL({call.name}, {var});")
        else:
            lines.append(f"AT_SIM_COMPUTE({cost});")
            lines.append(f"{call.name}({', '.join(exprs)});")
        return lines

    def _calls_at(self, loc, level: Optional[I]) -> list:
        """Calls placed at ``loc``; loop variables of ``level`` and the loops around it are live."""
        self.ctx.live = set(NEST[: NEST.index(level) + 1]) if level is not None else set()
        lines = []
        for index, call in enumerate(self.t.kernel.calls):
            if call.location == loc:
                lines.extend(self._call_statements(call, index))
        self.ctx.live = set(NEST)
        return lines

    def _pre_calls(self, level: Optional[I]) -> list:
        loc = LEVEL_CALLS[level][0]
        return self._calls_at(loc, level)

    def _post_calls(self, level: Optional[I]) -> list:
        loc = LEVEL_CALLS[level][1]
        return self._calls_at(loc, level) if loc is not None else []

    # -- structure ------------------------------------------------------------------------------
    def _next_iteration(self, it: I) -> list:
        """Indices of the next iteration of the loops up to ``it`` (prefetch targets)."""
        levels = [x for x in NEST if x in self.ctx.extents]
        levels = levels[: levels.index(it) + 1]
        decl = ", ".join(f"Next{LOOP_VARS[x]} = {LOOP_VARS[x]}{'+1' if x == it else ''}" for x in levels)
        lines = [f"int {decl}, HasNext;"]
        for inner, outer in zip(reversed(levels), list(reversed(levels))[1:]):
            lines.append(f"if (Next{LOOP_VARS[inner]} == {self.ctx.extents[inner]}) "
                         f"{{ Next{LOOP_VARS[inner]} = 0; Next{LOOP_VARS[outer]}++; }}")
        top = levels[0]
        lines.append(f"HasNext = (Next{LOOP_VARS[top]} < {self.ctx.extents[top]}); /* false on the very last iteration */")
        return lines

    def _block(self, it: Optional[I]) -> Block:
        """The block of loop ``it`` (None: the kernel body). Levels between it and the next
        existing loop have extent 1: their calls are placed here, around the inner loop."""
        block = Block(None, 1) if it is None else Block(LOOP_VARS[it], self.ctx.extents[it])
        level_args = [a for a in self.t.args if a.level == it and it is not None]
        if it == I.KER_TILE:
            block.head.append(f"int Last = (Tile=={self.ctx.extents[I.KER_TILE] - 1}); (void) Last;")
        if any(a.reads and a.nbuf == 2 for a in level_args):
            block.head.extend(self._next_iteration(it))
        for a in level_args:
            if a.reads:
                self._read_statements(a, block)
        inner = self._inner_level(it)
        start = 0 if it is None else NEST.index(it) + 1
        collapsed = NEST[start: NEST.index(inner) if inner is not None else len(NEST)]
        block.pre = self._pre_calls(it)
        for x in collapsed:
            block.pre += self._pre_calls(x)
        block.inner = self._block(inner) if inner is not None else None
        for x in reversed(collapsed):
            block.post += self._post_calls(x)
        block.post += self._post_calls(it)
        for a in level_args:
            if a.writes:
                self._write_statements(a, block)
        block.tail.extend(f"N_{a.name}++;" for a in level_args if a.reads or a.writes)
        return block

    def _inner_level(self, it: Optional[I]) -> Optional[I]:
        start = 0 if it is None else NEST.index(it) + 1
        return next((x for x in NEST[start:] if x in self.ctx.extents), None)

    def render(self) -> RenderKernel:
        body = self._block(None)
        prolog, epilog = self._prolog(), self._epilog()
        return RenderKernel(
            name=self.t.name, params=[f"{c.ctype} {c.name}" for c in self.t.kernel.cargs],
            comment=kernel_comment(self.t, self.platform), locals=self._locals(), invariants=list(self.invariants),
            prolog=prolog, body=body, epilog=epilog)

    def _locals(self) -> list:
        lines = []
        evts = [f"DmaR_Evt_{a.name}" for a in self.t.args if a.reads]
        evts += [f"DmaW_Evt_{a.name}" for a in self.t.args if a.writes]
        if evts:
            lines.append(f"AT_L2_EVENT {', '.join(evts)}; /* one DMA event per argument and direction */")
        uevts = [f"Uchan{d}_{a.name}[{a.stage}]" for a in self.t.args if a.l3
                 for d, moves in (("R", a.reads), ("W", a.writes)) if moves]
        if uevts:
            lines.append(f"AT_{self.dev.family}_CL_EVENT {', '.join(uevts)}; "
                         "/* one micro-DMA event per L2 staging slot */")
        loop_vars = [LOOP_VARS[it] for it in NEST if it in self.ctx.extents]
        if loop_vars:
            lines.append(f"int {', '.join(loop_vars)};")
        counters = [f"N_{a.name} = 0" for a in self.t.args if a.level is not None and (a.reads or a.writes)]
        if counters:
            lines.append(f"int {', '.join(counters)}; /* instances moved so far: double-buffer parity */")
        return lines + self.locals

    def _prolog(self) -> list:
        lines = []
        for a in self.t.args:
            if not a.reads:
                continue
            if a.l3:
                lines.extend(f"{self._ucopy_fixed(a, 'in', j)} /* L3 -> L2: instance {j} of '{a.name}' */"
                             for j in range(min(a.stage, a.instances)))
                if a.level is None or a.nbuf == 2:
                    lines.append(self._uwait(a, "in", 0))
            if a.level is None:
                lines.append(f"{self._copy(a, 'in', self.ctx.slot(a, first=True), None, None, 0)} "
                             f"/* '{a.name}': read once */")
            elif a.nbuf == 2:
                lines.append(f"{self._copy(a, 'in', self.ctx.slot(a, first=True), None, None, 0)} "
                             f"/* first tile of '{a.name}' */")
        for a in self.t.args:
            if a.reads and a.level is None:
                lines.append(f"AT_L2_WAIT(0, &DmaR_Evt_{a.name});")
        return lines

    def _epilog(self) -> list:
        lines = []
        once = [a for a in self.t.args if a.writes and a.level is None]
        for a in once:
            lines.append(f"{self._copy(a, 'out', self.ctx.slot(a, first=True), None, None, 0)} "
                         f"/* '{a.name}': write once */")
        for a in self.t.args:
            if not a.writes:
                continue
            last = a.instances - 1
            if a.level is None or a.nbuf == 2:
                lines.append(f"AT_L2_WAIT(0, &DmaW_Evt_{a.name}); /* last write-back of '{a.name}' */")
                if a.l3:
                    lines.append(f"{self._ucopy_fixed(a, 'out', last)} /* L2 -> L3: last instance of '{a.name}' */")
            if a.l3:
                lines.extend(self._uwait(a, "out", j) for j in range(max(0, a.instances - a.stage), a.instances))
        return lines


# ----------------------------------------------------------------------------------------------
# Comments


def kernel_comment(t: KernelTiling, platform=None) -> list:
    from .bounds import describe

    k = t.kernel
    space = " > ".join(f"{LOOP_VARS[it]}[{n}]" for it, n in t.loops) or "single iteration"
    lines = [
        f"{k.name}: {t.describe()}.",
        f"Iteration space (order 2): {space}; objective '{t.objective}' over {t.candidates} feasible tiling(s).",
        f"L2<->L1 traffic: {t.traffic_in} B in, {t.traffic_out} B out.",
    ]
    if t.traffic_l3:
        lines.append(f"L3<->L2 traffic (micro-DMA): {t.traffic_l3_in} B in, {t.traffic_l3_out} B out; "
                     f"L2 staging: {t.l2_bytes} B.")
    for a in t.args:
        move = "in+out" if a.reads and a.writes else "in" if a.reads else "out" if a.writes else "L1 only"
        lines.append(f"  {a.name:<10} {a.w}x{a.h}x{a.item}B {a.decl.ndim}D {a.role:<8} {move:<7} "
                     f"L1 @{a.offset}: {a.nbuf} x {a.slot_bytes} B{_tile_note(a)}{_l3_note(a)}")
    return lines + describe(t, platform)


def _l3_note(a: ArgTiling) -> str:
    if not a.l3:
        return ""
    rings = " per direction" if a.reads and a.writes else ""
    return f"; home L3, L2 staging @{a.stage_offset}: {a.stage} x {a.slot_bytes} B{rings}"


def _tile_note(a: ArgTiling) -> str:
    if a.role != ROLE_TILE:
        return ""
    unit = "lines" if a.orientation == T.TILE_HOR else "cols"
    dma = "2D uDMA, 1D DMA" if a.strided and a.l3 else "2D DMA" if a.strided else "1D DMA"
    return f", tile {a.tile_std} {unit} (last {a.tile_last}), {dma}"


# ----------------------------------------------------------------------------------------------
# Groups


def render_group(group, kernels: dict) -> RenderGroup:
    calls = []
    for call in group.calls:
        callee = kernels[call.name]
        args = []
        for b, formal in zip(call.bindings, callee.cargs):
            value = str(b.value) if isinstance(b, ImmBinding) else b.name
            args.append(f"({formal.ctype}) ({value})")
        calls.append(f"{call.name}(\n\t\t" + ",\n\t\t".join(args) + ");" if args else f"{call.name}();")
    comment = [f"{group.name}: kernel group calling " + ", ".join(c.name for c in group.calls) + " in order."]
    return RenderGroup(group.name, [f"{c.ctype} {c.name}" for c in group.cargs], comment, calls)


# ----------------------------------------------------------------------------------------------
# Files


def _template_dir() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    installed = os.path.join(here, "templates")
    return installed if os.path.isdir(installed) else os.path.join(os.path.dirname(here), "templates")


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(_template_dir()), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)


def _guard(name: str) -> str:
    return "__" + re.sub(r"[^A-Za-z0-9]", "_", name).upper() + "__"


def generate(model) -> dict:
    """All generated files of a model as ``{file name: text}`` (pure: nothing is written)."""
    files = model.files
    sym = model.symbols
    l1_size = max((t.l1_bytes for t in model.tilings.values()), default=0)
    l2_size = max((t.l2_bytes for t in model.tilings.values()), default=0)
    device = l3_device(model)
    kernels = [KernelRenderer(model.tilings[n], model.libs, sym.l1, model.platform, sym.l2, device).render()
               for n in model.kernels]
    groups = [render_group(g, model.kernels) for g in model.groups.values()]
    ctx = {
        "version": _version(), "source": os.path.basename(_model_source(model)), "std_types": files.std_types,
        "lib_headers": list(files.lib_headers), "l1": sym.l1, "l1_size": l1_size, "l1_budget": model.l1_budget,
        "dynamic": sym.dynamic, "kernels": kernels, "l2": sym.l2, "l2_size": l2_size, "l2_budget": model.l2_budget,
        "l3_devices": [device] if uses_l3(model) else [], "groups": groups, "h_file": files.kernels_h,
        "h_guard": _guard(files.kernels_h), "init_h": files.init_h, "init_guard": _guard(files.init_h or "x"),
        "symbols_in_init": files.init_c is not None,
    }
    env = _environment()
    out = {
        files.kernels_h: env.get_template("kernels.h.j2").render(**ctx),
        files.kernels_c: env.get_template("kernels.c.j2").render(**ctx),
    }
    if files.init_c:
        out[files.init_h] = env.get_template("init.h.j2").render(**ctx)
        out[files.init_c] = env.get_template("init.c.j2").render(**ctx)
    out[_manifest_name(files.kernels_c)] = json.dumps(manifest(model, l1_size, l2_size), indent=1,
                                                       sort_keys=True) + "\n"
    return out


def l3_device(model) -> L3Device:
    from .constants import AT_GraphCtrl_T

    return L3_DEVICES[model.graph_ctrl.get(AT_GraphCtrl_T.AT_GRAPH_PREF_L3_EXEC, AT_MEM_L3_DEFAULT_EXEC)]


def uses_l3(model) -> bool:
    return any(a.l3 for t in model.tilings.values() for a in t.args)


def _model_source(model) -> str:
    kernels = list(model.kernels.values())
    return kernels[0].where.rsplit(":", 1)[0] if kernels else "model"


def _manifest_name(c_file: str) -> str:
    return os.path.splitext(c_file)[0] + ".json"


def manifest(model, l1_size: int, l2_size: int) -> dict:
    """Machine-readable description of the generated code (read by the host harness)."""
    files = model.files
    homes = arg_homes(model)
    funcs = [{"name": k.name, "args": [_arg_json(c, homes[k.name]) for c in k.cargs], "kind": "user_kernel"}
             for k in model.kernels.values()]
    funcs += [{"name": g.name, "args": [_arg_json(c, homes[g.name]) for c in g.cargs], "kind": "group"}
              for g in model.groups.values()]
    c_files = [files.kernels_c] + ([files.init_c] if files.init_c else [])
    out = {
        "format": MANIFEST_FORMAT, "c_files": c_files, "header": files.kernels_h,
        "l1": {"symbol": model.symbols.l1, "size": l1_size, "dynamic": model.symbols.dynamic},
        "l2": {"symbol": model.symbols.l2, "size": l2_size, "dynamic": model.symbols.dynamic},
        "kernels": funcs,
        "tilings": {n: tiling_json(t) for n, t in model.tilings.items()},
    }
    if uses_l3(model):
        dev = l3_device(model)
        out["l3"] = {"devices": [{"family": dev.family, "symbol": dev.symbol}]}
    return out


def arg_homes(model) -> dict:
    """{function: {C argument: "L3"}} for pointers into L3 (see model.carg_homes/group_homes)."""
    homes = {name: carg_homes(k) for name, k in model.kernels.items()}
    homes.update({g.name: group_homes(g, model.kernels) for g in model.groups.values()})
    return homes


def _arg_json(c, homes: dict) -> dict:
    out = {"name": c.name, "ctype": c.ctype, "pointer": c.is_pointer, "float": c.is_float}
    if homes.get(c.name) == "L3":
        out["home"] = "L3"
    return out


def tiling_json(t: KernelTiling) -> dict:
    return {
        "ntiles": t.ntiles, "l1_bytes": t.l1_bytes, "budget": t.budget, "promoted": t.promoted,
        "objective": t.objective, "traffic_in": t.traffic_in, "traffic_out": t.traffic_out,
        "loops": [[LOOP_VARS[it], n] for it, n in t.loops],
        "l2_bytes": t.l2_bytes, "traffic_l3_in": t.traffic_l3_in, "traffic_l3_out": t.traffic_l3_out,
        "args": [{"name": a.name, "role": a.role, "offset": a.offset, "nbuf": a.nbuf, "slot_bytes": a.slot_bytes,
                  "tile_std": a.tile_std, "tile_last": a.tile_last, "reads": a.reads, "writes": a.writes,
                  **({"home": "L3", "stage": a.stage, "stage_offset": a.stage_offset} if a.l3 else {})}
                 for a in t.args],
    }


def write_files(files: dict, output_dir: str) -> list:
    """Write all files or none: render into a temporary directory, then move into place."""
    try:
        os.makedirs(output_dir, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".autotiler-", dir=output_dir)
    except OSError as err:
        raise CodegenError(f"cannot create output directory '{output_dir}': {err.strerror}",
                           hint="check the -o directory and its permissions") from None
    try:
        for name, text in files.items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        written = []
        for name in files:
            os.replace(os.path.join(tmp, name), os.path.join(output_dir, name))
            written.append(os.path.join(output_dir, name))
        return written
    except OSError as err:
        raise CodegenError(f"cannot write generated files into '{output_dir}': {err.strerror}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_model(model):
    """Generate and write a model's files; return its GenerationReport."""
    from .reports import GenerationReport

    texts = generate(model)
    written = write_files(texts, model.output_dir)
    report = GenerationReport.from_model(model, written)
    if not getattr(model, "quiet", False):
        print(report.format())
    return report
