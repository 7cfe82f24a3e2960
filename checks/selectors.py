"""Reads of checks and reviews. Every view that touches one gets it through these."""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from checks.models import Check, FeedbackReview
from jobs import notify


def get_check_for_user(user: AbstractBaseUser, pk: int) -> Check:
    return get_object_or_404(
        Check.objects.select_related("metric_version__metric"), pk=pk, owner=user
    )


HISTORY_LENGTH = 20


def checks_for_metric(metric, limit: int = HISTORY_LENGTH) -> QuerySet[Check]:
    """The newest checks of a metrics.Metric's versions."""
    return Check.objects.filter(metric_version__metric=metric).select_related("metric_version")[
        :limit
    ]


def checks_for_version(version) -> QuerySet[Check]:
    """A metrics.MetricVersion's checks, newest first."""
    return Check.objects.filter(metric_version=version).order_by("-created_at")


@dataclass(frozen=True)
class History:
    """The playground's check history: the newest checks, and how many there are."""

    items: list
    total: int

    def __bool__(self) -> bool:
        return bool(self.items)

    @property
    def cut(self) -> bool:
        return self.total > len(self.items)


def history_of(metric) -> History:
    items = list(checks_for_metric(metric))
    total = len(items)
    if total == HISTORY_LENGTH:
        total = Check.objects.filter(metric_version__metric=metric).count()
    return History(items, total)


def get_review_for_user(user: AbstractBaseUser, check_pk: int, pk: int) -> FeedbackReview:
    return get_object_or_404(
        FeedbackReview, pk=pk, contract_check__pk=check_pk, contract_check__owner=user
    )


def latest_reviews(check: Check) -> dict[int, FeedbackReview]:
    """The newest review of each case of `check`."""
    latest: dict[int, FeedbackReview] = {}
    for review in check.reviews.order_by("created_at"):
        latest[review.case_index] = review
    return latest


def wait_for_change(check: Check, since: str, seconds: float) -> Check:
    """The check as soon as it differs from what the page showed (`since`, its
    live_token then) or is final, or as it is after `seconds`. The worker announces each
    write (jobs.notify), so the answer leaves the moment the row changes."""
    deadline = time.monotonic() + seconds
    with notify.Waiter(check.pk) as waiter:
        while True:
            # Subscribed before this read: a change right after it is not missed.
            try:
                check.refresh_from_db()
            except ObjectDoesNotExist:  # deleted while its panel waited
                raise Http404 from None
            left = deadline - time.monotonic()
            if check.is_final or check.live_token != since or left <= 0:
                return check
            waiter.wait(left)
