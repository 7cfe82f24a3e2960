"""A user's metrics and their immutable numbered versions."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Metric(models.Model):
    """A user's metric.py. Its text lives in immutable numbered versions."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="metrics"
    )
    name = models.CharField(_("name"), max_length=120)
    # The three sample cases the contract check runs, as the cases panel edits them.
    cases = models.JSONField(default=list, blank=True)
    timeout_s = models.PositiveIntegerField(_("time limit (seconds)"), default=60)
    # Catalogue ids; an empty metric model means "same as the reflection model".
    reflection_model = models.CharField(
        _("reflection model"), max_length=120, blank=True, default=""
    )
    metric_model = models.CharField(_("metric model"), max_length=120, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "metrics_app_metric"  # created by metrics_app's migrations, kept as is
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.name

    @property
    def latest_version(self) -> MetricVersion | None:
        return self.versions.order_by("-number").first()


class MetricVersion(models.Model):
    metric = models.ForeignKey(Metric, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    source = models.TextField()
    # The helper modules beside metric.py that it imports, {path: text} (contract.files);
    # None or {} when metric.py is the whole metric. Part of the version: a changed set of
    # files makes a new version, as a changed source does.
    files = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "metrics_app_metricversion"
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(fields=["metric", "number"], name="unique_version_number")
        ]

    def __str__(self) -> str:
        return f"{self.metric} v{self.number}"

    @property
    def helper_files(self) -> dict[str, str]:
        """The helper files, {} for none, in path order."""
        return dict(sorted((self.files or {}).items()))


class VersionLabel(models.Model):
    """A name a metric's version carries (a commit, a branch, "prod"), so a CI job can
    compare with "the version main was at" (`skynet evaluate --baseline main`). A name
    points at one version of its metric: saving another version with it moves it there."""

    metric = models.ForeignKey(Metric, on_delete=models.CASCADE, related_name="labels")
    version = models.ForeignKey(MetricVersion, on_delete=models.CASCADE, related_name="labels")
    name = models.CharField(max_length=100)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["metric", "name"], name="unique_label_per_metric")
        ]

    def __str__(self) -> str:
        return f"{self.name} → {self.version}"


class Conversion(models.Model):
    """What Convert made of one text a user sent it, kept by the text's SHA-256: the
    convert page of a saved version and an import's review then its "Create" read it
    here instead of converting again. `result` is the Conversion's to_dict(), or
    {"error": {"code", "line", "params"}} when the text could not be converted."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversions"
    )
    digest = models.CharField(max_length=64)
    result = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    # A user's conversions kept; the oldest go when one more is made.
    KEPT = 200

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "digest"], name="unique_conversion_per_text")
        ]

    def __str__(self) -> str:
        return f"{self.owner} {self.digest[:12]}"
