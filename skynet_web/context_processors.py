"""Template context every page needs."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def sandbox_mode(request: HttpRequest) -> dict:
    """Whether metrics run without the namespace sandbox here: every page then says so."""
    return {"sandbox_unconfined": settings.SANDBOX_MODE == "unconfined"}
