"""What CI systems read of `skynet check` and `skynet evaluate`, run as a subprocess
against the real server, worker and Redis: a JUnit XML file that validates against the
JUnit schema, a Markdown summary (to a file, or appended to $GITHUB_STEP_SUMMARY), and
GitHub's annotations pointing at the metric's line."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from tests.client.test_client_evaluate import write_data
from tests.evaluations.evaluation_data import LABEL_METRIC

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

SCHEMA = xmlschema.XMLSchema(Path(__file__).with_name("data") / "junit.xsd")

# Case 2 (output "b") returns a bare number on line 5: a return-value problem with a fix.
BARE_ON_LINE_5 = """\
def score(input, output, expected=None):
    if output == expected["label"]:
        return 1.0, {"feedback": "Correct."}
    if output == "b":
        return 0.25
    return 0.0, {"feedback": f"Expected {expected['label']!r}, got {output!r}."}
"""

CASES = "\n".join(
    [
        '{"input": {"q": "a"}, "output": "x", "expected": {"label": "x"}}',
        '{"input": {"q": "b"}, "output": "b", "expected": {"label": "z"}}',
        '{"input": {"q": "c"}, "output": "w", "expected": {"label": "w"}}',
    ]
)


def _junit(path: Path) -> ET.Element:
    SCHEMA.validate(str(path))  # raises, naming the element, when it does not
    return ET.parse(path).getroot()


def test_a_failing_check_writes_junit_a_summary_and_annotations(
    cli, celery_worker_process, tmp_path
):
    (tmp_path / "metric.py").write_text(BARE_ON_LINE_5)
    (tmp_path / "cases.jsonl").write_text(CASES + "\n")
    step_summary = tmp_path / "step-summary.md"
    step_summary.write_text("# Earlier steps\n")
    done = cli(
        "check",
        "metric.py",
        "--cases",
        "cases.jsonl",
        "--junit",
        "report.xml",
        GITHUB_ACTIONS="true",
        GITHUB_STEP_SUMMARY=str(step_summary),
    )
    assert done.returncode == 1, done.stderr
    root = _junit(tmp_path / "report.xml")
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    # One testcase per stage and per case.
    assert [c.get("classname") for c in cases].count("skynet.check.case") == 3
    assert [c.get("classname") for c in cases].count("skynet.check.stage") >= 3
    failed = [c for c in cases if c.find("failure") is not None]
    assert [c.get("name") for c in failed if c.get("classname") == "skynet.check.case"] == [
        "case 2"
    ]
    failure = next(c for c in failed if c.get("name") == "case 2").find("failure")
    assert failure.get("type") == "not_a_pair"
    assert failure.text.startswith("metric.py:5\n")
    assert "fix: return 0.25, {" in failure.text
    assert int(suite.get("failures")) == len(failed) and int(suite.get("tests")) == len(cases)

    # GitHub's annotation marks line 5 of metric.py.
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert any(line.startswith("::error file=metric.py,line=5,title=case 2::") for line in errors)
    # The summary is appended after what earlier steps wrote.
    summary = step_summary.read_text()
    assert summary.startswith("# Earlier steps\n### ❌ FAILED")
    assert "| 2 | Invalid |" in summary and "return 0.25, {" in summary
    assert cli.token not in done.stdout + done.stderr + summary


def test_a_passing_check_has_no_failure_and_no_annotation(cli, celery_worker_process, tmp_path):
    (tmp_path / "metric.py").write_text(BARE_ON_LINE_5.replace('"b"', '"never"'))
    (tmp_path / "cases.jsonl").write_text(CASES + "\n")
    done = cli(
        "check",
        "metric.py",
        "--cases",
        "cases.jsonl",
        "--junit",
        "report.xml",
        "--summary",
        "summary.md",
        GITHUB_ACTIONS="true",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    root = _junit(tmp_path / "report.xml")
    assert root.find("testsuite").get("failures") == "0"
    assert not [line for line in done.stdout.splitlines() if line.startswith("::")]
    assert (tmp_path / "summary.md").read_text().startswith("### ✅ PASSED")


def test_an_evaluation_writes_one_testcase_a_case_and_a_summary(
    cli, celery_worker_process, tmp_path
):
    (tmp_path / "metric.py").write_text(LABEL_METRIC)
    write_data(tmp_path / "tickets.csv")
    done = cli(
        "evaluate",
        "metric.py",
        "tickets.csv",
        "--all",
        "--junit",
        "report.xml",
        "--summary",
        "summary.md",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    suite = _junit(tmp_path / "report.xml").find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 30 and suite.get("failures") == "3"
    failed = {c.get("name"): c.find("failure") for c in cases if c.find("failure") is not None}
    assert set(failed) == {"case 6 (row 7)", "case 11 (row 12)", "case 21 (row 22)"}
    assert failed["case 11 (row 12)"].get("type") == "exception"
    assert "fix: return 0.5, {" in failed["case 6 (row 7)"].text
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("### ❌ FAILED  3 of 30 cases failed: score raised KeyError")
    assert "| 30 | 27 | 3 |" in summary
    assert "/evaluations/" in summary


# As metrics written for DSPy GEPA are published (the tutorials' and dspy's own, see
# tests/public_metrics/): no `score`, a DSPy metric on line 4.
DSPY_SHAPED = """\
import dspy


def metric(example, pred, trace=None, pred_name=None, pred_trace=None):
    return dspy.Prediction(score=float(example.answer == pred.answer), feedback="")
"""


def test_a_metric_written_for_dspy_is_annotated_where_it_is_defined(
    cli, celery_worker_process, tmp_path
):
    (tmp_path / "metric.py").write_text(DSPY_SHAPED)
    done = cli("check", "metric.py", "--junit", "report.xml", GITHUB_ACTIONS="true")
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert errors and errors[0].startswith("::error file=metric.py,line=4,title=Load::"), errors
    load = next(
        c for c in _junit(tmp_path / "report.xml").iter("testcase") if c.get("name") == "Load"
    )
    assert load.find("failure").text.startswith("metric.py:4\n")
