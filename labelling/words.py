"""The labelling's refusals in the reader's words (called at request time)."""

from __future__ import annotations

from django.utils.translation import gettext as _

from labelling.models import Labelling


def label_refusal(code: str, labelling: Labelling) -> str:
    if code == "bad_value":
        values = ", ".join(str(v) for v in labelling.values)
        return _("A label here is one of: %(values)s.") % {"values": values}
    if code == "no_label":
        return _("Choose a label first: a note is saved with its label.")
    return _("This labelling has no such case.")


def invite_refusal(code: str) -> str:
    if code == "yourself":
        return _("You label this yourself: invite another account.")
    if code == "already":
        return _("This account is invited already.")
    return _("There is no account of that name.")


def value_text(labelling: Labelling, value: float | None) -> str:
    """A label as a person reads it: Pass or Fail, or its number on the scale."""
    if value is None:
        return ""
    if labelling.kind == Labelling.Kind.PASS_FAIL:
        return _("Pass") if value >= 1 else _("Fail")
    return str(int(value)) if float(value).is_integer() else str(value)
