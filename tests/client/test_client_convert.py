"""`skynet convert` against the real server: the converted file on stdout, the notes on
stderr, --write in place, and --metric where a file holds several."""

from __future__ import annotations

import pytest

from tests.api.test_api_convert import DSPY, TWO

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def test_it_prints_the_conversion_and_writes_it_when_asked(cli, live_server, tmp_path):
    metric = tmp_path / "metric.py"
    metric.write_text(DSPY)
    printed = cli("convert", "metric.py")
    assert printed.returncode == 0, printed.stderr
    assert "def score(input, output, expected=None):" in printed.stdout
    assert metric.read_text() == DSPY  # printed only
    written = cli("convert", "metric.py", "--write")
    assert written.returncode == 0, written.stderr
    assert "def score(input, output, expected=None):" in metric.read_text()
    assert written.stdout == ""


def test_where_several_could_be_the_metric_it_says_so_and_takes_a_pick(cli, live_server, tmp_path):
    (tmp_path / "metric.py").write_text(TWO)
    asked = cli("convert", "metric.py")
    assert asked.returncode == 0
    assert "Several functions could be the metric (exact, loose)" in asked.stderr
    picked = cli("convert", "metric.py", "--function", "exact", "--language", "es")
    assert "def score(input, output, expected=None):" in picked.stdout
    assert "def loose(example, pred, trace=None):" in picked.stdout
    assert "loose" in picked.stderr and "Several functions" not in picked.stderr


def test_a_gepa_evaluator_class_converted_passes_the_check_in_the_worker(
    cli, celery_worker_process, tmp_path
):
    from tests.public_metrics import METRICS

    (entry,) = [e for e in METRICS if e.name == "gepa_contains_answer"]
    (tmp_path / "metric.py").write_text(entry.file.read_text())
    # A user's columns, not gepa's key names: gepa's data is built as its adapter does.
    (tmp_path / "cases.jsonl").write_text(
        '{"input": {"question": "Capital of Peru?"}, "output": "It is Lima.", '
        '"expected": {"answer": "Lima", "why": "Since 1535."}}\n'
        '{"input": {"question": "Capital of Chile?"}, "output": "Valparaiso", '
        '"expected": {"answer": "Santiago", "why": "Since 1541."}}\n'
        '{"input": {"question": "2 + 2?"}, "output": "", "expected": {"answer": "4", "why": "Sums."}}\n'
    )
    before = cli("check", "metric.py", "--cases", "cases.jsonl")
    assert before.returncode == 1
    assert "This file is an evaluator written for gepa." in before.stdout
    assert "fix: skynet convert metric.py --write" in before.stdout
    assert cli("convert", "metric.py", "--write").returncode == 0
    after = cli("check", "metric.py", "--cases", "cases.jsonl")
    assert after.returncode == 0, after.stdout + after.stderr
    assert "why: Since 1541." in after.stdout  # the other columns, as gepa's context


def test_a_contract_signature_returning_a_prediction_is_offered_convert_and_then_passes(
    cli, celery_worker_process, tmp_path
):
    (tmp_path / "metric.py").write_text(
        "import dspy\n\n"
        "def score(input, output, expected=None):\n"
        '    right = output == expected["label"]\n'
        "    return dspy.Prediction(score=float(right), feedback=f\"Expected {expected['label']}.\")\n"
    )
    before = cli("check", "metric.py")
    assert before.returncode == 1
    assert "This file has the contract's score(input, output, expected)" in before.stdout
    assert "fix: skynet convert metric.py --write" in before.stdout
    assert cli("convert", "metric.py", "--write").returncode == 0
    assert cli("check", "metric.py").returncode == 0
