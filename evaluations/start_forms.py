"""The forms that start an evaluation: which rows (a split, or a seeded sample of it), and
for the playground the dataset's columns and the metric version(s).

Each form counts the rows its selection picks while it validates (start.selected_rows),
so a split that cannot be made is a field's error, and the view has the count admission
needs without reading the rows twice.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

import dataset_files
from dataset_files import DatasetError
from dataset_files.human import parse_classes
from evaluations import start
from evaluations.models import Evaluation
from evaluations.selection import default_selection
from evaluations.services import scorings_per_case
from metrics.models import Metric, MetricVersion
from submissions.forms import RATIO_FIELDS, ColumnTypes, type_field
from submissions.models import Dataset, Draft
from wording import format_count, words
from wording.formatting import format_moment
from wording.wizard import SPLIT_NAMES

SEED_RANGE = {"min_value": -(2**63), "max_value": 2**63 - 1}
SPLIT_CHOICES = (
    ("all", _("Every row")),
    ("train", _("The train split")),
    ("validation", _("The validation split")),
    ("test", _("The test split")),
)
COUNT_CHOICES = (
    ("sample", _("A seeded sample of them")),
    ("every", _("Every one of them")),
)
# Playground roles: the wizard's Output columns are the expected values here, named so
# beside the column of recorded outputs.
ROLE_CHOICES = (
    ("input", _("Input")),
    ("output", _("Expected")),
    ("ignore", _("Ignored")),
    ("human_score", _("Human score")),
    ("human_label", _("Human label")),
    ("human_note", _("Human note")),
)


# How many times each case is scored when it is scored several times, to measure a
# judge's own noise: a new form's choice; an evaluation from before the choice kept 2.
REPEATS_MIN, REPEATS_MAX, REPEATS_DEFAULT = 2, 5, 3
REPEATS_ERROR = _("Score each case 2 to 5 times: give a whole number from 2 to 5.")


def repeats_field() -> forms.IntegerField:
    """The "How many times" field under "Score each case several times"."""
    return forms.IntegerField(
        label=_("How many times"),
        required=False,
        min_value=REPEATS_MIN,
        max_value=REPEATS_MAX,
        help_text=_(
            "2 to 5 scorings of each case in all, each in a fresh process. Each scoring "
            "costs what the first does, so 3 scorings cost 3 times the model calls."
        ),
        error_messages={
            "min_value": REPEATS_ERROR,
            "max_value": REPEATS_ERROR,
            "invalid": REPEATS_ERROR,
        },
        widget=forms.NumberInput(attrs={"min": REPEATS_MIN, "max": REPEATS_MAX}),
    )


def clean_repeats(form: forms.Form, data: dict) -> None:
    """The number of scorings matters only when each case is scored several times: what
    the field holds is no error otherwise; left empty, it is the form's default."""
    if data.get("second") != Evaluation.Second.REPEAT:
        form.errors.pop("repeats", None)
        data["repeats"] = None
    elif data.get("repeats") is None and "repeats" not in form.errors:
        data["repeats"] = REPEATS_DEFAULT


def chosen_repeats(form: forms.Form) -> int:
    """How many times each case is scored in all, as the form chose (2, the model's
    default, when it is not scored several times)."""
    data = getattr(form, "cleaned_data", None) or {}
    if data.get("second") == Evaluation.Second.REPEAT and data.get("repeats"):
        return int(data["repeats"])
    return REPEATS_MIN


def chosen_scorings(form: forms.Form) -> int:
    """How many times the metric runs on each case, as the form chose: what the cost
    note counts (the first values' for a form not sent yet)."""
    data = getattr(form, "cleaned_data", None)
    second = (data or {}).get("second") if data is not None else form.initial.get("second")
    return scorings_per_case(second or "", chosen_repeats(form))


