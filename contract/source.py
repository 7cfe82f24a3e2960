"""The parent's part of the load stage: size, UTF-8 and syntax, executing nothing.

ast.parse runs in the parent on untrusted text, so every way it can fail is
caught: SyntaxError, ValueError (null bytes on Python 3.11), RecursionError
and MemoryError (absurd nesting).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from contract import parsing

MAX_SOURCE_BYTES = 256 * 1024


@dataclass
class SourceCheck:
    text: str | None = None
    tree: ast.Module | None = None
    problem: str | None = None
    params: dict = field(default_factory=dict)


def _utf8_position(data: bytes, offset: int) -> dict:
    line_start = data.rfind(b"\n", 0, offset) + 1
    return {"line": data.count(b"\n", 0, offset) + 1, "column": offset - line_start + 1}


def decode(source: bytes | str) -> SourceCheck:
    """Size first (cheap, and bounds the work below), then strict UTF-8.

    A leading BOM is dropped: editors on Windows add it, and compile() of a str
    would reject it. not_utf8 params: byte offset and its line / byte column.
    """
    if isinstance(source, str):
        try:
            data = source.encode("utf-8")
        except UnicodeEncodeError as exc:  # lone surrogates
            prefix = source[: exc.start].encode("utf-8", "surrogatepass")
            return SourceCheck(
                problem="not_utf8",
                params={"byte": len(prefix), **_utf8_position(prefix, len(prefix))},
            )
    else:
        data = bytes(source)
    if len(data) > MAX_SOURCE_BYTES:
        return SourceCheck(
            problem="file_too_large", params={"size": len(data), "limit": MAX_SOURCE_BYTES}
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return SourceCheck(
            problem="not_utf8", params={"byte": exc.start, **_utf8_position(data, exc.start)}
        )
    return SourceCheck(text=text.removeprefix("\ufeff"))


def _null_byte_position(text: str) -> dict:
    offset = text.index("\x00")
    line_start = text.rfind("\n", 0, offset) + 1
    return {"line": text.count("\n", 0, offset) + 1, "column": offset - line_start + 1}


def parse(text: str) -> SourceCheck:
    """ast.parse with every failure turned into syntax_error.

    params: line, column (1-based characters), end_line, end_column, msg (the
    parser's own text) and reason: syntax, null_bytes or too_complex.
    """
    try:
        # Safe from any thread, beside any other parse, with no lock (contract.parsing).
        tree = parsing.parse(text)
    except SyntaxError as exc:
        if "\x00" in text:
            return _null_bytes(text, exc.msg)
        return SourceCheck(
            text=text,
            problem="syntax_error",
            params={
                "line": exc.lineno,
                "column": exc.offset,
                "end_line": exc.end_lineno,
                "end_column": exc.end_offset,
                "msg": str(exc.msg),
                "reason": "syntax",
            },
        )
    except ValueError as exc:
        return _null_bytes(text, str(exc))
    except (RecursionError, MemoryError):
        return SourceCheck(
            text=text,
            problem="syntax_error",
            params={"line": None, "column": None, "msg": "", "reason": "too_complex"},
        )
    return SourceCheck(text=text, tree=tree)


def _null_bytes(text: str, msg: str) -> SourceCheck:
    params = {**_null_byte_position(text), "msg": msg, "reason": "null_bytes"}
    return SourceCheck(text=text, problem="syntax_error", params=params)


def check_source(source: bytes | str) -> SourceCheck:
    """decode() then parse(); the first problem found, or text and tree."""
    decoded = decode(source)
    if decoded.problem is not None:
        return decoded
    return parse(decoded.text)  # type: ignore[arg-type]
