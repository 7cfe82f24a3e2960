"""The labelling pages' forms: starting one (kind, scale, the columns' roles), a label,
an invitation. Their errors are the reader's words; the services' refusals are worded in
labelling.words."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _

from evaluations.models import Evaluation
from evaluations.start import guess_recorded_column
from labelling.models import Labelling
from labelling.services import NOTE_MAX
from submissions.datasets import guess_roles

SCALES = [(n, str(n)) for n in range(2, 6)]
# Columns that hold a person's judgement already (the dataset roles human_score,
# human_label, human_note): never shown, or the label would be read off the page.
HUMAN_PREFIX = "human_"


def default_columns(columns: list[str], evaluation: Evaluation | None = None) -> dict:
    """The columns shown as input, recorded output and expected: the evaluation's roles and
    recorded column when made from one, else guessed from the columns' names."""
    if evaluation is not None:
        roles = evaluation.roles or {}
        output = evaluation.recorded_column
    else:
        output = guess_recorded_column(columns)
        roles = guess_roles(columns)
    expected = next((c for c in columns if roles.get(c) == "output" and c != output), "")
    inputs = [
        c
        for c in columns
        if roles.get(c) == "input" and c != output and not c.casefold().startswith(HUMAN_PREFIX)
    ]
    return {"input_columns": inputs, "output_column": output, "expected_column": expected}


class StartForm(forms.Form):
    kind = forms.ChoiceField(
        label=_("What a label is"),
        choices=Labelling.Kind.choices,
        initial=Labelling.Kind.PASS_FAIL,
        widget=forms.RadioSelect,
    )
    scale = forms.TypedChoiceField(
        label=_("Scale size"),
        choices=SCALES,
        coerce=int,
        initial=5,
        help_text=_("For a scale: labels from 1 to this number, each with its key."),
    )
    input_columns = forms.MultipleChoiceField(
        label=_("Input columns"), required=False, widget=forms.CheckboxSelectMultiple
    )
    output_column = forms.ChoiceField(label=_("Recorded output"), required=False)
    expected_column = forms.ChoiceField(label=_("Expected value"), required=False)

    def __init__(self, *args, columns: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        named = [(c, c) for c in columns]
        none = [("", _("No column"))]
        self.fields["input_columns"].choices = named
        self.fields["output_column"].choices = none + named
        self.fields["expected_column"].choices = none + named

    def clean(self):
        cleaned = super().clean()
        shown = cleaned.get("input_columns") or []
        if not shown and not cleaned.get("output_column"):
            raise forms.ValidationError(
                _(
                    "Choose at least one input column or the recorded output: a case must show something to label."
                ),
                code="nothing_shown",
            )
        return cleaned


class LabelForm(forms.Form):
    """A label (its value, or none to save the note alone) and its note."""

    value = forms.ChoiceField(required=False)
    note = forms.CharField(required=False, max_length=NOTE_MAX, strip=False)

    def __init__(self, *args, labelling: Labelling, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["value"].choices = [("", "")] + [(str(v), str(v)) for v in labelling.values]


class InviteForm(forms.Form):
    username = forms.CharField(label=_("Username"), max_length=150)

    def __init__(self, *args, labelling: Labelling, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.labelling = labelling

    def clean_username(self):
        name = self.cleaned_data["username"].strip()
        invitee = get_user_model().objects.filter(username=name).first()
        if invitee is None:
            raise forms.ValidationError(
                _("There is no account named %(name)s."), code="no_user", params={"name": name}
            )
        if invitee.pk == self.labelling.owner_id:
            raise forms.ValidationError(
                _("You label this yourself: invite another account."), code="yourself"
            )
        if self.labelling.invitations.filter(invitee=invitee).exists():
            raise forms.ValidationError(
                _("%(name)s is invited already."), code="already", params={"name": name}
            )
        self.invitee = invitee
        return name
