"""/api/v1/checks: started on a saved version or on a metric.py in the body, through the
playground's own services; read, waited for and cancelled; the same result as the page."""

from __future__ import annotations

import threading
import time

import pytest
from django.conf import settings
from django.db import connection
from django.utils.translation import override

from checks import presenters
from checks.execution import execute_check
from checks.models import Check
from jobs import notify
from metrics import services as metric_services
from tests.api.conftest import Api, make_token
from tests.metrics.test_playground import editor_data
from wording import words

pytestmark = pytest.mark.django_db

BARE_NUMBER = "def score(input, output, expected=None):\n    return 0.5\n"
GOOD = (
    "def score(input, output, expected=None):\n"
    "    ok = output == expected['label']\n"
    "    return (1.0 if ok else 0.0), {'feedback': 'Correct.' if ok else 'Wrong label.'}\n"
)


def test_a_check_of_a_saved_version_runs_its_metrics_cases(api, owner):
    metric = metric_services.metric_create(owner=owner, name="m", starter="exact_match")
    started = api.post("/checks", {"metric_id": metric.pk})
    assert started.status_code == 202
    body = started.json()
    assert body["status"] == "queued" and body["final"] is False and body["result"] is None
    assert body["metric_id"] == metric.pk and body["version"] == 1
    check = Check.objects.get(pk=body["id"])
    assert check.cases == metric.cases and check.metric_version == metric.latest_version
    execute_check(check.pk)
    read = api.get(f"/checks/{check.pk}").json()
    assert read["status"] == "passed" and read["passed"] and read["final"]
    assert [stage["status"] for stage in read["result"]["stages"]]
    assert all(case["status"] == "valid" for case in read["result"]["cases"])


def test_a_check_of_a_source_in_the_body_with_cases_from_jsonl(api):
    lines = [
        '{"input": {"q": "a"}, "output": "x", "expected": {"label": "x"}}',
        '{"input": {"q": "b"}, "output": "y", "expected": {"label": "z"}}',
        '{"input": {"q": "c"}, "output": "w", "expected": {"label": "w"}}',
    ]
    body = api.post("/checks", {"source": GOOD, "cases_jsonl": "\n".join(lines)}).json()
    execute_check(body["id"])
    read = api.get(f"/checks/{body['id']}").json()
    assert [case["score"] for case in read["result"]["cases"]] == [1.0, 0.0, 1.0]
    assert read["metric_id"] is None


@pytest.mark.parametrize("language", ["en", "es", "hi"])
def test_a_bad_cases_file_names_its_line_in_the_readers_language(owner, language):
    api = Api(make_token(owner), language)
    response = api.post("/checks", {"source": GOOD, "cases_jsonl": '{"input": {}}\n'})
    body = response.json()
    assert response.status_code == 422 and body["code"] == "output_missing"
    assert body["field"] == "cases_jsonl"
    with override(language):
        assert body["message"] == words("output_missing", {"line": 1}, family="cases")
    assert not Check.objects.exists()


def test_cases_come_one_way_only(api):
    case = {"input": {"q": "a"}, "output": "x", "expected": {"label": "x"}}
    both = api.post("/checks", {"source": GOOD, "cases": [case] * 3, "cases_jsonl": ""})
    body = both.json()
    assert both.status_code == 422 and body["code"] == "cases_or_jsonl"
    assert body["field"] == "cases_jsonl" and not Check.objects.exists()


def test_metric_or_source_exactly_one(api, owner):
    neither = api.post("/checks", {})
    assert neither.status_code == 422 and neither.json()["code"] == "metric_or_source"
    metric = metric_services.metric_create(owner=owner, name="m", starter="exact_match")
    both = api.post("/checks", {"metric_id": metric.pk, "source": GOOD})
    assert both.status_code == 422


