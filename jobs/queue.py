"""Sending a job's task to the workers, by name: the services that send a task never import
it (the tasks call the services' execution, and nothing imports them back)."""

from __future__ import annotations

from celery import current_app


def enqueue(task: str, pk: int) -> None:
    """Send task `task` for row `pk`. Call it once the row is committed
    (transaction.on_commit), so the worker finds it."""
    current_app.send_task(task, args=(pk,))
