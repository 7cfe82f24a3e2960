from __future__ import annotations

from django.apps import AppConfig


class MetricsAppConfig(AppConfig):
    """The migrations' history of the tables the metrics, checks and skynet_web apps own."""

    name = "metrics_app"
    verbose_name = "Migration history of the metric workbench's first tables"
    default_auto_field = "django.db.models.BigAutoField"
