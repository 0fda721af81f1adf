"""The grammar of a basic kernel's ``Cost=`` expression (an autotiler extension of LibKernel).

``LibKernel(..., Cost="4*((W*H + ncores - 1)/ncores) + 20")``: the compute cycles of one call,
an integer expression over the kernel's scalar argument names and ``ncores`` with ``+ - * / %``
and parentheses (``/`` divides integers, as in C). Checked here when the basic kernel is
declared; turned into a schedule expression by :mod:`autotiler.schedule.cost`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from ..errors import ModelError

_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv,
            ast.Mod, ast.USub, ast.UAdd, ast.Constant, ast.Name, ast.Load)


@lru_cache(maxsize=1024)
def parse_cost(expr: str) -> ast.Expression:
    """The syntax tree of a Cost expression (parsed once per distinct text)."""
    return ast.parse(expr, mode="eval")


def check_cost(expr, cargs: tuple, where: str = "", kernel: Optional[str] = None) -> str:
    """Check a Cost expression: integers, + - * / %, parentheses, scalar argument names, ncores."""
    problem = cost_problem(expr, frozenset(c.name for c in cargs if not c.is_pointer))
    if problem is not None:
        raise ModelError(problem.message, where=where, kernel=kernel, hint=problem.hint)
    return expr


@dataclass(frozen=True)
class CostProblem:
    """What is wrong with a Cost expression, and what to write instead."""

    message: str
    hint: str


def cost_problem(expr, scalars: Optional[frozenset]) -> Optional[CostProblem]:
    """See :func:`_cost_problem` (memoised: the platforms' long fitted expressions are checked for every
    kernel of every model, and the answer depends only on the text and the names)."""
    if not isinstance(expr, str):
        return _cost_problem(expr, scalars)
    return _cost_problem_memo(expr, scalars)


@lru_cache(maxsize=4096)
def _cost_problem_memo(expr: str, scalars: Optional[frozenset]) -> Optional[CostProblem]:
    return _cost_problem(expr, scalars)


def _cost_problem(expr, scalars: Optional[frozenset]) -> Optional[CostProblem]:
    """The first problem of a Cost expression (None: none): not a string, not an expression, nested
    too deep, an operation or a constant outside the grammar, a division by zero, a negative
    constant; and, unless ``scalars`` is None (the names are checked later, where the kernel's
    formals are known), a name other than ``ncores`` and ``scalars``. The one checker of the
    library's ``Cost=`` and of a platform's own (``ComputeScale.cost``)."""
    example = "write e.g. \"W*H/ncores + 20\""
    if not isinstance(expr, str):
        return CostProblem(f"Cost must be a string expression, got {type(expr).__name__} {expr!r}",
                           "write e.g. Cost=\"W*H/ncores + 20\"")
    try:
        tree = parse_cost(expr)
    except (SyntaxError, ValueError):
        return CostProblem(f"Cost expression {expr!r} is not a valid expression", example)
    except (RecursionError, MemoryError):
        tree = None
    if tree is None or _depth(tree) > MAX_DEPTH:  # evaluated recursively, by the tiler and by the C compiler
        return CostProblem(f"Cost expression {expr[:40]!r}... ({len(expr)} characters) is nested more than "
                           f"{MAX_DEPTH} levels deep",
                           "write the cycle count as a shorter expression, e.g. \"W*H/ncores + 20\"")
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED) or (isinstance(node, ast.Constant) and
                                              (not isinstance(node.value, int) or isinstance(node.value, bool))):
            return CostProblem(f"Cost expression {expr!r} may only use integers, + - * / % and names", example)
        if scalars is not None and isinstance(node, ast.Name) and node.id != "ncores" and node.id not in scalars:
            return CostProblem(f"Cost expression {expr!r} uses '{node.id}', which is not a scalar argument",
                               "scalar arguments: " + (", ".join(sorted(scalars)) or "none") + ", and ncores")
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) \
                and _constant(node.right) == 0:
            return CostProblem(f"Cost expression {expr!r} divides by zero",
                               "a Cost counts the cycles of one call: divide by a non-zero value")
    value = _constant(tree.body)
    if value is not None and value < 0:
        return CostProblem(f"Cost expression {expr!r} is a negative cycle count ({value})",
                           "a Cost counts the cycles of one call: give 0 or more")
    return None


MAX_DEPTH = 200


@dataclass(frozen=True)
class LinearCost:
    """A Cost expression read as ``(c1*t1 + c2*t2 + ...) / divisor``: the terms a calibration fits
    coefficients to (``bench/calibrate.py --fit-compute``, a platform's ``ComputeScale.cost``).
    ``terms[i]`` is a term without its coefficient (its factors in parentheses where one holds a
    division, so that ``c*term`` keeps C's integer meaning); ``"1"`` is the constant part."""

    terms: tuple
    coefficients: tuple
    divisor: int = 1

    def text(self) -> str:
        """The expression: ``(c1*t1 + ...) / divisor`` (a coefficient of 1 and a divisor of 1 left out)."""
        parts = []
        for term, c in zip(self.terms, self.coefficients):
            body = str(abs(c)) if term == "1" else term if abs(c) == 1 else f"{abs(c)}*{term}"
            parts.append(("- " if c < 0 else "+ " if parts else "") + body)
        total = " ".join(parts) or "0"
        return total if self.divisor == 1 else f"({total}) / {self.divisor}"


def linear_cost(expr: str) -> LinearCost:
    """``expr`` (a valid Cost expression) as a :class:`LinearCost`: an outer division by a positive
    integer is the divisor; the additive terms are split apart; the integer constants a term's
    top-level product multiplies by are its coefficient (``3*A/4`` is one term, ``A/4``'s
    division is not a product: its coefficient is 1)."""
    body = parse_cost(expr).body
    divisor = 1
    if isinstance(body, ast.BinOp) and isinstance(body.op, (ast.Div, ast.FloorDiv)) \
            and isinstance(body.right, ast.Constant) and body.right.value > 0:
        body, divisor = body.left, body.right.value
    terms, coefficients = [], []
    for node, sign in _addends(body, 1):
        factors = _factors(node)
        values = [_constant(f) for f in factors]   # a factor without names is part of the coefficient
        c = sign
        for v in values:
            c *= 1 if v is None else v
        rest = [f for f, v in zip(factors, values) if v is None]
        terms.append("*".join(_factor_text(f) for f in rest) or "1")
        coefficients.append(c)
    return LinearCost(tuple(terms), tuple(coefficients), divisor)


def _addends(node, sign: int):
    """(term, +1 or -1) of a sum, left to right."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        yield from _addends(node.left, sign)
        yield from _addends(node.right, sign if isinstance(node.op, ast.Add) else -sign)
    elif isinstance(node, ast.UnaryOp):
        yield from _addends(node.operand, -sign if isinstance(node.op, ast.USub) else sign)
    else:
        yield node, sign


def _factors(node) -> list:
    """The factors of a product (a product of products flattened; any other node is one factor)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _factor_text(node) -> str:
    """A factor that stays one factor wherever it is put in a product."""
    text = ast.unparse(node)
    return text if isinstance(node, (ast.Name, ast.Constant)) else f"({text})"


def _depth(tree) -> int:
    """Nesting depth of a syntax tree (iteratively: the tree may be deeper than Python's stack)."""
    deepest, todo = 0, [(tree, 1)]
    while todo:
        node, d = todo.pop()
        deepest = max(deepest, d)
        todo.extend((child, d + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _constant(node) -> Optional[int]:
    """The value of a sub-expression without names (C integer arithmetic: / and % truncate
    toward zero), else None (also for a division by zero, which check_cost refuses)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        v = _constant(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if not isinstance(node, ast.BinOp):
        return None
    a, b = _constant(node.left), _constant(node.right)
    if a is None or b is None:
        return None
    if isinstance(node.op, ast.Add):
        return a + b
    if isinstance(node.op, ast.Sub):
        return a - b
    if isinstance(node.op, ast.Mult):
        return a * b
    if b == 0:
        return None
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return q if isinstance(node.op, (ast.Div, ast.FloorDiv)) else a - q * b


__all__ = ["parse_cost", "check_cost", "cost_problem", "CostProblem", "LinearCost", "linear_cost"]