class RowsForm(forms.Form):
    """Which rows: a split (or every row), then all of them or a seeded sample of N."""

    split = forms.ChoiceField(label=_("Rows"), choices=SPLIT_CHOICES, widget=forms.RadioSelect)
    count = forms.ChoiceField(label=_("How many"), choices=COUNT_CHOICES, widget=forms.RadioSelect)
    sample_seed = forms.IntegerField(
        label=_("Sample seed"),
        required=False,
        help_text=_("The same seed draws the same rows, so two evaluations can be compared."),
        **SEED_RANGE,
    )

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("initial", {})
        kwargs["initial"] = {
            "split": "all",
            "count": "sample",
            "sample": settings.EVALUATION_DEFAULT_SAMPLE,
            "sample_seed": 0,
            **kwargs["initial"],
        }
        super().__init__(*args, **kwargs)
        self.rows: list[int] = []
        # Built here: the limit is a setting, read when the form is made.
        self.fields["sample"] = forms.IntegerField(
            label=_("Rows in the sample"),
            required=False,
            min_value=1,
            max_value=settings.EVALUATION_MAX_CASES,
        )
        self.order_fields(["split", "count", "sample", "sample_seed"])
        self.selection: dict | None = None
        self.total: int | None = None

    def clean(self):
        data = super().clean()
        for name in ("sample", "sample_seed"):
            if data.get("count") != "sample":
                # Not used for every row: what the field holds is no error then.
                self.errors.pop(name, None)
            elif data.get(name) is None and name not in self.errors:
                self.add_error(name, self.fields[name].error_messages["required"])
        return data

    def initial_selection(self) -> dict:
        """The rows the form starts with, for the cost it shows before anything is typed."""
        initial = self.initial
        sample = initial["sample"] if initial["count"] == "sample" else 0
        return default_selection(
            split=initial["split"], sample=sample, sample_seed=initial["sample_seed"]
        )

    def sample_values(self) -> dict:
        data = self.cleaned_data
        if data.get("count") != "sample":
            return {"sample": 0, "sample_seed": 0}
        return {"sample": data["sample"], "sample_seed": data["sample_seed"]}

    def count_rows(self, dataset: Dataset, selection: dict, field: str | None = None) -> None:
        """Count the rows `selection` picks, or mark why its split cannot be made."""
        try:
            rows = start.selected_rows(dataset, selection)
        except DatasetError as exc:
            params = {"row": exc.row, "column": exc.column, **(exc.params or {})}
            self.add_error(field, words(exc.code, params, family="dataset"))
            return
        self.selection, self.total, self.rows = selection, len(rows), rows


class VersionField(forms.ModelChoiceField):
    def label_from_instance(self, obj: MetricVersion) -> str:
        return _("Version %(number)s") % {"number": obj.number}


class DatasetField(forms.ModelChoiceField):
    """One of the user's uploads, named by its file, its rows and when it came."""

    def label_from_instance(self, obj: Dataset) -> str:
        rows = ngettext("%(rows)s row", "%(rows)s rows", obj.row_count) % {
            "rows": format_count(obj.row_count)
        }
        return f"{obj.filename} · {rows} · {format_moment(obj.created_at)}"


