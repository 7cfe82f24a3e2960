"""Making, finding and revoking personal API tokens."""

from __future__ import annotations

import datetime
import hashlib
import secrets

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from api.models import ApiToken

PREFIX = "skn_"
# How many characters after the prefix the token list shows.
SHOWN = 8


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_create(
    *, owner: AbstractBaseUser, name: str, scope: str, days: int | None
) -> tuple[ApiToken, str]:
    """A new token for `owner`: the row, and the token itself, which only this call sees."""
    token = PREFIX + secrets.token_urlsafe(32)
    expires_at = timezone.now() + datetime.timedelta(days=days) if days else None
    row = ApiToken.objects.create(
        owner=owner,
        name=name,
        prefix=token[len(PREFIX) : len(PREFIX) + SHOWN],
        digest=digest(token),
        scope=scope,
        expires_at=expires_at,
    )
    return row, token


def token_find(token: str) -> ApiToken | None:
    """The row of `token`, revoked and expired ones too (the caller says which), or None."""
    if not token.startswith(PREFIX) or len(token) > 100:
        return None
    return ApiToken.objects.select_related("owner").filter(digest=digest(token)).first()


def token_used(row: ApiToken) -> None:
    """Note the time of use, at most once a minute a token (a write per request would
    serialize every API request on SQLite)."""
    now = timezone.now()
    if row.last_used_at is None or now - row.last_used_at > datetime.timedelta(minutes=1):
        ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
        row.last_used_at = now


def token_revoke(row: ApiToken) -> None:
    if row.revoked_at is None:
        ApiToken.objects.filter(pk=row.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )


def tokens_for_user(user: AbstractBaseUser):
    return ApiToken.objects.filter(owner=user)
