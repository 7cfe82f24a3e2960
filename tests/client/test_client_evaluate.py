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


def test_an_evaluation_passes_and_then_falls_below_min_mean(
    cli, owner, celery_worker_process, tmp_path
):
    (tmp_path / "metric.py").write_text(LABEL_METRIC)
    write_data(tmp_path / "tickets.csv")
    code, evaluation = cli.json(
        "evaluate", "metric.py", "tickets.csv", "--all", "--download", "cases.csv"
    )
    assert code == 0, evaluation
    stored = Evaluation.objects.get(pk=evaluation["id"])
    assert stored.status == Evaluation.Status.DONE and stored.total == ROWS
    valid = EvaluationCase.objects.filter(evaluation=stored, status="valid")
    mean = valid.aggregate(mean=Avg("score"))["mean"]
    summary = evaluation["summary"]
    assert summary["mean"] == pytest.approx(mean) == stored.summary["score"]["mean"]
    assert (summary["valid"], summary["invalid"]) == (ROWS - 3, 3)
    assert evaluation["verdict"] == {
        "passed": True,
        "reason": "done",
        "mean": summary["mean"],
        "min_mean": None,
    }
    assert evaluation["page"].endswith(f"/evaluations/{stored.pk}/")
    with (tmp_path / "cases.csv").open(newline="") as handle:
        assert len(list(csv.DictReader(handle))) == ROWS
    metric = Metric.objects.get(owner=owner)
    assert metric.name == "metric.py" and stored.metric_version.metric == metric

    # Again, with a bar the mean does not reach: the same metric and version are used.
    below = cli("evaluate", "metric.py", "tickets.csv", "--all", "--min-mean", "0.9")
    assert below.returncode == 1, below.stderr
    assert below.stdout.startswith(f"BELOW  mean {mean:.4g} is below --min-mean 0.9")
    # The cases that were not valid are told by how they ended; the valid ones once.
    assert "  27 valid, 3 not valid of 30 cases (invalid 1, error 2)\n" in below.stdout, (
        below.stdout
    )
    assert Metric.objects.filter(owner=owner).count() == 1
    assert MetricVersion.objects.filter(metric=metric).count() == 1
    # The same file is the dataset uploaded the first time, not a second upload.
    assert Dataset.objects.filter(owner=owner).count() == 1
    assert "is tickets.csv already" in below.stderr
    assert Evaluation.objects.filter(owner=owner, status=Evaluation.Status.DONE).count() == 2
    assert cli.token not in below.stdout + below.stderr


def test_a_file_the_server_refuses_exits_2_with_its_words(cli, owner, tmp_path):
    (tmp_path / "metric.py").write_text(LABEL_METRIC)
    (tmp_path / "book.csv").write_bytes(b"PK\x03\x04 a workbook, not a table")
    done = cli("evaluate", "metric.py", "book.csv", "--language", "es")
    assert done.returncode == 2
    with translation.override("es"):
        assert words("not_text", {"kind": "zip"}, family="dataset") in done.stderr
    assert not Dataset.objects.exists() and not Metric.objects.exists()