class DatasetChoiceForm(forms.Form):
    """The playground's first step: one of the user's datasets (a GET form: choosing reads)."""

    dataset = DatasetField(
        label=_("One of your datasets"),
        queryset=Dataset.objects.none(),
        empty_label=None,
    )

    def __init__(self, *args, owner, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = start.datasets_for_user(owner)


class HumanSettingsForm(forms.Form):
    """How the human columns are read, when the rows' own values do not say it: the
    scale a human score is on, a label's values lowest first, and the metric score from
    which its verdict is the higher label. Each is optional: left empty, the rows say."""

    human_scale_lo = forms.FloatField(label=_("Lowest human score"), required=False)
    human_scale_hi = forms.FloatField(label=_("Highest human score"), required=False)
    human_classes = forms.CharField(
        label=_("Human labels, lowest first"),
        required=False,
        max_length=500,
        help_text=_("Separated by commas, as in: fail, pass or bad, ok, good."),
    )
    human_threshold = forms.FloatField(
        label=_("The metric's pass score"),
        required=False,
        help_text=_(
            "A metric score from this one up counts as the higher label (0.5 unless "
            "you say); with more labels, the scores from 0 to 1 are split evenly."
        ),
    )

    def declared_human(self) -> dict:
        data = self.cleaned_data
        declared: dict = {}
        lo, hi = data.get("human_scale_lo"), data.get("human_scale_hi")
        if lo is not None and hi is not None:
            declared["scale"] = (lo, hi)
        elif (lo is None) != (hi is None):
            missing = "human_scale_hi" if hi is None else "human_scale_lo"
            self.add_error(missing, _("Give both ends of the scale, or neither."))
        classes = parse_classes(data.get("human_classes") or "")
        if classes:
            declared["classes"] = classes
        if data.get("human_threshold") is not None:
            declared["threshold"] = data["human_threshold"]
        return declared

    def clean_human(self, dataset: Dataset, roles: dict) -> dict:
        """The settings (start.human_settings), or {} with the problem marked."""
        declared = self.declared_human()
        try:
            return start.human_settings(dataset, roles, declared)
        except DatasetError as exc:
            params = {"row": exc.row, "column": exc.column, **(exc.params or {})}
            self.add_error(None, words(exc.code, params, family="dataset"))
            return {}


class MetricEvaluateForm(ColumnTypes, HumanSettingsForm, RowsForm):
    """The playground's second step, for one dataset: the version, a role and a type per
    column, the column of recorded outputs, the rows, and whether to score each case
    twice."""

    # The page shows the version first, above the dataset's own forms: its select belongs
    # to this form by the form attribute (templates/evaluations/_start_version.html).
    version = VersionField(
        label=_("Metric version"),
        queryset=MetricVersion.objects.none(),
        empty_label=None,
        help_text=_("The saved code that scores the recorded outputs; the newest comes first."),
        widget=forms.Select(attrs={"form": "evaluate-form"}),
    )
    recorded_column = forms.ChoiceField(
        label=_("The column that holds the recorded outputs"),
        help_text=_("Each row's cell is the output score() receives."),
        error_messages={"required": _("Choose the column that holds the recorded outputs.")},
    )
    # The split settings matter only when the rows are a split; every row needs none.
    split_mode = forms.ChoiceField(
        label=_("Splits"),
        choices=Draft.SplitMode.choices,
        widget=forms.RadioSelect,
        required=False,
    )
    train_percent = forms.IntegerField(
        label=_("Train %"), min_value=0, max_value=100, required=False
    )
    validation_percent = forms.IntegerField(
        label=_("Validation %"), min_value=0, max_value=100, required=False
    )
    test_percent = forms.IntegerField(label=_("Test %"), min_value=0, max_value=100, required=False)
    seed = forms.IntegerField(label=_("Seed"), required=False, **SEED_RANGE)
    split_column = forms.ChoiceField(label=_("Split column"), required=False)
    second = forms.ChoiceField(
        label=_("What else"),
        choices=Evaluation.Second.choices,
        widget=forms.RadioSelect,
        required=False,
    )
    second_version = VersionField(
        label=_("The version to compare with"),
        queryset=MetricVersion.objects.none(),
        required=False,
        empty_label=_("Choose a version"),
    )
    repeats = repeats_field()

    def __init__(self, *args, metric: Metric, dataset: Dataset, **kwargs) -> None:
        guessed = start.guessed_settings(dataset)
        initial = {
            "version": metric.latest_version.pk if metric.latest_version else None,
            "recorded_column": guessed["recorded_column"],
            "split_mode": Draft.SplitMode.COLUMN
            if guessed["split_column"]
            else Draft.SplitMode.RATIO,
            "split_column": guessed["split_column"],
            "train_percent": 70,
            "validation_percent": 15,
            "test_percent": 15,
            "seed": 0,
            "second": "",
            "repeats": REPEATS_DEFAULT,
        }
        for index, column in enumerate(dataset.columns):
            initial[f"role_{index}"] = guessed["roles"].get(column, "ignore")
            initial[f"type_{index}"] = guessed["types"][column]
        self.inferred = guessed["types"]
        kwargs["initial"] = {**initial, **kwargs.get("initial", {})}
        super().__init__(*args, **kwargs)
        self.metric, self.dataset = metric, dataset
        versions = metric.versions.order_by("-number")
        self.fields["version"].queryset = versions
        self.fields["second_version"].queryset = versions
        columns = [(column, column) for column in dataset.columns]
        self.fields["recorded_column"].choices = [("", _("Choose a column")), *columns]
        self.fields["split_column"].choices = [("", _("Choose a column")), *columns]
        self.role_names = []
        self.type_names = []
        for index, column in enumerate(dataset.columns):
            name = f"role_{index}"
            self.fields[name] = forms.ChoiceField(
                label=column,
                choices=ROLE_CHOICES,
                widget=forms.Select(attrs={"data-column": column}),
            )
            self.role_names.append((name, column))
            self.fields[f"type_{index}"] = type_field(column)
            self.type_names.append((f"type_{index}", column))
        self.roles: dict[str, str] = {}
        self.types: dict[str, str] = {}
        self.human: dict = {}

    def role_fields(self):
        return [(self[name], column) for name, column in self.role_names]

    def clean(self):
        data = super().clean()
        clean_repeats(self, data)
        self.types = self.cleaned_types()
        roles = {column: data[name] for name, column in self.role_names if name in data}
        if len(roles) != len(self.role_names):
            return data
        self.roles = roles
        recorded = data.get("recorded_column")
        if recorded and roles.get(recorded) != "ignore":
            self.add_error(
                "recorded_column",
                _(
                    "This column holds the outputs to score, so it cannot also be an input or "
                    "an expected column: mark it Ignored."
                ),
            )
        if "input" not in roles.values():
            self.add_error(None, words("no_input_column", family="dataset"))
        self.human = self.clean_human(self.dataset, roles)
        if data.get("second") == Evaluation.Second.COMPARE:
            other = data.get("second_version")
            if other is None and "second_version" not in self.errors:
                self.add_error("second_version", _("Choose the version to compare with."))
            elif other is not None and other == data.get("version"):
                self.add_error(
                    "second_version", _("Choose a version other than the one evaluated.")
                )
        split = data.get("split")
        if split and split != "all":
            self._clean_splits(data, roles)
        if self.errors:
            return data
        column_mode = data["split"] != "all" and data["split_mode"] == Draft.SplitMode.COLUMN
        if data["split"] == "all":
            selection = default_selection(split="all", **self.sample_values())
        else:
            selection = default_selection(
                split=data["split"],
                mode=data["split_mode"],
                ratios=[data[name] for name in RATIO_FIELDS],
                seed=data["seed"] if not column_mode else 0,
                column=data["split_column"] if column_mode else "",
                **self.sample_values(),
            )
        self.count_rows(self.dataset, selection, "split_column" if column_mode else None)
        if self.selection is not None:
            self._check_values(data["recorded_column"])
        return data

    def _check_values(self, recorded: str) -> None:
        """Every value the evaluation will score fits its column's type, or the form says
        which does not (row and column)."""
        try:
            start.check_values(
                self.dataset, self.rows, self.roles, recorded, self.types, self.human
            )
        except DatasetError as exc:
            params = {"row": exc.row, "column": exc.column, **(exc.params or {})}
            self.add_error(None, words(exc.code, params, family="dataset"))
            self.selection = self.total = None

    def _clean_splits(self, data: dict, roles: dict) -> None:
        """The wizard's rules for splits (submissions.forms.DatasetForm), for a split."""
        mode = data.get("split_mode")
        required = self.fields["seed"].error_messages["required"]
        if not mode and "split_mode" not in self.errors:
            self.add_error("split_mode", required)
        if mode == Draft.SplitMode.COLUMN:
            column = data.get("split_column")
            if not column:
                self.add_error("split_column", _("Choose the column that names each row's split."))
            elif roles.get(column) != "ignore":
                self.add_error(
                    "split_column",
                    _(
                        "Mark the split column as ignored, so it reaches neither input nor expected."
                    ),
                )
            elif column == data.get("recorded_column"):
                self.add_error(
                    "split_column", _("The split column cannot be the recorded outputs' column.")
                )
        elif mode == Draft.SplitMode.RATIO:
            for name in (*RATIO_FIELDS, "seed"):
                if data.get(name) is None and name not in self.errors:
                    self.add_error(name, required)
            ratios = [data.get(name) for name in RATIO_FIELDS]
            if None not in ratios and (sum(ratios) != 100 or ratios[0] == 0):
                self.add_error("train_percent", words("bad_ratios", family="dataset"))

    def start_values(self) -> dict:
        """What start.evaluation_start_for_metric takes from this form."""
        data = self.cleaned_data
        second = data.get("second") or ""
        return {
            "metric": self.metric,
            "version": data["version"],
            "dataset": self.dataset,
            # Every column named, the recorded one ignored: it reaches the metric as the
            # output, never as input or expected.
            "roles": {column: self.roles.get(column, "ignore") for column in self.dataset.columns},
            "column_types": dict(self.types),
            "recorded_column": data["recorded_column"],
            "selection": self.selection,
            "total": self.total,
            "second": second,
            "second_version": data.get("second_version") if second == "compare" else None,
            "human": dict(self.human),
            "repeats": chosen_repeats(self),
        }


class DraftEvaluateForm(RowsForm):
    """A draft's evaluation: one of its splits (as its dataset step set them) or every
    row, all of them or a sample, and whether to score each case twice."""

    second = forms.ChoiceField(
        label=_("What else"),
        choices=Evaluation.Second.choices[:2],
        widget=forms.RadioSelect,
        required=False,
    )
    repeats = repeats_field()

    def __init__(self, *args, draft: Draft, counts: dict | None = None, **kwargs) -> None:
        kwargs["initial"] = {"second": "", "repeats": REPEATS_DEFAULT, **kwargs.get("initial", {})}
        super().__init__(*args, **kwargs)
        self.draft = draft
        if counts:
            choices = [("all", split_label(_("Every row"), sum(counts.values())))]
            choices += [
                (name, split_label(SPLIT_NAMES[name], counts.get(name, 0)))
                for name in dataset_files.SPLITS
            ]
            self.fields["split"].choices = choices

    def clean(self):
        data = super().clean()
        clean_repeats(self, data)
        if self.errors:
            return data
        selection = start.draft_selection(self.draft, split=data["split"], **self.sample_values())
        self.count_rows(self.draft.dataset, selection)
        return data


def split_label(name, count: int) -> str:
    return ngettext("%(name)s (%(rows)s row)", "%(name)s (%(rows)s rows)", count) % {
        "name": name,
        "rows": format_count(count),
    }
