"""An evaluation, shaped for its pages in the reader's language and number format.

Everything shown of all the cases comes from the summary (evaluations.summary wrote it
once, at the end); the cases it names (examples, slowest, flaky, disagreeing) are the
only case rows a results page reads, handed in by index.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from evaluations.charts import fixed, histogram_svg, number
from evaluations.models import Evaluation, EvaluationCase
from evaluations.selectors import QueuePlace
from wording import UNKNOWN, fill, format_count, words
from wording.contract import CASE_STATUSES, RUN_STATUSES, STAGE_NAMES

STATUS_ORDER = ("valid", "invalid", "error", "timeout", "skipped")
# How much of a feedback a list shows; the case page shows all of it.
FEEDBACK_CUT = 300
# How much of a case's input, output or expected value its page shows.
VALUE_CUT = 20000


def count(value: int | None) -> str:
    return format_count(value or 0)


def percent(share: float | None) -> str:
    if share is None:
        return "—"
    return _("%(percent)s%%") % {"percent": fixed(share * 100, 1)}


def ms(value: float | None) -> str:
    if value is None:
        return "—"
    return _("%(ms)s ms") % {"ms": fixed(value, 0 if value >= 10 else 1)}


def usd(value: float | None) -> str:
    if value is None:
        return "—"
    return _("$%(usd)s") % {"usd": number(value, 3)}


def duration(seconds: float | None) -> str:
    """A span of time as a reader says it: "45 s", "3 min 20 s", "2 h 5 min"."""
    if seconds is None:
        return "—"
    whole = int(round(seconds))
    if whole < 60:
        return _("%(seconds)s s") % {"seconds": whole}
    if whole < 3600:
        return _("%(minutes)s min %(seconds)s s") % {"minutes": whole // 60, "seconds": whole % 60}
    return _("%(hours)s h %(minutes)s min") % {
        "hours": whole // 3600,
        "minutes": whole % 3600 // 60,
    }


def status_label(status: str) -> str:
    return str(CASE_STATUSES.get(status, status))


def counts_rows(counts: Mapping) -> list[dict]:
    """The cases by status, in the contract's order, the statuses no case has left out."""
    return [
        {"status": status, "label": status_label(status), "count": count(counts.get(status))}
        for status in STATUS_ORDER
        if counts.get(status)
    ]


def problem_words(code: str, params: Mapping | None) -> str:
    """A case's problem in words, from the one catalogue the check's results use too."""
    return words(code, params or {}) if code else ""


def _is_unknown(text: str, code: str) -> bool:
    return text == fill(UNKNOWN, {"code": code})


def failure_text(evaluation: Evaluation) -> str:
    """Why a failed evaluation ended, in words; "" for one that did not fail."""
    code, params = evaluation.failure, evaluation.failure_params or {}
    if evaluation.status != Evaluation.Status.FAILED:
        return ""
    if code == "cancelled":
        return _("You cancelled this evaluation before it finished.")
    if code == "worker_lost":
        return _(
            "The worker running this evaluation was lost. The cases it finished are kept; "
            "start the evaluation again to score the rest."
        )
    if code == "load_failed":
        stage = str(STAGE_NAMES.get(params.get("stage"), params.get("stage") or ""))
        reason = problem_words(params.get("problem") or "", params.get("params"))
        return _("metric.py did not get past the %(stage)s stage: %(reason)s") % {
            "stage": stage,
            "reason": reason or "—",
        }
    if code == "dataset_problem":
        reason = words(params.get("code"), params.get("params"), family="dataset")
        return _("The dataset's rows could not be read as this evaluation asked: %(reason)s") % {
            "reason": reason
        }
    if code in ("sandbox_unavailable", "sandbox_failed"):
        reason = words(params.get("reason"), {"detail": params.get("detail", "")}, family="sandbox")
        return _("No case could run, because the sandbox could not be started: %(reason)s") % {
            "reason": reason
        }
    if code == "time_limit":
        return _(
            "The evaluation reached the worker's time limit. The cases it finished are kept; "
            "evaluate a sample of the rows to see the rest sooner."
        )
    text = words(code, params) if code else ""
    if not text or _is_unknown(text, code):
        return _("The evaluation stopped before it finished.")
    return text


