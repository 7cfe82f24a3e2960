"""A draft's run projected from its latest finished evaluation (providers.projection
does the arithmetic): what the review step shows and the run's bundle keeps.

The wizard is below the evaluations app: it reads a draft's evaluations through the
draft's reverse relation (draft.evaluations), never by an import.

The projection is data, made once from the draft and the evaluation as they are and
stored in the run's configuration when it is submitted; the review step words the same
dict in the reader's language (submissions.presenters)."""

from __future__ import annotations

import json
import math

from django.db.models import F, Model

from jobs import model_choices
from providers.projection import (
    MINIBATCH_LIMITS,
    Measured,
    minibatch_gate,
    project,
    right_call,
    score_step,
)
from submissions.models import Draft
from submissions.rules import draft_artifact, metric_source, resolved_engine

VERSION = 1

# Cases whose input and output are measured for the reflection prompt's size: enough
# for a mean and a maximum, without reading every case of a large evaluation. The
# worker stores long values cut short, so a very long input counts as its stored part.
CASE_SAMPLE = 200


# evaluations.Evaluation.Status.DONE: the evaluations below are evaluations.Evaluation
# rows, typed here as the Model they are.
DONE = "done"


def latest_evaluation(draft: Draft, *, source: str | None = None) -> Model | None:
    """The draft's most recently finished evaluation that has its summary (of the metric
    `source` only, when given)."""
    finished = draft.evaluations.filter(status=DONE, summary__isnull=False)
    if source is not None:
        finished = finished.filter(source=source)
    return finished.order_by(F("finished_at").desc(nulls_last=True), "-pk").first()


def case_sizes(evaluation: Model) -> tuple[float | None, int | None]:
    """(mean, max) characters of a case's input and output as JSON, over the first
    CASE_SAMPLE cases; (None, None) when none was stored."""
    stored = evaluation.cases.order_by("index").values_list("case", flat=True)[:CASE_SAMPLE]
    sizes = [
        len(json.dumps(case.get("input"), ensure_ascii=False))
        + len(json.dumps(case.get("output"), ensure_ascii=False))
        for case in stored
        if isinstance(case, dict)
    ]
    if not sizes:
        return None, None
    return sum(sizes) / len(sizes), max(sizes)


def measured_by(evaluation: Model) -> Measured:
    mean, longest = case_sizes(evaluation)
    return Measured.from_summary(
        evaluation.summary,
        case_chars_mean=mean,
        case_chars_max=longest,
        task_model=evaluation.task_model,
        metric_model=evaluation.metric_model or evaluation.reflection_model,
    )


def _changed_since(evaluation: Model, draft: Draft) -> bool:
    """Whether the draft's artifact, metric or dataset is no longer what was evaluated:
    the numbers still come from it, and the review step says so."""
    return (
        evaluation.dataset_id != draft.dataset_id
        or evaluation.source != (metric_source(draft) or "")
        or evaluation.artifact_value != draft_artifact(draft)
    )


def for_draft(draft: Draft, *, counts: dict[str, int]) -> dict:
    """The projection of the draft's run, as stored (providers.projection's dict, with
    the evaluation it comes from). `counts`: the rows of each split; GEPA compares
    candidates on the validation split, or on the train split when that is empty."""
    evaluation = latest_evaluation(draft)
    reflection = model_choices.catalogue().get(draft.reflection_model)
    result = project(
        measured_by(evaluation) if evaluation is not None else None,
        budget_calls=draft.budget,
        valset_size=counts.get("validation") or counts.get("train") or 0,
        engine=resolved_engine(draft),
        task_model=draft.task_model,
        metric_model=draft.metric_model or draft.reflection_model,
        reflection=reflection,
        reflection_id=draft.reflection_model,
        instruction_chars=len(draft.artifact_content),
        minibatch=draft.minibatch,
    )
    data = {"version": VERSION, "evaluation": None, **result.to_dict()}
    data["minibatch_gate"] = gate_for_draft(draft)
    if evaluation is not None:
        data["evaluation"] = {
            "id": evaluation.pk,
            "cases": result.measured.cases,
            "finished_at": evaluation.finished_at.isoformat() if evaluation.finished_at else None,
            "changed_since": _changed_since(evaluation, draft),
        }
    return data


# -- the minibatch gate (providers.projection.minibatch_gate) ---------------------------

# Finished evaluations looked through, newest first, for one that measured the noise: a
# draft evaluated more often than this since has a measurement too old to hold anyway.
NOISE_LOOKBACK = 20


def _metric_model(row) -> str:
    """The metric model a draft or an evaluation resolves to (none chosen: reflection)."""
    return row.metric_model or row.reflection_model


def noise_evaluation(draft: Draft) -> Model | None:
    """The draft's most recently finished evaluation that scored each case K times
    (its summary's "noise"), of the metric and the metric model the draft has now: a
    noise measured on another metric or model says nothing of this one's."""
    finished = draft.evaluations.filter(
        status=DONE, summary__isnull=False, source=metric_source(draft) or ""
    ).order_by(F("finished_at").desc(nulls_last=True), "-pk")
    for evaluation in finished[:NOISE_LOOKBACK]:
        noise = evaluation.summary.get("noise")
        variance = noise.get("variance") if isinstance(noise, dict) else None
        if (
            isinstance(variance, int | float)
            and math.isfinite(variance)
            and variance >= 0
            and _metric_model(evaluation) == _metric_model(draft)
        ):
            return evaluation
    return None


def calls_a_model(draft: Draft) -> bool:
    """Whether the draft's metric is a judge (it calls a model), as far as something
    measured it: a case of its contract check whose metric made model calls, or a
    finished evaluation of it that paid for metric model calls (one of recorded outputs:
    that made any model call, every one being the metric's)."""
    source = metric_source(draft) or ""
    check = draft.contract_check
    if check is not None and check.source == source and isinstance(check.result, dict):
        for case in check.result.get("cases") or []:
            if ((case.get("usage") or {}).get("model_calls") or 0) > 0:
                return True
    evaluation = latest_evaluation(draft, source=source)
    if evaluation is None:
        return False
    cost = evaluation.summary.get("cost") or {}
    if (cost.get("metric_usd_total") or 0) > 0:
        return True
    return not evaluation.artifact and (cost.get("model_calls_total") or 0) > 0


def gate_for_draft(draft: Draft, minibatch: int | None = None) -> dict | None:
    """What GEPA's minibatch comparison is worth for the draft's run at `minibatch`
    cases (the draft's own size when None), as data.

    With a measured noise: {"measured": True, "evaluation": its id, "k", "flip_share",
    "variance", "step" (the improvement judged on), "minibatch", "right_call",
    "coin_toss", "minibatch_for", "right_call_for" (the chance at minibatch_for, or at
    the largest minibatch when none reaches the target)}.
    A judge metric whose noise nothing measured: {"measured": False, "minibatch"}.
    None for a metric that calls no model, as far as anything measured."""
    minibatch = minibatch or draft.minibatch
    evaluation = noise_evaluation(draft)
    if evaluation is None:
        return {"measured": False, "minibatch": minibatch} if calls_a_model(draft) else None
    noise = evaluation.summary["noise"]
    variance = float(noise["variance"])
    step = score_step(evaluation.summary.get("score"))
    gate = minibatch_gate(variance, minibatch, step=step)
    needed = gate["minibatch_for"]
    flip = noise.get("flip_share")
    if isinstance(flip, dict):
        flip = flip.get("value")
    return {
        "measured": True,
        "evaluation": evaluation.pk,
        "k": noise.get("k"),
        "flip_share": flip if isinstance(flip, int | float) else None,
        "variance": variance,
        "step": step,
        "minibatch": minibatch,
        **gate,
        "right_call_for": right_call(variance, needed or MINIBATCH_LIMITS[1], step),
    }
