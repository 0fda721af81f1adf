"""Compute cost of basic-kernel calls: one rule shared by the generated code and the predictor.

A basic kernel may declare its cost with ``LibKernel(..., Cost="W*H/ncores + 20")``: an integer
expression over the kernel's scalar argument names and ``ncores`` (``/`` is integer division,
as in C on unsigned values). The generated code evaluates it right before the call through
``AT_SIM_COMPUTE(cycles)`` (empty on a real GAP, advances the simulator's clock on the host), and
the tiler's predictor evaluates the same expression in Python.

Without a declared cost, a call costs one cycle per item of the largest tile bound to it,
divided by the cores for a parallel kernel, plus ``DEFAULT_CALL_CYCLES``.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import Optional

from .errors import ModelError

DEFAULT_CALL_CYCLES = 10
_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv,
            ast.Mod, ast.USub, ast.UAdd, ast.Constant, ast.Name, ast.Load)


def parse_cost(expr: str, cargs: tuple, where: str = "", kernel: Optional[str] = None) -> ast.Expression:
    """Check a Cost expression: integers, + - * / %, parentheses, scalar argument names, ncores."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise ModelError(f"Cost expression {expr!r} is not a valid expression", where=where, kernel=kernel,
                         hint="write e.g. \"W*H/ncores + 20\"") from None
    scalars = {c.name for c in cargs if not c.is_pointer}
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED) or (isinstance(node, ast.Constant) and not isinstance(node.value, int)):
            raise ModelError(f"Cost expression {expr!r} may only use integers, + - * / % and names",
                             where=where, kernel=kernel)
        if isinstance(node, ast.Name) and node.id != "ncores" and node.id not in scalars:
            raise ModelError(f"Cost expression {expr!r} uses '{node.id}', which is not a scalar argument",
                             where=where, kernel=kernel,
                             hint="scalar arguments: " + (", ".join(sorted(scalars)) or "none") + ", and ncores")
    return tree


@lru_cache(maxsize=512)
def _parsed(expr: str) -> ast.Expression:
    return ast.parse(expr, mode="eval")  # the predictor evaluates each expression once per call


def eval_cost(expr: str, values: dict, ncores: int) -> int:
    """Evaluate a Cost expression with integer (C-like, non-negative) semantics."""
    return max(0, int(_eval(_parsed(expr).body, {**values, "ncores": ncores})))


def _eval(node, env):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        return -v if isinstance(node.op, ast.USub) else v
    a, b = _eval(node.left, env), _eval(node.right, env)
    op = type(node.op)
    if op is ast.Add:
        return a + b
    if op is ast.Sub:
        return a - b
    if op is ast.Mult:
        return a * b
    if op in (ast.Div, ast.FloorDiv):
        return a // b if b else 0
    return a % b if b else 0


def cost_c_expr(expr: str, values: dict) -> str:
    """The Cost expression as C, each argument name replaced by its (parenthesised) bound value."""
    def sub(m):
        name = m.group(0)
        if name == "ncores":
            return "gap_ncore()"
        return f"({values[name]})" if name in values else name

    return re.sub(r"\b[A-Za-z_]\w*\b", sub, expr)


def default_cost_c_expr(items_expr: Optional[str], parallel: bool) -> str:
    if items_expr is None:
        return str(DEFAULT_CALL_CYCLES)
    if parallel:
        return f"{DEFAULT_CALL_CYCLES} + (({items_expr}) + gap_ncore() - 1)/gap_ncore()"
    return f"{DEFAULT_CALL_CYCLES} + ({items_expr})"


