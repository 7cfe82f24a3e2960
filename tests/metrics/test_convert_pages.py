"""Convert to the contract, in the playground and on the new-metric page: the diff is
reviewed first, only an accepted conversion is saved, and then the check runs on it."""

from __future__ import annotations

import json

import pytest

from checks.models import Check
from contract.cases import parse_cases_jsonl
from contract.engine import run_check
from jobs import sandbox_pool
from metrics import services as metric_services
from metrics.models import Conversion, Metric

pytestmark = pytest.mark.django_db

# The DSPy GEPA AIME tutorial's metric, as the tutorial has it (tests/public_metrics).
DSPY_METRIC = """\
import dspy


def metric_with_feedback(example, prediction, trace=None, pred_name=None, pred_trace=None):
    correct_answer = int(example["answer"])
    try:
        llm_answer = int(prediction.answer)
    except ValueError:
        # Not a number at all.
        return dspy.Prediction(score=0, feedback=f"'{prediction.answer}' is not an integer.")
    score = int(correct_answer == llm_answer)
    return dspy.Prediction(score=score, feedback=f"The correct answer is '{correct_answer}'.")
"""


@pytest.fixture
def dspy_metric(owner):
    metric = metric_services.metric_create(owner=owner, name="aime", starter="exact_match")
    metric_services.metric_save(metric, source=DSPY_METRIC)
    return metric


def test_the_review_shows_the_diff_and_saves_nothing(owner_client, dspy_metric):
    response = owner_client.get(f"/en/metrics/{dspy_metric.pk}/convert/")
    body = response.content.decode()
    assert response.status_code == 200
    assert "Written for DSPy" in body
    converted = response.context["review"].converted
    assert "def score(input, output, expected=None):" in converted
    assert "# Not a number at all." in converted  # comments kept
    assert "not an integer" in body and 'class="diff-table unified"' in body
    assert 'id="accept-conversion"' in body
    assert dspy_metric.versions.count() == 2


def test_accepting_saves_a_new_version_and_runs_the_check(owner_client, dspy_metric):
    response = owner_client.post(f"/en/metrics/{dspy_metric.pk}/convert/", {"version": "2"})
    check = Check.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/en/metrics/{dspy_metric.pk}/?check={check.pk}#check"
    latest = dspy_metric.latest_version
    assert latest.number == 3 and check.metric_version == latest
    assert "def score(input, output, expected=None):" in latest.source
    assert "import dspy" not in latest.source
    assert 'return 0, {"feedback": f"\'{output}\' is not an integer."}' in latest.source
    # What was saved keeps the contract on the metric's own kind of case.
    case = {"input": {"problem": "2+2"}, "output": "4", "expected": {"answer": "4"}}
    cases = parse_cases_jsonl("\n".join([json.dumps(case)] * 3).encode())
    result = run_check(latest.source, cases, timeout_s=10)
    assert result.passed is True
    assert [c.score for c in result.cases] == [1.0, 1.0, 1.0]


def test_a_metric_in_the_contract_has_nothing_to_convert(owner_client, owner):
    metric = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    body = owner_client.get(f"/en/metrics/{metric.pk}/convert/").content.decode()
    assert "accept-conversion" not in body
    assert "Nothing was converted." in body or "nothing to convert" in body
    owner_client.post(f"/en/metrics/{metric.pk}/convert/", {"version": "1"})
    assert metric.versions.count() == 1 and not Check.objects.exists()


def test_a_source_that_does_not_parse_says_why(owner_client, owner):
    metric = metric_services.metric_create(owner=owner, name="broken", starter="exact_match")
    metric_services.metric_save(metric, source="def metric(example, pred:\n")
    response = owner_client.get(f"/en/metrics/{metric.pk}/convert/")
    assert response.status_code == 200
    assert "Syntax error at line 1" in response.content.decode()


def test_another_users_metric_and_a_wrong_version_answer_404(client, outsider, dspy_metric):
    client.force_login(outsider)
    assert client.get(f"/en/metrics/{dspy_metric.pk}/convert/").status_code == 404
    assert (
        client.post(f"/en/metrics/{dspy_metric.pk}/convert/", {"version": "2"}).status_code == 404
    )
    client.force_login(dspy_metric.owner)
    assert client.get(f"/en/metrics/{dspy_metric.pk}/convert/?version=9").status_code == 404
    assert client.get(f"/en/metrics/{dspy_metric.pk}/convert/?version=x").status_code == 404


