"""The minibatch size through /api/v1/runs/drafts: the wizard's name, limits and words,
and the draft's minibatch gate (the wizard's warning) in its JSON."""

from __future__ import annotations

import pytest

from submissions.models import Draft
from submissions.services import dataset_create
from tests import quiz
from tests.api.conftest import Api, make_token
from tests.api.test_api_runs import draft_body, made_draft
from tests.submissions.test_minibatch_wizard import NOISY, PLAIN, WARNING, WARNING_ES
from tests.submissions.test_wizard_projection import evaluate

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset(owner):
    return dataset_create(owner=owner, filename="capitals.jsonl", data=quiz.jsonl())


def test_a_draft_takes_the_minibatch_size(api, dataset, session_models):
    made = made_draft(api, dataset, minibatch=5)
    assert made["minibatch"] == 5
    assert Draft.objects.get(pk=made["id"]).minibatch == 5
    # The whole body again, without it: the default, as a new draft has.
    replaced = api.put(f"/runs/drafts/{made['id']}", draft_body(dataset))
    assert replaced.status_code == 200, replaced.content.decode()
    assert replaced.json()["minibatch"] == 3


@pytest.mark.parametrize(
    "value, code, said",
    [
        (0, "min_value", "Ensure this value is greater than or equal to 1."),
        (51, "max_value", "Ensure this value is less than or equal to 50."),
    ],
)
def test_a_size_out_of_bounds_is_refused_as_the_page_refuses_it(
    api,
    dataset,
    session_models,
    value,
    code,
    said,
):
    response = api.post("/runs/drafts", draft_body(dataset, minibatch=value))
    assert response.status_code == 422, response.content.decode()
    body = response.json()
    assert (body["code"], body["field"]) == (code, "minibatch")
    assert said in body["message"]
    assert not Draft.objects.exists()


def test_the_draft_says_when_the_minibatch_comparison_is_a_coin_toss(
    owner,
    api,
    dataset,
    session_models,
):
    made = made_draft(api, dataset)
    evaluation = evaluate(Draft.objects.get(pk=made["id"]), summary=NOISY)
    gate = api.get(f"/runs/drafts/{made['id']}").json()["minibatch_gate"]
    assert gate["measured"] is True and gate["evaluation"] == evaluation.pk
    assert gate["coin_toss"] is True and gate["minibatch_for"] == 12
    assert gate["right_call"] == pytest.approx(0.740697, abs=1e-6)
    assert gate["message"] == WARNING
    spanish = Api(make_token(owner), "es").get(f"/runs/drafts/{made['id']}").json()
    assert spanish["minibatch_gate"]["message"] == WARNING_ES


def test_a_quiet_enough_gate_says_its_chance(api, dataset, session_models):
    made = made_draft(api, dataset, minibatch=12)
    evaluate(Draft.objects.get(pk=made["id"]), summary=NOISY)
    gate = api.get(f"/runs/drafts/{made['id']}").json()["minibatch_gate"]
    assert gate["coin_toss"] is False and gate["minibatch"] == 12
    assert gate["message"] == (
        "At a minibatch of 12, a candidate better by 0.1 wins the minibatch comparison 90% "
        "of the time."
    )


def test_a_metric_that_calls_no_model_has_no_gate(api, dataset, session_models):
    made = made_draft(api, dataset)
    evaluate(Draft.objects.get(pk=made["id"]), summary=PLAIN)
    assert api.get(f"/runs/drafts/{made['id']}").json()["minibatch_gate"] is None
