"""The model pickers every form that starts a check shows: the catalogue's models, with the
ones that cannot be used (not configured on this server, or their endpoint not answering
right now) shown but disabled, each with the reason."""

from __future__ import annotations

from urllib.parse import urlsplit

from django import forms
from django.utils.translation import gettext_lazy as _

from jobs import model_choices
from wording import format_number, words

# The pickers of each form that has them, by the name the "Test again" request gives.
PICKER_FORMS: dict[str, type[ModelPickers]] = {}


class ModelSelect(forms.Select):
    """A model picker whose unusable models show, with why, but cannot be picked.

    `unavailable` maps a model id not configured to the variable that would configure
    it; `unreachable` maps a configured model whose endpoint did not answer to why. The
    unreachable model already chosen stays selectable (saving the form must not drop a
    choice because a server is down for a minute); the others are disabled.
    """

    def __init__(
        self,
        *args,
        unavailable: dict[str, str] | None = None,
        unreachable: dict[str, str] | None = None,
        **kwargs,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.unavailable = unavailable or {}
        self.unreachable = unreachable or {}

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        if value in self.unavailable:
            option["attrs"]["disabled"] = True
            option["label"] = _("%(label)s: not configured (set %(variable)s)") % {
                "label": label,
                "variable": self.unavailable[value],
            }
        elif value in self.unreachable:
            if not selected:
                option["attrs"]["disabled"] = True
            option["label"] = _("%(label)s: cannot be reached right now (%(reason)s)") % {
                "label": label,
                "reason": self.unreachable[value],
            }
        return option


def model_field(label, empty_label, help_text="") -> forms.ChoiceField:
    """A model picker field; ModelPickers fills its choices from the catalogue."""
    return forms.ChoiceField(
        label=label, required=False, choices=[("", empty_label)], help_text=help_text
    )


def _unreachable_reason(reach) -> str:
    params = {
        "host": urlsplit(reach.url).netloc or reach.url,
        "seconds": format_number(reach.timeout_s),
    }
    return words(reach.code, params, family="reach")


class ModelPickers:
    """For a form whose MODEL_FIELDS are model_field()s: the catalogue's models as
    choices; the ones not configured, or whose endpoint does not answer, shown but
    disabled; the ones not configured refused if posted anyway.

    PICKERS names the form for the "Test again" request (checks.views.models_test_again),
    which builds it with for_pickers() to show its pickers again.
    """

    MODEL_FIELDS: tuple[str, ...] = ()
    PICKERS: str = ""

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if cls.PICKERS:
            PICKER_FORMS[cls.PICKERS] = cls

    def __init__(self, *args, fresh_models: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        options = model_choices.options(fresh=fresh_models)
        unavailable = {o["id"]: o["key_env"] for o in options if not o["configured"]}
        unreachable = {
            o["id"]: _unreachable_reason(o["reach"])
            for o in options
            if o["reach"] is not None and not o["reach"].reachable
        }
        self._unavailable = unavailable
        # For the note beside the pickers: which models cannot answer right now.
        self.unreachable_models = sorted(unreachable)
        for name in self.MODEL_FIELDS:
            field = self.fields[name]
            field.choices = [field.choices[0], *((o["id"], o["label"]) for o in options)]
            field.widget = ModelSelect(
                choices=field.choices,
                unavailable=unavailable,
                unreachable=unreachable,
                attrs={"data-model-picker": ""},
            )

    @classmethod
    def for_pickers(cls, initial: dict, *, fresh_models: bool = False) -> ModelPickers:
        """This form unbound, with `initial` choices: what shows its pickers again."""
        return cls(initial=initial, fresh_models=fresh_models)

    def _clean_model(self, name: str) -> str:
        value = self.cleaned_data.get(name, "")
        if value in self._unavailable:
            raise forms.ValidationError(
                _("%(model)s is not configured: set the environment variable %(variable)s."),
                params={"model": value, "variable": self._unavailable[value]},
            )
        return value
