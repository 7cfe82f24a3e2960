"""Compiling a user's file (metric.py, program.py) in the child, with its syntax errors
reported as parameters."""

from __future__ import annotations

import types

from skynet.safe import safe_text


def compile_user_code(source: str, filename: str) -> tuple[types.CodeType | None, dict | None]:
    """(code, None), or (None, the syntax error's params: line, column, msg, reason)."""
    try:
        # dont_inherit: the runtime's own `from __future__` imports must not leak in.
        return compile(source, filename, "exec", dont_inherit=True), None
    except SyntaxError as exc:
        params = {
            "line": exc.lineno,
            "column": exc.offset,
            "msg": safe_text(exc.msg, 2048),
            "reason": "syntax",
        }
        return None, params
    except (ValueError, RecursionError, MemoryError) as exc:
        # ValueError: null bytes (Python 3.11); the others: nesting too deep to compile.
        reason = "null_bytes" if isinstance(exc, ValueError) else "too_complex"
        return None, {"line": None, "column": None, "msg": "", "reason": reason}


def split_lines(source: str) -> list[str]:
    """The source's lines at Python's own line breaks only (\r\n, \r, \n): str.splitlines()
    would also split at form feeds and U+2028, and traceback lines would point at the
    wrong text."""
    return source.replace("\r\n", "\n").replace("\r", "\n").split("\n")


class SourceLoader:
    """A module's __loader__ that hands linecache the module's source, so a traceback the
    user's code prints shows its lines, without importing linecache ahead of time."""

    def __init__(self, source: str) -> None:
        self.source = source

    def get_source(self, name: str) -> str:
        return self.source
