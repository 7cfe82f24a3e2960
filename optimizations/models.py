"""What a run's optimization found, beside its row (submissions.Run): each candidate gepa
accepted, and a log of the events that matter."""

from __future__ import annotations

from django.db import models

from submissions.models import Run


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
        ordering = ["idx"]
        constraints = [models.UniqueConstraint(fields=["run", "idx"], name="one_candidate_per_idx")]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.idx}"


class RunEvent(models.Model):
    """One event of the optimization: kind "iteration", "parent_selected",
    "reflection_skipped", "proposed", "accepted", "rejected", "valset", "front"
    (optimizer.progress), or the worker's own "claimed", "resumed", "paused", "ended";
    `data` holds its details."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    attempt = models.PositiveIntegerField(default=1)
    iteration = models.PositiveIntegerField(default=0)
    kind = models.CharField(max_length=20)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["run", "kind"])]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.kind}"
