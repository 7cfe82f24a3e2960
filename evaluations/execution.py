"""Running an evaluation, in the worker. Only evaluations.tasks imports this module.

The worker claims the row, reads the dataset once, picks the selection's rows and feeds
them one by one to contract.evaluation, which keeps a window of cases in flight in warm
sandboxes. Each case that ends is turned into an EvaluationCase and buffered; the buffer
goes to the database in one bulk insert every CHUNK_ROWS cases or CHUNK_EVERY_S seconds,
with the row's progress, so the page moves while memory holds only one chunk. While
another evaluation waits, each claim is one turn (evaluations.turns): the evaluation
goes on from the cases its earlier turns wrote, and hands the worker over after a while.
At the end the database summarizes every case once (evaluations.summary).
"""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.db.models import DateTimeField, F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from contract.cancel import Cancel
from contract.cases import Case
from contract.evaluation import (
    Scored,
    differs,
    digest,
    evaluate,
    feedback_kind,
    repeats_differ,
)
from contract.results import CaseResult
from contract.storable import storable
from dataset_files import DatasetError, case_of_row, human_of_row, role_columns
from dataset_files.table import Table
from evaluations import stored_rows, turns
from evaluations.models import Evaluation, EvaluationCase
from evaluations.selection import select_rows_of
from jobs import gateways, heartbeats, notify, sandbox_pool
from providers.budget import Limits

logger = logging.getLogger(__name__)

CHUNK_ROWS = 1000
CHUNK_EVERY_S = 1.0
# A case's values are kept as they are up to this size (JSON), else cut to text.
CASE_VALUE_LIMIT = 16_000
FEEDBACK_LIMIT = 4_000
PRINTED_LIMIT = 2_000

# Rows a worker tries to claim, in line, before it leaves them to the workers that won.
CLAIM_TRIES = 20

STOPPED_FAILURES = {
    "cancelled": "cancelled",
    "load_failed": "load_failed",
    "sandbox_unavailable": "sandbox_unavailable",
    "sandbox_failed": "sandbox_failed",
}


def evaluation_claim() -> tuple[int, int] | None:
    """Claim the evaluation whose turn it is, the one waiting longest, queued to running;
    its pk, or None when none waits. A message is a turn, whichever evaluation sent it:
    the order is the rows', so a message sent twice (a redelivery, a re-send of one
    thought lost) never lets one evaluation pass another or take two turns in a row, and
    one that finds nobody waiting does nothing. A next turn keeps the first one's start:
    the rate is over the whole evaluation. (pk, claim): every later write names the
    claim, so a worker thought lost that wakes writes nothing."""
    line = Evaluation.objects.filter(status=Evaluation.Status.QUEUED).order_by(
        F("waiting_since").asc(nulls_first=True), "pk"
    )
    for evaluation_id in line.values_list("pk", flat=True)[:CLAIM_TRIES]:
        now = timezone.now()
        # Conditional: of the workers that try one row at once, exactly one wins.
        claimed = Evaluation.objects.filter(
            pk=evaluation_id, status=Evaluation.Status.QUEUED
        ).update(
            status=Evaluation.Status.RUNNING,
            started_at=Coalesce(F("started_at"), Value(now, output_field=DateTimeField())),
            heartbeat_at=now,
            worker=socket.gethostname(),
            claim=F("claim") + 1,
        )
        if claimed:
            _changed(evaluation_id)
            claim = Evaluation.objects.values_list("claim", flat=True).get(pk=evaluation_id)
            return evaluation_id, claim
    return None


def _changed(evaluation_id: int) -> None:
    """Tell the pages waiting on this evaluation (evaluations.views) to read it again."""
    notify.check_changed(evaluation_id, notify.EVALUATION)


class Encoded(str):
    """A JSON column's value already encoded, as the column stores it: CaseInserts
    writes it as it is rather than encoding it again."""


