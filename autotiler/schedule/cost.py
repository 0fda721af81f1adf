"""The cost model: the host simulator's clock, run on a schedule.

Rules (the same as ``host_harness/runtime/at_sim.c``, which the property tests hold it to,
cycle for cycle):

* programming a DMA transfer costs the core ``dma_issue_cycles``; the transfer then queues on
  its engine's channel (the cluster DMA for L2 <-> L1, the micro-DMA for L3 <-> L2; all running
  concurrently with the cores and with each other) and takes
  ``setup + ceil(bytes / bytes_per_cycle)`` cycles, plus ``line_cycles`` per line of a 2D
  transfer. A channel is a FIFO; a ``duplex`` engine (MCHAN, the cluster DMA of GAP8, GAP9
  and pulp-open) has two, one for reads (ext -> loc) and one for writes (loc -> ext), else
  one carries both;
* entering the user kernel costs the core ``kernel_call_cycles`` (the platform's: its code and
  the runtime's run with a cold instruction cache), before anything else;
* a wait costs ``wait_cycles`` and then stalls the core until its transfer has landed;
* a basic-kernel call costs its ``Cost=`` expression evaluated on the bound values (C
  arguments, unknown when generating, count as 1; without ``Cost=``: one cycle per item of the
  largest tile bound to it, over the cores for a parallel call, plus ``DEFAULT_CALL_CYCLES``),
  scaled by the platform's measured compute model of that basic kernel where it has one, which
  may replace the ``Cost=`` by the platform's own (:func:`platform_cost`: the schedule carries
  the resulting figure, so the generated code's ``AT_SIM_COMPUTE``, this clock and the tiler's
  estimate agree), and a parallel call adds ``fork_cycles``.

:func:`predict` walks the schedule with :mod:`autotiler.schedule.walk`, which skips repeated
iterations exactly, so a prediction costs a few dozen loop bodies whatever the tile counts.
"""

from __future__ import annotations

import ast
from typing import Optional

from ..errors import PlatformError
from ..model.cost import cost_problem, parse_cost
from ..model.devices import device_engine
from .expr import CallExpr, Const, Expr, add, cast, div, mod, mul, sub
from .ir import Copy, Direction, Engine, Schedule
from .walk import Machine, Program, Walker, environment

DEFAULT_CALL_CYCLES = 10
NCORES = CallExpr("gap_ncore")


def cost_to_expr(text: str, values: dict) -> Expr:
    """A ``Cost=`` expression with each argument name replaced by its bound value (an
    expression) and ``ncores`` by ``gap_ncore()``."""
    return _ast_expr(parse_cost(text).body, values)


def _ast_expr(node, values: dict) -> Expr:
    if isinstance(node, ast.Constant):
        return Const(int(node.value))
    if isinstance(node, ast.Name):
        return NCORES if node.id == "ncores" else values[node.id]
    if isinstance(node, ast.UnaryOp):
        v = _ast_expr(node.operand, values)
        return sub(0, v) if isinstance(node.op, ast.USub) else v
    a, b = _ast_expr(node.left, values), _ast_expr(node.right, values)
    op = type(node.op)
    if op is ast.Add:
        return add(a, b)
    if op is ast.Sub:
        return sub(a, b)
    if op is ast.Mult:
        return mul(a, b)
    if op in (ast.Div, ast.FloorDiv):
        return div(a, b)
    return mod(a, b)


def platform_cost(text: Optional[str], values: dict, platform, kernel: str) -> Optional[Expr]:
    """A call's cycles on ``platform`` as an expression: the platform's own Cost= of the basic
    kernel (``ComputeScale.cost``, evaluated in long long: its coefficients are the platform's
    cycles, the products can exceed an int) or else the library's ``Cost=`` ``text``, each
    argument name replaced by its bound value in ``values``, then :func:`scaled_cost`. None when
    neither exists (the caller charges :func:`default_cost`, scaled). The one place a Cost=
    becomes cycles: the schedule builder (hence the generated ``AT_SIM_COMPUTE``, the host
    simulator and the predictor) and the tiler's estimate both call it."""
    s = platform.compute_scale(kernel) if platform is not None else None
    if s is not None and s.cost is not None:
        wide = {name: cast("long long", v) for name, v in values.items()}
        return scaled_cost(cost_to_expr(s.cost, wide), platform, kernel)
    if not text:
        return None
    return scaled_cost(cost_to_expr(text, values), platform, kernel)


def check_platform_cost(platform, lib, where: str = "", kernel: Optional[str] = None) -> None:
    """The platform's own Cost= of basic kernel ``lib`` (if any) names only its scalar formal
    arguments and ``ncores``: a :class:`~autotiler.errors.PlatformError` otherwise (the
    platform cannot check this when it is built, as it does not know the kernel's formals)."""
    s = platform.compute_scale(lib.name)
    if s is None or s.cost is None:
        return
    problem = cost_problem(s.cost, frozenset(c.name for c in lib.cargs if not c.is_pointer))
    if problem is not None:
        raise PlatformError(f"platform '{platform.name}': compute['{lib.name}'].cost: {problem.message}", where=where,
                            kernel=kernel, hint=problem.hint)


def scaled_cost(cost: Expr, platform, kernel: str) -> Expr:
    """A call's cycles on ``platform`` from its GAP8 ``Cost=`` (or default cost): the platform's
    measured :class:`~autotiler.platforms.ComputeScale` of the basic kernel, evaluated in long
    long (the scaled product can exceed the int the Cost= is computed in)."""
    s = platform.compute_scale(kernel) if platform is not None else None
    if s is None:
        return cost
    wide = cost if isinstance(cost, Const) else cast("long long", cost)   # a constant folds
    return add(wide if s.percent == 100 else div(mul(wide, s.percent), 100), s.per_call)


