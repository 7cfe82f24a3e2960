"""One form a step. Each validates its own fields with the same rules that check the
saved values again when a later step reads them (submissions.rules)."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from itertools import groupby

from django import forms
from django.db.models import OuterRef, Subquery
from django.utils.translation import gettext_lazy as _

import dataset_files
from checks.forms import ModelPickers, model_field
from checks.models import Check
from metrics.models import MetricVersion
from providers.projection import MINIBATCH_LIMITS
from submissions import datasets, rules
from submissions.models import ArtifactKind, Dataset, Draft, Engine
from wording import words
from wording.wizard import ROLE_NAMES, TYPE_NAMES

CODE = {"rows": 16, "spellcheck": "false", "class": "code"}
# Shown under each code editor (the playground's says the same).
KEYS_HELP = _(
    "In the editor, Tab moves on to the next field until you type; then it indents. "
    "To leave the editor: Esc, then Tab."
)
# Which field a problem of the artifact step belongs to.
CONTENT_CODES = {
    "template_empty",
    "template_syntax_error",
    "template_field_not_plain",
    "artifact_too_large",
}
MAX_BUDGET = 1_000_000
# The models step's minibatch size, said the same by the API (api.draft_body).
MINIBATCH_HELP = _(
    "How many train cases GEPA scores a candidate and its proposed change on before it "
    "keeps the one that did better. Bigger: a steadier comparison, less swayed by chance, "
    "but more metric calls per iteration (two per case)."
)
RATIO_FIELDS = ("train_percent", "validation_percent", "test_percent")
SPLIT_COLUMN_CODES = {"unknown_split_value", "empty_split_value"}


def _coded(message: str, problem: rules.Problem) -> forms.ValidationError:
    """A step problem as a form error that keeps its code (the API answers with it)."""
    return forms.ValidationError(message, code=problem.code)


class ArtifactForm(forms.Form):
    artifact_kind = forms.ChoiceField(
        label=_("Kind"), choices=ArtifactKind.choices, widget=forms.RadioSelect
    )
    artifact_content = forms.CharField(
        label=_("Artifact"),
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={**CODE, "rows": 10}),
        help_text=_(
            "For a prompt template: the prompt, with {field} for each input field. For a "
            "Python program: the text passed to run() as its first argument (optional). A "
            "DSPy program leaves it empty: DSPy GEPA rewrites its predictors' instructions."
        ),
    )
    program_source = forms.CharField(
        label=_("program.py"),
        required=False,
        strip=False,
        widget=forms.Textarea(
            attrs={
                **CODE,
                "data-skynet-editor": "",
                "data-keys-help": KEYS_HELP,
                "aria-label": "program.py",
            }
        ),
        help_text=_(
            "A Python program defines run(artifact, input) and returns the output; its llm() "
            "calls go to the task model. A DSPy program defines program, an instance of a "
            'dspy.Module (program = dspy.ChainOfThought("question -> answer")): it is called '
            "as program(**input), its model calls go to the task model, and your metric gets "
            "the prediction's output field (the dataset's output column; a dict of them when "
            "there are several)."
        ),
    )

    def clean(self):
        data = super().clean()
        kind = data.get("artifact_kind")
        if kind is None:
            return data
        content = data.get("artifact_content", "").replace("\r\n", "\n")
        source = data.get("program_source", "").replace("\r\n", "\n")
        data["artifact_content"], data["program_source"] = content, source
        problem = rules.artifact_problem(kind, content, source)
        if problem is not None:
            field = "artifact_content" if problem.code in CONTENT_CODES else "program_source"
            self.add_error(
                field, _coded(words(problem.code, problem.params, family="step"), problem)
            )
        return data


class UploadForm(forms.Form):
    file = forms.FileField(
        label=_("CSV or JSON Lines file"),
        error_messages={
            "empty": _("The file is empty."),
            "required": _("Choose a file to upload."),
        },
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,.jsonl,.ndjson,.tsv,.txt"}),
    )


def type_field(column: str) -> forms.ChoiceField:
    """A column's type. Not required: a post without it (or with it empty) keeps the
    type as read, the rule for a type nobody declared."""
    return forms.ChoiceField(
        label=column,
        choices=[(name, TYPE_NAMES[name]) for name in dataset_files.COLUMN_TYPES],
        required=False,
        widget=forms.Select(attrs={"data-column": column, "class": "column-type"}),
    )


class ColumnTypes:
    """What a form with one type field a column (type_field, in `type_names` as (name,
    column)) says of them; `inferred` holds each column's type as read."""

    type_names: list[tuple[str, str]]
    inferred: dict[str, str]

    def type_fields(self):
        """(field, column, the type as read, worded) for each column."""
        return [
            (self[name], column, TYPE_NAMES[self.inferred[column]])
            for name, column in self.type_names
        ]

    def chosen_types(self) -> dict[str, str]:
        """Each column's type as the form holds it (posted, else its first value), for
        the preview; a value that is no type is the type as read."""
        chosen = {}
        for name, column in self.type_names:
            value = self[name].value()
            chosen[column] = value if value in dataset_files.COLUMN_TYPES else self.inferred[column]
        return chosen

    def cleaned_types(self) -> dict[str, str]:
        """Each column's type as cleaned: one left out or empty is the type as read."""
        data = self.cleaned_data
        return {column: data.get(name) or self.inferred[column] for name, column in self.type_names}


