"""Reads of labellings: the one way to get one (its owner's, or shared with the user),
the lists, a person's labels and where they stand."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, F, Min, OuterRef, QuerySet
from django.http import Http404

from evaluations.models import EvaluationCase
from labelling.models import Invitation, Label, Labelling


def _labellings() -> QuerySet[Labelling]:
    # The dataset's name only: its row holds the whole file and every parsed row.
    return Labelling.objects.select_related("owner").annotate(dataset_name=F("dataset__filename"))


def get_labelling_for_user(user: AbstractBaseUser, pk: object) -> Labelling:
    """The labelling when `user` owns it or was invited to it, else 404: to anyone else
    it does not exist. `labelling.is_owner` says which."""
    try:
        number = int(str(pk))
    except ValueError:
        raise Http404 from None
    invited = Invitation.objects.filter(labelling=OuterRef("pk"), invitee=user)
    labelling = _labellings().filter(pk=number).annotate(invited=Exists(invited)).first()
    if labelling is None or not (labelling.owner_id == user.pk or labelling.invited):
        raise Http404
    labelling.is_owner = labelling.owner_id == user.pk
    return labelling


def get_owned_labelling(user: AbstractBaseUser, pk: object) -> Labelling:
    """The labelling when `user` owns it, else 404: inviting and making versions are the
    owner's, and an invitee has no such pages."""
    labelling = get_labelling_for_user(user, pk)
    if not labelling.is_owner:
        raise Http404
    return labelling


def owned_by(user: AbstractBaseUser) -> QuerySet[Labelling]:
    return _labellings().filter(owner=user)


def shared_with(user: AbstractBaseUser) -> QuerySet[Labelling]:
    return _labellings().filter(invitations__invitee=user)


def labelled_count(labelling: Labelling, labeller: AbstractBaseUser) -> int:
    return Label.objects.filter(labelling=labelling, labeller=labeller).count()


def first_unlabelled(labelling: Labelling, labeller: AbstractBaseUser) -> int:
    """The position of the first case `labeller` has not labelled (0 when none is left:
    the page then opens at the first case). One query: the first labelled position whose
    next one is not labelled, on the (labelling, labeller, position) index."""
    mine = Label.objects.filter(labelling=labelling, labeller=labeller)
    if not mine.filter(position=0).exists():
        return 0
    after = mine.filter(position=OuterRef("position") + 1)
    last = mine.exclude(Exists(after)).aggregate(first=Min("position"))["first"]
    gap = (last or 0) + 1
    return gap if gap < labelling.total else 0


def label_of(labelling: Labelling, labeller: AbstractBaseUser, row: int) -> Label | None:
    return Label.objects.filter(labelling=labelling, labeller=labeller, row=row).first()


def others_labels(labelling: Labelling, viewer: AbstractBaseUser, row: int) -> list[Label]:
    """The labels of the row that `viewer` may see once they have labelled it: everyone
    else's for the owner, the owner's for an invitee."""
    found = Label.objects.filter(labelling=labelling, row=row).exclude(labeller=viewer)
    if labelling.owner_id != viewer.pk:
        found = found.filter(labeller_id=labelling.owner_id)
    return list(found.select_related("labeller").order_by("labeller__username"))


def metric_case(labelling: Labelling, index: int | None) -> EvaluationCase | None:
    """The evaluation's case of a row (its score, status and feedback), or None."""
    if labelling.evaluation_id is None or index is None:
        return None
    return (
        EvaluationCase.objects.filter(evaluation_id=labelling.evaluation_id, index=index)
        .only("status", "problem", "score", "feedback", "index")
        .first()
    )


def invitations(labelling: Labelling) -> list[Invitation]:
    return list(labelling.invitations.select_related("invitee"))


def labellers(labelling: Labelling) -> list[AbstractBaseUser]:
    """The owner, then each invitee."""
    return [labelling.owner, *(invitation.invitee for invitation in invitations(labelling))]
