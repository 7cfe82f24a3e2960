"""Running an optimization, in a runs worker. Only runs.tasks imports this.

The worker claims the run (a conditional update that counts an attempt: the one claim
that wins is the only writer, every later write names its attempt), rebuilds the splits
from the dataset, restores gepa's checkpoint into var/runs/<id>/ from the row, once its
signature holds (runs.checkpoints), and runs engines.engine.run_gepa (or, for
a DSPy program, engines.dspy_engine.run_dspy_gepa) with the run's three models behind
one dollar budget. What it finds goes to the database as it
goes (`DatabaseSink`), in batches. A write that finds the row no longer running under its
attempt (cancelled while queued, reaped, claimed by another worker) stops the run.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from contract.cancel import Cancel
from contract.storable import storable
from dataset_files import DatasetError, case_of_row, role_columns
from dataset_files.table import Table
from engines.dspy_engine import run_dspy_gepa
from engines.engine import Outcome, RunSpec, run_gepa
from engines.models import RunModels
from evaluations import stored_rows
from jobs import heartbeats, model_choices, notify, sandbox_pool
from runs import checkpoints
from runs.models import Run, RunCandidate, RunEvent
from runs.results import result_of
from submissions.models import Dataset

logger = logging.getLogger(__name__)

STATE_FILE = "gepa_state.bin"
ENGINES = ("gepa", "dspy_gepa")
# The most of a run's cases in a split kept for gepa: more rows than this are not read.
MAX_SPLIT_ROWS = 100_000


def run_dir(run_id: int) -> Path:
    return Path(settings.RUNS_DIR) / str(run_id)


def run_claim(run_id: int) -> int | None:
    """Queued to running; the attempt this claim holds, or None when another holds it."""
    now = timezone.now()
    with transaction.atomic():
        claimed = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED).update(
            status=Run.Status.RUNNING,
            attempt=F("attempt") + 1,
            heartbeat_at=now,
            worker=socket.gethostname(),
            cancel_requested=False,
        )
        if not claimed:
            return None
        Run.objects.filter(pk=run_id, started_at__isnull=True).update(started_at=now)
        return Run.objects.values_list("attempt", flat=True).get(pk=run_id)


class DatabaseSink:
    """engines.progress's sink: the run's row, its candidates and its events. Every
    write is conditional on the row still running under this attempt; when it is not,
    the run is asked to stop.

    What it is handed is made storable first (contract.storable): a candidate is the
    reflection model's text, which can carry a NUL, and PostgreSQL would refuse the write
    and pause the run."""

    def __init__(self, run: Run, attempt: int, stop: Cancel, spent_before: dict) -> None:
        self.run_id = run.pk
        self.attempt = attempt
        self.stop = stop
        self.before = spent_before

    def _mine(self):
        return Run.objects.filter(pk=self.run_id, attempt=self.attempt, status=Run.Status.RUNNING)

    def snapshot(self, progress: dict) -> None:
        progress = storable(progress)
        progress["spend"] = _added(self.before, progress.get("spend") or {})
        if not self._mine().update(progress=progress, heartbeat_at=timezone.now()):
            self.stop.set()
        notify.check_changed(self.run_id, "run")

    def candidates(self, rows: list[dict]) -> None:
        with transaction.atomic():
            for row in storable(rows):
                RunCandidate.objects.update_or_create(
                    run_id=self.run_id,
                    idx=row["idx"],
                    defaults={
                        "text": row["text"],
                        "parents": row["parents"],
                        "val_scores": row["val_scores"],
                        "average": row["average"],
                        "discovered_at": row["discovered_at"],
                        "problems": row["problems"],
                    },
                )

    def events(self, rows: list[dict]) -> None:
        RunEvent.objects.bulk_create(
            RunEvent(
                run_id=self.run_id,
                attempt=self.attempt,
                iteration=max(0, int(row.get("iteration") or 0)),
                kind=row["kind"][:20],
                data=row.get("data") or {},
            )
            for row in storable(rows)
        )

    def checkpoint(self, directory: str) -> None:
        path = Path(directory) / STATE_FILE
        try:
            data = path.read_bytes()
        except OSError:
            logger.warning("run %s: no checkpoint to keep at %s", self.run_id, path)
            return
        self._mine().update(
            checkpoint=checkpoints.sign(self.run_id, data), checkpoint_at=timezone.now()
        )


# Spend keys that add up across attempts (the rest are the latest attempt's).
_ADDED = (
    "task_usd",
    "metric_usd",
    "reflection_usd",
    "task_calls",
    "metric_calls",
    "reflection_calls",
    "total_usd",
)


def _added(before: dict, now: dict) -> dict:
    spend = dict(now)
    for key in _ADDED:
        spend[key] = (before.get(key) or 0) + (now.get(key) or 0)
    if "max_usd" in before:
        spend["max_usd"] = before["max_usd"]
    return spend


def _restore_checkpoint(run: Run, directory: Path) -> bool:
    """Put the row's checkpoint in `directory`, over whatever the folder holds (the row's
    is the newest: each save reaches it; a folder may be another database's or an older
    attempt's, and gepa loads none but the one put here); whether the run resumes from
    one. Raises checkpoints.CheckpointRefused when the row's is not signed for this run:
    gepa unpickles what is put here, so that is never written."""
    path = directory / STATE_FILE
    stored = Run.objects.filter(pk=run.pk).values_list("checkpoint", flat=True).get()
    if not stored:
        path.unlink(missing_ok=True)
        return False
    data = checkpoints.verify(run.pk, stored)
    part = path.with_suffix(".part")
    part.write_bytes(data)
    os.replace(part, path)
    return True


def _splits(run: Run) -> tuple[list[dict], list[dict]]:
    """gepa's trainset and valset: each case's input, expected and dataset row."""
    config = run.config
    rows = config["dataset"]["splits"].get("rows") or {}
    train_rows = sorted(rows.get("train") or [])[:MAX_SPLIT_ROWS]
    val_rows = sorted(rows.get("validation") or [])[:MAX_SPLIT_ROWS]
    dataset = Dataset.objects.defer("raw", "rows", "preview").get(pk=run.dataset_id)
    roles = {c: r for c, r in config["dataset"]["columns"].items()}
    # The types its check ran with; a run submitted before column types ran, and was
    # checked, on the values as read, and keeps them.
    types = config["dataset"].get("types")
    table = Table(
        columns=list(dataset.columns), rows=[], format=dataset.format, encoding=dataset.encoding
    )
    inputs, outputs = role_columns(table, roles)
    wanted = sorted(set(train_rows) | set(val_rows))
    text = stored_rows.rows_text(Dataset, dataset.pk)
    row_numbers = list(dataset.row_numbers)
    cases: dict[int, dict] = {}
    for index, row in stored_rows.pick(stored_rows.iter_rows(text), wanted):
        file_row = row_numbers[index] if row_numbers else index + 1
        case = case_of_row(row, inputs, outputs, types=types, file_row=file_row)
        cases[index] = {"input": case["input"], "expected": case["expected"], "row": index}
    train = [cases[i] for i in train_rows if i in cases]
    val = [cases[i] for i in val_rows if i in cases]
    if not val:  # a run without a validation split compares candidates on train
        val = list(train)
    return train, val


def _end(run_id: int, attempt: int, status: str, **fields) -> None:
    """End this attempt: final, or paused (resumable). A final run's checkpoint and folder
    go (its result, candidates and events stay); a paused one keeps them."""
    now = timezone.now()
    candidates = list(RunCandidate.objects.filter(run_id=run_id))
    run = Run.objects.defer("checkpoint").get(pk=run_id)
    fields.setdefault("result", result_of(run, candidates))
    if status in Run.FINAL:
        fields["checkpoint"] = None
    fields = storable(fields)  # failure_params can quote the metric or a model
    mine = Run.objects.filter(pk=run_id, attempt=attempt, status=Run.Status.RUNNING).update(
        status=status,
        heartbeat_at=now,
        finished_at=now if status in Run.FINAL else None,
        **fields,
    )
    if not mine:
        return  # another attempt holds the run now: nothing here is ours to end
    if status in Run.FINAL:
        shutil.rmtree(run_dir(run_id), ignore_errors=True)
    RunEvent.objects.create(
        run_id=run_id,
        attempt=attempt,
        kind="ended",
        data={
            "status": status,
            **{k: v for k, v in fields.items() if k in ("stop_reason", "failure")},
        },
    )
    notify.check_changed(run_id, "run")


class Refused(Exception):
    """The run cannot start on this claim: it ends (or pauses) with `status` and the
    fields _end writes, before any case runs."""

    def __init__(self, status: str, failure: str, params: dict | None = None) -> None:
        super().__init__(failure)
        self.status = status
        self.fields = {"failure": failure}
        if params is not None:
            self.fields["failure_params"] = params


@dataclass
class Loaded:
    """What a claimed run runs: its engine, what gepa optimizes, its three models behind
    one budget, and where its progress goes."""

    run_id: int
    attempt: int
    engine: str
    spec: RunSpec
    models: RunModels
    sink: DatabaseSink
    cancel: Cancel


def execute_run(run_id: int) -> None:
    """Run a queued run until it ends, pauses or is taken from this worker: claim it,
    load what it runs, run it, and write how it ended."""
    attempt = run_claim(run_id)
    if attempt is None:
        logger.info("run %s is not queued; ignoring a duplicate delivery", run_id)
        return
    try:
        loaded = _load(run_id, attempt)
    except Refused as refused:
        _end(run_id, attempt, refused.status, **refused.fields)
        return
    outcome = _run(loaded)
    if outcome is not None:
        _finish(run_id, attempt, outcome)


def _load(run_id: int, attempt: int) -> Loaded:
    """The claimed run's engine, splits, checkpoint and models; Refused when one of them
    cannot be had."""
    run = Run.objects.defer("checkpoint").get(pk=run_id)
    config = run.config
    engine = (config.get("engine") or {}).get("resolved")
    dspy_program = (config.get("artifact") or {}).get("kind") == "dspy"
    # DSPy GEPA optimizes DSPy programs only, and GEPA everything else (the wizard's rule).
    if engine not in ENGINES or (engine == "dspy_gepa") != dspy_program:
        raise Refused(Run.Status.FAILED, "engine_unavailable", {"engine": engine or ""})
    try:
        train, val = _splits(run)
    except DatasetError as exc:
        params = {"code": exc.code, "params": {**exc.params, "row": exc.row, "column": exc.column}}
        raise Refused(Run.Status.FAILED, "dataset_problem", params) from None
    if not train:
        raise Refused(Run.Status.FAILED, "no_train_rows")
    directory = run_dir(run_id)
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        resumed = _restore_checkpoint(run, directory)
    except checkpoints.CheckpointRefused:
        # Resuming from scratch would overwrite the candidates it found: it ends instead.
        logger.warning("run %s: its checkpoint is not signed for it; not loaded", run_id)
        raise Refused(Run.Status.FAILED, "checkpoint_refused") from None
    RunEvent.objects.create(
        run_id=run_id,
        attempt=attempt,
        kind="resumed" if resumed else "claimed",
        data={"worker": socket.gethostname()},
    )
    before = (run.progress or {}).get("spend") or {}
    budget_usd = float((config.get("budget") or {}).get("usd") or settings.RUN_MAX_USD)
    budget_usd = min(budget_usd, settings.RUN_MAX_USD)
    models = _models(config, left_usd=max(0.0, budget_usd - float(before.get("total_usd") or 0.0)))
    cancel = Cancel()
    return Loaded(
        run_id=run_id,
        attempt=attempt,
        engine=engine,
        spec=_spec(run, train, val, directory),
        models=models,
        sink=DatabaseSink(run, attempt, cancel, {**before, "max_usd": budget_usd}),
        cancel=cancel,
    )


def _models(config: dict, *, left_usd: float) -> RunModels:
    """The run's task, metric and reflection models from the catalogue, behind one
    budget of `left_usd`; Refused (paused: the server may be fixed) when one is not
    there any more."""
    from providers.catalogue import ModelChoiceError

    models = config.get("models") or {}
    found = model_choices.catalogue()
    try:
        task = found.resolve(models["task"]) if models.get("task") else None
        metric = found.resolve(models["metric"]) if models.get("metric") else None
        reflection = found.resolve(models["reflection"])
    except (ModelChoiceError, KeyError) as exc:
        params = {
            "code": getattr(exc, "code", "unknown_model"),
            "message": getattr(exc, "message", str(exc)),
        }
        raise Refused(Run.Status.PAUSED, "model_unavailable", params) from None
    return RunModels(
        task=task,
        metric=metric,
        reflection=reflection,
        env=found.env,
        max_usd=left_usd,
        timeout_s=settings.MODEL_TIMEOUT_S,
    )


def _spec(run: Run, train: list[dict], val: list[dict], directory: Path) -> RunSpec:
    config = run.config
    artifact = config.get("artifact") or {}
    kind = artifact.get("kind") if artifact.get("kind") in ("prompt", "dspy") else "python"
    columns = (config.get("dataset") or {}).get("columns") or {}
    return RunSpec(
        source=run.metric_source,
        kind=kind,
        seed_text=artifact.get("content") or "",
        program_source=artifact.get("program") or "",
        trainset=train,
        valset=val,
        max_metric_calls=int((config.get("budget") or {}).get("metric_calls") or 1),
        run_dir=str(directory),
        timeout_s=float(run.contract_check.timeout_s),
        window=settings.RUN_WINDOW,
        # A configuration from before the choice has gepa's default.
        minibatch_size=int(config.get("minibatch") or 3),
        seed=int(((config.get("dataset") or {}).get("splits") or {}).get("seed") or 0),
        output_fields=tuple(sorted(c for c, role in columns.items() if role == "output")),
        # Every call an earlier attempt made counts against the budget, those after the
        # checkpoint it resumes from too.
        metric_calls_before=int((run.progress or {}).get("metric_calls") or 0),
        # The helper modules the metric was checked with.
        files=run.contract_check.files or None,
    )


def _run(loaded: Loaded) -> Outcome | None:
    """Run the engine until the run ends; None when it stopped on an error, which this
    writes (paused: resumable)."""
    run_id, attempt, models = loaded.run_id, loaded.attempt, loaded.models
    try:
        with heartbeats.beating(Run, run_id, on_cancel=loaded.cancel.set):
            engine_of = run_gepa
            more = {}
            if loaded.engine == "dspy_gepa":
                engine_of = run_dspy_gepa
                more["run_sandboxes"] = sandbox_pool.dspy_sandboxes()
            outcome, _ = engine_of(
                loaded.spec,
                sandboxes=sandbox_pool.sandboxes(),
                **more,
                budget=models.budget,
                reflection=models.reflection,
                watch=models.watch,
                sink=loaded.sink,
                metric_for=models.metric_for,
                task_for=models.task_for,
                forget=models.forget,
                cancel=loaded.cancel,
            )
    except BaseException as exc:
        if type(exc).__name__ == "SoftTimeLimitExceeded":
            _end(run_id, attempt, Run.Status.PAUSED, failure="time_limit")
        else:
            logger.exception("run %s stopped", run_id)
            _end(
                run_id,
                attempt,
                Run.Status.PAUSED,
                failure="internal_error",
                failure_params={"type": type(exc).__name__},
            )
        if not isinstance(exc, Exception):
            raise
        return None
    finally:
        models.close()
    return outcome


def _finish(run_id: int, attempt: int, outcome: Outcome) -> None:
    """Write how the engine ended the run, unless the row left this worker meanwhile."""
    if (
        outcome.ended == "cancelled"
        and not Run.objects.filter(pk=run_id, cancel_requested=True).exists()
    ):
        # Stopped because the row left this worker (reaped, cancelled while queued): not ours to end.
        return
    status = {
        "finished": Run.Status.FINISHED,
        "cancelled": Run.Status.CANCELLED,
        "paused": Run.Status.PAUSED,
        "failed": Run.Status.FAILED,
    }[outcome.ended]
    fields = {"failure_params": outcome.params}
    if outcome.ended == "finished":
        fields["stop_reason"] = outcome.reason
    elif outcome.ended != "cancelled":
        fields["failure"] = outcome.reason
    _end(run_id, attempt, status, **fields)
