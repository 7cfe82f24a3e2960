"""Writes of labelling: making one (its cases copied once), a person's label, an
invitation. Views and the API call these; the version is labelling.versions."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from evaluations.models import Evaluation
from labelling import cases
from labelling.models import Invitation, Label, Labelling
from submissions import storage
from submissions.models import Dataset

NOTE_MAX = 2000


class LabelRefused(Exception):
    """A label the labelling does not take; `code`: no_case, bad_value, no_label."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@transaction.atomic
def labelling_create(
    *,
    owner: AbstractBaseUser,
    dataset: Dataset,
    evaluation: Evaluation | None = None,
    kind: str = Labelling.Kind.PASS_FAIL,
    scale: int = 2,
    input_columns: list[str],
    output_column: str = "",
    expected_column: str = "",
) -> Labelling:
    """A labelling of the dataset's rows (those the evaluation scored, when made from one),
    its cases copied into its chunks (labelling.cases)."""
    labelling = Labelling.objects.create(
        owner=owner,
        dataset=dataset,
        evaluation=evaluation,
        kind=kind,
        scale=scale if kind == Labelling.Kind.SCALE else 2,
        input_columns=list(input_columns),
        output_column=output_column,
        expected_column=expected_column,
    )
    labelling.total = cases.fill(labelling)
    # Its copy of the cases is counted as a dataset is: past the quota, QuotaExceeded
    # undoes all of it (this is one transaction).
    storage.admit(owner, labelling.stored_bytes)
    labelling.save(update_fields=["total", "stored_bytes"])
    return labelling


def _value(labelling: Labelling, value: object) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise LabelRefused("bad_value") from None
    if number not in labelling.values:
        raise LabelRefused("bad_value")
    return number


def label_save(
    labelling: Labelling,
    labeller: AbstractBaseUser,
    case: cases.Case | None,
    *,
    value: object = None,
    note: str | None = None,
) -> Label:
    """Save `labeller`'s label of the case: its value, and its note when given (None keeps
    the note it had). A note alone changes a label already given; a case not labelled yet
    needs a value (LabelRefused "no_label")."""
    if case is None:
        raise LabelRefused("no_case")
    note = None if note is None else note[:NOTE_MAX]
    if value is None or value == "":
        updated = Label.objects.filter(labelling=labelling, labeller=labeller, row=case.row)
        label = updated.first()
        if label is None:
            raise LabelRefused("no_label")
        if note is not None and note != label.note:
            label.note = note
            label.save(update_fields=["note", "updated_at"])
        return label
    number = _value(labelling, value)
    defaults = {"value": number, "position": case.position}
    if note is not None:
        defaults["note"] = note
    label, _created = Label.objects.update_or_create(
        labelling=labelling, labeller=labeller, row=case.row, defaults=defaults
    )
    return label


class InviteRefused(Exception):
    """An invitation the labelling does not take; `code`: no_user, yourself, already."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def invitation_create(labelling: Labelling, invitee: AbstractBaseUser | None) -> Invitation:
    if invitee is None:
        raise InviteRefused("no_user")
    if invitee.pk == labelling.owner_id:
        raise InviteRefused("yourself")
    try:
        with transaction.atomic():
            return Invitation.objects.create(labelling=labelling, invitee=invitee)
    except IntegrityError:
        raise InviteRefused("already") from None
