"""Python values as plain data, to cross from one process to another.

A child never judges what user code returned: it describes the value as a tree of JSON
nodes, and the worker applies the contract's rules to that (contract.values). The same
trees carry what the artifact's run() returned to the metric's own process, where
`decode()` rebuilds it (the run code and the metric never share an interpreter).

Nodes (one JSON object each; "type" is the qualified type name when it is not exactly
the built-in, "r" a capped repr where the value is no plain datum)::

    {"t": "none"} | {"t": "bool", "v": b} | {"t": "int", "v": n | "0x..."}
    {"t": "float", "v": x | "nan" | "inf" | "-inf"}
    {"t": "str", "v": s, "n": full length when cut}   {"t": "bytes", "v": base64, "n"}
    {"t": "list" | "tuple" | "set" | "frozenset", "items": [node...], "n"}
    {"t": "dict", "items": [[key node, value node]...], "n"}
    {"t": "real", "f": x | "nan" | "inf" | "-inf" | "overflow" | "error"}
    {"t": "object", "attrs": {name: node}}     (attrs only when asked for)
    {"t": "cut"}                                (past the depth or size budget)

Describing never runs code the value's class overrides where a built-in's own method
can be used instead (type() rather than isinstance(), str.__str__, dict.items...), and
every step is guarded: a hostile __repr__ or __float__ yields a node, not an exception.
"""

from __future__ import annotations

import binascii
import math
import numbers
import sys

from skynet.safe import NAME_LIMIT, safe_repr, type_name

REPR_LIMIT = 200
_SMALL_INT = 1 << 53
# Ints beyond this overflow a float anyway; their digits are not worth sending.
_INT_BITS = 1100


class Budget:
    """How much of a value to describe: nodes, characters, depth; cut strings at `string`."""

    def __init__(
        self,
        *,
        nodes: int,
        chars: int,
        depth: int = 24,
        string: int | None = None,
        items: int = 1000,
        attrs: bool = False,
    ) -> None:
        self.nodes = nodes
        self.chars = chars
        self.depth = depth
        self.string = string
        self.items = items
        self.attrs = attrs
        self.exhausted = False


def return_budget() -> Budget:
    """For score()'s return value: enough for any feedback, small enough for one frame.
    Objects' attributes too: a dspy.Prediction's fields are what names its shape."""
    return Budget(nodes=20_000, chars=1_000_000, string=65_536, attrs=True)


def output_budget() -> Budget:
    """For run()'s output: nothing is cut; a larger value fails the run instead."""
    return Budget(nodes=100_000, chars=2_000_000, items=100_000, attrs=True)


def _typed(node: dict, value: object, exact: type) -> dict:
    if type(value) is not exact:
        node["type"] = type_name(value)
    return node


def _float(number: float) -> float | str:
    if math.isnan(number):
        return "nan"
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    return number


def _int(number: int) -> int | str:
    if -_SMALL_INT < number < _SMALL_INT:
        return number
    if number.bit_length() > _INT_BITS:
        number = (1 << _INT_BITS) if number > 0 else -(1 << _INT_BITS)
    return hex(number)


def _text(value: str, budget: Budget) -> dict:
    limit = min(len(value), budget.chars)
    if budget.string is not None:
        limit = min(limit, budget.string)
    if limit < len(value) and budget.string is None:
        budget.exhausted = True
    budget.chars -= limit
    node: dict = {"t": "str", "v": value[:limit]}
    if limit < len(value):
        node["n"] = len(value)
    return node


def _real(value: object) -> dict:
    try:
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:
        return {"t": "real", "f": "overflow"}
    except BaseException:  # noqa: B036 - a Real whose __float__ misbehaves
        return {"t": "real", "f": "error"}
    if type(number) is not float:
        return {"t": "real", "f": "error"}
    return {"t": "real", "f": _float(number)}


def _items(iterator, size: int, budget: Budget, depth: int) -> tuple[list, int]:
    out = []
    for item in iterator:
        if len(out) >= budget.items:
            break
        out.append(_encode(item, budget, depth + 1))
    return out, size


def _attributes(value: object, budget: Budget, depth: int) -> dict:
    try:
        found = object.__getattribute__(value, "__dict__")
    except BaseException:  # noqa: B036 - no __dict__ (slots), or a hostile descriptor
        return {}
    if type(found) is not dict:
        return {}
    attrs = {}
    for name, item in list(dict.items(found))[: budget.items]:
        if type(name) is str:
            attrs[name[:NAME_LIMIT]] = _encode(item, budget, depth + 1)
    return attrs


