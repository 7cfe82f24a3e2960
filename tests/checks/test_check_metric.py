"""`python manage.py check_metric`: its JSON, languages and exit codes, as a user runs it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

EXACT_MATCH = """
def score(input, output, expected=None):
    want = expected["label"]
    if output == want:
        return 1.0, {"feedback": "Correct."}
    return 0.0, {"feedback": f"Expected {want!r}, got {output!r}."}
"""

NOT_A_DICT = """
def score(input, output):
    return 0.8, "Close."
"""


def check_metric(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check_metric", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def metric(tmp_path):
    def write(source: str, name: str = "metric.py"):
        path = tmp_path / name
        path.write_text(source)
        return str(path)

    return write


def test_a_passing_metric_exits_0_with_the_documented_json(metric):
    result = check_metric(metric(EXACT_MATCH), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report) == {
        "passed",
        "failed_stage",
        "sandbox_mode",
        "layers",
        "looks_like",
        "looks_like_message",
        "stages",
        "cases",
        "hints",
    }
    assert report["passed"] is True and report["failed_stage"] is None
    assert report["looks_like"] is None and report["looks_like_message"] == ""
    # The check ran with every layer the README promises.
    assert report["sandbox_mode"] == "bwrap" and "namespaces" in report["layers"]
    assert [s["id"] for s in report["stages"]] == [
        "load",
        "signature",
        "reward_spec",
        "call",
        "return_value",
    ]
    assert set(report["stages"][0]) == {"id", "status", "message"}
    assert [c["status"] for c in report["cases"]] == ["valid", "valid", "valid"]
    assert set(report["cases"][0]) == {
        "index",
        "status",
        "score",
        "feedback",
        "scores",
        "problem",
        "message",
        "shape",
        "fix",
        "duration_ms",
    }
    assert [c["score"] for c in report["cases"]] == [1.0, 0.0, 1.0]
    assert report["cases"][1]["feedback"] == "Expected 'bug', got 'other'."
    # "Correct." on a perfect score is no generic feedback: nothing is wrong to name.
    generic = [h for h in report["hints"] if h["code"] == "feedback_generic"]
    assert [h["case"] for h in generic] == []
    assert all(h["message"] for h in report["hints"])


def test_a_failing_metric_exits_1_and_names_the_stage(metric):
    result = check_metric(metric(NOT_A_DICT), "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["passed"] is False
    assert report["failed_stage"] == "return_value"
    assert {c["problem"] for c in report["cases"]} == {"side_info_not_dict"}
    assert report["cases"][0]["message"] == "No. The side info is not a dict."


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("es", "No. La información adicional no es un dict."),
        ("hi", None),
    ],
)
def test_messages_come_in_the_chosen_language(metric, language, expected):
    result = check_metric(metric(NOT_A_DICT), "--json", "--language", language)
    report = json.loads(result.stdout)
    message = report["cases"][0]["message"]
    if expected:
        assert message == expected
    else:
        assert any("\u0900" <= ch <= "\u097f" for ch in message), message


def test_the_readable_report_has_the_same_content(metric):
    result = check_metric(metric(NOT_A_DICT))
    assert result.returncode == 1
    assert "Contract check failed at Metric return value." in result.stdout
    assert "No. The side info is not a dict." in result.stdout
    assert "Case 3: Invalid" in result.stdout
    assert "Sandbox layers: " in result.stdout
    if shutil.which("bwrap"):
        assert "namespaces (bubblewrap)" in result.stdout


def test_cases_file_is_used(metric, tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        "\n".join(
            json.dumps(c)
            for c in [
                {"input": {"q": "a"}, "output": "x", "expected": {"label": "x"}},
                {"input": {"q": "b"}, "output": "y", "expected": {"label": "x"}},
                {
                    "input": {"q": "c"},
                    "output": "z",
                    "expected": {"label": "z"},
                    "observation": {"duration_ms": 10},
                },
            ]
        )
    )
    result = check_metric(metric(EXACT_MATCH), "--cases", str(cases), "--json")
    report = json.loads(result.stdout)
    assert [c["score"] for c in report["cases"]] == [1.0, 0.0, 1.0]
    assert report["cases"][1]["feedback"] == "Expected 'x', got 'y'."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent/metric.py"], "does not exist"),
        (["{metric}", "--timeout", "0"], "from 1 to 600"),
        (["{metric}", "--timeout", "601"], "from 1 to 600"),
        (["{metric}", "--timeout", "soon"], "from 1 to 600"),
        (["{metric}", "--language", "fr"], "invalid choice"),
        (["{metric}", "--cases", "{bad_cases}"], "Line 2 is not valid JSON."),
        (["{metric}", "--cases", "{two_cases}"], "has 2 cases; the contract check needs 3"),
        ([], "the following arguments are required"),
    ],
)
def test_usage_errors_exit_2_with_a_clear_message(metric, tmp_path, args, message):
    bad_cases = tmp_path / "bad.jsonl"
    bad_cases.write_text('{"input": {}, "output": 1}\n{not json}\n{"input": {}, "output": 1}\n')
    two_cases = tmp_path / "two.jsonl"
    two_cases.write_text('{"input": {}, "output": 1}\n{"input": {}, "output": 2}\n')
    values = {"metric": metric(EXACT_MATCH), "bad_cases": bad_cases, "two_cases": two_cases}
    result = check_metric(*[arg.format(**values) for arg in args])
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_usage_errors_are_localized(metric):
    result = check_metric("/nonexistent/metric.py", "--language", "es")
    assert result.returncode == 2
    assert "no existe" in result.stderr


def test_a_dspy_metric_is_told_what_it_is_and_offered_convert(metric):
    source = (
        "import dspy\n\n"
        "def metric(example, pred, trace=None):\n"
        "    return dspy.Prediction(score=float(pred.answer == example.answer), feedback='ok')\n"
    )
    result = check_metric(metric(source), "--json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["looks_like"] == {"kind": "dspy_metric", "convertible": True}
    assert report["looks_like_message"].startswith("This file is a metric written for DSPy.")
    assert "Convert to the contract" in report["looks_like_message"]
