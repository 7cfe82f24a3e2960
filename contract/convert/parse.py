"""Reading a metric's source into a concrete syntax tree, or a ConvertError saying why not."""

from __future__ import annotations

import libcst as cst

from contract import parsing
from contract.convert.notes import ConvertError


def parse(source: str) -> cst.Module:
    """The source's tree; a ConvertError("syntax_error") with Python's own line, column
    and message when Python would not load it.

    Python's parser decides first: libcst accepts a few things Python refuses, and its
    own errors read as parser internals.
    """
    try:
        parsing.parse(source)  # its warnings ignored, and safe beside other threads' parses
    except SyntaxError as exc:
        if "\x00" in source:
            raise _null_byte(source) from None
        params = {"reason": "syntax", "line": exc.lineno, "column": exc.offset, "msg": exc.msg}
        raise ConvertError("syntax_error", exc.lineno, params) from None
    except ValueError:  # null bytes, on the Pythons that say so with a ValueError
        raise _null_byte(source) from None
    except (RecursionError, MemoryError):  # nested too deeply for the parser
        raise ConvertError("syntax_error", None, {"reason": "too_complex"}) from None
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        params = {
            "reason": "syntax",
            "line": exc.raw_line,
            "column": exc.raw_column + 1,
            "msg": exc.message,
        }
        raise ConvertError("syntax_error", exc.raw_line, params) from None
    except RecursionError:
        raise ConvertError("syntax_error", None, {"reason": "too_complex"}) from None


def _null_byte(source: str) -> ConvertError:
    before = source[: source.index("\x00")]
    line = before.count("\n") + 1
    column = len(before) - (before.rfind("\n") + 1) + 1
    return ConvertError(
        "syntax_error", line, {"reason": "null_bytes", "line": line, "column": column}
    )
