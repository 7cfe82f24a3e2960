"""An evaluation over a dataset with a person's judgement of each row: the human columns
never reach the metric, the summary's agreement figures are scikit-learn's and scipy's
on the same pairs, the page and the API say them, two versions are compared by them,
and a human column that cannot be read is refused at the start with its row."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse
from django.utils import translation
from scipy import stats
from sklearn.metrics import accuracy_score, cohen_kappa_score, confusion_matrix

from evaluations.execution import execute_evaluation
from evaluations.models import Evaluation
from metrics import services as metric_services
from submissions.services import dataset_create

pytestmark = pytest.mark.django_db

ROWS = 40

# Passes an answer that says "yes"; fails when the metric could see the person's columns.
METRIC = """
def score(input, output, expected=None):
    seen = set(input) | set(expected or {})
    if seen & {"verdict", "why", "rating"}:
        raise AssertionError(f"the metric saw {sorted(seen)}")
    right = output.startswith("yes")
    return (1.0 if right else 0.0), {"feedback": "says yes" if right else "says no"}
"""
# A stricter version: only "yes, because" passes.
STRICTER = METRIC.replace('output.startswith("yes")', '"x" in output')
# A graded metric, for a human score: the length of the answer, cut to 0..1.
GRADED = """
def score(input, output, expected=None):
    return min(1.0, len(output) / 40), {"feedback": f"{len(output)} characters"}
"""


def answer(i: int) -> str:
    return ("yes, because " + "x" * (i % 7)) if i % 3 else ("no" + " y" * (i % 5))


def verdict(i: int) -> str:
    """The person's label: mostly what the metric says, but not always."""
    says_yes = i % 3 != 0
    if i % 8 == 0:
        says_yes = not says_yes
    return "pass" if says_yes else "fail"


def rating(i: int) -> int:
    return 1 + (len(answer(i)) + (i % 4)) % 5


def upload(owner, *, human: str):
    text = io.StringIO()
    out = csv.writer(text)
    out.writerow(["question", "output", human, "why"])
    for i in range(ROWS):
        value = verdict(i) if human == "verdict" else rating(i)
        out.writerow([f"question {i}", answer(i), value, f"note {i}" if i % 8 == 0 else ""])
    return dataset_create(owner=owner, filename="judged.csv", data=text.getvalue().encode())


def form(dataset, version, roles: dict, **extra) -> dict:
    data = {
        "dataset": dataset.pk,
        "version": version.pk,
        "recorded_column": "output",
        "split": "all",
        "count": "every",
        "sample": "200",
        "sample_seed": "0",
        "split_mode": "ratio",
        "train_percent": "70",
        "validation_percent": "15",
        "test_percent": "15",
        "seed": "0",
        "split_column": "",
        "second": "",
        "second_version": "",
        **extra,
    }
    for index, column in enumerate(dataset.columns):
        data[f"role_{index}"] = roles[column]
        data[f"type_{index}"] = "text"
    return data


LABEL_ROLES = {
    "question": "input",
    "output": "ignore",
    "verdict": "human_label",
    "why": "human_note",
}


