"""/api/v1/evaluations: started through the playground's form (its defaults, rules and
words), run here as the worker runs it, then read through the API: the summary, the
cases, the downloads (the page's bytes), the wait and the cancel; refusals, ownership and
tokens."""

from __future__ import annotations

import html
import time

import pytest
from django.db.models import Avg
from django.utils import translation

from api import tokens
from evaluations.execution import execute_evaluation
from evaluations.models import Evaluation, EvaluationCase
from metrics import services as metric_services
from tests.api.conftest import Api, make_token
from tests.evaluations.evaluation_data import make_dataset
from wording import words

pytestmark = pytest.mark.django_db

ROWS = 30
# Right when the recorded output is the label, with named scores; rows 10 and 20 raise,
# row 5 returns a bare number (tests.evaluations.evaluation_data.output_of).
METRIC = """
def score(input, output, expected=None):
    if output == "boom":
        raise KeyError("boom")
    if output == "pair":
        return 0.5
    right = 1.0 if output == expected["label"] else 0.0
    feedback = "Correct label." if right else f"Expected {expected['label']!r}, got {output!r}."
    return right, {"feedback": feedback, "scores": {"exact": right, "size": len(output) / 10}}
"""


@pytest.fixture
def metric(owner):
    metric = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    metric_services.metric_save(metric, source=METRIC)
    return metric


@pytest.fixture
def dataset(owner):
    return make_dataset(owner, ROWS)


def start(api: Api, callbacks, **body):
    with callbacks(execute=False) as sent:
        response = api.post("/evaluations", body)
    return response, sent


def page_bytes(client, path: str) -> bytes:
    response = client.get(path)
    assert response.status_code == 200
    return b"".join(response.streaming_content)


