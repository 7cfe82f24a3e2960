"""What a score() that broke the contract returned, named, and the return that keeps it.

A metric brought from another framework returns that framework's shape: a bare number
(DSPy's classic metrics), a `dspy.Prediction(score=..., feedback=...)` (DSPy GEPA), gepa's
`EvaluationResult(score, feedback, objective_scores)`, a `{"score": ..., "feedback": ...}`
dict. The contract stays as the docs state it; what this adds is the words: which shape
came back (`describe`, data for the reader's language) and the corrected `return` line
built from the user's own values (`fix_line`, Python, the same in every language).

Both read the node tree the child described the value as (skynet.values), never the value
itself: nothing here trusts more than that tree, and a hostile tree yields a generic shape.
"""

from __future__ import annotations

import json
import math

# Values are shown clipped: the line must stay one readable line.
VALUE_LIMIT = 60
TEXT_LIMIT = 80
KEYS_LIMIT = 8

_GEPA_RESULT = "EvaluationResult"
_DSPY_CLASSES = ("Prediction", "ScoreWithFeedback", "Example")


def _kind(node: object) -> str | None:
    return node.get("t") if isinstance(node, dict) else None


def _type(node: dict) -> str:
    name = node.get("type")
    return name if isinstance(name, str) else ""


def _items(node: dict) -> list:
    items = node.get("items")
    return items if isinstance(items, list) else []


def _size(node: dict) -> int:
    size = node.get("n")
    return size if type(size) is int and size >= 0 else len(_items(node))


def _pairs(node: dict) -> list[tuple[object, object]]:
    """The (key node, value node) pairs of a dict node."""
    return [
        (pair[0], pair[1]) for pair in _items(node) if isinstance(pair, list) and len(pair) == 2
    ]


def _key(node: object) -> str | None:
    return node.get("v") if _kind(node) == "str" and isinstance(node.get("v"), str) else None


def _entries(node: dict) -> dict[str, object]:
    """A dict node's string keys and their value nodes, in order."""
    out: dict[str, object] = {}
    for key, value in _pairs(node):
        name = _key(key)
        if name is not None and name not in out:
            out[name] = value
    return out


def _store(node: dict) -> dict | None:
    """The fields of a dspy.Prediction's node: its `_store` attribute's dict node."""
    attrs = node.get("attrs")
    store = attrs.get("_store") if isinstance(attrs, dict) else None
    return store if _kind(store) == "dict" else None


def _short_class(node: dict) -> str:
    return _type(node).rpartition(".")[2]


def _is_dspy(node: dict) -> bool:
    name = _type(node)
    return name.startswith("dspy.") and _short_class(node) in _DSPY_CLASSES


def _is_gepa_result(node: dict) -> bool:
    return (
        _kind(node) == "tuple"
        and _type(node).startswith("gepa.")
        and _short_class(node) == _GEPA_RESULT
    )


def _number(node: object) -> float | None:
    """The finite number a node holds (an int, a float, a numpy scalar, a bool), else None."""
    kind = _kind(node)
    assert kind is None or isinstance(node, dict)
    if kind == "bool":
        return 1.0 if node.get("v") is True else 0.0  # type: ignore[union-attr]
    if kind == "int":
        value = node.get("v")  # type: ignore[union-attr]
        if isinstance(value, str):
            try:
                value = int(value, 16)
            except ValueError:
                return None
        return float(value) if type(value) is int and abs(value) < 2**63 else None
    if kind in ("float", "real"):
        value = node.get("v" if kind == "float" else "f")  # type: ignore[union-attr]
        if type(value) in (int, float) and math.isfinite(value):
            return float(value)
    return None


def _text(node: object, limit: int) -> str | None:
    if _kind(node) != "str":
        return None
    value = node.get("v")  # type: ignore[union-attr]
    if not isinstance(value, str):
        return None
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _value_text(node: object) -> str:
    """A short Python-looking rendering of a scalar node, for the shape's words."""
    kind = _kind(node)
    number = _number(node)
    if kind == "bool":
        return "True" if number else "False"
    if kind == "int" and number is not None:
        return str(int(number))
    if number is not None:
        return repr(number)
    if kind in ("float", "real"):
        value = node.get("v" if kind == "float" else "f")  # type: ignore[union-attr]
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(value, "?")  # type: ignore[arg-type]
    text = _text(node, VALUE_LIMIT)
    if text is not None:
        return json.dumps(text, ensure_ascii=False)
    return ""


def _keys(names: list[str]) -> list[str]:
    return [name[:VALUE_LIMIT] for name in names[:KEYS_LIMIT]]


