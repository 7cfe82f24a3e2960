"""Reads of metrics and versions. Every view that touches one gets it through these."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import OuterRef, QuerySet, Subquery
from django.shortcuts import get_object_or_404

from checks.models import Check
from metrics.models import Metric, MetricVersion


def metrics_for_user(user: AbstractBaseUser) -> QuerySet[Metric]:
    """The user's metrics, each with `latest_check_status`: the status of the newest
    check of any of its versions, or None before the first."""
    latest = Check.objects.filter(metric_version__metric=OuterRef("pk")).order_by(
        "-created_at", "-pk"
    )
    return Metric.objects.filter(owner=user).annotate(
        latest_check_status=Subquery(latest.values("status")[:1])
    )


def get_metric_for_user(user: AbstractBaseUser, pk: int) -> Metric:
    """The user's metric, or 404: another user's metric does not exist for them."""
    return get_object_or_404(Metric, pk=pk, owner=user)


def get_version_for_user(user: AbstractBaseUser, metric_pk: int, number: int) -> MetricVersion:
    return get_object_or_404(
        MetricVersion.objects.select_related("metric"),
        metric__pk=metric_pk,
        metric__owner=user,
        number=number,
    )


def versions_with_verdicts(metric: Metric) -> QuerySet[MetricVersion]:
    """The metric's versions, newest first, each with `verdict`: the status of its
    latest check (None when it has none)."""
    from checks.models import Check

    latest = Check.objects.filter(metric_version=OuterRef("pk")).order_by("-created_at")
    return metric.versions.annotate(verdict=Subquery(latest.values("status")[:1]))
