"""Which `return` of score gave a case's value: the line a return-value problem points at.

The child reports, from the finished frame of the score call itself, the line of the
last instruction it ran and the lines of the instructions before it, newest first
(runtime/skynet_child.py). That frame is the only reliable witness of which return ran:
static analysis alone cannot tell which of several returns a call took, nor what a
variable held. But the last instruction is not always the return's own: returning from
inside `try ... finally` or `with` runs the clean-up after the value is computed, and
those instructions carry the clean-up's lines. So the worker reads score's return
statements from the AST and takes the newest reported line that falls inside one of
them (a multi-line return spans several lines). Nothing the child says is trusted
beyond being a line number: a line that is no return of score gives no line at all.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from contract.parsing import parse as ast_parse
from skynet.tracebacks import TEXT_LIMIT

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


class Returns:
    """The return statements of each function of one metric.py, by the line its code
    object starts at (co_firstlineno: the first decorator's line, else the def's)."""

    def __init__(self, text: str, tree: ast.Module | None = None) -> None:
        """`tree`: the text's AST when the caller parsed it already (each parse of a
        metric costs the worker's CPU on every check)."""
        # Lines as Python numbers them (not str.splitlines, which also splits at \f).
        self._lines = re.split(r"\r\n|\r|\n", text)
        self._spans: dict[int, list[tuple[int, int]]] = {}
        if tree is None:
            try:
                tree = ast_parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                self._spans[first] = [
                    (stmt.lineno, stmt.end_lineno or stmt.lineno) for stmt in _returns(node)
                ]

    def line(self, returned_from: object) -> dict | None:
        """{"line", "text"} of the return that ran, from the child's report; None when
        the report names no return statement of a function of this file."""
        if not isinstance(returned_from, dict):
            return None
        spans = self._spans.get(returned_from.get("first_line"))  # type: ignore[arg-type]
        lines = returned_from.get("lines")
        if not spans or not isinstance(lines, list):
            return None
        for line in lines:
            if type(line) is not int:
                continue
            for start, end in spans:
                if start <= line <= end:
                    text = self._lines[start - 1].strip() if start <= len(self._lines) else ""
                    return {"line": start, "text": text[:TEXT_LIMIT]}
        return None


def _returns(func: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.Return]:
    """The function's own return statements, not those of functions inside it."""
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            yield node
        if isinstance(node, _SCOPES):
            continue
        stack.extend(ast.iter_child_nodes(node))
