"""The cost and time projection of a run, on numbers whose arithmetic is written out here,
and the lines that say they are not measured instead of guessing."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from providers import projection
from providers.catalogue import parse_catalogue
from providers.projection import Measured, Range, plan, project
from tests.providers.conftest import TEST_CATALOGUE

CATALOGUE = parse_catalogue(TEST_CATALOGUE.replace("{base}", "http://127.0.0.1:9"), {})
GPT = CATALOGUE.get("openai/test-gpt")  # $2 in, $8 out per million tokens
FREE = CATALOGUE.get("local/free")

MEASURED = Measured(
    cases=40,
    task_usd_per_case=0.002,
    metric_usd_per_case=0.001,
    total_ms_mean=1500.0,
    run_ms_mean=1200.0,
    feedback_length_mean=100.0,
    feedback_length_max=400,
    case_chars_mean=300.0,
    case_chars_max=900,
    task_model="openai/test-gpt",
    metric_model="anthropic/test-claude",
)


def _project(measured=MEASURED, **changes):
    arguments = {
        "budget_calls": 320,
        "valset_size": 20,
        "engine": "gepa",
        "task_model": "openai/test-gpt",
        "metric_model": "anthropic/test-claude",
        "reflection": GPT,
        "reflection_id": "openai/test-gpt",
        "instruction_chars": 200,
    }
    arguments.update(changes)
    return project(measured, **arguments)


def test_the_assumptions_are_the_documented_ones():
    # The hand computations below rest on these; a change to one is a change of the model.
    assert projection.REFLECTION_MINIBATCH == 3
    assert projection.PROMPT_TEMPLATE_CHARS == 1000
    assert projection.EXAMPLE_OVERHEAD_CHARS == 80
    assert projection.CHARS_PER_TOKEN == (4.0, 3.0)
    assert projection.REFLECTION_OUTPUT_TOKENS == (400, 2000)


def test_the_budget_buys_iterations_between_every_proposal_accepted_and_none():
    # Budget 320, valset 20, minibatch 3. The seed's valset scoring: 20 calls, 300 left.
    # Every proposal accepted: 3 + 3 + 20 = 26 calls an iteration, ceil(300 / 26) = 12
    # iterations, 20 + 12 * 26 = 332 calls (the last iteration goes past the budget).
    # None accepted: 3 + 3 = 6 calls an iteration, 300 / 6 = 50 iterations, 320 calls.
    calls, iterations = plan(320, 20)
    assert calls == Range(320, 332)
    assert iterations == Range(12, 50)


def test_a_budget_the_seed_scoring_spends_leaves_no_iteration():
    calls, iterations = plan(20, 25)
    assert calls == Range(25, 25) and iterations == Range(0, 0)
    result = _project(budget_calls=20, valset_size=25)
    assert result.notes == (projection.BUDGET_BELOW_VALSET,)
    assert result.reflection_usd.range == Range(0, 0)
    assert result.task_usd.range == Range(25 * 0.002, 25 * 0.002)


def test_each_line_is_calls_times_the_measured_cost_per_case():
    result = _project()
    # Task model: 320 * $0.002 = $0.64, 332 * $0.002 = $0.664.
    assert result.task_usd.range.low == pytest.approx(0.64)
    assert result.task_usd.range.high == pytest.approx(0.664)
    # Metric model: 320 * $0.001 = $0.32, 332 * $0.001 = $0.332.
    assert result.metric_usd.range.low == pytest.approx(0.32)
    assert result.metric_usd.range.high == pytest.approx(0.332)
    # Time, one call after another: 320 * 1.5 s = 480 s, 332 * 1.5 s = 498 s.
    assert result.time_s.range.low == pytest.approx(480)
    assert result.time_s.range.high == pytest.approx(498)


def test_the_reflection_cost_is_iterations_times_one_prompt_of_the_minibatch():
    result = _project()
    # Low prompt: (1000 template + 200 instruction + 3 * (300 case + 100 feedback + 80))
    # / 4 chars a token = 2640 / 4 = 660 tokens.
    # High prompt: (1000 + 3 * (900 + 400 + 80)) / 3 = 5140 / 3 = 1713.33 tokens, plus an
    # instruction grown to a whole reflection output, max(200 / 3, 2000) = 2000 tokens.
    assert result.prompt_tokens.low == pytest.approx(660)
    assert result.prompt_tokens.high == pytest.approx(5140 / 3 + 2000)
    # Low call: 660 * $2/M + 400 * $8/M = $0.00132 + $0.0032 = $0.00452; 12 of them.
    # High call: 3713.33 * $2/M + 2000 * $8/M = $0.0074267 + $0.016; 50 of them.
    assert result.reflection_usd.range.low == pytest.approx(12 * 0.00452)
    assert result.reflection_usd.range.high == pytest.approx(
        50 * ((5140 / 3 + 2000) * 2e-6 + 0.016)
    )
    # Total: the three cost lines added up.
    assert result.total_usd.range.low == pytest.approx(0.64 + 0.32 + 0.05424)
    assert result.total_usd.range.high == pytest.approx(0.664 + 0.332 + 1.1713333)
    assert result.total_missing == () and result.notes == ()


def test_a_long_instruction_is_its_own_high_bound():
    result = _project(instruction_chars=9000)
    # Low: (1000 + 9000 + 1440) / 4 = 2860; high: 5140 / 3 + 9000 / 3 = 14140 / 3.
    assert result.prompt_tokens == Range(pytest.approx(2860), pytest.approx(14140 / 3))


def test_dspy_gepa_is_projected_by_the_same_loop():
    assert _project(engine="dspy_gepa").to_dict() | {"engine": "gepa"} == _project().to_dict()
    with pytest.raises(ValueError):
        _project(engine="auto")


def test_a_free_reflection_model_costs_nothing_and_a_small_context_is_noted():
    result = _project(reflection=FREE, reflection_id="local/free")
    assert result.reflection_usd.range == Range(0, 0)
    # 3713 prompt tokens and 2000 written fit in the local model's 8192:
    assert projection.PROMPT_OVER_CONTEXT not in result.notes
    long_cases = replace(MEASURED, case_chars_max=6000)
    # High prompt: (1000 + 3 * (6000 + 400 + 80)) / 3 + 2000 = 7813.3 tokens, + 2000 out.
    result = _project(long_cases, reflection=FREE, reflection_id="local/free")
    assert result.notes == (projection.PROMPT_OVER_CONTEXT,)


def test_without_an_evaluation_nothing_is_measured_but_the_calls_are_planned():
    result = _project(None)
    for line in (result.task_usd, result.metric_usd, result.reflection_usd, result.time_s):
        assert line.range is None and line.reason == projection.NO_EVALUATION
    assert result.total_usd.reason == projection.NO_EVALUATION
    assert result.calls == Range(320, 332)
    assert result.prompt_tokens is None and result.measured is None


def test_an_evaluation_without_cases_measures_nothing():
    empty = Measured.from_summary(
        {"cases": 0, "cost": {}, "time": {}},
        case_chars_mean=None,
        case_chars_max=None,
        task_model="openai/test-gpt",
        metric_model="anthropic/test-claude",
    )
    result = _project(empty)
    assert {result.task_usd.reason, result.time_s.reason, result.total_usd.reason} == {
        projection.NO_CASES
    }


def test_a_cost_measured_on_another_model_does_not_count():
    result = _project(task_model="openai/other", metric_model="openai/test-gpt")
    assert result.task_usd.reason == projection.MODEL_CHANGED
    assert result.metric_usd.reason == projection.MODEL_CHANGED
    # The total says what it leaves out rather than pass for the whole.
    assert result.total_usd.range == Range(pytest.approx(0.05424), pytest.approx(1.1713333))
    assert result.total_missing == ("task_usd", "metric_usd")


def test_recorded_outputs_measure_no_task_model():
    result = _project(replace(MEASURED, run_ms_mean=None, task_usd_per_case=0.0))
    assert result.task_usd.reason == projection.NO_ARTIFACT_RUN
    assert result.metric_usd.range is not None


def test_the_reflection_line_needs_a_priced_model_and_measured_sizes():
    assert _project(reflection=None, reflection_id="").reflection_usd.reason == (
        projection.NO_REFLECTION_MODEL
    )
    assert _project(reflection=None, reflection_id="gone/model").reflection_usd.reason == (
        projection.PRICE_UNKNOWN
    )
    no_feedback = replace(MEASURED, feedback_length_mean=None, feedback_length_max=None)
    assert _project(no_feedback).reflection_usd.reason == projection.NO_FEEDBACK_LENGTHS
    no_sizes = replace(MEASURED, case_chars_mean=None)
    assert _project(no_sizes).reflection_usd.reason == projection.NO_CASE_SIZES
    assert _project(replace(MEASURED, total_ms_mean=None)).time_s.reason == projection.NO_TIMING


def test_nothing_measured_leaves_no_total():
    result = _project(
        replace(MEASURED, run_ms_mean=None),
        metric_model="openai/other",
        reflection=None,
        reflection_id="",
    )
    assert result.total_usd.range is None
    assert result.total_usd.reason == projection.NOTHING_MEASURED


def test_the_summary_schema_is_read_and_the_projection_is_json():
    summary = {
        "cases": 40,
        "cost": {
            "task_usd_per_case": 0.002,
            "metric_usd_per_case": 0.001,
            "feedback_length_mean": 100.0,
            "feedback_length_max": 400,
        },
        "time": {"total_ms_mean": 1500.0, "run_ms_mean": 1200.0, "metric_ms_mean": 300.0},
    }
    measured = Measured.from_summary(
        summary,
        case_chars_mean=300.0,
        case_chars_max=900,
        task_model="openai/test-gpt",
        metric_model="anthropic/test-claude",
    )
    assert measured == MEASURED
    data = json.loads(json.dumps(_project(measured).to_dict()))
    assert data["calls"] == {"low": 320, "high": 332}
    assert data["task_usd"]["low"] == pytest.approx(0.64)
    assert data["measured"]["feedback_length_max"] == 400
    assert data["assumptions"]["chars_per_token"] == [4.0, 3.0]
    unmeasured = _project(measured, task_model="openai/other").to_dict()
    assert unmeasured["task_usd"] == {"reason": "model_changed"}
    assert unmeasured["total_missing"] == ["task_usd"]


@pytest.mark.parametrize(
    ("extra", "scorings"),
    [
        ({"noise": {"k": 3}}, 3),
        ({"flaky": {"count": 0}}, 2),
        ({"agreement": {"n": 4}}, 2),
        ({"flaky": None, "agreement": None, "noise": None}, 1),
    ],
)
def test_an_evaluation_that_scored_each_case_k_times_counts_one_metric_call(extra, scorings):
    """Its metric cost and the metric's share of a case's time were spent K times; a run
    calls the metric once a case (the artifact ran once either way)."""
    summary = {
        "cases": 40,
        "cost": {"task_usd_per_case": 0.002, "metric_usd_per_case": 0.003},
        "time": {"total_ms_mean": 1200.0 + 300.0 * scorings, "run_ms_mean": 1200.0},
        **extra,
    }
    measured = Measured.from_summary(
        summary, case_chars_mean=None, case_chars_max=None, task_model="", metric_model=""
    )
    assert measured.metric_usd_per_case == pytest.approx(0.003 / scorings)
    assert measured.task_usd_per_case == pytest.approx(0.002)
    assert measured.total_ms_mean == pytest.approx(1500.0)