def test_an_evaluation_from_start_to_results(
    announced,
    api,
    owner,
    outsider_api,
    owner_client,
    metric,
    dataset,
    django_capture_on_commit_callbacks,
):
    response, sent = start(
        api,
        django_capture_on_commit_callbacks,
        metric_id=metric.pk,
        dataset_id=dataset.pk,
        count="every",
    )
    assert response.status_code == 202, response.content
    started = response.json()
    assert len(sent) == 1
    evaluation = Evaluation.objects.get(owner=owner)
    assert started["id"] == evaluation.pk and started["total"] == ROWS
    assert (started["status"], started["final"], started["summary"]) == ("queued", False, None)
    assert (started["metric_id"], started["version"]) == (metric.pk, 2)
    assert started["url"] == f"/en/evaluations/{evaluation.pk}/"
    # The page's guesses: the question is the input, the label the expected value, the
    # recorded output ignored as a role.
    assert evaluation.roles == {"question": "input", "label": "output", "output": "ignore"}
    assert evaluation.recorded_column == "output"
    # Nothing moved: a wait that may not last answers at once, as it is.
    assert api.get(f"/evaluations/{evaluation.pk}/wait?timeout=0").json() == started

    execute_evaluation(evaluation.pk)  # the worker's part, here
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.DONE
    # The list: this one, with its mean; another user's list is empty.
    (listed,) = api.get("/evaluations").json()
    assert (listed["id"], listed["status"], listed["done"]) == (evaluation.pk, "done", ROWS)
    assert listed["mean"] is not None and listed["dataset_name"] == dataset.filename
    assert outsider_api.get("/evaluations").json() == []
    # A wait on a token it no longer has answers at once with the change.
    waited = api.get(f"/evaluations/{evaluation.pk}/wait?since={started['token']}").json()
    done = api.get(f"/evaluations/{evaluation.pk}").json()
    assert waited == done
    assert (done["status"], done["final"], done["done"]) == ("done", True, ROWS)
    summary = done["summary"]
    cases = EvaluationCase.objects.filter(evaluation=evaluation)
    mean = cases.filter(status="valid").aggregate(mean=Avg("score"))["mean"]
    assert summary["mean"] == pytest.approx(mean) and summary["score"]["mean"] == summary["mean"]
    assert summary["cases"] == ROWS and summary["valid"] == ROWS - 3 and summary["invalid"] == 3
    assert summary["counts"]["error"] == 2 and summary["counts"]["invalid"] == 1
    assert sorted(summary["named"]) == ["exact", "size"]
    assert summary["named"]["exact"]["n"] == ROWS - 3
    assert summary["named"]["exact"]["mean"] == pytest.approx(mean)
    assert sum(b["count"] for b in summary["score"]["bins"]) == ROWS - 3
    errors = next(group for group in summary["failures"] if group["status"] == "error")
    assert errors["count"] == 2 and errors["exception_type"] == "KeyError"
    assert errors["examples"] == [10, 20] and "KeyError" in errors["message"]
    # In Spanish, as the page words it for a reader of Spanish.
    spanish = Api(api.token, "es").get(f"/evaluations/{evaluation.pk}").json()
    assert spanish["url"] == f"/es/evaluations/{evaluation.pk}/"
    assert spanish["status_label"] != done["status_label"]
    spanish_errors = next(g for g in spanish["summary"]["failures"] if g["status"] == "error")
    assert spanish_errors["message"] != errors["message"]
    # The verdict counts every case, in the page's words and the reader's language.
    verdict = done["verdict"]
    assert (verdict["code"], verdict["passed"]) == ("cases_failed", False)
    assert (verdict["cases"], verdict["failed"]) == (ROWS, 3)
    assert verdict["headline"] == f"3 of {ROWS} cases failed"
    assert verdict["text"] == f"3 of {ROWS} cases failed: {errors['message']}"
    assert spanish["verdict"]["headline"] == f"3 de {ROWS} casos fallaron"

    listed = api.get(f"/evaluations/{evaluation.pk}/cases?per_page=12&page=3").json()
    assert (listed["page"], listed["pages"], listed["count"]) == (3, 3, ROWS)
    assert [case["index"] for case in listed["cases"]] == list(range(24, ROWS))
    # A page past the end is empty, as asked, and says how many pages there are.
    past = api.get(f"/evaluations/{evaluation.pk}/cases?per_page=12&page=99").json()
    assert (past["page"], past["pages"], past["count"], past["cases"]) == (99, 3, ROWS, [])
    size = api.get(f"/evaluations/{evaluation.pk}/cases?size=12")
    assert size.status_code == 422 and size.json()["field"] == "size"
    huge = api.get(f"/evaluations/{evaluation.pk}/cases?per_page=5000")
    assert huge.status_code == 422 and "at most 500" in huge.json()["message"]
    invalid = api.get(f"/evaluations/{evaluation.pk}/cases?status=invalid").json()
    assert [case["index"] for case in invalid["cases"]] == [5, 10, 20]
    assert invalid["count"] == 3
    bare = invalid["cases"][0]
    assert bare["status"] == "invalid" and bare["problem"] == "not_a_pair"
    with translation.override("en"):
        assert bare["message"] == words("not_a_pair", cases.get(index=5).params)
    right = api.get(f"/evaluations/{evaluation.pk}/cases?min=1&per_page=1").json()
    assert right["cases"][0]["scores"] == {"exact": 1.0, "size": 0.7}
    assert right["count"] == cases.filter(score__gte=1).count()

    for fmt in ("csv", "jsonl"):
        download = api.get(f"/evaluations/{evaluation.pk}/download.{fmt}")
        assert download.status_code == 200
        assert download["Content-Disposition"] == (
            f'attachment; filename="evaluation-{evaluation.pk}.{fmt}"'
        )
        page = page_bytes(owner_client, f"/en/evaluations/{evaluation.pk}/download.{fmt}")
        assert b"".join(download.streaming_content) == page
        assert page.decode().count("\n") == ROWS + (fmt == "csv")

    # Over: nothing to cancel.
    cancel = api.post(f"/evaluations/{evaluation.pk}/cancel")
    assert cancel.status_code == 200 and cancel.json()["cancelled"] is False
    assert cancel.json()["evaluation"]["status"] == "done"

    # Another user's evaluation does not exist for them.
    for path in ("", "/wait?timeout=0", "/cases", "/download.csv", "/download.jsonl"):
        missing = outsider_api.get(f"/evaluations/{evaluation.pk}{path}")
        assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    assert outsider_api.post(f"/evaluations/{evaluation.pk}/cancel").status_code == 404