def scaled_cycles(cycles: int, platform, kernel: str) -> int:
    """:func:`scaled_cost` of a known number of cycles."""
    return scaled_cost(Const(cycles), platform, kernel).value


def default_cost(items: Optional[Expr], parallel: bool) -> Expr:
    """Cost of a call without ``Cost=``: one cycle per item of its largest tile (over the cores
    when parallel), plus ``DEFAULT_CALL_CYCLES``."""
    if items is None:
        return Const(DEFAULT_CALL_CYCLES)
    if parallel:
        return add(DEFAULT_CALL_CYCLES, div(add(items, sub(NCORES, 1)), NCORES))
    return add(DEFAULT_CALL_CYCLES, items)


def channel_of(platform, engine: Engine, direction: Direction) -> tuple:
    """The FIFO a transfer queues on: its engine's, split by direction on a duplex cluster DMA
    (the uDMA's L3 links are half-duplex: one FIFO)."""
    if engine is Engine.CLUSTER and platform.cluster_dma.duplex:
        return (engine, direction)
    return (engine, None)


def channels(platform) -> list:
    """Every DMA channel of ``platform``, in a fixed order."""
    return sorted({channel_of(platform, e, d) for e in Engine for d in Direction},
                  key=lambda c: (c[0].value, c[1].value if c[1] else ""))


class Prediction(dict):
    """Predicted figures of one call of a kernel: cycles, compute_cycles, stall_cycles,
    dma_busy_cycles (cluster DMA), udma_busy_cycles, fork_cycles, transfers."""

    @property
    def cycles(self) -> int:
        return self["cycles"]


class Clock(Machine):
    """The simulator's clock. Figures: (now, compute, stall, fork, cluster busy, uDMA busy,
    transfers); state: time left on each DMA channel and on each pending event."""

    def __init__(self, platform):
        p = platform
        self.issue_cycles, self.wait_cycles, self.fork_cycles = p.dma_issue_cycles, p.wait_cycles, p.fork_cycles
        self.engines = {Engine.CLUSTER: p.cluster_dma, Engine.UDMA: p.udma["ram"]}
        self.platform = p   # a flash copy takes its device's numbers on the same uDMA channel
        self.channels = tuple(channels(p))
        self.free = dict.fromkeys(self.channels, 0)
        self.pending: dict = {}
        # the clock starts once the kernel is entered (the simulator charges it on entry)
        self.f = [p.kernel_call_cycles, 0, 0, 0, 0, 0, 0]

    def copy(self, node: Copy, env: dict, size: int, lines: int, event: tuple) -> None:
        f = self.f
        engine = device_engine(self.platform, node.device) if node.device is not None else self.engines[node.engine]
        duration = engine.transfer_cycles(size, lines)
        f[0] += self.issue_cycles
        channel = channel_of(self.platform, node.engine, node.direction)
        start = max(f[0], self.free[channel])
        end = self.free[channel] = start + duration
        f[4 if node.engine is Engine.CLUSTER else 5] += duration
        f[6] += 1
        self.pending[event] = end

    def wait(self, node, env: dict, event: tuple) -> None:
        f = self.f
        f[0] += self.wait_cycles
        end = self.pending.pop(event)
        if end > f[0]:
            f[2] += end - f[0]
            f[0] = end

    def compute(self, node, env: dict, cost: int) -> None:
        f = self.f
        cost = max(0, cost)
        f[0] += cost
        f[1] += cost
        if node.parallel:
            f[0] += self.fork_cycles
            f[3] += self.fork_cycles

    def key(self):
        now = self.f[0]
        return (tuple(max(0, self.free[c] - now) for c in self.channels),
                tuple(sorted((k, max(0, end - now)) for k, end in self.pending.items())))

    def figures(self) -> tuple:
        return tuple(self.f)

    def repeat(self, delta: tuple, reps: int) -> None:
        self.f = [x + reps * d for x, d in zip(self.f, delta)]
        shift = reps * delta[0]
        self.free = {c: t + shift for c, t in self.free.items()}
        self.pending = {k: t + shift for k, t in self.pending.items()}

    def restore(self, key, delta: tuple) -> None:
        self.f = [x + d for x, d in zip(self.f, delta)]
        now = self.f[0]
        self.free = {c: now + t for c, t in zip(self.channels, key[0])}
        self.pending = {k: now + t for k, t in key[1]}

    def prediction(self) -> Prediction:
        f = self.f
        return Prediction(cycles=f[0], compute_cycles=f[1], stall_cycles=f[2], fork_cycles=f[3],
                          dma_busy_cycles=f[4], udma_busy_cycles=f[5], transfers=f[6])


def predict(schedule: Schedule, platform, cargs=(), program: Optional[Program] = None,
            skip: bool = True) -> Prediction:
    """Cycles and figures of one call of the scheduled kernel on ``platform``."""
    program = program or Program(schedule)
    clock = Clock(platform)
    Walker(program, clock, environment(schedule, cargs, platform.cores), skip=skip).run()
    return clock.prediction()


__all__ = ["DEFAULT_CALL_CYCLES", "NCORES", "cost_to_expr", "platform_cost", "check_platform_cost", "scaled_cost",
           "scaled_cycles", "default_cost", "Prediction", "Clock", "channel_of", "channels", "predict"]
