"""Starting an evaluation from the web side: which of a dataset's rows, what a case costs,
and the admission and creation of evaluations.services, from the playground (the
dataset's recorded outputs are scored) and from a wizard draft (its artifact runs first).

The rows are counted here, before admission, because the limits are on cases: the count
and the stored selection are the same rows the worker later reads (evaluations.selection).
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

import dataset_files
from checks.models import Check
from evaluations import selection as evaluation_selection
from evaluations import services as evaluation_services
from evaluations.models import Evaluation
from metrics.models import Metric, MetricVersion
from submissions import datasets, rules
from submissions.datasets import (
    guess_roles,
    guess_split_column,
    inferred_types,
    preview_cells,
    table_of,
)
from submissions.models import Dataset, Draft
from wording import format_count, format_usd

# Column names that usually hold the outputs a run recorded (compared case-insensitively).
RECORDED_NAMES = (
    "output",
    "outputs",
    "response",
    "prediction",
    "predicted",
    "completion",
    "generation",
    "model_output",
    "recorded_output",
)
# Case statuses of a check whose score() was called (a pending or skipped case cost nothing
# because it never ran, which says nothing about what a case costs).
RAN = ("valid", "invalid", "error", "timeout")


# -- datasets ---------------------------------------------------------------------


def datasets_for_user(user: AbstractBaseUser) -> QuerySet[Dataset]:
    """The user's uploaded datasets, newest first, without their rows."""
    return (
        Dataset.objects.filter(owner=user)
        .defer("raw", "rows", "row_numbers")
        .order_by("-created_at", "-pk")
    )


def get_dataset_for_user(user: AbstractBaseUser, pk: object) -> Dataset:
    """The user's dataset, or 404: another user's dataset, or no id at all, is none of theirs."""
    try:
        number = int(str(pk))
    except ValueError:
        raise Http404 from None
    return get_object_or_404(Dataset.objects.defer("raw"), pk=number, owner=user)


def preview_rows(dataset: Dataset, types: dict[str, str] | None = None) -> list[list[dict]]:
    """The dataset's first rows as the wizard's preview shows them: each value as the
    metric gets it under `types` (by default each column's type as read)."""
    return preview_cells(dataset, types or inferred_types(dataset))


def guess_recorded_column(columns: list[str]) -> str:
    """The column that most likely holds recorded outputs, by its name; "" when none does."""
    by_name = {column.strip().casefold(): column for column in reversed(columns)}
    return next((by_name[name] for name in RECORDED_NAMES if name in by_name), "")


def guessed_settings(dataset: Dataset) -> dict:
    """The playground form's first values for a dataset: roles guessed by name (as the
    wizard's upload guesses them), each column's type as read, the recorded column
    ignored as a role, and a column named "split" taken as the split column when its
    values all name splits."""
    roles = guess_roles(dataset.columns)
    recorded = guess_recorded_column(dataset.columns)
    if recorded:
        roles[recorded] = "ignore"
    split_column = guess_split_column(table_of(dataset))
    return {
        "roles": roles,
        "types": inferred_types(dataset),
        "recorded_column": recorded,
        "split_column": split_column,
    }


# -- rows -------------------------------------------------------------------------


def selected_rows(dataset: Dataset, selection: dict) -> list[int]:
    """The rows `selection` picks; DatasetError when its split cannot be made."""
    return evaluation_selection.select_rows(table_of(dataset), selection)


def check_values(
    dataset: Dataset,
    rows: list[int],
    roles: dict,
    recorded: str,
    types: dict[str, str],
    human: dict | None = None,
) -> None:
    """DatasetError for the first value of the rows an evaluation scores that does not
    fit its column's type (the input, expected and recorded output columns), or its
    human column's scale or labels, with its row and column: refused at the start
    rather than found by the worker."""
    table = table_of(dataset)
    inputs, outputs = dataset_files.role_columns(table, roles)
    for index in rows:
        row, file_row = table.rows[index], table.file_row(index)
        dataset_files.case_of_row(
            row, inputs, outputs, recorded or None, types=types, file_row=file_row
        )
        dataset_files.human_of_row(row, human or {}, file_row)


def human_settings(dataset: Dataset, roles: dict, declared: dict | None = None) -> dict:
    """How the dataset's human columns under `roles` are read (dataset_files.human), a
    user's declared scale, classes and threshold over what the rows show; DatasetError
    for columns that cannot be read so."""
    declared = declared or {}
    return dataset_files.human_settings(
        table_of(dataset),
        roles,
        scale=declared.get("scale"),
        classes=declared.get("classes"),
        threshold=declared.get("threshold"),
    )


def draft_human(draft: Draft) -> dict:
    """A draft's human columns as its evaluations read them: as its rows show them (the
    wizard declares no scale); {} when it has none, or they cannot be read."""
    if draft.dataset is None:
        return {}
    try:
        return human_settings(draft.dataset, dict(draft.roles))
    except dataset_files.DatasetError:
        return {}


def draft_selection(draft: Draft, *, split: str, sample: int, sample_seed: int) -> dict:
    """A selection under the draft's own split settings (what its check and its run use)."""
    column = draft.split_mode == Draft.SplitMode.COLUMN
    return evaluation_selection.default_selection(
        split=split,
        mode=draft.split_mode,
        ratios=[draft.train_percent, draft.validation_percent, draft.test_percent],
        seed=draft.seed,
        column=draft.split_column if column else "",
        sample=sample,
        sample_seed=sample_seed,
    )


# -- cost -------------------------------------------------------------------------


