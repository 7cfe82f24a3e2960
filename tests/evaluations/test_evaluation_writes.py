"""What the worker writes of each case: its own inserts (evaluations.execution.CaseInserts)
store the same values the ORM would, and the case column's text is json.dumps' own, long
values cut as before."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from contract.cases import Case
from contract.evaluation import Scored
from contract.results import CaseResult
from evaluations.execution import (
    CASE_VALUE_LIMIT,
    FEEDBACK_LIMIT,
    CaseInserts,
    Encoded,
    case_row,
)
from evaluations.models import Evaluation, EvaluationCase
from tests.evaluations.evaluation_data import make_dataset

pytestmark = pytest.mark.django_db

LONG = "x" * (CASE_VALUE_LIMIT + 500)


def _scored() -> list[Scored]:
    def result(index: int, **fields) -> CaseResult:
        values = {"status": "valid", "score": 0.5, "feedback": "Expected 'a', got 'b'."}
        values.update(fields)
        return CaseResult(index=index, duration_ms=1.25, **values)

    return [
        Scored(
            0,
            Case({"question": '¿Qué pasó? हिंदी "quoted"\n'}, "billing", {"label": "billing"}),
            result(0, score=1.0, feedback="Correct.", scores={"f1": 1.0}),
            None,
            "billing",
            3.5,
        ),
        Scored(
            1,
            Case({"question": "q1"}, LONG, {"nested": {"a": [1, 2.5, None, True], "b": "é"}}),
            result(
                1,
                feedback="Token F1 0.50: missing «factura», सही नहीं.",
                predictor_feedback={"first": "Quote «factura».", "second.predict": LONG},
            ),
            None,
            LONG,
            4.0,
        ),
        Scored(
            2,
            Case({"question": "q2", "n": 3}, {"dict": ["output"]}, None),
            result(
                2,
                status="error",
                score=None,
                feedback=None,
                problem="exception",
                exception={"type": "KeyError", "message": "'label'"},
                traceback=[{"line": 3, "function": "score", "text": "x['label']"}],
                stderr="Traceback...",
            ),
            result(2, score=0.25),
            {"dict": ["output"]},
            5.0,
        ),
        Scored(3, Case({"question": "q3"}, None, None), result(3, score=0.0), None, None, 1.0),
    ]


def _stored(evaluation: Evaluation) -> list[dict]:
    return [
        {k: v for k, v in row.items() if k not in ("id", "evaluation_id")}
        for row in EvaluationCase.objects.filter(evaluation=evaluation).order_by("index").values()
    ]


def test_the_workers_inserts_store_what_the_orm_would(owner):
    dataset = make_dataset(owner, 4)
    by_worker = Evaluation.objects.create(owner=owner, dataset=dataset, source="", total=4)
    by_orm = Evaluation.objects.create(owner=owner, dataset=dataset, source="", total=4)
    rows = [case_row(by_worker.pk, scored, scored.index, scored.index + 2) for scored in _scored()]
    CaseInserts().insert(rows)

    def as_values(row: dict) -> dict:
        values = {**row, "evaluation_id": by_orm.pk}
        return {k: json.loads(v) if isinstance(v, Encoded) else v for k, v in values.items()}

    EvaluationCase.objects.bulk_create([EvaluationCase(**as_values(row)) for row in rows])
    assert _stored(by_worker) == _stored(by_orm)


def test_the_case_column_is_json_dumps_text_with_long_values_cut(owner):
    dataset = make_dataset(owner, 4)
    evaluation = Evaluation.objects.create(owner=owner, dataset=dataset, source="", total=4)
    scored = _scored()
    CaseInserts().insert([case_row(evaluation.pk, s, s.index, s.index + 2) for s in scored])
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {connection.ops.quote_name('case')} FROM {EvaluationCase._meta.db_table} "
            "WHERE evaluation_id = %s ORDER BY " + connection.ops.quote_name("index"),
            [evaluation.pk],
        )
        texts = [text for (text,) in cursor.fetchall()]
    cut = json.dumps(LONG)[: CASE_VALUE_LIMIT - 1] + "…"
    wanted = [
        {
            "input": s.case.input,
            "output": cut if s.output == LONG else s.output,
            "expected": s.case.expected,
        }
        for s in scored
    ]
    if connection.vendor == "sqlite":
        # Stored as text: the very text json.dumps makes of the whole.
        assert texts == [json.dumps(case, ensure_ascii=False) for case in wanted]
    stored = [row["case"] for row in _stored(evaluation)]
    assert stored == wanted
    assert stored[1]["output"].startswith('"xxx') and len(stored[1]["output"]) == CASE_VALUE_LIMIT


def test_each_predictors_feedback_is_stored_cut_as_the_feedback_is(owner):
    dataset = make_dataset(owner, 4)
    evaluation = Evaluation.objects.create(owner=owner, dataset=dataset, source="", total=4)
    CaseInserts().insert([case_row(evaluation.pk, s, s.index, s.index + 2) for s in _scored()])
    stored = [row["predictor_feedback"] for row in _stored(evaluation)]
    assert stored == [
        None,
        {"first": "Quote «factura».", "second.predict": LONG[:FEEDBACK_LIMIT]},
        None,
        None,
    ]
