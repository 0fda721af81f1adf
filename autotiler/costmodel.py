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


def eval_cost(expr: str, values: dict, ncores: int) -> int:
    """Evaluate a Cost expression with integer (C-like, non-negative) semantics."""
    tree = ast.parse(expr, mode="eval")
    return max(0, int(_eval(tree.body, {**values, "ncores": ncores})))


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
