from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RunsConfig(AppConfig):
    name = "runs"
    verbose_name = _("Optimization runs")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The workers' sweeps (jobs.sweeps) pick up runs lost with their worker too.
        from jobs.sweeps import register
        from runs import sweeps

        register(sweeps.sweep_once)
