"""Writes. Business logic lives here, not in views, forms or tasks."""

from __future__ import annotations

import logging
import socket
import time
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from metrics_app import heartbeats, limits, model_choices, notify, sandboxing
from metrics_app.models import Check, FeedbackReview, Metric, MetricVersion, Profile
from metrics_app.starters import STARTERS

logger = logging.getLogger(__name__)

# The worker's tasks (metrics_app.tasks), sent by name: the tasks call these services, and
# these services never import the tasks back.
RUN_CHECK_TASK = "metrics_app.run_check"
RUN_REVIEW_TASK = "metrics_app.review_feedback"


def _enqueue(task: str, pk: int) -> None:
    current_app.send_task(task, args=(pk,))


# How often a running check's partial result is written (the final one always is).
PROGRESS_EVERY_S = 0.25


class CheckRefused(Exception):
    """A check the user may not start now; `code` says why (rate_limited, too_many_active)."""

    def __init__(self, code: str, limit: int) -> None:
        super().__init__(code)
        self.code = code
        self.limit = limit


@transaction.atomic
def metric_create(
    *, owner: AbstractBaseUser, name: str, starter: str, source: str | None = None
) -> Metric:
    """A new metric from a starter, or from `source` (a docs example) with fitting cases."""
    template = STARTERS[starter]
    if source is not None:
        # A docs example that is one of the starters gets that starter's cases.
        template = next((s for s in STARTERS.values() if s.source == source), template)
    metric = Metric.objects.create(
        owner=owner,
        name=name,
        cases=[dict(case) for case in template.cases],
        timeout_s=settings.CHECK_TIMEOUT_DEFAULT,
    )
    MetricVersion.objects.create(metric=metric, number=1, source=source or template.source)
    return metric


@transaction.atomic
def metric_save(
    metric: Metric,
    *,
    source: str,
    cases: list[dict] | None = None,
    timeout_s: int | None = None,
    reflection_model: str | None = None,
    metric_model: str | None = None,
) -> tuple[MetricVersion, bool]:
    """Save the editor's state. A changed source becomes a new immutable version.

    Returns (latest version, whether it was created now).
    """
    # Lock the metric row so two saves cannot take the same version number.
    locked = Metric.objects.select_for_update().get(pk=metric.pk)
    if cases is not None:
        locked.cases = cases
    if timeout_s is not None:
        locked.timeout_s = timeout_s
    if reflection_model is not None:
        locked.reflection_model = reflection_model
    if metric_model is not None:
        locked.metric_model = metric_model
    locked.save()
    latest = locked.versions.order_by("-number").first()
    if latest is not None and latest.source == source:
        return latest, False
    number = (locked.versions.aggregate(top=Max("number"))["top"] or 0) + 1
    return MetricVersion.objects.create(metric=locked, number=number, source=source), True


def metric_restore(metric: Metric, version: MetricVersion) -> MetricVersion:
    """Restoring never rewrites history: the old text becomes the newest version."""
    restored, _created = metric_save(metric, source=version.source)
    return restored


def profile_set_language(user: AbstractBaseUser, language: str) -> None:
    """Remember the interface language `user` chose last (one of settings.LANGUAGES)."""
    Profile.objects.update_or_create(user=user, defaults={"language": language})


def check_allowed(owner: AbstractBaseUser) -> None:
    """Raise CheckRefused when `owner` may not start a check now (it takes one from the
    user's check allowance when it may)."""
    active = Check.objects.filter(
        owner=owner, status__in=(Check.Status.QUEUED, Check.Status.RUNNING)
    ).count()
    if active >= settings.CHECK_MAX_ACTIVE_PER_USER:
        raise CheckRefused("too_many_active", settings.CHECK_MAX_ACTIVE_PER_USER)
    if not limits.take(owner, limits.CHECK, per_minute=settings.CHECK_RATE_PER_MINUTE):
        raise CheckRefused("rate_limited", settings.CHECK_RATE_PER_MINUTE)


