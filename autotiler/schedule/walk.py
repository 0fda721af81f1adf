"""Run a schedule on a machine (the cost model's clock, the verifier's checker) without
executing every iteration, and without changing the result.

A loop index only ever reaches timing through comparisons of affine terms (``T0Ind==3``, a
running counter below a bound) or, rarely, directly (a tile index bound into a ``Cost=``
expression). In the first case each loop splits into intervals on which every comparison of
its subtree is constant (:func:`~autotiler.schedule.expr.crossing`): iterations of one interval
differ only through the machine's state. The machine's state is kept relative to its clock
(time left on each DMA engine, on each pending event), so when an iteration of an interval
starts in the state a previous one started in (and at the same residue modulo the period of
the event rings), every following iteration of the interval repeats that stretch exactly; the
walker adds the repeated stretch's effect as many times as it fits and resumes. A whole loop
run is also memoised on (its entry state, the outer indices as far as its subtree can tell
them apart, see :func:`~autotiler.schedule.expr.restrict`), so steady-state outer iterations
cost one dictionary look-up. Where an index is read directly, its loop is simply run in full.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import gcd
from typing import Callable, Optional

from .expr import (
    _CMP,
    Bin,
    Cmp,
    Const,
    Expr,
    Logic,
    Sensitive,
    Var,
    affine,
    cmp,
    comparisons,
    compile_expr,
    div,
    names,
)
from .ir import Comment, Compute, Copy, If, Let, Loop, Wait

MAX_BREAKPOINTS = 64  # a comparison whose change points in one loop spread wider: run that loop in full


class Machine:
    """Interface the walker drives. ``key()`` returns the machine's state relative to its clock
    (hashable), or None when the machine cannot be skipped ahead; ``figures()`` its additive
    figures as a tuple; ``repeat(delta, reps)`` adds ``reps`` times the effect ``delta`` (a
    difference of figures, the clock first) and shifts every absolute time accordingly;
    ``restore(key, delta)`` sets the state from a relative key after adding ``delta``."""

    def copy(self, node: Copy, env: dict, size: int, lines: int, event: tuple) -> None:
        raise NotImplementedError

    def wait(self, node: Wait, env: dict, event: tuple) -> None:
        raise NotImplementedError

    def compute(self, node: Compute, env: dict, cost: int) -> None:
        raise NotImplementedError

    def key(self):
        return None

    def figures(self) -> tuple:
        return ()

    def repeat(self, delta: tuple, reps: int) -> None:
        raise NotImplementedError

    def restore(self, key, delta: tuple) -> None:
        raise NotImplementedError


# ----------------------------------------------------------------------------------------------
# Compilation: closures and, per loop, what its subtree's timing depends on


def substitute(e: Expr, defs: dict) -> Expr:
    """``e`` with every variable of ``defs`` replaced by its definition (recursively);
    comparisons are rebuilt so that selects substituted into them are distributed."""
    t = type(e)
    if t is Const:
        return e
    if t is Var:
        d = defs.get(e.name)
        return substitute(d, defs) if d is not None else e
    if t is Bin or t is Logic:
        a, b = substitute(e.a, defs), substitute(e.b, defs)
        return e if a is e.a and b is e.b else t(e.op, a, b)
    if isinstance(e, Var):
        d = defs.get(e.name)
        return substitute(d, defs) if d is not None else e
    if isinstance(e, Const):
        return e
    if isinstance(e, Cmp):
        return cmp(e.op, substitute(e.a, defs), substitute(e.b, defs))
    fields_ = {}
    changed = False
    for name in getattr(e, "__dataclass_fields__", {}):
        v = getattr(e, name)
        if isinstance(v, Expr):
            x = fields_[name] = substitute(v, defs)
            changed = changed or x is not v
        elif isinstance(v, tuple) and v and all(isinstance(x, Expr) for x in v):
            xs = fields_[name] = tuple(substitute(x, defs) for x in v)
            changed = changed or any(x is not y for x, y in zip(xs, v))
    # rebuilt from the same fields, the node would equal ``e``: keep ``e``
    return type(e)(**{**{n: getattr(e, n) for n in e.__dataclass_fields__}, **fields_}) if changed else e


def _moduli(e: Expr, out: set) -> None:
    if isinstance(e, Bin) and e.op == "%" and isinstance(e.b, Const) and e.b.value > 0:
        out.add(e.b.value)
    for name in getattr(e, "__dataclass_fields__", {}):
        v = getattr(e, name)
        if isinstance(v, Expr):
            _moduli(v, out)


def _lcm(values) -> int:
    m = 1
    for v in values:
        m = m * v // gcd(m, v)
    return m


@dataclass
class _Loop:
    node: Loop
    body: list
    var: str
    extent: int
    total: Optional[str]
    total_fn: Optional[Callable]
    inner: dict = field(default_factory=dict)       # loop vars of the subtree (this one included) -> extent
    own: list = field(default_factory=list)         # comparisons reading this loop's index
    sensitive: bool = False                         # the index is read outside comparisons
    outer: list = field(default_factory=list)       # comparisons reading an enclosing loop's index
    outer_vars: tuple = ()                          # enclosing indices read outside comparisons
    period: int = 1                                 # lcm of the event rings' moduli
    enclosing: tuple = ()                           # indices of the loops around this one
    own_forms: list = field(default_factory=list)
    outer_forms: list = field(default_factory=list)


@dataclass
class _Stmt:
    kind: str
    node: object
    fns: tuple = ()
    body: list = field(default_factory=list)


class _Form:
    """A comparison ``sum(coef * var) + const  op  0`` over every name it reads (loop indices,
    C arguments), precomputed once; None when it is not affine."""

    __slots__ = ("op", "coefs", "const")

    def __init__(self, c: Cmp):
        d = affine(Bin("-", c.a, c.b), frozenset(names(c)), {})
        self.op = c.op
        self.coefs, self.const = (d if d is not None else (None, 0))


def _truth(op: str, lo: int, hi: int):
    """The comparison's value when ``lo <= x <= hi`` (x the affine value), or None if it varies."""
    f = _CMP[op]
    if op in ("==", "!="):
        if lo == hi:
            return bool(f(lo, 0))
        return (op == "!=") if (lo > 0 or hi < 0) else None
    a, b = f(lo, 0), f(hi, 0)
    return bool(a) if a == b else None


