"""How many sign-ups one client address may attempt: the per-user check limits mean
little if one address can make accounts at will.

django-ratelimit counts in the shared cache (Redis, settings.CACHES["ratelimit"]), so the
count holds across every web process. Every sign-up POST counts, valid or not: the count
is one atomic increment made before the form is looked at, so parallel requests cannot
all slip past it. The address is REMOTE_ADDR (an IPv6 address counts by its /64).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django_ratelimit.core import get_usage
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Refusal:
    """Why a sign-up POST is refused, worded for the reader: an HTTP status, a message,
    and for a limit, the seconds until the address may try again."""

    status: int
    message: str
    retry_after_s: int | None = None


def signup_refusal(request: HttpRequest) -> Refusal | None:
    """Count this sign-up POST against its address; a Refusal when it is one too many,
    or when the count cannot be kept (refused rather than let through uncounted)."""
    try:
        usage = get_usage(
            request,
            group="signup",
            key="ip",
            rate=f"{settings.SIGNUP_RATE_PER_HOUR}/h",
            method="POST",
            increment=True,
        )
    except (RedisError, OSError, ImproperlyConfigured):
        # ImproperlyConfigured: no REMOTE_ADDR, as behind a proxy on a unix socket.
        logger.exception("sign-up refused: its rate limit could not be counted")
        return _unavailable()
    if usage is None or not usage["should_limit"]:
        return None
    if usage["time_left"] < 0:  # django-ratelimit's answer when the cache kept no count
        logger.error("sign-up refused: the rate-limit cache kept no count")
        return _unavailable()
    minutes = max(1, math.ceil(usage["time_left"] / 60))
    message = ngettext(
        "Too many sign-ups from your address: at most %(limit)s an hour. "
        "Try again in %(minutes)s minute.",
        "Too many sign-ups from your address: at most %(limit)s an hour. "
        "Try again in %(minutes)s minutes.",
        minutes,
    ) % {"limit": usage["limit"], "minutes": minutes}
    return Refusal(status=429, message=message, retry_after_s=max(1, usage["time_left"]))


def _unavailable() -> Refusal:
    return Refusal(
        status=503, message=_("Sign-up is unavailable right now. Try again in a few minutes.")
    )
