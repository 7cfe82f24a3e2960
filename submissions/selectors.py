"""Reads. Every view that touches a draft gets it through one of these."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from submissions.models import Draft


def get_draft_for_user(user: AbstractBaseUser, pk: int) -> Draft:
    """The user's draft, or 404: another user's draft does not exist for them."""
    return get_object_or_404(
        Draft.objects.select_related("dataset", "contract_check", "metric_version__metric")
        # Every row is read only where it is needed, not for each page.
        .defer("dataset__raw", "dataset__rows", "dataset__row_numbers"),
        pk=pk,
        owner=user,
    )


def open_drafts_for_user(user: AbstractBaseUser) -> QuerySet[Draft]:
    return Draft.objects.filter(owner=user, run__isnull=True)
