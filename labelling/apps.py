from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LabellingConfig(AppConfig):
    name = "labelling"
    verbose_name = _("Labelling")
    default_auto_field = "django.db.models.BigAutoField"
