"""Reads of alignments. To anyone but its owner an alignment does not exist (404)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.shortcuts import get_object_or_404

from alignment.models import Alignment
from runs.models import Run


def get_alignment_for_run(user: AbstractBaseUser, run: Run) -> Alignment:
    """The user's alignment whose draft the run was submitted from, or 404."""
    return get_object_or_404(
        Alignment.objects.select_related("seed_version__metric"),
        draft__run=run,
        owner=user,
    )


def alignment_of_run(run: Run) -> Alignment | None:
    """The alignment the run belongs to, if any (its owner's: the run's page is theirs)."""
    if run.draft_id is None:
        return None
    return (
        Alignment.objects.select_related("seed_version__metric", "accepted_version")
        .filter(draft_id=run.draft_id, owner_id=run.owner_id)
        .first()
    )
