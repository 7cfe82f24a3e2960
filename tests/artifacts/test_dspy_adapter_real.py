"""The bundle's DSPy adapter against the real dspy 3.4.1: a judge metric's llm() answered
by dspy's configured LM (over real HTTP, the fake provider's OpenAI wire format), a
contract failure that stops dspy instead of scoring 0, named scores reaching GEPA's
objective scores, GEPA's second call reusing the first verdict, dspy's own text for an
empty feedback, and what observation() can and cannot know there."""

from __future__ import annotations

import warnings

import pytest

from skynet import _state, dspy_adapter
from skynet.dspy_adapter import MetricReturnError, MetricSetupError, as_dspy_metric
from tests.providers.conftest import JUDGE_METRIC, OPENAI_KEY
from tests.providers.fakes import FakeProvider

dspy = pytest.importorskip("dspy")


@pytest.fixture(autouse=True)
def _real_dspy(monkeypatch):
    """The real dspy.Prediction; llm()'s local model and note reset after each test."""
    monkeypatch.setattr(dspy_adapter, "_prediction", [])
    monkeypatch.delenv(dspy_adapter.MODEL_VARIABLE, raising=False)
    yield
    _state.use_locally(None)
    _state.install_here(None)


@pytest.fixture
def provider():
    server = FakeProvider(openai_key=OPENAI_KEY).start()
    yield server
    server.stop()


def judge_score():
    namespace: dict = {}
    exec(compile(JUDGE_METRIC, "metric.py", "exec"), namespace)
    return namespace["score"]


class Answers(dspy.Module):
    """A program that answers without a model: what it returns is the test's."""

    def __init__(self, answer: str) -> None:
        super().__init__()
        self.answer = answer

    def forward(self, question):
        return dspy.Prediction(answer=self.answer)


def examples(n: int = 3):
    return [
        dspy.Example(question="What is the capital of France?", answer="Paris").with_inputs(
            "question"
        )
        for _ in range(n)
    ]


def evaluate(program, metric, n: int = 3):
    run = dspy.Evaluate(devset=examples(n), metric=metric, num_threads=2, failure_score=0.0)
    return run(program)


def test_a_judge_metric_scores_a_right_answer_1_through_dspys_configured_lm(provider):
    lm = dspy.LM("openai/gpt-test", api_base=f"{provider.url}/v1", api_key=OPENAI_KEY, cache=False)
    metric = as_dspy_metric(judge_score(), ["question"], ["answer"])
    with dspy.context(lm=lm):
        right = evaluate(Answers("Paris"), metric)
        wrong = evaluate(Answers("Lyon"), metric)
    assert right.score == 100.0  # dspy reports a percentage: every case scored 1.0
    assert wrong.score == 0.0
    judged = [r for r in provider.requests if "Answer:" in r.user]
    assert len(judged) == 6
    assert judged[0].system == "Answer PASS or FAIL, then give one sentence of reasons."