def test_a_failed_check_of_a_dspy_metric_offers_the_conversion(owner_client, owner, dspy_metric):
    version = dspy_metric.latest_version
    # The worker's sandbox, with the libraries a metric may import (dspy among them).
    result = run_check(version.source, timeout_s=10, sandbox_config=sandbox_pool.base_config())
    assert result.stage("load").problem == "no_score_function"
    check = Check.objects.create(
        owner=owner,
        source=version.source,
        metric_version=version,
        status=Check.Status.FAILED,
        result=result.to_dict(),
    )
    body = owner_client.get(f"/en/checks/{check.pk}/").content.decode()
    assert 'id="convert-metric"' in body
    assert f"/en/metrics/{dspy_metric.pk}/convert/?version=2" in body


def test_importing_reviews_then_creates_both_versions(owner_client, owner):
    data = {"name": "aime", "source": DSPY_METRIC, "action": "review"}
    reviewed = owner_client.post("/en/metrics/new/import/", data)
    body = reviewed.content.decode()
    assert reviewed.status_code == 200 and 'id="create-imported"' in body
    assert not Metric.objects.exists()
    digest = body.split('name="reviewed" value="')[1].split('"')[0]
    created = owner_client.post(
        "/en/metrics/new/import/", {**data, "action": "create", "reviewed": digest}
    )
    metric = Metric.objects.get(owner=owner)
    assert created["Location"] == f"/en/metrics/{metric.pk}/"
    first, second = metric.versions.order_by("number")
    assert first.source == DSPY_METRIC
    assert "def score(input, output, expected=None):" in second.source


def test_importing_a_source_changed_after_its_review_reviews_it_again(owner_client):
    data = {"name": "aime", "source": DSPY_METRIC, "action": "create", "reviewed": "0" * 64}
    response = owner_client.post("/en/metrics/new/import/", data)
    assert response.status_code == 200 and not Metric.objects.exists()
    assert "review it again" in response.content.decode()


@pytest.mark.parametrize("language", ["es", "hi"])
def test_the_conversion_pages_speak_the_readers_language(owner_client, dspy_metric, language):
    body = owner_client.get(f"/{language}/metrics/{dspy_metric.pk}/convert/").content.decode()
    english = ("Convert to the contract", "Save as a new version and run the check")
    assert not any(text in body for text in english)
    page = owner_client.get(f"/{language}/metrics/new/import/").content.decode()
    assert "Start from a DSPy or gepa metric" not in page


# Between users: a conversion is kept, limited a minute, one at a time, and bounded.


def test_a_conversion_is_kept_and_read_back_without_converting_again(
    owner_client, owner, dspy_metric, settings
):
    settings.CONVERT_RATE_PER_MINUTE = 1
    for _ in range(3):  # the page, viewed again and again, converts once
        response = owner_client.get(f"/en/metrics/{dspy_metric.pk}/convert/")
        assert 'id="accept-conversion"' in response.content.decode()
    assert Conversion.objects.filter(owner=owner).count() == 1
    # Accepting reads the kept conversion too, within the same one a minute.
    owner_client.post(f"/en/metrics/{dspy_metric.pk}/convert/", {"version": "2"})
    assert dspy_metric.versions.count() == 3
    assert "def score(input, output, expected=None):" in dspy_metric.latest_version.source


def test_past_its_rate_a_conversion_is_refused_in_the_readers_words(owner_client, owner, settings):
    settings.CONVERT_RATE_PER_MINUTE = 2
    answers = [
        owner_client.post(
            "/es/metrics/new/import/",
            {"name": "aime", "source": DSPY_METRIC + f"\n# {i}\n", "action": "review"},
        )
        for i in range(3)
    ]
    assert all(answer.status_code == 200 for answer in answers)
    assert [answer.context["review"].converted is not None for answer in answers] == [
        True,
        True,
        False,
    ]
    refused = answers[2].context["review"].error
    assert "2" in refused and "converted" not in refused  # Spanish words, with the limit
    assert not Metric.objects.exists()