def _kept(value: object) -> tuple[object, str | None]:
    """A case value as stored (as it is when small, else its JSON cut short), and that
    value's JSON (None when it has none: it is then encoded, and fails, with its row)."""
    encoded: str | None
    try:
        text = encoded = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text, encoded = repr(value), None
    if len(text) <= CASE_VALUE_LIMIT:
        return value, encoded
    cut = text[: CASE_VALUE_LIMIT - 1] + "…"
    return cut, _json(cut)


def _case_column(case: Case, output: object) -> Encoded | dict:
    """The case as scored, {"input", "output", "expected"}, long values cut short, as
    the JSON text the column stores: each value was encoded once, to measure it, so the
    whole is put together from those texts (the same text json.dumps makes of it)."""
    kept = {
        name: _kept(value)
        for name, value in (
            ("input", case.input),
            ("output", output),
            ("expected", case.expected),
        )
    }
    if any(text is None for _, text in kept.values()):
        return {name: value for name, (value, _) in kept.items()}
    return Encoded("{" + ", ".join(f'"{name}": {text}' for name, (_, text) in kept.items()) + "}")


def _detail(row: CaseResult) -> dict:
    detail: dict = {}
    if row.exception:
        detail["exception"] = row.exception
    if row.traceback:
        detail["traceback"] = row.traceback[-12:]
    for name in ("stdout", "stderr"):
        text = getattr(row, name)
        if text:
            detail[name] = text[-PRINTED_LIMIT:]
    if row.run is not None:
        detail["run"] = {
            key: row.run.get(key)
            for key in ("status", "problem", "params", "output_repr", "duration_ms")
        }
    return detail


def _second(row: CaseResult | None) -> dict | None:
    if row is None:
        return None
    return {
        "status": row.status,
        "problem": row.problem or "",
        "score": row.score,
        "feedback": (row.feedback or "")[:FEEDBACK_LIMIT] if row.feedback is not None else None,
        "scores": row.scores or None,
        "metric_ms": row.duration_ms,
        "exception_type": (row.exception or {}).get("type", ""),
    }


def _repeat(row: CaseResult) -> dict:
    """One scoring after the first, as EvaluationCase.repeats keeps each: its verdict."""
    return {"status": row.status, "problem": row.problem or "", "score": row.score}


def case_row(
    evaluation_id: int, scored: Scored, row: int, file_row: int, *, repeat: bool = False
) -> dict:
    """One ended case as the row the pages read (its columns' values). `repeat`: the
    second scoring was the same metric again, so a different feedback is a difference
    too. Scored K times, `differs` says the K scorings do not all agree and `gap` is the
    spread of their valid scores (the largest less the smallest); `repeats` keeps every
    scoring after the first, the first of them being `second` too.

    Every text of the case is made storable first (contract.storable), before any column
    is measured or encoded: a NUL or a lone surrogate a metric returned would otherwise
    fail the chunk's insert on PostgreSQL, and the evaluation with it."""
    scored = storable(scored)
    first = scored.row
    usage = first.usage or {}
    run = first.run or {}
    run_usage = run.get("usage") or {}
    feedback = first.feedback
    second = scored.second
    if scored.more:
        flagged, gap = repeats_differ(first, scored.repeats, feedback=repeat)
    else:
        flagged, gap = differs(first, second, feedback=repeat)
    return dict(
        evaluation_id=evaluation_id,
        index=scored.index,
        row=row,
        file_row=file_row,
        status=first.status,
        problem=first.problem or "",
        exception_type=(first.exception or {}).get("type", "") or "",
        params=first.params or {},
        score=first.score,
        feedback=(feedback or "")[:FEEDBACK_LIMIT],
        feedback_length=first.feedback_length or len(feedback or ""),
        feedback_kind=feedback_kind(feedback, first.predictor_feedback),
        feedback_digest=digest(feedback) if feedback is not None else "",
        output_digest=digest(scored.output),
        scores=first.scores or None,
        predictor_feedback={
            name: text[:FEEDBACK_LIMIT] for name, text in first.predictor_feedback.items()
        }
        or None,
        case=_case_column(scored.case, scored.output),
        metric_ms=first.duration_ms,
        run_ms=run.get("duration_ms"),
        total_ms=scored.total_ms,
        task_usd=float(run_usage.get("cost_usd") or 0.0),
        metric_usd=float(usage.get("cost_usd") or 0.0),
        model_calls=int(usage.get("model_calls") or 0) + int(run_usage.get("model_calls") or 0),
        detail=_detail(first),
        second=_second(second),
        second_status=second.status if second is not None else "",
        second_score=second.score if second is not None else None,
        differs=flagged,
        gap=gap,
        repeats=[_repeat(other) for other in scored.repeats] if repeat and second else None,
    )


