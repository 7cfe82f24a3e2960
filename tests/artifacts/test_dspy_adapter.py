"""skynet.dspy_adapter: a score() as a DSPy / GEPA metric.

GEPA's documented metric shape: metric(gold, pred, trace=None, pred_name=None,
pred_trace=None) returning a float or a Prediction/dict with "score" and "feedback".
Stand-ins cover dicts and attribute objects; the real dspy package is used when it is
importable (it is not a project dependency: the test is skipped without it).
"""

from __future__ import annotations

import inspect
import json
from types import SimpleNamespace

import pytest

from skynet import dspy_adapter
from skynet.dspy_adapter import MetricReturnError, ScoreWithFeedback, as_dspy_metric

calls: list[tuple] = []


def exact(input, output, expected):
    calls.append((input, output, expected))
    if expected is None:
        return 0.5, {"feedback": "No answer to compare with."}
    right = output == expected["answer"]
    return (1.0 if right else 0.0), {"feedback": "Right." if right else "Wrong answer."}


class ExampleLike:
    """Item access and `in`, like dspy.Example; attributes raise for missing keys."""

    def __init__(self, **store):
        self._store = store

    def __contains__(self, key):
        return key in self._store

    def __getitem__(self, key):
        return self._store[key]

    def __getattr__(self, key):
        if key.startswith("_"):
            raise AttributeError(key)
        try:
            return self._store[key]
        except KeyError:
            raise AttributeError(key) from None


@pytest.fixture(autouse=True)
def _no_dspy(monkeypatch):
    """Stand-in results unless a test asks for the real package."""
    monkeypatch.setattr(dspy_adapter, "_prediction", [None])
    calls.clear()


@pytest.mark.parametrize(
    ("gold", "pred"),
    [
        ({"question": "Capital of France?", "answer": "Paris"}, {"answer": "Paris"}),
        (
            SimpleNamespace(question="Capital of France?", answer="Paris"),
            SimpleNamespace(answer="Paris", reasoning="..."),
        ),
        (ExampleLike(question="Capital of France?", answer="Paris"), ExampleLike(answer="Paris")),
    ],
)
def test_stand_ins_with_mapping_or_attribute_access(gold, pred):
    metric = as_dspy_metric(exact, ["question"], ["answer"])
    result = metric(gold, pred)
    assert isinstance(result, ScoreWithFeedback)
    assert (result.score, result.feedback) == (1.0, "Right.")
    assert (result["score"], result["feedback"]) == (1.0, "Right.")
    assert calls == [({"question": "Capital of France?"}, "Paris", {"answer": "Paris"})]


def test_gepa_call_shape_positional_and_keyword():
    metric = as_dspy_metric(exact, "question", "answer")
    assert list(inspect.signature(metric).parameters) == [
        "gold",
        "pred",
        "trace",
        "pred_name",
        "pred_trace",
    ]
    gold, pred = {"question": "q", "answer": "a"}, {"answer": "b"}
    # GEPA's feedback function passes all five positionally.
    assert metric(gold, pred, [("predictor", {}, pred)], "predict", []).score == 0.0
    assert metric(gold, pred, trace=None, pred_name=None, pred_trace=None).feedback == (
        "Wrong answer."
    )
    # What GEPA does with the result: hasattr(o, "feedback"), then o["feedback"] and o.score.
    out = metric(gold, pred)
    assert hasattr(out, "feedback") and out["feedback"] == "Wrong answer." and out.score == 0.0


def test_several_output_fields_make_a_dict_and_missing_ones_are_none():
    metric = as_dspy_metric(exact, ["question", "context"], ["answer", "source"])
    gold = {"question": "q", "context": "c", "answer": {"x": 1}}
    metric(gold, SimpleNamespace(answer="a"))
    assert calls[-1] == (
        {"question": "q", "context": "c"},
        {"answer": "a", "source": None},
        {"answer": {"x": 1}},
    )


def test_expected_is_none_when_gold_has_no_output_field():
    metric = as_dspy_metric(exact, ["question"], ["answer"])
    result = metric({"question": "q"}, {"answer": "a"})
    assert calls[-1][2] is None and result.score == 0.5


def test_missing_input_field_is_a_key_error():
    metric = as_dspy_metric(exact, ["question"], ["answer"])
    with pytest.raises(KeyError, match="question"):
        metric({"answer": "a"}, {"answer": "a"})


def test_two_parameter_score_gets_input_and_output_only():
    def short(input, output):
        return True, {"feedback": f"{input['q']}->{output}"}

    result = as_dspy_metric(short, ["q"], ["a"])({"q": 1, "a": 2}, {"a": 3})
    assert (result.score, result.feedback) == (1.0, "1->3")


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (0.8, "not_a_pair"),
        ((0.8, "text"), "side_info_not_dict"),
        ((0.8, {}), "feedback_missing"),
        (("1", {"feedback": "x"}), "score_not_number"),
        ((float("nan"), {"feedback": "x"}), "score_not_finite"),
        ((0.8, {"feedback": "x", "predictor_feedback": ["a"]}), "predictor_feedback_not_dict"),
        ((0.8, {"feedback": "x", "predictor_feedback": {1: "a"}}), "predictor_name_not_string"),
        ((0.8, {"feedback": "x", "predictor_feedback": {"a": 1}}), "predictor_feedback_not_string"),
        ((0.8, {"feedback": "x", "predictor_feedback": {"a": " "}}), "predictor_feedback_empty"),
    ],
)
def test_invalid_return_values_raise_with_the_contracts_code(value, code):
    metric = as_dspy_metric(lambda i, o, e: value, ["q"], ["a"])
    with pytest.raises(MetricReturnError) as info:
        metric({"q": 1}, {"a": 2})
    assert info.value.code == code


