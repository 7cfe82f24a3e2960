"""The project's own rows: each user's settings."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Profile(models.Model):
    """Per-user settings; today, the interface language the user chose last."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile"
    )
    language = models.CharField(_("language"), max_length=8, blank=True, default="")

    class Meta:
        db_table = "metrics_app_profile"  # created by metrics_app's migrations, kept as is

    def __str__(self) -> str:
        return f"profile of {self.user}"
