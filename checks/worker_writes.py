"""The two writes every check makes of its row in the worker: the claim and the verdict.

Each is one statement written out here, with its values prepared by the model's own
fields, rather than built by the ORM's query compiler: building an UPDATE costs the
worker several times what running it does, and a burst of checks is bound by the
worker's CPU. What they write is what the ORM's update() would.

The claim is the same conditional UPDATE as ever (queued to running, exactly one row):
a redelivered message finds the row no longer queued and does nothing. Where the
database can say RETURNING (SQLite 3.35+, PostgreSQL), the same statement hands back
what the worker needs of the row, instead of a second query reading it.
"""

from __future__ import annotations

import socket

from django.db import connection
from django.utils import timezone

from checks.models import Check

# What execute_check reads of the row it claimed.
CLAIMED_FIELDS = (
    "owner_id",
    "source",
    "files",
    "cases",
    "timeout_s",
    "reflection_model",
    "metric_model",
    "artifact",
    "task_model",
    "cancel_requested",
)


CLAIMED = {"id", *CLAIMED_FIELDS}


def _field(name: str):
    return Check._meta.get_field(name)


def _update(values: dict, **where) -> tuple[str, list]:
    """UPDATE of the check table setting `values` where every column of `where` has its
    value; the values as the fields prepare them for this database."""
    quote = connection.ops.quote_name
    sets = ", ".join(f"{quote(_field(name).column)} = %s" for name in values)
    tests = " AND ".join(f"{quote(_field(name).column)} = %s" for name in where)
    params = [_field(name).get_db_prep_save(value, connection) for name, value in values.items()]
    params += [_field(name).get_db_prep_save(value, connection) for name, value in where.items()]
    return f"UPDATE {quote(Check._meta.db_table)} SET {sets} WHERE {tests}", params


def _from_db(name: str, value: object) -> object:
    field = _field(name)
    if field.get_internal_type() == "JSONField":
        return field.from_db_value(value, None, connection)
    if field.get_internal_type() == "BooleanField":
        return bool(value)
    return value


def claim(check_id: int) -> Check | None:
    """Move check `check_id` from queued to running; the row (CLAIMED_FIELDS loaded) when
    this call won it, None when it was not queued (exactly one caller can win) or when
    its owner has a check running already: one user's checks run one at a time, so the
    others' are never all held behind them (checks.fair_share)."""
    now = timezone.now()
    sql, params = _update(
        {
            "status": Check.Status.RUNNING,
            "started_at": now,
            "heartbeat_at": now,
            "worker": socket.gethostname(),
        },
        id=check_id,
        status=Check.Status.QUEUED,
    )
    quote = connection.ops.quote_name
    table, owner, status = (
        quote(Check._meta.db_table),
        quote(_field("owner").column),
        quote(_field("status").column),
    )
    sql += (
        f" AND NOT EXISTS (SELECT 1 FROM {table} AS busy"
        f" WHERE busy.{owner} = {table}.{owner} AND busy.{status} = %s)"
    )
    params.append(Check.Status.RUNNING.value)
    # In the model's order of fields: Model.from_db reads the values so.
    names = [f.attname for f in Check._meta.concrete_fields if f.attname in CLAIMED]
    # The databases that say RETURNING after an INSERT (SQLite from 3.35, PostgreSQL)
    # say it after an UPDATE too.
    if connection.features.can_return_columns_from_insert:
        quote = connection.ops.quote_name
        sql += " RETURNING " + ", ".join(quote(_field(name).column) for name in names)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            # Every row read: the statement is done, and committed, before this returns.
            rows = cursor.fetchall()
        if len(rows) != 1:
            return None
        values = [_from_db(name, value) for name, value in zip(names, rows[0], strict=True)]
        return Check.from_db(connection.alias, names, values)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if cursor.rowcount != 1:
            return None
    fields = ["owner" if name == "owner_id" else name for name in CLAIMED_FIELDS]
    return Check.objects.only(*fields).get(pk=check_id)


def verdict(check_id: int, *, status: str, failure: str, result: dict) -> int:
    """The check's end: its status, failure and result, in one write, only while it is
    running (a reaped check stays as the sweep left it). The rows written (0 or 1)."""
    now = timezone.now()
    sql, params = _update(
        {
            "status": status,
            "failure": failure,
            "result": result,
            "finished_at": now,
            "heartbeat_at": now,
        },
        id=check_id,
        status=Check.Status.RUNNING,
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount
