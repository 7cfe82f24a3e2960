"""A draft's run projected from its latest finished evaluation (providers.projection
does the arithmetic): what the review step shows and the run's bundle keeps.

The wizard is below the evaluations app: it reads a draft's evaluations through the
draft's reverse relation (draft.evaluations), never by an import.

The projection is data, made once from the draft and the evaluation as they are and
stored in the run's configuration when it is submitted; the review step words the same
dict in the reader's language (submissions.presenters)."""

from __future__ import annotations

import json

from django.db.models import F, Model

from jobs import model_choices
from providers.projection import Measured, project
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


def latest_evaluation(draft: Draft) -> Model | None:
    """The draft's most recently finished evaluation that has its summary."""
    return (
        draft.evaluations.filter(status=DONE, summary__isnull=False)
        .order_by(F("finished_at").desc(nulls_last=True), "-pk")
        .first()
    )


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
    )
    data = {"version": VERSION, "evaluation": None, **result.to_dict()}
    if evaluation is not None:
        data["evaluation"] = {
            "id": evaluation.pk,
            "cases": result.measured.cases,
            "finished_at": evaluation.finished_at.isoformat() if evaluation.finished_at else None,
            "changed_since": _changed_since(evaluation, draft),
        }
    return data
