from __future__ import annotations

import json
import math

from django import forms
from django.utils.translation import gettext_lazy as _

from checks.forms import ModelPickers, model_field
from contract import files as helper_files
from contract.engine import MAX_TIMEOUT_S, MIN_TIMEOUT_S
from contract.source import MAX_SOURCE_BYTES
from metrics.starters import DEFAULT_STARTER, STARTERS
from wording import words

CASE_COUNT = 3
OBSERVATION_KEYS = ("duration_ms", "cost_usd", "model_calls", "input_tokens", "output_tokens")


class MetricCreateForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=120)
    starter = forms.ChoiceField(
        label=_("Start from"),
        choices=[(key, starter.title) for key, starter in STARTERS.items()],
        initial=DEFAULT_STARTER,
        # The list of what each starter does, under the picker (metrics/_create_form.html).
        widget=forms.Select(
            attrs={"class": "starter-select", "aria-describedby": "id_starter_descriptions"}
        ),
    )
    starters = tuple(STARTERS.values())
    # "Open in playground" on a docs page: which example (page:number) in which language.
    example = forms.CharField(required=False, widget=forms.HiddenInput)
    example_language = forms.CharField(required=False, widget=forms.HiddenInput)

    def clean(self):
        data = super().clean()
        if data.get("example"):
            from docs_site import pages

            try:
                data["example_source"] = pages.example(
                    data.get("example_language") or "en", data["example"]
                )
            except pages.PageNotFound:
                raise forms.ValidationError(_("That docs example does not exist.")) from None
        return data


class MetricImportForm(forms.Form):
    """ "Start from a DSPy or gepa metric": a metric as its framework has it, pasted."""

    name = forms.CharField(label=_("Name"), max_length=120)
    source = forms.CharField(
        label=_("Your DSPy or gepa metric"),
        help_text=_(
            "Paste the metric function with its imports and the helpers it calls. It is "
            "converted to the contract and you review the changes before anything is saved."
        ),
        widget=forms.Textarea(
            attrs={"rows": 18, "spellcheck": "false", "class": "code", "wrap": "off"}
        ),
        strip=False,
    )

    def clean_source(self) -> str:
        return _source_within_limit(self.cleaned_data["source"])


def _source_within_limit(source: str) -> str:
    source = source.replace("\r\n", "\n")
    if len(source.encode("utf-8", "surrogatepass")) > MAX_SOURCE_BYTES:
        raise forms.ValidationError(
            _("metric.py is larger than %(limit)s bytes."), params={"limit": MAX_SOURCE_BYTES}
        )
    return source


class EditorForm(ModelPickers, forms.Form):
    MODEL_FIELDS = ("reflection_model", "metric_model")
    PICKERS = "editor"

    source = forms.CharField(
        label=_("metric.py"),
        widget=forms.Textarea(attrs={"rows": 24, "spellcheck": "false", "class": "code"}),
        strip=False,
        required=False,
    )
    timeout_s = forms.IntegerField(
        label=_("Time limit per call (seconds)"),
        min_value=MIN_TIMEOUT_S,
        max_value=MAX_TIMEOUT_S,
    )

    reflection_model = model_field(_("Reflection model"), _("None selected"))
    metric_model = model_field(_("Metric model"), _("Same as the reflection model"))

    def clean_reflection_model(self) -> str:
        return self._clean_model("reflection_model")

    def clean_metric_model(self) -> str:
        return self._clean_model("metric_model")

    def clean_source(self) -> str:
        return _source_within_limit(self.cleaned_data["source"])


def _json_field(label, *, required: bool, help_text=""):
    return forms.CharField(
        label=label,
        required=required,
        help_text=help_text,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false", "class": "code"}),
    )