def test_a_second_conversion_at_once_waits_for_the_first(owner_client, owner, settings):
    from jobs import limits

    assert limits.lease(owner, limits.CONVERTING, seconds=60)  # one is running
    answer = owner_client.post(
        "/en/metrics/new/import/", {"name": "aime", "source": DSPY_METRIC, "action": "review"}
    )
    assert "Another conversion of yours is still running" in answer.content.decode()
    limits.release(owner, limits.CONVERTING)
    answer = owner_client.post(
        "/en/metrics/new/import/", {"name": "aime", "source": DSPY_METRIC, "action": "review"}
    )
    assert 'id="create-imported"' in answer.content.decode()


def test_a_conversion_past_its_limits_says_which_and_is_tried_again_later(
    owner_client, owner, settings
):
    settings.CONVERT_SECONDS = 1
    helpers = "".join(
        f"def helper_{i}(a, b):\n    if a > b:\n        return a - b\n    return b + a * {i}\n\n"
        for i in range(3000)
    )
    data = {"name": "big", "source": DSPY_METRIC + helpers, "action": "review"}
    answer = owner_client.post("/en/metrics/new/import/", data)
    assert answer.status_code == 200
    assert "limits: 1 s of CPU time or 1024 MB" in answer.content.decode()
    assert not Conversion.objects.exists()  # a moment's limit is not kept as the answer


TWO_METRICS = """\
def exact(example, pred, trace=None):
    return float(pred.answer == example.answer)


def loose(example, pred, trace=None):
    return float(example.answer.lower() in pred.answer.lower())
"""


def test_where_several_functions_could_be_the_metric_the_page_asks_which(owner_client, owner):
    metric = metric_services.metric_create(
        owner=owner, name="two", starter="exact_match", source=TWO_METRICS
    )
    url = f"/en/metrics/{metric.pk}/convert/"
    body = owner_client.get(url).content.decode()
    assert "Which one is the metric?" in body
    assert 'href="?version=1&amp;metric=loose"' in body and "Convert loose" in body
    picked = owner_client.get(url, {"version": 1, "metric": "loose"})
    converted = picked.context["review"].converted
    assert "def score(input, output, expected=None):" in converted
    assert "def exact(example, pred, trace=None):" in converted  # left as it was
    assert 'name="metric" value="loose"' in picked.content.decode()
    owner_client.post(url, {"version": 1, "metric": "loose"})
    saved = Metric.objects.get(pk=metric.pk).latest_version.source
    assert "example['answer'].lower() in output.lower()" in saved.replace('"', "'")


def test_a_contract_metric_returning_a_framework_object_is_converted_from_its_panel(
    owner_client, owner
):
    source = (
        "import dspy\n\n"
        "def score(input, output, expected=None):\n"
        '    return dspy.Prediction(score=1.0, feedback="Fine.")\n'
    )
    metric = metric_services.metric_create(
        owner=owner, name="c", starter="exact_match", source=source
    )
    version = metric.latest_version
    result = run_check(source, timeout_s=20, sandbox_config=sandbox_pool.base_config())
    assert result.looks_like == {"kind": "contract_return", "convertible": True}
    check = Check.objects.create(
        owner=owner,
        source=source,
        metric_version=version,
        status=Check.Status.FAILED,
        result=result.to_dict(),
    )
    body = owner_client.get(f"/en/metrics/{metric.pk}/?check={check.pk}").content.decode()
    assert "This file has the contract&#x27;s score(input, output, expected)" in body
    assert 'id="convert-metric"' in body
    review = owner_client.get(f"/en/metrics/{metric.pk}/convert/").context["review"]
    assert review.changed and 'return 1.0, {"feedback": "Fine."}' in review.converted


def test_a_failure_convert_cannot_help_offers_no_convert(owner_client, owner):
    source = "def score(input, output, expected=None):\n    return 1 / 0\n"
    metric = metric_services.metric_create(
        owner=owner, name="z", starter="exact_match", source=source
    )
    result = run_check(source, timeout_s=20, sandbox_config=sandbox_pool.base_config())
    assert result.looks_like is None
    check = Check.objects.create(
        owner=owner,
        source=source,
        metric_version=metric.latest_version,
        status=Check.Status.FAILED,
        result=result.to_dict(),
    )
    body = owner_client.get(f"/en/metrics/{metric.pk}/?check={check.pk}").content.decode()
    assert 'id="convert-metric"' not in body and "convert-offer" not in body
