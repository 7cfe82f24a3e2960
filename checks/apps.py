from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ChecksConfig(AppConfig):
    name = "checks"
    verbose_name = _("Contract checks")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The workers' sweeps (jobs.sweeps) end checks and reviews lost with their worker.
        from checks import sweeps
        from jobs.sweeps import register

        register(sweeps.sweep_once)