def version_name(evaluation: Evaluation, *, second: bool = False) -> str:
    version = evaluation.second_version if second else evaluation.metric_version
    if version is None:
        return _("the second metric") if second else _("the metric")
    return _("%(name)s, version %(number)s") % {
        "name": version.metric.name,
        "number": version.number,
    }


def progress(evaluation: Evaluation) -> dict:
    """The live panel's numbers: from the row and its progress, never from the cases."""
    state = evaluation.progress or {}
    score_n = state.get("score_n") or 0
    mean = state.get("score_sum", 0) / score_n if score_n else None
    cost = (state.get("task_usd") or 0) + (state.get("metric_usd") or 0)
    rate = evaluation.rate
    total = evaluation.total
    return {
        "done": evaluation.done,
        "total": total,
        "done_text": count(evaluation.done),
        "total_text": count(total),
        "share_text": percent(evaluation.done / total) if total else "—",
        "rate_text": _("%(rate)s cases/s") % {"rate": number(rate, 3)} if rate else "—",
        "left_text": duration(evaluation.seconds_left),
        "elapsed_text": duration(evaluation.elapsed_s) if evaluation.started_at else "—",
        "counts": counts_rows(state.get("counts") or {}),
        "mean_text": number(mean),
        "cost_text": usd(cost),
        "model_calls_text": count(state.get("model_calls")),
    }


def resumed_text(evaluation: Evaluation) -> str:
    """That its worker was lost and it went on elsewhere; "" when that never happened."""
    if not evaluation.lost:
        return ""
    return ngettext(
        "Its worker was lost %(count)s time: it went back in line and went on from the "
        "cases already written, on any worker.",
        "Its worker was lost %(count)s times: each time it went back in line and went on "
        "from the cases already written, on any worker.",
        evaluation.lost,
    ) % {"count": format_count(evaluation.lost)}


def queue_lines(place: QueuePlace, turn_s: float) -> list[str]:
    """Why a queued evaluation waits and its place, as true as the queue can say it:
    what is ahead of it, whose is running, and that evaluations take turns of `turn_s`
    seconds, so a long one ahead never holds it for that one's whole length."""
    ahead = place.ahead
    if not ahead:
        return [_("Waiting for a worker to pick it up.")]
    if place.others_running:
        line = ngettext(
            "Queued: %(count)s evaluation ahead of yours (another user's evaluation is "
            "running; evaluations take turns).",
            "Queued: %(count)s evaluations ahead of yours (another user's evaluation is "
            "running; evaluations take turns).",
            ahead,
        )
    elif place.own_running:
        line = ngettext(
            "Queued: %(count)s evaluation ahead of yours (your other evaluation is "
            "running; evaluations take turns).",
            "Queued: %(count)s evaluations ahead of yours (your other evaluation is "
            "running; evaluations take turns).",
            ahead,
        )
    else:
        line = ngettext(
            "Queued: %(count)s evaluation ahead of yours (evaluations take turns).",
            "Queued: %(count)s evaluations ahead of yours (evaluations take turns).",
            ahead,
        )
    turns = _(
        "An evaluation runs for about %(duration)s at a time, then lets the next one in "
        "line have its turn."
    ) % {"duration": duration(turn_s)}
    return [line % {"count": format_count(ahead)}, turns]


def cut(text: str | None, limit: int = FEEDBACK_CUT) -> str:
    text = text or ""
    return text if len(text) <= limit else text[:limit] + "…"


def _json(value: object, limit: int = VALUE_CUT) -> str:
    if isinstance(value, str):
        return cut(value, limit)
    return cut(json.dumps(value, ensure_ascii=False, indent=1), limit)


