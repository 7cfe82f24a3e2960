"""How far two people agree on a labelling's rows: the ceiling any metric can reach.

Cohen's kappa with a 95% bootstrap interval, the share of equal labels and, on a 1..N
scale, the quadratic-weighted kappa, over the rows both labelled (contract.agreement).
A thousand resamples take a while on many rows, so a pair's figures are kept in the cache
under the state of their labels (how many, the latest change): a new label is a new key."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db.models import Count, Max

from contract.agreement import kappa_between
from labelling import selectors
from labelling.models import Label, Labelling

RESAMPLES = 1000


def _labels(labelling: Labelling, labeller_id: int) -> dict[int, float]:
    rows = Label.objects.filter(labelling=labelling, labeller_id=labeller_id)
    return dict(rows.values_list("row", "value"))


def _state(labelling: Labelling, ids: tuple[int, int]) -> str:
    found = Label.objects.filter(labelling=labelling, labeller_id__in=ids).aggregate(
        n=Count("pk"), latest=Max("updated_at")
    )
    latest = found["latest"].timestamp() if found["latest"] else 0
    return f"labelling-agreement:{labelling.pk}:{ids[0]}:{ids[1]}:{found['n']}:{latest}"


def _word(value: float) -> str:
    return "pass" if value >= 1 else "fail"


def between(labelling: Labelling, first_id: int, second_id: int) -> dict | None:
    """kappa_between's figures for the two labellers over the rows both labelled; None
    while they share no row."""
    key = _state(labelling, (first_id, second_id))
    found = cache.get(key)
    if found is not None:
        return found
    a, b = _labels(labelling, first_id), _labels(labelling, second_id)
    both = sorted(a.keys() & b.keys())
    if not both:
        return None
    # Pass/fail as words: unordered labels, so no weighted kappa; a scale as numbers.
    as_label = _word if labelling.kind == Labelling.Kind.PASS_FAIL else int
    figures = kappa_between(
        [as_label(a[row]) for row in both],
        [as_label(b[row]) for row in both],
        resamples=RESAMPLES,
        seed=0,
    )
    cache.set(key, figures, 24 * 3600)
    return figures


def pairs(labelling: Labelling, viewer: AbstractBaseUser) -> list[dict]:
    """The agreements the viewer sees: the owner's with each invitee (for an invitee, the
    one with the owner), each {"other": the other account, "figures": between()}."""
    found = []
    for invitation in selectors.invitations(labelling):
        if viewer.pk not in (labelling.owner_id, invitation.invitee_id):
            continue
        figures = between(labelling, labelling.owner_id, invitation.invitee_id)
        if figures is None:
            continue
        other = invitation.invitee if viewer.pk == labelling.owner_id else labelling.owner
        found.append({"other": other, "figures": figures})
    return found
