from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DocsSiteConfig(AppConfig):
    name = "docs_site"
    verbose_name = _("Documentation")
