"""An evaluation and its cases as the API answers them: the numbers the live panel and
the results page show (from the row, its progress and its summary), each code beside its
words in the request's language."""

from __future__ import annotations

import datetime

from django.urls import reverse
from ninja import Field, Schema

from evaluations import presenters, selectors, sweeps
from evaluations.models import Evaluation, EvaluationCase
from evaluations.summary import STATUSES
from evaluations.verdict import passed, verdict


class StatsOut(Schema):
    n: int
    mean: float | None
    median: float | None
    min: float | None
    max: float | None
    bins: list[dict] = Field(description="[{lo, hi, count}]: the page's histogram.")


class FailureOut(Schema):
    code: str = Field(description="The problem's code ('' for a status without one).")
    message: str = Field(description="The group's problem in words, from its first example.")
    status: str
    exception_type: str
    count: int
    examples: list[int] = Field(description="The first cases' indexes.")
    fix: str = Field(description="A return that keeps the contract, when the problem has one.")


class SummaryOut(Schema):
    cases: int = Field(description="Cases scored (fewer than total when it stopped early).")
    total: int
    mean: float | None = Field(description="The mean score of the valid cases.")
    valid: int
    invalid: int = Field(description="Cases not valid (invalid, error, timeout, skipped).")
    invalid_share: float | None
    counts: dict[str, int] = Field(description="Cases by status.")
    score: StatsOut
    named: dict[str, StatsOut] = Field(description="Each named score's stats.")
    failures: list[FailureOut]
    feedback: dict | None
    slowest: list[int]
    time: dict | None
    cost: dict | None
    flaky: dict | None = Field(description="Scored twice: the cases whose two scores differ.")
    agreement: dict | None = Field(description="Compared: how often the versions agree.")
    noise: dict | None = Field(
        None,
        description="Scored K times: the metric's own noise over the cases scored K times "
        "(k, n; flip_share, the share of cases whose K verdicts are not all the same, and "
        "mean, the mean score, each {value, low, high} with its 95% bootstrap interval; "
        "variance, the mean per-case variance of the scores; spread_mean, the mean "
        "per-case standard deviation; examples, the cases with the largest spread).",
    )
    human: dict | None = Field(
        None,
        description="With human columns: how the metric agrees with people (accuracy, "
        "Cohen's kappa, precision and recall per label and the confusion matrix; or "
        "Spearman, Kendall, mean absolute difference and calibration bins), each figure "
        "{value, low, high} with its 95% bootstrap interval; the second version's too "
        "when compared; the cases they disagree on most.",
    )


class ProgressOut(Schema):
    counts: dict[str, int] = Field(description="Cases so far by status.")
    mean: float | None = Field(description="The mean score so far.")
    model_calls: int
    cost_usd: float


class EvaluationBriefOut(Schema):
    """What the list and the whole evaluation both say of it."""

    id: int
    status: str = Field(description="queued, running, done or failed")
    status_label: str
    final: bool
    failure: str = Field(description="Why it stopped early: cancelled, worker_lost, …")
    done: int
    total: int
    metric_id: int | None
    version: int | None
    dataset_id: int
    dataset_name: str
    created_at: datetime.datetime
    url: str = Field(description="The evaluation's own page.")
    mean: float | None = Field(description="The mean score so far (or at its end).")
    passed: bool = Field(description="It finished and every case it scored is valid.")
    settings: dict = Field(
        description="What it scored: the column roles and types, the recorded column, the "
        "rows' selection and the second scoring. Two evaluations of one dataset with the "
        "same settings scored the same cases."
    )


class VerdictOut(Schema):
    code: str = Field(
        description="running, stopped (ended early), no_cases, all_valid or cases_failed."
    )
    passed: bool = Field(description="It finished and every case it scored is valid.")
    cases: int = Field(description="Cases scored.")
    failed: int = Field(description="Of those, the cases not valid.")
    reason: str = Field(description="Why: the problem most failed cases share, or why it stopped.")
    headline: str = Field(description="The verdict in a few words, as the page's heading.")
    text: str = Field(description="The verdict with its reason, in the request's language.")