def evaluate(owner_client, metric, data, callbacks) -> Evaluation:
    with callbacks(execute=False):
        response = owner_client.post(reverse("evaluations:start", args=[metric.pk]), data)
    assert response.status_code == 302, response.content.decode()[-3000:]
    evaluation = Evaluation.objects.filter(owner=metric.owner).order_by("-pk").first()
    execute_evaluation(evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.DONE, evaluation.failure
    return evaluation


@pytest.fixture(autouse=True)
def english():
    """Paths in English, whatever page an earlier test read in another language."""
    with translation.override("en"):
        yield


@pytest.fixture
def metric(owner):
    metric = metric_services.metric_create(owner=owner, name="judged", starter="exact_match")
    metric_services.metric_save(metric, source=METRIC)
    return metric


def test_labels_agreement_is_sklearns_and_the_page_says_it(
    owner, owner_client, metric, django_capture_on_commit_callbacks
):
    dataset = upload(owner, human="verdict")
    version = metric.latest_version
    evaluation = evaluate(
        owner_client,
        metric,
        form(dataset, version, LABEL_ROLES),
        django_capture_on_commit_callbacks,
    )
    assert evaluation.summary["counts"]["valid"] == ROWS  # the metric never saw them
    people = [verdict(i) for i in range(ROWS)]
    metric_says = ["pass" if answer(i).startswith("yes") else "fail" for i in range(ROWS)]
    human = evaluation.summary["human"]
    assert (human["kind"], human["labelled"], human["compared"]) == ("label", ROWS, ROWS)
    assert human["classes"] == ["fail", "pass"] and human["notes"] == ROWS // 8
    first = human["first"]
    assert first["kappa"]["value"] == pytest.approx(cohen_kappa_score(people, metric_says))
    assert first["accuracy"]["value"] == pytest.approx(accuracy_score(people, metric_says))
    assert first["kappa"]["low"] <= first["kappa"]["value"] <= first["kappa"]["high"]
    expected = confusion_matrix(people, metric_says, labels=["fail", "pass"]).tolist()
    assert first["confusion"] == expected
    # The cases they disagree on are the rows the person overturned, and only those.
    overturned = {i for i in range(ROWS) if people[i] != metric_says[i]}
    assert set(human["disagree"]) == overturned
    assert human["second"] is None

    page = owner_client.get(reverse("evaluations:detail", args=[evaluation.pk])).content.decode()
    assert "Does the metric agree with people?" in page
    assert "Cohen&#x27;s kappa" in page or "Cohen's kappa" in page
    case = min(overturned)
    assert reverse("evaluations:case", args=[evaluation.pk, case]) in page
    assert f"note {case}" in page  # the person's note beside the metric's feedback
    case_page = owner_client.get(reverse("evaluations:case", args=[evaluation.pk, case]))
    assert "What the person said" in case_page.content.decode()
    spanish = owner_client.get(f"/es/evaluations/{evaluation.pk}/").content.decode()
    assert "Does the metric agree" not in spanish and "Kappa de Cohen" in spanish


def test_two_versions_are_compared_by_their_agreement_with_people(
    owner, owner_client, metric, django_capture_on_commit_callbacks
):
    dataset = upload(owner, human="verdict")
    first = metric.latest_version
    stricter, _ = metric_services.metric_save(metric, source=STRICTER)
    data = form(dataset, first, LABEL_ROLES, second="compare", second_version=stricter.pk)
    evaluation = evaluate(owner_client, metric, data, django_capture_on_commit_callbacks)
    people = [verdict(i) for i in range(ROWS)]
    says = ["pass" if "x" in answer(i) else "fail" for i in range(ROWS)]
    human = evaluation.summary["human"]
    assert human["second"]["kappa"]["value"] == pytest.approx(cohen_kappa_score(people, says))
    page = owner_client.get(reverse("evaluations:detail", args=[evaluation.pk])).content.decode()
    better = "agrees better with people"
    assert better in page and 'id="people-better"' in page


def test_a_human_score_is_compared_by_rank_and_calibration(
    owner, owner_client, metric, django_capture_on_commit_callbacks
):
    graded, _ = metric_services.metric_save(metric, source=GRADED)
    dataset = upload(owner, human="rating")
    roles = {"question": "input", "output": "ignore", "rating": "human_score", "why": "ignore"}
    data = form(dataset, graded, roles, human_scale_lo="1", human_scale_hi="5")
    evaluation = evaluate(owner_client, metric, data, django_capture_on_commit_callbacks)
    human = evaluation.summary["human"]
    assert human["kind"] == "score" and human["scale"] == [1.0, 5.0]
    people = [rating(i) for i in range(ROWS)]
    scores = [min(1.0, len(answer(i)) / 40) for i in range(ROWS)]
    first = human["first"]
    assert first["spearman"]["value"] == pytest.approx(stats.spearmanr(people, scores).statistic)
    assert first["kendall"]["value"] == pytest.approx(stats.kendalltau(people, scores).statistic)
    mad = sum(abs((p - 1) / 4 - s) for p, s in zip(people, scores, strict=True)) / ROWS
    assert first["mad"]["value"] == pytest.approx(mad)
    assert sum(b["count"] for b in first["calibration"]) == ROWS
    page = owner_client.get(reverse("evaluations:detail", args=[evaluation.pk])).content.decode()
    assert "Spearman" in page and "<svg" in page.split('id="people"')[1]


def test_human_columns_that_cannot_be_read_are_refused_with_their_row(
    owner, owner_client, metric, django_capture_on_commit_callbacks
):
    dataset = upload(owner, human="verdict")
    version = metric.latest_version
    page = reverse("evaluations:start", args=[metric.pk])
    two = dict(LABEL_ROLES, why="human_label")
    refused = owner_client.post(page, form(dataset, version, two)).content.decode()
    assert "are both a Human label" in refused
    # Declared labels that the rows do not all use: the first row that has another says so.
    declared = form(dataset, version, LABEL_ROLES, human_classes="fail, ok")
    refused = owner_client.post(page, declared).content.decode()
    assert "Row 2 of the human label verdict holds “pass”" in refused  # the header is row 1
    assert not Evaluation.objects.exists()


def test_the_wizard_offers_the_human_roles_and_its_evaluations_read_them(
    owner, owner_client, draft, django_capture_on_commit_callbacks
):
    from tests.submissions.test_submit_wizard import artifact_data, dataset_data, upload, url

    assert owner_client.post(url(draft, "artifact"), artifact_data()).status_code == 302

    text = io.StringIO()
    out = csv.writer(text)
    out.writerow(["question", "output", "human_verdict", "human_note"])
    for i in range(ROWS):
        out.writerow([f"question {i}", answer(i), verdict(i), "why" if i % 8 == 0 else ""])
    assert upload(owner_client, draft, text.getvalue().encode(), "judged.csv").status_code == 302
    draft.refresh_from_db()
    response = owner_client.get(url(draft, "dataset"))
    assert response.status_code == 200, response.get("Location")
    page = response.content.decode()
    # Guessed by their names: what the person said, and why.
    roles_row = page.split('class="roles"')[1].split("</tr>")[0]
    assert '<option value="human_label" selected>Human label</option>' in roles_row
    assert '<option value="human_note" selected>Human note</option>' in roles_row
    columns = ["question", "output", "human_verdict", "human_note"]
    # Two label columns: the step says so and keeps the roles it had.
    two = {"question": "input", "output": "output", "human_verdict": "human_label"}
    refused = owner_client.post(
        url(draft, "dataset"), dataset_data(columns, {**two, "human_note": "human_label"})
    )
    assert refused.status_code == 400
    assert "are both a Human label" in refused.content.decode()
    roles = {**two, "human_note": "human_note"}
    saved = owner_client.post(url(draft, "dataset"), dataset_data(columns, roles, action="save"))
    assert saved.status_code == 302
    draft.refresh_from_db()
    assert draft.roles["human_verdict"] == "human_label"
    # The check's sample cases never hold them.
    from evaluations import start
    from submissions import datasets

    facts = datasets.current_facts(draft)
    assert facts["problem"] is None
    for case in facts["sample_cases"]:
        assert set(case["input"]) == {"question"} and set(case["expected"]) == {"output"}
    assert start.draft_human(draft) == {
        "label_column": "human_verdict",
        "note_column": "human_note",
        "classes": ["fail", "pass"],
        "threshold": 0.5,
    }