def _cost(usage: object) -> float | None:
    value = usage.get("cost_usd") if isinstance(usage, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def per_case_usd(check: Check | None, *, with_run: bool, scorings: int = 1) -> float | None:
    """What one case of `check` cost in model calls on average: the metric's llm() calls
    (`scorings` times: a case scored K times pays for K), and with `with_run` the
    artifact's too (once: its output is scored K times, not run again). None when the
    check measured no cost at all.

    A case with no usage made no model call (contract.metering), so it counts as free;
    a check whose cases ran and made none measured a metric that costs nothing (0.0)."""
    if check is None or not check.result:
        return None
    costs: list[float] = []
    for case in check.result.get("cases") or []:
        if case.get("status") not in RAN:
            continue
        metric = _cost(case.get("usage"))
        parts = [None if metric is None else metric * scorings]
        if with_run:
            parts.append(_cost((case.get("run") or {}).get("usage")))
        known = [part for part in parts if part is not None]
        costs.append(sum(known))
    if not costs:
        return None  # no case ran: nothing was measured
    return sum(costs) / len(costs)


def latest_finished_check(version: MetricVersion | None) -> Check | None:
    if version is None:
        return None
    return (
        Check.objects.filter(metric_version=version, status__in=Check.FINAL)
        .order_by("-created_at", "-pk")
        .first()
    )


def metric_cost(version: MetricVersion, scorings: int = 1) -> float | None:
    """A case's cost when the recorded outputs are scored `scorings` times: the metric's
    calls only."""
    return per_case_usd(latest_finished_check(version), with_run=False, scorings=scorings)


def draft_cost(draft: Draft, scorings: int = 1) -> float | None:
    """A case's cost when the draft's artifact runs first and its output is scored
    `scorings` times: its latest finished check measured both; else the saved metric's
    latest check, the metric's calls only."""
    check = draft.contract_check
    if check is not None and check.is_final:
        found = per_case_usd(check, with_run=True, scorings=scorings)
        if found is not None:
            return found
    return per_case_usd(
        latest_finished_check(draft.saved_version), with_run=False, scorings=scorings
    )


def cost_note(cases: int, per_case: float | None, scorings: int = 1) -> dict:
    """What the form says of the cost before starting: the projection admission makes,
    its amounts and count written for the reader. `per_case`: a case's cost with its
    `scorings` scorings."""
    projection = evaluation_services.projected_cost(cases, per_case, scorings)
    return {
        "scorings": scorings,
        "cases": cases,
        "cases_text": format_count(cases),
        "per_case": None if per_case is None else format_usd(per_case),
        "free": per_case == 0,
        "projected": None if projection["usd"] is None else format_usd(projection["usd"]),
        "max": format_usd(projection["max_usd"]),
    }


# -- starting ---------------------------------------------------------------------


@transaction.atomic
def evaluation_start_for_metric(
    owner: AbstractBaseUser,
    *,
    metric: Metric,
    version: MetricVersion,
    dataset: Dataset,
    roles: dict,
    recorded_column: str,
    selection: dict,
    total: int,
    column_types: dict[str, str] | None = None,
    second: str = "",
    second_version: MetricVersion | None = None,
    human: dict | None = None,
    repeats: int = 2,
) -> Evaluation:
    """Score the dataset's recorded outputs with `version` (EvaluationRefused past the
    user's limits); with `second` "repeat", each case `repeats` times (admitted at
    that many times the cost, a version compared at twice). `total`: the rows `selection` picks, counted by the caller;
    `column_types`: each column's type (a column it does not name: its type as read);
    `human`: how its human columns are read (human_settings), {} when it has none."""
    scorings = evaluation_services.scorings_per_case(second, repeats)
    projected = evaluation_services.evaluation_admit(
        owner, cases=total, per_case_usd=metric_cost(version, scorings), scorings=scorings
    )
    compare = second == Evaluation.Second.COMPARE and second_version is not None
    return evaluation_services.evaluation_create(
        owner=owner,
        dataset=dataset,
        selection=selection,
        roles=roles,
        column_types=column_types or {},
        total=total,
        source=version.source,
        recorded_column=recorded_column,
        metric_version=version,
        second=second,
        second_source=second_version.source if compare else "",
        second_version=second_version if compare else None,
        human=human,
        repeats=repeats,
        reflection_model=metric.reflection_model,
        metric_model=metric.metric_model,
        timeout_s=metric.timeout_s,
        projected=projected,
    )


@transaction.atomic
def evaluation_start_for_draft(
    draft: Draft, *, selection: dict, total: int, second: str = "", repeats: int = 2
) -> Evaluation:
    """Run the draft's artifact and then its metric on the rows `selection` picks, with
    the draft's roles, column types and models, as its contract check does on three
    rows; with `second` "repeat", its output scored `repeats` times."""
    scorings = evaluation_services.scorings_per_case(second, repeats)
    projected = evaluation_services.evaluation_admit(
        draft.owner, cases=total, per_case_usd=draft_cost(draft, scorings), scorings=scorings
    )
    return evaluation_services.evaluation_create(
        owner=draft.owner,
        dataset=draft.dataset,
        selection=selection,
        roles=dict(draft.roles),
        column_types=datasets.column_types(draft.dataset, draft.column_types),
        total=total,
        source=rules.metric_source(draft) or "",
        metric_version=draft.saved_version,
        second=second,
        artifact=rules.draft_artifact(draft),
        task_model=draft.task_model,
        reflection_model=draft.reflection_model,
        metric_model=draft.metric_model,
        timeout_s=rules.score_timeout_s(draft),
        draft=draft,
        projected=projected,
        human=draft_human(draft),
        repeats=repeats,
    )


def latest_evaluation(draft: Draft) -> Evaluation | None:
    return Evaluation.objects.filter(draft=draft).order_by("-created_at", "-pk").first()
