"""The summary of an evaluation's cases, as the database computes it once at the end: a
known set of cases, built by hand, and what the summary must say of them."""

from __future__ import annotations

import hashlib
import json
import statistics

import pytest

from evaluations import summary as summary_module
from evaluations.models import Evaluation, EvaluationCase
from evaluations.summary import summarize

pytestmark = pytest.mark.django_db


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


@pytest.fixture
def dataset(owner):
    from submissions.models import Dataset

    return Dataset.objects.create(
        owner=owner, filename="cases.jsonl", raw=b"", sha256="0" * 64, format="jsonl"
    )


@pytest.fixture
def evaluation_of(owner, dataset):
    """An evaluation with the given cases (dicts of EvaluationCase fields by index)."""

    def make(cases: dict[int, dict], *, second: str = "", total: int | None = None):
        evaluation = Evaluation.objects.create(
            owner=owner,
            dataset=dataset,
            source="def score(example, prediction): ...",
            second=second,
            total=len(cases) if total is None else total,
            status=Evaluation.Status.DONE,
        )
        EvaluationCase.objects.bulk_create(
            EvaluationCase(evaluation=evaluation, index=index, row=index, file_row=index + 2, **f)
            for index, f in cases.items()
        )
        return evaluation

    return make


# The known evaluation: 30 cases ------------------------------------------------------

SCORES = {  # the valid cases and their scores
    0: 0.0,
    1: 1.0,
    3: 0.52,
    5: 0.52,
    6: 0.12,
    8: 0.82,
    10: 0.52,
    12: 1.0,
    14: 0.0,
    15: 0.93,
    16: 0.37,
    18: 0.52,
    19: 0.82,
    21: 0.07,
    23: 0.66,
    24: 0.52,
    27: 0.28,
}
FAILED = {  # index: (status, problem, exception type)
    2: ("error", "raised", "ValueError"),
    9: ("error", "raised", "ValueError"),
    13: ("error", "raised", "ValueError"),
    17: ("error", "raised", "ValueError"),
    22: ("error", "raised", "ValueError"),
    26: ("error", "raised", "ValueError"),
    20: ("error", "raised", "KeyError"),
    4: ("invalid", "score_not_number", ""),
    11: ("invalid", "score_not_number", ""),
    25: ("invalid", "score_not_number", ""),
    7: ("timeout", "timeout", ""),
    28: ("timeout", "timeout", ""),
    29: ("skipped", "cancelled", ""),
}
LONG = "The answer names the right city but " + "gives the wrong country, " * 20
FEEDBACK = {  # index: (kind, text); every other case returned none
    0: ("generic", "Wrong answer."),
    14: ("generic", "Wrong answer."),
    1: ("generic", "Wrong answer."),
    21: ("specific", "Off by 0.5: expected 3, got 3.5."),
    6: ("empty", ""),
    23: ("empty", " "),
    3: ("specific", "Missing the unit (km)."),
    5: ("specific", "Missing the unit (km)."),
    10: ("specific", LONG),
    18: ("specific", LONG),
    8: ("specific", "Close: 41 instead of 42."),
    12: ("specific", "Exactly right, with the unit."),
    15: ("specific", "Right number, extra words."),
    19: ("specific", "Close: 43 instead of 42."),
    24: ("specific", "Half the fields are wrong."),
    4: ("specific", "Return a number, not a string."),
}
OUTPUTS = {5: "output 3"}  # case 5's output is case 3's: the same feedback is no surprise
NAMED = {  # index: the named scores of a valid case (case 16 has none)
    **{i: {"format": 1.0, "fields": SCORES[i]} for i in SCORES if i not in (6, 16, 27)},
    6: {"format": 0.0, "fields": 0.25},
    27: {"format": 0.0, "fields": 0.5, "note": "not a number", "flag": True},
}
TIMES = {7: 60000.0, 28: 60000.0, 15: 900.0}  # total_ms; the others take 10 + index ms


def _known_case(i: int) -> dict:
    status, problem, exception_type = FAILED.get(i, ("valid", "", ""))
    kind, text = FEEDBACK.get(i, ("", ""))
    return {
        "status": status,
        "problem": problem,
        "exception_type": exception_type,
        # An invalid case's score (out of range, say) is no score of the metric's.
        "score": SCORES.get(i, 7.5 if i == 11 else None),
        "scores": NAMED.get(i, {"format": 99.0} if i == 4 else None),
        "feedback": text,
        "feedback_kind": kind,
        "feedback_length": len(text),
        "feedback_digest": digest(text) if kind else "",
        "output_digest": digest(OUTPUTS.get(i, f"output {i}")),
        "total_ms": TIMES.get(i, 10.0 + i),
        "metric_ms": None if status in ("timeout", "skipped") else 2.0 + i,
        "metric_usd": 0.001 if status == "valid" else 0.0,
        "model_calls": 1 if status == "valid" else 0,
    }


