"""The model pickers every form that starts a check shows: the catalogue's models, with the
ones not configured on this server shown but disabled."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from checks import model_choices


class ModelSelect(forms.Select):
    """A model picker whose not-configured models show but cannot be picked."""

    def __init__(self, *args, unavailable: dict[str, str] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.unavailable = unavailable or {}

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        if value in self.unavailable:
            option["attrs"]["disabled"] = True
            option["label"] = _("%(label)s: not configured (set %(variable)s)") % {
                "label": label,
                "variable": self.unavailable[value],
            }
        return option


def model_field(label, empty_label, help_text="") -> forms.ChoiceField:
    """A model picker field; ModelPickers fills its choices from the catalogue."""
    return forms.ChoiceField(
        label=label, required=False, choices=[("", empty_label)], help_text=help_text
    )


class ModelPickers:
    """For a form whose MODEL_FIELDS are model_field()s: the catalogue's models as
    choices, the ones not configured shown but disabled, and refused if posted anyway."""

    MODEL_FIELDS: tuple[str, ...] = ()

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        options = model_choices.options()
        unavailable = {o["id"]: o["key_env"] for o in options if not o["configured"]}
        self._unavailable = unavailable
        for name in self.MODEL_FIELDS:
            field = self.fields[name]
            field.choices = [field.choices[0], *((o["id"], o["label"]) for o in options)]
            field.widget = ModelSelect(choices=field.choices, unavailable=unavailable)

    def _clean_model(self, name: str) -> str:
        value = self.cleaned_data.get(name, "")
        if value in self._unavailable:
            raise forms.ValidationError(
                _("%(model)s is not configured: set the environment variable %(variable)s."),
                params={"model": value, "variable": self._unavailable[value]},
            )
        return value