class CaseInserts:
    """Inserts case rows with one executemany: the ORM's bulk_create prepares each
    field of each row through its field classes, which costs more of the worker than
    scoring a trivial case does. The values are what the columns store (JSON as text)."""

    def __init__(self) -> None:
        fields = [f for f in EvaluationCase._meta.concrete_fields if not f.primary_key]
        self.names = [f.attname for f in fields]
        self.json = {f.attname for f in fields if f.get_internal_type() == "JSONField"}
        self.columns = [(name, name in self.json) for name in self.names]
        table = connection.ops.quote_name(EvaluationCase._meta.db_table)
        columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
        marks = ", ".join(["%s"] * len(fields))
        self.sql = f"INSERT INTO {table} ({columns}) VALUES ({marks})"

    def params(self, row: dict) -> tuple:
        return tuple(
            # A column case_row leaves out (human, on an evaluation without any) is NULL.
            _column_json(row.get(name)) if is_json else row.get(name)
            for name, is_json in self.columns
        )

    def insert(self, rows: list[dict]) -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(self.sql, [self.params(row) for row in rows])


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


def _column_json(value: object) -> str | None:
    if value is None or isinstance(value, Encoded):
        return value
    return _json(value)


class _NotOurs(Exception):
    """The row is no longer running under this claim: the chunk is not written."""


class Writer:
    """Buffers ended cases and writes them in chunks, each in one transaction with the
    row's progress, which goes on from what earlier turns wrote. When the row stops being
    "running" under its claim (reaped, say), or its turns reach the time limit, it asks
    the run to stop; after each write it asks whether the turn is over (turns.Turn).

    Cases end in any order: `resume_at` is the first case not written, `ahead` the ones
    after it that were, so a turn stopped with cases in flight, or a worker lost between
    two chunks, resumes at exactly the cases not written."""

    def __init__(
        self,
        evaluation: Evaluation,
        claim: int,
        rows: list[int],
        row_numbers: list[int],
        stop: Cancel,
    ) -> None:
        self.evaluation_id = evaluation.pk
        self.claim = claim
        self.repeat = evaluation.second == Evaluation.Second.REPEAT
        self.rows = rows
        self.row_numbers = row_numbers
        self.stop = stop
        self.inserts = CaseInserts()
        self.buffer: list[dict] = []
        self.last = time.monotonic()
        self.done = evaluation.done
        self.progress: dict = {
            "counts": {},
            "score_sum": 0.0,
            "score_n": 0,
            "task_usd": 0.0,
            "metric_usd": 0.0,
            "model_calls": 0,
            "ran_s": 0.0,
            "turns": 0,
            **(evaluation.progress or {}),
        }
        self.progress["turns"] += 1
        self.progress.setdefault("resume_at", evaluation.done)
        self.ahead: set[int] = set(self.progress.get("ahead") or [])
        self.written: list[int] = []  # the indexes of the buffer's cases
        self.turn = turns.Turn(self.evaluation_id, self.progress["ran_s"])
        self.out_of_time = False
        self.forget: list = []  # per-case meters to drop once written (the gateways')
        # The human columns' values of the cases in flight, by dataset row (Loaded.cases).
        self.human: dict[int, dict | None] = {}

    def add(self, scored: Scored) -> None:
        row = self.rows[scored.index]
        file_row = self.row_numbers[row] if self.row_numbers else row + 1
        case = case_row(self.evaluation_id, scored, row, file_row, repeat=self.repeat)
        case["human"] = self.human.pop(row, None)
        self.buffer.append(case)
        self.written.append(scored.index)
        progress = self.progress
        counts = progress["counts"]
        counts[case["status"]] = counts.get(case["status"], 0) + 1
        if case["score"] is not None and case["status"] == "valid":
            progress["score_sum"] += float(case["score"])
            progress["score_n"] += 1
        progress["task_usd"] += case["task_usd"]
        progress["metric_usd"] += case["metric_usd"]
        progress["model_calls"] += case["model_calls"]
        for meters in self.forget:
            meters.pop(scored.index, None)
        if len(self.buffer) >= CHUNK_ROWS or time.monotonic() - self.last >= CHUNK_EVERY_S:
            self.flush()

    def flush(self) -> None:
        ahead = self.ahead | set(self.written)
        resume_at = self.progress["resume_at"]
        while resume_at in ahead:
            ahead.discard(resume_at)
            resume_at += 1
        progress = {**self.progress, "resume_at": resume_at, "ahead": sorted(ahead)}
        progress["ran_s"] = self.turn.ran_s
        done = self.done + len(self.buffer)
        try:
            with transaction.atomic():
                if self.buffer:
                    self.inserts.insert(self.buffer)
                still = Evaluation.objects.filter(
                    pk=self.evaluation_id, status=Evaluation.Status.RUNNING, claim=self.claim
                ).update(done=done, progress=progress, heartbeat_at=timezone.now())
                if not still:
                    raise _NotOurs
        except _NotOurs:
            self.buffer, self.written = [], []
            self.stop.set()
            return
        self.buffer, self.written = [], []
        self.done, self.ahead, self.progress = done, ahead, progress
        self.last = time.monotonic()
        _changed(self.evaluation_id)
        if self.turn.out_of_time:
            self.out_of_time = True
            self.stop.set()
        else:
            self.turn.check()


