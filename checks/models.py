"""The contract check's rows: each check, and the feedback reviews asked of its cases."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from contract.artifacts import Artifact
from jobs.models import WorkerRow


class Check(WorkerRow):
    """One run of the contract check. This row, not the broker, is the truth about it."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        PASSED = "passed", _("Passed")
        FAILED = "failed", _("Failed")

    FINAL = (Status.PASSED, Status.FAILED)

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="checks"
    )
    metric_version = models.ForeignKey(
        "metrics.MetricVersion",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="checks",
    )
    source = models.TextField()
    # metric.py's helper modules, {path: text} (contract.files): its version's, or those
    # the API sent with the source; None when there are none.
    files = models.JSONField(null=True, blank=True)
    cases = models.JSONField(null=True, blank=True)
    timeout_s = models.PositiveIntegerField(default=60)
    # The model choices as they were when the check started (catalogue ids).
    reflection_model = models.CharField(max_length=120, blank=True, default="")
    metric_model = models.CharField(max_length=120, blank=True, default="")
    # What the check runs on each case before the metric, with the task model for its
    # llm() calls: a contract.Artifact as its to_dict() (read back by artifact_value).
    # None for a playground check, which scores the cases' outputs as given.
    artifact = models.JSONField(null=True, blank=True)
    task_model = models.CharField(max_length=120, blank=True, default="")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    result = models.JSONField(null=True, blank=True)
    # A wizard's check: what it ran, part by part (submissions.rules.DraftState.parts),
    # so when the draft changes the page can say what changed.
    draft_parts = models.JSONField(null=True, blank=True)

    class Meta:
        db_table = "metrics_app_check"  # created by metrics_app's migrations, kept as is
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["status", "heartbeat_at"], name="metrics_app_status_8607d5_idx"),
            models.Index(fields=["status", "enqueued_at"], name="metrics_app_status_88f988_idx"),
            # A claim asks whether the owner has a check running (checks.fair_share).
            models.Index(fields=["owner", "status"], name="check_owner_status_idx"),
        ]

    def __str__(self) -> str:
        return f"check {self.pk} ({self.status})"

    @property
    def artifact_value(self) -> Artifact | None:
        return Artifact.from_dict(self.artifact) if self.artifact else None

    @property
    def live_token(self) -> str:
        """Changes whenever the row does in a way the panel shows: its status, or a write
        of its partial result (which moves the heartbeat)."""
        beat = int(self.heartbeat_at.timestamp() * 1000) if self.heartbeat_at else 0
        return f"{self.status}.{beat}"

    @property
    def waits_for_news(self) -> bool:
        """Whether the live panel asks the server to answer when the row changes (a young
        check, as after a click on Run), rather than asking again on a timer."""
        age = (timezone.now() - self.created_at).total_seconds() if self.created_at else 0
        return not self.is_final and age < LONG_POLL_FOR_S

    @property
    def poll_delay_ms(self) -> int:
        """How long the live panel waits before asking again: every second while a
        check is young, backing off to every 5 s for one that waits or runs long, so
        a busy queue is not also a flood of polls."""
        age = (timezone.now() - self.created_at).total_seconds() if self.created_at else 0
        return int(min(5.0, 1.0 + max(0.0, age - 10.0) / 10.0) * 1000)


# A check younger than this is followed by requests the server holds until it changes.
LONG_POLL_FOR_S = 120


class FeedbackReview(models.Model):
    """The reflection model's opinion of one case's feedback, asked for by the user."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    # Not named "check": Model.check() is Django's system-check hook.
    contract_check = models.ForeignKey(Check, on_delete=models.CASCADE, related_name="reviews")
    case_index = models.PositiveSmallIntegerField()
    model = models.CharField(max_length=120)
    language = models.CharField(max_length=8, default="en")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    text = models.TextField(blank=True, default="")
    # A model_error code (see wording.codes.MODEL_ERROR_CODES) and the provider's words.
    error_code = models.CharField(max_length=40, blank=True, default="")
    error_message = models.TextField(blank=True, default="")
    usage = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "metrics_app_feedbackreview"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"review of case {self.case_index + 1} of check {self.contract_check_id}"

    @property
    def is_final(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)
