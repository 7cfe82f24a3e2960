"""A run's draft as one JSON body: everything the submit wizard asks, step by step, sent at
once. Each part goes through its step's own form (submissions.forms), so the API takes
what the wizard takes and refuses what it refuses, in its words; the refused field is
named as the body names it ("splits.train_percent", "roles.question")."""

from __future__ import annotations

from decimal import Decimal

from django.db import transaction
from django.http import Http404
from django.utils import translation
from ninja import Field

from api.errors import ApiError
from api.forms import cleaned
from api.schemas import BodyIn
from evaluations import start
from metrics import selectors as metric_selectors
from providers.projection import MINIBATCH_LIMITS, REFLECTION_MINIBATCH
from submissions import rules, services
from submissions.datasets import guess_roles
from submissions.forms import (
    MINIBATCH_HELP,
    SPLIT_COLUMN_CODES,
    ArtifactForm,
    DatasetForm,
    MetricForm,
    ModelsForm,
)
from submissions.models import FORM_STEPS, Draft


class ArtifactIn(BodyIn):
    kind: str = Field(description="prompt, python or dspy")
    content: str = Field(
        "", description="A prompt template's text, or the text a Python program's run() gets."
    )
    program: str = Field("", description="program.py, for a Python or a DSPy program.")


class SplitsIn(BodyIn):
    column: str = Field(
        "", description="A column naming each row's split (train, validation, test); else ratios."
    )
    train_percent: int = 70
    validation_percent: int = 15
    test_percent: int = 15
    seed: int = Field(0, description="The same seed gives the same splits and check cases.")


class MetricRefIn(BodyIn):
    metric_id: int | None = Field(None, description="A saved metric…")
    version: int | None = Field(None, description="…this version of it (its latest when omitted)…")
    source: str | None = Field(None, description="…or a metric.py written here.")


class ModelsIn(BodyIn):
    task: str = Field("", description="The model the artifact calls.")
    reflection: str = Field("", description="The model that proposes new candidates.")
    metric: str = Field("", description="The model behind llm() in metric.py; blank: reflection.")


class BudgetIn(BodyIn):
    metric_calls: int = 500
    usd: Decimal | None = Field(None, description="The most the run may spend (default 5).")


def _english(text) -> str:
    """A page's help text as the API's description: the same words, in English whatever
    language the request that first loads this module asked for."""
    with translation.override("en"):
        return str(text)


class DraftIn(BodyIn):
    name: str = Field("", max_length=120, description="Blank: the date and time.")
    artifact: ArtifactIn
    dataset_id: int = Field(description="An uploaded dataset's id (POST /api/v1/datasets).")
    roles: dict[str, str] | None = Field(
        None,
        description="Each column's role: input, output or ignore. A column left out is "
        "ignored; without roles, they are guessed from the names as the wizard does.",
    )
    types: dict[str, str] | None = Field(
        None, description="A column's type (number, text, json); else the type as read."
    )
    splits: SplitsIn = Field(default_factory=SplitsIn)
    metric: MetricRefIn
    models: ModelsIn
    engine: str = Field("auto", description="auto, gepa or dspy_gepa")
    budget: BudgetIn = Field(default_factory=BudgetIn)
    minibatch: int | None = Field(
        None,
        description=f"Minibatch size, {MINIBATCH_LIMITS[0]} to {MINIBATCH_LIMITS[1]} (default "
        f"{REFLECTION_MINIBATCH}). {_english(MINIBATCH_HELP)}",
    )


# Where each dataset problem (dataset_files' codes) points in the body.
DATASET_PROBLEM_FIELDS = {
    "no_input_column": "roles",
    "not_a_number": "types",
    "not_json": "types",
    "too_few_train_cases": "splits.train_percent",
    **{code: "splits.column" for code in SPLIT_COLUMN_CODES},
}


def _artifact(part: ArtifactIn) -> dict:
    form = ArtifactForm(
        {
            "artifact_kind": part.kind,
            "artifact_content": part.content,
            "program_source": part.program,
        }
    )
    names = {
        "artifact_kind": "artifact.kind",
        "artifact_content": "artifact.content",
        "program_source": "artifact.program",
    }
    data = cleaned(form, names=names)
    return {name: data[name] for name in names}


def _dataset(payload: DraftIn, owner) -> tuple[dict, dict]:
    """The dataset step's values and the facts its form found."""
    try:
        dataset = start.get_dataset_for_user(owner, payload.dataset_id)
    except Http404:
        raise ApiError(404, "not_found", field="dataset_id") from None
    columns = dataset.columns
    roles = guess_roles(columns) if payload.roles is None else payload.roles
    types = payload.types or {}
    for part, named in (("roles", roles), ("types", types)):
        for column in named:
            if column not in columns:
                raise ApiError(
                    422,
                    "unknown_column",
                    params={"column": column},
                    family="dataset",
                    field=f"{part}.{column}",
                )
    splits = payload.splits
    data = {
        "split_mode": Draft.SplitMode.COLUMN if splits.column else Draft.SplitMode.RATIO,
        "train_percent": splits.train_percent,
        "validation_percent": splits.validation_percent,
        "test_percent": splits.test_percent,
        "seed": splits.seed,
        "split_column": splits.column,
    }
    for index, column in enumerate(columns):
        data[f"role_{index}"] = roles.get(column, "ignore")
        data[f"type_{index}"] = types.get(column, "")
    form = DatasetForm(data, dataset=dataset)
    if not form.is_valid():
        _dataset_refused(form)
    return {"dataset": dataset, **form.values()}, form.facts


