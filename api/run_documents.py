"""What the API answers about a draft and a run: the wizard's state of a draft (its
problems, its gate) and where a run stands (what the run page's status panel shows),
read through the pages' own rules and presenters, in the request's language."""

from __future__ import annotations

import datetime

from django.urls import reverse
from ninja import Field, Schema

from runs import presenters, selectors
from runs.models import Run
from runs.results import best_of
from submissions import presenters as submission_presenters
from submissions import projection, rules
from submissions.models import Draft
from wording import words


class ProblemOut(Schema):
    step: str = Field(description="artifact, dataset, metric, models or check")
    code: str
    message: str


class GateOut(Schema):
    open: bool = Field(description="Whether a submit is let through now.")
    check_state: str = Field(
        description="none, stale (the draft changed since), queued, running, passed or failed"
    )
    check_id: int | None


class MinibatchGateOut(Schema):
    """What GEPA's minibatch comparison is worth with the metric's noise (the wizard's
    warning beside the minibatch size)."""

    measured: bool = Field(
        description="Whether an evaluation that scored each case several times measured "
        "the metric's noise; false: the metric calls a model and nothing measured it."
    )
    minibatch: int
    evaluation: int | None = Field(None, description="The evaluation that measured it.")
    k: int | None = Field(None, description="How many times it scored each case.")
    flip_share: float | None = Field(None, description="The share of cases whose verdict changed.")
    variance: float | None = Field(None, description="The mean variance of a case's scores.")
    step: float | None = Field(None, description="The improvement judged on: a tenth of the range.")
    right_call: float | None = Field(
        None, description="The chance that a candidate better by step wins the comparison."
    )
    coin_toss: bool | None = Field(None, description="right_call below 0.75.")
    minibatch_for: int | None = Field(
        None, description="The smallest minibatch size with a 0.9 chance; null: none up to 50."
    )
    right_call_for: float | None = None
    message: str = Field(
        description="What the wizard says of it: the warning of a coin toss, the chance "
        "of a right call, or the suggestion to measure the noise."
    )


class DraftOut(Schema):
    id: int
    name: str
    problems: list[ProblemOut] = Field(description="What stands between the draft and a run.")
    gate: GateOut
    engine: str = Field(description="The engine that will run it (Auto resolved).")
    counts: dict[str, int] | None = Field(description="Rows in each split.")
    run_id: int | None = Field(description="Its run, once submitted.")
    minibatch: int = Field(description="The run's minibatch size.")
    minibatch_gate: MinibatchGateOut | None = Field(
        description="Null for a metric that calls no model, as far as anything measured."
    )
    updated_at: datetime.datetime
    url: str = Field(description="The wizard's page for the draft.")


class ProgressOut(Schema):
    metric_calls: int
    max_metric_calls: int
    iterations: int
    candidates: int
    best_score: float | None = Field(description="The best mean validation score so far.")
    best_candidate: int | None
    seed_score: float | None = Field(description="The starting candidate's score.")
    spent_usd: float
    max_usd: float | None
    text: str = Field(description="The metric calls against the budget, in words.")


class RunOut(Schema):
    id: int
    name: str
    status: str = Field(description="queued, running, paused, finished, cancelled or failed")
    status_label: str
    final: bool
    live: bool = Field(description="Queued or running: a worker has it or will take it.")
    message: str = Field(description="Where it stands, in a sentence.")
    reason: str = Field(description="Why it stopped, paused or failed; '' while it goes on.")
    doing: str = Field(description="What it is doing or waits for; '' once it stopped.")
    failure: str = Field(description="Why it paused or failed: a code, '' when it did not.")
    stop_reason: str = Field(description="Why a finished run stopped: metric_calls, …")
    progress: ProgressOut
    cancel_requested: bool
    can_cancel: bool
    can_resume: bool
    attempt: int
    has_result: bool
    engine: str
    draft_id: int | None
    check_id: int
    created_at: datetime.datetime
    started_at: datetime.datetime | None
    finished_at: datetime.datetime | None
    url: str = Field(description="The run's page.")
    token: str = Field(description="Changes with what the page shows: give it to /wait as since.")


