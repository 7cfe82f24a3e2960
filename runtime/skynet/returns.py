"""Validate what score() returned, as a pure function of the returned object.

The contract: a tuple or list of exactly two items, (score, side_info), where
score is a finite real number (bool accepted) and side_info a dict whose
"feedback" is a str, whose optional "scores" maps names to finite reals, and whose
optional "predictor_feedback" maps a DSPy predictor's name (a str, as
program.named_predictors() names it) to that predictor's own feedback, a str with more
than whitespace. Every entry is validated; what is kept of them for a report is capped
there (skynet.report).

Checks use type(x) rather than isinstance(x): isinstance may consult a
metric-controlled __class__ attribute, type() cannot. Every step is guarded so
that arbitrary objects produce a problem code and never an exception; the
guards catch BaseException because a metric's __float__ or __eq__ may raise
anything, SystemExit included, and the child must still report.
"""

from __future__ import annotations

import math
import numbers

from skynet.safe import NAME_LIMIT, clip, safe_repr, type_name

PROBLEMS = (
    "not_a_pair",
    "score_not_number",
    "score_not_finite",
    "side_info_not_dict",
    "feedback_missing",
    "feedback_not_string",
    "scores_not_dict",
    "named_score_not_number",
    "named_score_not_finite",
    "predictor_feedback_not_dict",
    "predictor_name_not_string",
    "predictor_feedback_not_string",
    "predictor_feedback_empty",
)


class Verdict:
    """Outcome of validating one return value.

    `score` is float(score) when it is a finite real, else None; `scores` holds
    the named scores that are finite reals, in insertion order; `predictor_feedback`
    each predictor's own feedback ({name: text}, in insertion order) of a valid value.
    A plain class, not a dataclass: this module is imported by every sandbox, and
    dataclasses imports inspect.
    """

    __slots__ = (
        "bool_score",
        "feedback",
        "params",
        "predictor_feedback",
        "problem",
        "score",
        "scores",
    )

    def __init__(
        self,
        problem: str | None,
        params: dict | None = None,
        score: float | None = None,
        bool_score: bool = False,
        feedback: str | None = None,
        scores: dict[str, float] | None = None,
        predictor_feedback: dict[str, str] | None = None,
    ) -> None:
        self.problem = problem
        self.params = params or {}
        self.score = score
        self.bool_score = bool_score
        self.feedback = feedback
        self.scores = scores or {}
        self.predictor_feedback = predictor_feedback or {}

    @property
    def valid(self) -> bool:
        return self.problem is None

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Verdict) and self._fields() == other._fields()

    def __repr__(self) -> str:
        return f"Verdict(problem={self.problem!r}, score={self.score!r})"


_NOT_NUMBER = "not_number"
_NOT_FINITE = "not_finite"


def _as_finite_float(value: object) -> float | str:
    """float(value) for a finite real number, else _NOT_NUMBER or _NOT_FINITE."""
    try:
        if not issubclass(type(value), numbers.Real):
            return _NOT_NUMBER
        number = float(value)  # type: ignore[arg-type]
    except OverflowError:  # an int or Fraction beyond float range
        return _NOT_FINITE
    except BaseException:  # noqa: B036 - a Real subclass whose __float__ misbehaves
        return _NOT_NUMBER
    if type(number) is not float:
        return _NOT_NUMBER
    return number if math.isfinite(number) else _NOT_FINITE


def _name(key: object) -> str:
    if type(key) is str:
        return clip(key, NAME_LIMIT)
    if issubclass(type(key), str):
        return clip(str.__str__(key), NAME_LIMIT)
    return safe_repr(key, NAME_LIMIT)


def _pair(value: object) -> tuple[object, object] | None:
    kind = type(value)
    # The base-class methods bypass any __len__/__getitem__ overrides.
    if issubclass(kind, tuple):
        if tuple.__len__(value) != 2:  # type: ignore[arg-type]
            return None
        return tuple.__getitem__(value, 0), tuple.__getitem__(value, 1)  # type: ignore[arg-type]
    if issubclass(kind, list):
        if list.__len__(value) != 2:  # type: ignore[arg-type]
            return None
        return list.__getitem__(value, 0), list.__getitem__(value, 1)  # type: ignore[arg-type]
    return None


