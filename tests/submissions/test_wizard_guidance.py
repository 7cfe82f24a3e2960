"""What the wizard tells its user along the way: what happens to a submitted run, which
saved version to pick, a split too small to measure anything, and when a step is done."""

from __future__ import annotations

import re

import pytest

from checks.models import Check
from metrics import services as metric_services
from runs.models import Run
from tests.submissions.test_submit_wizard import (
    CSV,
    LABEL_METRIC,
    artifact_data,
    dataset_data,
    fill_to_check,
    run_check_now,
    upload,
    url,
)

pytestmark = pytest.mark.django_db


def test_the_run_page_says_what_happens_next_and_offers_the_bundle(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    fill_to_check(owner_client, draft, saved_metric)
    run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    owner_client.post(f"/en/submit/{draft.pk}/submit/", {"name": "tickets"})
    run = Run.objects.get()
    body = owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    standing = body[body.index('id="run-standing"') :].split("</section>")[0]
    assert "The run is queued" in standing
    assert "It waits for a worker to pick it up." in standing
    assert "does not run queued runs yet" not in body
    setup = body[body.index('id="run-setup"') :].split("</section>")[0]
    assert f'href="/en/runs/{run.pk}/bundle.zip"' in setup
    assert "result (result.json)" in setup


def _options(body: str) -> str:
    start = body.index('name="metric_version"')
    return body[start : body.index("</select>", start)]


def test_the_metric_picker_groups_versions_by_metric_with_their_verdicts(
    owner_client, owner, draft
):
    first = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    metric_services.metric_save(first, source=LABEL_METRIC)
    twin = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    other = metric_services.metric_create(owner=owner, name="fields", starter="several_checks")
    v2 = first.versions.get(number=2)
    Check.objects.create(owner=owner, source=v2.source, metric_version=v2, status="failed")
    Check.objects.create(owner=owner, source=v2.source, metric_version=v2, status="passed")
    v1 = other.latest_version
    Check.objects.create(owner=owner, source=v1.source, metric_version=v1, status="failed")
    assert owner_client.post(url(draft, "artifact"), artifact_data()).status_code == 302
    assert _upload_and_split(owner_client, draft).status_code == 302
    body = owner_client.get(url(draft, "metric")).content.decode()
    options = _options(body)
    assert options.count("<optgroup") == 3
    assert '<optgroup label="fields">' in options
    # Two metrics of one name are told apart.
    assert f'<optgroup label="labels (metric {first.pk})">' in options
    assert f'<optgroup label="labels (metric {twin.pk})">' in options
    group = options[options.index(f"labels (metric {first.pk})") :].split("</optgroup>")[0]
    assert f'value="{v2.pk}">Version 2: Passed</option>' in group
    assert "Version 1: not checked" in group
    assert f'value="{v1.pk}">Version 1: Failed</option>' in options
    # The grouped choices still validate.
    response = owner_client.post(
        url(draft, "metric"), {"metric_mode": "saved", "metric_version": v2.pk, "action": "next"}
    )
    assert response.status_code == 302
    draft.refresh_from_db()
    assert draft.metric_version == v2


def test_the_run_name_field_fits_its_default(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    fill_to_check(owner_client, draft, saved_metric)
    run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    body = owner_client.get(url(draft, "review")).content.decode()
    field = re.search(
        r'<label class="inline-field run-name">[^<]*<input [^>]*name="name"[^>]*>', body
    )
    assert field is not None
    size = re.search(r'size="(\d+)"', field.group(0))
    assert size is not None and int(size.group(1)) > len(draft.name) + 10


def _upload_and_split(owner_client, draft, **splits):
    assert upload(owner_client, draft, CSV.encode()).status_code == 302
    draft.refresh_from_db()
    roles = {"ticket_id": "ignore", "question": "input", "label": "output"}
    return owner_client.post(
        url(draft, "dataset"), dataset_data(draft.dataset.columns, roles, action="save", **splits)
    )


def test_a_split_of_fewer_than_10_rows_is_warned_about(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    fill_to_check(owner_client, draft, saved_metric)  # 10 rows at 60/20/20: 6, 2, 2
    body = owner_client.get(url(draft, "dataset")).content.decode()
    assert "The validation split has only 2 rows" in body
    assert "The test split has only 2 rows" in body
    assert "The train split has only 6 rows" in body
    assert "Aim for at least 10." in body
    run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    review = owner_client.get(url(draft, "review")).content.decode()
    assert "The validation split has only 2 rows" in review
    assert 'id="submit-run" disabled' not in review  # a warning, not a refusal
    # One row takes the singular; an empty split is left out on purpose and not warned.
    response = _upload_and_split(
        owner_client, draft, train_percent=90, validation_percent=10, test_percent=0
    )
    assert response.status_code == 302
    body = owner_client.get(url(draft, "dataset")).content.decode()
    assert "The validation split has only 1 row:" in body
    assert "The test split" not in body


def test_a_larger_split_gets_no_warning():
    from submissions.presenters import small_split_warnings

    assert small_split_warnings({"train": 70, "validation": 15, "test": 15}) == []
    assert len(small_split_warnings({"train": 70, "validation": 9, "test": 0})) == 1


def _dataset_done(body: str) -> bool:
    stepper = body[body.index('<ol class="stepper">') :].split("</ol>")[0]
    dataset = next(li for li in stepper.split("<li")[1:] if '<span class="number">2</span>' in li)
    return "done-mark" in dataset


def test_the_dataset_step_is_done_only_once_saved(owner_client, draft):
    assert owner_client.post(url(draft, "artifact"), artifact_data()).status_code == 302
    assert upload(owner_client, draft, CSV.encode()).status_code == 302
    assert not _dataset_done(owner_client.get(url(draft, "dataset")).content.decode())
    draft.refresh_from_db()
    roles = {"ticket_id": "ignore", "question": "input", "label": "output"}
    response = owner_client.post(url(draft, "dataset"), dataset_data(draft.dataset.columns, roles))
    assert response.status_code == 302
    assert _dataset_done(owner_client.get(url(draft, "metric")).content.decode())
    # A new file is not done until it is saved too.
    assert upload(owner_client, draft, CSV.encode()).status_code == 302
    assert not _dataset_done(owner_client.get(url(draft, "dataset")).content.decode())
