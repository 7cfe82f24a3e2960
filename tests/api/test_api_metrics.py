"""/api/v1/metrics: create, save versions, read and list, each one's own."""

from __future__ import annotations

import pytest
from django.utils.translation import override

from contract.source import MAX_SOURCE_BYTES
from metrics.models import Metric
from tests.api.conftest import Api
from wording import words

pytestmark = pytest.mark.django_db

SOURCE = "def score(input, output, expected=None):\n    return 1.0, {'feedback': 'ok'}\n"


def test_create_from_a_starter_or_a_source_then_list_and_read(api, owner):
    made = api.post("/metrics", {"name": "labels", "starter": "several_checks"})
    assert made.status_code == 201
    first = made.json()
    assert first["latest_version"] == 1 and len(first["cases"]) == 3
    own = api.post("/metrics", {"name": "mine", "source": SOURCE}).json()
    assert Metric.objects.get(pk=own["id"]).latest_version.source == SOURCE
    listed = api.get("/metrics").json()
    assert {m["name"] for m in listed} == {"labels", "mine"}
    assert api.get(f"/metrics/{own['id']}").json()["name"] == "mine"


def test_saving_a_changed_text_makes_a_version_and_the_same_text_does_not(api):
    metric = api.post("/metrics", {"name": "m", "source": SOURCE}).json()
    changed = SOURCE.replace("'ok'", "'fine'")
    saved = api.post(f"/metrics/{metric['id']}/versions", {"source": changed})
    assert saved.status_code == 201 and saved.json()["number"] == 2
    again = api.post(f"/metrics/{metric['id']}/versions", {"source": changed})
    assert again.status_code == 200 and again.json() == {**saved.json(), "created": False}
    versions = api.get(f"/metrics/{metric['id']}/versions").json()
    assert [v["number"] for v in versions] == [2, 1]
    assert api.get(f"/metrics/{metric['id']}/versions/1").json()["source"] == SOURCE


def test_a_save_takes_cases_timeout_and_models_as_the_editor_does(api, session_models):
    metric = api.post("/metrics", {"name": "m"}).json()
    cases = [{"input": {"q": str(i)}, "output": "x", "expected": {"label": "x"}} for i in range(3)]
    body = {
        "source": SOURCE,
        "cases": cases,
        "timeout_s": 30,
        "reflection_model": "openai/test-gpt",
        "metric_model": "local/free",
    }
    assert api.post(f"/metrics/{metric['id']}/versions", body).status_code == 201
    read = api.get(f"/metrics/{metric['id']}").json()
    assert read["timeout_s"] == 30 and read["reflection_model"] == "openai/test-gpt"
    assert [case["input"] for case in read["cases"]] == [{"q": "0"}, {"q": "1"}, {"q": "2"}]


@pytest.mark.parametrize("language", ["en", "es", "hi"])
def test_refusals_name_their_field_in_the_readers_language(owner, language, session_models):
    from tests.api.conftest import make_token

    api = Api(make_token(owner), language)
    metric = api.post("/metrics", {"name": "m"}).json()
    too_big = api.post(
        f"/metrics/{metric['id']}/versions", {"source": "#" * (MAX_SOURCE_BYTES + 1)}
    )
    assert too_big.status_code == 422 and too_big.json()["field"] == "source"
    two_cases = api.post(
        f"/metrics/{metric['id']}/versions",
        {"source": SOURCE, "cases": [{"input": {}, "output": 1}] * 2},
    )
    body = two_cases.json()
    assert body["code"] == "wrong_count" and body["field"] == "cases"
    with override(language):
        assert body["message"] == words("wrong_count", {"count": 2, "expected": 3}, family="cases")
    one_case = api.post(
        f"/metrics/{metric['id']}/versions",
        {"source": SOURCE, "cases": [{"input": {}, "output": 1}]},
    ).json()["message"]
    # One case is said in the singular, in every language.
    assert (
        one_case
        == {
            "en": "The cases file has 1 case; the contract check needs 3.",
            "es": "El archivo de casos tiene 1 caso; la comprobación del contrato necesita 3.",
            "hi": "केस फ़ाइल में 1 केस है; कॉन्ट्रैक्ट जाँच को 3 चाहिए।",
        }[language]
    )
    bad_model = api.post(
        f"/metrics/{metric['id']}/versions", {"source": SOURCE, "reflection_model": "nope/x"}
    )
    assert bad_model.status_code == 422 and bad_model.json()["field"] == "reflection_model"
    starter = api.post("/metrics", {"name": "m", "starter": "nope"}).json()
    assert starter["field"] == "starter" and starter["code"] == "invalid_choice"
    assert "nope" in starter["message"]
    assert Metric.objects.count() == 1  # nothing made by the refused requests


def test_another_users_metric_is_not_found_for_every_route(api, outsider_api):
    metric = api.post("/metrics", {"name": "m", "source": SOURCE}).json()
    paths = [f"/metrics/{metric['id']}", f"/metrics/{metric['id']}/versions"]
    paths.append(f"/metrics/{metric['id']}/versions/1")
    for path in paths:
        response = outsider_api.get(path)
        assert response.status_code == 404 and response.json()["code"] == "not_found"
    saved = outsider_api.post(f"/metrics/{metric['id']}/versions", {"source": "x = 1"})
    assert saved.status_code == 404
    assert outsider_api.get("/metrics").json() == []
    assert api.get(f"/metrics/{metric['id']}/versions/9").status_code == 404


def test_labels_name_a_version_and_move_to_the_newest_that_takes_them(api, owner_client):
    metric = api.post("/metrics", {"name": "m", "source": SOURCE}).json()
    path = f"/metrics/{metric['id']}/versions"
    first = api.post(path, {"source": SOURCE, "labels": ["main", "abc123"]})
    assert first.status_code == 200 and first.json()["labels"] == ["abc123", "main"]
    second = api.post(path, {"source": SOURCE + "\n# v2\n", "labels": ["main"]})
    assert second.status_code == 201 and second.json()["labels"] == ["main"]
    listed = {v["number"]: v["labels"] for v in api.get(path).json()}
    assert listed == {2: ["main"], 1: ["abc123"]}
    # The versions page shows them beside the numbers.
    body = owner_client.get(f"/en/metrics/{metric['id']}/versions/").content.decode()
    assert '<code class="version-label" title="Label">main</code>' in body
    # A name that cannot be a label is refused, and the save with it.
    refused = Api(api.token, "es").post(path, {"source": SOURCE + "\n# v3\n", "labels": ["a b"]})
    assert refused.status_code == 422
    assert (refused.json()["code"], refused.json()["field"]) == ("bad_label", "labels")
    assert "no puede ser una etiqueta" in refused.json()["message"]
    assert [v["number"] for v in api.get(path).json()] == [2, 1]
