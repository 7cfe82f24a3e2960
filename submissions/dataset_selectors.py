"""Reads of the datasets page: a user's datasets with what uses each, and one of them.

Evaluations and runs are asked through the dataset's reverse relations (the wizard is below
those apps and imports neither)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce, Length
from django.shortcuts import get_object_or_404

from submissions.models import Dataset, Draft

# Never read for a list: the file and its rows are most of a dataset's bytes.
HEAVY = ("raw", "rows", "row_numbers", "preview")
# How many of each use the delete page names.
NAMED = 20


def _model_of(relation: str):
    return Dataset._meta.get_field(relation).related_model


def _count(queryset: QuerySet) -> Coalesce:
    """How many rows of `queryset` point at the outer dataset (one subquery, so counting
    evaluations and runs together multiplies neither)."""
    counted = (
        queryset.filter(dataset=OuterRef("pk"))
        .order_by()
        .values("dataset")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def _open_drafts() -> QuerySet[Draft]:
    # A submitted draft's dataset is its run's, counted as the run.
    return Draft.objects.filter(run__isnull=True)


def datasets_with_uses(user: AbstractBaseUser) -> QuerySet[Dataset]:
    """The user's datasets, newest first, each with its file's size and the counts of the
    evaluations, runs and open drafts that use it."""
    return (
        Dataset.objects.filter(owner=user)
        .defer(*HEAVY)
        .annotate(
            file_size=Length("raw"),
            evaluation_count=_count(_model_of("evaluations").objects.all()),
            run_count=_count(_model_of("runs").objects.all()),
            draft_count=_count(_open_drafts()),
        )
        .order_by("-created_at", "-pk")
    )


def get_dataset_for_user(user: AbstractBaseUser, pk: int) -> Dataset:
    """The user's dataset with its uses counted, or 404: another user's does not exist."""
    return get_object_or_404(datasets_with_uses(user), pk=pk)


def uses_of(dataset: Dataset) -> dict[str, list]:
    """The first NAMED evaluations, runs and open drafts that use the dataset, newest first."""
    evaluations = _model_of("evaluations").objects.filter(dataset=dataset).order_by("-pk")
    runs = _model_of("runs").objects.filter(dataset=dataset).order_by("-pk")
    drafts = _open_drafts().filter(dataset=dataset).order_by("-updated_at")
    return {
        "evaluations": list(evaluations.only("pk", "created_at")[:NAMED]),
        "runs": list(runs.only("pk", "name")[:NAMED]),
        "drafts": list(drafts.only("pk", "name")[:NAMED]),
    }
