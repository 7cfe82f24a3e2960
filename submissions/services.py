"""Writes of the submit wizard: drafts, uploads and the check. Views call these; the rules
they follow are in submissions.rules. Submitting a draft makes a run: runs.services."""

from __future__ import annotations

import hashlib

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import ProtectedError
from django.utils import timezone
from django.utils.formats import date_format

import dataset_files
from checks import services as check_services
from checks.models import Check
from submissions import projection, storage
from submissions.datasets import (
    PREVIEW_ROWS,
    column_types,
    compute_facts,
    current_facts,
    dataset_settings,
    draft_splits,
    guess_roles,
    guess_split_column,
    sample_indices,
    table_of,
)
from submissions.models import Dataset, Draft
from submissions.rules import (
    DraftState,
    draft_artifact,
    fingerprint,
    metric_files,
    metric_source,
    resolved_engine,
    score_timeout_s,
)


class SubmitRefused(Exception):
    """A submit the draft is not ready for; `code`: check_required, already_submitted."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


# -- drafts -----------------------------------------------------------------------


def draft_create(*, owner: AbstractBaseUser) -> Draft:
    name = date_format(timezone.localtime(), "Y-m-d H:i")
    return Draft.objects.create(owner=owner, name=name)


def draft_update(draft: Draft, step: str, values: dict, *, facts: dict | None = None) -> Draft:
    """Save a step's validated values; whatever of it was kept unsaved is dropped.

    `facts`: the dataset facts the dataset step's form computed for these values."""
    for field, value in values.items():
        setattr(draft, field, value)
    draft.unsaved.pop(step, None)
    if facts is not None:
        # Marked as the user's: an upload stores facts too, from guessed column roles,
        # and the dataset step counts as done only once the user has saved it.
        draft.dataset_facts = {**facts, "saved": True}
    draft.save()
    return draft


def draft_keep_unsaved(draft: Draft, step: str, data: dict) -> None:
    """Keep a step's input that did not validate, so going back never loses it."""
    draft.unsaved[step] = data
    draft.save(update_fields=["unsaved", "updated_at"])


class DatasetInUse(Exception):
    """A dataset that evaluations or runs keep (they PROTECT the file they ran on)."""

    def __init__(self, uses: dict[str, int]) -> None:
        super().__init__(uses)
        self.uses = uses


def dataset_store(
    *, owner: AbstractBaseUser, filename: str, data: bytes, name: str = ""
) -> tuple[Dataset, bool]:
    """Keep an upload as one of `owner`'s datasets: (the dataset, whether it was stored
    before). The same bytes are stored once per user: an upload of a file the user has
    already uploaded, under any name, is that dataset, keeping its first name. A new file
    is parsed (DatasetError when it cannot be used) and refused (storage.QuotaExceeded)
    when it would take the user past their quota. Every upload path comes here: the
    wizard's dataset step, an evaluation's upload and the API's, so a file reads the same
    wherever it was uploaded. `name` (optional) is kept in place of the file's name; the
    file's name still tells its format."""
    digest = hashlib.sha256(data).hexdigest()
    found = _stored_before(owner, digest)
    if found is not None:
        return found, True
    # The file alone past the quota: refused before the work of parsing it.
    storage.admit(owner, len(data))
    table = dataset_files.parse_dataset(data, filename=filename)
    with transaction.atomic():
        # One upload of a user's at a time from here, so two at once can neither both
        # pass the quota nor both store the same file.
        get_user_model().objects.select_for_update().filter(pk=owner.pk).exists()
        found = _stored_before(owner, digest)
        if found is not None:
            return found, True
        return _dataset_row(owner, name or filename, data, digest, table), False


def dataset_create(
    *, owner: AbstractBaseUser, filename: str, data: bytes, name: str = ""
) -> Dataset:
    """dataset_store's dataset, for callers that need not know whether it was new."""
    return dataset_store(owner=owner, filename=filename, data=data, name=name)[0]


def _stored_before(owner: AbstractBaseUser, digest: str) -> Dataset | None:
    # The oldest, should an older database hold the same file twice.
    return (
        Dataset.objects.filter(owner=owner, sha256=digest)
        .defer("raw", "rows", "row_numbers")
        .order_by("pk")
        .first()
    )


def _dataset_row(
    owner: AbstractBaseUser, filename: str, data: bytes, digest: str, table: dataset_files.Table
) -> Dataset:
    preview = table.rows[:PREVIEW_ROWS]
    cost = storage.cost(raw=data, rows=table.rows, preview=preview, row_numbers=table.row_numbers)
    storage.admit(owner, cost)
    return Dataset.objects.create(
        owner=owner,
        filename=filename[:255],
        raw=data,
        sha256=digest,
        format=table.format,
        encoding=table.encoding,
        columns=table.columns,
        row_count=len(table.rows),
        preview=preview,
        rows=table.rows,
        row_numbers=table.row_numbers,
        inferred_types=dataset_files.infer_types(table),
        warnings=table.warnings,
        stored_bytes=cost,
    )


def dataset_upload(draft: Draft, *, filename: str, data: bytes) -> Dataset:
    """Make an upload the draft's dataset (stored as dataset_store stores it); DatasetError
    when it cannot be used.

    The column roles start from a guess by name, each column's type is the one read
    from its values, and a column named "split" whose values all name splits is taken
    as the split column.
    """
    dataset, _reused = dataset_store(owner=draft.owner, filename=filename, data=data)
    table = table_of(dataset)
    with transaction.atomic():
        draft.dataset = dataset
        draft.roles = guess_roles(table.columns)
        draft.column_types = {}
        split_column = guess_split_column(table)
        if split_column:
            draft.split_mode, draft.split_column = Draft.SplitMode.COLUMN, split_column
        else:
            draft.split_mode, draft.split_column = Draft.SplitMode.RATIO, ""
        draft.unsaved.pop("dataset", None)
        draft.dataset_facts = compute_facts(dataset, **dataset_settings(draft))
        draft.save()
    return dataset