class DatasetForm(ColumnTypes, forms.Form):
    """Column roles, column types and splits; one role field and one type field a
    column, named by position."""

    split_mode = forms.ChoiceField(
        label=_("Splits"), choices=Draft.SplitMode.choices, widget=forms.RadioSelect
    )
    train_percent = forms.IntegerField(label=_("Train %"), min_value=0, max_value=100)
    validation_percent = forms.IntegerField(label=_("Validation %"), min_value=0, max_value=100)
    test_percent = forms.IntegerField(label=_("Test %"), min_value=0, max_value=100)
    seed = forms.IntegerField(
        label=_("Seed"),
        min_value=-(2**63),
        max_value=2**63 - 1,
        help_text=_("The same seed gives the same splits and the same 3 cases for the check."),
    )
    split_column = forms.ChoiceField(label=_("Split column"), required=False)

    def __init__(self, *args, dataset: Dataset, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.dataset = dataset
        self.role_names = []
        self.type_names = []
        for index, column in enumerate(dataset.columns):
            name = f"role_{index}"
            self.fields[name] = forms.ChoiceField(
                label=column,
                choices=[(role, ROLE_NAMES[role]) for role in dataset_files.ROLES],
                widget=forms.Select(attrs={"data-column": column}),
            )
            self.role_names.append((name, column))
            self.fields[f"type_{index}"] = type_field(column)
            self.type_names.append((f"type_{index}", column))
        self.inferred = datasets.inferred_types(dataset)
        self.fields["split_column"].choices = [("", _("Choose a column"))] + [
            (column, column) for column in dataset.columns
        ]
        self.facts: dict | None = None

    @staticmethod
    def initial_for(draft: Draft) -> dict:
        initial = {
            "split_mode": draft.split_mode,
            "train_percent": draft.train_percent,
            "validation_percent": draft.validation_percent,
            "test_percent": draft.test_percent,
            "seed": draft.seed,
            "split_column": draft.split_column,
        }
        types = datasets.column_types(draft.dataset, draft.column_types) if draft.dataset else {}
        for index, column in enumerate(draft.dataset.columns if draft.dataset else []):
            initial[f"role_{index}"] = draft.roles.get(column, "ignore")
            initial[f"type_{index}"] = types[column]
        return initial

    def role_fields(self):
        return [(self[name], column) for name, column in self.role_names]

    def clean(self):
        data = super().clean()
        roles = {column: data[name] for name, column in self.role_names if name in data}
        data["roles"] = roles
        data["types"] = self.cleaned_types()
        if len(roles) != len(self.role_names):
            return data
        mode = data.get("split_mode")
        ratios = tuple(data.get(name) for name in RATIO_FIELDS)
        if mode == Draft.SplitMode.COLUMN:
            if not data.get("split_column"):
                self.add_error(
                    "split_column",
                    forms.ValidationError(
                        _("Choose the column that names each row's split."), code="no_split_column"
                    ),
                )
                return data
            if roles.get(data["split_column"]) != "ignore":
                self.add_error(
                    "split_column",
                    forms.ValidationError(
                        _(
                            "Mark the split column as ignored, so it reaches neither input nor "
                            "expected."
                        ),
                        code="split_column_not_ignored",
                    ),
                )
                return data
        elif mode == Draft.SplitMode.RATIO:
            if None in ratios or data.get("seed") is None:
                return data
            if sum(ratios) != 100 or ratios[0] == 0:
                message = words("bad_ratios", family="dataset")
                self.add_error("train_percent", forms.ValidationError(message, code="bad_ratios"))
                return data
        else:
            return data
        # Every row is read here once; the draft keeps what was found.
        self.facts = datasets.compute_facts(
            self.dataset,
            roles=roles,
            mode=mode,
            ratios=tuple(value or 0 for value in ratios),
            seed=data.get("seed") or 0,
            column=data.get("split_column", "") if mode == Draft.SplitMode.COLUMN else "",
            types=data["types"],
        )
        problem = self.facts["problem"]
        if problem is not None:
            message = words(problem["code"], problem["params"], family="dataset")
            field = "split_column" if problem["code"] in SPLIT_COLUMN_CODES else None
            self.add_error(field, forms.ValidationError(message, code=problem["code"]))
        return data

    def values(self) -> dict:
        data = self.cleaned_data
        values = {
            "roles": data["roles"],
            "column_types": data["types"],
            "split_mode": data["split_mode"],
            "split_column": data.get("split_column", "")
            if data["split_mode"] == Draft.SplitMode.COLUMN
            else "",
        }
        for name in ("train_percent", "validation_percent", "test_percent", "seed"):
            values[name] = data[name]
        return values


class VersionChoiceField(forms.ModelChoiceField):
    """A saved version, under its metric: the versions come grouped by metric (set_groups),
    each labelled with its number and how its latest check went."""

    def label_from_instance(self, obj: MetricVersion) -> str:
        status = getattr(obj, "latest_check_status", None)
        verdict = Check.Status(status).label if status else _("not checked")
        return _("Version %(number)s: %(verdict)s") % {"number": obj.number, "verdict": verdict}

    def set_groups(self) -> None:
        """One <optgroup> a metric, named by the metric; two metrics of one name are told
        apart by their number, as in their playground's address."""
        versions = list(self.queryset)
        names = Counter(metric.name for metric in {v.metric for v in versions})
        groups = []
        for metric, members in groupby(versions, key=lambda version: version.metric):
            label = metric.name
            if names[metric.name] > 1:
                label = _("%(name)s (metric %(id)s)") % {"name": metric.name, "id": metric.pk}
            groups.append((label, [(v.pk, self.label_from_instance(v)) for v in members]))
        self.widget.choices = [("", self.empty_label), *groups]


class MetricForm(forms.Form):
    metric_mode = forms.ChoiceField(
        label=_("Metric"), choices=Draft.MetricMode.choices, widget=forms.RadioSelect
    )
    metric_version = VersionChoiceField(
        label=_("Saved version"),
        queryset=MetricVersion.objects.none(),
        required=False,
        empty_label=_("Choose a version"),
    )
    inline_source = forms.CharField(
        label=_("metric.py"),
        required=False,
        strip=False,
        widget=forms.Textarea(
            attrs={
                **CODE,
                "data-skynet-editor": "",
                "data-keys-help": KEYS_HELP,
                "aria-label": "metric.py",
            }
        ),
    )

    def __init__(self, *args, owner, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        latest = Check.objects.filter(metric_version=OuterRef("pk")).order_by("-created_at", "-pk")
        field = self.fields["metric_version"]
        field.queryset = (
            MetricVersion.objects.filter(metric__owner=owner)
            .select_related("metric")
            .annotate(latest_check_status=Subquery(latest.values("status")[:1]))
            .order_by("metric__name", "metric_id", "-number")
        )
        field.set_groups()

    def clean(self):
        data = super().clean()
        mode = data.get("metric_mode")
        if mode is None:
            return data
        data["inline_source"] = data.get("inline_source", "").replace("\r\n", "\n")
        version = data.get("metric_version")
        if mode == "saved":
            source = version.source if version else None
        else:
            source = data["inline_source"]
        problem = rules.metric_problem(mode, source)
        if problem is not None:
            field = "metric_version" if mode == "saved" else "inline_source"
            self.add_error(
                field, _coded(words(problem.code, problem.params, family="step"), problem)
            )
        return data


class ModelsForm(ModelPickers, forms.Form):
    MODEL_FIELDS = ("task_model", "reflection_model", "metric_model")
    PICKERS = "wizard_models"

    task_model = model_field(_("Task model"), _("Choose the task model"))
    reflection_model = model_field(_("Reflection model"), _("Choose the reflection model"))
    metric_model = model_field(
        _("Metric model"),
        _("Same as the reflection model"),
        help_text=_("Optional: the model behind llm() in your metric."),
    )
    engine = forms.ChoiceField(label=_("Engine"), choices=Engine.choices, widget=forms.RadioSelect)
    budget = forms.IntegerField(
        label=_("Budget (metric calls)"),
        min_value=1,
        max_value=MAX_BUDGET,
        help_text=_("Each rollout runs the artifact once and calls your metric once."),
    )
    budget_usd = forms.DecimalField(
        label=_("Budget (US dollars)"),
        min_value=Decimal("0.01"),
        max_value=Decimal("100000"),
        decimal_places=2,
        required=False,
        # Localized ("5,00" in Spanish), so a text field; the keyboard still offers digits.
        localize=True,
        widget=forms.TextInput(attrs={"inputmode": "decimal"}),
        help_text=_(
            "The most the run may spend on the task, metric and reflection models together. "
            "It stops there and keeps its best candidate."
        ),
    )
    minibatch = forms.IntegerField(
        label=_("Minibatch size"),
        min_value=MINIBATCH_LIMITS[0],
        max_value=MINIBATCH_LIMITS[1],
        required=False,
        help_text=MINIBATCH_HELP,
    )

    def __init__(self, *args, kind: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.kind = kind

    @classmethod
    def for_pickers(cls, initial: dict, *, fresh_models: bool = False) -> ModelsForm:
        # The pickers do not depend on the artifact's kind; only the engine rule does.
        return cls(initial=initial, kind="", fresh_models=fresh_models)

    def _required_model(self, name: str, problem: str) -> str:
        value = self._clean_model(name)
        if not value:
            raise forms.ValidationError(words(problem, family="step"), code=problem)
        return value

    def clean_task_model(self) -> str:
        return self._required_model("task_model", "no_task_model")

    def clean_reflection_model(self) -> str:
        return self._required_model("reflection_model", "no_reflection_model")

    def clean_metric_model(self) -> str:
        return self._clean_model("metric_model")

    def clean_budget_usd(self) -> Decimal:
        # Left empty: the default, as a draft starts with.
        value = self.cleaned_data.get("budget_usd")
        return value if value is not None else Draft._meta.get_field("budget_usd").default

    def clean_minibatch(self) -> int:
        # Left empty: the default, as a draft starts with.
        value = self.cleaned_data.get("minibatch")
        return value if value is not None else Draft._meta.get_field("minibatch").default

    def clean(self):
        data = super().clean()
        engine = data.get("engine")
        if engine and self.kind not in rules.ENGINE_KINDS[Engine(engine)]:
            message = words("engine_kind", {"engine": engine}, family="step")
            self.add_error("engine", forms.ValidationError(message, code="engine_kind"))
        return data
