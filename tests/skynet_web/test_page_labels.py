"""What assistive technology reads: every aria-describedby names an element on the page,
the version compare radios say what they pick, the home page's starters and verdicts."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.utils.html import escape

from checks.models import Check
from metrics import services as metric_services
from metrics.starters import STARTERS
from tests.metrics.test_playground import editor_data
from tests.submissions.test_submit_wizard import (
    LABEL_METRIC,
    artifact_data,
    dataset_data,
    fill_to_check,
    models_data,
    url,
)

pytestmark = pytest.mark.django_db


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.references: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        self.references.extend((attrs.get("aria-describedby") or "").split())


def missing_descriptions(body: str) -> list[str]:
    parser = _Ids()
    parser.feed(body)
    return [ref for ref in parser.references if ref not in parser.ids]


def test_every_description_of_the_wizard_steps_exists(
    owner_client, draft, saved_metric, session_models
):
    bad_artifact = artifact_data(source="def answer(artifact, input):\n    return 1\n")
    response = owner_client.post(url(draft, "artifact"), bad_artifact)
    assert response.status_code == 400
    pages = {"artifact with errors": response.content.decode()}
    fill_to_check(owner_client, draft, saved_metric)
    for step in ("artifact", "dataset", "metric", "models"):
        pages[step] = owner_client.get(url(draft, step)).content.decode()
    roles = {"question": "input", "label": "output"}
    errors = {
        "dataset": dataset_data(draft.dataset.columns, roles, seed="x", train_percent=0),
        "metric": {"metric_mode": "saved", "metric_version": "", "action": "next"},
        "models": models_data(task_model="", budget=0),
    }
    for step, data in errors.items():
        response = owner_client.post(url(draft, step), data)
        assert response.status_code == 400, step
        pages[f"{step} with errors"] = response.content.decode()
    for name, body in pages.items():
        assert missing_descriptions(body) == [], name
    # Each of these fields has a description or an error, so each page names some.
    for name in ("artifact", "dataset", "models", *(f"{step} with errors" for step in errors)):
        assert "aria-describedby=" in pages[name], name
    assert 'aria-describedby="id_seed_helptext' in pages["dataset"]
    assert 'id="id_budget_helptext"' in pages["models"]


def test_every_description_of_the_playground_exists(owner_client, owner):
    metric = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    body = owner_client.get(f"/en/metrics/{metric.pk}/").content.decode()
    assert 'aria-describedby="id_case0-expected_helptext"' in body
    assert missing_descriptions(body) == []
    data = editor_data(**{"case1-input": '{"question": ', "timeout_s": "0"})
    response = owner_client.post(f"/en/metrics/{metric.pk}/save/", data)
    assert response.status_code == 400
    body = response.content.decode()
    assert 'aria-describedby="id_case1-input_error"' in body
    assert missing_descriptions(body) == []


def test_the_compare_radios_name_their_version(owner_client, owner):
    metric = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    metric_services.metric_save(metric, source=LABEL_METRIC)
    body = owner_client.get(f"/en/metrics/{metric.pk}/versions/").content.decode()
    assert "Compare from version 1 (A)" in body
    assert "Compare to version 2 (B)" in body


def test_the_starters_are_described_and_styled_on_the_home_page(owner_client):
    body = owner_client.get("/en/").content.decode()
    assert 'class="starter-select"' in body
    for starter in STARTERS.values():
        assert str(starter.description)
        assert escape(str(starter.description)) in body


def test_the_home_list_shows_each_metrics_latest_verdict(owner_client, owner):
    checked = metric_services.metric_create(owner=owner, name="checked", starter="exact_match")
    metric_services.metric_create(owner=owner, name="never checked", starter="exact_match")
    version = checked.latest_version
    Check.objects.create(
        owner=owner, source=version.source, metric_version=version, status="passed"
    )
    Check.objects.create(
        owner=owner, source=version.source, metric_version=version, status="failed"
    )
    body = owner_client.get("/en/").content.decode()
    listed = body[body.index('class="metric-list"') :]
    checked_row = listed[listed.index(">checked<") :]
    assert 'class="status status-failed"' in checked_row.split("</li>")[0]
    unchecked_row = listed[listed.index(">never checked<") :].split("</li>")[0]
    assert "No check yet." in unchecked_row
