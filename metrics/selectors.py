"""Reads of metrics and versions. Every view that touches one gets it through these."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from metrics.models import Metric, MetricVersion


def metrics_for_user(user: AbstractBaseUser) -> QuerySet[Metric]:
    return Metric.objects.filter(owner=user)


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
