"""The worker's side of skynet.values: judge what a child said a value was.

A child describes what score() returned (and REWARD_SPEC) as a node tree; the worker turns
the tree into stand-in objects with the same types as far as the contract's rules can
tell (built-ins as themselves, any other type as a class of the same qualified name with
the same base and the child's repr) and applies the same rules the docs state
(skynet.returns, skynet.rewardspec). Nothing the child says about its own verdict, the
feedback's length or the call's duration is ever read: a metric that writes its own frames
can only describe a return value, which it could have returned anyway.
"""

from __future__ import annotations

import math
import numbers

from contract import shapes
from skynet import report
from skynet.safe import REPR_LIMIT, clip
from skynet.values import Budget
from skynet.wire import ProtocolError

_NUMBERS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class _Stand:
    """Base of stand-ins for objects of user classes; repr is the child's."""

    _skynet_repr = ""

    def __repr__(self) -> str:
        return self._skynet_repr


def _float(value: object) -> float:
    if isinstance(value, str):
        return _NUMBERS.get(value, math.nan)
    if type(value) in (int, float):
        return float(value)  # type: ignore[arg-type]
    return math.nan


class _Classes:
    """Stand-in classes of one decode, one per (name, base)."""

    def __init__(self) -> None:
        self.made: dict[tuple[str, type], type] = {}

    def get(self, name: str, base: type) -> type:
        key = (name, base)
        cls = self.made.get(key)
        if cls is None:
            module, _, qualname = name.rpartition(".")
            cls = type("Stand", (base,), {"__slots__": ()} if base is not _Stand else {})
            cls.__qualname__ = qualname[:200] or "object"
            cls.__module__ = module[:200] or "builtins"
            self.made[key] = cls
        return cls


def _real_class(classes: _Classes, name: str, failure: str) -> type:
    """A numbers.Real whose float() fails as the child's did (OverflowError or not)."""
    cls = classes.get(name + "\0" + failure, _Stand)
    module, _, qualname = name.rpartition(".")
    cls.__qualname__, cls.__module__ = qualname or "object", module or "builtins"
    error = OverflowError if failure == "overflow" else ValueError

    def fail(self) -> float:
        raise error(failure)

    cls.__float__ = fail  # type: ignore[attr-defined]
    numbers.Real.register(cls)
    return cls


def _decode(node: object, classes: _Classes, depth: int = 0) -> object:
    if not isinstance(node, dict) or depth > 64:
        return classes.get("object", _Stand)()
    kind = node.get("t")
    name = node.get("type")
    typed = isinstance(name, str)
    if kind == "none":
        return None
    if kind == "bool":
        return node.get("v") is True
    if kind == "int":
        value = node.get("v")
        number = int(value, 16) if isinstance(value, str) else value
        number = number if type(number) is int else 0
        return classes.get(name, int)(number) if typed else number
    if kind == "float":
        number = _float(node.get("v"))
        return classes.get(name, float)(number) if typed else number
    if kind == "str":
        text = node.get("v") if isinstance(node.get("v"), str) else ""
        return classes.get(name, str)(text) if typed else text
    if kind == "bytes":
        return b""
    if kind in ("list", "tuple", "set", "frozenset"):
        items = [_decode(item, classes, depth + 1) for item in node.get("items") or []]
        base = {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[kind]
        if base in (set, frozenset):
            items = [item for item in items if _hashable(item)]
        return classes.get(name, base)(items) if typed else base(items)
    if kind == "dict":
        pairs = {}
        for pair in node.get("items") or []:
            if isinstance(pair, list) and len(pair) == 2:
                key = _decode(pair[0], classes, depth + 1)
                if _hashable(key):
                    pairs[key] = _decode(pair[1], classes, depth + 1)
        return classes.get(name, dict)(pairs) if typed else pairs
    text = clip(node.get("r"), REPR_LIMIT) if isinstance(node.get("r"), str) else ""
    qualified = name if typed else "object"
    if kind == "real":
        found = node.get("f")
        if found in ("overflow", "error"):
            stand = _real_class(classes, qualified, found)()
        else:
            stand = classes.get(qualified, float)(_float(found))
            return stand
    else:
        stand = classes.get(qualified, _Stand)()
    stand._skynet_repr = text
    return stand


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def decode(node: object) -> object:
    """Stand-in objects for a node tree, on which the contract's rules give the verdict
    they would give on the real value (as far as its node could describe it)."""
    return _decode(node, _Classes())


_SCALARS = (str, int, float, bool, type(None))


def _children(node: dict) -> list:
    """The nodes right below `node`; ProtocolError for what skynet.values never makes
    (items that are no list, a dict item that is no pair, any other value that is no
    datum)."""
    below: list = []
    for key, value in node.items():
        if key == "items" and isinstance(value, list):
            if node["t"] != "dict":
                below.extend(value)
                continue
            for pair in value:
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise ProtocolError("bad_frame_shape")
                below.extend(pair)
        elif key == "attrs" and isinstance(value, dict):
            below.extend(value.values())
        elif key in ("items", "attrs") or not isinstance(value, _SCALARS):
            raise ProtocolError("bad_frame_shape")
    return below


def fits(node: object, budget: Budget) -> bool:
    """Whether `node` is a tree skynet.values could have made within `budget`'s nodes and
    depth, as a child makes run()'s output: one past them is a value the child would have
    refused to send. Raises ProtocolError for what is no node tree at all. Walked level by
    level and never further than the budget allows."""
    left, level, depth = budget.nodes, [node], 0
    while level:
        left -= len(level)
        if left < 0 or depth > budget.depth:
            return False
        below: list = []
        for current in level:
            if not isinstance(current, dict) or not isinstance(current.get("t"), str):
                raise ProtocolError("bad_frame_shape")
            below.extend(_children(current))
            if len(below) > left:
                return False
        level, depth = below, depth + 1
    return True


def return_report(node: object, child_repr: object) -> dict:
    """The return_value report of a case (skynet.report), from the child's description of
    the value: the verdict on its stand-ins, and the repr the child made of the real one.
    A value that breaks the contract also gets its shape and the return line that would
    keep it (contract.shapes) among its params."""
    cut = _feedback_length(node) if isinstance(node, dict) else 0
    shown = child_repr if isinstance(child_repr, str) else "<object>"
    found = report.return_report(decode(node), shown=shown, feedback_length=cut)
    if found["problem"] is not None:
        found["params"] = {
            **found["params"],
            "shape": shapes.describe(node),
            "fix": shapes.fix_line(node, found["problem"]),
        }
    return found


def _feedback_length(node: dict) -> int:
    """The "n" of the side info's "feedback" string node, when the child cut it."""
    try:
        side_info = node["items"][1]
        for key, value in side_info["items"]:
            if key.get("t") == "str" and key.get("v") == "feedback" and value.get("t") == "str":
                size = value.get("n")
                return size if type(size) is int and size >= 0 else 0
    except (KeyError, IndexError, TypeError, AttributeError, ValueError):
        pass
    return 0
