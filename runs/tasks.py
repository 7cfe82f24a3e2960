"""The runs' Celery task: a thin interface that takes an id and calls the execution.

A run can take many hours, far past a check's limits: its own come from
settings.RUN_TASK_TIME_LIMIT (past it the run pauses, resumable). A message redelivered
meanwhile (the broker's visibility timeout is a check's) finds the row running and does
nothing; a run whose worker dies is queued again by the sweeps, not by the broker.
"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from runs import execution
from runs.services import RUN_OPTIMIZATION_TASK


@shared_task(
    name=RUN_OPTIMIZATION_TASK,
    ignore_result=True,
    soft_time_limit=settings.RUN_TASK_TIME_LIMIT,
    time_limit=settings.RUN_TASK_TIME_LIMIT + 120,
)
def run_task(run_id: int) -> None:
    execution.execute_run(run_id)