def draft_out(draft: Draft) -> dict:
    state = rules.DraftState(draft)
    found = state.problems
    counts = None
    if state.facts and state.facts.get("problem") is None:
        counts = state.facts.get("counts")
    run = getattr(draft, "run", None) if draft.pk else None
    return {
        "id": draft.pk,
        "name": draft.name,
        "problems": [
            {"step": step, "code": p.code, "message": words(p.code, p.params, family="step")}
            for step, p in found.items()
        ],
        "gate": {
            "open": not found,
            "check_state": state.check_state,
            "check_id": draft.contract_check_id,
        },
        "engine": rules.resolved_engine(draft),
        "counts": counts,
        "run_id": run.pk if run else None,
        "minibatch": draft.minibatch,
        "minibatch_gate": _minibatch_gate(draft),
        "updated_at": draft.updated_at,
        "url": reverse("submissions:resume", args=[draft.pk]),
    }


def _minibatch_gate(draft: Draft) -> dict | None:
    """The gate as the review's projection stores it, with the wizard's words."""
    gate = projection.gate_for_draft(draft) if draft.pk else None
    if gate is None:
        return None
    view = submission_presenters.gate_view(gate)
    return {**gate, "message": submission_presenters.gate_message(view)}


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def run_out(run: Run) -> dict:
    """The run as its page shows it now (call on a run as the sweep will leave it)."""
    standing = presenters.standing(run)
    progress = run.progress or {}
    spend = progress.get("spend") or {}
    best = progress.get("best") or {}
    scored = bool(progress.get("candidates"))
    budget_usd = ((run.config or {}).get("budget") or {}).get("usd")
    return {
        "id": run.pk,
        "name": run.name,
        "status": run.status,
        "status_label": str(standing["label"]),
        "final": run.is_final,
        "live": run.is_live,
        "message": str(standing["heading"]),
        "reason": str(standing["reason"]),
        "doing": str(standing["doing"]),
        "failure": run.failure or "",
        "stop_reason": run.stop_reason or "",
        "progress": {
            "metric_calls": standing["calls"],
            "max_metric_calls": standing["max_calls"],
            "iterations": int(progress.get("iteration") or 0),
            "candidates": int(progress.get("candidates") or 0),
            "best_score": _number(best.get("score")) if scored else None,
            "best_candidate": best.get("idx") if scored else None,
            "seed_score": _number(progress.get("seed_score")) if scored else None,
            "spent_usd": float(spend.get("total_usd") or 0.0),
            "max_usd": _number(spend.get("max_usd") or budget_usd),
            "text": str(standing["calls_text"]),
        },
        "cancel_requested": run.cancel_requested,
        "can_cancel": standing["can_cancel"],
        "can_resume": standing["can_resume"],
        "attempt": run.attempt,
        "has_result": run.result is not None,
        "engine": ((run.config or {}).get("engine") or {}).get("resolved", ""),
        "draft_id": run.draft_id,
        "check_id": run.contract_check_id,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "url": reverse("runs:detail", args=[run.pk]),
        "token": selectors.live_token(run),
    }


class BestOut(Schema):
    candidate: int
    text: str = Field(description="The best candidate's text: a prompt, or instructions.")
    val_mean: float | None = Field(description="Its mean score on the validation cases.")
    seed_val_mean: float | None = Field(description="The starting candidate's.")
    final: bool = Field(description="Whether the run has ended: this is then its result's best.")


def best_out(run: Run) -> dict | None:
    """The best candidate as the page's best.txt has it: the result's, else the best so
    far; None before the seed was scored."""
    result = run.result or {}
    found = result.get("best") or {}
    if found.get("text") is not None:
        best = (found.get("candidate", 0), found["text"], found.get("val_mean"))
        seed_mean = (result.get("seed") or {}).get("val_mean")
    else:
        candidates = selectors.candidates_of(run)
        chosen = best_of(candidates)
        if chosen is None:
            return None
        best = (chosen.idx, chosen.text, chosen.average)
        seed = next((c for c in candidates if c.idx == 0), None)
        seed_mean = seed.average if seed else None
    return {
        "candidate": best[0],
        "text": best[1],
        "val_mean": _number(best[2]),
        "seed_val_mean": _number(seed_mean),
        "final": run.is_final,
    }
