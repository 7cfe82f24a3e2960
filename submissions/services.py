"""Writes and the rules of the submit wizard. Views call these; nothing here renders.

A draft is complete step by step (`problems`): each step's saved values are checked
again whenever they are read, so a later step can never rest on an earlier one that
stopped being valid (a metric version deleted, a dataset replaced).

The contract check gates the submit: a check counts for a draft only when it passed
and its fingerprint, the hash of everything it ran (artifact, dataset, column roles,
splits, metric, models), is the draft's current one. Any change makes it stale.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.formats import date_format

import dataset_files
from contract.artifacts import Artifact, ArtifactError
from contract.static import static_check
from dataset_files import DatasetError, Table
from metrics_app import services as metric_services
from metrics_app.models import Check
from submissions.models import STEPS, ArtifactKind, Dataset, Draft, Engine, Run

SAMPLE_SIZE = 3
PREVIEW_ROWS = 10
# The engine Auto picks for each artifact kind (docs: Engines, Auto).
AUTO_ENGINE = {
    ArtifactKind.PROMPT: Engine.GEPA,
    ArtifactKind.PYTHON: Engine.GEPA,
    ArtifactKind.DSPY: Engine.DSPY_GEPA,
}
# Which engine can optimize which kind (docs: Engines, "Works with").
ENGINE_KINDS = {
    Engine.GEPA: (ArtifactKind.PROMPT, ArtifactKind.PYTHON),
    Engine.DSPY_GEPA: (ArtifactKind.DSPY,),
    Engine.AUTO: tuple(ArtifactKind),
}
# Column names that usually hold the reference answer, or nothing the artifact needs.
OUTPUT_NAMES = {"expected", "label", "answer", "output", "target", "gold", "reference"}
IGNORED_NAMES = {"id", "split", "notes", "note", "timestamp", "created_at"}


class SubmitRefused(Exception):
    """A submit the draft is not ready for; `code`: check_required, already_submitted."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class Problem:
    """Why a step is not complete: a code and its parameters (submissions.text words it)."""

    step: str
    code: str
    params: dict


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
        draft.dataset_facts = facts
    draft.save()
    return draft


def draft_keep_unsaved(draft: Draft, step: str, data: dict) -> None:
    """Keep a step's input that did not validate, so going back never loses it."""
    draft.unsaved[step] = data
    draft.save(update_fields=["unsaved", "updated_at"])


def dataset_upload(draft: Draft, *, filename: str, data: bytes) -> Dataset:
    """Parse an upload and make it the draft's dataset; DatasetError when it cannot be used.

    The column roles start from a guess by name, and a column named "split" whose
    values all name splits is taken as the split column.
    """
    table = dataset_files.parse_dataset(data, filename=filename)
    with transaction.atomic():
        dataset = Dataset.objects.create(
            owner=draft.owner,
            filename=filename[:255],
            raw=data,
            sha256=hashlib.sha256(data).hexdigest(),
            format=table.format,
            encoding=table.encoding,
            columns=table.columns,
            row_count=len(table.rows),
            preview=table.rows[:PREVIEW_ROWS],
            rows=table.rows,
            row_numbers=table.row_numbers,
            warnings=table.warnings,
        )
        draft.dataset = dataset
        draft.roles = guess_roles(table.columns)
        split_column = next((c for c in table.columns if c.strip().casefold() == "split"), "")
        if split_column and _names_splits(table, split_column):
            draft.split_mode, draft.split_column = Draft.SplitMode.COLUMN, split_column
        else:
            draft.split_mode, draft.split_column = Draft.SplitMode.RATIO, ""
        draft.unsaved.pop("dataset", None)
        draft.dataset_facts = compute_facts(dataset, **dataset_settings(draft))
        draft.save()
    return dataset


def guess_roles(columns: list[str]) -> dict[str, str]:
    roles = {}
    for column in columns:
        name = column.strip().casefold()
        if name in OUTPUT_NAMES:
            roles[column] = "output"
        elif name in IGNORED_NAMES or name.endswith("_id"):
            roles[column] = "ignore"
        else:
            roles[column] = "input"
    return roles


