from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MetricsAppConfig(AppConfig):
    name = "metrics_app"
    verbose_name = _("Metric workbench")
    default_auto_field = "django.db.models.BigAutoField"
