"""Personal API tokens: what a script or a CI job signs in with."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class ApiToken(models.Model):
    """A token's hash and what it may do. The token itself is shown once, when it is
    made, and never stored: a leaked database holds nothing a request could use."""

    class Scope(models.TextChoices):
        READ = "read", _("Read")
        WRITE = "write", _("Read and write")

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(_("name"), max_length=80)
    # The first characters after "skn_", shown in the list so a user can tell tokens apart.
    prefix = models.CharField(max_length=12)
    # SHA-256 of the whole token, hex: a token is 256 random bits, so a fast hash is safe.
    digest = models.CharField(max_length=64, unique=True)
    scope = models.CharField(_("scope"), max_length=8, choices=Scope.choices)
    expires_at = models.DateTimeField(_("expires"), null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and not self.is_expired

    @property
    def may_write(self) -> bool:
        return self.scope == self.Scope.WRITE
