from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvaluationsConfig(AppConfig):
    name = "evaluations"
    verbose_name = _("Evaluations")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The workers' sweeps (jobs.sweeps) end evaluations lost with their worker too.
        from evaluations import sweeps
        from jobs.sweeps import register

        register(sweeps.sweep_once)
