from __future__ import annotations

from django.apps import AppConfig


class MetricsHistoryConfig(AppConfig):
    """The migrations' history of the workbench's first tables, under the label they were
    made with (metrics_app): the tables the metrics, checks, jobs and skynet_web apps own
    now. Installed so that a database of any age still migrates; it has no models."""

    name = "metrics.history"
    label = "metrics_app"
    verbose_name = "Migration history of the metric workbench's first tables"
    default_auto_field = "django.db.models.BigAutoField"
