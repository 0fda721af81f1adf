"""Integer expressions of the schedule IR: printed as C, evaluated, and analysed.

One expression tree serves three readers. Codegen prints it (:func:`to_c`, minimal parentheses);
the cost model and the verifier evaluate it with C integer semantics (:func:`compile_expr`:
``/`` truncates towards zero, ``%`` takes the sign of the dividend); and the schedule walker
asks how its value depends on a loop index (:func:`breakpoints`): an expression whose loop
variables only appear inside comparisons of affine terms is piecewise constant in each loop
index, so a loop can be split into intervals on which every timing-relevant value is fixed.

Nodes are small frozen dataclasses. Build them with the folding helpers (``+``, ``-``, ``*``,
:func:`div`, :func:`mod`, :func:`eq`, :func:`select`, ...) so that constants fold and the
printed C stays readable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Union

Value = Union["Expr", int]


class Expr:
    """Base of every expression node. Arithmetic operators build folded trees."""

    __slots__ = ()

    def __add__(self, other: Value) -> Expr:
        return add(self, other)

    def __radd__(self, other: Value) -> Expr:
        return add(other, self)

    def __sub__(self, other: Value) -> Expr:
        return sub(self, other)

    def __rsub__(self, other: Value) -> Expr:
        return sub(other, self)

    def __mul__(self, other: Value) -> Expr:
        return mul(self, other)

    def __rmul__(self, other: Value) -> Expr:
        return mul(other, self)


@dataclass(frozen=True)
class Const(Expr):
    value: int


@dataclass(frozen=True)
class Var(Expr):
    """A C name: loop index, iteration counter, local, C argument or symbol. Evaluation reads it
    from the environment."""

    name: str


@dataclass(frozen=True)
class Bin(Expr):
    op: str  # + - * / % << >>
    a: Expr
    b: Expr


@dataclass(frozen=True)
class Cmp(Expr):
    op: str  # == != < <= > >=
    a: Expr
    b: Expr


@dataclass(frozen=True)
class Logic(Expr):
    op: str  # && ||
    a: Expr
    b: Expr


@dataclass(frozen=True)
class Not(Expr):
    a: Expr


@dataclass(frozen=True)
class Select(Expr):
    cond: Expr
    a: Expr
    b: Expr


@dataclass(frozen=True)
class Cast(Expr):
    """``(ctype) (a)``: printed only; the value passes through."""

    ctype: str
    a: Expr


@dataclass(frozen=True)
class CallExpr(Expr):
    """A call of a C function or function-like macro with integer arguments, e.g. ``gap_ncore()``.
    Evaluation reads ``name`` from the environment (a number, or a Python callable)."""

    name: str
    args: tuple = ()


@dataclass(frozen=True)
class Subscript(Expr):
    """``base[index]`` (a C argument indexed by a loop index). Its value is not known when
    generating: it evaluates to 1, as C arguments do."""

    base: Expr
    index: Expr


@dataclass(frozen=True)
class Deref(Expr):
    """``*(a)``; evaluates to 1 (a run-time value)."""

    a: Expr


@dataclass(frozen=True)
class Vector(Expr):
    """A ``v4s``-style compound literal ``((ctype){a, b, c, d})``; evaluates to 0."""

    ctype: str
    items: tuple


def lift(v: Value) -> Expr:
    if isinstance(v, Expr):
        return v
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"expression operand must be an int or Expr, got {v!r}")
    return Const(v)


ZERO, ONE = Const(0), Const(1)
TRUE, FALSE = ONE, ZERO


def const_value(e: Expr) -> Optional[int]:
    return e.value if isinstance(e, Const) else None


# ----------------------------------------------------------------------------------------------
# Folding constructors


def _split_const(e: Expr) -> tuple:
    """``x + 3`` -> (x, 3); ``7`` -> (None, 7); ``x`` -> (x, 0)."""
    if isinstance(e, Const):
        return None, e.value
    if isinstance(e, Bin) and e.op == "+" and isinstance(e.b, Const):
        return e.a, e.b.value
    if isinstance(e, Bin) and e.op == "-" and isinstance(e.b, Const):
        return e.a, -e.b.value
    return e, 0


def _with_const(base: Optional[Expr], k: int) -> Expr:
    if base is None:
        return Const(k)
    if k == 0:
        return base
    return Bin("+", base, Const(k)) if k > 0 else Bin("-", base, Const(-k))


def add(a: Value, b: Value) -> Expr:
    if not isinstance(a, Expr):
        a = lift(a)
    if not isinstance(b, Expr):
        b = lift(b)
    ba, ka = _split_const(a)
    bb, kb = _split_const(b)
    if ba is None:
        return _with_const(bb, ka + kb)
    if bb is None:
        return _with_const(ba, ka + kb)
    return _with_const(Bin("+", ba, bb), ka + kb)


def sub(a: Value, b: Value) -> Expr:
    if not isinstance(a, Expr):
        a = lift(a)
    if not isinstance(b, Expr):
        b = lift(b)
    if a == b:
        return ZERO
    bb, kb = _split_const(b)
    if bb is None:
        return add(a, -kb)
    ba, ka = _split_const(a)
    if ba is None:
        return Bin("-", Const(ka - kb), bb)
    return _with_const(Bin("-", ba, bb), ka - kb)


def neg(a: Value) -> Expr:
    if not isinstance(a, Expr):
        a = lift(a)
    if isinstance(a, Const):
        return Const(-a.value)
    return Bin("*", a, Const(-1))


def mul(a: Value, b: Value) -> Expr:
    if not isinstance(a, Expr):
        a = lift(a)
    if not isinstance(b, Expr):
        b = lift(b)
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value * b.value)
    if isinstance(a, Const):
        a, b = b, a  # constant on the right: x*3
    if isinstance(b, Const):
        if b.value == 0:
            return ZERO
        if b.value == 1:
            return a
        if isinstance(a, Bin) and a.op == "*" and isinstance(a.b, Const):
            return mul(a.a, a.b.value * b.value)
        if isinstance(a, Bin) and a.op in ("%", "/"):
            return Bin("*", b, a)  # 960*((T+1)%2) reads better than (T+1)%2*960
    return Bin("*", a, b)


def _c_div(x: int, y: int) -> int:
    if y == 0:
        return 0
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def _c_mod(x: int, y: int) -> int:
    if y == 0:
        return 0
    return x - _c_div(x, y) * y


def div(a: Value, b: Value) -> Expr:
    if not isinstance(a, Expr):
        a = lift(a)
    if not isinstance(b, Expr):
        b = lift(b)
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(_c_div(a.value, b.value))
    if b == ONE:
        return a
    return Bin("/", a, b)


def mod(a: Value, b: Value) -> Expr:
    if not isinstance(a, Expr):
        a = lift(a)
    if not isinstance(b, Expr):
        b = lift(b)
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(_c_mod(a.value, b.value))
    if b == ONE:
        return ZERO
    return Bin("%", a, b)


_CMP = {"==": lambda x, y: x == y, "!=": lambda x, y: x != y, "<": lambda x, y: x < y,
        "<=": lambda x, y: x <= y, ">": lambda x, y: x > y, ">=": lambda x, y: x >= y}


def cmp(op: str, a: Value, b: Value) -> Expr:
    """``a op b``; a side that is a ``select`` is distributed (``(c?x:y) == k`` becomes
    ``c ? x==k : y==k``) so that comparisons stay between affine terms."""
    if not isinstance(a, Expr):
        a = lift(a)
    if not isinstance(b, Expr):
        b = lift(b)
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(int(_CMP[op](a.value, b.value)))
    if isinstance(a, Select):
        return select(a.cond, cmp(op, a.a, b), cmp(op, a.b, b))
    if isinstance(b, Select):
        return select(b.cond, cmp(op, a, b.a), cmp(op, a, b.b))
    return Cmp(op, a, b)


def eq(a: Value, b: Value) -> Expr:
    return cmp("==", a, b)


def ne(a: Value, b: Value) -> Expr:
    return cmp("!=", a, b)


def lt(a: Value, b: Value) -> Expr:
    return cmp("<", a, b)


def ge(a: Value, b: Value) -> Expr:
    return cmp(">=", a, b)


def _atom(e: Expr) -> Optional[tuple]:
    """(variable, op, constant) of a comparison ``var ==/!= k``."""
    if isinstance(e, Cmp) and e.op in ("==", "!=") and isinstance(e.a, Var) and isinstance(e.b, Const):
        return e.a.name, e.op, e.b.value
    return None


def _conjuncts(e: Expr) -> list:
    if isinstance(e, Logic) and e.op == "&&":
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [e]


def land(*terms: Value) -> Expr:
    """Conjunction, folded: constants, duplicates, and ``x==a && x!=b`` (a != b) is ``x==a``,
    ``x==a && x==b`` is false."""
    parts: list = []
    for t in map(lift, terms):
        if t == FALSE:
            return FALSE
        if isinstance(t, Const):
            continue
        parts += [p for p in _conjuncts(t) if p not in parts]
    equal = {}
    for p in parts:
        a = _atom(p)
        if a and a[1] == "==":
            if equal.setdefault(a[0], a[2]) != a[2]:
                return FALSE
    keep = []
    for p in parts:
        a = _atom(p)
        if a and a[1] == "!=" and a[0] in equal:
            if equal[a[0]] == a[2]:
                return FALSE
            continue
        keep.append(p)
    out: Optional[Expr] = None
    for p in keep:
        out = p if out is None else Logic("&&", out, p)
    return TRUE if out is None else out


def lor(*terms: Value) -> Expr:
    out: Optional[Expr] = None
    seen: list = []
    for t in map(lift, terms):
        if isinstance(t, Const) and t.value:
            return TRUE
        if isinstance(t, Const) or t in seen:
            continue
        seen.append(t)
        out = t if out is None else Logic("||", out, t)
    return FALSE if out is None else out


def assume(e: Expr, fact: Expr) -> Expr:
    """``e`` simplified knowing that ``fact`` holds (a conjunction of ``var ==/!= k``
    comparisons): comparisons it decides are replaced by their value and the tree refolded."""
    known = {}
    for p in _conjuncts(fact):
        a = _atom(p)
        if a:
            known[(a[0], a[2])] = a[1] == "=="
    if not known:
        return e
    return _assume(e, known)


def _assume(e: Expr, known: dict) -> Expr:
    a = _atom(e)
    if a is not None:
        hit = known.get((a[0], a[2]))
        if hit is not None:
            return TRUE if hit == (a[1] == "==") else FALSE
        if a[1] == "==" and any(v for (n, _), v in known.items() if n == a[0]):
            return FALSE  # the variable is known equal to another constant
        return e
    if isinstance(e, Select):
        return select(_assume(e.cond, known), _assume(e.a, known), _assume(e.b, known))
    if isinstance(e, Logic):
        x, y = _assume(e.a, known), _assume(e.b, known)
        return land(x, y) if e.op == "&&" else lor(x, y)
    if isinstance(e, Not):
        return lnot(_assume(e.a, known))
    if isinstance(e, Bin):
        x, y = _assume(e.a, known), _assume(e.b, known)
        return {"+": add, "-": sub, "*": mul, "/": div, "%": mod}[e.op](x, y) if e.op in "+-*/%" else Bin(e.op, x, y)
    if isinstance(e, Cast):
        return Cast(e.ctype, _assume(e.a, known))
    return e


def lnot(a: Value) -> Expr:
    if not isinstance(a, Expr):
        a = lift(a)
    if isinstance(a, Const):
        return Const(int(not a.value))
    if isinstance(a, Not):
        return a.a
    if isinstance(a, Cmp):
        flip = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
        return Cmp(flip[a.op], a.a, a.b)
    return Not(a)


def select(cond: Value, a: Value, b: Value) -> Expr:
    if not isinstance(cond, Expr):
        cond = lift(cond)
    if not isinstance(a, Expr):
        a = lift(a)
    if not isinstance(b, Expr):
        b = lift(b)
    if a == b:
        return a
    if isinstance(cond, Const):
        return a if cond.value else b
    return Select(cond, a, b)


def cast(ctype: str, a: Value) -> Expr:
    return Cast(ctype, a if isinstance(a, Expr) else lift(a))


# ----------------------------------------------------------------------------------------------
# Printing


_PREC = {"?:": 1, "||": 2, "&&": 3, "==": 4, "!=": 4, "<": 5, "<=": 5, ">": 5, ">=": 5,
         "<<": 6, ">>": 6, "+": 7, "-": 7, "*": 8, "/": 8, "%": 8}
_UNARY, _PRIMARY = 9, 10


def _prec(e: Expr) -> int:
    if isinstance(e, (Subscript, Vector)):
        return _PRIMARY
    if isinstance(e, (Const, Var, CallExpr)):
        return _PRIMARY if not (isinstance(e, Const) and e.value < 0) else _UNARY
    if isinstance(e, Select):
        return _PREC["?:"]
    if isinstance(e, (Bin, Cmp, Logic)):
        return _PREC[e.op]
    return _UNARY


def _paren(e: Expr, minimum: int) -> str:
    text = to_c(e)
    return f"({text})" if _prec(e) < minimum else text


def _gcc_min(parent: Expr, child: Expr, p: int) -> int:
    """Parentheses gcc's -Wparentheses asks for although precedence does not: && inside ||,
    a comparison inside a comparison, + - inside << >>."""
    if not isinstance(child, (Bin, Cmp, Logic)):
        return p
    if parent.op == "||" and child.op == "&&":
        return _PRIMARY
    if isinstance(parent, Cmp) and isinstance(child, Cmp):
        return _PRIMARY
    if parent.op in ("<<", ">>") and child.op in ("+", "-"):
        return _PRIMARY
    return p


def to_c(e: Expr) -> str:
    """C text of an expression, with the parentheses precedence requires."""
    if isinstance(e, Const):
        return str(e.value)
    if isinstance(e, Var):
        return e.name
    if isinstance(e, CallExpr):
        return f"{e.name}({', '.join(to_c(a) for a in e.args)})"
    if isinstance(e, Cast):
        return f"({e.ctype}) ({to_c(e.a)})"
    if isinstance(e, Subscript):
        return f"{_paren(e.base, _PRIMARY)}[{to_c(e.index)}]"
    if isinstance(e, Deref):
        return f"*({to_c(e.a)})"
    if isinstance(e, Vector):
        return f"(({e.ctype}){{{', '.join(to_c(x) for x in e.items)}}})"
    if isinstance(e, Not):
        return f"!{_paren(e.a, _UNARY)}"
    if isinstance(e, Select):
        return f"{_paren(e.cond, _UNARY)}?{_paren(e.a, _PREC['*'])}:{_paren(e.b, _PREC['*'])}"
    p = _PREC[e.op]
    left = _paren(e.a, _gcc_min(e, e.a, p))
    # left-associative: the right operand needs parentheses at equal precedence, but for
    # a sum (a + (b - c) is a + b - c)
    right = _paren(e.b, _gcc_min(e, e.b, p if e.op == "+" else p + 1))
    space = " " if e.op in ("+", "-", "&&", "||") else ""
    return f"{left}{space}{e.op}{space}{right}"


def plus_c(left: str, e: Expr) -> str:
    """C text of ``left + e`` (``left`` already C text, e.g. a cast pointer)."""
    return f"{left} + {_paren(e, _PREC['+'])}"


# ----------------------------------------------------------------------------------------------
# Evaluation


Env = dict


def compile_expr(e: Expr) -> Callable[[Env], int]:
    """A Python closure computing the expression in an environment ``{name: int}`` (C integer
    semantics; a zero divisor gives 0, where C would trap)."""
    t = type(e)
    if t is Const:
        v = e.value
        return lambda env: v
    if t is Var:
        name = e.name
        return lambda env: env[name]
    if t is Bin or t is Cmp or t is Logic:
        return _compile_op(e)
    if isinstance(e, Cast):
        return compile_expr(e.a)
    if isinstance(e, (Subscript, Deref)):
        return lambda env: 1
    if isinstance(e, Vector):
        return lambda env: 0
    if isinstance(e, CallExpr):
        name, args = e.name, [compile_expr(a) for a in e.args]

        def call(env, name=name, args=args):
            f = env[name]
            return f(*(a(env) for a in args)) if callable(f) else f
        return call
    if isinstance(e, Not):
        a = compile_expr(e.a)
        return lambda env: int(not a(env))
    if isinstance(e, Select):
        c, x, y = compile_expr(e.cond), compile_expr(e.a), compile_expr(e.b)
        return lambda env: x(env) if c(env) else y(env)
    return _compile_op(e)


def _compile_op(e: Expr) -> Callable[[Env], int]:
    """A binary operator, comparison or logical operator (see compile_expr)."""
    a, b = compile_expr(e.a), compile_expr(e.b)
    op = e.op
    if op == "+":
        return lambda env: a(env) + b(env)
    if op == "-":
        return lambda env: a(env) - b(env)
    if op == "*":
        return lambda env: a(env) * b(env)
    if op == "/":
        return lambda env: _c_div(a(env), b(env))
    if op == "%":
        return lambda env: _c_mod(a(env), b(env))
    if op == "<<":
        return lambda env: a(env) << b(env)
    if op == ">>":
        return lambda env: a(env) >> b(env)
    if op == "&&":
        return lambda env: int(bool(a(env)) and bool(b(env)))
    if op == "||":
        return lambda env: int(bool(a(env)) or bool(b(env)))
    f = _CMP[op]
    return lambda env: int(f(a(env), b(env)))


def evaluate(e: Expr, env: Env) -> int:
    return compile_expr(e)(env)


# ----------------------------------------------------------------------------------------------
# Analysis


def names(e: Expr) -> set:
    """Every variable and called name the expression reads."""
    out: set = set()
    _names(e, out)
    return out


def _names(e: Expr, out: set) -> None:
    t = type(e)
    if t is Const:
        return
    if t is Var:
        out.add(e.name)
    elif t is Bin or t is Cmp or t is Logic:
        _names(e.a, out)
        _names(e.b, out)
    elif isinstance(e, Var):
        out.add(e.name)
    elif isinstance(e, CallExpr):
        out.add(e.name)
        for a in e.args:
            _names(a, out)
    elif isinstance(e, (Bin, Cmp, Logic)):
        _names(e.a, out)
        _names(e.b, out)
    elif isinstance(e, (Not, Cast, Deref)):
        _names(e.a, out)
    elif isinstance(e, Subscript):
        _names(e.base, out)
        _names(e.index, out)
    elif isinstance(e, Vector):
        for x in e.items:
            _names(x, out)
    elif isinstance(e, Select):
        _names(e.cond, out)
        _names(e.a, out)
        _names(e.b, out)


def affine(e: Expr, free: frozenset, env: Env) -> Optional[tuple]:
    """``(coefficients {var: int}, constant)`` of an expression affine in the ``free``
    variables, the other names read from ``env``; None when it is not affine in them."""
    if isinstance(e, Const):
        return {}, e.value
    if isinstance(e, Var):
        if e.name in free:
            return {e.name: 1}, 0
        return ({}, env[e.name]) if e.name in env else None
    if isinstance(e, Cast):
        return affine(e.a, free, env)
    if isinstance(e, Bin) and e.op in ("+", "-"):
        x, y = affine(e.a, free, env), affine(e.b, free, env)
        if x is None or y is None:
            return None
        s = 1 if e.op == "+" else -1
        coefs = dict(x[0])
        for v, c in y[0].items():
            coefs[v] = coefs.get(v, 0) + s * c
        return {v: c for v, c in coefs.items() if c}, x[1] + s * y[1]
    if isinstance(e, Bin) and e.op == "*":
        x, y = affine(e.a, free, env), affine(e.b, free, env)
        if x is None or y is None:
            return None
        if not x[0]:
            x, y = y, x
        if y[0]:
            return None  # product of two variable terms
        k = y[1]
        return {v: c * k for v, c in x[0].items() if c * k}, x[1] * k
    if names(e) & free:
        return None
    try:
        return {}, evaluate(e, env)
    except KeyError:
        return None


class Sensitive(Exception):
    """An expression depends on a loop index other than through comparisons of affine terms."""


def comparisons(e: Expr, out: list, loop_vars: frozenset) -> None:
    """Append every comparison of ``e`` that reads a loop variable; raise :class:`Sensitive`
    when a loop variable is read anywhere else (its value then matters, not just a range)."""
    if isinstance(e, Cmp):
        if names(e) & loop_vars:
            out.append(e)
        return
    if isinstance(e, Var):
        if e.name in loop_vars:
            raise Sensitive(e.name)
        return
    if isinstance(e, (Subscript, Deref, Vector)):
        return  # run-time values: they evaluate to constants whatever the indices
    if isinstance(e, CallExpr):
        for a in e.args:
            comparisons(a, out, loop_vars)
    elif isinstance(e, (Bin, Logic)):
        comparisons(e.a, out, loop_vars)
        comparisons(e.b, out, loop_vars)
    elif isinstance(e, (Not, Cast)):
        comparisons(e.a, out, loop_vars)
    elif isinstance(e, Select):
        comparisons(e.cond, out, loop_vars)
        comparisons(e.a, out, loop_vars)
        comparisons(e.b, out, loop_vars)


def crossing(c: Cmp, var: str, env: Env) -> Optional[tuple]:
    """Where the comparison ``c`` can change value as ``var`` grows (other names from ``env``):
    ``()`` if it does not depend on ``var``, a tuple of indices ``i`` at which the value at
    ``i`` may differ from the value at ``i - 1``; None when ``c`` is not affine in ``var``."""
    d = affine(Bin("-", c.a, c.b), frozenset((var,)), env)
    if d is None:
        return None
    coefs, k = d
    a = coefs.get(var, 0)
    if a == 0:
        return ()
    # a*i + k crosses 0 between floor(-k/a) and ceil(-k/a); equality holds only at -k/a
    lo = -k // a
    return (lo, lo + 1, lo + 2)


def restrict(c: Cmp, inner: dict, env: Env) -> object:
    """The comparison ``c`` restricted to a box of inner loop indices ``{var: extent}`` with the
    outer names fixed by ``env``: its truth value when constant over the box, else the affine
    form (coefficients, constant) that decides it. Equal results mean equal behaviour."""
    d = affine(Bin("-", c.a, c.b), frozenset(inner), env)
    if d is None:
        return ("?", tuple(sorted((n, env[n]) for n in names(c) if n in env)))
    coefs, k = d
    lo = k + sum(min(0, a * (inner[v] - 1)) for v, a in coefs.items())
    hi = k + sum(max(0, a * (inner[v] - 1)) for v, a in coefs.items())
    f = _CMP[c.op]
    if c.op in ("==", "!="):
        if lo == hi:
            return bool(f(lo, 0))
        if lo > 0 or hi < 0:
            return c.op == "!="
    else:
        at_lo, at_hi = f(lo, 0), f(hi, 0)
        if at_lo == at_hi:
            return bool(at_lo)
    return (tuple(sorted(coefs.items())), k)


__all__ = [
    "Expr", "Const", "Var", "Bin", "Cmp", "Logic", "Not", "Select", "Cast", "CallExpr", "Subscript", "Deref", "Vector", "ZERO", "ONE", "TRUE",
    "FALSE", "lift", "const_value", "add", "sub", "neg", "mul", "div", "mod", "cmp", "eq", "ne", "lt", "ge",
    "land", "lor", "lnot", "select", "cast", "assume", "to_c", "plus_c", "compile_expr", "evaluate", "names", "affine", "Sensitive",
    "comparisons", "crossing", "restrict",
]