_MISSING = object()


def check_return(value: object) -> Verdict:
    """Validate a value returned by score(); never raises."""
    try:
        pair = _pair(value)
    except BaseException:  # noqa: B036
        pair = None
    if pair is None:
        return Verdict("not_a_pair")
    raw_score, side_info = pair

    number = _as_finite_float(raw_score)
    if number is _NOT_NUMBER:
        return Verdict("score_not_number", {"type": type_name(raw_score)})
    if number is _NOT_FINITE:
        return Verdict("score_not_finite")
    assert isinstance(number, float)
    bool_score = type(raw_score) is bool
    partial = {"score": number, "bool_score": bool_score}

    if not issubclass(type(side_info), dict):
        return Verdict("side_info_not_dict", {"type": type_name(side_info)}, **partial)
    try:
        feedback = dict.get(side_info, "feedback", _MISSING)  # type: ignore[arg-type]
    except BaseException:  # noqa: B036 - a key whose __eq__ raises on a hash collision
        feedback = _MISSING
    if feedback is _MISSING:
        return Verdict("feedback_missing", **partial)
    if not issubclass(type(feedback), str):
        return Verdict("feedback_not_string", {"type": type_name(feedback)}, **partial)
    text = str.__str__(feedback)  # type: ignore[arg-type]
    partial["feedback"] = text

    try:
        scores = dict.get(side_info, "scores", _MISSING)  # type: ignore[arg-type]
    except BaseException:  # noqa: B036
        scores = _MISSING
    named: dict[str, float] = {}
    if scores is not _MISSING:
        if not issubclass(type(scores), dict):
            return Verdict("scores_not_dict", {"type": type_name(scores)}, **partial)
        first_problem: tuple[str, dict] | None = None
        for key, item in dict.items(scores):  # type: ignore[arg-type]
            value_or_code = _as_finite_float(item)
            if isinstance(value_or_code, float):
                named[_name(key)] = value_or_code
            elif first_problem is None:
                code = (
                    "named_score_not_number"
                    if value_or_code is _NOT_NUMBER
                    else "named_score_not_finite"
                )
                first_problem = (code, {"name": _name(key)})
        if first_problem is not None:
            return Verdict(first_problem[0], first_problem[1], scores=named, **partial)

    try:
        per_predictor = dict.get(side_info, "predictor_feedback", _MISSING)  # type: ignore[arg-type]
    except BaseException:  # noqa: B036
        per_predictor = _MISSING
    if per_predictor is _MISSING:
        return Verdict(None, scores=named, **partial)
    texts, problem = _predictor_feedback(per_predictor)
    if problem is not None:
        return Verdict(problem[0], problem[1], scores=named, **partial)
    return Verdict(None, scores=named, predictor_feedback=texts, **partial)


def _predictor_feedback(value: object) -> tuple[dict[str, str], tuple[str, dict] | None]:
    """({predictor name: its feedback}, None) for a valid "predictor_feedback", else
    ({}, (the first problem's code, its params)). Read through dict's and str's own
    methods, as the rest of the value is."""
    if not issubclass(type(value), dict):
        return {}, ("predictor_feedback_not_dict", {"type": type_name(value)})
    texts: dict[str, str] = {}
    for key, item in dict.items(value):  # type: ignore[arg-type]
        if not issubclass(type(key), str):
            return {}, ("predictor_name_not_string", {"name": safe_repr(key, NAME_LIMIT)})
        name = str.__str__(key)
        if not issubclass(type(item), str):
            shown = clip(name, NAME_LIMIT)
            return {}, ("predictor_feedback_not_string", {"name": shown, "type": type_name(item)})
        text = str.__str__(item)
        if not str.strip(text):
            return {}, ("predictor_feedback_empty", {"name": clip(name, NAME_LIMIT)})
        texts[name] = text
    return texts, None
