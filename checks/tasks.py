"""Celery tasks: thin interfaces that take ids and call the execution."""

from __future__ import annotations

from celery import shared_task

from checks import execution
from checks.services import RUN_CHECK_TASK, RUN_REVIEW_TASK


@shared_task(name=RUN_CHECK_TASK, ignore_result=True)
def check_task(check_id: int) -> None:
    execution.execute_check(check_id)


@shared_task(name=RUN_REVIEW_TASK, ignore_result=True)
def review_task(review_id: int) -> None:
    execution.execute_review(review_id)
