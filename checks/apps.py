from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ChecksConfig(AppConfig):
    name = "checks"
    verbose_name = _("Contract checks")
    default_auto_field = "django.db.models.BigAutoField"
