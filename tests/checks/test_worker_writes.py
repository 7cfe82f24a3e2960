"""The worker's statements on a check's row: the claim hands back what the check needs in
the same statement, the verdict is one write, and both write what the ORM would."""

from __future__ import annotations

import socket

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from checks import worker_writes
from checks.execution import execute_check
from checks.models import Check
from contract.artifacts import Artifact

pytestmark = pytest.mark.django_db

METRIC = """
def score(input, output, expected=None):
    if output == expected["label"]:
        return 1.0, {"feedback": "Correct."}
    return 0.0, {"feedback": f"Expected {expected['label']!r}, got {output!r}."}
"""
CASES = [
    {"input": {"q": "¿a?"}, "output": "x", "expected": {"label": "x"}},
    {"input": {"q": "b"}, "output": "y", "expected": {"label": "x"}},
    {"input": {"q": "c"}, "output": "x", "expected": {"label": "x"}},
]


def test_a_check_reads_and_writes_its_row_in_two_statements(owner):
    """The claim (which also reads the row) and the verdict, then the one read for the
    owner's next queued check (checks.fair_share): no other query on the check's path,
    for a quick check. PostgreSQL reads once more, to see that no other claim of the
    owner's passed at the same moment."""
    check = Check.objects.create(owner=owner, source=METRIC, cases=CASES, timeout_s=20)
    with CaptureQueriesContext(connection) as queries:
        execute_check(check.pk)
    statements = [q["sql"].split()[0].upper() for q in queries.captured_queries]
    expected = ["UPDATE", "UPDATE", "SELECT"]
    if connection.vendor == "postgresql":
        expected.insert(1, "SELECT")
    assert statements == expected, queries.captured_queries
    check.refresh_from_db()
    assert check.status == Check.Status.PASSED and check.failure == ""
    assert [case["status"] for case in check.result["cases"]] == ["valid", "valid", "valid"]
    assert check.result["cases"][1]["feedback"] == "Expected 'x', got 'y'."
    assert check.worker == socket.gethostname()
    assert check.started_at <= check.finished_at == check.heartbeat_at


@pytest.mark.parametrize("returning", [True, False], ids=["returning", "two statements"])
def test_the_claim_hands_back_the_row_once(owner, monkeypatch, returning):
    artifact = Artifact(kind="prompt", content="Say {question}")
    check = Check.objects.create(
        owner=owner,
        source=METRIC,
        cases=CASES,
        timeout_s=17,
        metric_model="m",
        reflection_model="r",
        artifact=artifact.to_dict(),
        task_model="t",
        cancel_requested=True,
    )
    if not returning:
        # A database without UPDATE ... RETURNING: the row is read after the claim. (Set
        # after the row is made: PostgreSQL's cursor has no lastrowid to make it without.)
        monkeypatch.setattr(type(connection.features), "can_return_columns_from_insert", False)
    claimed = worker_writes.claim(check.pk)
    assert claimed is not None and claimed.pk == check.pk
    assert (claimed.source, claimed.cases, claimed.timeout_s) == (METRIC, CASES, 17)
    assert (claimed.metric_model, claimed.reflection_model, claimed.task_model) == ("m", "r", "t")
    assert claimed.artifact_value == artifact and claimed.cancel_requested is True
    row = Check.objects.get(pk=check.pk)
    assert row.status == Check.Status.RUNNING and row.worker == socket.gethostname()
    assert row.started_at == row.heartbeat_at is not None
    # A redelivered message finds it running and gets nothing.
    assert worker_writes.claim(check.pk) is None


def test_the_verdict_leaves_a_check_the_sweep_ended_as_it_is(owner):
    check = Check.objects.create(owner=owner, source=METRIC)
    assert worker_writes.claim(check.pk) is not None
    Check.objects.filter(pk=check.pk).update(status=Check.Status.FAILED, failure="worker_lost")
    written = worker_writes.verdict(
        check.pk, status=Check.Status.PASSED, failure="", result={"passed": True}
    )
    assert written == 0
    row = Check.objects.get(pk=check.pk)
    assert (row.status, row.failure, row.result) == (Check.Status.FAILED, "worker_lost", None)


def test_the_verdict_writes_what_the_orm_would(owner):
    result = {"passed": False, "cases": [{"feedback": 'é "quoted"', "score": 0.5}], "x": None}
    by_worker, by_orm = (Check.objects.create(owner=owner, source=METRIC) for _ in range(2))
    for check in (by_worker, by_orm):
        worker_writes.claim(check.pk)
    worker_writes.verdict(
        by_worker.pk, status=Check.Status.FAILED, failure="cancelled", result=result
    )
    Check.objects.filter(pk=by_orm.pk).update(
        status=Check.Status.FAILED, failure="cancelled", result=result
    )
    fields = ("status", "failure", "result")
    assert Check.objects.values(*fields).get(pk=by_worker.pk) == Check.objects.values(*fields).get(
        pk=by_orm.pk
    )
    written = Check.objects.get(pk=by_worker.pk)
    assert written.finished_at == written.heartbeat_at >= written.started_at