def test_the_pages_limits_hold_for_the_api(api, owner, settings):
    settings.CHECK_MAX_ACTIVE_PER_USER = 1
    assert api.post("/checks", {"source": GOOD}).status_code == 202
    refused = api.post("/checks", {"source": GOOD})
    body = refused.json()
    assert refused.status_code == 429 and body["code"] == "too_many_active"
    assert body["message"] == words("too_many_active", {"limit": 1}, family="refusal")
    assert Check.objects.count() == 1


def test_same_result_as_the_page_for_the_same_check(owner_client, owner):
    metric = metric_services.metric_create(owner=owner, name="m", starter="exact_match")
    owner_client.post(f"/es/metrics/{metric.pk}/save/", editor_data(BARE_NUMBER, action="run"))
    check = Check.objects.get()
    execute_check(check.pk)
    check.refresh_from_db()
    page = owner_client.get(f"/es/checks/{check.pk}/")
    assert page.status_code == 200
    with override("es"):
        shown = presenters.present(check)
    api = Api(make_token(owner), "es").get(f"/checks/{check.pk}").json()
    assert api["status"] == "failed" and not api["passed"]
    for key in ("name", "status", "status_label", "message"):
        assert [s[key] for s in api["result"]["stages"]] == [s[key] for s in shown["stages"]]
    for key in ("status", "problem", "message", "score"):
        assert [c[key] for c in api["result"]["cases"]] == [c[key] for c in shown["cases"]]
    assert [h["message"] for h in api["result"]["hints"]] == [h["message"] for h in shown["hints"]]
    # What the page prints is what the API says.
    text = page.content.decode()
    assert api["result"]["cases"][0]["message"].split(":")[0] in text
    assert api["url"] == f"/es/checks/{check.pk}/"


@pytest.mark.django_db(transaction=True)
def test_wait_answers_when_the_worker_announces_the_end(api, announced):
    body = api.post("/checks", {"source": GOOD}).json()

    def finish() -> None:
        time.sleep(0.3)
        try:
            Check.objects.filter(pk=body["id"]).update(status=Check.Status.PASSED, result={})
            notify.check_changed(body["id"])
        finally:
            connection.close()

    thread = threading.Thread(target=finish)
    thread.start()
    started = time.monotonic()
    waited = api.get(f"/checks/{body['id']}/wait", data={"timeout": 25}).json()
    elapsed = time.monotonic() - started
    thread.join()
    assert waited["final"] and waited["status"] == "passed"
    assert elapsed < 20, "the request waited for its time limit, not for the announcement"


def test_wait_on_an_unchanging_check_answers_after_its_timeout(api):
    body = api.post("/checks", {"source": GOOD}).json()
    waited = api.get(f"/checks/{body['id']}/wait", data={"timeout": 0.2})
    assert waited.status_code == 200 and waited.json()["status"] == "queued"


def test_cancel_a_queued_check_then_cancelling_again_changes_nothing(api):
    body = api.post("/checks", {"source": GOOD}).json()
    cancelled = api.post(f"/checks/{body['id']}/cancel").json()
    assert cancelled["cancelled"] is True
    assert cancelled["check"]["status"] == "failed" and cancelled["check"]["failure"] == "cancelled"
    with override("en"):
        assert cancelled["check"]["message"] == "You cancelled this check before it finished."
    again = api.post(f"/checks/{body['id']}/cancel").json()
    assert again["cancelled"] is False


def test_another_users_check_is_not_found(api, outsider_api):
    body = api.post("/checks", {"source": GOOD}).json()
    for path in (f"/checks/{body['id']}", f"/checks/{body['id']}/wait?timeout=0"):
        assert outsider_api.get(path).status_code == 404
    assert outsider_api.post(f"/checks/{body['id']}/cancel").status_code == 404
    assert Check.objects.get().status == "queued"
    owner_metric = metric_services.metric_create(
        owner=Check.objects.get().owner, name="m", starter="exact_match"
    )
    assert outsider_api.post("/checks", {"metric_id": owner_metric.pk}).status_code == 404
    assert settings.CHECK_MAX_ACTIVE_PER_USER >= 1
