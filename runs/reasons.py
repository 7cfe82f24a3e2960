"""Why a run stands where it does, in the reader's language: why a finished run stopped,
why one paused or failed (with its failure's details), and what a queued one waits for."""

from __future__ import annotations

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from runs.models import Run
from submissions.presenters import usd
from wording import UNKNOWN, fill, format_count, words
from wording.contract import STAGE_NAMES
from wording.wizard import ENGINE_NAMES

PAUSED_NOTE = gettext_lazy("Everything so far is kept; Resume goes on from the last checkpoint.")

# A provider that kept failing, by the role of its model in the run.
PROVIDER_FAILED = {
    "task": gettext_lazy("The task model's provider kept failing (%(code)s): %(message)s."),
    "metric": gettext_lazy("The metric model's provider kept failing (%(code)s): %(message)s."),
    "reflection": gettext_lazy(
        "The reflection model's provider kept failing (%(code)s): %(message)s."
    ),
}


def _message(params: dict) -> str:
    return str(params.get("message") or "").strip().rstrip(".") or "—"


def stop_text(run: Run) -> str:
    """Why a finished run stopped; "" for any other."""
    if run.status != Run.Status.FINISHED:
        return ""
    budget = (run.config or {}).get("budget") or {}
    if run.stop_reason == "metric_calls":
        calls = (run.progress or {}).get("max_metric_calls") or budget.get("metric_calls") or 0
        used = int((run.progress or {}).get("metric_calls") or 0)
        if used < calls:
            return _short_of_calls(used, calls, (run.failure_params or {}).get("needed"))
        return _("It used its budget of %(calls)s metric calls.") % {"calls": format_count(calls)}
    if run.stop_reason == "usd_budget":
        spend = (run.progress or {}).get("spend") or {}
        limit = spend.get("max_usd") or budget.get("usd") or 0
        return _("It reached its dollar budget of %(usd)s.") % {"usd": usd(float(limit))}
    if run.stop_reason == "stop_file":
        return _("It was stopped by the stop file (gepa.stop) in its folder on the worker.")
    if run.stop_reason == "perfect_score":
        return _(
            "A candidate scored 1 on every validation case, so it stopped there: there was "
            "nothing left to improve, and the rest of its budget was not spent."
        )
    return _("It finished.")


def _short_of_calls(used: int, budget: int, needed: int | None) -> str:
    """Why a run stopped before the end of its metric calls: the next batch of cases
    would have passed the budget (a run never makes more calls than its budget)."""
    params = {
        "calls": format_count(used),
        "budget": format_count(budget),
        "needed": format_count(needed or 0),
    }
    if not needed:
        return _("It used %(calls)s of its budget of %(budget)s metric calls.") % params
    if not used:
        return (
            _(
                "Its budget of %(budget)s metric calls is less than the %(needed)s cases "
                "candidates are compared on, so not even the starting candidate could be "
                "scored."
            )
            % params
        )
    return (
        _(
            "It used %(calls)s of its budget of %(budget)s metric calls: its next step "
            "needed %(needed)s more, which would have passed the budget."
        )
        % params
    )


def failure_text(run: Run) -> str:
    """Why a paused or failed run stopped, with its failure's details; "" for any other."""
    if run.status not in (Run.Status.PAUSED, Run.Status.FAILED):
        return ""
    code, params = run.failure, run.failure_params or {}
    text = _failure_words(code, params, run)
    if run.status == Run.Status.PAUSED:
        return f"{text} {PAUSED_NOTE}"
    return text


def _failure_words(code: str, params: dict, run: Run) -> str:
    if code == "provider_failed":
        template = PROVIDER_FAILED.get(params.get("role"), PROVIDER_FAILED["task"])
        return str(template) % {"code": params.get("code") or "?", "message": _message(params)}
    if code == "model_unavailable":
        return _("A model this run uses can no longer be used (%(code)s): %(message)s.") % {
            "code": params.get("code") or "?",
            "message": _message(params),
        }
    if code in ("sandbox_unavailable", "sandbox_failed"):
        reason = words(params.get("reason"), {"detail": params.get("detail", "")}, family="sandbox")
        return _("No case could run, because the sandbox could not be started: %(reason)s") % {
            "reason": reason
        }
    if code == "metric_failed":
        stage = str(STAGE_NAMES.get(params.get("stage"), params.get("stage") or ""))
        problem = params.get("problem") or ""
        reason = words(problem, params.get("params") or {}) if problem else ""
        return _("metric.py did not get past the %(stage)s stage: %(reason)s") % {
            "stage": stage,
            "reason": reason or "—",
        }
    if code == "program_failed":
        problem = params.get("problem") or ""
        reason = words(problem, params.get("params") or {}) if problem else ""
        return _("The DSPy program could not be loaded for the run: %(reason)s") % {
            "reason": reason or "—"
        }
    if code == "engine_unavailable":
        engine = params.get("engine") or ""
        return _(
            "The %(engine)s engine cannot run submitted runs on this workbench yet; GEPA "
            "can. Submit the run again with GEPA."
        ) % {"engine": str(ENGINE_NAMES.get(engine, engine or "?"))}
    if code == "dataset_problem":
        reason = words(params.get("code"), params.get("params"), family="dataset")
        return _("The dataset's rows could not be read as this run asked: %(reason)s") % {
            "reason": reason
        }
    if code == "no_train_rows":
        return _(
            "The run has no training rows to learn from. Give the train split some rows and "
            "submit it again."
        )
    if code == "checkpoint_refused":
        return _(
            "Its saved checkpoint was not loaded: its signature does not match (it was "
            "changed after it was saved, is another run's, or was saved before checkpoints "
            "were signed). What the run found until then is kept; submit the run again to "
            "start over."
        )
    if code == "time_limit":
        return _("The run reached the worker's time limit for one go.")
    if code == "internal_error":
        return _("The worker stopped the run on an unexpected error (%(type)s).") % {
            "type": params.get("type") or "?"
        }
    if code == "worker_lost":
        count = run.attempt or settings.RUN_MAX_ATTEMPTS
        return ngettext(
            "The worker running it was lost %(count)s time: something in the run keeps "
            "taking its worker down.",
            "The worker running it was lost %(count)s times: something in the run keeps "
            "taking its worker down.",
            count,
        ) % {"count": format_count(count)}
    text = words(code, params) if code else ""
    if not text or text == fill(UNKNOWN, {"code": code}):
        return _("The run stopped before it finished.")
    return text


def waiting_text(run: Run) -> str:
    """What a queued or running run is doing, in a sentence."""
    if run.status == Run.Status.QUEUED:
        if run.attempt:
            return _("It waits for a worker to go on from its last checkpoint.")
        return _("It waits for a worker to pick it up.")
    if run.status == Run.Status.RUNNING:
        if run.cancel_requested:
            return _("Stopping the run… What it found so far is kept.")
        if ((run.config or {}).get("engine") or {}).get("resolved") == "dspy_gepa":
            return _(
                "DSPy GEPA is improving the program's instructions: in each iteration the "
                "reflection model reads how the program did on a few training cases and "
                "rewrites one predictor's instructions; a new version that does better on "
                "them is scored on every validation case."
            )
        return _(
            "GEPA is improving the artifact: in each iteration the reflection model reads "
            "how a candidate did on a few training cases and writes a new one; a new "
            "candidate that does better on them is scored on every validation case."
        )
    if run.status == Run.Status.CANCELLED:
        return _("You cancelled it. What it found until then is kept.")
    return ""
