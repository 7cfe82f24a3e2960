"""The metric-call budget is a ceiling: real GEPA and DSPy GEPA runs (tests.quiz's models,
every case in the sandbox) at budgets their batches do not divide never make more metric
calls than the budget, counted as the run page counts them and, independently, as the
task model's requests (every case calls it once), a resumed run's included."""

from __future__ import annotations

import pytest

from engines.calls import CallsSpent, MetricCalls
from tests import quiz
from tests.engines.test_dspy_engine import run as run_dspy
from tests.engines.test_gepa_engine import run as run_gepa
from tests.providers.fakes import Reply

# 6 validation cases, minibatches of 3: the seed takes 6 calls, an iteration 6 (its
# parent's minibatch and its proposal's), and 6 more when it accepts the proposal.
VALSET = 6


def task_requests(provider, *, reflection_mark: str) -> int:
    """The cases that ran, as the task model saw them: every case calls it once."""
    return sum(1 for r in provider.requests if reflection_mark not in r.user)


def most_calls(sink) -> int:
    return max(s["metric_calls"] for s in sink.snapshots)


def assert_kept_its_best(sink) -> None:
    """The run kept the candidate it found: the quiz's instruction, 0.9 on every case."""
    best = sink.snapshots[-1]["best"]
    assert best["score"] == pytest.approx(0.9) and best["idx"] >= 1
    assert quiz.INSTRUCTION in sink.candidate_rows[best["idx"]]["text"]


# The seed (6) and the first minibatch (3) before the pause, then the first iteration
# again (3 + 3, and 6 for the proposal it accepts): 21, with 4 left, too few for another.
# Had the resumed run scored the seed again (as gepa does before it loads its checkpoint)
# the accepted proposal's validation cases would no longer fit, and it would end with
# the seed.
RESUMED_BUDGET = 25
VALIDATION_COUNTRIES = [row["country"] for row in quiz.rows()[6:]]


def assert_resumed_within_budget(run, provider, reflection_mark: str, *, describe_cases: int):
    # The first reflection fails (each of the client's tries): the run pauses after the
    # seed's validation cases and its first minibatch, past its last checkpoint.
    down = Reply(status=503, body={"error": {"message": "down"}}, when=reflection_mark)
    provider.queue(*[down] * 50)
    outcome, first = run()
    assert (outcome.ended, outcome.reason) == ("paused", "provider_failed")
    before = first.snapshots[-1]["metric_calls"]
    assert before == task_requests(provider, reflection_mark=reflection_mark) == VALSET + 3
    provider.script.clear()
    resumed_from = len(provider.requests)

    outcome, second = run(metric_calls_before=before)
    made = task_requests(provider, reflection_mark=reflection_mark)
    # Both attempts together, as the page counts them and as the task model saw them.
    last = second.snapshots[-1]
    assert most_calls(second) == last["metric_calls"] == made == 21 <= RESUMED_BUDGET
    assert (outcome.ended, outcome.reason, outcome.params.get("needed")) == (
        "finished",
        "metric_calls",
        6,
    )
    assert made == before + last["cases_run"] - describe_cases
    # The seed was not scored on the validation cases again: only the new candidate was.
    again = [
        r.user
        for r in provider.requests[resumed_from:]
        if any(country in r.user for country in VALIDATION_COUNTRIES)
    ]
    assert len(again) == VALSET and all(quiz.INSTRUCTION in text for text in again)
    assert_kept_its_best(second)


@pytest.mark.parametrize("budget", [20, 31, 47, 151])
def test_a_gepa_run_never_makes_more_metric_calls_than_its_budget(
    tmp_path, sandboxes, models, provider, budget
):
    outcome, sink = run_gepa(tmp_path, sandboxes, models(), quiz.CAPPED, budget=budget)
    assert (outcome.ended, outcome.reason) == ("finished", "metric_calls")
    made = task_requests(provider, reflection_mark=quiz.REFLECTION_MARK)
    last = sink.snapshots[-1]
    assert most_calls(sink) <= budget and made <= budget
    # The run page counts every call the run made, no more.
    assert last["metric_calls"] == last["cases_run"] == made
    # It stopped where another iteration's two minibatches no longer fitted.
    assert budget - 2 * 3 < made
    if made < budget:
        assert outcome.params == {"needed": 6}
    assert_kept_its_best(sink)