class EvaluationOut(EvaluationBriefOut):
    failure_message: str = Field(description="Why it failed, in the request's language.")
    lost: int = Field(
        description="Times its worker was lost and it went back in line to go on from "
        "the cases written (it fails with worker_lost after a few)."
    )
    resumed_message: str = Field(description="The same in a sentence ('' for none).")
    token: str = Field(description="Changes when the live panel would: send it as `since`.")
    second: str
    second_version: int | None
    repeats: int | None = Field(
        description="With second 'repeat': how many times each case is scored in all."
    )
    started_at: datetime.datetime | None
    finished_at: datetime.datetime | None
    progress: ProgressOut
    summary: SummaryOut | None = Field(description="Once it ended with cases: the results.")
    verdict: VerdictOut = Field(description="Counted over every case, as the page says it.")


class SecondOut(Schema):
    status: str
    score: float | None
    problem: str
    message: str
    feedback: str
    scores: dict | None


class CaseOut(Schema):
    index: int
    number: int
    row: int = Field(description="The row (CSV) or line (JSON Lines) of the dataset file.")
    status: str = Field(description="valid, invalid, error, timeout or skipped")
    status_label: str
    problem: str
    message: str = Field(description="The problem in words ('' for none).")
    exception_type: str
    score: float | None
    scores: dict | None
    feedback: str
    feedback_kind: str
    total_ms: float
    metric_ms: float | None
    run_ms: float | None
    task_usd: float
    metric_usd: float
    model_calls: int
    second: SecondOut | None
    repeats: list[dict] | None = Field(
        description="Scored K times: every scoring after the first, [{status, problem, "
        "score}] (the first of them is `second`)."
    )
    differs: bool = Field(description="Its scorings do not all give the same verdict.")
    gap: float | None = Field(description="The spread of its valid scores: largest less smallest.")


class CasePageOut(Schema):
    page: int
    pages: int
    per_page: int
    count: int = Field(description="Cases that match.")
    cases: list[CaseOut]


def _stats(stats: dict | None) -> dict:
    stats = stats or {}
    return {
        "n": stats.get("n") or 0,
        **{key: stats.get(key) for key in ("mean", "median", "min", "max")},
        "bins": stats.get("bins") or [],
    }


def _firsts(evaluation: Evaluation) -> dict:
    """The first case of each failure group, which words the group (and the verdict)."""
    failures = (evaluation.summary or {}).get("failures") or []
    firsts = [group["examples"][0] for group in failures if group.get("examples")]
    return selectors.cases_at(evaluation, firsts)


def _failures(failures: list[dict], firsts: dict) -> list[dict]:
    worded = presenters.failure_groups(failures, firsts)
    return [
        {
            "code": group.get("code") or "",
            "message": words["title"],
            "status": group.get("status") or "",
            "exception_type": group.get("exception_type") or "",
            "count": group.get("count") or 0,
            "examples": list(group.get("examples") or ()),
            "fix": words["fix"],
        }
        for group, words in zip(failures, worded, strict=True)
    ]


def summary_out(evaluation: Evaluation, firsts: dict) -> dict | None:
    summary = evaluation.summary
    if not summary:
        return None
    counts = summary.get("counts") or {}
    cases = summary.get("cases") or 0
    valid = counts.get("valid") or 0
    score = _stats(summary.get("score"))
    named = summary.get("named") or {}
    return {
        "cases": cases,
        "total": summary.get("total") or evaluation.total,
        "mean": score["mean"],
        "valid": valid,
        "invalid": cases - valid,
        "invalid_share": summary.get("invalid_share"),
        "counts": {status: counts.get(status) or 0 for status in STATUSES},
        "score": score,
        "named": {name: _stats(named[name]) for name in sorted(named)},
        "failures": _failures(summary.get("failures") or [], firsts),
        "feedback": summary.get("feedback"),
        "slowest": summary.get("slowest") or [],
        "time": summary.get("time"),
        "cost": summary.get("cost"),
        "flaky": summary.get("flaky"),
        "agreement": summary.get("agreement"),
        "noise": summary.get("noise"),
        "human": summary.get("human"),
    }