def case_row(case: EvaluationCase) -> dict:
    """One case as a table row (or a line of a results block)."""
    second = case.second or {}
    return {
        "index": case.index,
        "number": case.number,
        "file_row": case.file_row,
        # Rows are numbered one way everywhere: from the first data row, so a CSV's header
        # is not a row and a CSV and the same rows as JSON Lines number them alike.
        "data_row": case.row + 1,
        "status": case.status,
        "status_label": status_label(case.status),
        "problem": case.problem,
        "problem_text": problem_words(case.problem, case.params),
        "exception_type": case.exception_type,
        "score_text": number(case.score) if case.score is not None else "—",
        "feedback": cut(case.feedback),
        "feedback_kind": case.feedback_kind,
        "scores": [(name, number(value)) for name, value in sorted((case.scores or {}).items())],
        "total_ms_text": ms(case.total_ms),
        "metric_ms_text": ms(case.metric_ms),
        "run_ms_text": ms(case.run_ms),
        "task_usd_text": usd(case.task_usd),
        "metric_usd_text": usd(case.metric_usd),
        "cost_text": usd((case.task_usd or 0) + (case.metric_usd or 0)),
        "model_calls_text": count(case.model_calls),
        "gap_text": number(case.gap) if case.gap is not None else "—",
        "differs": case.differs,
        "second": bool(case.second),
        "second_status_label": status_label(second.get("status") or case.second_status),
        "second_problem_text": problem_words(second.get("problem") or "", second.get("params")),
        "second_score_text": number(case.second_score) if case.second_score is not None else "—",
        "second_feedback": cut(second.get("feedback")),
        "second_scores": [
            (name, number(value)) for name, value in sorted((second.get("scores") or {}).items())
        ],
        # Scored K times: every scoring after the first, as the table lists them.
        "repeat_scores_text": " · ".join(scoring["score_text"] for scoring in _scorings(case)[1:]),
    }


def _scorings(case: EvaluationCase) -> list[dict]:
    """Every scoring of a case scored K times, the first one first: its number, status
    and score in words; [] for a case scored once or twice before K was kept."""
    repeats = case.repeats if isinstance(case.repeats, list) else []
    if not repeats:
        return []
    first = {"status": case.status, "problem": case.problem, "score": case.score}
    found = []
    for position, scoring in enumerate([first, *repeats], start=1):
        scoring = scoring if isinstance(scoring, Mapping) else {}
        score = scoring.get("score")
        found.append(
            {
                "number": position,
                "status_label": status_label(scoring.get("status") or ""),
                "problem_text": problem_words(scoring.get("problem") or "", {})
                if position > 1
                else problem_words(case.problem, case.params),
                "score_text": number(score) if isinstance(score, int | float) else "—",
            }
        )
    return found


def _rows(indexes: Iterable, shown: Mapping[int, EvaluationCase]) -> list[dict]:
    return [case_row(shown[index]) for index in indexes or () if index in shown]


def stats_block(stats: Mapping | None, *, title: str, name: str = "") -> dict:
    stats = stats or {}
    return {
        "name": name,
        "title": title,
        "n": count(stats.get("n")),
        "has_scores": bool(stats.get("n")),
        "svg": histogram_svg(stats, title=title),
        "mean": number(stats.get("mean")),
        "median": number(stats.get("median")),
        "min": number(stats.get("min")),
        "max": number(stats.get("max")),
    }


def failure_groups(failures: Iterable[Mapping], shown: Mapping[int, EvaluationCase]) -> list[dict]:
    """The failures grouped by problem (and exception class), each said in words with the
    first example's details, and each example with its own when they differ."""
    groups = []
    for group in failures or ():
        code = group.get("code") or ""
        examples = [shown[i] for i in group.get("examples") or () if i in shown]
        first = examples[0].params if examples else {"type": group.get("exception_type")}
        title = problem_words(code, first) if code else status_label(group.get("status", ""))
        rows = []
        for case in examples:
            own = problem_words(case.problem, case.params)
            rows.append(
                {"index": case.index, "number": case.number, "own": own if own != title else ""}
            )
        fix = first.get("fix") if isinstance(first, Mapping) else None
        groups.append(
            {
                "code": code,
                "title": title,
                # The return that keeps the contract, built from the first example's values.
                "fix": fix if isinstance(fix, str) and examples else "",
                "fix_case": examples[0].number if examples else None,
                "status": group.get("status", ""),
                "status_label": status_label(group.get("status", "")),
                "exception_type": group.get("exception_type") or "",
                "count": group.get("count") or 0,
                "count_text": count(group.get("count")),
                "examples": rows,
            }
        )
    return groups


def feedback_block(feedback: Mapping | None, shown: Mapping[int, EvaluationCase]) -> dict | None:
    if not feedback:
        return None
    return {
        "returned": count(feedback.get("returned")),
        "empty_share": percent(feedback.get("empty_share")),
        "generic_share": percent(feedback.get("generic_share")),
        # "—" for a summary from before it was measured (version 1 counted the same praise
        # for right answers as a weakness).
        "repeated_share": percent(feedback.get("repeated_share")),
        "top": [
            {"text": item.get("text", ""), "count": count(item.get("count"))}
            for item in feedback.get("top") or ()
        ],
        "unhelpful": _rows(feedback.get("unhelpful_low"), shown),
        "unhelpful_count": feedback.get("unhelpful_low_count") or 0,
        "unhelpful_count_text": count(feedback.get("unhelpful_low_count")),
    }


