from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class OptimizationsConfig(AppConfig):
    name = "optimizations"
    verbose_name = _("Optimization runs")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The workers' sweeps (checks.maintenance) pick up runs lost with their worker too.
        from checks import maintenance
        from optimizations import sweeps

        maintenance.register_sweep(sweeps.sweep_once)