def _progress(evaluation: Evaluation) -> dict:
    state = evaluation.progress or {}
    score_n = state.get("score_n") or 0
    return {
        "counts": {status: n for status, n in (state.get("counts") or {}).items() if n},
        "mean": state.get("score_sum", 0) / score_n if score_n else None,
        "model_calls": state.get("model_calls") or 0,
        "cost_usd": (state.get("task_usd") or 0) + (state.get("metric_usd") or 0),
    }


def evaluation_out(evaluation: Evaluation) -> dict:
    """The evaluation as its page shows it now (a lost one as the next sweep leaves it)."""
    evaluation = sweeps.as_the_sweep_will_leave_it(evaluation)
    second = evaluation.second_version
    progress = _progress(evaluation)
    # Read once for the summary's failure groups and the verdict's reason.
    firsts = _firsts(evaluation)
    failures = (evaluation.summary or {}).get("failures") or []
    top = (failures[0].get("examples") or [None])[0] if failures else None
    first_failed = firsts.get(top)
    return {
        **evaluation_brief(evaluation, progress),
        "failure_message": presenters.failure_text(evaluation),
        "lost": evaluation.lost,
        "resumed_message": presenters.resumed_text(evaluation),
        "token": evaluation.live_token,
        "second": evaluation.second,
        "second_version": second.number if second else None,
        "repeats": evaluation.repeats if evaluation.second == Evaluation.Second.REPEAT else None,
        "started_at": evaluation.started_at,
        "finished_at": evaluation.finished_at,
        "progress": progress,
        "summary": summary_out(evaluation, firsts),
        "verdict": verdict(evaluation, first_failed=first_failed).as_dict(),
    }


def evaluation_brief(evaluation: Evaluation, progress: dict | None = None) -> dict:
    """A line of the list, as the evaluations page shows it: no summary, no sweep."""
    version = evaluation.metric_version
    return {
        "id": evaluation.pk,
        "status": evaluation.status,
        "status_label": str(Evaluation.Status(evaluation.status).label),
        "final": evaluation.is_final,
        "failure": evaluation.failure or "",
        "done": evaluation.done,
        "total": evaluation.total,
        "metric_id": version.metric_id if version else None,
        "version": version.number if version else None,
        "dataset_id": evaluation.dataset_id,
        "dataset_name": getattr(evaluation, "dataset_name", ""),
        "created_at": evaluation.created_at,
        "url": reverse("evaluations:detail", args=[evaluation.pk]),
        "mean": (progress or _progress(evaluation))["mean"],
        "passed": passed(evaluation),
        "settings": {
            "roles": evaluation.roles,
            "column_types": evaluation.column_types,
            "recorded_column": evaluation.recorded_column,
            "selection": evaluation.selection,
            "second": evaluation.second,
        },
    }


def case_out(case: EvaluationCase) -> dict:
    second = case.second or {}
    return {
        "index": case.index,
        "number": case.number,
        "row": case.file_row,
        "status": case.status,
        "status_label": presenters.status_label(case.status),
        "problem": case.problem,
        "message": presenters.problem_words(case.problem, case.params),
        "exception_type": case.exception_type,
        "score": case.score,
        "scores": case.scores,
        "feedback": case.feedback,
        "feedback_kind": case.feedback_kind,
        "total_ms": case.total_ms,
        "metric_ms": case.metric_ms,
        "run_ms": case.run_ms,
        "task_usd": case.task_usd,
        "metric_usd": case.metric_usd,
        "model_calls": case.model_calls,
        "second": {
            "status": second.get("status") or case.second_status,
            "score": case.second_score,
            "problem": second.get("problem") or "",
            "message": presenters.problem_words(second.get("problem") or "", second.get("params")),
            "feedback": second.get("feedback") or "",
            "scores": second.get("scores"),
        }
        if case.second
        else None,
        "repeats": case.repeats,
        "differs": case.differs,
        "gap": case.gap,
    }
