"""An evaluation's cases as CSV and JSON Lines: every case, streamed as it is read, a
formula-like cell made harmless for a spreadsheet."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.db import connection
from django.http import StreamingHttpResponse
from django.test.utils import CaptureQueriesContext

from evaluations import downloads
from evaluations.models import Evaluation, EvaluationCase
from tests.evaluations.test_evaluation_pages import make_case, make_evaluation

pytestmark = pytest.mark.django_db


@pytest.fixture
def evaluation(owner):
    evaluation = make_evaluation(owner, status=Evaluation.Status.DONE, total=3, done=3)
    make_case(
        evaluation,
        0,
        score=0.5,
        feedback='=HYPERLINK("http://example.com","click")',
        scores={"format": 1.0, "fields": 0.25},
        metric_ms=3.5,
        total_ms=12.0,
        metric_usd=0.0001,
    )
    make_case(
        evaluation,
        1,
        status="error",
        problem="exception",
        exception_type="KeyError",
        score=None,
        feedback="",
        total_ms=7.0,
    )
    make_case(
        evaluation,
        2,
        score=-1.5,
        feedback="@SUM(A1:A2) is what it said; also ünïcödé and हिन्दी.",
        second_score=0.0,
        differs=True,
    )
    return evaluation


def _content(response) -> str:
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content).decode("utf-8")


def test_the_csv_has_every_case_in_the_documented_columns(owner_client, evaluation):
    response = owner_client.get(f"/en/evaluations/{evaluation.pk}/download.csv")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert (
        response["Content-Disposition"] == f'attachment; filename="evaluation-{evaluation.pk}.csv"'
    )
    rows = list(csv.DictReader(io.StringIO(_content(response))))
    assert (
        list(rows[0])
        == list(downloads.COLUMNS)
        == [
            "index",
            "row",
            "status",
            "problem",
            "exception_type",
            "score",
            "feedback",
            "scores",
            "metric_ms",
            "run_ms",
            "total_ms",
            "task_usd",
            "metric_usd",
            "second_score",
            "differs",
        ]
    )
    assert [row["index"] for row in rows] == ["0", "1", "2"]
    first, second, third = rows
    assert first["row"] == "2" and first["score"] == "0.5" and first["metric_ms"] == "3.5"
    assert json.loads(first["scores"]) == {"format": 1.0, "fields": 0.25}
    assert first["run_ms"] == "" and first["second_score"] == ""
    assert (second["status"], second["problem"], second["exception_type"]) == (
        "error",
        "exception",
        "KeyError",
    )
    assert second["score"] == ""
    assert third["differs"] == "true" and third["second_score"] == "0.0"


def test_a_formula_like_cell_is_neutralised_and_a_negative_number_is_not(owner_client, evaluation):
    rows = list(
        csv.DictReader(
            io.StringIO(_content(owner_client.get(f"/en/evaluations/{evaluation.pk}/download.csv")))
        )
    )
    assert rows[0]["feedback"] == '\'=HYPERLINK("http://example.com","click")'
    assert rows[2]["feedback"].startswith("'@SUM(A1:A2)")
    assert "हिन्दी" in rows[2]["feedback"]
    assert rows[2]["score"] == "-1.5"


def test_the_jsonl_has_one_object_a_case_with_values_as_they_are(owner_client, evaluation):
    response = owner_client.get(f"/en/evaluations/{evaluation.pk}/download.jsonl")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-ndjson")
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="evaluation-{evaluation.pk}.jsonl"'
    )
    lines = _content(response).splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["index"] for r in records] == [0, 1, 2]
    assert list(records[0]) == list(downloads.COLUMNS)
    assert records[0]["scores"] == {"format": 1.0, "fields": 0.25}
    # JSON is no spreadsheet: the feedback is exactly what the metric returned.
    assert records[0]["feedback"] == '=HYPERLINK("http://example.com","click")'
    assert records[1]["score"] is None and records[1]["exception_type"] == "KeyError"
    assert records[2]["differs"] is True and records[2]["score"] == -1.5


def test_the_download_reads_the_cases_as_it_streams_them(owner_client, owner):
    """Nothing is read before the body is: the rows leave as the database hands them over,
    so a large evaluation never sits in memory whole."""
    evaluation = make_evaluation(owner, status=Evaluation.Status.DONE, total=4500, done=4500)
    EvaluationCase.objects.bulk_create(
        [
            EvaluationCase(evaluation=evaluation, index=i, row=i, file_row=i + 2, status="valid")
            for i in range(4500)
        ]
    )
    with CaptureQueriesContext(connection) as queries:
        response = owner_client.get(f"/en/evaluations/{evaluation.pk}/download.jsonl")
        before = [q for q in queries.captured_queries if "evaluationcase" in q["sql"]]
        chunks = iter(response.streaming_content)
        first = next(chunks)
    assert before == []  # the view returned before reading a case
    assert json.loads(first)["index"] == 0
    rest = list(chunks)
    assert len(rest) == 4499
    sql = [q["sql"] for q in queries.captured_queries if "evaluationcase" in q["sql"]]
    assert all('"case"' not in s and '"detail"' not in s for s in sql)


def test_a_download_of_no_cases_is_a_header_only(owner_client, owner):
    evaluation = make_evaluation(owner, status=Evaluation.Status.FAILED, failure="cancelled")
    body = _content(owner_client.get(f"/en/evaluations/{evaluation.pk}/download.csv"))
    assert body == ",".join(downloads.COLUMNS) + "\r\n"
    assert _content(owner_client.get(f"/en/evaluations/{evaluation.pk}/download.jsonl")) == ""


def test_no_other_format_is_offered(owner_client, evaluation):
    assert owner_client.get(f"/en/evaluations/{evaluation.pk}/download.xlsx").status_code == 404
