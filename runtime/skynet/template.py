"""Prompt templates: `{field}` placeholders filled with a case's input fields, safely.

Only plain names are allowed: `{question}`. No attribute or index access
(`{a.b}`, `{a[0]}`, `{0.__class__}`), no positional fields (`{}`, `{0}`), no
conversion or format spec (`{a!r}`, `{a:>10}`). `{{` and `}}` are literal
braces. The template is parsed with string.Formatter's parser but never given
to str.format: values are joined in here, so no field name can reach an
attribute of anything.

Shared by the parent (checked before any child starts) and the child (the
built-in run of a "prompt" artifact), so both apply the same rules.
"""

from __future__ import annotations

import json
import string

from skynet.safe import NAME_LIMIT, clip, safe_message

CODES = ("template_syntax_error", "template_field_not_plain", "template_unknown_field")

_parse = string.Formatter().parse


class TemplateError(ValueError):
    """A template that cannot be used: `code` (one of CODES) and `params`."""

    def __init__(self, code: str, params: dict | None = None) -> None:
        super().__init__(code, params or {})
        self.code = code
        self.params = params or {}

    def __str__(self) -> str:
        field = self.params.get("field")
        return f"{self.code}: {field}" if field is not None else self.code


def parse(template: str) -> list[tuple[str, str | None]]:
    """[(literal text, field name or None)]; raises TemplateError for anything not plain."""
    if not isinstance(template, str):
        raise TemplateError("template_syntax_error", {"msg": "template is not a string"})
    try:
        parts = list(_parse(template))
    except ValueError as exc:  # a lone "{" or "}", an unclosed field
        raise TemplateError("template_syntax_error", {"msg": safe_message(exc)}) from None
    pieces: list[tuple[str, str | None]] = []
    for literal, name, spec, conversion in parts:
        if name is None:
            pieces.append((literal, None))
            continue
        if not name.isidentifier() or spec or conversion is not None:
            shown = name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
            raise TemplateError("template_field_not_plain", {"field": clip(shown, NAME_LIMIT)})
        pieces.append((literal, name))
    return pieces


def fields(template: str) -> list[str]:
    """The distinct field names, in order of first use; raises TemplateError."""
    return list(dict.fromkeys(name for _, name in parse(template) if name is not None))


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def fill(template: str, values: dict) -> str:
    """The template with each `{name}` replaced by values[name] (str as is, else JSON).

    Raises TemplateError: template_syntax_error, template_field_not_plain, or
    template_unknown_field (params field) for a name `values` does not have.
    """
    out = []
    for literal, name in parse(template):
        out.append(literal)
        if name is None:
            continue
        if not isinstance(values, dict) or name not in values:
            raise TemplateError("template_unknown_field", {"field": clip(name, NAME_LIMIT)})
        out.append(_text(values[name]))
    return "".join(out)