@pytest.fixture
def known(evaluation_of):
    return evaluation_of({i: _known_case(i) for i in range(30)}, total=32)


def test_it_counts_the_cases_by_status(known):
    summary = summarize(known)
    assert summary["version"] == 3
    assert summary["cases"] == 30 and summary["total"] == 32
    assert summary["counts"] == {"valid": 17, "invalid": 3, "error": 7, "timeout": 2, "skipped": 1}
    assert summary["invalid_share"] == pytest.approx(13 / 30)


def test_the_score_stats_are_over_the_valid_cases_only(known):
    stats = summarize(known)["score"]
    scores = list(SCORES.values())
    assert stats["n"] == 17
    assert stats["mean"] == pytest.approx(statistics.mean(scores))
    assert stats["median"] == 0.52 == statistics.median(scores)
    assert (stats["min"], stats["max"]) == (0.0, 1.0)


def test_the_histogram_has_twenty_equal_bins_and_the_max_in_the_last(known):
    bins = summarize(known)["score"]["bins"]
    assert len(bins) == 20
    assert sum(b["count"] for b in bins) == 17
    assert bins[0]["lo"] == 0.0 and bins[-1]["hi"] == 1.0
    for b in bins:
        assert b["hi"] - b["lo"] == pytest.approx(0.05)
    counts = {i: b["count"] for i, b in enumerate(bins) if b["count"]}
    # 0.0 x2 | 0.07 | 0.12 | 0.28 | 0.37 | 0.52 x5 | 0.66 | 0.82 x2 | 0.93 | 1.0 x2
    assert counts == {0: 2, 1: 1, 2: 1, 5: 1, 7: 1, 10: 5, 13: 1, 16: 2, 18: 1, 19: 2}


def test_one_bin_holds_every_score_when_they_are_all_equal(evaluation_of):
    evaluation = evaluation_of({i: {"status": "valid", "score": 0.5} for i in range(4)})
    stats = summarize(evaluation)["score"]
    assert stats["bins"] == [{"lo": 0.5, "hi": 0.5, "count": 4}]
    assert (stats["mean"], stats["median"], stats["min"], stats["max"]) == (0.5,) * 4


def test_the_median_of_an_even_number_of_scores_is_the_mean_of_the_middle_two(evaluation_of):
    scores = [0.9, 0.1, 0.4, 0.3]
    evaluation = evaluation_of({i: {"status": "valid", "score": s} for i, s in enumerate(scores)})
    assert summarize(evaluation)["score"]["median"] == statistics.median(scores) == 0.35


def test_each_named_score_has_its_stats_sorted_by_name(known):
    named = summarize(known)["named"]
    assert list(named) == ["fields", "format"]  # not "note" nor "flag": no numbers
    formats = [NAMED[i]["format"] for i in NAMED]
    fields = [NAMED[i]["fields"] for i in NAMED]
    assert named["format"]["n"] == 16  # case 4's format is an invalid case's
    assert named["format"]["mean"] == pytest.approx(14 / 16)
    assert named["format"]["median"] == 1.0
    assert (named["format"]["min"], named["format"]["max"]) == (0.0, 1.0)
    assert named["format"]["bins"][0]["count"] == 2 and named["format"]["bins"][-1]["count"] == 14
    assert named["fields"]["n"] == 16
    assert named["fields"]["mean"] == pytest.approx(statistics.mean(fields))
    assert named["fields"]["median"] == statistics.median(fields)
    assert (named["fields"]["min"], named["fields"]["max"]) == (min(fields), max(fields))
    assert sum(b["count"] for b in named["fields"]["bins"]) == 16
    assert sum(b["count"] for b in named["format"]["bins"]) == len(formats)


def test_named_scores_bin_as_the_score_does(evaluation_of):
    values = [0.0, 0.07, 0.12, 0.28, 0.37, 0.52, 0.52, 0.66, 0.82, 0.93, 1.0]
    evaluation = evaluation_of(
        {i: {"status": "valid", "score": v, "scores": {"same": v}} for i, v in enumerate(values)}
    )
    summary = summarize(evaluation)
    named, score = summary["named"]["same"], summary["score"]
    assert named["mean"] == pytest.approx(score["mean"])  # summed in Python, not SQL
    assert {**named, "mean": None} == {**score, "mean": None}