def dataset_uses(dataset: Dataset) -> dict[str, int]:
    """What keeps the dataset: its evaluations and runs (asked through their relations,
    as the wizard is below those apps)."""
    return {"evaluations": dataset.evaluations.count(), "runs": dataset.runs.count()}


@transaction.atomic
def dataset_delete(dataset: Dataset) -> None:
    """Delete a dataset; DatasetInUse (nothing deleted) while evaluations or runs keep it.
    Drafts that had it lose it (their dataset step is to do again)."""
    locked = Dataset.objects.select_for_update().only("pk").get(pk=dataset.pk)
    uses = dataset_uses(locked)
    if any(uses.values()):
        raise DatasetInUse(uses)
    try:
        # In a savepoint: one started after the count above still stops it here.
        with transaction.atomic():
            locked.delete()
    except ProtectedError:
        raise DatasetInUse(dataset_uses(locked)) from None


@transaction.atomic
def draft_check_start(draft: Draft) -> Check:
    """Start the contract check on 3 train cases; CheckRefused past the user's limits."""
    locked = Draft.objects.select_for_update().get(pk=draft.pk)
    check_services.check_admit(locked.owner)
    sample = current_facts(locked)["sample_cases"]
    source = metric_source(locked) or ""
    check = check_services.check_create(
        owner=locked.owner,
        source=source,
        cases=sample,
        timeout_s=score_timeout_s(locked),
        metric_version=locked.saved_version,
        reflection_model=locked.reflection_model,
        metric_model=locked.metric_model,
        artifact=draft_artifact(locked),
        task_model=locked.task_model,
        files=metric_files(locked),
    )
    # What it ran, part by part: a stale check then says what changed (rules.changes).
    parts = DraftState(locked).parts
    Check.objects.filter(pk=check.pk).update(draft_parts=parts)
    check.draft_parts = parts
    locked.contract_check = check
    locked.check_fingerprint = fingerprint(locked)
    locked.save(update_fields=["contract_check", "check_fingerprint", "updated_at"])
    draft.contract_check = check
    draft.check_fingerprint = locked.check_fingerprint
    return check


# -- submit -----------------------------------------------------------------------


def run_config(draft: Draft, *, split_rows: bool = True) -> dict:
    """The run configuration: what the run's run.json records.

    split_rows=False leaves out each split's row list (the counts stay), which for a
    split column would read every row: for a summary to show, not to run."""
    assert draft.dataset is not None and draft.contract_check is not None
    splits = draft_splits(draft) if split_rows else None
    counts = dataset_files.counts(splits) if splits else current_facts(draft)["counts"]
    version = draft.saved_version
    return {
        "format": 1,
        "name": draft.name,
        "artifact": {
            "kind": draft.artifact_kind,
            "content": draft.artifact_content,
            "program": draft.program_source if draft.artifact_kind != "prompt" else None,
        },
        "dataset": {
            "filename": draft.dataset.filename,
            "sha256": draft.dataset.sha256,
            "format": draft.dataset.format,
            "encoding": draft.dataset.encoding,
            "rows": draft.dataset.row_count,
            "columns": {
                column: draft.roles.get(column, "ignore") for column in draft.dataset.columns
            },
            # The type each column's values reach the metric with (a run configuration
            # without it was checked, and runs, on the values as read).
            "types": column_types(draft.dataset, draft.column_types),
            "splits": {
                "mode": draft.split_mode,
                "ratios": None
                if draft.split_mode == Draft.SplitMode.COLUMN
                else {
                    "train": draft.train_percent / 100,
                    "validation": draft.validation_percent / 100,
                    "test": draft.test_percent / 100,
                },
                "seed": draft.seed if draft.split_mode == Draft.SplitMode.RATIO else None,
                "column": draft.split_column or None,
                "counts": counts,
                **({"rows": splits} if split_rows else {}),
            },
        },
        "metric": {
            "file": "metric.py",
            "sha256": hashlib.sha256((metric_source(draft) or "").encode()).hexdigest(),
            "metric_id": version.metric_id if version else None,
            "version": version.number if version else None,
        },
        "models": {
            "task": draft.task_model,
            "reflection": draft.reflection_model,
            "metric": draft.metric_model or draft.reflection_model,
            "metric_chosen": draft.metric_model or None,
        },
        "engine": {"chosen": draft.engine, "resolved": resolved_engine(draft)},
        # The train cases GEPA compares a candidate and its proposal on (gepa's and DSPy
        # GEPA's reflection_minibatch_size).
        "minibatch": draft.minibatch,
        "budget": {"metric_calls": draft.budget, "usd": float(draft.budget_usd)},
        "check": {
            "id": draft.contract_check.pk,
            "status": draft.contract_check.status,
            "fingerprint": draft.check_fingerprint,
            "sample_rows": sample_indices(draft),
        },
        # What the run is projected to cost and take, from the draft's latest finished
        # evaluation, pinned here with the rest (the bundle's projection.json).
        "projection": projection.for_draft(draft, counts=counts),
    }


@transaction.atomic
def draft_delete(draft: Draft) -> bool:
    """Delete a draft that was never submitted; False (and nothing deleted) for one that
    was. Under the row lock a submit takes, so the two cannot cross."""
    locked = Draft.objects.select_for_update().get(pk=draft.pk)
    # The wizard is below the runs app: it asks through the draft's reverse relation.
    if Draft.objects.filter(pk=locked.pk, run__isnull=False).exists():
        return False
    locked.delete()
    return True
