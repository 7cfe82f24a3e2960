"""What POST /evaluations sends, as the playground's start form (MetricEvaluateForm) takes
it: the form is filled with the page's first values (its guesses for this dataset), then
with what the request names, and validated by the form itself, so the API has the page's
limits, rules and words."""

from __future__ import annotations

from django.db.models import QuerySet
from ninja import Field

from api.errors import ApiError
from api.schemas import BodyIn
from dataset_files.human import human_role_of
from evaluations.start_forms import MetricEvaluateForm
from metrics.models import Metric, MetricVersion
from submissions.datasets import guess_roles
from submissions.models import Dataset

# A version number no metric has: the form refuses it in its own words.
NO_VERSION = 0


class EvaluationIn(BodyIn):
    metric_id: int = Field(description="Your metric whose version scores the recorded outputs.")
    version: int | None = Field(None, description="Its version number (its latest when omitted).")
    dataset_id: int = Field(description="One of your datasets (POST /datasets).")
    columns: dict[str, str] | None = Field(
        None,
        description="Roles by column name: input, output (the expected value), ignore, "
        "or a person's judgement of the row: human_score, human_label, human_note, or "
        "human (a score when its values are numbers, more than two different, else a label). "
        "A column not named keeps its guessed role; the recorded column and a split "
        "column are ignored unless named.",
    )
    recorded_column: str | None = Field(
        None, description="The column of recorded outputs to score (else the guessed one)."
    )
    types: dict[str, str] | None = Field(
        None, description="Types by column name: number, text or json (else as read)."
    )
    split: str | None = Field(None, description="all (the default), train, validation or test.")
    split_mode: str | None = Field(None, description="ratio or column (for a split).")
    train_percent: int | None = None
    validation_percent: int | None = None
    test_percent: int | None = None
    seed: int | None = Field(None, description="The ratio split's seed.")
    split_column: str | None = Field(None, description="The column naming each row's split.")
    count: str | None = Field(
        None, description="sample (the default): a seeded sample; every: every row."
    )
    sample: int | None = Field(None, description="Rows in the sample.")
    sample_seed: int | None = None
    second: str | None = Field(
        None,
        description="'' (score once, the default), repeat (score each case several times, "
        "`repeats` in all, to measure its noise) or compare (score with second_version too).",
    )
    repeats: int | None = Field(
        None,
        description="With repeat: how many times each case is scored in all, 2 to 5 "
        "(default 3). Each scoring costs what the first does.",
    )
    second_version: int | None = Field(None, description="With compare: the other version.")
    human_scale: list[float] | None = Field(
        None,
        description="A human_score column's scale [lowest, highest] (else its rows' "
        "lowest and highest values).",
    )
    human_classes: list[str] | None = Field(
        None,
        description="A human_label column's labels, lowest first (else read from its rows: "
        "fail before pass, numbers in order, else alphabetical).",
    )
    human_threshold: float | None = Field(
        None,
        description="The metric score from which its verdict is the higher label (0.5).",
    )


# The form's fields the request names as they are.
PLAIN = (
    "recorded_column",
    "split",
    "split_mode",
    "train_percent",
    "validation_percent",
    "test_percent",
    "seed",
    "split_column",
    "count",
    "sample",
    "sample_seed",
    "second",
    "repeats",
)


def _version_pk(versions: QuerySet[MetricVersion], number: int) -> int:
    found = versions.filter(number=number).values_list("pk", flat=True).first()
    return found if found is not None else NO_VERSION


def _by_column(values: dict[str, str] | None, dataset: Dataset, field: str) -> dict[str, str]:
    """`values` by column, each column one of the dataset's (else refused, naming it)."""
    for column in values or {}:
        if column not in dataset.columns:
            raise ApiError(
                422,
                "unknown_column",
                params={"column": column},
                family="dataset",
                field=f"{field}.{column}",
            )
    return dict(values or {})


def start_form(
    payload: EvaluationIn, metric: Metric, dataset: Dataset
) -> tuple[MetricEvaluateForm, dict[str, str]]:
    """The page's form bound to what the request asks, and the API's names of its
    per-column fields (for the field of an error)."""
    first = MetricEvaluateForm(metric=metric, dataset=dataset).initial
    data: dict[str, object] = {
        name: first.get(name) for name in (*PLAIN, "version", "second_version")
    }
    given = payload.dict(exclude_none=True)
    data.update({name: given[name] for name in PLAIN if name in given})
    versions = metric.versions.all()
    if payload.version is not None:
        data["version"] = _version_pk(versions, payload.version)
    if payload.second_version is not None:
        data["second_version"] = _version_pk(versions, payload.second_version)
    if payload.human_scale is not None:
        # Two numbers, else the form's own words ("Give both ends of the scale").
        ends = list(payload.human_scale) if len(payload.human_scale) == 2 else [None, None]
        if len(payload.human_scale) not in (0, 2):
            ends[0] = payload.human_scale[0]
        data["human_scale_lo"], data["human_scale_hi"] = ends
    if payload.human_classes is not None:
        data["human_classes"] = ", ".join(payload.human_classes)
    if payload.human_threshold is not None:
        data["human_threshold"] = payload.human_threshold
    roles = _roles(payload, dataset, first)
    types = _by_column(payload.types, dataset, "types")
    names = {}
    for index, column in enumerate(dataset.columns):
        data[f"role_{index}"] = roles[column]
        data[f"type_{index}"] = types.get(column, first[f"type_{index}"])
        names[f"role_{index}"] = f"columns.{column}"
        names[f"type_{index}"] = f"types.{column}"
    bound = {name: "" if value is None else value for name, value in data.items()}
    return MetricEvaluateForm(bound, metric=metric, dataset=dataset), names


def _roles(payload: EvaluationIn, dataset: Dataset, first: dict) -> dict[str, str]:
    """Each column's role: the one the request names, else the page's guess by its name;
    the column of recorded outputs and a split column are ignored unless named, as they
    must be (the form says so for one that is not)."""
    named = _by_column(payload.columns, dataset, "columns")
    roles = guess_roles(dataset.columns)
    recorded = payload.recorded_column or first.get("recorded_column")
    split_column = payload.split_column or first.get("split_column")
    for column in (recorded, split_column):
        if column in roles:
            roles[column] = "ignore"
    for column, role in named.items():
        if role == "human":  # the command line's --column NAME=human: read its values
            values = [row.get(column) for row in dataset.rows]
            named[column] = human_role_of(values)
    return {column: named.get(column, roles[column]) for column in dataset.columns}
