"""What every job's row shares (WorkerRow: checks, evaluations and runs), and the users'
allowances of each kind of request (RateBucket)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class WorkerRow(models.Model):
    """What every row a worker runs holds besides its status and its work: why it failed,
    when it was sent, claimed, last seen alive and ended, by which worker, and whether
    its user asked to stop it. The heartbeats (jobs.heartbeats), the sweeps
    (jobs.sweeps) and the cancel read these same fields on a check, an evaluation and a
    run."""

    # Set when it could not run to its end (for example "worker_lost").
    failure = models.CharField(max_length=40, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    # When the task message was last sent; re-sent if the row stays queued too long.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True, default="")
    # The user asked to stop it while it ran; the worker running it stops within a second.
    cancel_requested = models.BooleanField(default=False)

    class Meta:
        abstract = True

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL


class RateBucket(models.Model):
    """A user's allowance of one kind of request (jobs.limits): `tokens` left at
    `refilled_at`, refilled continuously up to the per-minute rate."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rate_buckets"
    )
    kind = models.CharField(max_length=16)
    tokens = models.FloatField()
    refilled_at = models.DateTimeField()

    class Meta:
        db_table = "metrics_app_ratebucket"
        constraints = [
            models.UniqueConstraint(fields=["owner", "kind"], name="one_bucket_per_kind")
        ]

    def __str__(self) -> str:
        return f"{self.kind} allowance of {self.owner_id}"