def per_predictor(input, output, expected):
    calls.append((input, output, expected))
    return 0.5, {
        "feedback": "General: half right.",
        "scores": {"exact": 0.5},
        "predictor_feedback": {"first": "First: name the country.", "second.predict": "Second."},
    }


def test_the_call_naming_a_predictor_gets_that_predictors_own_feedback():
    metric = as_dspy_metric(per_predictor, ["question"], ["answer"])
    gold, pred = {"question": "q", "answer": "a"}, {"answer": "b"}
    general = metric(gold, pred)
    assert (general.score, general.feedback) == (0.5, "General: half right.")
    # GEPA's reflection-time calls, positional and by keyword, one per predictor it improves.
    first = metric(gold, pred, [], "first", [])
    second = metric(gold, pred, trace=[], pred_name="second.predict", pred_trace=[])
    assert (first.score, first.feedback, first.objective_scores) == (
        0.5,
        "First: name the country.",
        {"exact": 0.5},
    )
    assert (second.score, second.feedback) == (0.5, "Second.")
    # A predictor the metric gave nothing of its own falls back to the general feedback.
    assert metric(gold, pred, [], "third", []).feedback == "General: half right."
    assert metric(gold, pred, [], None, []).feedback == "General: half right."
    # One verdict for all of them: score() ran once.
    assert len(calls) == 1
    # What GEPA writes into a predictor's result does not change the kept one.
    first["feedback"], first["score"] = "overwritten", 0.0
    assert metric(gold, pred).feedback == "General: half right."
    assert metric(gold, pred, [], "first", []).feedback == "First: name the country."
    assert metric(gold, pred, [], "first", []).score == 0.5


def test_predictor_feedback_routes_with_the_real_dspy_prediction():
    dspy = pytest.importorskip("dspy")
    dspy_adapter._prediction.clear()
    metric = as_dspy_metric(per_predictor, ["question"], ["answer"])
    gold = dspy.Example(question="q", answer="a").with_inputs("question")
    pred = dspy.Prediction(answer="b")
    own = metric(gold, pred, None, "second.predict", None)
    assert isinstance(own, dspy.Prediction)
    assert (own.score, own.feedback, own.objective_scores) == (0.5, "Second.", {"exact": 0.5})
    assert metric(gold, pred).feedback == "General: half right."


def test_bad_field_lists_and_signatures_are_refused_early():
    with pytest.raises(ValueError):
        as_dspy_metric(exact, [], ["a"])
    with pytest.raises(TypeError):
        as_dspy_metric(lambda only: None, ["q"], ["a"])


def test_with_the_real_dspy_package():
    dspy = pytest.importorskip("dspy")
    dspy_adapter._prediction.clear()  # find the real dspy.Prediction
    metric = as_dspy_metric(exact, ["question"], ["answer"])
    gold = dspy.Example(question="Capital of France?", answer="Paris").with_inputs("question")
    pred = dspy.Prediction(answer="Paris")
    result = metric(gold, pred, None, None, None)
    assert isinstance(result, dspy.Prediction)
    assert (result.score, result.feedback) == (1.0, "Right.")
    assert result["feedback"] == "Right."
    assert calls == [({"question": "Capital of France?"}, "Paris", {"answer": "Paris"})]
    wrong = metric(gold, dspy.Prediction(answer="Lyon"))
    assert (wrong.score, wrong.feedback) == (0.0, "Wrong answer.")
    # GEPA's own check of a metric's result: a Prediction with a score is read as one.
    from dspy.teleprompt.gepa.gepa_utils import _extract_score_and_objective_scores

    assert _extract_score_and_objective_scores(result) == (1.0, {})


def test_gepa_optimises_with_the_metric_and_reflects_on_its_feedback():
    dspy = pytest.importorskip("dspy")
    from dspy.utils import DummyLM

    dspy_adapter._prediction.clear()
    metric = as_dspy_metric(exact, ["question"], ["answer"])
    prompts: list[str] = []

    class ReflectionEngine:
        """A dspy engine (complete(Request) -> Response) that records what it is asked."""

        def complete(self, request):
            from dspy import lm15

            prompts.append(" ".join(m.text or "" for m in request.messages))
            answer = json.dumps({"new_instruction": "Answer with the capital city."})
            return lm15.Response(
                id=None,
                model="reflection",
                message=lm15.Message.assistant([lm15.TextPart(answer)]),
                finish_reason="stop",
                usage=lm15.Usage(),
            )

        def stream(self, request):
            from dspy import lm15

            return lm15.response_to_events(self.complete(request))

        def close(self):
            pass

    dev = [
        dspy.Example(question="Capital of France?", answer="Paris").with_inputs("question"),
        dspy.Example(question="Capital of Spain?", answer="Madrid").with_inputs("question"),
    ]
    reflection = dspy.LM("test/reflection", engine=ReflectionEngine(), cache=False)
    with dspy.context(lm=DummyLM([{"answer": "Paris"}, {"answer": "Lyon"}] * 50)):
        gepa = dspy.GEPA(
            metric=metric, max_metric_calls=8, reflection_lm=reflection, use_merge=False
        )
        optimised = gepa.compile(dspy.Predict("question -> answer"), trainset=dev, valset=dev)
    assert isinstance(optimised, dspy.Predict)
    # The metric's feedback reached GEPA's reflection prompt.
    assert any("Wrong answer." in prompt for prompt in prompts)