def test_an_env_named_model_answers_llm_when_dspy_has_none(provider, monkeypatch):
    monkeypatch.setenv(dspy_adapter.MODEL_VARIABLE, "openai/gpt-test")
    monkeypatch.setenv("OPENAI_API_BASE", f"{provider.url}/v1")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{provider.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    metric = as_dspy_metric(judge_score(), ["question"], ["answer"])
    gold = examples(1)[0]
    with dspy.context(lm=None):
        result = metric(gold, dspy.Prediction(answer="Paris"))
    assert result.score == 1.0 and result.feedback.startswith("PASS")


def test_llm_without_any_model_stops_dspy_saying_what_to_configure():
    metric = as_dspy_metric(judge_score(), ["question"], ["answer"])
    with dspy.context(lm=None), pytest.raises(MetricSetupError, match="dspy.configure"):
        evaluate(Answers("Paris"), metric)


def test_a_return_value_that_breaks_the_contract_stops_dspy_instead_of_scoring_0():
    def bare_float(input, output, expected):
        return 0.5

    metric = as_dspy_metric(bare_float, ["question"], ["answer"])
    with pytest.raises(MetricReturnError, match="not_a_pair"):
        evaluate(Answers("Paris"), metric)
    # The same would pass for a 0 in silence if it were an Exception: it is not one.
    assert not issubclass(MetricReturnError, Exception)


scored: list[tuple] = []


def named(input, output, expected):
    scored.append((input["question"], output))
    right = float(output == expected["answer"])
    feedback = "Right." if right else "Name the capital city, in one word."
    return right, {"feedback": feedback, "scores": {"exact": right, "short": 1.0}}


def test_named_scores_reach_objective_scores():
    from dspy.teleprompt.gepa.gepa_utils import _extract_score_and_objective_scores

    metric = as_dspy_metric(named, ["question"], ["answer"])
    result = metric(examples(1)[0], dspy.Prediction(answer="Paris"))
    assert _extract_score_and_objective_scores(result) == (1.0, {"exact": 1.0, "short": 1.0})


def test_gepas_second_call_reuses_the_first_verdict_and_objectives_reach_gepa():
    from dspy.utils import DummyLM

    scored.clear()
    metric = as_dspy_metric(named, ["question"], ["answer"])
    dev = examples(2)
    reflection = DummyLM(
        [{"new_instruction": "Answer with the capital city."}] * 20, adapter=dspy.JSONAdapter()
    )
    with dspy.context(lm=DummyLM([{"answer": "Paris"}, {"answer": "Lyon"}] * 50)):
        gepa = dspy.GEPA(
            metric=metric,
            max_metric_calls=12,
            reflection_lm=reflection,
            use_merge=False,
            track_stats=True,
        )
        optimised = gepa.compile(dspy.Predict("question -> answer"), trainset=dev, valset=dev)
    results = optimised.detailed_results
    # One score() per metric call GEPA counted: the reflection-time calls reused them.
    assert len(scored) == results.total_metric_calls
    assert {"exact", "short"} <= set(results.val_aggregate_subscores[0])


def test_the_second_call_with_pred_name_does_not_score_again():
    scored.clear()
    metric = as_dspy_metric(named, ["question"], ["answer"])
    gold, pred = examples(1)[0], dspy.Prediction(answer="Lyon")
    first = metric(gold, pred, None)
    again = metric(gold, pred, None, "predict", [])
    assert again is first and len(scored) == 1
    other = metric(gold, dspy.Prediction(answer="Lyon"))
    assert other is not first and len(scored) == 2


def test_an_empty_feedback_leaves_dspy_to_write_its_own():
    metric = as_dspy_metric(lambda i, o, e: (0.0, {"feedback": "  "}), ["question"], ["answer"])
    result = metric(examples(1)[0], dspy.Prediction(answer="Lyon"))
    assert result.score == 0.0 and result.feedback is None


def test_observation_holds_dspys_token_counts_and_says_what_it_cannot_know():
    from skynet import observation

    seen = []

    def reads(input, output, expected):
        seen.append(dict(observation()))
        return 1.0, {"feedback": "Fine."}

    metric = as_dspy_metric(reads, ["question"], ["answer"])
    pred = dspy.Prediction(answer="Paris")
    pred.set_lm_usage({"openai/gpt-test": {"prompt_tokens": 120, "completion_tokens": 8}})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        metric(examples(1)[0], pred)
        metric(examples(1)[0], dspy.Prediction(answer="Paris"))
    assert seen[0]["input_tokens"] == 120 and seen[0]["output_tokens"] == 8
    assert seen[0]["duration_ms"] is None and seen[0]["cost_usd"] is None
    assert seen[1]["input_tokens"] is None  # no usage tracked for that one
    notes = [w for w in caught if "not measured here" in str(w.message)]
    assert len(notes) == 1
    # Outside a scoring, observation() is the process's again: nothing leaks.
    assert observation()["input_tokens"] is None