def _names_splits(table: Table, column: str) -> bool:
    try:
        dataset_files.split_by_column(table, column)
    except DatasetError:
        return False
    return True


def table_of(dataset: Dataset) -> Table:
    return Table(
        columns=list(dataset.columns),
        rows=list(dataset.rows),
        format=dataset.format,
        encoding=dataset.encoding,
        warnings=list(dataset.warnings),
        row_numbers=list(dataset.row_numbers),
    )


def split_rows(
    dataset: Dataset, *, mode: str, ratios: tuple[int, int, int], seed: int, column: str
) -> dict[str, list[int]]:
    """Row indices of each split; DatasetError for splits that cannot be made."""
    if mode == Draft.SplitMode.COLUMN:
        return dataset_files.split_by_column(table_of(dataset), column)
    train, validation, test = (value / 100 for value in ratios)
    return dataset_files.split_by_ratio(
        dataset.row_count, train=train, validation=validation, test=test, seed=seed
    )


def dataset_settings(draft: Draft) -> dict:
    """The draft's dataset step values, as compute_facts takes them."""
    return {
        "roles": draft.roles,
        "mode": draft.split_mode,
        "ratios": (draft.train_percent, draft.validation_percent, draft.test_percent),
        "seed": draft.seed,
        "column": draft.split_column,
    }


def _facts_key(dataset_id: int, settings: dict) -> str:
    text = json.dumps([dataset_id, settings], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def compute_facts(
    dataset: Dataset, *, roles: dict, mode: str, ratios: tuple, seed: int, column: str
) -> dict:
    """Everything the wizard needs to know about a dataset under these settings, read
    from every row once: the first problem (or None), the split counts, and the
    check's 3 sample cases. Stored on the draft, so pages never read every row."""
    settings = {
        "roles": roles,
        "mode": mode,
        "ratios": list(ratios),
        "seed": seed,
        "column": column,
    }
    facts: dict = {"key": _facts_key(dataset.pk, settings), "problem": None}
    try:
        cases = dataset_files.build_cases(table_of(dataset), roles)
        splits = split_rows(dataset, mode=mode, ratios=ratios, seed=seed, column=column)
        sample = dataset_files.sample_cases(splits, cases, SAMPLE_SIZE, seed=seed)
    except DatasetError as exc:
        facts["problem"] = {
            "code": exc.code,
            "params": {**exc.params, "row": exc.row, "column": exc.column},
        }
        return facts
    facts["counts"] = dataset_files.counts(splits)
    facts["sample"] = sample
    facts["sample_cases"] = [cases[index] for index in sample]
    facts["sample_rows"] = [
        dataset.row_numbers[i] if dataset.row_numbers else i + 1 for i in sample
    ]
    return facts


def dataset_facts(draft: Draft) -> dict | None:
    """The stored facts when they belong to the draft's current settings, else fresh ones."""
    if draft.dataset_id is None:
        return None
    settings = dataset_settings(draft)
    stored = draft.dataset_facts or {}
    key = _facts_key(draft.dataset_id, {**settings, "ratios": list(settings["ratios"])})
    if stored.get("key") != key:
        stored = compute_facts(draft.dataset, **settings)
        draft.dataset_facts = stored
        if draft.pk:
            Draft.objects.filter(pk=draft.pk).update(dataset_facts=stored)
    return stored


def draft_splits(draft: Draft) -> dict[str, list[int]]:
    """Row indices of each split (reads every row for a split column)."""
    assert draft.dataset is not None
    return split_rows(
        draft.dataset,
        mode=draft.split_mode,
        ratios=(draft.train_percent, draft.validation_percent, draft.test_percent),
        seed=draft.seed,
        column=draft.split_column,
    )


def draft_cases(draft: Draft) -> list[dict]:
    assert draft.dataset is not None
    return dataset_files.build_cases(table_of(draft.dataset), draft.roles)


def sample_indices(draft: Draft) -> list[int]:
    """The 3 train rows the contract check runs on (deterministic for the draft's seed);
    DatasetError when the dataset step has a problem."""
    facts = dataset_facts(draft)
    if facts is None or facts["problem"] is not None:
        problem = (facts or {}).get("problem") or {"code": "no_dataset", "params": {}}
        raise DatasetError(problem["code"], params=problem["params"])
    return facts["sample"]


def artifact_of(kind: str, content: str, source: str) -> Artifact:
    if kind == ArtifactKind.PROMPT:
        return Artifact.prompt(content)
    return Artifact.python(source, content)


def metric_source(draft: Draft) -> str | None:
    if draft.metric_mode == Draft.MetricMode.INLINE:
        return draft.inline_source or None
    return draft.metric_version.source if draft.metric_version else None


def resolved_engine(draft: Draft) -> str:
    if draft.engine == Engine.AUTO:
        return AUTO_ENGINE[ArtifactKind(draft.artifact_kind)]
    return draft.engine


# -- completeness -----------------------------------------------------------------


def artifact_problem(kind: str, content: str, source: str) -> Problem | None:
    if kind == ArtifactKind.PROMPT and not content.strip():
        return Problem("artifact", "template_empty", {})
    if kind != ArtifactKind.PROMPT and not source.strip():
        return Problem("artifact", "program_empty", {})
    try:
        job = artifact_of(kind, content, source).to_job()
    except ArtifactError as exc:
        return Problem("artifact", exc.code, exc.params)
    if kind != ArtifactKind.PROMPT and not _defines_run(job["source"]):
        return Problem("artifact", "no_run_function", {})
    return None


def _defines_run(source: str) -> bool:
    """Whether the program binds `run` at module level (a def, an assignment, an import)."""
    import ast

    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "run":
            return True
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "run" for t in targets):
                return True
        if isinstance(node, ast.Import | ast.ImportFrom):
            if any((alias.asname or alias.name) == "run" for alias in node.names):
                return True
        if isinstance(node, ast.If | ast.Try | ast.With):
            return True  # bound conditionally: the run itself will tell
    return False