def check_create(
    *,
    owner: AbstractBaseUser,
    source: str,
    cases: list[dict] | None = None,
    timeout_s: int | None = None,
    metric_version: MetricVersion | None = None,
    language: str = "en",
    reflection_model: str = "",
    metric_model: str = "",
    artifact: dict | None = None,
    task_model: str = "",
    fingerprint: str = "",
) -> Check:
    """Create a queued check and hand it to the worker once the row is committed.

    Enqueueing on commit means a worker can never pick up an id whose row it cannot
    see yet, and a rolled-back request enqueues nothing.
    """
    check = Check.objects.create(
        owner=owner,
        source=source,
        cases=cases,
        timeout_s=timeout_s or settings.CHECK_TIMEOUT_DEFAULT,
        metric_version=metric_version,
        language=language,
        reflection_model=reflection_model,
        metric_model=metric_model,
        artifact=artifact,
        task_model=task_model,
        fingerprint=fingerprint,
        enqueued_at=timezone.now(),
    )
    # robust: with the broker down the request still succeeds; the row stays queued
    # and checks_requeue_lost() sends it once the broker is back.
    transaction.on_commit(lambda: _enqueue(RUN_CHECK_TASK, check.pk), robust=True)
    return check


@transaction.atomic
def check_start_for_metric(
    metric: Metric, version: MetricVersion, *, language: str = "en"
) -> Check:
    """Check a saved version on the metric's own cases, within the user's limits."""
    metric.refresh_from_db()  # the cases and time limit as last saved
    check_allowed(metric.owner)
    return check_create(
        owner=metric.owner,
        source=version.source,
        cases=metric.cases or None,
        timeout_s=metric.timeout_s,
        metric_version=version,
        language=language,
        reflection_model=metric.reflection_model,
        metric_model=metric.metric_model,
    )


def check_claim(check_id: int) -> bool:
    """Move a check from queued to running. Exactly one caller can win.

    A redelivered message (acks_late) finds the row no longer queued and does nothing.
    """
    now = timezone.now()
    claimed = Check.objects.filter(pk=check_id, status=Check.Status.QUEUED).update(
        status=Check.Status.RUNNING,
        started_at=now,
        heartbeat_at=now,
        worker=f"{socket.gethostname()}",
    )
    return claimed == 1


def check_execute(check_id: int) -> None:
    """Run a claimed check through the contract check engine and store the result."""
    from contract.cases import case_from_dict
    from contract.engine import run_check

    if not check_claim(check_id):
        logger.info("check %s is not queued; ignoring a duplicate delivery", check_id)
        return
    check = Check.objects.get(pk=check_id)
    cases = [case_from_dict(item) for item in check.cases] if check.cases else None
    last_write = [time.monotonic()]

    def save_progress(partial) -> None:
        # A quick check is written once, when final; a slow one shows its stages and
        # cases as they come, a few times a second at most.
        now = time.monotonic()
        if now - last_write[0] < PROGRESS_EVERY_S:
            return
        last_write[0] = now
        Check.objects.filter(pk=check_id, status=Check.Status.RUNNING).update(
            result=partial.to_dict(), heartbeat_at=timezone.now()
        )
        notify.check_changed(check_id)

    gateway, llm_for_case = _model_gateway(check)
    task_gateway, task_llm_for_case = _task_gateway(check)
    try:
        with heartbeats.beating(check_id):
            result = run_check(
                check.source,
                cases,
                timeout_s=check.timeout_s,
                on_progress=save_progress,
                sandbox_config=sandboxing.config(),
                sandboxes=sandboxing.sandboxes(),
                llm_for_case=llm_for_case,
                artifact=_artifact(check),
                task_llm_for_case=task_llm_for_case,
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
    now = timezone.now()
    Check.objects.filter(pk=check_id, status=Check.Status.RUNNING).update(
        status=Check.Status.PASSED if result.passed else Check.Status.FAILED,
        result=result.to_dict(),
        finished_at=now,
        heartbeat_at=now,
    )
    notify.check_changed(check_id)


def _gateway_or_refusal(make):
    """(gateway, its per-case handler factory) from make(); (None, None) when no model is
    chosen. A choice that stopped being usable (a key removed from the server) reaches the
    user's code as a model_error saying so, rather than failing the whole check."""
    from providers.catalogue import ModelChoiceError
    from providers.gateway import refusing_handler

    try:
        gateway = make()
    except ModelChoiceError as exc:
        handler = refusing_handler(exc.code, exc.message)
        return None, lambda index: handler
    if gateway is None:
        return None, None
    return gateway, gateway.for_case


def _model_gateway(check: Check):
    """The metric model for this check's llm() calls (docs: else the reflection model)."""
    from providers.gateway import gateway_for_check

    return _gateway_or_refusal(
        lambda: gateway_for_check(
            model_choices.catalogue(),
            metric_model=check.metric_model or None,
            reflection_model=check.reflection_model or None,
            limits=model_choices.limits(),
            timeout_s=settings.MODEL_TIMEOUT_S,
        )
    )


def _artifact(check: Check):
    """The artifact a wizard check runs before the metric; None for a playground check.

    A DSPy program is checked as what the docs say every kind yields: the value its
    run(artifact, input) returns."""
    from contract.artifacts import Artifact

    if not check.artifact:
        return None
    kind = check.artifact.get("kind")
    if kind in ("python", "dspy"):
        return Artifact.python(
            check.artifact.get("source") or "", check.artifact.get("content", "")
        )
    return Artifact(kind, None, check.artifact.get("content", ""))


def _task_gateway(check: Check):
    """The task model for the artifact's llm() calls (a wizard check only)."""
    from providers.gateway import ModelGateway

    if not check.artifact or not check.task_model:
        return None, None
    found = model_choices.catalogue()
    return _gateway_or_refusal(
        lambda: ModelGateway(
            found.resolve(check.task_model),
            env=found.env,
            limits=model_choices.limits(),
            timeout_s=settings.MODEL_TIMEOUT_S,
        )
    )


def checks_reap_stale(*, pk: int | None = None) -> int:
    """End running checks whose worker stopped beating as failed, "worker_lost"."""
    now = timezone.now()
    stale = Check.objects.filter(
        status=Check.Status.RUNNING,
        heartbeat_at__lt=now - timedelta(seconds=settings.CHECK_STALE_AFTER_S),
    )
    if pk is not None:
        stale = stale.filter(pk=pk)
    reaped = stale.update(status=Check.Status.FAILED, failure="worker_lost", finished_at=now)
    if reaped:
        logger.warning("%s running check(s) lost their worker", reaped)
    return reaped


def checks_requeue_lost() -> int:
    """Send again the checks that stayed queued too long (their message was lost).

    Each is re-sent at most once per interval: the conditional update decides which
    sweeper sends it, and the worker's claim makes any duplicate a no-op.
    """
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.CHECK_REQUEUE_AFTER_S)
    sent = 0
    waiting = Check.objects.filter(status=Check.Status.QUEUED, enqueued_at__lt=cutoff)
    for check_id in waiting.values_list("pk", flat=True)[:500]:
        mine = Check.objects.filter(
            pk=check_id, status=Check.Status.QUEUED, enqueued_at__lt=cutoff
        ).update(enqueued_at=now)
        if mine:
            _enqueue(RUN_CHECK_TASK, check_id)
            sent += 1
    if sent:
        logger.warning("re-sent %s queued check(s) to the broker", sent)
    return sent