def _dataset_refused(form: DatasetForm) -> None:
    """What the rows make of the settings (no input column, a value that is not of its
    type, too few train rows) as a dataset problem with its code; else the form's error."""
    problem = (form.facts or {}).get("problem")
    if problem is not None:
        code, params = problem["code"], problem["params"]
        field = DATASET_PROBLEM_FIELDS.get(code, "dataset_id")
        if field == "types" and params.get("column"):
            field = f"types.{params['column']}"
        raise ApiError(422, code, params=params, family="dataset", field=field)
    cleaned(form, names=form_names(form))


def form_names(form: DatasetForm) -> dict:
    names = {"split_mode": "splits.column", "split_column": "splits.column"}
    for name in ("train_percent", "validation_percent", "test_percent", "seed"):
        names[name] = f"splits.{name}"
    names.update({name: f"roles.{column}" for name, column in form.role_names})
    names.update({name: f"types.{column}" for name, column in form.type_names})
    return names


def _metric(part: MetricRefIn, owner) -> dict:
    if (part.metric_id is None) == (part.source is None):
        raise ApiError(422, "metric_or_source", field="metric")
    if part.metric_id is not None:
        try:
            metric = metric_selectors.get_metric_for_user(owner, part.metric_id)
            version = (
                metric.latest_version
                if part.version is None
                else metric_selectors.get_version_for_user(owner, metric.pk, part.version)
            )
        except Http404:
            raise ApiError(404, "not_found", field="metric.metric_id") from None
        data = {"metric_mode": Draft.MetricMode.SAVED, "metric_version": version.pk}
    else:
        data = {"metric_mode": Draft.MetricMode.INLINE, "inline_source": part.source}
    names = {
        "metric_mode": "metric",
        "metric_version": "metric.version",
        "inline_source": "metric.source",
    }
    found = cleaned(MetricForm(data, owner=owner), names=names)
    return {
        "metric_mode": found["metric_mode"],
        "metric_version": found.get("metric_version"),
        "inline_source": found.get("inline_source", ""),
    }


def _models(payload: DraftIn, kind: str) -> dict:
    data = {
        "task_model": payload.models.task,
        "reflection_model": payload.models.reflection,
        "metric_model": payload.models.metric,
        "engine": payload.engine,
        "budget": payload.budget.metric_calls,
        # A Decimal, not text: the form reads text in the reader's number format.
        "budget_usd": payload.budget.usd,
        "minibatch": payload.minibatch,
    }
    names = {
        "task_model": "models.task",
        "reflection_model": "models.reflection",
        "metric_model": "models.metric",
        "engine": "engine",
        "budget": "budget.metric_calls",
        "budget_usd": "budget.usd",
        "minibatch": "minibatch",
    }
    found = cleaned(ModelsForm(data, kind=kind), names=names)
    return {name: found[name] for name in names}


def steps_of(payload: DraftIn, owner) -> list[tuple[str, dict, dict | None]]:
    """(step, its values, the dataset facts for the dataset step) for each form step, each
    validated by its form; ApiError at the first part refused."""
    artifact = _artifact(payload.artifact)
    artifact["name"] = " ".join(payload.name.split())[:120]
    if not artifact["name"]:
        del artifact["name"]
    dataset, facts = _dataset(payload, owner)
    metric = _metric(payload.metric, owner)
    models = _models(payload, artifact["artifact_kind"])
    return [
        ("artifact", artifact, None),
        ("dataset", dataset, facts),
        ("metric", metric, None),
        ("models", models, None),
    ]


# The body's part for each step, for a step problem found once the steps are saved.
STEP_FIELDS = {
    "artifact": "artifact",
    "dataset": "dataset_id",
    "metric": "metric",
    "models": "models",
}


@transaction.atomic
def draft_save(payload: DraftIn, owner, draft: Draft | None = None) -> Draft:
    """A new draft of `owner`'s (or `draft` changed) holding everything `payload` says,
    saved step by step through the wizard's own service; nothing is saved when a part is
    refused."""
    steps = steps_of(payload, owner)
    if draft is None:
        draft = services.draft_create(owner=owner)
    for step, values, facts in steps:
        services.draft_update(draft, step, values, facts=facts)
    found = rules.problems(draft)
    step = next((s for s in FORM_STEPS if s in found), None)
    if step is not None:  # the forms hold these rules too: a guard, not a path
        problem = found[step]
        raise ApiError(
            422, problem.code, params=problem.params, family="step", field=STEP_FIELDS[step]
        )
    return draft
