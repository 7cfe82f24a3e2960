"""Labelling fixtures: alice owns a dataset (and an evaluation of it), carol is invited,
bob is an outsider."""

from __future__ import annotations

import pytest

from evaluations.models import Evaluation, EvaluationCase
from labelling import services
from submissions import services as submit_services

CSV = (
    "question,response,expected,id\n"
    "What is 2+2?,4,4,a\n"
    "Capital of France?,Lyon,Paris,b\n"
    '=HYPERLINK("x"),yes,yes,c\n'
    "Colour of the sky?,blue,blue,d\n"
    "Largest planet?,Saturn,Jupiter,e\n"
)


@pytest.fixture
def invitee(django_user_model):
    return django_user_model.objects.create_user(username="carol", password="carol-pass-123")


@pytest.fixture
def dataset(owner):
    return submit_services.dataset_create(owner=owner, filename="quiz.csv", data=CSV.encode())


@pytest.fixture
def evaluation(owner, dataset):
    """A finished evaluation of rows 1, 3 and 4 (not 0 or 2) with a score and feedback each."""
    evaluation = Evaluation.objects.create(
        owner=owner,
        dataset=dataset,
        source="x",
        status=Evaluation.Status.DONE,
        roles={"question": "input", "response": "ignore", "expected": "output", "id": "ignore"},
        recorded_column="response",
        total=3,
        done=3,
    )
    for index, (row, score) in enumerate([(1, 0.25), (3, 1.0), (4, 0.5)]):
        EvaluationCase.objects.create(
            evaluation=evaluation,
            index=index,
            row=row,
            file_row=row + 2,
            status="valid",
            score=score,
            feedback=f"feedback of row {row}",
        )
    return evaluation


@pytest.fixture
def labelling(owner, dataset):
    return services.labelling_create(
        owner=owner,
        dataset=dataset,
        input_columns=["question"],
        output_column="response",
        expected_column="expected",
    )


@pytest.fixture
def scored(owner, dataset, evaluation):
    """A labelling of the evaluation's cases."""
    return services.labelling_create(
        owner=owner,
        dataset=dataset,
        evaluation=evaluation,
        input_columns=["question"],
        output_column="response",
        expected_column="expected",
    )


@pytest.fixture
def shared(labelling, invitee):
    services.invitation_create(labelling, invitee)
    return labelling


def url(labelling, tail: str = "", language: str = "en") -> str:
    return f"/{language}/labellings/{labelling.pk}/{tail}"
