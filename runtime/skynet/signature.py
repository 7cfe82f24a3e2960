"""Decide whether score() can be called, and with 2 or 3 positional arguments.

The rules work on a neutral Shape so the child (inspect.signature of the real
function) and the parent's static check (the AST of `def score`) agree.
"""

from __future__ import annotations

from collections import namedtuple

REASONS = ("too_few_parameters", "too_many_required", "required_keyword_only", "not_inspectable")


# Named tuples, not dataclasses: every sandbox imports this, and dataclasses imports inspect.
Param = namedtuple("Param", "name required")


class Shape(
    namedtuple("Shape", "positional varargs keyword_only varkw", defaults=(None, (), None))
):
    """positional: tuple[Param, ...]; varargs: str | None; keyword_only: tuple[Param,
    ...]; varkw: str | None."""

    __slots__ = ()

    def names(self) -> list[str]:
        """Parameter names as written, with * and ** marking the catch-alls."""
        names = [p.name for p in self.positional]
        if self.varargs is not None:
            names.append(f"*{self.varargs}")
        names += [p.name for p in self.keyword_only]
        if self.varkw is not None:
            names.append(f"**{self.varkw}")
        return names


_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08


def shape_of_function(func: object) -> Shape | None:
    """Shape of a plain Python function, read from its code object (no inspect import);
    None for anything else (a class, a partial, a builtin, a function with an explicit
    __signature__ or a functools.wraps __wrapped__), for which inspect decides."""
    import types

    if type(func) is not types.FunctionType:
        return None
    try:
        extra = func.__dict__
        if "__signature__" in extra or "__wrapped__" in extra:
            return None
        code = func.__code__
        defaults = func.__defaults__ or ()
        kwdefaults = func.__kwdefaults__ or {}
        names = code.co_varnames
        count, kwcount = code.co_argcount, code.co_kwonlyargcount
    except BaseException:  # noqa: B036 - a function whose attributes were tampered with
        return None
    first_default = count - len(defaults)
    positional = tuple(Param(names[i], i < first_default) for i in range(count))
    keyword_only = tuple(
        Param(names[i], names[i] not in kwdefaults) for i in range(count, count + kwcount)
    )
    index = count + kwcount
    varargs = varkw = None
    if code.co_flags & _CO_VARARGS:
        varargs, index = names[index], index + 1
    if code.co_flags & _CO_VARKEYWORDS:
        varkw = names[index]
    return Shape(positional, varargs, keyword_only, varkw)


def shape_of(signature: object) -> Shape:
    """Shape of an inspect.Signature."""
    import inspect

    assert isinstance(signature, inspect.Signature)
    positional, keyword_only = [], []
    varargs = varkw = None
    for p in signature.parameters.values():
        required = p.default is inspect.Parameter.empty
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional.append(Param(p.name, required))
        elif p.kind is p.VAR_POSITIONAL:
            varargs = p.name
        elif p.kind is p.KEYWORD_ONLY:
            keyword_only.append(Param(p.name, required))
        else:
            varkw = p.name
    return Shape(tuple(positional), varargs, tuple(keyword_only), varkw)


def check(shape: Shape) -> tuple[list[dict], int]:
    """(problems, call_args). Each problem is bad_signature with a reason sub-code.

    call_args is 3 when a third positional can be passed (a third parameter or
    *args), else 2. Problems are listed in the order the reasons are declared.
    """
    problems = []
    names = shape.names()
    if len(shape.positional) < 2 and shape.varargs is None:
        problems.append(_bad("too_few_parameters", names, [p.name for p in shape.positional]))
    extra_required = [p.name for p in shape.positional[3:] if p.required]
    if extra_required:
        problems.append(_bad("too_many_required", names, extra_required))
    keyword_required = [p.name for p in shape.keyword_only if p.required]
    if keyword_required:
        problems.append(_bad("required_keyword_only", names, keyword_required))
    call_args = 3 if len(shape.positional) >= 3 or shape.varargs is not None else 2
    return problems, call_args


def not_inspectable() -> dict:
    return _bad("not_inspectable", [], [])


def _bad(reason: str, parameters: list[str], names: list[str]) -> dict:
    return {
        "code": "bad_signature",
        "params": {"reason": reason, "parameters": parameters, "names": names},
    }


def shape_to_data(shape: Shape) -> dict:
    """The Shape as JSON data, to cross from the child to the worker."""
    return {
        "positional": [[p.name, p.required] for p in shape.positional],
        "varargs": shape.varargs,
        "keyword_only": [[p.name, p.required] for p in shape.keyword_only],
        "varkw": shape.varkw,
    }


def shape_from_data(data: object) -> Shape:
    """The Shape a child described; ValueError unless it has shape_to_data's form."""

    def params(items: object) -> tuple[Param, ...]:
        if not isinstance(items, list) or len(items) > 1000:
            raise ValueError("bad_shape")
        out = []
        for item in items:
            if not (
                isinstance(item, list)
                and len(item) == 2
                and isinstance(item[0], str)
                and isinstance(item[1], bool)
            ):
                raise ValueError("bad_shape")
            out.append(Param(item[0][:200], item[1]))
        return tuple(out)

    def name(value: object) -> str | None:
        if value is not None and not isinstance(value, str):
            raise ValueError("bad_shape")
        return None if value is None else value[:200]

    if not isinstance(data, dict):
        raise ValueError("bad_shape")
    return Shape(
        params(data.get("positional")),
        name(data.get("varargs")),
        params(data.get("keyword_only")),
        name(data.get("varkw")),
    )
