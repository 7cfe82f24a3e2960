"""Who a request is: its bearer token, checked for revocation, expiry and scope, and
counted against the token's allowance of requests a minute.

A request that reads (GET, HEAD, OPTIONS) needs a read token; any other needs a token
that may read and write. Requests are counted per token by django-ratelimit in the shared
Redis cache, as sign-ups are; requests with a token that is not known are counted per
client address, so guessing tokens is as slow as guessing passwords. A count that cannot
be kept refuses the request (503) rather than let it through uncounted.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django.utils.formats import date_format
from django_ratelimit import ALL
from django_ratelimit.core import get_usage
from ninja.security import HttpBearer
from redis.exceptions import RedisError

from api import tokens
from api.errors import ApiError
from api.models import ApiToken

log = logging.getLogger(__name__)

READS = frozenset({"GET", "HEAD", "OPTIONS"})


def _over(request: HttpRequest, group: str, key, per_minute: int) -> bool:
    try:
        usage = get_usage(
            request, group=group, key=key, rate=f"{per_minute}/m", method=ALL, increment=True
        )
    except (RedisError, OSError, ImproperlyConfigured):
        log.exception("API request refused: its rate limit could not be counted")
        raise ApiError(503, "rate_unavailable") from None
    if usage is None:
        return False
    if usage["time_left"] < 0:
        raise ApiError(503, "rate_unavailable")
    return usage["should_limit"]


class TokenAuth(HttpBearer):
    """ninja's bearer scheme (the OpenAPI schema names it), with our checks."""

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken:
        row = tokens.token_find(token.strip())
        if row is None or not row.owner.is_active:
            if _over(request, "api-unknown", "ip", settings.API_UNKNOWN_TOKEN_RATE_PER_MINUTE):
                raise ApiError(429, "auth_rate_limited", headers={"Retry-After": "60"})
            raise ApiError(401, "token_invalid", headers={"WWW-Authenticate": "Bearer"})
        if row.revoked_at is not None:
            raise ApiError(401, "token_revoked", headers={"WWW-Authenticate": "Bearer"})
        if row.is_expired:
            raise ApiError(
                401,
                "token_expired",
                params={"date": date_format(row.expires_at, "DATE_FORMAT")},
                headers={"WWW-Authenticate": "Bearer"},
            )
        if request.method not in READS and not row.may_write:
            raise ApiError(403, "read_only_token")
        limit = settings.API_RATE_PER_MINUTE
        if _over(request, "api", lambda group, request: f"token-{row.pk}", limit):
            raise ApiError(
                429, "rate_limited", params={"limit": limit}, headers={"Retry-After": "60"}
            )
        tokens.token_used(row)
        request.user = row.owner
        return row
