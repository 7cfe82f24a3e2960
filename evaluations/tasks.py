"""The evaluation's Celery task: a thin interface that takes an id and calls the execution.

Each message is one turn of the evaluation next in line (evaluations.turns), which is the
one that sent it unless another waited longer. A turn can run for hours, far past a
check's time limit: its own limits come from settings.EVALUATION_TASK_TIME_LIMIT (which
the execution also holds the turns of one evaluation to, together). A message
redelivered meanwhile (the broker's visibility timeout is a check's) claims the next
evaluation waiting, if any, and otherwise does nothing.
"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from evaluations import execution
from evaluations.services import RUN_EVALUATION_TASK


@shared_task(
    name=RUN_EVALUATION_TASK,
    ignore_result=True,
    soft_time_limit=settings.EVALUATION_TASK_TIME_LIMIT,
    time_limit=settings.EVALUATION_TASK_TIME_LIMIT + 60,
)
def evaluation_task(evaluation_id: int) -> None:
    execution.execute_evaluation(evaluation_id)
