"""Running a check or a review, in the worker. Only checks.tasks imports this module."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils import timezone

from checks import fair_share, worker_writes
from checks.models import Check, FeedbackReview
from contract.storable import storable
from jobs import gateways, heartbeats, model_choices, notify, sandbox_pool

if TYPE_CHECKING:
    from contract.results import CheckResult

logger = logging.getLogger(__name__)

# How often a running check's partial result is written (the final one always is).
PROGRESS_EVERY_S = 0.25


def check_claim(check_id: int) -> bool:
    """Move a check from queued to running. Exactly one caller can win.

    A redelivered message (acks_late) finds the row no longer queued and does nothing.
    """
    return worker_writes.claim(check_id) is not None


def execute_check(check_id: int) -> None:
    """Claim check `check_id`, or the fairest queued one (checks.fair_share), run it
    through the contract check engine and store the result."""
    check = fair_share.claim_fairest(check_id)
    if check is None:
        logger.info("check %s is not queued or waits for its owner's other check", check_id)
        return
    try:
        _execute(check)
    finally:
        fair_share.wake_next(check.owner_id)


def _execute(check: Check) -> None:
    from contract.cancel import Cancel
    from contract.cases import case_from_dict
    from contract.engine import run_check

    check_id = check.pk
    cases = [case_from_dict(item) for item in check.cases] if check.cases else None

    def save_progress(partial) -> None:
        # A quick check is written once, when final; a slow one shows its stages and
        # cases as they come, a few times a second at most (run_check throttles).
        Check.objects.filter(pk=check_id, status=Check.Status.RUNNING).update(
            result=_stored(partial), heartbeat_at=timezone.now()
        )
        notify.check_changed(check_id)

    gateway, llm_for_case = _model_gateway(check)
    task_gateway, task_llm_for_case = _task_gateway(check)
    cancel = Cancel()
    if check.cancel_requested:  # asked between the claim and here
        cancel.set()
    try:
        with heartbeats.beating(Check, check_id, on_cancel=cancel.set):
            result = run_check(
                check.source,
                cases,
                timeout_s=check.timeout_s,
                on_progress=save_progress,
                progress_every_s=PROGRESS_EVERY_S,
                sandbox_config=sandbox_pool.config(),
                sandboxes=sandbox_pool.sandboxes((check.artifact or {}).get("kind")),
                llm_for_case=llm_for_case,
                artifact=check.artifact_value,
                task_llm_for_case=task_llm_for_case,
                task_model=check.task_model if check.artifact else "",
                cancel=cancel,
                files=check.files or None,
            )
    except BaseException as exc:
        # Whatever stopped the check (a bug, Celery's soft time limit, a shutdown), the
        # row must not stay "running": record why, then let the exception go on.
        failure = (
            "time_limit" if type(exc).__name__ == "SoftTimeLimitExceeded" else "internal_error"
        )
        logger.exception("check %s stopped: %s", check_id, failure)
        check_finish_failed(check_id, failure)
        notify.check_changed(check_id)
        raise
    finally:
        for used in (gateway, task_gateway):
            if used is not None:
                used.close()
    worker_writes.verdict(
        check_id,
        status=Check.Status.PASSED if result.passed else Check.Status.FAILED,
        failure="cancelled" if cancel.is_set() else "",
        result=_stored(result),
    )
    notify.check_changed(check_id)


def _stored(result: CheckResult) -> dict:
    """A check's result as its row keeps it, partial or final: the metric's text made
    storable (contract.storable), so that PostgreSQL takes what SQLite would and both
    show the same: a NUL in a feedback would fail the write, and the check be lost."""
    return storable(result.to_dict())


def _model_gateway(check: Check):
    """The metric model for this check's llm() calls (docs: else the reflection model)."""
    from providers.gateway import gateway_for_check

    return gateways.gateway_or_refusal(
        lambda: gateway_for_check(
            model_choices.catalogue(),
            metric_model=check.metric_model or None,
            reflection_model=check.reflection_model or None,
            limits=model_choices.limits(),
            timeout_s=settings.MODEL_TIMEOUT_S,
        )
    )


def _task_gateway(check: Check):
    """The task model for the artifact's llm() calls (a wizard check only)."""
    return gateways.gateway_to(check.task_model if check.artifact else "", model_choices.limits())


def check_finish_failed(check_id: int, failure: str) -> None:
    """End a running check as failed, keeping whatever partial result it stored."""
    Check.objects.filter(pk=check_id, status=Check.Status.RUNNING).update(
        status=Check.Status.FAILED, failure=failure, finished_at=timezone.now()
    )


def execute_review(review_id: int) -> None:
    """Ask the reflection model; the row is claimed like a check, so redelivery is a no-op."""
    from contract.cases import DEFAULT_CASES
    from providers.budget import Budget, BudgetExceeded
    from providers.catalogue import ModelChoiceError
    from providers.clients import ProviderError
    from providers.review import review_feedback

    claimed = FeedbackReview.objects.filter(
        pk=review_id, status=FeedbackReview.Status.QUEUED
    ).update(status=FeedbackReview.Status.RUNNING)
    if claimed != 1:
        return
    review = FeedbackReview.objects.select_related("contract_check").get(pk=review_id)
    check = review.contract_check
    given = (check.cases or [case.to_job() for case in DEFAULT_CASES])[review.case_index]
    row = check.result["cases"][review.case_index]
    outcome: dict = {"status": FeedbackReview.Status.FAILED}
    try:
        model = model_choices.catalogue().resolve(review.model)
        text, usage = review_feedback(
            model,
            input=given.get("input"),
            output=given.get("output"),
            expected=given.get("expected"),
            score=row.get("score"),
            feedback=row.get("feedback") or "",
            language=review.language,
            env=model_choices.catalogue().env,
            timeout_s=settings.MODEL_TIMEOUT_S,
            # A paid call: held to one check's model budget, its output capped to what fits.
            budget=Budget(model_choices.limits()),
        )
        outcome = {"status": FeedbackReview.Status.DONE, "text": text, "usage": usage}
    except ModelChoiceError as exc:
        outcome.update(error_code=exc.code, error_message=exc.message)
    except ProviderError as exc:
        outcome.update(error_code=exc.code, error_message=exc.message)
    except BudgetExceeded as exc:
        outcome.update(error_code="review_over_budget", error_message=exc.limit)
    except Exception:
        logger.exception("feedback review %s failed", review_id)
        outcome.update(error_code="handler_error", error_message="")
    FeedbackReview.objects.filter(pk=review_id).update(**outcome)
