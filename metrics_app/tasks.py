"""Celery tasks: thin interfaces that take ids and call a service."""

from __future__ import annotations

from celery import shared_task

from metrics_app import services


@shared_task(name=services.RUN_CHECK_TASK, ignore_result=True)
def run_check_task(check_id: int) -> None:
    services.check_execute(check_id)


@shared_task(name=services.RUN_REVIEW_TASK, ignore_result=True)
def run_review_task(review_id: int) -> None:
    services.review_execute(review_id)