def _finish(evaluation_id: int, claim: int, **fields) -> None:
    """End the row with its summary, in one write: a page never sees it final without.
    Only while it runs under this claim."""
    from evaluations.summary import summarize

    summary = summarize(Evaluation.objects.get(pk=evaluation_id))
    now = timezone.now()
    # failure_params can quote the metric (a load failure's message): stored as case rows are.
    Evaluation.objects.filter(
        pk=evaluation_id, status=Evaluation.Status.RUNNING, claim=claim
    ).update(finished_at=now, heartbeat_at=now, summary=summary, **storable(fields))
    _changed(evaluation_id)


def dataset_problem(exc: DatasetError) -> dict:
    """A dataset problem's failure_params: its code, and its params with the row and the
    column it names, for the words to say where."""
    return {"code": exc.code, "params": {**exc.params, "row": exc.row, "column": exc.column}}


def _budgets(metric_gateway, task_gateway) -> dict:
    """What each model's budget has spent, for the next turn to go on from."""
    found = {"metric": metric_gateway, "task": task_gateway}
    return {name: gateway.budget.spent() for name, gateway in found.items() if gateway}


def execute_evaluation(sent_by: int) -> None:
    """Run one turn of the evaluation next in line (evaluation_claim), to its end (and
    summarize it) or until another evaluation's turn (evaluations.turns): claim it, load
    what it scores, run the turn, and finish it. `sent_by`: the evaluation whose message
    this is, which is not always the one whose turn it is."""
    claimed = evaluation_claim()
    if claimed is None:
        logger.info("no evaluation waits; the message of evaluation %s does nothing", sent_by)
        return
    evaluation_id, claim = claimed
    try:
        loaded = _load(evaluation_id, claim)
    except DatasetError as exc:
        _finish(
            evaluation_id,
            claim,
            status=Evaluation.Status.FAILED,
            failure="dataset_problem",
            failure_params=dataset_problem(exc),
        )
        return
    ended, writer, unfit = _run_turn(loaded)
    _finish_turn(loaded, ended, writer, unfit)


