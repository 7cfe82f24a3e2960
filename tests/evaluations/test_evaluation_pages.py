"""An evaluation's pages: its live progress and cancel, its results from the summary,
the table of cases, one case and copying it into the playground, all owned, none
broken by a hand-edited query, in the three languages."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from evaluations.models import Evaluation, EvaluationCase
from metrics.models import Metric
from submissions.models import Dataset

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
LLM_METRIC = (
    "def score(input, output, expected=None):\n"
    "    verdict = llm('Is this right? ' + str(output))\n"
    "    return 1.0, {'feedback': verdict}\n"
)


def stats(values: list[float], bins: int = 20) -> dict:
    """Stats as evaluations.summary writes them: 20 equal bins from min to max."""
    if not values:
        return {"n": 0, "mean": None, "median": None, "min": None, "max": None, "bins": []}
    low, high = min(values), max(values)
    ordered = sorted(values)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    if low == high:
        edges = [{"lo": low, "hi": high, "count": len(values)}]
    else:
        width = (high - low) / bins
        edges = [
            {"lo": low + i * width, "hi": low + (i + 1) * width, "count": 0} for i in range(bins)
        ]
        for value in values:
            edges[min(bins - 1, int((value - low) / width))]["count"] += 1
    return {
        "n": len(values),
        "mean": sum(values) / len(values),
        "median": median,
        "min": low,
        "max": high,
        "bins": edges,
    }


def make_dataset(owner, filename: str = "tickets.csv") -> Dataset:
    return Dataset.objects.create(
        owner=owner,
        filename=filename,
        raw=b"question,label\n",
        sha256="0" * 64,
        format="csv",
        encoding="utf-8",
    )


def make_evaluation(owner, **fields) -> Evaluation:
    fields.setdefault("dataset", make_dataset(owner))
    fields.setdefault("source", "def score(input, output, expected=None):\n    return 1.0, {}\n")
    return Evaluation.objects.create(owner=owner, **fields)


def make_case(evaluation: Evaluation, index: int, **fields) -> EvaluationCase:
    values = {
        "row": index,
        "file_row": index + 2,
        "status": "valid",
        "score": 1.0,
        "feedback": f"Correct label for case {index + 1}.",
        "feedback_kind": "specific",
        "case": {"input": {"question": f"q{index}"}, "output": "billing", "expected": None},
        "total_ms": 10.0 + index,
    }
    values.update(fields)
    return EvaluationCase.objects.create(evaluation=evaluation, index=index, **values)


def summary(**changes) -> dict:
    """A summary of a six-case evaluation: four valid, an exception, an invalid return."""
    base = {
        "version": 2,
        "cases": 6,
        "total": 6,
        "counts": {"valid": 4, "invalid": 1, "error": 1, "timeout": 0, "skipped": 0},
        "invalid_share": 2 / 6,
        "score": stats([0.0, 0.25, 0.5, 1.0]),
        "named": {"fields": stats([0.5, 0.5, 0.5, 0.5]), "format": stats([0.0, 1.0, 1.0, 1.0])},
        "failures": [
            {
                "code": "exception",
                "exception_type": "KeyError",
                "status": "error",
                "count": 1,
                "examples": [4],
            },
            {
                "code": "not_a_pair",
                "exception_type": "",
                "status": "invalid",
                "count": 1,
                "examples": [5],
            },
        ],
        "feedback": {
            "returned": 4,
            "empty_share": 0.25,
            "generic_share": 0.25,
            "repeated_share": 0.5,
            "top": [{"text": "Wrong label.", "count": 2}, {"text": "Correct.", "count": 1}],
            "unhelpful_low": [0],
            "unhelpful_low_count": 1,
        },
        "slowest": [3, 2],
        "time": {
            "total_ms_mean": 12.5,
            "total_ms_p50": 12.0,
            "total_ms_p95": 15.0,
            "metric_ms_mean": 4.0,
            "run_ms_mean": None,
        },
        "cost": {
            "task_usd_total": 0.0,
            "metric_usd_total": 0.0012,
            "task_usd_per_case": 0.0,
            "metric_usd_per_case": 0.0002,
            "model_calls_total": 6,
            "feedback_length_mean": 14.5,
            "feedback_length_max": 30,
        },
        "flaky": None,
        "agreement": None,
    }
    base.update(changes)
    return base


@pytest.fixture
def finished(owner, saved_metric):
    """A done evaluation of six cases with its summary."""
    evaluation = make_evaluation(
        owner,
        metric_version=saved_metric,
        status=Evaluation.Status.DONE,
        total=6,
        done=6,
        summary=summary(),
        started_at=timezone.now() - timedelta(seconds=3),
        finished_at=timezone.now(),
    )
    make_case(evaluation, 0, score=0.0, feedback="Wrong.", feedback_kind="generic")
    make_case(evaluation, 1, score=0.25)
    make_case(evaluation, 2, score=0.5)
    make_case(evaluation, 3, score=1.0, total_ms=900.0)
    make_case(
        evaluation,
        4,
        status="error",
        problem="exception",
        exception_type="KeyError",
        params={"type": "KeyError", "message": "'label'"},
        score=None,
        feedback="",
        detail={
            "exception": {"type": "KeyError", "message": "'label'"},
            "traceback": [{"line": 2, "function": "score", "text": 'want = expected["label"]'}],
            "stdout": "looking up the label\n",
        },
    )
    make_case(evaluation, 5, status="invalid", problem="not_a_pair", score=None, feedback="")
    return evaluation


# The live progress and cancel ------------------------------------------------------


def test_a_running_evaluation_shows_done_of_total_its_numbers_and_a_cancel_form(
    owner_client, owner
):
    evaluation = make_evaluation(
        owner,
        status=Evaluation.Status.RUNNING,
        total=200,
        done=50,
        started_at=timezone.now() - timedelta(seconds=10),
        heartbeat_at=timezone.now(),
        progress={
            "counts": {"valid": 45, "error": 5},
            "score_sum": 36.0,
            "score_n": 45,
            "task_usd": 0.01,
            "metric_usd": 0.02,
            "model_calls": 50,
        },
    )
    body = owner_client.get(f"/en/evaluations/{evaluation.pk}/").content.decode()
    assert "50 of 200 cases scored (25.0%)" in body
    rate = re.search(r"<dd>([\d.]+) cases/s</dd>", body)
    assert rate and 4 <= float(rate.group(1)) <= 5  # 50 cases in 10 s (and the request)
    assert re.search(r"<dd>3\d s</dd>", body)  # 150 left at 5 a second
    assert "0.8" in body  # the mean so far, 36 / 45
    assert f'action="/en/evaluations/{evaluation.pk}/cancel/"' in body
    # It updates itself: htmx asks for the panel again, the server answering when the
    # row changes; without JS the page reloads.
    live = f"/en/evaluations/{evaluation.pk}/?partial=live&amp;since={evaluation.live_token}"
    assert f'hx-get="{live}" hx-trigger="load"' in body
    assert '<noscript><meta http-equiv="refresh" content="2"></noscript>' in body
    assert "Refresh</a>" in body
    assert f'href="/en/evaluations/{evaluation.pk}/cases/">The cases scored so far' in body


def test_the_live_panel_answers_with_itself_until_the_evaluation_ends_then_with_the_results(
    owner_client, owner
):
    evaluation = make_evaluation(
        owner, status=Evaluation.Status.RUNNING, total=10, done=3, heartbeat_at=timezone.now()
    )
    url = f"/en/evaluations/{evaluation.pk}/?partial=live"
    panel = owner_client.get(url, **HTMX)
    assert panel.status_code == 200
    assert panel.content.decode().lstrip().startswith('<section id="evaluation-live"')
    assert "3 of 10 cases scored" in panel.content.decode()
    Evaluation.objects.filter(pk=evaluation.pk).update(
        status=Evaluation.Status.DONE, done=6, summary=summary()
    )
    final = owner_client.get(url, **HTMX)
    # The results take the panel's place; htmx stops asking (286), nothing reloads.
    assert final.status_code == 286 and "HX-Refresh" not in final
    body = final.content.decode()
    assert body.lstrip().startswith('<section id="evaluation-final"')
    assert "6 of 6 cases scored." in body and "KeyError" in body
    assert "<html" not in body


def test_cancel_ends_a_queued_evaluation_at_once(owner_client, owner):
    evaluation = make_evaluation(owner, total=5)
    answer = owner_client.post(f"/en/evaluations/{evaluation.pk}/cancel/")
    assert answer.status_code == 302 and answer["Location"] == f"/en/evaluations/{evaluation.pk}/"
    evaluation.refresh_from_db()
    assert (evaluation.status, evaluation.failure) == (Evaluation.Status.FAILED, "cancelled")
    body = owner_client.get(f"/en/evaluations/{evaluation.pk}/").content.decode()
    assert "You cancelled this evaluation before it finished." in body
    assert "/cancel/" not in body


def test_cancelling_a_queued_evaluation_from_the_panel_reloads_the_page(owner_client, owner):
    evaluation = make_evaluation(owner, total=5)
    answer = owner_client.post(f"/en/evaluations/{evaluation.pk}/cancel/", **HTMX)
    assert answer["HX-Refresh"] == "true"
    assert Evaluation.objects.get(pk=evaluation.pk).failure == "cancelled"


def test_cancel_marks_a_running_evaluation_and_the_panel_says_it_is_stopping(owner_client, owner):
    evaluation = make_evaluation(
        owner, status=Evaluation.Status.RUNNING, total=5, done=1, heartbeat_at=timezone.now()
    )
    answer = owner_client.post(f"/en/evaluations/{evaluation.pk}/cancel/", **HTMX)
    assert answer.status_code == 200
    assert "Stopping the evaluation" in answer.content.decode()
    assert 'id="evaluation-live"' in answer.content.decode()
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.RUNNING and evaluation.cancel_requested


def test_an_evaluation_whose_worker_stopped_beating_reads_as_back_in_line_without_a_write(
    owner_client, owner
):
    evaluation = make_evaluation(
        owner,
        status=Evaluation.Status.RUNNING,
        total=8,
        done=2,
        heartbeat_at=timezone.now() - timedelta(minutes=10),
    )
    body = owner_client.get(f"/en/evaluations/{evaluation.pk}/").content.decode()
    assert "Evaluation queued" in body
    assert "Its worker was lost 1 time: it went back in line" in body
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.RUNNING and evaluation.lost == 0


def test_an_evaluation_lost_as_many_times_as_it_may_reads_as_failed_without_a_write(
    owner_client, owner, settings
):
    settings.EVALUATION_MAX_ATTEMPTS = 3
    evaluation = make_evaluation(
        owner,
        status=Evaluation.Status.RUNNING,
        total=8,
        done=2,
        lost=2,
        heartbeat_at=timezone.now() - timedelta(minutes=10),
    )
    body = owner_client.get(f"/en/evaluations/{evaluation.pk}/").content.decode()
    assert "The worker running this evaluation was lost." in body
    assert "2 of 8 cases were scored before it stopped." in body
    assert "/cancel/" not in body
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.RUNNING


# The results --------------------------------------------------------------------


def _section(body: str, section_id: str) -> str:
    start = body.index(f'id="{section_id}"')
    end = body.find("<section", start + 1)
    return body[start : end if end != -1 else len(body)]


def test_the_results_draw_a_histogram_of_scores_with_one_bar_a_bin(owner_client, finished):
    body = owner_client.get(f"/en/evaluations/{finished.pk}/").content.decode()
    scores = _section(body, "scores")
    charts = re.findall(r"<svg.*?</svg>", scores, re.S)
    assert len(charts) == 3  # the score and the two named scores
    assert charts[0].count("<rect") == len(finished.summary["score"]["bins"]) == 20
    assert charts[1].count("<rect") == 1  # fields: every score 0.5, one bin
    assert "<title" in charts[0] and "<desc" in charts[0]
    assert "4 scores from 0 to 1; mean 0.4375, median 0.375." in charts[0]
    # The bars' numbers as a table, for those who read tables.
    assert '<table class="visually-hidden"><caption>Score distribution</caption>' in scores
    assert "Named score <code>format</code>" in scores
    assert "33.3%" in scores  # not valid: 2 of 6
    assert "https://" not in "".join(charts).replace("http://www.w3.org/2000/svg", "")


def test_the_failures_are_grouped_in_words_with_counts_and_linked_examples(owner_client, finished):
    body = owner_client.get(f"/en/evaluations/{finished.pk}/").content.decode()
    failures = _section(body, "failures")
    assert "score raised KeyError: &#x27;label&#x27;" in failures
    assert "No. The return value is not a pair of a score and side info." in failures
    assert failures.count('class="failure-count">1 case<') == 2
    assert f'href="/en/evaluations/{finished.pk}/cases/4/">Case 5</a>' in failures
    assert f'href="/en/evaluations/{finished.pk}/cases/5/">Case 6</a>' in failures
    assert f'href="/en/evaluations/{finished.pk}/cases/?problem=exception"' in failures


@pytest.mark.parametrize("language", ["en", "es", "hi"])
def test_a_return_that_is_no_pair_is_named_with_its_fix_in_the_failures(
    owner_client, finished, language
):
    finished.cases.filter(index=5).update(
        params={
            "shape": {"kind": "dict", "keys": ["score", "feedback"]},
            "fix": 'return 0.5, {"feedback": "Close."}',
        }
    )
    body = owner_client.get(f"/{language}/evaluations/{finished.pk}/").content.decode()
    failures = _section(body, "failures")
    shape = {
        "en": "a dict with the keys score, feedback",
        "es": "un dict con las claves score, feedback",
        "hi": "कुंजियों score, feedback वाला एक dict",
    }[language]
    assert shape in failures
    assert "return 0.5, {&quot;feedback&quot;: &quot;Close.&quot;}" in failures


def test_the_feedback_report_shows_its_shares_top_strings_and_unhelpful_low_scores(
    owner_client, finished
):
    body = owner_client.get(f"/en/evaluations/{finished.pk}/").content.decode()
    feedback = _section(body, "feedback")
    assert "Wrong label." in feedback and "Correct." in feedback
    assert re.search(r"Wrong label\.</div></td><td class=\"num\">2<", feedback)
    assert "25.0%" in feedback and "50.0%" in feedback
    assert f'href="/en/evaluations/{finished.pk}/cases/0/">Case 1</a>' in feedback


def test_the_slowest_cases_and_the_time_and_cost(owner_client, finished):
    body = owner_client.get(f"/en/evaluations/{finished.pk}/").content.decode()
    block = _section(body, "time-cost")
    assert block.index("/cases/3/") < block.index("/cases/2/")  # slowest first
    assert "900 ms" in block and "12 ms" in block
    assert "$0.0012" in block


def test_no_flaky_or_comparison_block_for_an_evaluation_scored_once(owner_client, finished):
    body = owner_client.get(f"/en/evaluations/{finished.pk}/").content.decode()
    assert 'id="flaky"' not in body and 'id="comparison"' not in body


def test_the_flaky_block_sets_both_scorings_side_by_side_and_names_the_usual_cause(
    owner_client, owner
):
    evaluation = make_evaluation(
        owner,
        source=LLM_METRIC,
        second=Evaluation.Second.REPEAT,
        second_source=LLM_METRIC,
        status=Evaluation.Status.DONE,
        total=3,
        done=3,
        summary=summary(cases=3, total=3, flaky={"count": 1, "share": 1 / 3, "examples": [1]}),
    )
    make_case(
        evaluation,
        0,
        second={"status": "valid", "score": 1.0, "feedback": "Correct label for case 1."},
    )
    make_case(
        evaluation,
        1,
        score=1.0,
        feedback="Looks right to me.",
        second={"status": "valid", "score": 0.0, "feedback": "That is the wrong label."},
        second_status="valid",
        second_score=0.0,
        differs=True,
        gap=1.0,
    )
    body = owner_client.get(f"/en/evaluations/{evaluation.pk}/").content.decode()
    flaky = _section(body, "flaky")
    assert "1 case (33.3%) got a different score or feedback the second time." in flaky
    assert "Looks right to me." in flaky and "That is the wrong label." in flaky
    assert "This metric calls llm()" in flaky
    assert "/cases/1/" in flaky and "/cases/0/" not in flaky


def test_the_comparison_block_names_both_versions_and_the_cases_they_disagree_on(
    owner_client, owner, saved_metric
):
    from metrics import services as metric_services

    newer, _ = metric_services.metric_save(
        saved_metric.metric, source=saved_metric.source + "\n# stricter\n"
    )
    evaluation = make_evaluation(
        owner,
        metric_version=saved_metric,
        second=Evaluation.Second.COMPARE,
        second_version=newer,
        second_source=newer.source,
        status=Evaluation.Status.DONE,
        total=4,
        done=4,
        summary=summary(
            cases=4,
            total=4,
            agreement={"n": 4, "same_verdict_share": 0.75, "correlation": 0.5, "disagree": [2]},
        ),
    )
    make_case(
        evaluation,
        2,
        score=1.0,
        feedback="Correct: the label is 'billing'.",
        second={"status": "valid", "score": 0.25, "feedback": "Close, but say why it is billing."},
        second_status="valid",
        second_score=0.25,
        differs=True,
        gap=0.75,
    )
    body = owner_client.get(f"/en/evaluations/{evaluation.pk}/").content.decode()
    block = _section(body, "comparison")
    name = saved_metric.metric.name
    assert (
        f"{name}, version {saved_metric.number} compared with {name}, version {newer.number}"
        in block
    )
    assert "75.0%" in block and "0.5" in block
    assert "Correct: the label is &#x27;billing&#x27;." in block
    assert "Close, but say why it is billing." in block
    assert "0.75" in block


def test_the_results_page_reads_only_the_cases_its_summary_names(owner_client, owner):
    evaluation = make_evaluation(
        owner,
        status=Evaluation.Status.DONE,
        total=300,
        done=300,
        summary=summary(cases=300, total=300, slowest=[299, 7]),
    )
    EvaluationCase.objects.bulk_create(
        [
            EvaluationCase(evaluation=evaluation, index=i, row=i, file_row=i + 2, status="valid")
            for i in range(300)
        ]
    )
    with CaptureQueriesContext(connection) as queries:
        response = owner_client.get(f"/en/evaluations/{evaluation.pk}/")
    assert response.status_code == 200
    reads = [q["sql"] for q in queries.captured_queries if "evaluations_evaluationcase" in q["sql"]]
    assert len(reads) == 1
    assert " IN (" in reads[0]
    assert '"case"' not in reads[0] and '"detail"' not in reads[0]


# The table of cases ------------------------------------------------------------


@pytest.fixture
def many(owner):
    """120 cases: every tenth invalid, scores falling from 1 to 0 as the index grows."""
    evaluation = make_evaluation(
        owner, status=Evaluation.Status.DONE, total=120, done=120, summary=summary(cases=120)
    )
    EvaluationCase.objects.bulk_create(
        [
            EvaluationCase(
                evaluation=evaluation,
                index=i,
                row=i,
                file_row=i + 2,
                status="invalid" if i % 10 == 0 else "valid",
                problem="not_a_pair" if i % 10 == 0 else "",
                score=None if i % 10 == 0 else round(1 - i / 119, 4),
                total_ms=float((i * 37) % 120),
                case={"input": {"question": f"q{i}"}, "output": "x", "expected": None},
            )
            for i in range(120)
        ]
    )
    return evaluation


def shown(response) -> list[int]:
    return [int(i) for i in re.findall(r'data-index="(\d+)"', response.content.decode())]


def test_the_table_shows_fifty_cases_a_page_without_counting_them(owner_client, many):
    url = f"/en/evaluations/{many.pk}/cases/"
    with CaptureQueriesContext(connection) as queries:
        first = owner_client.get(url)
    assert shown(first) == list(range(50))
    assert not any("COUNT(" in q["sql"].upper() for q in queries.captured_queries)
    assert "Page 1 of 3" in first.content.decode()
    assert shown(owner_client.get(url + "?page=3")) == list(range(100, 120))
    # Past the last page is the last page; nonsense is the first.
    assert shown(owner_client.get(url + "?page=99")) == list(range(100, 120))
    assert shown(owner_client.get(url + "?page=abc")) == list(range(50))
    assert shown(owner_client.get(url + "?page=-4")) == list(range(50))


def test_the_table_sorts_by_score_time_and_index_both_ways(owner_client, many):
    url = f"/en/evaluations/{many.pk}/cases/"
    by_score = shown(owner_client.get(url + "?sort=score"))
    assert by_score[:3] == [119, 118, 117]  # the lowest scores first, no score last
    high_first = shown(owner_client.get(url + "?sort=score&dir=desc"))
    assert high_first[:3] == [1, 2, 3]
    assert shown(owner_client.get(url + "?sort=index&dir=desc"))[:2] == [119, 118]
    slow = shown(owner_client.get(url + "?sort=total_ms&dir=desc"))
    times = {i: float((i * 37) % 120) for i in range(120)}
    assert [times[i] for i in slow] == sorted(times.values(), reverse=True)[:50]
    # A sort it does not know is the default order.
    assert shown(owner_client.get(url + "?sort=evil;DROP&dir=sideways")) == list(range(50))


def test_the_table_filters_by_validity_score_range_and_problem(owner_client, many):
    url = f"/en/evaluations/{many.pk}/cases/"
    assert shown(owner_client.get(url + "?invalid=1")) == list(range(0, 120, 10))
    assert shown(owner_client.get(url + "?problem=not_a_pair")) == list(range(0, 120, 10))
    ranged = shown(owner_client.get(url + "?min=0.9&max=0.95"))
    assert ranged and all(0.9 <= 1 - i / 119 <= 0.95 for i in ranged)
    assert 0 not in ranged
    body = owner_client.get(url + "?min=0.9&max=0.95").content.decode()
    assert f"of {len(ranged)}" in body
    # Numbers that are not numbers are no filter at all.
    assert shown(owner_client.get(url + "?min=xyz&max=nan")) == list(range(50))
    assert shown(owner_client.get(url + "?problem=nothing_like_it")) == []


def test_the_sort_links_keep_the_filters(owner_client, many):
    body = owner_client.get(
        f"/en/evaluations/{many.pk}/cases/?invalid=1&sort=score"
    ).content.decode()
    assert "?sort=score&amp;dir=desc&amp;invalid=1" in body


# One case, and the playground ----------------------------------------------------


def test_the_case_page_shows_the_case_its_feedback_and_what_the_worker_kept(owner_client, finished):
    body = owner_client.get(f"/en/evaluations/{finished.pk}/cases/4/").content.decode()
    # One numbering: case 5 is data row 5 (the file's row 6 counts the CSV's header).
    assert "Case 5 · row 5 of the data" in body
    assert "score raised KeyError" in body
    assert "&quot;question&quot;: &quot;q4&quot;" in body
    assert "billing" in body
    assert "metric.py:2" in body and "want = expected[&quot;label&quot;]" in body
    assert "looking up the label" in body
    assert "Open in the playground as sample case 3" in body


def test_the_case_page_shows_the_second_scoring(owner_client, owner):
    evaluation = make_evaluation(
        owner, second=Evaluation.Second.REPEAT, status=Evaluation.Status.DONE, total=1, done=1
    )
    make_case(
        evaluation,
        0,
        second={"status": "valid", "score": 0.5, "feedback": "Half right the second time."},
        second_status="valid",
        second_score=0.5,
        differs=True,
        gap=0.5,
    )
    body = owner_client.get(f"/en/evaluations/{evaluation.pk}/cases/0/").content.decode()
    assert "The second scoring" in body and "Half right the second time." in body


def test_the_case_page_shows_each_predictors_feedback_by_its_name(owner_client, owner):
    evaluation = make_evaluation(owner, status=Evaluation.Status.DONE, total=2, done=2)
    make_case(
        evaluation,
        0,
        feedback="General: name the city.",
        predictor_feedback={"first": "Name the country first.", "second.predict": "City only."},
    )
    make_case(evaluation, 1, feedback="No predictors here.")
    body = owner_client.get(f"/en/evaluations/{evaluation.pk}/cases/0/").content.decode()
    assert "Feedback per predictor" in body
    assert "<code>first</code>" in body and "Name the country first." in body
    assert "<code>second.predict</code>" in body and "City only." in body
    assert body.index("General: name the city.") < body.index("Name the country first.")
    other = owner_client.get(f"/en/evaluations/{evaluation.pk}/cases/1/").content.decode()
    assert "Feedback per predictor" not in other


def test_open_in_the_playground_puts_the_case_in_the_chosen_slot(owner_client, finished):
    metric = finished.metric_version.metric
    before = list(metric.cases)
    answer = owner_client.post(
        f"/en/evaluations/{finished.pk}/cases/2/playground/", {"slot": "2"}, follow=False
    )
    assert answer.status_code == 302
    assert answer["Location"] == f"/en/metrics/{metric.pk}/#cases-panel"
    metric.refresh_from_db()
    assert metric.cases[1] == {
        "input": {"question": "q2"},
        "output": "billing",
        "expected": None,
        "observation": None,
    }
    assert metric.cases[0] == before[0] and metric.cases[2] == before[2]
    playground = owner_client.get(answer["Location"]).content.decode()
    assert "Case 3 is now sample case 2." in playground
    assert "q2" in playground


def test_a_slot_that_is_not_one_of_the_three_is_refused(owner_client, finished):
    url = f"/en/evaluations/{finished.pk}/cases/2/playground/"
    for slot in ("0", "4", "x", ""):
        assert owner_client.post(url, {"slot": slot}).status_code == 400


def test_no_playground_button_without_a_metric_of_ones_own(owner_client, owner):
    evaluation = make_evaluation(owner, status=Evaluation.Status.DONE, total=1, done=1)
    make_case(evaluation, 0)
    body = owner_client.get(f"/en/evaluations/{evaluation.pk}/cases/0/").content.decode()
    assert "Open in the playground" not in body
    url = f"/en/evaluations/{evaluation.pk}/cases/0/playground/"
    assert owner_client.post(url, {"slot": "1"}).status_code == 404


# The list, ownership, bad input, languages -----------------------------------------


def test_the_list_shows_the_users_evaluations_newest_first(owner_client, owner, outsider, finished):
    newer = make_evaluation(owner, total=9, dataset=make_dataset(owner, "second.csv"))
    theirs = make_evaluation(outsider, total=4)
    body = owner_client.get("/en/evaluations/").content.decode()
    assert body.index(f"/en/evaluations/{newer.pk}/") < body.index(
        f"/en/evaluations/{finished.pk}/"
    )
    assert f"/en/evaluations/{theirs.pk}/" not in body
    assert "second.csv" in body and "tickets.csv" in body
    assert (
        f"{finished.metric_version.metric.name}, version {finished.metric_version.number}" in body
    )
    assert "6 of 6" in body
    assert 'href="/en/evaluations/" class="nav-link"' in body


def _urls(evaluation: Evaluation) -> list[tuple[str, str]]:
    base = f"/en/evaluations/{evaluation.pk}"
    return [
        ("get", f"{base}/"),
        ("get", f"{base}/?partial=live"),
        ("post", f"{base}/cancel/"),
        ("get", f"{base}/cases/"),
        ("get", f"{base}/cases/0/"),
        ("post", f"{base}/cases/0/playground/"),
        ("get", f"{base}/download.csv"),
        ("get", f"{base}/download.jsonl"),
    ]


@pytest.mark.parametrize("position", range(8))
def test_another_users_evaluation_is_not_found_at_any_address(client, outsider, finished, position):
    method, url = _urls(finished)[position]
    client.force_login(outsider)
    answer = getattr(client, method)(url, {"slot": "1"} if method == "post" else None)
    assert answer.status_code == 404
    finished.refresh_from_db()
    assert finished.status == Evaluation.Status.DONE and not finished.cancel_requested


@pytest.mark.parametrize("position", range(8))
def test_every_address_asks_for_a_login(client, finished, position):
    method, url = _urls(finished)[position]
    answer = getattr(client, method)(url)
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]


def test_a_case_that_does_not_exist_is_not_found(owner_client, finished):
    assert owner_client.get(f"/en/evaluations/{finished.pk}/cases/99/").status_code == 404


@pytest.mark.parametrize(
    "query",
    [
        "?page=abc",
        "?page=0",
        "?page=99999999999999999999",
        "?sort=evil",
        "?sort=score&dir=up",
        "?min=xyz&max=",
        "?min=1e999",
        "?min=-inf&max=inf",
        "?invalid=maybe",
        "?problem=" + "x" * 500,
        "?min=0.9&max=0.1",
    ],
)
def test_a_hand_edited_query_still_shows_the_table(owner_client, many, query):
    assert owner_client.get(f"/en/evaluations/{many.pk}/cases/{query}").status_code == 200


def test_an_evaluation_without_a_summary_still_has_a_results_page(owner_client, owner):
    evaluation = make_evaluation(
        owner,
        status=Evaluation.Status.FAILED,
        failure="load_failed",
        total=3,
        failure_params={"stage": "load", "problem": "no_score_function", "params": {}},
    )
    body = owner_client.get(f"/en/evaluations/{evaluation.pk}/").content.decode()
    assert "metric.py did not get past the Load stage" in body
    assert "metric.py does not define a function named score." in body


@pytest.mark.parametrize("language", ["es", "hi"])
def test_the_pages_render_in_spanish_and_hindi(owner_client, finished, many, language):
    pages = [
        f"/{language}/evaluations/",
        f"/{language}/evaluations/{finished.pk}/",
        f"/{language}/evaluations/{finished.pk}/cases/",
        f"/{language}/evaluations/{finished.pk}/cases/4/",
        f"/{language}/evaluations/{many.pk}/cases/?sort=score",
    ]
    for url in pages:
        response = owner_client.get(url)
        assert response.status_code == 200, url
        assert f'<html lang="{language}">' in response.content.decode()
    body = owner_client.get(f"/{language}/evaluations/{finished.pk}/").content.decode()
    # Numbers in the reader's format: Spanish writes a decimal comma.
    mean = "0,4375" if language == "es" else "0.4375"
    assert f"mean {mean}" in body or mean in body
    assert f'href="/{language}/evaluations/{finished.pk}/cases/4/"' in body


def test_the_metric_keeps_its_other_cases_when_it_had_none(owner, saved_metric):
    from contract.cases import DEFAULT_CASES
    from metrics import services as metric_services

    metric = saved_metric.metric
    Metric.objects.filter(pk=metric.pk).update(cases=[])
    case = {"input": {"question": "new"}, "output": "x", "expected": {"label": "x"}}
    metric_services.metric_case_put(metric, 2, case)
    metric.refresh_from_db()
    assert metric.cases[:2] == [c.to_job() for c in DEFAULT_CASES[:2]]
    assert metric.cases[2] == {**case, "observation": None}
