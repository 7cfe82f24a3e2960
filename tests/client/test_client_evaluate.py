"""`skynet evaluate` against the real server, worker and Redis: a dataset of recorded
outputs scored, the mean in its JSON the evaluation's own, --min-mean's exit code, a rerun
that makes neither a new metric nor a new version, and a file the server refuses."""

from __future__ import annotations

import csv

import pytest
from django.db.models import Avg
from django.utils import translation

from evaluations.models import Evaluation, EvaluationCase
from metrics.models import Metric, MetricVersion
from submissions.models import Dataset
from tests.evaluations.evaluation_data import LABEL_METRIC, LABELS, output_of
from wording import words

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

ROWS = 30


def write_data(path) -> None:
    with path.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["question", "label", "output"])
        for i in range(ROWS):
            out.writerow([f"question {i}", LABELS[i % 4], output_of(i)])


def test_every_case_counts_and_min_mean_gates_the_valid_ones(
    cli, owner, celery_worker_process, tmp_path
):
    (tmp_path / "metric.py").write_text(LABEL_METRIC)
    write_data(tmp_path / "tickets.csv")
    # 3 of 30 cases are not valid: with no allowance the evaluation fails, whatever the
    # mean of the 27 valid ones.
    code, evaluation = cli.json(
        "evaluate", "metric.py", "tickets.csv", "--all", "--download", "cases.csv"
    )
    assert code == 1, evaluation
    stored = Evaluation.objects.get(pk=evaluation["id"])
    assert stored.status == Evaluation.Status.DONE and stored.total == ROWS
    valid = EvaluationCase.objects.filter(evaluation=stored, status="valid")
    mean = valid.aggregate(mean=Avg("score"))["mean"]
    summary = evaluation["summary"]
    assert summary["mean"] == pytest.approx(mean) == stored.summary["score"]["mean"]
    assert (summary["valid"], summary["invalid"]) == (ROWS - 3, 3)
    assert evaluation["gate"] == {
        "passed": False,
        "reason": "cases_failed",
        "mean": summary["mean"],
        "min_mean": None,
        "cases": ROWS,
        "failed": 3,
        "max_invalid": 0,
    }
    # The server's verdict, the page's words: the largest failure group is the reason.
    assert evaluation["verdict"]["code"] == "cases_failed"
    assert evaluation["verdict"]["failed"] == 3 and not evaluation["verdict"]["passed"]
    assert evaluation["verdict"]["text"].startswith("3 of 30 cases failed: score raised KeyError")
    assert evaluation["page"].endswith(f"/evaluations/{stored.pk}/")
    with (tmp_path / "cases.csv").open(newline="") as handle:
        assert len(list(csv.DictReader(handle))) == ROWS
    metric = Metric.objects.get(owner=owner)
    assert metric.name == "metric.py" and stored.metric_version.metric == metric

    # Allowed 3 (or 10% of 30), it passes; allowed 2 (or 9%), it does not.
    for allowance, expected in (("3", 0), ("10%", 0), ("2", 1), ("9%", 1)):
        done = cli("evaluate", "metric.py", "tickets.csv", "--all", "--max-invalid", allowance)
        assert done.returncode == expected, (allowance, done.stdout, done.stderr)
    passed = cli("evaluate", "metric.py", "tickets.csv", "--all", "--max-invalid", "3")
    assert passed.stdout.startswith(f"PASSED  mean {mean:.4g} · 3 of 30 cases failed"), (
        passed.stdout
    )
    assert "(--max-invalid allows 3)" in passed.stdout.splitlines()[0]

    # Again, with a bar the mean does not reach: the same metric and version are used.
    below = cli(
        "evaluate", "metric.py", "tickets.csv", "--all", "--max-invalid", "3", "--min-mean", "0.9"
    )
    assert below.returncode == 1, below.stderr
    assert below.stdout.startswith(f"FAILED  mean {mean:.4g} is below --min-mean 0.9")
    # The cases that were not valid are told by how they ended; the valid ones once.
    assert "  27 valid, 3 not valid of 30 cases (invalid 1, error 2)\n" in below.stdout, (
        below.stdout
    )
    # The group of bare numbers carries the return line that keeps the contract.
    assert "      fix: return 0.5, {" in below.stdout, below.stdout
    assert Metric.objects.filter(owner=owner).count() == 1
    assert MetricVersion.objects.filter(metric=metric).count() == 1
    # The same file is the dataset uploaded the first time, not a second upload.
    assert Dataset.objects.filter(owner=owner).count() == 1
    assert "is tickets.csv already" in below.stderr
    assert cli.token not in below.stdout + below.stderr

    # -q keeps the one line that says why.
    quiet = cli("evaluate", "metric.py", "tickets.csv", "--all", "-q")
    assert quiet.returncode == 1
    assert quiet.stdout.startswith("FAILED  3 of 30 cases failed: score raised KeyError")
    assert len(quiet.stdout.splitlines()) == 1, quiet.stdout


RAISES = """
def score(input, output, expected=None):
    raise TypeError("no score today")
"""


def test_an_evaluation_whose_every_case_raises_fails_with_no_mean(
    cli, celery_worker_process, tmp_path
):
    (tmp_path / "metric.py").write_text(RAISES)
    write_data(tmp_path / "tickets.csv")
    # Even an allowance of every case cannot make a mean of none a pass.
    code, evaluation = cli.json(
        "evaluate", "metric.py", "tickets.csv", "--sample", "10", "--max-invalid", "100%"
    )
    assert code == 1
    assert evaluation["summary"]["mean"] is None
    assert evaluation["gate"]["reason"] == "no_mean"
    assert evaluation["verdict"]["headline"] == "All 10 cases failed"
    text = cli("evaluate", "metric.py", "tickets.csv", "--sample", "10")
    assert text.returncode == 1
    assert text.stdout.startswith(
        "FAILED  All 10 cases failed: score raised TypeError: no score today"
    ), text.stdout


def test_a_file_the_server_refuses_exits_2_with_its_words(cli, owner, tmp_path):
    (tmp_path / "metric.py").write_text(LABEL_METRIC)
    (tmp_path / "book.csv").write_bytes(b"PK\x03\x04 a workbook, not a table")
    done = cli("evaluate", "metric.py", "book.csv", "--language", "es")
    assert done.returncode == 2
    with translation.override("es"):
        assert words("not_text", {"kind": "zip"}, family="dataset") in done.stderr
    assert not Dataset.objects.exists() and not Metric.objects.exists()
