"""Use a skynet score() as a DSPy metric, in the shape DSPy's GEPA optimizer expects.

    import dspy
    from skynet.dspy_adapter import as_dspy_metric
    from metric import score

    dspy.configure(lm=dspy.LM("openai/gpt-4.1-mini"))   # also what llm() asks, see below
    metric = as_dspy_metric(score, input_fields=["question"], output_fields=["answer"])
    optimizer = dspy.GEPA(metric=metric, reflection_lm=..., track_stats=True)

What GEPA expects (dspy.teleprompt.GEPA, its `GEPAFeedbackMetric` protocol): a
callable ``metric(gold, pred, trace=None, pred_name=None, pred_trace=None)`` returning a
float or a ``dspy.Prediction`` with "score" and "feedback" (and, read by dspy 3.4,
"objective_scores"). A plain dict is not accepted. ``gold`` is a ``dspy.Example``,
``pred`` a ``dspy.Prediction``; plain mappings and attribute objects work here too.

The metric built here calls ``score(input, output, expected)`` (or
``score(input, output)`` for a two-parameter score) with:

- input: {name: gold's value} for each input field (a missing one is a KeyError);
- output: pred's value of the single output field, or {name: value} when there
  are several (a field pred lacks is None);
- expected: {name: gold's value} for the output fields gold has, None when it
  has none of them.

and returns ``dspy.Prediction(score=..., feedback=..., objective_scores=...)`` (a
ScoreWithFeedback of this module without dspy), where objective_scores are the named
"scores" of score's side info, and an empty feedback is None, so that dspy writes its
own ("This trajectory got a score of ...") rather than give the reflection model nothing.

Nothing fails in silence. dspy.Evaluate and dspy.GEPA catch every Exception a metric
raises and record `failure_score`, so a metric that broke the contract would steer the
run with zeros and one log line. Here a return value that breaks the contract raises
MetricReturnError, and llm() without a model raises MetricSetupError: both are
BaseExceptions on purpose, which dspy does not catch, and stop the run with the reason.

- **llm()**, outside the workbench, asks the model given as `lm=` (a dspy.LM or any
  callable(messages=[...]) -> [text]), else dspy's configured LM (dspy.configure(lm=...)),
  else ``dspy.LM(os.environ["SKYNET_METRIC_MODEL"])``. A failed call raises
  skynet.ModelError("model_error", message), as in the workbench.
- **observation()** holds what dspy measured: input_tokens and output_tokens of the
  program's calls, from dspy's usage tracking (dspy.configure(track_usage=True)). It
  cannot know a case's duration_ms, cost_usd or model_calls: they are None (reward()
  reads None as not measured), and the first observation() says so in a warning.
- **GEPA's second call**: GEPA calls the metric once to score an example and again,
  with pred_name and pred_trace, for the reflection's feedback. The verdict of the first
  call is kept for the same (example, prediction) and returned again, so a judge metric
  is neither paid for twice nor able to disagree with itself.
- **Feedback per predictor**: when score's side info has "predictor_feedback", a dict
  from a predictor's name (as ``program.named_predictors()`` names it, e.g. "classify"
  or "answer.predict") to that predictor's own feedback, the call with pred_name gets
  that predictor's text as its feedback, and the general "feedback" when it has none;
  every other call gets the general "feedback".

Standard library only: dspy is imported lazily, when there.
"""

from __future__ import annotations

import inspect
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping

from skynet import _state, signature
from skynet._model import ModelError
from skynet.returns import check_return

__all__ = ["MetricReturnError", "MetricSetupError", "ScoreWithFeedback", "as_dspy_metric"]

# Verdicts kept for GEPA's second, reflection-time call on the same example and prediction.
CACHE_SIZE = 4096
MODEL_VARIABLE = "SKYNET_METRIC_MODEL"
NOT_MEASURED = (
    "skynet.observation() outside the workbench: duration_ms, cost_usd and model_calls "
    "are not measured here (None); input_tokens and output_tokens are dspy's usage of the "
    "program's calls, when dspy.configure(track_usage=True)."
)

