"""`python manage.py convert_metric`: what it prints, its exit codes, --json and --language,
as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.utils import translation

from contract.convert import NOTE_CODES
from tests.conftest import ROOT
from wording.convert import NOTES, note_words

FEEDBACK_METRIC = """\
import dspy


def metric(example, pred, trace=None, pred_name=None, pred_trace=None):
    if pred.answer == example.answer:
        return dspy.Prediction(score=1.0, feedback="Correct.")
    return dspy.Prediction(score=0.0, feedback=f"Expected {example.answer}.")
"""

FEEDBACK_CONVERTED = """\
def score(input, output, expected=None):
    # DSPy's gold example held the case's input columns and its expected values.
    example = {**input, **(expected or {})}
    # A DSPy prediction's empty field was ""; the workbench gives None.
    output = "" if output is None else output
    if output == example["answer"]:
        return 1.0, {"feedback": "Correct."}
    return 0.0, {"feedback": f"Expected {example['answer']}."}
"""

BARE_SCORE = """\
def validate_answer(example, pred, trace=None):
    return example.answer.lower() == pred.answer.lower()
"""


def convert_metric(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "convert_metric", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def metric(tmp_path):
    def write(source: str | bytes, name: str = "metric.py") -> str:
        path = tmp_path / name
        if isinstance(source, bytes):
            path.write_bytes(source)
        else:
            path.write_text(source)
        return str(path)

    return write


def test_a_metric_it_converts_whole_is_printed_and_exits_0(metric):
    result = convert_metric(metric(FEEDBACK_METRIC))
    assert result.returncode == 0, result.stderr
    assert result.stdout == FEEDBACK_CONVERTED
    assert result.stderr == ""


def test_a_metric_already_in_the_contract_is_printed_as_it_is_and_exits_0(metric):
    result = convert_metric(metric(FEEDBACK_CONVERTED))
    assert result.returncode == 0, result.stderr
    assert result.stdout == FEEDBACK_CONVERTED


def test_what_it_could_not_decide_exits_2_with_each_note_on_stderr(metric):
    path = metric(BARE_SCORE)
    result = convert_metric(path)
    assert result.returncode == 2
    assert result.stdout.startswith("def score(input, output, expected=None):\n")
    assert '{"feedback": ""}' in result.stdout
    # The note names the line of the return, as compilers and linters do.
    lines = result.stdout.splitlines()
    number = next(i for i, line in enumerate(lines, start=1) if line.lstrip().startswith("return"))
    assert result.stderr == (
        f"{path}:{number}: This return gives only a score, so its feedback is empty. Write "
        "feedback that says what is wrong and what a correct output looks like.\n"
    )


def test_json_gives_the_source_framework_and_worded_notes(metric):
    result = convert_metric(metric(BARE_SCORE), "--json")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert set(report) == {"source", "framework", "changed", "notes"}
    assert (report["framework"], report["changed"]) == ("dspy", True)
    assert report["source"].startswith("def score(input, output, expected=None):")
    (note,) = report["notes"]
    assert set(note) == {"code", "line", "params", "message"}
    assert note["code"] == "feedback_needed" and note["params"] == {}
    assert note["message"].startswith("This return gives only a score")


def test_json_of_a_whole_conversion_has_no_notes_and_exits_0(metric):
    result = convert_metric(metric(FEEDBACK_METRIC), "--json")
    assert result.returncode == 0
    report = json.loads(result.stdout)
    assert report["source"] == FEEDBACK_CONVERTED and report["notes"] == []


def test_a_file_without_a_metric_exits_2_and_is_printed_unchanged(metric):
    source = "def helper(text):\n    return text.strip()\n"
    path = metric(source)
    result = convert_metric(path)
    assert result.returncode == 2
    assert result.stdout == source
    assert result.stderr.startswith(f"{path}: No metric was found")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"def metric(example, pred:\n    return 1\n", "Syntax error at line 1, column 11"),
        (b"x = 1\nlabel = '\xe9t\xe9'\n", "is not UTF-8 text (bad byte at line 2, column 10)"),
    ],
)
def test_a_file_it_cannot_read_exits_2_with_the_reason(metric, content, message):
    result = convert_metric(metric(content))
    assert result.returncode == 2
    assert result.stdout == ""
    assert message in result.stderr


def test_a_missing_file_exits_2(tmp_path):
    result = convert_metric(str(tmp_path / "nope.py"))
    assert result.returncode == 2
    assert "does not exist" in result.stderr


def test_language_es_words_the_errors_and_the_notes_in_spanish(metric):
    broken = convert_metric(metric(b"def metric(example, pred:\n"), "--language", "es")
    assert broken.returncode == 2
    assert "Error de sintaxis en la línea 1" in broken.stderr

    result = convert_metric(metric(BARE_SCORE), "--language", "es", "--json")
    assert result.returncode == 2
    (note,) = json.loads(result.stdout)["notes"]
    with translation.override("es"):
        assert note["message"] == note_words("feedback_needed", {})
    assert note["message"] in result.stderr


def test_every_note_code_has_words():
    assert set(NOTES) == set(NOTE_CODES)
    for code in NOTE_CODES:
        sentence = note_words(
            code,
            {
                "name": "metric",
                "names": ["a", "b"],
                "fields": ["answer", "reasoning"],
                "method": "inputs",
                "chosen": "metric",
                "lines": ["import json"],
            },
        )
        assert "Unknown problem" not in sentence and "?" not in sentence, code
