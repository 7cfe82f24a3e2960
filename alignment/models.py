"""A judge metric aligned with people: an optimization run of its prompt against the
human labels of one of its evaluations, and what came of it.

The Alignment row ties together what starting one made (a dataset version holding the
labelled rows, a wizard draft whose run rewrites the prompt) and what accepting its best
prompt made (a new version of the metric, and an evaluation comparing it with the seed
version on the rows the run never saw). It keeps how the evaluation read its rows
(`settings`), so accepting needs nothing of the evaluation, which may be gone by then.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Alignment(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="alignments"
    )
    # The evaluation whose human labels the judge is aligned with.
    evaluation = models.ForeignKey(
        "evaluations.Evaluation",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="alignments",
    )
    # The judge as it was: the version whose prompt the run starts from, and the name of
    # that prompt's constant in its source.
    seed_version = models.ForeignKey(
        "metrics.MetricVersion", on_delete=models.CASCADE, related_name="alignments"
    )
    constant = models.CharField(max_length=200)
    # The wizard draft of the run (one alignment a draft; the run points back at the draft).
    draft = models.OneToOneField(
        "submissions.Draft", on_delete=models.CASCADE, related_name="alignment"
    )
    # The labelled rows as a new version of the evaluation's dataset.
    dataset = models.ForeignKey(
        "submissions.Dataset",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="alignments",
    )
    # How the rows are read, as the evaluation read them: {"roles", "column_types",
    # "recorded_column", "human", "ratios", "seed"} (alignment.plans.Plan.settings).
    settings = models.JSONField(default=dict)
    # Once its best prompt is accepted: the new version, and the evaluation comparing it
    # with the seed version on the held-out rows.
    accepted_version = models.ForeignKey(
        "metrics.MetricVersion",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    comparison = models.ForeignKey(
        "evaluations.Evaluation",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    accepted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"alignment {self.pk} of {self.constant}"