HARD = [-1e300, -2.5, -5e-324, -0.0, 0.0, 0.0, 5e-324, 1e-300, 0.3, 0.3, 0.3, 0.3, 7.0, 1e300]
# Values whose keys share their top bits: one window holds them all, or splits them.
CLOSE = [0.5 + i / 1000 for i in (7, 1, 4, 0, 8, 2, 6, 3, 5)]
TIED = [0.3] * 5 + [0.7] * 6
ZEROS = [-5e-324, 0.0, 5e-324, 1.0, 2.0]  # the floats nearest to 0.0 are not 0.0


@pytest.mark.parametrize("held", [1, 3, 20_000])
@pytest.mark.parametrize(
    "values", [HARD, HARD[1:], CLOSE, CLOSE[1:], [0.1, 0.2, *CLOSE], TIED, ZEROS, [-2.0, 2.0]]
)
def test_a_named_median_is_exact_however_few_values_a_pass_may_hold(
    evaluation_of, monkeypatch, held, values
):
    monkeypatch.setattr(summary_module, "HELD", held)
    evaluation = evaluation_of(
        {i: {"status": "valid", "score": 1.0, "scores": {"x": v}} for i, v in enumerate(values)}
    )
    stats = summarize(evaluation)["named"]["x"]
    assert stats["median"] == statistics.median(values)
    assert stats["n"] == len(values)
    assert (stats["min"], stats["max"]) == (min(values), max(values))
    assert sum(b["count"] for b in stats["bins"]) == len(values)


def test_only_the_first_names_seen_are_kept_when_cases_name_too_many(evaluation_of, monkeypatch):
    monkeypatch.setattr(summary_module, "NAMES", 2)
    evaluation = evaluation_of(
        {i: {"status": "valid", "score": 1.0, "scores": {f"s{i}": 1.0}} for i in range(4)}
    )
    assert list(summarize(evaluation)["named"]) == ["s0", "s1"]


def test_failures_group_by_code_and_exception_with_the_first_cases_as_examples(known):
    failures = summarize(known)["failures"]
    assert failures == [
        {
            "code": "raised",
            "exception_type": "ValueError",
            "status": "error",
            "count": 6,
            "examples": [2, 9, 13, 17, 22],
        },
        {
            "code": "score_not_number",
            "exception_type": "",
            "status": "invalid",
            "count": 3,
            "examples": [4, 11, 25],
        },
        {
            "code": "timeout",
            "exception_type": "",
            "status": "timeout",
            "count": 2,
            "examples": [7, 28],
        },
        {
            "code": "raised",
            "exception_type": "KeyError",
            "status": "error",
            "count": 1,
            "examples": [20],
        },
        {
            "code": "cancelled",
            "exception_type": "",
            "status": "skipped",
            "count": 1,
            "examples": [29],
        },
    ]


def test_the_groups_of_failures_kept_are_the_largest(known, monkeypatch):
    monkeypatch.setattr(summary_module, "FAILURE_GROUPS", 2)
    failures = summarize(known)["failures"]
    assert [(f["exception_type"], f["count"]) for f in failures] == [("ValueError", 6), ("", 3)]


def test_feedback_shares_are_of_the_feedbacks_returned(known):
    feedback = summarize(known)["feedback"]
    assert feedback["returned"] == 16
    assert feedback["empty_share"] == pytest.approx(2 / 16)
    assert feedback["generic_share"] == pytest.approx(3 / 16)
    # "Wrong answer." on three different outputs that scored 0, 0 and 1, and LONG on two
    # that both scored 0.52, below the top; "Missing the unit" was given twice to one same
    # output.
    assert feedback["repeated_share"] == pytest.approx(5 / 16)


def test_the_same_praise_for_top_scores_is_not_counted_as_repeated_feedback(evaluation_of):
    def case(score, text, output, status="valid"):
        return {
            "status": status,
            "score": score,
            "feedback": text,
            "feedback_kind": "generic",
            "feedback_digest": digest(text),
            "output_digest": digest(output),
        }

    cases = {
        # Right, each its own output, each the top score: praise as it should be.
        **{i: case(1.0, "Correct.", f"right {i}") for i in range(6)},
        # The same words for a right output and a nearly right one.
        6: case(1.0, "Fine.", "fine 6"),
        7: case(0.9, "Fine.", "fine 7"),
        # The same words for two different wrong outputs.
        8: case(0.0, "Wrong.", "wrong 8"),
        9: case(0.0, "Wrong.", "wrong 9"),
        # Top-scoring praise again, but one of them is no valid score.
        10: case(1.0, "Good.", "good 10"),
        11: case(None, "Good.", "good 11", status="invalid"),
    }
    feedback = summarize(evaluation_of(cases))["feedback"]
    assert feedback["returned"] == 12
    assert feedback["repeated_share"] == pytest.approx(6 / 12)
    assert feedback["top"][0] == {"text": "Correct.", "count": 6}