def default_cost(items: Optional[int], parallel: bool, ncores: int) -> int:
    if items is None:
        return DEFAULT_CALL_CYCLES
    return DEFAULT_CALL_CYCLES + (-(-items // ncores) if parallel else items)


# ----------------------------------------------------------------------------------------------
# Predicted cycles: a replay of the generated code's schedule


class _Clock:
    """The host simulator's clock, in Python: two FIFO DMA engines (cluster DMA L2<->L1, micro-DMA
    L3<->L2) running concurrently with the cores; a wait stalls until its transfer has completed."""

    def __init__(self, platform):
        self.p = platform
        self.now = 0
        self.engines = {"cluster": platform.cluster_dma, "udma": platform.udma["ram"]}
        self.free = {name: 0 for name in self.engines}
        self.busy = {name: 0 for name in self.engines}
        self.compute = self.stall = self.fork = 0
        self.pending = {}
        self.transfers = 0

    def issue(self, event: str, nbytes: int, lines: int = 1, engine: str = "cluster") -> None:
        duration = self.engines[engine].transfer_cycles(nbytes, lines)
        self.now += self.p.dma_issue_cycles
        start = max(self.now, self.free[engine])
        self.free[engine] = start + duration
        self.busy[engine] += duration
        self.pending[event] = self.free[engine]
        self.transfers += 1

    def wait(self, event: str) -> None:
        self.now += self.p.wait_cycles
        end = self.pending.pop(event)
        if end > self.now:
            self.stall += end - self.now
            self.now = end

    def run(self, cycles: int, parallel: bool) -> None:
        self.now += cycles
        self.compute += cycles
        if parallel:
            self.now += self.p.fork_cycles
            self.fork += self.p.fork_cycles


class Prediction(dict):
    """Predicted figures of one kernel call: cycles, compute_cycles, stall_cycles,
    dma_busy_cycles (cluster DMA), udma_busy_cycles, fork_cycles, transfers."""

    @property
    def cycles(self) -> int:
        return self["cycles"]


def predict(tiling, libs: dict, platform) -> Prediction:
    """Cycles of one call of the generated kernel, replaying the schedule the code generator
    emits (see autotiler.codegen) on the simulator's cost model."""
    return _Replay(tiling, libs, platform).run()


class _Replay:
    def __init__(self, tiling, libs, platform):
        from .constants import KernelIteratorT as I

        self.I = I
        self.t, self.libs, self.p = tiling, libs, platform
        self.clock = _Clock(platform)
        self.ext = dict(tiling.loops)
        self.nest = [I.KER_OUT_PLANE, I.KER_TILE, I.KER_IN_PLANE]
        self.count = {a.name: 0 for a in tiling.args}
        self.idx = {it: 0 for it in self.nest}
        self.live: set = set()

    # -- transfers ------------------------------------------------------------------------------
    def _size(self, a, tile: int):
        from .tiler import ROLE_PARTIAL, ROLE_PLANE, ROLE_RESIDENT, ROLE_TILE

        if a.role == ROLE_PARTIAL:
            return a.plane_bytes * a.partial_planes, 1
        if a.role == ROLE_RESIDENT:
            return a.plane_bytes * a.planes, 1
        if a.role == ROLE_PLANE:
            return a.plane_bytes, 1
        last = a.role == ROLE_TILE and self.I.KER_TILE in a.space and tile == self.t.ntiles - 1
        return a.tile_bytes(last), (a.h if a.strided else 1)

    def _issue(self, a, direction: str, tile: int) -> None:
        nbytes, lines = self._size(a, tile)
        self.clock.issue(f"{direction}{a.name}", nbytes, 1 if a.l3 else lines)  # staged: contiguous

    # -- L3 staging (mirrors codegen's _ucopy / _uwait placement) -------------------------------
    def _ukey(self, a, direction: str, j: int) -> str:
        return f"U{direction}{a.name}{j % a.stage}"

    def _uissue(self, a, direction: str, j: int) -> None:
        from .tiler import decode_instance

        tile = decode_instance(self.t.loops, a.level, j).get(self.I.KER_TILE, 0)
        nbytes, lines = self._size(a, tile)
        self.clock.issue(self._ukey(a, direction, j), nbytes, lines, engine="udma")

    def _uwait(self, a, direction: str, j: int) -> None:
        self.clock.wait(self._ukey(a, direction, j))

    # -- calls ------------------------------------------------------------------------------------
    def _calls(self, loc, level) -> None:
        self.live = set(self.nest[: self.nest.index(level) + 1]) if level is not None else set()
        for call in self.t.kernel.calls:
            if call.location == loc:
                lib = self.libs[call.name]
                self.clock.run(self._call_cost(call, lib), lib.call_type == 1)
        self.live = set(self.nest)

    def _call_cost(self, call, lib) -> int:
        from .model import KArgBinding

        tile = self.idx[self.I.KER_TILE] if self.I.KER_TILE in self.live else 0
        last = self.I.KER_TILE in self.ext and self.I.KER_TILE in self.live and tile == self.ext[self.I.KER_TILE] - 1
        if lib.cost is not None:
            values = {f.name: self._value(b, last) for b, f in zip(call.bindings, lib.cargs) if not f.is_pointer}
            return eval_cost(lib.cost.expr, values, self.p.cores)
        tiles = [self.t.arg(b.arg) for b in call.bindings if isinstance(b, KArgBinding) and b.select == 1]
        items = None
        if tiles:
            a = max(tiles, key=lambda x: x.tile_w() * x.tile_h())
            items = a.tile_w(last) * a.tile_h(last)
        return default_cost(items, lib.call_type == 1, self.p.cores)

    def _value(self, b, last: bool) -> int:
        from .constants import KernelArgSelect_T as S
        from .model import CArgBinding, CArgIndexBinding, ImmBinding

        if isinstance(b, ImmBinding):
            return b.value
        if isinstance(b, (CArgBinding, CArgIndexBinding)):
            return 1  # run-time value unknown when generating: counted as 1
        a = self.t.arg(b.arg)
        tile = self.idx[self.I.KER_TILE] if self.I.KER_TILE in self.live else 0
        table = {
            S.KER_ARG_TILE_W: lambda: a.tile_w(last), S.KER_ARG_TILE_H: lambda: a.tile_h(last),
            S.KER_ARG_TILE_W0: lambda: a.tile_w(), S.KER_ARG_TILE_H0: lambda: a.tile_h(),
            S.KER_ARG_W: lambda: a.w, S.KER_ARG_H: lambda: a.h, S.KER_ARG_NTILES: lambda: self.t.ntiles,
            S.KER_ARG_TILEINDEX: lambda: tile, S.KER_ARG_TILEOFFSET: lambda: tile * a.step,
            S.KER_ARG_TILEFIRST: lambda: int(tile == 0), S.KER_ARG_TILELAST: lambda: int(last),
        }
        return table[b.select]() if b.select in table else 0

    # -- structure (mirrors KernelRenderer._block) ---------------------------------------------
    def run(self) -> Prediction:
        from .codegen import LEVEL_CALLS

        self.level_calls = LEVEL_CALLS
        args = self.t.args
        for a in args:
            if not a.reads:
                continue
            if a.l3:
                for j in range(min(a.stage, a.instances)):
                    self._uissue(a, "R", j)
                if a.level is None or a.nbuf == 2:
                    self._uwait(a, "R", 0)
            if a.level is None or a.nbuf == 2:
                self._issue(a, "R", 0)
        for a in args:
            if a.reads and a.level is None:
                self.clock.wait(f"R{a.name}")
        self._block(None)
        for a in args:
            if a.writes and a.level is None:
                self._issue(a, "W", 0)
        for a in args:
            if not a.writes:
                continue
            if a.level is None or a.nbuf == 2:
                self.clock.wait(f"W{a.name}")
                if a.l3:
                    self._uissue(a, "W", a.instances - 1)
            if a.l3:
                for j in range(max(0, a.instances - a.stage), a.instances):
                    self._uwait(a, "W", j)
        c = self.clock
        return Prediction(cycles=c.now, compute_cycles=c.compute, stall_cycles=c.stall,
                          dma_busy_cycles=c.busy["cluster"], udma_busy_cycles=c.busy["udma"],
                          fork_cycles=c.fork, transfers=c.transfers)

    def _inner(self, it):
        start = 0 if it is None else self.nest.index(it) + 1
        return next((x for x in self.nest[start:] if x in self.ext), None)

    def _block(self, it) -> None:
        inner = self._inner(it)
        start = 0 if it is None else self.nest.index(it) + 1
        collapsed = self.nest[start: self.nest.index(inner) if inner is not None else len(self.nest)]
        level_args = [a for a in self.t.args if it is not None and a.level == it]
        for i in range(self.ext.get(it, 1) if it is not None else 1):
            if it is not None:
                self.idx[it] = i
            self._head(it, level_args)
            self._calls(self.level_calls[it][0], it)
            for x in collapsed:
                self._calls(self.level_calls[x][0], x)
            if inner is not None:
                self._block(inner)
            for x in reversed(collapsed):
                if self.level_calls[x][1] is not None:
                    self._calls(self.level_calls[x][1], x)
            if self.level_calls[it][1] is not None:
                self._calls(self.level_calls[it][1], it)
            self._tail(level_args)

    def _next_tile(self, it) -> tuple[bool, int]:
        """(has next iteration of the loops up to ``it``, tile index of that iteration)."""
        levels = [x for x in self.nest if x in self.ext]
        levels = levels[: levels.index(it) + 1]
        nxt = {x: self.idx[x] for x in levels}
        nxt[it] += 1
        for inner, outer in zip(reversed(levels), list(reversed(levels))[1:]):
            if nxt[inner] == self.ext[inner]:
                nxt[inner] = 0
                nxt[outer] += 1
        has_next = nxt[levels[0]] < self.ext[levels[0]]
        return has_next, nxt.get(self.I.KER_TILE, 0)

    def _head(self, it, level_args) -> None:
        tile = self.idx[self.I.KER_TILE] if self.I.KER_TILE in self.ext else 0
        for a in level_args:
            if not a.reads:
                continue
            n = self.count[a.name]
            ahead = a.l3 and n + a.stage < a.instances
            if a.nbuf == 2:
                self.clock.wait(f"R{a.name}")
                if a.writes and n:
                    self.clock.wait(f"W{a.name}")
                    if a.l3:
                        self._uissue(a, "W", n - 1)
                if ahead:
                    self._uissue(a, "R", n + a.stage)
                has_next, next_tile = self._next_tile(it)
                if has_next:
                    if a.l3:
                        self._uwait(a, "R", n + 1)
                    self._issue(a, "R", next_tile)
            else:
                if a.l3:
                    self._uwait(a, "R", n)
                self._issue(a, "R", tile)
                self.clock.wait(f"R{a.name}")
                if ahead:
                    self._uissue(a, "R", n + a.stage)

    def _tail(self, level_args) -> None:
        tile = self.idx[self.I.KER_TILE] if self.I.KER_TILE in self.ext else 0
        for a in level_args:
            if not a.writes:
                continue
            n = self.count[a.name]
            if a.nbuf == 2 and not a.reads and n:
                self.clock.wait(f"W{a.name}")
                if a.l3:
                    self._uissue(a, "W", n - 1)
            if a.l3 and n >= a.stage:
                self._uwait(a, "W", n)
            self._issue(a, "W", tile)
            if a.nbuf != 2:
                self.clock.wait(f"W{a.name}")
                if a.l3:
                    self._uissue(a, "W", n)
        for a in level_args:
            if a.reads or a.writes:
                self.count[a.name] += 1
