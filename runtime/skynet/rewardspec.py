"""Validate a REWARD_SPEC and turn it into normalised weights and references.

Shape::

    REWARD_SPEC = {
        "weights": {"accuracy": 0.7, "speed": 0.2, "cost": 0.1},
        "speed": {"reference": 2000},      # milliseconds
        "cost": {"reference": 0.01},       # US dollars
        "accuracy": {"reference": 0.05},   # optional: accuracy is then an error
    }

Used by the child (on the real object), by reward() and by the parent's static
check (on an ast.literal_eval'd literal), so the rules live in one place.
Every problem found is reported, each as {"code", "params"} with params["path"]
naming where, e.g. "weights.speed". Bools are refused as numbers here: in a
configuration True is a typo, not a weight.
"""

from __future__ import annotations

import math
import numbers

from skynet.safe import NAME_LIMIT, safe_repr, type_name

PARTS = ("accuracy", "speed", "cost")
REQUIRED_REFERENCES = ("speed", "cost")
MAX_PROBLEMS = 50

CODES = (
    "spec_not_dict",
    "weights_missing",
    "section_not_dict",
    "weight_missing",
    "weight_unknown",
    "weight_not_number",
    "weight_not_finite",
    "weight_negative",
    "weights_all_zero",
    "reference_missing",
    "reference_not_number",
    "reference_not_finite",
    "reference_not_positive",
)


class Spec:
    """A valid spec: weights scaled to sum 1, references as floats (a plain class: every
    sandbox imports this module, and dataclasses imports inspect)."""

    __slots__ = ("accuracy_reference", "cost_reference", "speed_reference", "weights")

    def __init__(
        self,
        weights: dict[str, float],
        speed_reference: float,
        cost_reference: float,
        accuracy_reference: float | None,
    ) -> None:
        self.weights = weights
        self.speed_reference = speed_reference
        self.cost_reference = cost_reference
        self.accuracy_reference = accuracy_reference


def _problem(code: str, path: str, **params: object) -> dict:
    return {"code": code, "params": {"path": path, **params}}


def _key_label(key: object) -> str:
    if type(key) is str:
        return key[:NAME_LIMIT]
    return safe_repr(key, NAME_LIMIT)


def _number(value: object, path: str, prefix: str, problems: list[dict]) -> float | None:
    """A finite real (not bool) as float, else append a `prefix`_* problem and return None."""
    kind = type(value)
    if kind is bool or not issubclass(kind, numbers.Real):
        problems.append(_problem(f"{prefix}_not_number", path, type=type_name(value)))
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:
        number = math.inf
    except Exception:  # validate() catches the rest
        problems.append(_problem(f"{prefix}_not_number", path, type=type_name(value)))
        return None
    if not math.isfinite(number):
        problems.append(_problem(f"{prefix}_not_finite", path, value=repr(number)))
        return None
    return number


def _section(spec: dict, name: str, problems: list[dict]) -> dict | None:
    section = spec.get(name)
    if section is None and name not in spec:
        return None
    if not issubclass(type(section), dict):
        problems.append(_problem("section_not_dict", name, type=type_name(section)))
        return None
    return section  # type: ignore[return-value]


def _weights(spec: dict, problems: list[dict]) -> dict[str, float]:
    if "weights" not in spec:
        problems.append(_problem("weights_missing", "weights"))
        return {}
    section = _section(spec, "weights", problems)
    if section is None:
        return {}
    weights: dict[str, float] = {}
    for part in PARTS:
        path = f"weights.{part}"
        if part not in section:
            problems.append(_problem("weight_missing", path))
            continue
        number = _number(section[part], path, "weight", problems)
        if number is None:
            continue
        if number < 0:
            problems.append(_problem("weight_negative", path, value=number))
            continue
        weights[part] = number
    for key in section:
        if key not in PARTS:
            problems.append(_problem("weight_unknown", f"weights.{_key_label(key)}"))
    if len(weights) == len(PARTS) and sum(weights.values()) == 0:
        problems.append(_problem("weights_all_zero", "weights"))
    return weights


def _reference(spec: dict, part: str, required: bool, problems: list[dict]) -> float | None:
    path = f"{part}.reference"
    section = _section(spec, part, problems)
    if section is None:
        if required and part not in spec:
            problems.append(_problem("reference_missing", path))
        return None
    if "reference" not in section:
        if required:
            problems.append(_problem("reference_missing", path))
        return None
    number = _number(section["reference"], path, "reference", problems)
    if number is not None and number <= 0:
        problems.append(_problem("reference_not_positive", path, value=number))
        return None
    return number


def validate(spec: object) -> list[dict]:
    """Every problem with `spec` (at most MAX_PROBLEMS), [] when it is valid; never raises."""
    try:
        return _validate(spec)[0]
    except BaseException:  # noqa: B036 - metric objects in the spec may raise anything
        return [_problem("spec_not_dict", "", type=type_name(spec))]


def _validate(spec: object) -> tuple[list[dict], Spec | None]:
    if not issubclass(type(spec), dict):
        return [_problem("spec_not_dict", "", type=type_name(spec))], None
    assert isinstance(spec, dict)
    problems: list[dict] = []
    weights = _weights(spec, problems)
    references = {
        part: _reference(spec, part, part in REQUIRED_REFERENCES, problems) for part in PARTS
    }
    if problems:
        return problems[:MAX_PROBLEMS], None
    total = sum(weights.values())
    return [], Spec(
        weights={part: weights[part] / total for part in PARTS},
        speed_reference=references["speed"],  # type: ignore[arg-type]
        cost_reference=references["cost"],  # type: ignore[arg-type]
        accuracy_reference=references["accuracy"],
    )


def parse(spec: object) -> Spec:
    """The normalised Spec; raise ValueError naming the first problem's code and path."""
    try:
        problems, parsed = _validate(spec)
    except Exception:
        problems, parsed = [_problem("spec_not_dict", "")], None
    if parsed is None:
        first = problems[0]
        raise ValueError(f"{first['code']}: {first['params']['path']}".rstrip(": "))
    return parsed
