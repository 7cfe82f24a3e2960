"""The start page's one choice: the run's budget in metric calls, within the wizard's."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from alignment.plans import DEFAULT_BUDGET
from submissions.forms import MAX_BUDGET


class StartForm(forms.Form):
    budget = forms.IntegerField(
        label=_("Budget (metric calls)"),
        min_value=1,
        max_value=MAX_BUDGET,
        initial=DEFAULT_BUDGET,
        help_text=_(
            "Each metric call runs the judge on one labelled row and compares its verdict "
            "with the person's."
        ),
    )