class Program:
    """A schedule compiled for walking: closures for every expression, and the analysis above."""

    def __init__(self, schedule, periodic: bool = False):
        """``periodic``: repeated stretches must also agree on every ``%`` of the addresses (the
        verifier, which looks at addresses, not only at time)."""
        self.schedule = schedule
        self.periodic = periodic
        self.totals = dict(schedule.totals)
        self.loops: list = []
        self.body = self._compile(schedule.body, defs=dict(self.totals), enclosing=[], conds=[])
        forms: dict = {}

        def form(c: Cmp) -> _Form:
            f = forms.get(c)
            if f is None:
                f = forms[c] = _Form(c)
            return f
        for lp in self.loops:
            lp.own_forms = [form(c) for c in dict.fromkeys(lp.own)]
            lp.outer_forms = [form(c) for c in dict.fromkeys(lp.outer)]

    # -- compilation ------------------------------------------------------------------------------
    def _compile(self, stmts, defs: dict, enclosing: list, conds: list) -> list:
        out, defs = [], dict(defs)
        for s in stmts:
            if isinstance(s, Comment):
                continue
            if isinstance(s, Let):
                defs[s.name] = s.expr
                out.append(_Stmt("let", s, (compile_expr(s.expr),)))
            elif isinstance(s, If):
                cond = substitute(s.cond, defs)
                body = self._compile(s.body, defs, enclosing, conds + [cond])
                out.append(_Stmt("if", s, (compile_expr(s.cond),), body))
            elif isinstance(s, Copy):
                lines = _lines_expr(s)
                timing = [substitute(s.size, defs), substitute(lines, defs)] + conds
                ring = [substitute(s.event.index, defs)] if s.event.index else []
                if self.periodic:
                    ring += [substitute(e, defs) for e in (s.loc.offset, s.ext.offset)]
                self._note(timing, enclosing, ring=ring)
                ev = compile_expr(s.event.index) if s.event.index is not None else None
                out.append(_Stmt("copy", s, (compile_expr(s.size), compile_expr(lines), ev)))
            elif isinstance(s, Wait):
                self._note(list(conds), enclosing,
                           ring=[substitute(s.event.index, defs)] if s.event.index is not None else [])
                ev = compile_expr(s.event.index) if s.event.index is not None else None
                out.append(_Stmt("wait", s, (ev,)))
            elif isinstance(s, Compute):
                ring = [substitute(a.region.offset, defs) for a in s.accesses] if self.periodic else []
                self._note([substitute(s.cost, defs)] + conds, enclosing, ring=ring)
                out.append(_Stmt("compute", s, (compile_expr(s.cost),)))
            elif isinstance(s, Loop):
                loop = _Loop(s, [], s.var, s.extent, s.total,
                             compile_expr(self.totals[s.total]) if s.total else None)
                loop.enclosing = tuple(lp.var for lp in enclosing)
                for lp in enclosing:
                    lp.inner[s.var] = s.extent
                loop.inner[s.var] = s.extent
                self.loops.append(loop)
                loop.body = self._compile(s.body, defs, enclosing + [loop], conds)
                out.append(_Stmt("loop", loop))
            else:
                raise TypeError(f"unknown schedule statement {s!r}")
        return out

    def _note(self, timing: list, enclosing: list, ring: list) -> None:
        """Record, for every enclosing loop, how the timing expressions of one statement read
        its index and the indices around it."""
        if not enclosing:
            return
        mods: set = set()
        for e in ring:
            _moduli(e, mods)
        all_vars = frozenset(lp.var for lp in enclosing)
        cmps: list = []
        direct: set = set()
        for e in timing:
            try:
                comparisons(e, cmps, all_vars)
            except Sensitive:
                direct |= names(e) & all_vars  # conservative: every index it reads
        reads = [(c, names(c)) for c in cmps]
        for depth, lp in enumerate(enclosing):
            outer_vars = frozenset(x.var for x in enclosing[:depth])
            lp.period = _lcm([lp.period, *mods])
            if lp.var in direct:
                lp.sensitive = True
            for c, read in reads:
                if lp.var in read:
                    lp.own.append(c)
                if read & outer_vars:
                    lp.outer.append(c)
            lp.outer_vars = tuple(sorted(set(lp.outer_vars) | (direct & outer_vars)))


