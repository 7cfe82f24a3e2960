"""A submitted optimization run (Run), and what its optimization found beside it: each
candidate gepa accepted, and a log of the events that matter.

The tables keep the names the wizard's and the optimizations' migrations gave them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from checks.models import Check
from jobs.models import WorkerRow
from metrics.models import MetricVersion


class Run(WorkerRow):
    """A submitted optimization run: everything it uses, pinned when it was submitted,
    and where its optimization stands. The runs worker (runs.execution) claims
    it, writes its progress here as it goes and keeps gepa's checkpoint here too, so that
    another worker, on any machine, can resume it."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        # Stopped by a fault that may pass (a provider that kept failing, no sandbox):
        # everything so far is kept, and Resume goes on from the checkpoint.
        PAUSED = "paused", _("Paused")
        FINISHED = "finished", _("Finished")
        CANCELLED = "cancelled", _("Cancelled")
        FAILED = "failed", _("Failed")

    FINAL = (Status.FINISHED, Status.CANCELLED, Status.FAILED)

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="runs"
    )
    draft = models.OneToOneField(
        "submissions.Draft", on_delete=models.SET_NULL, null=True, blank=True, related_name="run"
    )
    name = models.CharField(max_length=120)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    # The run configuration as the bundle's run.json holds it.
    config = models.JSONField()
    metric_source = models.TextField()
    metric_version = models.ForeignKey(
        MetricVersion, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    dataset = models.ForeignKey(
        "submissions.Dataset", on_delete=models.PROTECT, related_name="runs"
    )
    contract_check = models.ForeignKey(Check, on_delete=models.PROTECT, related_name="+")
    # Why it paused or failed, with the failure's details; why a finished run stopped
    # ("metric_calls", "usd_budget", "stop_file").
    failure_params = models.JSONField(default=dict, blank=True)
    stop_reason = models.CharField(max_length=20, blank=True, default="")
    # Claims so far: each worker that takes the run counts one, and writes only while
    # the row still holds its count, so two workers never run it at once.
    attempt = models.PositiveIntegerField(default=0)
    # Where it stands (engines.progress's snapshot) and, once final, its result.
    progress = models.JSONField(default=dict, blank=True)
    result = models.JSONField(null=True, blank=True)
    # gepa's gepa_state.bin as of its last save, for a worker that resumes the run.
    checkpoint = models.BinaryField(null=True, blank=True, editable=False)
    checkpoint_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "submissions_run"  # made by the wizard's migrations, kept as is
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_live(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)


class RunCandidate(models.Model):
    """A candidate gepa accepted into its pool: its text, its parents (indexes of other
    candidates of the run; the seed, 0, has none) and its score on each validation case
    (keys: the case's position in the validation split, as text)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="candidates")
    idx = models.PositiveIntegerField()
    text = models.TextField()
    parents = models.JSONField(default=list)
    val_scores = models.JSONField(default=dict)
    average = models.FloatField(default=0.0)
    # Metric calls the run had used when it was found.
    discovered_at = models.PositiveIntegerField(default=0)
    # How many of its cases ended with each problem ({"run_error": 3}); {} when none did.
    problems = models.JSONField(default=dict)

    class Meta:
        db_table = "optimizations_runcandidate"
        ordering = ["idx"]
        constraints = [models.UniqueConstraint(fields=["run", "idx"], name="one_candidate_per_idx")]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.idx}"


class RunEvent(models.Model):
    """One event of the optimization: kind "iteration", "parent_selected",
    "reflection_skipped", "proposed", "accepted", "rejected", "valset", "front"
    (engines.progress), or the worker's own "claimed", "resumed", "paused", "ended";
    `data` holds its details."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    attempt = models.PositiveIntegerField(default=1)
    iteration = models.PositiveIntegerField(default=0)
    kind = models.CharField(max_length=20)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "optimizations_runevent"
        ordering = ["id"]
        indexes = [models.Index(fields=["run", "kind"], name="optimizatio_run_id_3f5b04_idx")]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.kind}"
