from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AlignmentConfig(AppConfig):
    name = "alignment"
    verbose_name = _("Judge alignment")
    default_auto_field = "django.db.models.BigAutoField"
