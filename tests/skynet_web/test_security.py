"""The security pass: headers, log-in rate limiting, body limits, an outage page, and a
walk over every URL pattern checking who may see what."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from api import tokens as api_tokens
from checks.models import Check, FeedbackReview
from contract.engine import run_check
from evaluations.models import Evaluation, EvaluationCase
from labelling import services as labelling_services
from metrics import services as metric_services
from runs.models import Run
from submissions import services as submit_services
from submissions.models import Draft
from tests.conftest import ROOT
from tests.metrics.test_playground import editor_data

pytestmark = pytest.mark.django_db

PUBLIC = {
    "metrics:home",
    "accounts:login",
    "accounts:signup",
    "accounts:logout",
    "healthz",
    "switch_language",
    "docs:index",
    "docs:page",
    # A docs page's example files (docs/examples/), the same for everyone.
    "docs:download",
    # The command line's wheel: the same client as the source's, for `pip install`.
    "client_download",
    # The site's icon, which every page links.
    "favicon",
}


def test_pages_carry_a_content_security_policy_and_the_usual_headers(client):
    response = client.get("/en/accounts/login/")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "object-src 'none'" in policy and "frame-ancestors 'none'" in policy
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"


def test_pages_use_no_inline_script(client, owner_client, owner):
    metric = metric_services.metric_create(owner=owner, name="m", starter="exact_match")
    for body in (
        client.get("/en/accounts/login/").content.decode(),
        owner_client.get(f"/en/metrics/{metric.pk}/").content.decode(),
        client.get("/docs/en/concepts/scorers").content.decode(),
    ):
        for tag in body.split("<script")[1:]:
            assert tag.split(">", 1)[0].strip().startswith("src="), tag[:80]


def test_log_in_is_rate_limited_and_says_so(client, owner):
    for _ in range(5):
        client.post("/es/accounts/login/", {"username": "alice", "password": "wrong"})
    response = client.post(
        "/es/accounts/login/", {"username": "alice", "password": "alice-pass-123"}
    )
    assert response.status_code == 429
    assert "Demasiados inicios de sesión fallidos" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_an_oversized_request_body_is_refused_cleanly(owner_client, owner):
    metric = metric_services.metric_create(owner=owner, name="m", starter="exact_match")
    huge = editor_data("x = 1\n" * 200_000)
    response = owner_client.post(f"/en/metrics/{metric.pk}/save/", huge)
    assert response.status_code == 400
    assert "Bad request" in response.content.decode()
    assert metric.versions.count() == 1


def test_with_the_database_down_healthz_says_so_and_pages_show_an_error_page():
    script = (
        "import django, json; django.setup()\n"
        "from django.test import Client\n"
        "c = Client(raise_request_exception=False)\n"
        "a = c.get('/healthz')\n"
        "h = c.get('/healthz', headers={'Authorization': 'Bearer ' + 'm' * 32})\n"
        "c.cookies['sessionid'] = 'x' * 32\n"
        "s = c.get('/healthz')\n"
        "p = c.get('/es/metrics/1/')\n"
        "print(json.dumps({'h': h.status_code, 'failing': h.json()['failing'],"
        " 'a': [a.status_code, a.json()], 's': [s.status_code, s.json()],"
        " 'p': p.status_code, 'body': p.content.decode()}))\n"
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "DJANGO_"))},
        "DATABASE_URL": "postgres://nobody@127.0.0.1:1/nothing",
        "DJANGO_SETTINGS_MODULE": "skynet_web.settings",
        "DJANGO_DEBUG": "0",
        "DJANGO_ALLOWED_HOSTS": "testserver",
        "SKYNET_WORKER_PING_MS": "100",
        "SKYNET_HEALTH_TOKEN": "m" * 32,
    }
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    # The monitor's token needs no database; anyone else, even with a session cookie
    # that cannot be read now, is told only that the site is down.
    assert out["h"] == 503 and "database" in out["failing"]
    assert out["a"] == out["s"] == [503, {"status": "fail"}]
    assert out["p"] == 500
    assert "Algo salió mal" in out["body"]
    assert "Traceback" not in out["body"] and "OperationalError" not in out["body"]


def _patterns(resolver=None, prefix="", namespace=""):
    """(the name a page is reversed by, "app:name" in an app's namespace; its pattern)."""
    for entry in (resolver or get_resolver()).url_patterns:
        if str(entry.pattern).startswith("admin/"):
            continue  # Django's admin guards itself (staff only)
        if str(entry.pattern).startswith("api/"):
            continue  # the JSON API has a walk of its own (tests/api/test_api_walk.py)
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _patterns(entry, prefix + str(entry.pattern), inner)
        elif isinstance(entry, URLPattern) and entry.name:
            yield namespace + entry.name, prefix + str(entry.pattern)


def test_every_url_pattern_is_covered_by_this_walk():
    names = {name for name, _ in _patterns()}
    owned = set(OWNED)
    assert names - PUBLIC - owned - LOGIN_ONLY == set(), "add new URLs to the walk"


# Pages of the user's own lists: no object in the path, so only the log-in is checked.
LOGIN_ONLY = {
    "metrics:create",
    "metrics:import",
    "submissions:drafts",
    "runs:list",
    "checks:models_test_again",
    "evaluations:list",
    "api:tokens",
    "submissions:datasets",
    "labelling:list",
}


@pytest.mark.parametrize("name", sorted(LOGIN_ONLY))
def test_list_pages_need_a_log_in(client, name):
    path = {
        "metrics:create": "/en/metrics/new/",
        "metrics:import": "/en/metrics/new/import/",
        "submissions:drafts": "/en/submit/",
        "runs:list": "/en/runs/",
        "checks:models_test_again": "/en/models/test-again/",
        "evaluations:list": "/en/evaluations/",
        "api:tokens": "/en/accounts/tokens/",
        "submissions:datasets": "/en/datasets/",
        "labelling:list": "/en/labellings/",
    }
    response = client.get(path[name])
    assert response.status_code == 302
    assert response["Location"].startswith("/en/accounts/login/")


OWNED = {
    "metrics:detail": ("get", "/en/metrics/{m}/"),
    "metrics:save": ("post", "/en/metrics/{m}/save/"),
    "metrics:diagnostics": ("post", "/en/metrics/{m}/diagnostics/"),
    "metrics:add_imports": ("post", "/en/metrics/{m}/add-imports/"),
    "metrics:files_upload": ("post", "/en/metrics/{m}/files/upload/"),
    "metrics:convert": ("get", "/en/metrics/{m}/convert/"),
    "metrics:versions": ("get", "/en/metrics/{m}/versions/"),
    "metrics:version": ("get", "/en/metrics/{m}/versions/1/"),
    "metrics:version_restore": ("post", "/en/metrics/{m}/versions/1/restore/"),
    "metrics:diff": ("get", "/en/metrics/{m}/diff/?a=1&b=1"),
    "checks:detail": ("get", "/en/checks/{c}/"),
    "checks:cancel": ("post", "/en/checks/{c}/cancel/"),
    "checks:review_create": ("post", "/en/checks/{c}/cases/0/review/"),
    "checks:review": ("get", "/en/checks/{c}/reviews/{r}/"),
    "submissions:resume": ("get", "/en/submit/{d}/"),
    "submissions:step": ("get", "/en/submit/{d}/artifact/"),
    "submissions:upload": ("post", "/en/submit/{d}/upload/"),
    "submissions:check": ("post", "/en/submit/{d}/check/run/"),
    "submissions:diagnostics": ("post", "/en/submit/{d}/diagnostics/"),
    "submissions:gate": ("get", "/en/submit/{d}/check/gate/"),
    "runs:submit": ("post", "/en/submit/{d}/submit/"),
    "submissions:delete": ("post", "/en/submit/{d}/delete/"),
    "runs:draft_bundle": ("get", "/en/submit/{d}/bundle.zip"),
    "runs:detail": ("get", "/en/runs/{u}/"),
    "runs:bundle": ("get", "/en/runs/{u}/bundle.zip"),
    "runs:cancel": ("post", "/en/runs/{u}/cancel/"),
    "runs:resume": ("post", "/en/runs/{u}/resume/"),
    "runs:best": ("get", "/en/runs/{u}/best.txt"),
    "evaluations:start": ("get", "/en/metrics/{m}/evaluate/"),
    "evaluations:start_upload": ("post", "/en/metrics/{m}/evaluate/upload/"),
    "evaluations:start_for_draft": ("get", "/en/submit/{d}/evaluate/"),
    # The evaluations' own pages.
    "evaluations:detail": ("get", "/en/evaluations/{e}/"),
    "evaluations:cancel": ("post", "/en/evaluations/{e}/cancel/"),
    "evaluations:cases": ("get", "/en/evaluations/{e}/cases/"),
    "evaluations:case": ("get", "/en/evaluations/{e}/cases/0/"),
    "evaluations:case_to_playground": ("post", "/en/evaluations/{e}/cases/0/playground/"),
    "evaluations:download": ("get", "/en/evaluations/{e}/download.csv"),
    # A dataset's delete page (GET asks, POST deletes; the POST is walked in
    # tests/submissions/test_dataset_library.py).
    "submissions:dataset_delete": ("get", "/en/datasets/{dataset}/delete/"),
    "api:token_revoke": ("post", "/en/accounts/tokens/{t}/revoke/"),
    # Labelling: starting one from a dataset or an evaluation, and its own pages (an
    # invitee's access is walked in tests/labelling/test_labelling_sharing.py).
    "labelling:start": ("get", "/en/labellings/new/dataset/{dataset}/"),
    "labelling:start_from_evaluation": ("get", "/en/labellings/new/evaluation/{e}/"),
    "labelling:detail": ("get", "/en/labellings/{l}/"),
    "labelling:case": ("get", "/en/labellings/{l}/cases/1/"),
    "labelling:label": ("post", "/en/labellings/{l}/cases/1/label/"),
    "labelling:invite": ("post", "/en/labellings/{l}/invite/"),
    "labelling:version": ("post", "/en/labellings/{l}/version/"),
    # Aligning a judge: the start page of an evaluation's, Accept on an alignment's run.
    "alignment:start": ("get", "/en/evaluations/{e}/align/"),
    "alignment:accept": ("post", "/en/runs/{u}/accept-prompt/"),
}


@pytest.fixture
def owned(owner):
    return owned_objects(owner)


def owned_objects(owner) -> dict:
    """One object of each kind for `owner`, by the key its URLs fill in."""
    metric = metric_services.metric_create(owner=owner, name="m", starter="exact_match")
    check = Check.objects.create(
        owner=owner,
        source="x",
        metric_version=metric.latest_version,
        status="passed",
        result=run_check(metric.latest_version.source, timeout_s=10).to_dict(),
        reflection_model="openai/gpt-4.1-mini",
    )
    review = FeedbackReview.objects.create(contract_check=check, case_index=0, model="m")
    draft = submit_services.draft_create(owner=owner)
    dataset = submit_services.dataset_upload(draft, filename="d.csv", data=b"q,a\n1,2\n")
    run = Run.objects.create(
        owner=owner, name="r", config={}, metric_source="x", dataset=dataset, contract_check=check
    )
    evaluation = Evaluation.objects.create(
        owner=owner, dataset=dataset, source="x", metric_version=metric.latest_version, total=1
    )
    EvaluationCase.objects.create(evaluation=evaluation, index=0, row=0, file_row=2, status="valid")
    ids = {"m": metric.pk, "c": check.pk, "r": review.pk, "d": draft.pk, "u": run.pk}
    token, _secret = api_tokens.token_create(owner=owner, name="ci", scope="read", days=None)
    labelling = labelling_services.labelling_create(
        owner=owner, dataset=dataset, input_columns=["q"], output_column="a"
    )
    ids["l"] = labelling.pk
    return {**ids, "e": evaluation.pk, "t": token.pk, "dataset": dataset.pk}


@pytest.mark.parametrize("name", sorted(OWNED))
def test_anonymous_users_are_sent_to_log_in(client, owned, name):
    method, path = OWNED[name]
    response = getattr(client, method)(path.format(**owned))
    assert response.status_code == 302
    assert response["Location"].startswith("/en/accounts/login/")


@pytest.mark.parametrize("name", sorted(OWNED))
def test_another_users_objects_do_not_exist_for_them(client, outsider, owned, name):
    client.force_login(outsider)
    method, path = OWNED[name]
    response = getattr(client, method)(path.format(**owned), HTTP_HX_REQUEST="true")
    assert response.status_code == 404
    assert FeedbackReview.objects.count() == 1
    assert Draft.objects.count() == 1 and Run.objects.count() == 1
    assert Evaluation.objects.count() == 1