@dataclass
class Loaded:
    """What a claimed evaluation's turn scores: the rows it picks, read from the dataset's
    stored text one at a time, and how a row becomes a case."""

    evaluation: Evaluation
    claim: int
    text: str  # the rows as JSON text (evaluations.stored_rows)
    rows: list[int]
    inputs: list[str]
    outputs: list[str]
    types: dict
    row_numbers: list[int]
    # Earlier turns wrote cases 0..start-1: this one starts at the next, and passes the
    # ones after it they wrote too.
    start: int
    skip: frozenset[int]

    def cases(self, writer: Writer, cancel: Cancel, unfit: list[DatasetError]) -> Iterator[Case]:
        """The turn's cases, until its time is over; a row that no longer fits its
        column's type stops the evaluation (into `unfit`)."""
        recorded = self.evaluation.recorded_column or None
        picked = stored_rows.pick(stored_rows.iter_rows(self.text), self.rows[self.start :])
        for index, row in picked:
            if writer.turn.over:
                return  # no new case; the ones in flight end and are written
            file_row = self.row_numbers[index] if self.row_numbers else index + 1
            try:
                case = case_of_row(
                    row, self.inputs, self.outputs, recorded, types=self.types, file_row=file_row
                )
                # Kept beside the case, never in it: the metric does not see a person's
                # judgement. The writer takes it when the case ends.
                writer.human[index] = human_of_row(row, self.evaluation.human, file_row)
            except DatasetError as exc:
                # Checked when it started, so only a row changed since gets here: the
                # evaluation stops there, saying which value does not fit.
                unfit.append(exc)
                cancel.set()
                return
            yield Case(**case)


def _load(evaluation_id: int, claim: int) -> Loaded:
    """The claimed evaluation's rows and roles; DatasetError when they cannot be read."""
    evaluation = (
        Evaluation.objects.select_related("dataset")
        .defer("dataset__raw", "dataset__rows", "dataset__preview")
        .get(pk=evaluation_id)
    )
    dataset = evaluation.dataset
    # The rows as text, decoded one at a time (evaluations.stored_rows), never all at once.
    text = stored_rows.rows_text(Evaluation._meta.get_field("dataset").related_model, dataset.pk)
    columns = list(dataset.columns)

    def split_column_table() -> Table:
        column = evaluation.selection.get("column", "")
        cells = [{column: row.get(column)} for row in stored_rows.iter_rows(text)]
        return Table(
            columns=columns,
            rows=cells,
            format=dataset.format,
            encoding=dataset.encoding,
            row_numbers=dataset.row_numbers,
        )

    rows = sorted(select_rows_of(dataset.row_count, evaluation.selection, split_column_table))
    inputs, outputs = role_columns(
        Table(columns=columns, rows=[], format=dataset.format, encoding=dataset.encoding),
        evaluation.roles,
    )
    if len(rows) != evaluation.total:
        Evaluation.objects.filter(pk=evaluation_id).update(total=len(rows))
    progress = evaluation.progress or {}
    return Loaded(
        evaluation=evaluation,
        claim=claim,
        text=text,
        rows=rows,
        inputs=inputs,
        outputs=outputs,
        # The declared types over the ones read at upload: a column neither names stays
        # as read (an evaluation from before column types declared none).
        types={**(dataset.inferred_types or {}), **(evaluation.column_types or {})},
        row_numbers=list(dataset.row_numbers),
        start=progress.get("resume_at", evaluation.done),
        skip=frozenset(progress.get("ahead") or ()),
    )


def _repeats(evaluation: Evaluation) -> int:
    """How many times the second source scores each output: K - 1 when each case is
    scored K times, else once."""
    if evaluation.second != Evaluation.Second.REPEAT:
        return 1
    return max(1, (evaluation.repeats or 2) - 1)


def _files_of(version) -> dict[str, str] | None:
    """The helper modules of the metric version an evaluation scores with, if any."""
    return (version.helper_files or None) if version is not None else None