def dataset_problem(draft: Draft) -> Problem | None:
    facts = dataset_facts(draft)
    if facts is None:
        return Problem("dataset", "no_dataset", {})
    if facts["problem"] is not None:
        return Problem("dataset", facts["problem"]["code"], facts["problem"]["params"])
    return None


def metric_problem(mode: str, source: str | None) -> Problem | None:
    if not source or not source.strip():
        return Problem("metric", "no_metric" if mode == "saved" else "metric_empty", {})
    result = static_check(source)
    failed = next((s for s in result.stages if s.status == "failed"), None)
    if failed is not None:
        return Problem("metric", "metric_static", {"stage": asdict(failed)})
    return None


def models_problem(draft: Draft) -> Problem | None:
    if not draft.task_model:
        return Problem("models", "no_task_model", {})
    if not draft.reflection_model:
        return Problem("models", "no_reflection_model", {})
    if draft.artifact_kind not in ENGINE_KINDS.get(draft.engine, ()):
        return Problem("models", "engine_kind", {"engine": draft.engine})
    return None


def problems(draft: Draft) -> dict[str, Problem]:
    """The first problem of each step that is not complete (the check step included)."""
    found: dict[str, Problem] = {}
    checks = (
        (
            "artifact",
            lambda: artifact_problem(
                draft.artifact_kind, draft.artifact_content, draft.program_source
            ),
        ),
        ("dataset", lambda: dataset_problem(draft)),
        ("metric", lambda: metric_problem(draft.metric_mode, metric_source(draft))),
        ("models", lambda: models_problem(draft)),
    )
    for step, check in checks:
        problem = check()
        if problem is not None:
            found[step] = problem
    if not found and check_state(draft) != "passed":
        found["check"] = Problem("check", "check_required", {})
    return found


def first_open_step(draft: Draft) -> str:
    found = problems(draft)
    return next((step for step in STEPS if step in found), STEPS[-1])


# -- the contract check as the gate ------------------------------------------------


