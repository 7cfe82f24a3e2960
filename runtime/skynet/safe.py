"""Describe arbitrary objects without letting their own methods break the caller.

Metric code controls __repr__, __str__ and even __class__; every helper here
catches BaseException and falls back to something built from the type alone.
A method that hangs instead is the parent's clock's problem.
"""

from __future__ import annotations

import reprlib

REPR_LIMIT = 2048
MESSAGE_LIMIT = 2048
NAME_LIMIT = 200


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit]


def type_name(obj: object) -> str:
    """Qualified name of type(obj), without "builtins." for built-in types."""
    try:
        cls = type(obj)
        module = type.__getattribute__(cls, "__module__")
        name = type.__getattribute__(cls, "__qualname__")
        if not isinstance(name, str):
            return "object"
        if isinstance(module, str) and module not in ("builtins", "__main__"):
            name = f"{module}.{name}"
        return clip(name, NAME_LIMIT)
    except BaseException:  # noqa: B036 - a hostile metaclass must not escape
        return "object"


def _make_repr() -> reprlib.Repr:
    # reprlib never builds the full repr of a huge container or string, so a
    # 20 MB return value costs little; limits chosen to fill ~2 KB usefully.
    r = reprlib.Repr()
    r.maxlevel = 6
    r.maxtuple = r.maxlist = r.maxset = r.maxfrozenset = r.maxdeque = r.maxarray = 20
    r.maxdict = 20
    r.maxstring = 1000
    r.maxlong = 400
    r.maxother = 400
    return r


_REPR = _make_repr()


def safe_repr(obj: object, limit: int = REPR_LIMIT) -> str:
    try:
        text = _REPR.repr(obj)
        if not isinstance(text, str):
            raise TypeError
        return clip(text, limit)
    except BaseException:  # noqa: B036 - any failure falls back to the type name
        return f"<{type_name(obj)}>"


def safe_message(exc: BaseException, limit: int = MESSAGE_LIMIT) -> str:
    """str(exc) capped, or "" when str() itself fails."""
    try:
        text = str(exc)
        if not isinstance(text, str):
            return ""
        return clip(str.__str__(text), limit)
    except BaseException:  # noqa: B036
        return ""


def safe_text(value: object, limit: int) -> str:
    """A str (or str subclass) as a plain str capped at limit, else its safe repr."""
    # type() rather than isinstance(): isinstance may consult a hostile __class__.
    if issubclass(type(value), str):
        return clip(str.__str__(value), limit)
    return safe_repr(value, limit)