def time_block(time: Mapping | None) -> dict:
    time = time or {}
    return {
        "total_mean": ms(time.get("total_ms_mean")),
        "total_p50": ms(time.get("total_ms_p50")),
        "total_p95": ms(time.get("total_ms_p95")),
        "metric_mean": ms(time.get("metric_ms_mean")),
        "run_mean": ms(time.get("run_ms_mean")) if time.get("run_ms_mean") is not None else "",
    }


def cost_block(cost: Mapping | None) -> dict:
    cost = cost or {}
    return {
        "task_total": usd(cost.get("task_usd_total")),
        "metric_total": usd(cost.get("metric_usd_total")),
        "task_per_case": usd(cost.get("task_usd_per_case")),
        "metric_per_case": usd(cost.get("metric_usd_per_case")),
        "model_calls": count(cost.get("model_calls_total")),
        "feedback_length_mean": number(cost.get("feedback_length_mean"), 3),
        "feedback_length_max": count(cost.get("feedback_length_max")),
    }


def flaky_block(
    evaluation: Evaluation, flaky: Mapping | None, shown: Mapping[int, EvaluationCase]
) -> dict | None:
    if evaluation.second != Evaluation.Second.REPEAT or flaky is None:
        return None
    return {
        "count": flaky.get("count") or 0,
        "count_text": count(flaky.get("count")),
        "share": percent(flaky.get("share")),
        "cases": _rows(flaky.get("examples"), shown),
        # A metric whose score comes from a model is the usual cause; say so plainly
        # when this one asks one.
        "calls_model": "llm(" in (evaluation.source or ""),
    }


def noise_block(
    evaluation: Evaluation, noise: Mapping | None, shown: Mapping[int, EvaluationCase]
) -> dict | None:
    """What scoring each case K times says of the metric's own noise, in words: the
    share of cases that changed verdict and the mean score, each with its interval."""
    if evaluation.second != Evaluation.Second.REPEAT or not noise:
        return None
    flips = noise.get("flip_share") or {}
    mean = noise.get("mean") or {}
    return {
        "k": noise.get("k") or evaluation.repeats,
        "n": count(noise.get("n")),
        "measured": bool(noise.get("n")),
        "flip_share": percent(flips.get("value")),
        "flip_low": percent(flips.get("low")),
        "flip_high": percent(flips.get("high")),
        "has_mean": mean.get("value") is not None,
        "mean": number(mean.get("value"), 3),
        "mean_low": number(mean.get("low"), 3),
        "mean_high": number(mean.get("high"), 3),
        "variance": number(noise.get("variance"), 3),
        "spread_mean": number(noise.get("spread_mean"), 3),
        "cases": [
            {**case_row(shown[index]), "scorings": _scorings(shown[index])}
            for index in noise.get("examples") or ()
            if index in shown
        ],
        "calls_model": "llm(" in (evaluation.source or ""),
    }


def agreement_block(
    evaluation: Evaluation, agreement: Mapping | None, shown: Mapping[int, EvaluationCase]
) -> dict | None:
    if evaluation.second != Evaluation.Second.COMPARE or agreement is None:
        return None
    correlation = agreement.get("correlation")
    return {
        "n": count(agreement.get("n")),
        "same_share": percent(agreement.get("same_verdict_share")),
        "correlation": number(correlation, 3) if correlation is not None else "",
        "cases": _rows(agreement.get("disagree"), shown),
        "first_name": version_name(evaluation),
        "second_name": version_name(evaluation, second=True),
    }


def shown_indexes(summary: Mapping | None) -> set[int]:
    """Every case index the results page names: the only case rows it reads."""
    if not summary:
        return set()
    indexes: set[int] = set()
    for group in summary.get("failures") or ():
        indexes.update(group.get("examples") or ())
    indexes.update((summary.get("feedback") or {}).get("unhelpful_low") or ())
    indexes.update(summary.get("slowest") or ())
    indexes.update((summary.get("flaky") or {}).get("examples") or ())
    indexes.update((summary.get("noise") or {}).get("examples") or ())
    indexes.update((summary.get("agreement") or {}).get("disagree") or ())
    indexes.update((summary.get("human") or {}).get("disagree") or ())
    return {index for index in indexes if isinstance(index, int)}