def test_a_gepa_run_refuses_the_validation_cases_it_cannot_pay_for(
    tmp_path, sandboxes, models, provider
):
    # The seed (6) and the first iteration's minibatches (3 + 3) fit in 14; the accepted
    # proposal's 6 validation cases would not: the run ends before them, with the seed.
    outcome, sink = run_gepa(tmp_path, sandboxes, models(), quiz.CAPPED, budget=14)
    assert (outcome.ended, outcome.reason, outcome.params) == (
        "finished",
        "metric_calls",
        {"needed": VALSET},
    )
    made = task_requests(provider, reflection_mark=quiz.REFLECTION_MARK)
    assert made == most_calls(sink) == sink.snapshots[-1]["metric_calls"] == 12
    assert sink.snapshots[-1]["best"]["idx"] == 0 and len(sink.candidate_rows) == 1


def test_a_budget_below_the_validation_cases_scores_nothing(tmp_path, sandboxes, models, provider):
    outcome, sink = run_gepa(tmp_path, sandboxes, models(), quiz.CAPPED, budget=VALSET - 1)
    assert (outcome.ended, outcome.reason, outcome.params) == (
        "finished",
        "metric_calls",
        {"needed": VALSET},
    )
    assert task_requests(provider, reflection_mark=quiz.REFLECTION_MARK) == 0
    assert sink.snapshots[-1]["metric_calls"] == 0 and not sink.candidate_rows


def test_a_resumed_gepa_run_counts_the_calls_before_its_pause(
    tmp_path, sandboxes, models, provider
):
    def run(**kw):
        return run_gepa(tmp_path, sandboxes, models(), quiz.CAPPED, budget=RESUMED_BUDGET, **kw)

    assert_resumed_within_budget(run, provider, quiz.REFLECTION_MARK, describe_cases=0)


@pytest.mark.parametrize("budget", [21, 33, 50])
def test_a_dspy_gepa_run_never_makes_more_metric_calls_than_its_budget(
    tmp_path,
    dspy_config,
    models,
    provider,
    budget,
):
    outcome, sink = run_dspy(tmp_path, dspy_config, models(), quiz.CAPPED, budget=budget)
    assert (outcome.ended, outcome.reason) == ("finished", "metric_calls")
    made = task_requests(provider, reflection_mark=quiz.DSPY_REFLECTION_MARK)
    last = sink.snapshots[-1]
    assert most_calls(sink) <= budget and made <= budget
    # One describe case, then every case a metric call the page counts.
    assert last["metric_calls"] == last["cases_run"] - 1 == made
    assert_kept_its_best(sink)


@pytest.mark.parametrize("budget, made", [(14, 12), (VALSET - 1, 0)])
def test_a_dspy_gepa_run_refuses_a_batch_it_cannot_pay_for(
    tmp_path,
    dspy_config,
    models,
    provider,
    budget,
    made,
):
    # As GEPA's: the accepted proposal's validation cases (at 14), or the seed's (at 5),
    # refused before any of their cases runs; the run keeps what it had.
    outcome, sink = run_dspy(tmp_path, dspy_config, models(), quiz.CAPPED, budget=budget)
    assert (outcome.ended, outcome.reason, outcome.params) == (
        "finished",
        "metric_calls",
        {"needed": VALSET},
    )
    assert task_requests(provider, reflection_mark=quiz.DSPY_REFLECTION_MARK) == made
    assert most_calls(sink) == sink.snapshots[-1]["metric_calls"] == made
    assert len(sink.candidate_rows) == (1 if made else 0)


def test_a_resumed_dspy_gepa_run_counts_the_calls_before_its_pause(
    tmp_path, dspy_config, models, provider
):
    def run(**kw):
        return run_dspy(tmp_path, dspy_config, models(), quiz.CAPPED, budget=RESUMED_BUDGET, **kw)

    assert_resumed_within_budget(run, provider, quiz.DSPY_REFLECTION_MARK, describe_cases=1)


def test_a_batch_that_would_pass_the_budget_is_refused_whole():
    calls = MetricCalls(10, used=4)
    calls.take(3)
    with pytest.raises(CallsSpent) as refused:
        calls.take(4)
    assert (refused.value.used, refused.value.needed, calls.used, calls.left) == (7, 4, 7, 3)
    calls.take(3)
    assert calls.left == 0
    calls.catch_up(5)  # gepa's count behind ours changes nothing
    assert calls.used == 10