def test_the_top_score_is_the_highest_any_case_got(evaluation_of):
    cases = {
        i: {
            "status": "valid",
            "score": 0.8,
            "feedback": "As good as it gets.",
            "feedback_kind": "specific",
            "feedback_digest": digest("As good as it gets."),
            "output_digest": digest(f"output {i}"),
        }
        for i in range(3)
    }
    assert summarize(evaluation_of(cases))["feedback"]["repeated_share"] == 0.0


def test_the_top_feedbacks_are_the_most_frequent_cut_to_300_characters(known):
    top = summarize(known)["feedback"]["top"]
    assert top[:3] == [
        {"text": "Wrong answer.", "count": 3},
        {"text": "Missing the unit (km).", "count": 2},
        {"text": LONG[:300], "count": 2},
    ]
    assert len(LONG) > 300
    # Then the ones given once, in case order; never an empty feedback.
    assert top[3:] == [{"text": FEEDBACK[i][1], "count": 1} for i in (4, 8, 12, 15, 19, 21, 24)]


def test_unhelpful_low_are_the_bottom_quartile_without_specific_feedback(known):
    feedback = summarize(known)["feedback"]
    # The 25th percentile of the 17 scores is the fifth smallest, 0.28: cases 0 and 14
    # (0.0, generic), 21 (0.07, specific), 6 (0.12, empty) and 27 (0.28, none).
    assert statistics.quantiles(SCORES.values(), n=4, method="inclusive")[0] == 0.28
    assert feedback["unhelpful_low"] == [0, 6, 14, 27]
    assert feedback["unhelpful_low_count"] == 4


def test_the_slowest_cases_come_first_ties_in_case_order(known):
    assert summarize(known)["slowest"] == [7, 28, 15, 29, 27, 26, 25, 24, 23, 22]


def test_time_and_cost_are_totalled_and_averaged(known):
    summary = summarize(known)
    times = [_known_case(i)["total_ms"] for i in range(30)]
    metric_times = [_known_case(i)["metric_ms"] for i in range(30) if i not in (7, 28, 29)]
    assert summary["time"] == {
        "total_ms_mean": pytest.approx(statistics.mean(times)),
        "total_ms_p50": statistics.median(times),
        "total_ms_p95": pytest.approx(statistics.quantiles(times, n=20, method="inclusive")[18]),
        "metric_ms_mean": pytest.approx(statistics.mean(metric_times)),
        "run_ms_mean": None,  # no artifact ran
    }
    lengths = [len(text) for _, text in FEEDBACK.values()]
    assert summary["cost"] == {
        "task_usd_total": 0.0,
        "metric_usd_total": pytest.approx(0.017),
        "task_usd_per_case": 0.0,
        "metric_usd_per_case": pytest.approx(0.017 / 30),
        "model_calls_total": 17,
        "feedback_length_mean": pytest.approx(statistics.mean(lengths)),
        "feedback_length_max": len(LONG),
    }


def test_a_single_scoring_has_no_flaky_or_agreement_block(known):
    summary = summarize(known)
    assert summary["flaky"] is None and summary["agreement"] is None


def test_the_summary_is_json_the_evaluation_keeps(known):
    summary = summarize(known)
    known.summary = summary
    known.save(update_fields=["summary"])
    known.refresh_from_db()
    assert known.summary == json.loads(json.dumps(summary)) == summary


def test_summarizing_takes_a_bounded_number_of_queries(known, django_assert_max_num_queries):
    with django_assert_max_num_queries(30):
        summarize(known)


# The second scoring --------------------------------------------------------------------


def test_repeat_mode_counts_flaky_cases_of_those_scored_twice(evaluation_of):
    cases = {
        i: {"status": "valid", "score": 0.5, "second_status": "valid", "second_score": 0.5}
        for i in range(7)
    }
    for i in (2, 5, 6):
        cases[i].update(second_score=0.7, differs=True, gap=0.2)
    cases[7] = {"status": "skipped", "problem": "cancelled"}  # never scored a second time
    evaluation = evaluation_of(cases, second=Evaluation.Second.REPEAT)
    summary = summarize(evaluation)
    assert summary["flaky"] == {"count": 3, "share": pytest.approx(3 / 7), "examples": [2, 5, 6]}
    assert summary["agreement"] is None


