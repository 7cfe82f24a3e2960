"""An evaluation that scores each case K times: K - 1 more scorings of the same output,
each in a fresh process, chained one after another, every one reported and counted."""

from __future__ import annotations

import textwrap

import pytest

from contract.artifacts import Artifact
from contract.cases import Case
from contract.evaluation import evaluate, repeats_differ
from contract.results import CaseResult
from contract.runner import OnDemand

RANDOM = textwrap.dedent(
    """
    import os
    import random

    def score(input, output, expected):
        value = random.random()
        return value, {"feedback": f"drew {value} in {os.getpid()}"}
    """
)
STEADY = "def score(input, output, expected):\n    return 1.0, {'feedback': 'fine'}\n"


def cases(count: int) -> list[Case]:
    return [Case(input={"q": f"q{i}"}, output="a", expected={"label": "a"}) for i in range(count)]


def run(source: str, given, **kw):
    got = []
    kw.setdefault("timeout_s", 10)
    ended = evaluate(source, given, on_scored=got.append, sandboxes=OnDemand(), **kw)
    return ended, sorted(got, key=lambda scored: scored.index)


def test_each_output_is_scored_k_times_each_in_a_fresh_process():
    ended, got = run(RANDOM, cases(6), second_source=RANDOM, repeats=3, window=3)
    assert ended.stopped is None and len(got) == 6
    for scored in got:
        # The second scoring, and one more after it: K = 4 in all.
        assert scored.second is not None and len(scored.more) == 2
        assert scored.repeats == [scored.second, *scored.more]
        scorings = [scored.row, *scored.repeats]
        assert all(row.status == "valid" for row in scorings)
        # Fresh processes seed afresh, and each one is its own process.
        assert len({row.score for row in scorings}) == 4
        pids = {row.feedback.rsplit(" ", 1)[1] for row in scorings}
        assert len(pids) == 4


def test_one_repeat_is_the_second_scoring_as_before():
    ended, got = run(STEADY, cases(3), second_source=STEADY)
    assert all(s.second is not None and s.more == [] for s in got)
    assert all(s.second.score == 1.0 for s in got)


def test_repeats_below_one_are_refused():
    with pytest.raises(ValueError):
        evaluate(STEADY, cases(1), on_scored=print, sandboxes=OnDemand(), timeout_s=10, repeats=0)


def test_a_case_that_failed_its_first_scoring_is_not_scored_again():
    slow = "import time\n\ndef score(input, output, expected):\n    time.sleep(30)\n"
    ended, got = run(slow, cases(1), second_source=slow, repeats=3, timeout_s=1)
    assert got[0].row.status == "timeout" and got[0].second is None and got[0].more == []


def test_with_an_artifact_the_metric_usage_counts_every_scoring():
    class Counting:
        """A metric handler that counts its calls, as the gateway's does."""

        def __init__(self):
            self.calls = 0

        def __call__(self, request):
            self.calls += 1
            return {"text": "1", "usage": {"input_tokens": 1, "output_tokens": 1}}

        def usage(self):
            return {
                "model_calls": self.calls,
                "input_tokens": self.calls,
                "output_tokens": self.calls,
                "cost_usd": 0.01 * self.calls,
                "model_ms": 1.0 * self.calls,
            }

    judge = "from skynet import llm\n\ndef score(input, output, expected):\n    return float(llm('x')), {}\n"
    program = Artifact.python("def run(artifact, input):\n    return 'a'\n")
    handlers = {}

    def handler_for(index):
        return handlers.setdefault(index, Counting())

    ended, got = run(
        judge,
        cases(2),
        second_source=judge,
        repeats=2,
        artifact=program.to_job(),
        handler_for=handler_for,
    )
    assert ended.stopped is None, ended.params
    for scored in got:
        assert [row.score for row in (scored.row, *scored.repeats)] == [1.0, 1.0, 1.0]
        assert scored.row.usage["model_calls"] == 3
        assert scored.row.usage["cost_usd"] == pytest.approx(0.03)


def _row(status: str, score: float | None, feedback: str = "") -> CaseResult:
    row = CaseResult(index=0)
    row.status, row.score, row.feedback = status, score, feedback
    return row


def test_scorings_differ_when_any_verdict_does_and_the_gap_is_their_valid_spread():
    first = _row("valid", 0.5, "ok")
    assert repeats_differ(first, [_row("valid", 0.5, "ok"), _row("valid", 0.5, "x")]) == (
        False,
        0.0,
    )
    assert repeats_differ(first, [_row("valid", 0.5, "ok"), _row("valid", 0.9)]) == (
        True,
        pytest.approx(0.4),
    )
    flagged, gap = repeats_differ(first, [_row("error", None), _row("valid", 0.2)])
    assert flagged and gap == pytest.approx(0.3)
    # The second scoring's feedback is kept whole, so a change there counts.
    assert repeats_differ(first, [_row("valid", 0.5, "other"), _row("valid", 0.5)])[0]
    assert repeats_differ(first, [_row("error", None), _row("error", None)]) == (True, None)
