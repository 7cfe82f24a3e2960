"""Per-user rate limits: a token bucket per (user, kind), taken under a row lock."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection

from jobs import limits
from jobs.models import RateBucket


@pytest.mark.django_db(transaction=True)
def test_asked_at_once_a_bucket_lets_exactly_its_rate_through(owner):
    results: list[bool] = []
    start = threading.Barrier(8)

    def ask() -> None:
        try:
            start.wait()
            results.append(limits.take(owner, limits.CHECK, per_minute=5))
        finally:
            connection.close()

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(results) == [False] * 3 + [True] * 5


@pytest.mark.django_db
def test_a_bucket_refills_at_its_rate_and_kinds_are_apart(owner):
    assert [limits.take(owner, limits.REVIEW, per_minute=2) for _ in range(3)] == [
        True,
        True,
        False,
    ]
    assert limits.take(owner, limits.CHECK, per_minute=2)  # another kind, another bucket
    bucket = RateBucket.objects.get(owner=owner, kind=limits.REVIEW)
    # 30 seconds later, at 2 a minute: one more.
    RateBucket.objects.filter(pk=bucket.pk).update(
        refilled_at=bucket.refilled_at - timedelta(seconds=30)
    )
    assert limits.take(owner, limits.REVIEW, per_minute=2)
    assert not limits.take(owner, limits.REVIEW, per_minute=2)