def fingerprint(draft: Draft) -> str:
    """The hash of everything a check of this draft runs; "" while a step is incomplete."""
    try:
        config = {
            "artifact": {
                "kind": draft.artifact_kind,
                "content": draft.artifact_content,
                "source": draft.program_source if draft.artifact_kind != "prompt" else "",
            },
            "dataset": draft.dataset.sha256 if draft.dataset else None,
            "settings": (dataset_facts(draft) or {}).get("key"),
            "sample": sample_indices(draft) if draft.dataset else None,
            "metric": metric_source(draft),
            "models": [draft.task_model, draft.reflection_model, draft.metric_model],
        }
    except DatasetError:
        return ""
    text = json.dumps(config, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def check_state(draft: Draft) -> str:
    """ "none", "stale" (run for something that has changed since), or the check's
    status (queued, running, passed, failed) when it is the draft's current one."""
    check = draft.contract_check
    if check is None:
        return "none"
    if check.fingerprint != fingerprint(draft):
        return "stale"
    return check.status


@transaction.atomic
def draft_check_start(draft: Draft, *, language: str = "en") -> Check:
    """Start the contract check on 3 train cases; CheckRefused past the user's limits."""
    from django.conf import settings

    locked = Draft.objects.select_for_update().get(pk=draft.pk)
    metric_services.check_allowed(locked.owner)
    sample = dataset_facts(locked)["sample_cases"]
    source = metric_source(locked) or ""
    check = metric_services.check_create(
        owner=locked.owner,
        source=source,
        cases=sample,
        timeout_s=(
            locked.metric_version.metric.timeout_s
            if locked.metric_mode == Draft.MetricMode.SAVED and locked.metric_version
            else settings.CHECK_TIMEOUT_DEFAULT
        ),
        metric_version=(
            locked.metric_version if locked.metric_mode == Draft.MetricMode.SAVED else None
        ),
        language=language,
        reflection_model=locked.reflection_model,
        metric_model=locked.metric_model,
        artifact={
            "kind": locked.artifact_kind,
            "content": locked.artifact_content,
            "source": locked.program_source if locked.artifact_kind != "prompt" else "",
        },
        task_model=locked.task_model,
        fingerprint=fingerprint(locked),
    )
    locked.contract_check = check
    locked.save(update_fields=["contract_check", "updated_at"])
    draft.contract_check = check
    return check


# -- submit -----------------------------------------------------------------------


def run_config(draft: Draft) -> dict:
    """The run configuration: what the run's run.json records."""
    assert draft.dataset is not None and draft.contract_check is not None
    splits = draft_splits(draft)
    version = draft.metric_version if draft.metric_mode == Draft.MetricMode.SAVED else None
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
                "counts": dataset_files.counts(splits),
                "rows": splits,
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
        "budget": {"metric_calls": draft.budget},
        "check": {
            "id": draft.contract_check.pk,
            "status": draft.contract_check.status,
            "fingerprint": draft.contract_check.fingerprint,
            "sample_rows": sample_indices(draft),
        },
    }


@transaction.atomic
def run_submit(draft: Draft, *, name: str = "") -> Run:
    """Queue a run of the draft as it is now; SubmitRefused unless its check passed.

    `name` (optional) names the run and the draft; blank keeps the draft's name."""
    locked = (
        Draft.objects.select_for_update(of=("self",))
        .select_related("contract_check", "dataset")
        .get(pk=draft.pk)
    )
    if Run.objects.filter(draft=locked).exists():
        raise SubmitRefused("already_submitted")
    if problems(locked):
        raise SubmitRefused("check_required")
    assert locked.dataset is not None and locked.contract_check is not None
    name = " ".join(name.split())[:120]
    if name and name != locked.name:
        locked.name = name
        locked.save(update_fields=["name", "updated_at"])
    return Run.objects.create(
        owner=locked.owner,
        draft=locked,
        name=locked.name,
        config=run_config(locked),
        metric_source=metric_source(locked) or "",
        metric_version=locked.metric_version
        if locked.metric_mode == Draft.MetricMode.SAVED
        else None,
        dataset=locked.dataset,
        contract_check=locked.contract_check,
    )