_MISSING = object()


class MetricReturnError(BaseException):
    """score() returned something that is not a valid (score, side_info) pair. A
    BaseException, so that dspy does not turn it into a silent failure_score."""

    def __init__(self, code: str, params: dict | None = None) -> None:
        super().__init__(code, params or {})
        self.code = code
        self.params = params or {}

    def __str__(self) -> str:
        return f"{self.code}: {self.params}" if self.params else self.code


class MetricSetupError(BaseException):
    """llm() has no model to ask here: pass lm=, configure dspy's LM, or set
    SKYNET_METRIC_MODEL. A BaseException, as MetricReturnError."""


class ScoreWithFeedback:
    """The result without dspy: `.score` / `.feedback` / `.objective_scores`, also as
    ["score"] / ["feedback"] / ["objective_scores"]."""

    __slots__ = ("feedback", "objective_scores", "score")

    def __init__(
        self, score: float, feedback: str | None, objective_scores: dict | None = None
    ) -> None:
        self.score = score
        self.feedback = feedback
        self.objective_scores = objective_scores

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
        return ["score", "feedback", "objective_scores"]

    def __repr__(self) -> str:
        return (
            f"ScoreWithFeedback(score={self.score!r}, feedback={self.feedback!r}, "
            f"objective_scores={self.objective_scores!r})"
        )


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


def _text_of(output: object) -> str:
    """A dspy.LM's first output as text (a string, or a dict with "text")."""
    if isinstance(output, list | tuple):
        output = output[0] if output else ""
    if isinstance(output, Mapping):
        output = output.get("text", "")
    return "" if output is None else str(output)


def _complete(lm: object, system: str | None, user: str) -> str:
    """One completion: a dspy.LM through its Request API (lm15), anything else as
    callable(messages=[...]) -> [text]."""
    try:
        import dspy

        lm15 = dspy.lm15
        native = isinstance(lm, dspy.LM)
    except Exception:
        native = False
    if native:
        request = lm15.Request(model=lm.model, messages=(lm15.Message.user(user),), system=system)
        return lm(request).text or ""  # type: ignore[operator]
    messages = [{"role": "user", "content": user}]
    if system is not None:
        messages.insert(0, {"role": "system", "content": system})
    return _text_of(lm(messages=messages))  # type: ignore[operator]


def _local_llm(lm: object | None) -> Callable[[str, object], str]:
    """llm() outside the workbench: `lm`, else dspy's configured LM, else the model named
    by SKYNET_METRIC_MODEL (made once)."""
    made: list = []

    def model() -> object:
        if lm is not None:
            return lm
        try:
            import dspy
        except Exception:
            dspy = None
        configured = getattr(getattr(dspy, "settings", None), "lm", None) if dspy else None
        if configured is not None:
            return configured
        name = os.environ.get(MODEL_VARIABLE, "").strip()
        if name and dspy is not None:
            if not made:
                made.append(dspy.LM(name))
            return made[0]
        raise MetricSetupError(
            "llm() has no model here: pass lm= to as_dspy_metric, configure dspy's LM "
            f"(dspy.configure(lm=...)), or set {MODEL_VARIABLE} to a model name"
        )

    def ask(instructions: str, input: object = None) -> str:
        asked = model()
        if input is None:
            system, user = None, instructions
        else:
            system = instructions
            user = input if isinstance(input, str) else json.dumps(input, ensure_ascii=False)
        try:
            return _complete(asked, system, user)
        except Exception as exc:  # the provider's failure, as the workbench reports one
            raise ModelError("model_error", f"{type(exc).__name__}: {exc}"[:2000]) from None

    return ask


