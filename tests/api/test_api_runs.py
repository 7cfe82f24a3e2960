"""/api/v1/runs: a draft made from one body through the wizard's own forms, its check and
the gate, the submit; runs read, waited for, downloaded, cancelled and resumed by the run
pages' rules. Who may do what: no token, a revoked or expired one, a read-only one,
another user's draft or run."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.utils.translation import override

from api import tokens
from checks.execution import execute_check
from runs import bundle
from runs.models import Run
from submissions.models import Draft
from submissions.services import dataset_create
from tests import quiz
from tests.api.conftest import Api, make_token
from tests.runs.run_data import HAND_TEXTS, hand_run, quiz_models
from wording import words

pytestmark = pytest.mark.django_db

MISSING = 987654


@pytest.fixture
def dataset(owner):
    return dataset_create(owner=owner, filename="capitals.jsonl", data=quiz.jsonl())


def draft_body(dataset, **changes) -> dict:
    body = {
        "name": "capitals",
        "artifact": {"kind": "prompt", "content": quiz.SEED},
        "dataset_id": dataset.pk,
        "roles": {"country": "input", "capital": "output"},
        "splits": {"train_percent": 50, "validation_percent": 50, "test_percent": 0, "seed": 7},
        "metric": {"source": quiz.SPECIFIC},
        "models": {"task": "openai/test-gpt", "reflection": "openai/test-gpt"},
        "engine": "gepa",
        "budget": {"metric_calls": 60, "usd": 1.5},
    }
    body.update(changes)
    return body


def made_draft(api, dataset, **changes) -> dict:
    response = api.post("/runs/drafts", draft_body(dataset, **changes))
    assert response.status_code == 201, response.content.decode()
    return response.json()


def passed_check(api, draft_id: int, provider) -> dict:
    started = api.post(f"/runs/drafts/{draft_id}/check")
    assert started.status_code == 202, started.content.decode()
    with quiz_models(provider):
        execute_check(started.json()["id"])
    check = api.get(f"/checks/{started.json()['id']}").json()
    assert check["passed"], check["result"]
    return check


# -- who may -------------------------------------------------------------------------


def every_endpoint(draft_id: int, run_id: int) -> list[tuple[str, str]]:
    return [
        ("post", "/runs/drafts"),
        ("get", f"/runs/drafts/{draft_id}"),
        ("put", f"/runs/drafts/{draft_id}"),
        ("post", f"/runs/drafts/{draft_id}/check"),
        ("post", f"/runs/drafts/{draft_id}/submit"),
        ("get", "/runs"),
        ("get", f"/runs/{run_id}"),
        ("get", f"/runs/{run_id}/wait?timeout=0"),
        ("get", f"/runs/{run_id}/result"),
        ("get", f"/runs/{run_id}/best"),
        ("get", f"/runs/{run_id}/bundle"),
        ("post", f"/runs/{run_id}/cancel"),
        ("post", f"/runs/{run_id}/resume"),
    ]


def send(api: Api, method: str, path: str, body=None):
    if method == "put":
        return api.client.put(
            f"/api/v1{path}",
            data=json.dumps(body or {}),
            content_type="application/json",
            headers=api._headers({}),
        )
    return getattr(api, method)(path) if method == "get" else api.post(path, body or {})


def test_every_endpoint_needs_a_token_that_is_neither_revoked_nor_expired(
    owner, dataset, expired_token
):
    draft = Draft.objects.create(owner=owner, name="d")
    run = hand_run(owner)
    revoked = make_token(owner)
    tokens.token_revoke(tokens.token_find(revoked))
    for token, code in ((None, "unauthenticated"), (revoked, "token_revoked")):
        for method, path in every_endpoint(draft.pk, run.pk):
            response = send(Api(token), method, path)
            assert response.status_code == 401, (method, path)
            assert response.json()["code"] == code, (method, path)
    for method, path in every_endpoint(draft.pk, run.pk)[:3]:
        expired = send(Api(expired_token), method, path)
        assert expired.status_code == 401 and expired.json()["code"] == "token_expired"
    assert not Run.objects.get(pk=run.pk).cancel_requested and Draft.objects.count() == 1


def test_a_read_only_token_reads_and_writes_nothing(owner, read_api, dataset):
    draft = Draft.objects.create(owner=owner, name="d")
    run = hand_run(owner)
    for method, path in every_endpoint(draft.pk, run.pk):
        response = send(read_api, method, path, draft_body(dataset))
        if method == "get":
            assert response.status_code in (200, 409), (path, response.content)
        else:
            assert response.status_code == 403, path
            assert response.json()["code"] == "read_only_token"
    assert Draft.objects.count() == 1 and not Run.objects.filter(draft=draft).exists()
    assert not Run.objects.get(pk=run.pk).cancel_requested


def test_another_users_draft_and_run_are_not_found_like_missing_ones(owner, outsider_api, dataset):
    draft = Draft.objects.create(owner=owner, name="d")
    run = hand_run(owner)
    not_found = {"code": "not_found", "message": words("not_found", family="api"), "field": None}
    for ids in ((draft.pk, run.pk), (MISSING, MISSING)):
        for method, path in every_endpoint(*ids):
            if path in ("/runs/drafts", "/runs"):
                continue
            response = send(outsider_api, method, path, draft_body(dataset))
            assert response.status_code == 404, (method, path)
            assert response.json() == not_found, (method, path)
    assert outsider_api.get("/runs").json() == []
    assert not Run.objects.get(pk=run.pk).cancel_requested
    assert Draft.objects.get(pk=draft.pk).contract_check is None


def test_another_users_dataset_or_metric_is_not_found_in_a_body(owner, outsider, api, dataset):
    from metrics import services as metric_services

    theirs = dataset_create(owner=outsider, filename="capitals.jsonl", data=quiz.jsonl())
    response = api.post("/runs/drafts", draft_body(dataset, dataset_id=theirs.pk))
    assert response.status_code == 404
    assert response.json()["code"] == "not_found" and response.json()["field"] == "dataset_id"
    metric = metric_services.metric_create(owner=outsider, name="m", starter="exact_match")
    response = api.post("/runs/drafts", draft_body(dataset, metric={"metric_id": metric.pk}))
    assert response.status_code == 404 and response.json()["field"] == "metric.metric_id"
    assert not Draft.objects.exists()


# -- the draft -------------------------------------------------------------------------


def test_a_draft_from_one_body_holds_every_step_and_waits_for_its_check(
    api, owner, dataset, session_models
):
    made = made_draft(api, dataset)
    draft = Draft.objects.get(pk=made["id"], owner=owner)
    assert (draft.name, draft.artifact_kind, draft.artifact_content) == (
        "capitals",
        "prompt",
        quiz.SEED,
    )
    assert draft.dataset_id == dataset.pk
    assert draft.roles == {"country": "input", "capital": "output"}
    assert (draft.train_percent, draft.validation_percent, draft.seed) == (50, 50, 7)
    assert (draft.metric_mode, draft.inline_source) == ("inline", quiz.SPECIFIC)
    assert (draft.task_model, draft.engine, draft.budget) == ("openai/test-gpt", "gepa", 60)
    assert str(draft.budget_usd) == "1.50"
    assert made["problems"] == [
        {
            "step": "check",
            "code": "check_required",
            "message": words("check_required", family="step"),
        }
    ]
    assert made["gate"] == {"open": False, "check_state": "none", "check_id": None}
    assert made["counts"] == {"train": 6, "validation": 6, "test": 0}
    assert made["url"] == f"/en/submit/{draft.pk}/"
    assert api.get(f"/runs/drafts/{draft.pk}").json() == made


def test_roles_left_out_are_guessed_and_a_saved_metric_is_its_latest_version(
    api, owner, dataset, session_models
):
    from metrics import services as metric_services

    metric = metric_services.metric_create(owner=owner, name="capitals", starter="exact_match")
    version, _ = metric_services.metric_save(metric, source=quiz.SPECIFIC)
    body = draft_body(dataset, metric={"metric_id": metric.pk}, roles=None)
    body["models"]["metric"] = "openai/test-gpt"
    made = made_draft(api, dataset, **body)
    draft = Draft.objects.get(pk=made["id"])
    # Named "country" and "capital", both are guessed as inputs: as the wizard guesses.
    assert draft.roles == {"country": "input", "capital": "input"}
    assert draft.saved_version == version and draft.metric_model == "openai/test-gpt"


# Each part refused by its step's own form or rule, with the field as the body names it.
REFUSALS = [
    (
        {"splits": {"train_percent": 50, "validation_percent": 40, "test_percent": 0}},
        "bad_ratios",
        "splits.train_percent",
    ),
    ({"artifact": {"kind": "prompt", "content": "  "}}, "template_empty", "artifact.content"),
    ({"artifact": {"kind": "poem", "content": "x"}}, "invalid_choice", "artifact.kind"),
    ({"engine": "dspy_gepa"}, "engine_kind", "engine"),
    (
        {"models": {"task": "", "reflection": "openai/test-gpt"}},
        "no_task_model",
        "models.task",
    ),
    (
        {"models": {"task": "openai/nothing", "reflection": "openai/test-gpt"}},
        "invalid_choice",
        "models.task",
    ),
    ({"budget": {"metric_calls": 0}}, "min_value", "budget.metric_calls"),
    ({"roles": {"country": "output", "capital": "output"}}, "no_input_column", "roles"),
    ({"roles": {"country": "input", "town": "output"}}, "unknown_column", "roles.town"),
    ({"roles": {"country": "input", "capital": "answer"}}, "invalid_choice", "roles.capital"),
    ({"types": {"capital": "number"}}, "not_a_number", "types.capital"),
    ({"splits": {"column": "capital"}}, "split_column_not_ignored", "splits.column"),
    ({"metric": {"source": "def score(:\n"}}, "metric_static", "metric.source"),
    ({"metric": {}}, "metric_or_source", "metric"),
]


@pytest.mark.parametrize(("changes", "code", "field"), REFUSALS)
def test_each_part_is_refused_by_the_wizards_own_rules(
    api, dataset, session_models, changes, code, field
):
    response = api.post("/runs/drafts", draft_body(dataset, **changes))
    assert response.status_code == 422, response.content.decode()
    body = response.json()
    assert (body["code"], body["field"]) == (code, field), body
    assert body["message"]
    assert not Draft.objects.exists()


@pytest.mark.parametrize("language", ["en", "es", "hi"])
def test_a_refusal_reads_in_the_readers_language(owner, dataset, session_models, language):
    api = Api(make_token(owner), language)
    splits = {"train_percent": 50, "validation_percent": 40, "test_percent": 0}
    body = api.post("/runs/drafts", draft_body(dataset, splits=splits)).json()
    assert (body["code"], body["field"]) == ("bad_ratios", "splits.train_percent")
    with override(language):
        problem = words("bad_ratios", family="dataset")
        assert body["message"] == words(
            "invalid", {"field": "splits.train_percent", "problem": problem}, family="api"
        )
    with override("en"):
        english = words("bad_ratios", family="dataset")
    assert (problem != english) == (language != "en")
    missing = api.post("/runs/drafts", draft_body(dataset, models={"task": "openai/test-gpt"}))
    body = missing.json()
    assert (body["code"], body["field"]) == ("no_reflection_model", "models.reflection")
    with override(language):
        assert words("no_reflection_model", family="step") in body["message"]


# -- the gate ----------------------------------------------------------------------------


def test_the_gate_opens_on_a_passed_check_of_exactly_this_draft(
    api, dataset, session_models, django_capture_on_commit_callbacks
):
    draft_id = made_draft(api, dataset)["id"]
    before = api.post(f"/runs/drafts/{draft_id}/submit")
    assert before.status_code == 409
    assert before.json()["code"] == "check_required"
    assert before.json()["message"] == words("check_required", family="step")

    check = passed_check(api, draft_id, session_models)
    draft = api.get(f"/runs/drafts/{draft_id}").json()
    assert draft["gate"] == {"open": True, "check_state": "passed", "check_id": check["id"]}
    assert draft["problems"] == []

    # Another seed draws other rows: the check no longer covers this draft.
    splits = {"train_percent": 50, "validation_percent": 50, "test_percent": 0, "seed": 8}
    changed = send(api, "put", f"/runs/drafts/{draft_id}", draft_body(dataset, splits=splits))
    assert changed.status_code == 200, changed.content.decode()
    assert changed.json()["gate"]["check_state"] == "stale"
    stale = api.post(f"/runs/drafts/{draft_id}/submit")
    assert stale.status_code == 409 and stale.json()["code"] == "check_stale"
    # The wizard's own words for it, in Spanish too.
    spanish = Api(api.token, "es").post(f"/runs/drafts/{draft_id}/submit").json()
    assert (
        stale.json()["message"] == "Changed since the last check: the splits. Run the check again."
    )
    assert spanish["code"] == "check_stale" and "cambió" in spanish["message"].lower()
    assert not Run.objects.exists()

    # Back to what was checked: the same check counts again.
    back = send(api, "put", f"/runs/drafts/{draft_id}", draft_body(dataset))
    assert back.json()["gate"]["open"] is True
    with django_capture_on_commit_callbacks(execute=False) as sent:
        submitted = api.post(f"/runs/drafts/{draft_id}/submit")
    assert submitted.status_code == 201, submitted.content.decode()
    run = submitted.json()
    assert len(sent) == 1  # the run's task message, once the row is committed
    stored = Run.objects.get(pk=run["id"])
    assert stored.draft_id == draft_id and stored.contract_check_id == check["id"]
    assert stored.config["budget"] == {"metric_calls": 60, "usd": 1.5}
    assert (run["status"], run["final"], run["draft_id"]) == ("queued", False, draft_id)
    assert run["progress"]["max_metric_calls"] == 60 and run["url"] == f"/en/runs/{run['id']}/"

    again = api.post(f"/runs/drafts/{draft_id}/submit")
    assert again.status_code == 409 and again.json()["code"] == "already_submitted"
    for method, path in (("post", "check"), ("put", "")):
        refused = send(
            api, method, f"/runs/drafts/{draft_id}/{path}".rstrip("/"), draft_body(dataset)
        )
        assert refused.status_code == 409 and refused.json()["code"] == "already_submitted"
    assert api.get(f"/runs/drafts/{draft_id}").json()["run_id"] == run["id"]


# -- runs ----------------------------------------------------------------------------------


def test_a_run_reads_as_its_page_shows_it(api, owner):
    run = hand_run(owner)
    read = api.get(f"/runs/{run.pk}").json()
    assert (read["status"], read["live"], read["final"]) == ("running", True, False)
    assert read["progress"] == {
        "metric_calls": 24,
        "max_metric_calls": 60,
        "iterations": 3,
        "candidates": 3,
        "best_score": 0.75,
        "best_candidate": 1,
        "seed_score": 0.0,
        "spent_usd": 0.0579,
        "max_usd": 5.0,
        "text": read["progress"]["text"],
    }
    assert "24" in read["progress"]["text"] and "60" in read["progress"]["text"]
    assert read["can_cancel"] and not read["can_resume"] and read["has_result"] is False
    assert read["url"] == f"/en/runs/{run.pk}/" and read["engine"] == "gepa"
    assert [row["id"] for row in api.get("/runs").json()] == [run.pk]
    # Its token is the page's: a wait that names another answers at once, as does a
    # wait of no time.
    assert api.get(f"/runs/{run.pk}/wait?timeout=0").json()["token"] == read["token"]
    assert api.get(f"/runs/{run.pk}/wait?since=old&timeout=30").json()["id"] == run.pk

    best = api.get(f"/runs/{run.pk}/best").json()
    assert best == {
        "candidate": 1,
        "text": HAND_TEXTS[1],
        "val_mean": 0.75,
        "seed_val_mean": 0.0,
        "final": False,
    }
    no_result = api.get(f"/runs/{run.pk}/result")
    assert no_result.status_code == 409 and no_result.json()["code"] == "no_result_yet"

    download = api.get(f"/runs/{run.pk}/bundle")
    assert download.status_code == 200 and download["Content-Type"] == "application/zip"
    assert download.content == bundle.for_run(Run.objects.get(pk=run.pk))
    with zipfile.ZipFile(io.BytesIO(download.content)) as archive:
        assert {"metric.py", "run.json"} <= set(archive.namelist())


def test_a_finished_runs_result_and_best_are_its_result_json(api, owner):
    run = hand_run(owner, status="finished", stop_reason="metric_calls")
    result = {
        "format": 1,
        "run": run.pk,
        "best": {"candidate": 1, "text": "the best", "val_mean": 0.75, "val_scores": {}},
        "seed": {"text": quiz.SEED, "val_mean": 0.0, "val_scores": {}},
    }
    Run.objects.filter(pk=run.pk).update(result=result)
    assert api.get(f"/runs/{run.pk}/result").json() == result
    best = api.get(f"/runs/{run.pk}/best").json()
    assert (best["text"], best["final"], best["seed_val_mean"]) == ("the best", True, 0.0)
    read = api.get(f"/runs/{run.pk}").json()
    assert read["final"] and read["stop_reason"] == "metric_calls" and read["reason"]
    with zipfile.ZipFile(io.BytesIO(api.get(f"/runs/{run.pk}/bundle").content)) as archive:
        assert json.loads(archive.read("result.json")) == result


@pytest.mark.parametrize("language", ["en", "es"])
def test_cancel_and_resume_follow_the_pages_rules(
    owner, language, django_capture_on_commit_callbacks
):
    api = Api(make_token(owner), language)
    running = hand_run(owner)
    refused = api.post(f"/runs/{running.pk}/resume")
    assert refused.status_code == 409 and refused.json()["code"] == "not_resumable"
    with override(language):
        label = str(Run.Status.RUNNING.label)
        assert refused.json()["message"] == words("not_resumable", {"status": label}, family="api")

    stopped = api.post(f"/runs/{running.pk}/cancel").json()
    assert stopped["stopping"] is True and stopped["run"]["cancel_requested"] is True
    assert Run.objects.get(pk=running.pk).cancel_requested

    paused = hand_run(owner, status="paused", failure="provider_failed")
    with django_capture_on_commit_callbacks(execute=False) as sent:
        resumed = api.post(f"/runs/{paused.pk}/resume")
    assert resumed.status_code == 200 and resumed.json()["status"] == "queued"
    assert len(sent) == 1

    ended = hand_run(owner, status="finished")
    for path in ("cancel", "resume"):
        response = api.post(f"/runs/{ended.pk}/{path}")
        assert response.status_code == 409
    assert api.post(f"/runs/{ended.pk}/cancel").json()["code"] == "already_ended"
    assert Run.objects.get(pk=ended.pk).status == "finished"
    queued = hand_run(owner, status="queued")
    cancelled = api.post(f"/runs/{queued.pk}/cancel").json()
    assert cancelled["stopping"] is False and cancelled["run"]["status"] == "cancelled"
