"""Writes on a user's own settings."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from skynet_web.models import Profile


def profile_set_language(user: AbstractBaseUser, language: str) -> None:
    """Remember the interface language `user` chose last (one of settings.LANGUAGES)."""
    Profile.objects.update_or_create(user=user, defaults={"language": language})
