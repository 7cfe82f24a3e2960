"""Celery tasks: thin interfaces that take ids and call a service."""

from __future__ import annotations

from celery import shared_task

from metrics_app import services, worker  # noqa: F401 - registers worker signals


@shared_task(name="metrics_app.run_check", ignore_result=True)
def run_check_task(check_id: int) -> None:
    services.check_execute(check_id)


@shared_task(name="metrics_app.review_feedback", ignore_result=True)
def run_review_task(review_id: int) -> None:
    services.review_execute(review_id)