def reviews_reap_stale() -> int:
    """End reviews that never finished (a lost worker or message) so the page stops
    waiting; the user can ask again. A review is one model call, so a few times the model
    timeout is long past any real answer."""
    cutoff = timezone.now() - timedelta(seconds=4 * settings.MODEL_TIMEOUT_S + 60)
    return FeedbackReview.objects.filter(
        status__in=(FeedbackReview.Status.QUEUED, FeedbackReview.Status.RUNNING),
        created_at__lt=cutoff,
    ).update(status=FeedbackReview.Status.FAILED, error_code="timeout", error_message="")


def check_finish_failed(check_id: int, failure: str) -> None:
    """End a running check as failed, keeping whatever partial result it stored."""
    Check.objects.filter(pk=check_id, status=Check.Status.RUNNING).update(
        status=Check.Status.FAILED, failure=failure, finished_at=timezone.now()
    )


class ReviewRefused(Exception):
    """A review that cannot be asked for; `code`: no_reflection_model, not_reviewable."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@transaction.atomic
def review_request(check: Check, case_index: int, *, language: str = "en") -> FeedbackReview:
    """Queue the reflection model's review of one case's feedback."""
    model = check.reflection_model or (
        check.metric_version.metric.reflection_model if check.metric_version else ""
    )
    if not model:
        raise ReviewRefused("no_reflection_model")
    cases = (check.result or {}).get("cases", [])
    if not check.is_final or case_index >= len(cases) or cases[case_index].get("feedback") is None:
        raise ReviewRefused("not_reviewable")
    if not limits.take(check.owner, limits.REVIEW, per_minute=settings.REVIEW_RATE_PER_MINUTE):
        raise CheckRefused("reviews_rate_limited", settings.REVIEW_RATE_PER_MINUTE)
    review = FeedbackReview.objects.create(
        contract_check=check, case_index=case_index, model=model, language=language
    )
    transaction.on_commit(lambda: _enqueue(RUN_REVIEW_TASK, review.pk), robust=True)
    return review


def review_execute(review_id: int) -> None:
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