def _run_turn(loaded: Loaded):
    """Score the turn's cases in the warm sandboxes with the evaluation's models; (how
    the engine ended, the writer, the rows that no longer fit). An error ends the
    evaluation as failed, with what was scored written, and is raised again."""
    evaluation = loaded.evaluation
    cancel = Cancel()  # the user's
    if evaluation.cancel_requested:
        cancel.set()
    stop = Cancel()  # the cases': the user's cancel, the turn's end, the row not ours
    cancel.on_set(stop.set)
    writer = Writer(evaluation, loaded.claim, loaded.rows, loaded.row_numbers, stop)
    unfit: list[DatasetError] = []
    limits = Limits(**evaluation.limits)
    spent = writer.progress.get("budget") or {}
    # The metric model, else the reflection model (the docs' rule, as for a check).
    metric_gateway, metric_for = gateways.gateway_to(
        evaluation.metric_model or evaluation.reflection_model,
        limits,
        spent=spent.get("metric"),
    )
    task_gateway, task_for = (None, None)
    if evaluation.artifact:
        task_gateway, task_for = gateways.gateway_to(
            evaluation.task_model, limits, spent=spent.get("task")
        )
    writer.forget = [g.cases for g in (metric_gateway, task_gateway) if g is not None]
    artifact = evaluation.artifact_value
    clock = writer.turn.clock(stop.set)
    try:
        with heartbeats.beating(Evaluation, evaluation.pk, on_cancel=cancel.set):
            ended = evaluate(
                evaluation.source,
                loaded.cases(writer, stop, unfit),
                on_scored=writer.add,
                sandboxes=sandbox_pool.sandboxes((evaluation.artifact or {}).get("kind")),
                timeout_s=evaluation.timeout_s,
                handler_for=metric_for,
                task_handler_for=task_for,
                artifact=artifact.to_job() if artifact is not None else None,
                second_source=evaluation.second_source if evaluation.second else None,
                window=settings.EVALUATION_WINDOW,
                cancel=stop,
                start=loaded.start,
                skip=loaded.skip,
                files=_files_of(evaluation.metric_version),
                second_files=_files_of(evaluation.second_version) if evaluation.second else None,
                repeats=_repeats(evaluation),
            )
            writer.progress["budget"] = _budgets(metric_gateway, task_gateway)
            writer.flush()
    except BaseException as exc:
        failure = (
            "time_limit" if type(exc).__name__ == "SoftTimeLimitExceeded" else "internal_error"
        )
        logger.exception("evaluation %s stopped: %s", evaluation.pk, failure)
        try:
            writer.flush()
        finally:
            _finish(evaluation.pk, loaded.claim, status=Evaluation.Status.FAILED, failure=failure)
        raise
    finally:
        clock.stop()
        for gateway in (metric_gateway, task_gateway):
            if gateway is not None:
                gateway.close()
    if ended.stopped == "cancelled" and not cancel.is_set():
        ended.stopped = None  # stopped by its turn's end or the row, not by its user
    return ended, writer, unfit


def _finish_turn(loaded: Loaded, ended, writer: Writer, unfit: list[DatasetError]) -> None:
    """The evaluation done, failed, or handed to the next in line with cases left."""
    evaluation_id, claim = loaded.evaluation.pk, loaded.claim
    if unfit:
        _finish(
            evaluation_id,
            claim,
            status=Evaluation.Status.FAILED,
            failure="dataset_problem",
            failure_params=dataset_problem(unfit[0]),
        )
    elif writer.out_of_time:
        _finish(evaluation_id, claim, status=Evaluation.Status.FAILED, failure="time_limit")
    elif ended.stopped is None and writer.turn.over and writer.done < len(loaded.rows):
        if turns.evaluation_hand_over(evaluation_id, claim):
            _changed(evaluation_id)
        else:
            # Reaped meanwhile (this writes nothing then), or its user asked to stop it.
            _finish(evaluation_id, claim, status=Evaluation.Status.FAILED, failure="cancelled")
    elif ended.stopped is None:
        _finish(evaluation_id, claim, status=Evaluation.Status.DONE)
    else:
        _finish(
            evaluation_id,
            claim,
            status=Evaluation.Status.FAILED,
            failure=STOPPED_FAILURES.get(ended.stopped, ended.stopped),
            failure_params=ended.params,
        )
