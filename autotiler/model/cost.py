"""The grammar of a basic kernel's ``Cost=`` expression (an autotiler extension of LibKernel).

``LibKernel(..., Cost="4*((W*H + ncores - 1)/ncores) + 20")``: the compute cycles of one call,
an integer expression over the kernel's scalar argument names and ``ncores`` with ``+ - * / %``
and parentheses (``/`` divides integers, as in C). Checked here when the basic kernel is
declared; turned into a schedule expression by :mod:`autotiler.schedule.cost`.
"""

from __future__ import annotations

import ast
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
    if not isinstance(expr, str):
        raise ModelError(f"Cost must be a string expression, got {type(expr).__name__} {expr!r}", where=where,
                         kernel=kernel, hint="write e.g. Cost=\"W*H/ncores + 20\"")
    try:
        tree = parse_cost(expr)
    except (SyntaxError, ValueError):
        raise ModelError(f"Cost expression {expr!r} is not a valid expression", where=where, kernel=kernel,
                         hint="write e.g. \"W*H/ncores + 20\"") from None
    except (RecursionError, MemoryError):
        tree = None
    if tree is None or _depth(tree) > MAX_DEPTH:  # evaluated recursively, by the tiler and by the C compiler
        raise ModelError(f"Cost expression {expr[:40]!r}... ({len(expr)} characters) is nested more than {MAX_DEPTH} "
                         "levels deep", where=where, kernel=kernel,
                         hint="write the cycle count as a shorter expression, e.g. \"W*H/ncores + 20\"")
    scalars = {c.name for c in cargs if not c.is_pointer}
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED) or (isinstance(node, ast.Constant) and
                                              (not isinstance(node.value, int) or isinstance(node.value, bool))):
            raise ModelError(f"Cost expression {expr!r} may only use integers, + - * / % and names",
                             where=where, kernel=kernel, hint="write e.g. \"W*H/ncores + 20\"")
        if isinstance(node, ast.Name) and node.id != "ncores" and node.id not in scalars:
            raise ModelError(f"Cost expression {expr!r} uses '{node.id}', which is not a scalar argument",
                             where=where, kernel=kernel,
                             hint="scalar arguments: " + (", ".join(sorted(scalars)) or "none") + ", and ncores")
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) \
                and _constant(node.right) == 0:
            raise ModelError(f"Cost expression {expr!r} divides by zero", where=where, kernel=kernel,
                             hint="a Cost counts the cycles of one call: divide by a non-zero value")
    value = _constant(tree.body)
    if value is not None and value < 0:
        raise ModelError(f"Cost expression {expr!r} is a negative cycle count ({value})", where=where, kernel=kernel,
                         hint="a Cost counts the cycles of one call: give 0 or more")
    return expr


MAX_DEPTH = 200


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


__all__ = ["parse_cost", "check_cost"]
