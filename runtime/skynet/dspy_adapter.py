"""Use a skynet score() as a DSPy metric, in the shape DSPy's GEPA optimizer expects.

    from skynet.dspy_adapter import as_dspy_metric
    from metric import score

    metric = as_dspy_metric(score, input_fields=["question"], output_fields=["answer"])
    optimizer = dspy.GEPA(metric=metric, reflection_lm=...)

What GEPA expects (dspy.teleprompt.GEPA, its `GEPAFeedbackMetric` protocol): a
callable ``metric(gold, pred, trace=None, pred_name=None, pred_trace=None)``
(recent releases may also pass ``program_trace`` to a metric that declares it)
returning either a float, or a ``dspy.Prediction`` (GEPA's
``ScoreWithFeedback``) / dict with "score" (float) and "feedback" (str). GEPA
reads the result both ways: ``hasattr(o, "feedback")`` then ``o["feedback"]``
and ``o.score``. ``gold`` is a ``dspy.Example``, ``pred`` a ``dspy.Prediction``;
both allow attribute and item access, and plain mappings or attribute objects
work here too.

The metric built here calls ``score(input, output, expected)`` (or
``score(input, output)`` for a two-parameter score) with:

- input: {name: gold's value} for each input field (a missing one is a KeyError);
- output: pred's value of the single output field, or {name: value} when there
  are several (a field pred lacks is None);
- expected: {name: gold's value} for the output fields gold has, None when it
  has none of them.

What score returns is validated by the same rules as the contract check
(skynet.returns); a return value that breaks them raises MetricReturnError
naming the problem code, since a silently wrong score would steer the
optimizer. The result is ``dspy.Prediction(score=..., feedback=...)`` when
dspy can be imported, else a ScoreWithFeedback of this module (attributes and
item access alike). Standard library only: dspy is imported lazily, if at all.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping

from skynet import signature
from skynet.returns import check_return

__all__ = ["MetricReturnError", "ScoreWithFeedback", "as_dspy_metric"]

_MISSING = object()


class MetricReturnError(ValueError):
    """score() returned something that is not a valid (score, side_info) pair."""

    def __init__(self, code: str, params: dict | None = None) -> None:
        super().__init__(code, params or {})
        self.code = code
        self.params = params or {}

    def __str__(self) -> str:
        return f"{self.code}: {self.params}" if self.params else self.code


class ScoreWithFeedback:
    """The result without dspy: `.score` / `.feedback`, also as ["score"] / ["feedback"]."""

    __slots__ = ("feedback", "score")

    def __init__(self, score: float, feedback: str) -> None:
        self.score = score
        self.feedback = feedback

    def __getitem__(self, key: str) -> object:
        if key not in self.__slots__:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value: object) -> None:
        if key not in self.__slots__:
            raise KeyError(key)
        setattr(self, key, value)

    def get(self, key: str, default: object = None) -> object:
        return getattr(self, key) if key in self.__slots__ else default

    def keys(self) -> list[str]:
        return ["score", "feedback"]

    def __repr__(self) -> str:
        return f"ScoreWithFeedback(score={self.score!r}, feedback={self.feedback!r})"


_prediction: list = []  # [dspy.Prediction or None], filled on first use


def _prediction_class() -> type | None:
    if not _prediction:
        try:
            import dspy  # optional, and slow to import: only here

            _prediction.append(dspy.Prediction)
        except Exception:  # not installed, or broken: the plain result does the same job
            _prediction.append(None)
    return _prediction[0]


def _get(obj: object, name: str, default: object = _MISSING) -> object:
    """obj[name] for a mapping (or anything with `in` and [] such as dspy.Example),
    else getattr(obj, name); `default` when it has neither."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    try:
        if name in obj:  # type: ignore[operator]
            return obj[name]  # type: ignore[index]
    except Exception:  # no __contains__ or __getitem__: an attribute object
        pass
    try:
        return getattr(obj, name)
    except AttributeError:
        return default


def _names(fields: str | Iterable[str], what: str) -> tuple[str, ...]:
    names = (fields,) if isinstance(fields, str) else tuple(fields)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"{what} must be one or more field names")
    return names


def _call_args(score: Callable) -> int:
    try:
        shape = signature.shape_of(inspect.signature(score))
    except (TypeError, ValueError):  # a builtin without a signature: give it all three
        return 3
    problems, call_args = signature.check(shape)
    if problems:
        raise TypeError(f"score() cannot be called: {problems[0]['params']['reason']}")
    return call_args


def as_dspy_metric(
    score: Callable,
    input_fields: str | Iterable[str],
    output_fields: str | Iterable[str],
) -> Callable:
    """A DSPy / GEPA metric that scores a prediction with skynet's `score`."""
    inputs = _names(input_fields, "input_fields")
    outputs = _names(output_fields, "output_fields")
    call_args = _call_args(score)

    def metric(
        gold: object,
        pred: object,
        trace: object = None,
        pred_name: str | None = None,
        pred_trace: object = None,
    ) -> object:
        input = {}
        for name in inputs:
            value = _get(gold, name)
            if value is _MISSING:
                raise KeyError(f"gold has no input field {name!r}")
            input[name] = value
        if len(outputs) == 1:
            output = _get(pred, outputs[0], None)
        else:
            output = {name: _get(pred, name, None) for name in outputs}
        found = {name: _get(gold, name) for name in outputs}
        expected = {k: v for k, v in found.items() if v is not _MISSING} or None
        value = score(*(input, output, expected)[:call_args])
        verdict = check_return(value)
        if not verdict.valid:
            raise MetricReturnError(verdict.problem or "", verdict.params)
        assert verdict.score is not None and verdict.feedback is not None
        prediction = _prediction_class()
        if prediction is not None:
            return prediction(score=verdict.score, feedback=verdict.feedback)
        return ScoreWithFeedback(verdict.score, verdict.feedback)

    metric.__name__ = metric.__qualname__ = getattr(score, "__name__", "metric")
    return metric
