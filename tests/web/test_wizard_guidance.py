"""What the wizard tells its user along the way: what happens to a submitted run, which
saved version to pick, a split too small to measure anything, and when a step is done."""

from __future__ import annotations

import pytest

from metrics import services as metric_services
from submissions import services
from submissions.models import Run
from tests.web.test_submit_wizard import LABEL_METRIC, fill_to_check, run_check_now

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(owner):
    return services.draft_create(owner=owner)


@pytest.fixture
def saved_metric(owner):
    metric = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    version, _ = metric_services.metric_save(metric, source=LABEL_METRIC)
    return version


def test_the_run_page_says_what_happens_next_and_offers_the_bundle(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    fill_to_check(owner_client, draft, saved_metric)
    run_check_now(owner_client, draft, django_capture_on_commit_callbacks)
    owner_client.post(f"/en/submit/{draft.pk}/submit/", {"name": "tickets"})
    run = Run.objects.get()
    body = owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    assert "What happens next" in body
    assert "queued for the optimization service" in body
    assert "does not run queued runs yet" in body
    next_steps = body[body.index('id="run-next"') :].split("</section>")[0]
    assert f'href="/en/runs/{run.pk}/bundle.zip"' in next_steps
    assert "download its bundle" in next_steps
