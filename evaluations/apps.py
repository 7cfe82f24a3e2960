from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvaluationsConfig(AppConfig):
    name = "evaluations"
    verbose_name = _("Evaluations")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The workers' sweeps (checks.maintenance) end evaluations lost with their worker too.
        from checks import maintenance
        from evaluations import sweeps

        maintenance.register_sweep(sweeps.sweep_once)