def test_the_playgrounds_options_reach_the_evaluation(
    api, metric, dataset, django_capture_on_commit_callbacks
):
    first = metric.latest_version
    second, _ = metric_services.metric_save(metric, source=METRIC + "\n# again\n")
    response, _ = start(
        api,
        django_capture_on_commit_callbacks,
        metric_id=metric.pk,
        version=first.number,
        dataset_id=dataset.pk,
        columns={"label": "ignore", "output": "output"},
        recorded_column="label",
        types={"question": "text"},
        split="test",
        split_mode="ratio",
        train_percent=60,
        validation_percent=20,
        test_percent=20,
        seed=3,
        sample=4,
        sample_seed=9,
        second="compare",
        second_version=second.number,
    )
    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["version"], body["second"]) == (first.number, "compare")
    assert body["second_version"] == second.number
    evaluation = Evaluation.objects.get(pk=body["id"])
    assert evaluation.recorded_column == "label" and evaluation.total == 4
    assert evaluation.roles == {"question": "input", "label": "ignore", "output": "output"}
    assert evaluation.selection == {
        "split": "test",
        "mode": "ratio",
        "ratios": [60, 20, 20],
        "seed": 3,
        "column": "",
        "sample": 4,
        "sample_seed": 9,
    }
    assert evaluation.second_version == second and evaluation.metric_version == first


def page_error(owner_client, metric, dataset, language: str, **changes) -> str:
    """The playground page's answer to the same mistake, in `language`."""
    data = {
        "dataset": dataset.pk,
        "version": metric.latest_version.pk,
        "recorded_column": "output",
        "split": "all",
        "count": "every",
        "split_mode": "ratio",
        "second": "",
        "role_0": "input",
        "role_1": "output",
        "role_2": "ignore",
        **changes,
    }
    response = owner_client.post(f"/{language}/metrics/{metric.pk}/evaluate/", data)
    assert response.status_code == 400
    return response.content.decode()


@pytest.mark.parametrize(
    ("body", "field", "page_changes"),
    [
        ({"recorded_column": "nope"}, "recorded_column", {"recorded_column": "nope"}),
        ({"columns": {"question": "boss"}}, "columns.question", {"role_0": "boss"}),
        ({"sample": 0}, "sample", {"count": "sample", "sample": "0", "sample_seed": "0"}),
        ({"split": "test", "train_percent": 50}, "train_percent", None),
    ],
)
def test_the_forms_refusals_name_the_field_in_the_readers_language(
    owner, owner_client, metric, dataset, body, field, page_changes
):
    messages = {}
    for language in ("en", "es", "hi"):
        response = Api(make_token(owner), language).post(
            "/evaluations", {"metric_id": metric.pk, "dataset_id": dataset.pk, **body}
        )
        assert response.status_code == 422, response.content
        error = response.json()
        assert error["field"] == field
        prefix = f"{field}: "
        assert error["message"].startswith(prefix)
        messages[language] = error["message"][len(prefix) :]
        if page_changes is not None:
            page = page_error(owner_client, metric, dataset, language, **page_changes)
            assert html.escape(messages[language]) in page
    assert len(set(messages.values())) == 3
    if field == "train_percent":
        with translation.override("hi"):
            assert messages["hi"] == words("bad_ratios", family="dataset")
    assert not Evaluation.objects.exists()


