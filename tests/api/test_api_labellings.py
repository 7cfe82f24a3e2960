"""/api/v1/labellings: the same labelling as the pages, through a token: listing, one
case with the same hiding, a label put, a version; an invitee's and an outsider's reach."""

# The labelling tests' fixtures, imported by name: pytest finds them here.
# ruff: noqa: F401, F811

from __future__ import annotations

import pytest

from labelling import services
from labelling.models import Label
from submissions.models import Dataset
from tests.api.conftest import Api, make_token
from tests.labelling.conftest import (
    dataset,
    evaluation,
    invitee,
    labelling,
    scored,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def carol_api(invitee):
    return Api(make_token(invitee))


def test_the_list_holds_mine_and_those_shared_with_me(api, carol_api, labelling, invitee):
    assert [item["id"] for item in carol_api.get("/labellings").json()] == []
    services.invitation_create(labelling, invitee)
    mine = api.get("/labellings").json()
    shared = carol_api.get("/labellings").json()
    assert [(item["id"], item["mine"]) for item in mine] == [(labelling.pk, True)]
    assert [(item["id"], item["mine"], item["owner"]) for item in shared] == [
        (labelling.pk, False, "alice")
    ]
    assert shared[0]["values"] == [1, 0] and shared[0]["cases"] == 5
    assert shared[0]["next_case"] == 1 and shared[0]["labelled"] == 0


def test_a_case_hides_the_metric_until_labelled_and_a_put_reveals_it(api, scored):
    case = api.get(f"/labellings/{scored.pk}/cases/1").json()
    assert case["row"] == 1 and case["input"] == {"question": "Capital of France?"}
    assert (case["output"], case["expected"]) == ("Lyon", "Paris")
    assert case["label"] is None and case["revealed"] is None
    answer = api.put(f"/labellings/{scored.pk}/labels", {"row": 1, "value": 0, "note": "Lyon"})
    assert answer.status_code == 200
    body = answer.json()
    assert body["label"] == {"value": 0.0, "text": "Fail", "note": "Lyon"}
    assert body["revealed"]["metric"] == {
        "status": "valid",
        "score": 0.25,
        "feedback": "feedback of row 1",
    }
    assert api.get(f"/labellings/{scored.pk}").json()["next_case"] == 2


@pytest.mark.parametrize(
    ("body", "code", "field"),
    [
        ({"row": 0, "value": 3}, "bad_value", "value"),
        ({"row": 99, "value": 1}, "no_case", "row"),
        ({"row": 0, "note": "x"}, "no_label", "value"),
        ({"row": 0, "value": 1, "colour": "red"}, "unknown_field", "colour"),
    ],
)
def test_a_label_the_labelling_does_not_take_is_refused_in_words(api, labelling, body, code, field):
    response = api.put(f"/labellings/{labelling.pk}/labels", body)
    assert response.status_code == 422
    assert (response.json()["code"], response.json()["field"]) == (code, field)
    assert response.json()["message"]
    assert not Label.objects.exists()


def test_an_invitee_labels_but_makes_no_version_and_an_outsider_reaches_nothing(
    api,
    carol_api,
    labelling,
    invitee,
    outsider,
):
    services.invitation_create(labelling, invitee)
    api.put(f"/labellings/{labelling.pk}/labels", {"row": 0, "value": 0, "note": "secret"})
    before = carol_api.get(f"/labellings/{labelling.pk}/cases/1").json()
    assert before["revealed"] is None
    after = carol_api.put(f"/labellings/{labelling.pk}/labels", {"row": 0, "value": 1}).json()
    assert after["revealed"]["others"] == [
        {"labeller": "alice", "value": 0.0, "text": "Fail", "note": "secret"}
    ]
    refused = carol_api.post(f"/labellings/{labelling.pk}/versions")
    assert (refused.status_code, refused.json()["code"]) == (404, "not_found")
    bob = Api(make_token(outsider))
    for answer in (
        bob.get(f"/labellings/{labelling.pk}"),
        bob.get(f"/labellings/{labelling.pk}/cases/1"),
        bob.put(f"/labellings/{labelling.pk}/labels", {"row": 0, "value": 1}),
        bob.post(f"/labellings/{labelling.pk}/versions"),
    ):
        assert (answer.status_code, answer.json()["code"]) == (404, "not_found")
    assert Label.objects.count() == 2 and Dataset.objects.count() == 1


def test_the_owner_saves_a_version(api, labelling, dataset, settings):
    api.put(f"/labellings/{labelling.pk}/labels", {"row": 2, "value": 1})
    made = api.post(f"/labellings/{labelling.pk}/versions")
    assert made.status_code == 201
    body = made.json()
    assert body["parent_id"] == dataset.pk and body["reused"] is False
    assert body["dataset"]["name"] == "quiz-v2.csv" and body["dataset"]["rows"] == 5
    version = Dataset.objects.get(pk=body["dataset"]["id"])
    assert version.rows[2]["human_label"] == "pass"
    again = api.post(f"/labellings/{labelling.pk}/versions")
    assert (again.status_code, again.json()["reused"]) == (200, True)
    api.put(f"/labellings/{labelling.pk}/labels", {"row": 3, "value": 0})
    settings.DATASET_QUOTA_MB = 0.001
    refused = api.post(f"/labellings/{labelling.pk}/versions")
    assert (refused.status_code, refused.json()["code"]) == (413, "storage_quota")
    assert Dataset.objects.count() == 2