COMPARED = {  # index: (status, score, second status, second score, differs, gap)
    0: ("valid", 0.9, "valid", 0.9, True, 0.0),  # the feedbacks differ, the verdicts not
    1: ("valid", 0.5, "valid", 0.5 + 5e-10, False, 5e-10),
    2: ("valid", 0.2, "valid", 0.8, True, 0.6),
    3: ("valid", 1.0, "invalid", None, True, None),
    4: ("error", None, "error", None, False, None),
    5: ("valid", 0.4, "valid", 0.3, True, 0.1),
    6: ("invalid", None, "valid", 0.7, True, None),
    7: ("valid", 0.0, "valid", 0.0, False, 0.0),
    8: ("timeout", None, "", None, False, None),  # its run timed out: nothing to compare
    9: ("valid", 0.6, "valid", 0.9, True, 0.3),
}


def test_compare_mode_measures_agreement_between_the_versions(evaluation_of):
    evaluation = evaluation_of(
        {
            i: {
                "status": status,
                "score": score,
                "second_status": second_status,
                "second_score": second_score,
                "differs": differs,
                "gap": gap,
            }
            for i, (status, score, second_status, second_score, differs, gap) in COMPARED.items()
        },
        second=Evaluation.Second.COMPARE,
    )
    agreement = summarize(evaluation)["agreement"]
    pairs = [(c[1], c[3]) for c in COMPARED.values() if c[0] == c[2] == "valid"]
    expected = statistics.correlation([x for x, _ in pairs], [y for _, y in pairs])
    assert agreement["n"] == 9
    assert agreement["same_verdict_share"] == pytest.approx(4 / 9)  # 0, 1, 4 and 7
    assert agreement["correlation"] == pytest.approx(expected, abs=1e-12)
    # Changed statuses first (no gap), then by gap; case 0 differs only in its feedback.
    assert agreement["disagree"] == [3, 6, 2, 9, 5]
    assert summarize(evaluation)["flaky"] is None


def test_no_correlation_without_two_pairs_that_vary(evaluation_of):
    evaluation = evaluation_of(
        {
            i: {"status": "valid", "score": 0.5, "second_status": "valid", "second_score": s}
            for i, s in enumerate([0.1, 0.9])
        },
        second=Evaluation.Second.COMPARE,
    )
    agreement = summarize(evaluation)["agreement"]
    assert agreement["correlation"] is None  # the first version's scores never vary
    assert agreement["same_verdict_share"] == 0.0


# No cases at all -----------------------------------------------------------------------

EMPTY_STATS = {"n": 0, "mean": None, "median": None, "min": None, "max": None, "bins": []}


def test_an_evaluation_without_cases_summarizes_to_zeros_and_nulls(evaluation_of):
    assert summarize(evaluation_of({}, total=5)) == {
        "version": 3,
        "cases": 0,
        "total": 5,
        "counts": {"valid": 0, "invalid": 0, "error": 0, "timeout": 0, "skipped": 0},
        "invalid_share": None,
        "score": EMPTY_STATS,
        "named": {},
        "failures": [],
        "feedback": {
            "returned": 0,
            "empty_share": None,
            "generic_share": None,
            "repeated_share": None,
            "top": [],
            "unhelpful_low": [],
            "unhelpful_low_count": 0,
        },
        "slowest": [],
        "time": {
            "total_ms_mean": None,
            "total_ms_p50": None,
            "total_ms_p95": None,
            "metric_ms_mean": None,
            "run_ms_mean": None,
        },
        "cost": {
            "task_usd_total": 0.0,
            "metric_usd_total": 0.0,
            "task_usd_per_case": None,
            "metric_usd_per_case": None,
            "model_calls_total": 0,
            "feedback_length_mean": None,
            "feedback_length_max": None,
        },
        "flaky": None,
        "agreement": None,
        "human": None,
        "noise": None,
    }


def test_an_empty_second_scoring_has_its_block_with_nothing_in_it(evaluation_of):
    repeat = summarize(evaluation_of({}, second=Evaluation.Second.REPEAT))
    assert repeat["flaky"] == {"count": 0, "share": None, "examples": []}
    compare = summarize(evaluation_of({}, second=Evaluation.Second.COMPARE))
    assert compare["agreement"] == {
        "n": 0,
        "same_verdict_share": None,
        "correlation": None,
        "disagree": [],
    }


def test_a_run_with_an_artifact_averages_its_run_times(evaluation_of):
    evaluation = evaluation_of(
        {i: {"status": "valid", "score": 1.0, "run_ms": 100.0 * (i + 1)} for i in range(3)}
    )
    assert summarize(evaluation)["time"]["run_ms_mean"] == pytest.approx(200.0)
