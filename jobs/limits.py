"""Per-user rate limits: a token bucket per (user, kind), taken under a row lock.

Counting the rows made in the last minute let two requests at once both pass the last
place, and counted only what leaves a row (a feedback review leaves none of the kind it
was counted by). A bucket holds `per_minute` tokens, refills at `per_minute` a minute,
and one request takes one, in one transaction that holds the row: on PostgreSQL with
SELECT ... FOR UPDATE, on SQLite by writing to the row first (SQLite then holds the
database's write lock until the transaction ends).
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from jobs.models import RateBucket

CHECK = "check"
REVIEW = "review"
CONVERT = "convert"
CONVERTING = "converting"  # the lease: one conversion at a time per user


def take(owner: AbstractBaseUser, kind: str, *, per_minute: int) -> bool:
    """Take one token from `owner`'s bucket of `kind`; False when it is empty."""
    _ensure(owner, kind, per_minute)
    now = timezone.now()
    with transaction.atomic():
        rows = RateBucket.objects.filter(owner=owner, kind=kind)
        rows.update(tokens=F("tokens"))  # takes the write lock on SQLite, before the read
        bucket = rows.select_for_update().get()
        elapsed = max(0.0, (now - bucket.refilled_at).total_seconds())
        tokens = min(float(per_minute), bucket.tokens + elapsed * per_minute / 60.0)
        allowed = tokens >= 1.0
        bucket.tokens = tokens - 1.0 if allowed else tokens
        bucket.refilled_at = now
        bucket.save(update_fields=["tokens", "refilled_at"])
    return allowed


def _ensure(owner: AbstractBaseUser, kind: str, per_minute: int) -> None:
    if RateBucket.objects.filter(owner=owner, kind=kind).exists():
        return
    try:
        with transaction.atomic():
            RateBucket.objects.create(
                owner=owner, kind=kind, tokens=float(per_minute), refilled_at=timezone.now()
            )
    except IntegrityError:
        pass  # another request made it first


def lease(owner: AbstractBaseUser, kind: str, *, seconds: float) -> bool:
    """Take `owner`'s lease of `kind` for `seconds`, or False while another holds it:
    one at a time per user, without a transaction held meanwhile. The bucket row of
    `kind` carries the lease's end in `refilled_at`; taking it is one conditional UPDATE.
    A holder that dies frees it when `seconds` have passed."""
    _ensure(owner, kind, 1)
    now = timezone.now()
    taken = RateBucket.objects.filter(owner=owner, kind=kind, refilled_at__lte=now).update(
        refilled_at=now + timedelta(seconds=seconds)
    )
    return taken == 1


def release(owner: AbstractBaseUser, kind: str) -> None:
    RateBucket.objects.filter(owner=owner, kind=kind).update(refilled_at=timezone.now())
