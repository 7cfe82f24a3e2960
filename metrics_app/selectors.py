"""Reads. Every view that touches an owned object gets it through one of these."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from metrics_app.models import Check, Metric


def metrics_for_user(user: AbstractBaseUser) -> QuerySet[Metric]:
    return Metric.objects.filter(owner=user)


def get_metric_for_user(user: AbstractBaseUser, pk: int) -> Metric:
    """The user's metric, or 404: another user's metric does not exist for them."""
    return get_object_or_404(Metric, pk=pk, owner=user)


def get_check_for_user(user: AbstractBaseUser, pk: int) -> Check:
    return get_object_or_404(Check, pk=pk, owner=user)
