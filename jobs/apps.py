from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = _("Jobs")
    default_auto_field = "django.db.models.BigAutoField"