class CaseForm(forms.Form):
    input = _json_field(_("Input (JSON object)"), required=True)
    output_kind = forms.ChoiceField(
        label=_("Output is"),
        choices=[("text", _("Text")), ("json", _("JSON"))],
        initial="text",
    )
    output = forms.CharField(
        label=_("Output"),
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 2, "spellcheck": "false", "class": "code"}),
    )
    expected = _json_field(
        _("Expected (JSON object)"),
        required=False,
        help_text=_("Leave empty for no expected value."),
    )
    observation = _json_field(
        _("Recorded observation (JSON object)"),
        required=False,
        help_text=_('Optional, e.g. {"duration_ms": 850, "cost_usd": 0.0004}.'),
    )

    @staticmethod
    def _parse(text: str):
        try:
            return json.loads(text, parse_constant=_reject)
        except (ValueError, RecursionError) as exc:
            line = getattr(exc, "lineno", None)
            column = getattr(exc, "colno", None)
            if line is not None:
                raise forms.ValidationError(
                    _("Not valid JSON (line %(line)s, column %(column)s)."),
                    params={"line": line, "column": column},
                ) from None
            raise forms.ValidationError(_("Not valid JSON.")) from None

    def _object(self, name: str, *, allow_empty: bool):
        text = self.cleaned_data.get(name, "").strip()
        if not text:
            if allow_empty:
                return None
            raise forms.ValidationError(_("This field is required."))
        value = self._parse(text)
        if not isinstance(value, dict):
            raise forms.ValidationError(_('Enter a JSON object, like {"question": "..."}.'))
        return value

    def clean_input(self):
        return self._object("input", allow_empty=False)

    def clean_expected(self):
        return self._object("expected", allow_empty=True)

    def clean_observation(self):
        value = self._object("observation", allow_empty=True)
        if value is None:
            return None
        unknown = sorted(set(value) - set(OBSERVATION_KEYS))
        if unknown:
            raise forms.ValidationError(
                _("Unknown measurement %(name)s; use %(known)s."),
                params={"name": unknown[0], "known": ", ".join(OBSERVATION_KEYS)},
            )
        for key, number in value.items():
            if number is not None and (
                type(number) not in (int, float) or not math.isfinite(number) or number < 0
            ):
                raise forms.ValidationError(
                    _("%(name)s must be a number of 0 or more, or null."), params={"name": key}
                )
        return value

    def clean(self):
        data = super().clean()
        if data.get("output_kind") == "json" and "output" in data:
            try:
                data["output"] = self._parse(data["output"])
            except forms.ValidationError as exc:
                self.add_error("output", exc)
        return data

    def to_case(self) -> dict:
        data = self.cleaned_data
        return {
            "input": data["input"],
            "output": data["output"],
            "expected": data["expected"],
            "observation": data["observation"],
        }

    @staticmethod
    def initial_for(case: dict) -> dict:
        output = case.get("output")
        is_text = isinstance(output, str)
        return {
            "input": json.dumps(case.get("input", {}), ensure_ascii=False, indent=1),
            "output_kind": "text" if is_text else "json",
            "output": output if is_text else json.dumps(output, ensure_ascii=False),
            "expected": ""
            if case.get("expected") is None
            else json.dumps(case["expected"], ensure_ascii=False, indent=1),
            "observation": ""
            if not case.get("observation")
            else json.dumps(case["observation"], ensure_ascii=False),
        }


def _reject(name: str):
    raise ValueError(name)


def case_forms(data=None, cases: list[dict] | None = None) -> list[CaseForm]:
    cases = list(cases or [])
    forms_ = []
    for index in range(CASE_COUNT):
        initial = CaseForm.initial_for(cases[index]) if index < len(cases) else {"input": "{}"}
        forms_.append(CaseForm(data, prefix=f"case{index}", initial=initial))
    return forms_


class HelperFiles:
    """The helper modules the playground posts beside metric.py: each tab's `file_path`
    and `file_text`, in tab order, held to contract.files' limits. `files` is None when
    the page posted none of its files fields (`files_posted`): the latest version's are
    then kept, as the API does."""

    def __init__(self, data=None, files: dict[str, str] | None = None) -> None:
        self.posted = data is not None and bool(data.get("files_posted"))
        if self.posted:
            paths, texts = data.getlist("file_path"), data.getlist("file_text")
            self.pairs = list(zip(paths, texts, strict=False))
            if len(paths) != len(texts):
                self.pairs += [(path, "") for path in paths[len(texts) :]]
        else:
            self.pairs = list((files or {}).items())
        self.errors: list[str] = []
        self.files: dict[str, str] | None = None

    def is_valid(self, source: str) -> bool:
        if not self.posted:
            return True
        kept, problems = helper_files.validate(
            [(path, text.replace("\r\n", "\n")) for path, text in self.pairs],
            metric_bytes=len(source.encode("utf-8", "surrogatepass")),
        )
        self.errors = [words(p.code, p.params, family="files") for p in problems]
        self.files = kept if not problems else None
        return not problems

    @property
    def tabs(self) -> list[tuple[str, str]]:
        """(path, text) of each helper tab, as posted or stored."""
        return self.pairs