def _lines_expr(s: Copy) -> Expr:
    return Const(1) if s.length is None else div(s.size, s.length)


# ----------------------------------------------------------------------------------------------
# Walking


def environment(schedule, cargs, cores: int) -> dict:
    """Values a walk reads besides loop indices: C arguments (unknown when generating: 1; a
    run-time loop bound: its static extent, the worst case), memory symbols (0: offsets are
    relative to them) and the core count."""
    env = {name: 1 for name in cargs}
    env.update(schedule.bounds)
    for symbol, _ in schedule.symbols.values():
        env[symbol] = 0
    env["gap_ncore"] = cores
    return env



class Walker:
    """Runs a compiled :class:`Program` on a machine; ``skip=False`` runs every iteration."""

    def __init__(self, program: Program, machine: Machine, env: dict, skip: bool = True):
        self.p = program
        self.m = machine
        self.env = dict(env)
        self.skip = skip and machine.key() is not None
        self.memo: dict = {}
        self.iterations = 0  # loop bodies actually executed (for tests and benchmarks)

    def run(self) -> None:
        self._block(self.p.body)

    def _block(self, stmts: list) -> None:
        env, m = self.env, self.m
        for s in stmts:
            k = s.kind
            if k == "let":
                env[s.node.name] = s.fns[0](env)
            elif k == "if":
                if s.fns[0](env):
                    self._block(s.body)
            elif k == "copy":
                size_fn, lines_fn, ev = s.fns
                m.copy(s.node, env, size_fn(env), lines_fn(env), (s.node.event.name, ev(env) if ev else None))
            elif k == "wait":
                ev = s.fns[0]
                m.wait(s.node, env, (s.node.event.name, ev(env) if ev else None))
            elif k == "compute":
                m.compute(s.node, env, s.fns[0](env))
            else:
                self._loop(s.node)

    # -- loops --------------------------------------------------------------------------------------
    def _signature(self, lp: _Loop):
        """The outer indices as far as the loop's subtree can tell them apart: each comparison
        it reads restricted to the box of its own indices (see expr.restrict)."""
        env, inner = self.env, lp.inner
        parts = []
        for f in lp.outer_forms:
            if f.coefs is None:
                parts.append(None)
                continue
            k, lo, hi, free = f.const, 0, 0, []
            for v, a in f.coefs.items():
                n = inner.get(v)
                if n is None:
                    k += a * env[v]
                else:
                    free.append((v, a))
                    lo += min(0, a * (n - 1))
                    hi += max(0, a * (n - 1))
            t = _truth(f.op, k + lo, k + hi)
            parts.append(t if t is not None else (tuple(free), k))
        parts += [env[v] for v in lp.outer_vars]
        if lp.period > 1:
            # the rings inside start at a slot set by the running totals, affine in the outer
            # indices: two runs of the loop agree only if those indices agree modulo the period
            parts += [env[v] % lp.period for v in lp.enclosing]
        return tuple(parts)

    def _loop(self, lp: _Loop) -> None:
        saved = {n: self.env.get(n) for n in (lp.var, lp.total) if n}
        memo_key = None
        if self.skip:
            memo_key = (id(lp), self._signature(lp), self.m.key())
            hit = self.memo.get(memo_key)
            if hit is not None:
                exit_key, delta = hit
                self.m.restore(exit_key, delta)
                return
            before = self.m.figures()
        self._iterate(lp)
        for n, v in saved.items():
            if v is None:
                self.env.pop(n, None)
            else:
                self.env[n] = v
        if memo_key is not None:
            delta = tuple(b - a for a, b in zip(before, self.m.figures()))
            self.memo[memo_key] = (self.m.key(), delta)

    def _intervals(self, lp: _Loop) -> Optional[list]:
        """Sorted change points of the loop's comparisons, or None when the loop runs in full."""
        if not self.skip or lp.sensitive or lp.extent <= 2:
            return None
        points = {0, lp.extent}
        env = self.env
        for f in lp.own_forms:
            pts = _crossings(f, lp, env)
            if pts is None:
                return None
            points.update(p for p in pts if 0 < p < lp.extent)
        return sorted(points)

    def _iterate(self, lp: _Loop) -> None:
        env, n = self.env, lp.extent
        bounds = self._intervals(lp)
        if bounds is None:
            for i in range(n):
                self._iteration(lp, i)
            return
        for a, b in zip(bounds, bounds[1:]):
            seen: dict = {}
            i = a
            while i < b:
                key = (self.m.key(), (i - a) % lp.period)
                if key in seen and b - i > 0:
                    j, figures = seen[key]
                    period = i - j
                    reps = (b - i) // period
                    if reps > 0:
                        now = self.m.figures()
                        self.m.repeat(tuple(x - y for x, y in zip(now, figures)), reps)
                        i += reps * period
                        seen.clear()
                        continue
                seen[key] = (i, self.m.figures())
                self._iteration(lp, i)
                i += 1
        env.pop(lp.var, None)

    def _iteration(self, lp: _Loop, i: int) -> None:
        env = self.env
        env[lp.var] = i
        if lp.total:
            env[lp.total] = lp.total_fn(env)
        self.iterations += 1
        self._block(lp.body)


def _crossings(f: _Form, lp: _Loop, env: dict) -> Optional[set]:
    """Indices of ``lp`` at which a comparison may change value, whatever the indices of the
    loops inside ``lp`` (their full ranges); None when too many."""
    if f.coefs is None:
        return None
    a = f.coefs.get(lp.var, 0)
    if a == 0:
        return set()
    rlo = rhi = f.const
    for v, b in f.coefs.items():
        if v == lp.var:
            continue
        n = lp.inner.get(v)
        if n is None:
            rlo += b * env[v]
            rhi += b * env[v]
        else:
            rlo += min(0, b * (n - 1))
            rhi += max(0, b * (n - 1))
    t1, t2 = -rlo / a, -rhi / a
    lo, hi = int(min(t1, t2)) - 1, int(max(t1, t2)) + 2
    if hi - lo > MAX_BREAKPOINTS:
        return None
    return set(range(lo, hi + 1))


__all__ = ["Machine", "Program", "Walker", "environment", "substitute"]
