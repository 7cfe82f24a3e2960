"""The evaluation engine: many cases, a window at a time, in real sandboxes."""

from __future__ import annotations

import textwrap
import threading

from contract.artifacts import Artifact
from contract.cancel import Cancel
from contract.cases import Case
from contract.evaluation import digest, evaluate, feedback_kind
from contract.runner import OnDemand

EXACT = textwrap.dedent(
    """
    def score(input, output, expected):
        if output == expected["label"]:
            return 1.0, {"feedback": "Correct label.", "scores": {"exact": 1.0}}
        if output == "boom":
            raise KeyError("boom")
        if output == "pair":
            return 0.5
        return 0.0, {"feedback": f"Expected {expected['label']!r}, got {output!r}."}
    """
)


def cases(outputs: list[str]) -> list[Case]:
    return [
        Case(input={"q": f"question {i}"}, output=o, expected={"label": "a"})
        for i, o in enumerate(outputs)
    ]


def run(source: str, given, **kw):
    got = []
    ended = evaluate(source, given, on_scored=got.append, sandboxes=OnDemand(), timeout_s=10, **kw)
    return ended, sorted(got, key=lambda scored: scored.index)


def test_every_case_is_scored_once_whatever_order_they_end_in():
    outputs = ["a", "b", "boom", "pair"] * 10
    ended, got = run(EXACT, iter(cases(outputs)), window=4)
    assert ended.stopped is None and ended.started == 40
    assert [s.index for s in got] == list(range(40))
    by_output = {outputs[s.index]: s.row for s in got}
    assert by_output["a"].status == "valid" and by_output["a"].score == 1.0
    assert by_output["a"].scores == {"exact": 1.0}
    assert by_output["b"].status == "valid" and by_output["b"].score == 0.0
    assert by_output["boom"].status == "error" and by_output["boom"].exception["type"] == "KeyError"
    assert by_output["pair"].status == "invalid" and by_output["pair"].problem == "not_a_pair"
    assert all(s.total_ms > 0 and s.output == outputs[s.index] for s in got)
    assert "bwrap" in " ".join(ended.layers) or ended.layers


def test_a_metric_that_does_not_load_stops_the_evaluation_at_once():
    ended, got = run("def score(x):\n    return 1.0\n", cases(["a"] * 20))
    assert ended.stopped == "load_failed"
    assert ended.params["stage"] == "signature"
    assert got == [] or len(got) < 20

    ended, got = run("def score(:\n", cases(["a"] * 5))
    assert ended.stopped == "load_failed" and ended.params["problem"] == "syntax_error"
    assert got == []


def test_a_random_metric_is_found_flaky_by_scoring_twice_in_separate_processes():
    flaky = textwrap.dedent(
        """
        import random

        def score(input, output, expected):
            value = random.random()
            return value, {"feedback": f"drew {value}"}
        """
    )
    ended, got = run(flaky, cases(["a"] * 12), second_source=flaky, window=3)
    assert ended.stopped is None and len(got) == 12
    assert all(s.second is not None and s.second.status == "valid" for s in got)
    # Fresh processes seed afresh: the two draws differ.
    assert all(s.row.score != s.second.score for s in got)

    steady = EXACT
    ended, got = run(steady, cases(["a", "b"] * 3), second_source=steady)
    assert all(s.row.score == s.second.score and s.row.feedback == s.second.feedback for s in got)


def test_two_versions_score_the_same_outputs():
    lenient = "def score(input, output, expected):\n    return 1.0, {'feedback': 'fine'}\n"
    ended, got = run(EXACT, cases(["a", "b", "a"]), second_source=lenient)
    assert [(s.row.score, s.second.score) for s in got] == [(1.0, 1.0), (0.0, 1.0), (1.0, 1.0)]


def test_cancel_stops_it_with_the_finished_cases_reported():
    slow = "import time\n\ndef score(input, output, expected):\n    time.sleep(0.05)\n    return 1.0, {'feedback': 'ok'}\n"
    cancel = Cancel()
    got = []

    def scored(s):
        got.append(s)
        if len(got) == 5:
            threading.Thread(target=cancel.set).start()

    ended = evaluate(
        slow,
        cases(["a"] * 500),
        on_scored=scored,
        sandboxes=OnDemand(),
        timeout_s=10,
        window=2,
        cancel=cancel,
    )
    assert ended.stopped == "cancelled"
    assert 5 <= len(got) < 500 and ended.started < 500


def test_an_artifact_runs_first_and_its_output_is_scored():
    program = Artifact.python(
        "def run(artifact, input):\n    return 'a' if input['q'].endswith('0') else 'b'\n"
    )
    ended, got = run(EXACT, cases([None] * 4), artifact=program.to_job())
    assert ended.stopped is None
    assert [s.row.score for s in got] == [1.0, 0.0, 0.0, 0.0]
    assert got[0].output == "'a'" and got[0].row.run["status"] == "ok"


def test_feedback_kinds_and_digests():
    assert feedback_kind(None) == ""
    assert feedback_kind("  ") == "empty"
    assert feedback_kind("Wrong.") == "generic"
    assert feedback_kind("Score: 0.5") == "generic"
    assert feedback_kind("Expected 'bug', got 'other'.") == "specific"
    assert digest("x") == digest("x") != digest("y")
    assert digest({"a": 1, "b": 2}) == digest({"b": 2, "a": 1})
    assert len(digest(["any"])) == 16


def test_the_feedback_kind_reads_each_predictors_own_text():
    specific = "Expected 'bug', got 'other'."
    assert feedback_kind("Wrong.", {"a.predict": specific}) == "specific"
    assert feedback_kind(specific, {"a.predict": specific, "b": "Wrong."}) == "generic"
    assert feedback_kind(specific, {}) == "specific"