def results(evaluation: Evaluation, shown: Mapping[int, EvaluationCase]) -> dict | None:
    """The results page's blocks from the summary; None when there is none (an
    evaluation that ended before its first case, or one the sweep has yet to end)."""
    summary = evaluation.summary
    if not summary:
        return None
    named = summary.get("named") or {}
    return {
        "cases": count(summary.get("cases")),
        "total": count(summary.get("total")),
        "counts": counts_rows(summary.get("counts") or {}),
        "invalid_share": percent(summary.get("invalid_share")),
        "score": stats_block(summary.get("score"), title=_("Score distribution")),
        "named": [
            stats_block(named[name], title=_("Named score %(name)s") % {"name": name}, name=name)
            for name in sorted(named)
        ],
        "failures": failure_groups(summary.get("failures"), shown),
        "feedback": feedback_block(summary.get("feedback"), shown),
        "slowest": _rows(summary.get("slowest"), shown),
        "time": time_block(summary.get("time")),
        "cost": cost_block(summary.get("cost")),
        # Scored K times, the noise block says what the flaky block said of two scorings;
        # a summary from before it was measured keeps its flaky block.
        "flaky": None
        if summary.get("noise")
        else flaky_block(evaluation, summary.get("flaky"), shown),
        "noise": noise_block(evaluation, summary.get("noise"), shown),
        "agreement": agreement_block(evaluation, summary.get("agreement"), shown),
    }


def _exception_text(exception: object) -> str:
    if isinstance(exception, Mapping):
        kind, message = exception.get("type") or "", exception.get("message") or ""
        return f"{kind}: {message}" if kind and message else kind or message
    return "" if exception is None else str(exception)


def _frames(traceback: object) -> tuple[list[dict], str]:
    """A traceback as frames ({line, function, text}) when it is a list of them, else as
    text."""
    if isinstance(traceback, list) and all(isinstance(f, Mapping) for f in traceback):
        return list(traceback), ""
    if not traceback:
        return [], ""
    return [], traceback if isinstance(traceback, str) else _json(traceback)


def detail_block(detail: Mapping | None) -> dict:
    """What else the worker kept of a case: its exception and traceback, what it printed,
    how the artifact's run went, and anything else as JSON, so nothing kept is hidden."""
    detail = dict(detail or {})
    frames, traceback_text = _frames(detail.pop("traceback", None))
    run = detail.pop("run", None)
    run_block = None
    if isinstance(run, Mapping):
        run_frames, run_traceback = _frames(run.get("traceback"))
        run_block = {
            "status": str(RUN_STATUSES.get(run.get("status"), run.get("status") or "")),
            "problem_text": problem_words(run.get("problem") or "", run.get("params")),
            "exception": _exception_text(run.get("exception")),
            "frames": run_frames,
            "traceback_text": run_traceback,
            "duration": ms(run.get("duration_ms")),
            "output_repr": run.get("output_repr") or "",
        }
    return {
        "exception": _exception_text(detail.pop("exception", None)),
        "frames": frames,
        "traceback_text": traceback_text,
        "stdout": detail.pop("stdout", "") or "",
        "stderr": detail.pop("stderr", "") or "",
        "repr": detail.pop("repr", "") or "",
        "run": run_block,
        "other": [(key, _json(value)) for key, value in sorted(detail.items()) if value],
    }


def case_page(case: EvaluationCase) -> dict:
    """The case page: the row, the case as scored, and everything the worker kept."""
    given = case.case or {}
    return {
        **case_row(case),
        "feedback": case.feedback,
        # Each DSPy predictor's own feedback, by its name.
        # By name: PostgreSQL's jsonb keeps no order of keys.
        "predictor_feedback": sorted((case.predictor_feedback or {}).items()),
        "second_feedback": (case.second or {}).get("feedback") or "",
        "scorings": _scorings(case),
        "input_json": _json(given.get("input")),
        "output_json": _json(given.get("output")),
        "expected_json": _json(given.get("expected")),
        "has_expected": given.get("expected") is not None,
        "detail": detail_block(case.detail),
        "feedback_length": count(case.feedback_length),
        # What the person said of the row (the human columns), beside what the metric did.
        "human": case.human or None,
        "human_score_text": number((case.human or {}).get("score")),
    }