def test_what_the_form_cannot_name(owner, metric, dataset, outsider):
    api = Api(make_token(owner), "es")
    start = {"metric_id": metric.pk, "dataset_id": dataset.pk}
    unknown = api.post("/evaluations", {**start, "columns": {"nope": "input"}})
    assert unknown.status_code == 422
    assert (unknown.json()["code"], unknown.json()["field"]) == ("unknown_column", "columns.nope")
    with translation.override("es"):
        assert unknown.json()["message"] == words(
            "unknown_column", {"column": "nope"}, family="dataset"
        )
    version = api.post("/evaluations", {**start, "version": 7})
    assert (version.status_code, version.json()["field"]) == (422, "version")
    no_input = api.post("/evaluations", {**start, "columns": {"question": "ignore"}})
    assert no_input.status_code == 422 and no_input.json()["field"] is None
    with translation.override("es"):
        assert no_input.json()["message"] == words("no_input_column", family="dataset")
    wrong_type = api.post("/evaluations", {**start, "sample": "many"})
    assert wrong_type.status_code == 422 and wrong_type.json()["field"] == "sample"
    # Another user's metric or dataset is none of this user's.
    theirs = make_dataset(outsider, 3)
    assert api.post("/evaluations", {**start, "dataset_id": theirs.pk}).status_code == 404
    other = metric_services.metric_create(owner=outsider, name="theirs", starter="exact_match")
    assert api.post("/evaluations", {**start, "metric_id": other.pk}).status_code == 404
    assert not Evaluation.objects.exists()


def test_refusals_say_why_in_the_pages_words(
    owner, metric, dataset, settings, django_capture_on_commit_callbacks
):
    settings.EVALUATION_RATE_PER_MINUTE = 1
    api = Api(make_token(owner), "hi")
    body = {"metric_id": metric.pk, "dataset_id": dataset.pk}
    response, _ = start(api, django_capture_on_commit_callbacks, **body)
    assert response.status_code == 202
    active, _ = start(api, django_capture_on_commit_callbacks, **body)
    assert active.status_code == 429 and active["Retry-After"]
    assert active.json()["code"] == "too_many_active"
    with translation.override("hi"):
        assert active.json()["message"] == words(
            "too_many_active", {"limit": 1}, family="evaluation_refusal"
        )
    Evaluation.objects.update(status=Evaluation.Status.DONE)
    rate, _ = start(api, django_capture_on_commit_callbacks, **body)
    assert rate.status_code == 429 and rate.json()["code"] == "rate_limited"
    with translation.override("hi"):
        assert rate.json()["message"] == words(
            "rate_limited", {"limit": 1}, family="evaluation_refusal"
        )
    settings.EVALUATION_RATE_PER_MINUTE = 5
    settings.EVALUATION_MAX_CASES = 10
    large, _ = start(api, django_capture_on_commit_callbacks, **body, count="every")
    assert large.status_code == 422 and large.json()["code"] == "too_many_cases"
    assert Evaluation.objects.count() == 1


def test_a_queued_evaluation_is_cancelled(api, metric, dataset, django_capture_on_commit_callbacks):
    response, _ = start(
        api, django_capture_on_commit_callbacks, metric_id=metric.pk, dataset_id=dataset.pk
    )
    pk = response.json()["id"]
    # Nothing moves while it waits for a worker: the wait lasts its timeout.
    began = time.monotonic()
    waited = api.get(f"/evaluations/{pk}/wait?timeout=0.3")
    assert time.monotonic() - began >= 0.3
    assert waited.json() == response.json()
    cancel = api.post(f"/evaluations/{pk}/cancel")
    assert cancel.status_code == 200 and cancel.json()["cancelled"] is True
    ended = cancel.json()["evaluation"]
    assert (ended["status"], ended["failure"], ended["final"]) == ("failed", "cancelled", True)
    assert ended["failure_message"] == "You cancelled this evaluation before it finished."


def test_tokens_are_checked(owner, read_api, expired_token, metric, dataset):
    evaluation = Evaluation.objects.create(owner=owner, dataset=dataset, source="x", total=3)
    path = f"/evaluations/{evaluation.pk}"
    assert Api(None).get(path).json()["code"] == "unauthenticated"
    row, token = tokens.token_create(owner=owner, name="gone", scope="write", days=30)
    tokens.token_revoke(row)
    assert Api(token).get(path).json()["code"] == "token_revoked"
    assert Api(expired_token).get(f"{path}/cases").json()["code"] == "token_expired"
    assert read_api.get(path).status_code == 200
    for write in ("/evaluations", f"{path}/cancel"):
        refused = read_api.post(write, {"metric_id": metric.pk, "dataset_id": dataset.pk})
        assert refused.status_code == 403 and refused.json()["code"] == "read_only_token"
    assert Evaluation.objects.get().status == Evaluation.Status.QUEUED