def _encode(value: object, budget: Budget, depth: int) -> dict:
    budget.nodes -= 1
    if budget.nodes < 0 or depth > budget.depth:
        budget.exhausted = True
        return {"t": "cut"}
    kind = type(value)
    try:
        if value is None:
            return {"t": "none"}
        if kind is bool:
            return {"t": "bool", "v": value}
        if issubclass(kind, str):
            return _typed(_text(str.__str__(value), budget), value, str)  # type: ignore[arg-type]
        if issubclass(kind, int):
            return _typed({"t": "int", "v": _int(int.__index__(value))}, value, int)  # type: ignore[arg-type]
        if issubclass(kind, float):
            node = {"t": "float", "v": _float(float.__float__(value))}  # type: ignore[arg-type]
            return _typed(node, value, float)
        if issubclass(kind, bytes | bytearray):
            data = bytes(value[: budget.string or len(value)])  # type: ignore[index]
            budget.chars -= len(data)
            node = {"t": "bytes", "v": binascii.b2a_base64(data, newline=False).decode()}
            if len(data) < len(value):  # type: ignore[arg-type]
                node["n"] = len(value)  # type: ignore[arg-type]
            return _typed(node, value, bytes)
        for base, name in ((tuple, "tuple"), (list, "list")):
            if issubclass(kind, base):
                size = base.__len__(value)  # type: ignore[attr-defined]
                items, _ = _items(base.__iter__(value), size, budget, depth)  # type: ignore[attr-defined]
                return _typed(_sized({"t": name, "items": items}, size), value, base)
        for base, name in ((set, "set"), (frozenset, "frozenset")):
            if issubclass(kind, base):
                size = base.__len__(value)  # type: ignore[attr-defined]
                items, _ = _items(base.__iter__(value), size, budget, depth)  # type: ignore[attr-defined]
                return _typed(_sized({"t": name, "items": items}, size), value, base)
        if issubclass(kind, dict):
            size = dict.__len__(value)  # type: ignore[arg-type]
            pairs = []
            for key, item in dict.items(value):  # type: ignore[arg-type]
                if len(pairs) >= budget.items:
                    break
                pairs.append([_encode(key, budget, depth + 1), _encode(item, budget, depth + 1)])
            return _typed(_sized({"t": "dict", "items": pairs}, size), value, dict)
        if issubclass(kind, numbers.Real):
            node = _real(value)
        else:
            node = {"t": "object"}
            if budget.attrs:
                node["attrs"] = _attributes(value, budget, depth)
    except BaseException:  # noqa: B036 - a hostile container (a __len__ that raises...)
        node = {"t": "object"}
    node["type"] = type_name(value)
    node["r"] = safe_repr(value, REPR_LIMIT)
    return node


def _sized(node: dict, size: int) -> dict:
    if len(node["items"]) < size:
        node["n"] = size
    return node


def encode(value: object, budget: Budget) -> dict:
    """The node tree of `value` within `budget`; never raises (budget.exhausted tells
    whether anything was left out beyond the string cut the budget asks for)."""
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(max(limit, budget.depth * 4 + 100))
        return _encode(value, budget, 0)
    except BaseException:  # noqa: B036 - RecursionError and the like
        budget.exhausted = True
        return {"t": "cut"}
    finally:
        sys.setrecursionlimit(limit)


# -- the metric's side: rebuilding the run's output ----------------------------------


def _number(value: object) -> float:
    if isinstance(value, str):
        return float(value) if value in ("nan", "inf", "-inf") else math.nan
    return float(value)  # type: ignore[arg-type]


_classes: dict[str, type] = {}


def _class_of(name: str, text: str) -> type:
    """A stand-in class named like the run's own (module.Qualname), with its repr."""
    cls = _classes.get(name)
    if cls is None:
        module, _, qualname = name.rpartition(".")
        cls = type(qualname.rsplit(".", 1)[-1] or "object", (), {})
        cls.__qualname__ = qualname or "object"
        cls.__module__ = module or "builtins"
        cls.__repr__ = lambda self: object.__getattribute__(self, "_skynet_repr")  # type: ignore[method-assign]
        _classes[name] = cls
    return cls


def decode(node: object) -> object:
    """Rebuild a value from its node tree: built-in types as they were (a subclass becomes
    its built-in base), any other object as an instance of a stand-in class of the same
    name with the same attributes and repr. No code of the run's ever runs here."""
    if not isinstance(node, dict):
        return None
    kind = node.get("t")
    if kind == "bool":
        return bool(node.get("v"))
    if kind == "int":
        value = node.get("v")
        return int(value, 16) if isinstance(value, str) else int(value or 0)
    if kind == "float":
        return _number(node.get("v"))
    if kind == "real":
        found = node.get("f")
        return (
            _number(found)
            if not isinstance(found, str) or found in ("nan", "inf", "-inf")
            else math.nan
        )
    if kind == "str":
        return str(node.get("v") or "")
    if kind == "bytes":
        return binascii.a2b_base64(node.get("v") or "")
    items = node.get("items") or []
    if kind == "list":
        return [decode(item) for item in items]
    if kind == "tuple":
        return tuple(decode(item) for item in items)
    if kind in ("set", "frozenset"):
        values = []
        for item in items:
            value = decode(item)
            try:
                hash(value)
            except TypeError:
                continue
            values.append(value)
        return set(values) if kind == "set" else frozenset(values)
    if kind == "dict":
        out = {}
        for pair in items:
            if isinstance(pair, list) and len(pair) == 2:
                key = decode(pair[0])
                try:
                    out[key] = decode(pair[1])
                except TypeError:  # an unhashable stand-in key
                    continue
        return out
    if kind == "object":
        cls = _class_of(str(node.get("type") or "object"), str(node.get("r") or ""))
        instance = cls()
        object.__setattr__(instance, "_skynet_repr", str(node.get("r") or ""))
        for name, item in (node.get("attrs") or {}).items():
            if isinstance(name, str) and name != "_skynet_repr":
                object.__setattr__(instance, name, decode(item))
        return instance
    return None
