"""Scoring each case K times (2 to 5) to measure a judge's own noise: what the worker
writes of the K scorings, the summary's "noise" block over them, the results page, the
case table and the case page that say it, and the start form's "How many times" with its
cost and budget counted K times."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from django.utils import translation
from django.utils.translation import gettext

from contract.cases import Case
from contract.evaluation import Scored
from contract.results import CaseResult
from evaluations import start_forms
from evaluations.execution import case_row
from evaluations.models import Evaluation, EvaluationCase
from evaluations.services import scaled_limits
from evaluations.summary import summarize
from tests.evaluations.evaluation_data import make_dataset
from tests.evaluations.test_evaluation_run import RANDOM_METRIC, run
from tests.evaluations.test_evaluation_start import (
    check_with_costs,
    evaluate_url,
    start,
    start_data,
)
from tests.submissions.test_submit_wizard import fill_to_check

pytestmark = pytest.mark.django_db

NAN = math.nan


def scoring(status: str, score: float | None, feedback: str = "") -> CaseResult:
    row = CaseResult(index=0)
    row.status, row.score, row.feedback = status, score, feedback
    row.problem = "" if status == "valid" else "exception"
    return row


def scored(first: CaseResult, *others: CaseResult) -> Scored:
    case = Case(input={"q": "?"}, output="a", expected=None)
    return Scored(0, case, first, others[0] if others else None, "a", 5.0, list(others[1:]))


# -- what the worker writes of one case -------------------------------------------------


def test_a_case_scored_k_times_keeps_every_later_scoring_and_their_spread():
    row = case_row(
        1,
        scored(scoring("valid", 1.0, "yes"), scoring("valid", 0.0, "no"), scoring("valid", 1.0)),
        0,
        2,
        repeat=True,
    )
    assert row["repeats"] == [
        {"status": "valid", "problem": "", "score": 0.0},
        {"status": "valid", "problem": "", "score": 1.0},
    ]
    # The first of them is the second scoring the old pages read.
    assert (row["second_status"], row["second_score"]) == ("valid", 0.0)
    assert row["differs"] is True and row["gap"] == 1.0


def test_k_scorings_that_agree_do_not_differ_and_an_error_among_them_does():
    steady = case_row(
        1, scored(*(scoring("valid", 0.5, "same") for _ in range(4))), 0, 2, repeat=True
    )
    assert steady["differs"] is False and steady["gap"] == 0.0 and len(steady["repeats"]) == 3
    # Only the third scoring failed: the K verdicts are not all the same; the spread is
    # of the valid scores alone.
    failed = case_row(
        1,
        scored(scoring("valid", 0.5), scoring("valid", 0.75), scoring("error", None)),
        0,
        2,
        repeat=True,
    )
    assert failed["differs"] is True and failed["gap"] == 0.25
    assert failed["repeats"][1] == {"status": "error", "problem": "exception", "score": None}


def test_a_case_scored_once_or_compared_keeps_no_repeats():
    assert case_row(1, scored(scoring("valid", 1.0)), 0, 2)["repeats"] is None
    compared = case_row(1, scored(scoring("valid", 1.0), scoring("valid", 0.0)), 0, 2)
    assert compared["repeats"] is None and compared["differs"] is True


# -- a K-repeat evaluation, run in this process in real sandboxes -----------------------


def test_a_random_metric_scored_three_times_flips_on_every_case(owner):
    evaluation = run(
        owner, make_dataset(owner, 10), source=RANDOM_METRIC, second="repeat", repeats=3
    )
    assert evaluation.status == Evaluation.Status.DONE, evaluation.failure_params
    cases = list(EvaluationCase.objects.filter(evaluation=evaluation).order_by("index"))
    assert len(cases) == 10
    for case in cases:
        scores = [case.score] + [r["score"] for r in case.repeats]
        assert len(case.repeats) == 2 and len(set(scores)) == 3  # three fresh processes
        assert case.differs and case.gap == pytest.approx(max(scores) - min(scores))
        assert case.second_score == case.repeats[0]["score"]
    noise = evaluation.summary["noise"]
    assert noise["k"] == 3 and noise["n"] == 10
    assert noise["flip_share"]["value"] == 1.0
    # The same numbers numpy gives for the cases' scores.
    scores = np.array([[c.score] + [r["score"] for r in c.repeats] for c in cases])
    assert noise["variance"] == pytest.approx(np.var(scores, axis=1, ddof=1).mean())
    assert noise["mean"]["value"] == pytest.approx(scores.mean(axis=1).mean())
    assert noise["mean"]["low"] <= noise["mean"]["value"] <= noise["mean"]["high"]
    assert evaluation.summary["flaky"]["count"] == 10  # still counted for the old pages


# -- the summary's noise block ------------------------------------------------------------


def repeat_evaluation(owner, k: int, cases: dict[int, list[tuple[str, float | None]]], **fields):
    """A done K-repeat evaluation whose cases were scored as given: [(status, score), ...]
    a case, the first scoring first (one only: its first scoring failed)."""
    evaluation = Evaluation.objects.create(
        owner=owner,
        dataset=make_dataset(owner, 1),
        source="from skynet import llm\n\ndef score(input, output, expected=None):\n"
        "    return float(llm('?')), {}\n",
        second=Evaluation.Second.REPEAT,
        repeats=k,
        total=len(cases),
        done=len(cases),
        status=Evaluation.Status.DONE,
        **fields,
    )
    for index, verdicts in cases.items():
        (status, score), others = verdicts[0], verdicts[1:]
        valid = [s for st, s in verdicts if st == "valid" and s is not None]
        EvaluationCase.objects.create(
            evaluation=evaluation,
            index=index,
            row=index,
            file_row=index + 2,
            status=status,
            score=score,
            problem="" if status == "valid" else "exception",
            second={"status": others[0][0], "score": others[0][1]} if others else None,
            second_status=others[0][0] if others else "",
            second_score=others[0][1] if others else None,
            repeats=[{"status": st, "problem": "", "score": s} for st, s in others] or None,
            differs=len(set(verdicts)) > 1,
            gap=max(valid) - min(valid) if len(valid) > 1 else None,
        )
    return evaluation


def test_the_noise_block_measures_the_cases_scored_k_times(owner):
    cases = {
        0: [("valid", 1.0), ("valid", 1.0), ("valid", 1.0)],
        1: [("valid", 1.0), ("valid", 0.0), ("valid", 1.0)],
        2: [("valid", 0.0), ("valid", 0.0), ("valid", 0.0)],
        3: [("valid", 0.0), ("error", None), ("valid", 1.0)],
        4: [("timeout", None)],  # its first scoring failed: never scored again
    }
    noise = summarize(repeat_evaluation(owner, 3, cases))["noise"]
    assert noise["k"] == 3 and noise["n"] == 4
    assert noise["flip_share"]["value"] == 0.5
    rows = [[1, 1, 1], [1, 0, 1], [0, 0, 0], [0, 1]]
    assert noise["variance"] == pytest.approx(np.mean([np.var(r, ddof=1) for r in rows]))
    assert noise["spread_mean"] == pytest.approx(np.mean([np.std(r, ddof=1) for r in rows]))
    assert noise["mean"]["value"] == pytest.approx(np.mean([np.mean(r) for r in rows]))
    assert noise["examples"] == [3, 1]  # the largest spread first


def test_a_repeat_evaluation_from_before_k_reads_its_second_scoring(owner):
    evaluation = repeat_evaluation(owner, 2, {0: [("valid", 1.0), ("valid", 0.0)]})
    EvaluationCase.objects.filter(evaluation=evaluation).update(repeats=None)
    noise = summarize(evaluation)["noise"]
    assert noise["n"] == 1 and noise["flip_share"]["value"] == 1.0


def test_only_a_repeat_evaluation_has_a_noise_block(owner):
    evaluation = repeat_evaluation(owner, 3, {0: [("valid", 1.0)] * 3})
    Evaluation.objects.filter(pk=evaluation.pk).update(second=Evaluation.Second.NONE)
    evaluation.refresh_from_db()
    assert summarize(evaluation)["noise"] is None


def test_the_summary_reads_the_cases_in_streamed_chunks(owner, monkeypatch):
    from evaluations import summary as summary_module

    monkeypatch.setattr(summary_module, "CHUNK", 3)
    cases = {i: [("valid", float(i % 2)), ("valid", 1.0), ("valid", 1.0)] for i in range(10)}
    noise = summarize(repeat_evaluation(owner, 3, cases))["noise"]
    assert noise["n"] == 10 and noise["flip_share"]["value"] == 0.5


# -- the pages ---------------------------------------------------------------------------


def _section(body: str, section_id: str) -> str:
    begin = body.index(f'id="{section_id}"')
    end = body.find("<section", begin + 1)
    return body[begin : end if end != -1 else len(body)]


@pytest.fixture
def noisy(owner):
    """Ten cases scored three times: 0-5 steady, 6-8 flipped once, 9 flipped to an error."""
    cases = {i: [("valid", 1.0)] * 3 for i in range(6)}
    cases.update({i: [("valid", 1.0), ("valid", 0.0), ("valid", 1.0)] for i in (6, 7, 8)})
    cases[9] = [("valid", 0.25), ("error", None), ("error", None)]
    evaluation = repeat_evaluation(owner, 3, cases)
    evaluation.summary = summarize(evaluation)
    evaluation.save()
    return evaluation


def test_the_results_say_the_flip_share_and_the_means_interval_in_words(owner_client, noisy):
    noise = noisy.summary["noise"]
    body = owner_client.get(f"/en/evaluations/{noisy.pk}/").content.decode()
    block = _section(body, "noise")
    flips = re.search(r'<p id="noise-flips">(.*?)</p>', block).group(1)
    low, high = (f"{noise['flip_share'][b] * 100:.1f}%" for b in ("low", "high"))
    assert flips == f"Scored 3 times, 40.0% of cases changed verdict (95% interval {low}–{high})."
    assert "The mean score is 0.825 (95% interval" in block
    assert "This metric calls llm()" in block
    # The examples open as the flaky ones do, the largest spread first, each with its
    # three scores.
    links = re.findall(r'href="/en/evaluations/\d+/cases/(\d+)/"', block)
    assert links == ["9", "6", "7", "8"]
    assert block.count('<ol class="scorings">') == 4
    # The flaky block of two scorings gives way to it.
    assert 'id="flaky"' not in body


def test_the_case_table_lists_every_later_score_and_the_case_page_all_three(owner_client, noisy):
    table = owner_client.get(f"/en/evaluations/{noisy.pk}/cases/").content.decode()
    assert "Other scores" in table and "Second score" not in table
    row = re.search(r'<tr class="case case-valid" data-index="6">(.*?)</tr>', table, re.S).group(1)
    assert "0 · 1" in row and "differs" in row
    page = owner_client.get(f"/en/evaluations/{noisy.pk}/cases/9/").content.decode()
    scorings = _section(page, "scorings")
    assert "Scored 3 times" in scorings
    cells = re.findall(r'<td class="num" data-label="Score">([^<]*)</td>', scorings)
    assert cells == ["0.25", "—", "—"]
    assert scorings.count("Error") == 2


def test_the_noise_block_reads_in_spanish(owner_client, noisy):
    body = owner_client.get(f"/es/evaluations/{noisy.pk}/").content.decode()
    block = _section(body, "noise")
    with translation.override("es"):
        title = gettext("The metric's own noise")
    assert title in block


# -- the start form: how many times, its cost and its budget -----------------------------


@pytest.fixture
def metric(saved_metric):
    return saved_metric.metric


@pytest.fixture
def dataset(owner):
    from submissions import services
    from tests.evaluations.test_evaluation_start import RECORDED_CSV

    return services.dataset_create(owner=owner, filename="recorded.csv", data=RECORDED_CSV.encode())


def test_the_form_offers_how_many_times_three_by_default(owner_client, metric, dataset):
    page = owner_client.get(f"{evaluate_url(metric)}?dataset={dataset.pk}").content.decode()
    assert "Score each case several times, to measure its noise" in page
    field = re.search(r'<input type="number" name="repeats"[^>]*>', page).group(0)
    assert 'value="3"' in field and 'min="2"' in field and 'max="5"' in field
    assert "How many times" in page


@pytest.mark.parametrize("times", [2, 3, 4, 5])
def test_two_to_five_scorings_start_an_evaluation_of_that_many(
    owner_client, metric, saved_metric, dataset, django_capture_on_commit_callbacks, times
):
    data = start_data(dataset, saved_metric, second="repeat", repeats=str(times))
    response, sent = start(owner_client, metric, data, django_capture_on_commit_callbacks)
    assert response.status_code == 302 and len(sent) == 1
    evaluation = Evaluation.objects.get()
    assert evaluation.second == "repeat" and evaluation.repeats == times
    # Its model budget counts every scoring of the 11 cases.
    assert evaluation.limits == scaled_limits(11, times)


@pytest.mark.parametrize("times", ["1", "6", "three"])
def test_fewer_than_two_or_more_than_five_are_refused_in_the_users_words(
    owner_client, metric, saved_metric, dataset, django_capture_on_commit_callbacks, times
):
    data = start_data(dataset, saved_metric, second="repeat", repeats=times)
    response, sent = start(owner_client, metric, data, django_capture_on_commit_callbacks)
    assert response.status_code == 400 and not sent
    assert "Score each case 2 to 5 times: give a whole number from 2 to 5." in (
        response.content.decode()
    )
    assert not Evaluation.objects.exists()


def test_the_refusal_is_in_spanish_on_the_spanish_page(
    owner_client, metric, saved_metric, dataset, django_capture_on_commit_callbacks
):
    data = start_data(dataset, saved_metric, second="repeat", repeats="6")
    with django_capture_on_commit_callbacks(execute=False):
        response = owner_client.post(f"/es/metrics/{metric.pk}/evaluate/", data)
    assert response.status_code == 400
    with translation.override("es"):
        refusal = gettext(start_forms.REPEATS_ERROR)
    assert refusal in response.content.decode()


def test_a_number_typed_for_another_choice_is_no_error(
    owner_client, metric, saved_metric, dataset, django_capture_on_commit_callbacks
):
    data = start_data(dataset, saved_metric, second="", repeats="9")
    response, _ = start(owner_client, metric, data, django_capture_on_commit_callbacks)
    assert response.status_code == 302
    assert Evaluation.objects.get().second == ""
    # Left empty with "several times", it is the form's three.
    data = start_data(dataset, saved_metric, second="repeat", repeats="")
    Evaluation.objects.update(status=Evaluation.Status.DONE)
    response, _ = start(owner_client, metric, data, django_capture_on_commit_callbacks)
    assert response.status_code == 302
    assert Evaluation.objects.get(second="repeat").repeats == 3


def test_the_cost_and_the_budget_count_every_scoring(
    owner_client,
    owner,
    metric,
    saved_metric,
    dataset,
    settings,
    django_capture_on_commit_callbacks,
):
    check_with_costs(owner, saved_metric, [0.01, 0.01, 0.01])  # $0.01 a scoring
    settings.EVALUATION_MAX_MODEL_USD = 0.5
    # 11 cases scored 4 times: $0.44, within the $0.50 cap.
    data = start_data(dataset, saved_metric, second="repeat", repeats="4")
    response, _ = start(owner_client, metric, data, django_capture_on_commit_callbacks)
    assert response.status_code == 302
    evaluation = Evaluation.objects.get()
    assert evaluation.projected["per_case_usd"] == pytest.approx(0.04)
    assert evaluation.projected["usd"] == pytest.approx(0.44)
    evaluation.status = Evaluation.Status.DONE
    evaluation.save()
    # 5 times: $0.55, past it. Scored twice it would pass: the cap counts K, not 2.
    data = start_data(dataset, saved_metric, second="repeat", repeats="5")
    response, sent = start(owner_client, metric, data, django_capture_on_commit_callbacks)
    page = response.content.decode()
    assert response.status_code == 400 and not sent
    assert "This evaluation would cost about $0.55 in model calls: 11 cases at $0.05 each" in page
    assert "Each case is scored 5 times: the cost and the budget count every scoring." in page
    assert Evaluation.objects.count() == 1


def test_a_draft_evaluation_is_scored_k_times_at_k_times_the_metric_cost(
    owner_client, owner, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    draft = fill_to_check(owner_client, draft, saved_metric)
    # Its own check measured $0.002 a run and $0.001 a scoring.
    draft.contract_check = check_with_costs(
        owner, saved_metric, [0.001, 0.001, 0.001], runs=[0.002] * 3
    )
    draft.save()
    page_url = f"/en/submit/{draft.pk}/evaluate/"
    page = owner_client.get(page_url).content.decode()
    assert 'name="repeats"' in page and "How many times" in page
    form = {"split": "all", "count": "sample", "sample": "4", "sample_seed": "1"}
    with django_capture_on_commit_callbacks(execute=False):
        refused = owner_client.post(page_url, {**form, "second": "repeat", "repeats": "1"})
        started = owner_client.post(page_url, {**form, "second": "repeat", "repeats": "5"})
    assert refused.status_code == 400 and started.status_code == 302
    assert "Score each case 2 to 5 times" in refused.content.decode()
    evaluation = Evaluation.objects.get()
    assert evaluation.repeats == 5
    # The run once, the metric five times.
    assert evaluation.projected["per_case_usd"] == pytest.approx(0.002 + 5 * 0.001)