def _measured(pred: object) -> dict:
    """What dspy measured of the program's run on this example: its tokens, when usage
    tracking is on; the rest is not measured here."""
    usage = None
    get = getattr(pred, "get_lm_usage", None)
    if callable(get):
        try:
            usage = get()
        except Exception:
            usage = None
    if not isinstance(usage, Mapping) or not usage:
        return {}
    tokens_in = tokens_out = 0
    for numbers in usage.values():
        if isinstance(numbers, Mapping):
            tokens_in += int(numbers.get("prompt_tokens") or 0)
            tokens_out += int(numbers.get("completion_tokens") or 0)
    return {"input_tokens": tokens_in, "output_tokens": tokens_out}


def _result(score: float, feedback: str | None, named: dict | None) -> object:
    """What dspy reads: a dspy.Prediction when dspy is there, else a ScoreWithFeedback."""
    prediction = _prediction_class()
    if prediction is None:
        return ScoreWithFeedback(score, feedback, dict(named) if named else None)
    fields: dict = {"score": score, "feedback": feedback}
    if named:
        fields["objective_scores"] = dict(named)
    return prediction(**fields)


class _Verdicts:
    """The last CACHE_SIZE verdicts by (example, prediction): kept with the objects
    themselves, so that an id is never reused while its entry lives."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: OrderedDict = OrderedDict()
        self.lock = threading.Lock()

    def get(self, gold: object, pred: object) -> object | None:
        with self.lock:
            entry = self.entries.get((id(gold), id(pred)))
            if entry is None or entry[0] is not gold or entry[1] is not pred:
                return None
            self.entries.move_to_end((id(gold), id(pred)))
            return entry[2]

    def put(self, gold: object, pred: object, result: object) -> None:
        with self.lock:
            self.entries[(id(gold), id(pred))] = (gold, pred, result)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)


def as_dspy_metric(
    score: Callable,
    input_fields: str | Iterable[str],
    output_fields: str | Iterable[str],
    *,
    lm: object | None = None,
    cache_size: int = CACHE_SIZE,
) -> Callable:
    """A DSPy / GEPA metric that scores a prediction with skynet's `score`; `lm` is the
    model llm() asks (default: dspy's configured LM, else SKYNET_METRIC_MODEL)."""
    inputs = _names(input_fields, "input_fields")
    outputs = _names(output_fields, "output_fields")
    call_args = _call_args(score)
    verdicts = _Verdicts(cache_size)
    _state.use_locally(_local_llm(lm), NOT_MEASURED)

    def judge(gold: object, pred: object) -> tuple:
        """score() on this example and prediction: (the result for dspy, the score, the
        named scores, the feedback per predictor)."""
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
        _state.install_here(_measured(pred))  # this thread's: dspy scores in threads
        try:
            value = score(*(input, output, expected)[:call_args])
        finally:
            _state.install_here(None)
        verdict = check_return(value)
        if not verdict.valid:
            raise MetricReturnError(verdict.problem or "", verdict.params)
        assert verdict.score is not None and verdict.feedback is not None
        feedback = verdict.feedback if verdict.feedback.strip() else None
        named = dict(verdict.scores) if verdict.scores else None
        result = _result(verdict.score, feedback, named)
        return result, verdict.score, named, dict(verdict.predictor_feedback)

    def metric(
        gold: object,
        pred: object,
        trace: object = None,
        pred_name: str | None = None,
        pred_trace: object = None,
    ) -> object:
        kept = verdicts.get(gold, pred)
        if kept is None:
            kept = judge(gold, pred)
            verdicts.put(gold, pred, kept)
        result, number, named, per_predictor = kept
        own = per_predictor.get(pred_name) if isinstance(pred_name, str) else None
        if own is None:
            return result
        # A result of its own, for that predictor (GEPA may write into what it is given).
        return _result(number, own, named)

    metric.__name__ = metric.__qualname__ = getattr(score, "__name__", "metric")
    return metric
