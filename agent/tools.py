"""The agent's tools: ``current_time``, ``calculator`` (a safe AST evaluator) and ``search_memory``."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from langchain_core.tools import BaseTool, tool
from langgraph.runtime import get_runtime

from memory_graph.config import Context, as_context

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCS: dict[str, Callable[..., float]] = {
    "sqrt": math.sqrt, "abs": abs, "round": round, "min": min, "max": max, "log": math.log, "exp": math.exp,
}
_CONSTS = {"pi": math.pi, "e": math.e}
MAX_EXPONENT = 1000
MAX_EXPRESSION_CHARS = 500


def safe_eval(expression: str) -> float | int:
    """Evaluate an arithmetic expression (numbers, + - * / // % **, sqrt/abs/round/min/max/log/exp, pi, e).

    Raises:
        ValueError: anything else (names, attributes, calls of other functions, huge exponents, too long).
    """
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise ValueError(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not an arithmetic expression: {expression!r}") from exc
    return _eval(tree.body)


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise ValueError(f"exponent larger than {MAX_EXPONENT}")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.Name) and node.id in _CONSTS:
        return _CONSTS[node.id]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS and not node.keywords:
        return _FUNCS[node.func.id](*[_eval(a) for a in node.args])
    raise ValueError(f"unsupported element in expression: {ast.dump(node)[:80]}")


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression such as '(17 * 3) + sqrt(16)' and return the result."""
    try:
        return str(safe_eval(expression))
    except (ValueError, ArithmeticError, TypeError) as exc:
        return f"error: {exc}"


@tool
def current_time() -> str:
    """The current date and time in UTC, ISO-8601."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()  # noqa: UP017 - py3.10 target


@tool
def search_memory(query: str) -> str:
    """Search the user's long-term memory for `query`; returns the recalled memories with their [m:ID]."""
    from memory_graph.graph import graph as memory_subgraph

    try:
        runtime = get_runtime(Context)  # the graph run's runtime
    except RuntimeError:  # called outside a graph run
        runtime = None
    context = runtime.context if runtime is not None else None
    out = memory_subgraph.invoke({"query": query}, context=as_context(context))
    return str(out.get("memory_context") or "(no relevant memories)")


TOOLS: list[BaseTool] = [current_time, calculator, search_memory]