def describe(node: object) -> dict:
    """The shape of a returned value, as data: {"kind", ...}. Kinds: number, bool, string,
    none, dict, dspy_prediction, gepa_result, tuple, list, object."""
    kind = _kind(node)
    if not isinstance(node, dict) or kind is None:
        return {"kind": "object", "type": "object"}
    if kind == "none":
        return {"kind": "none"}
    if kind == "bool":
        return {"kind": "bool", "value": _value_text(node)}
    if kind in ("int", "float", "real"):
        name = _short_class(node) or {"int": "int", "float": "float"}.get(kind, "number")
        return {"kind": "number", "type": name, "value": _value_text(node)}
    if kind == "str":
        return {"kind": "string", "value": _value_text(node)}
    if _is_gepa_result(node):
        return {"kind": "gepa_result", "count": _size(node)}
    if kind in ("tuple", "list"):
        return {"kind": kind, "count": _size(node)}
    if kind == "dict":
        return {"kind": "dict", "keys": _keys(list(_entries(node)))}
    if kind == "object" and _is_dspy(node):
        store = _store(node)
        keys = list(_entries(store)) if store is not None else []
        return {"kind": "dspy_prediction", "class": _short_class(node), "keys": _keys(keys)}
    return {"kind": "object", "type": _type(node)[:200] or "object"}


# -- the corrected return line -----------------------------------------------------------


def _literal_number(node: object) -> str | None:
    """The score as a Python literal (a bool becomes 1.0 or 0.0), or None."""
    number = _number(node)
    if number is None:
        # A score given as text that reads as a number ("0.8").
        text = _text(node, VALUE_LIMIT)
        try:
            number = float(text) if text is not None else None
        except ValueError:
            return None
        if number is None or not math.isfinite(number):
            return None
    if _kind(node) == "int":
        return str(int(number))
    return repr(float(number))


def _literal_text(node: object) -> str | None:
    text = _text(node, TEXT_LIMIT)
    return None if text is None else json.dumps(text, ensure_ascii=False)


def _literal_scores(node: object) -> str | None:
    """Named scores as a dict literal of the entries that are numbers (or read as one)."""
    if _kind(node) != "dict":
        return None
    parts = []
    for name, value in list(_entries(node).items())[:KEYS_LIMIT]:  # type: ignore[arg-type]
        number = _literal_number(value)
        if number is not None:
            parts.append(f"{json.dumps(name[:VALUE_LIMIT], ensure_ascii=False)}: {number}")
    return "{" + ", ".join(parts) + "}" if parts else None


def _literal_predictor_feedback(node: object) -> str | None:
    """ "predictor_feedback" as a dict literal of its entries that keep the contract (a
    string name and a text with more than whitespace), or None."""
    if _kind(node) != "dict":
        return None
    parts = []
    for name, value in list(_entries(node).items())[:KEYS_LIMIT]:  # type: ignore[arg-type]
        text = _text(value, TEXT_LIMIT)
        if text is not None and text.strip():
            key = json.dumps(name[:VALUE_LIMIT], ensure_ascii=False)
            parts.append(f"{key}: {json.dumps(text, ensure_ascii=False)}")
    return "{" + ", ".join(parts) + "}" if parts else None


def _line(
    score: str | None,
    feedback: str | None,
    scores: str | None = None,
    predictor_feedback: str | None = None,
) -> str:
    side = '{"feedback": ' + (feedback or '"..."')
    if scores:
        side += ', "scores": ' + scores
    if predictor_feedback:
        side += ', "predictor_feedback": ' + predictor_feedback
    return f"return {score or '0.0'}, {side}}}"


def _from_fields(fields: dict[str, object]) -> str:
    """From a mapping of a framework's field names: score, feedback, and named scores."""
    scores = fields.get("scores")
    if scores is None:
        scores = fields.get("objective_scores")
    return _line(
        _literal_number(fields.get("score")),
        _literal_text(fields.get("feedback")),
        _literal_scores(scores),
    )


def fix_line(node: object, problem: str | None) -> str | None:
    """The `return` line that would keep the contract, built from the values score
    returned; None when the value holds nothing of its own to build it from."""
    if not isinstance(node, dict) or problem is None:
        return None
    kind = _kind(node)
    if kind in ("int", "float", "real", "bool"):
        return _line(_literal_number(node), None)
    if kind == "str" and _literal_number(node) is not None:
        return _line(_literal_number(node), None)
    if kind == "dict":
        return _from_fields(_entries(node))
    if kind == "object" and _is_dspy(node):
        store = _store(node)
        return _from_fields(_entries(store)) if store is not None else _line(None, None)
    if kind in ("tuple", "list"):
        items = _items(node)
        if _is_gepa_result(node) or len(items) != 2:
            fields = dict(zip(("score", "feedback", "objective_scores"), items, strict=False))
            if len(items) > 3 or not items:
                return _line(_literal_number(items[0]) if items else None, None)
            return _from_fields(fields)
        return _fix_pair(items[0], items[1])
    return _line(None, None)


def _fix_pair(score: object, side: object) -> str:
    """A pair whose score or side info breaks the contract."""
    number = _literal_number(score)
    if _kind(side) == "dict":
        fields = _entries(side)  # type: ignore[arg-type]
        feedback = fields.get("feedback")
        # A side info without a feedback string keeps no text of its own to offer.
        return _line(
            number,
            _literal_text(feedback),
            _literal_scores(fields.get("scores")),
            _literal_predictor_feedback(fields.get("predictor_feedback")),
        )
    return _line(number, _literal_text(side))
