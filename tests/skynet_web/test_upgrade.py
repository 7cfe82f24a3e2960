"""A database made by the workbench at commit 36f1c93, the layout before runs/, jobs/ and
metrics/history/ (snapshots/, made by snapshots/make_snapshot.py with rows in every table),
upgrades to this layout with `manage.py migrate` as an operator runs it: every table and
every row is still there, byte for byte, the moved models' content types (and the
permissions granted on them) follow them to their new apps, and the ORM reads every
relation through the models where they live now.

On SQLite always (a file of its own); on PostgreSQL too when the suite runs against it
(CI's second pass), in a database of its own on the same server.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import ROOT

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"

# Rewritten by the upgrade, and checked on their own below.
REWRITTEN = {"django_migrations", "django_content_type"}
# Made by migrations that came after the layout step, by table: each is new and empty after
# the upgrade, and Django adds its model's content type and permissions.
ADDED = {
    "metrics_versionlabel": ("metrics", "versionlabel"),
    "metrics_conversion": ("metrics", "conversion"),
    "alignment_alignment": ("alignment", "alignment"),
    "labelling_labelling": ("labelling", "labelling"),
    "labelling_label": ("labelling", "label"),
    "labelling_invitation": ("labelling", "invitation"),
    "labelling_casechunk": ("labelling", "casechunk"),
}
# The tables that gain those permissions: every old row kept, the new ones the added models'.
GROWN = {"auth_permission"}


class _EmptyObject:
    """A JSON column's {} as each backend reads it back: SQLite's text, PostgreSQL's dict."""

    def __eq__(self, other: object) -> bool:
        return other in ("{}", {})

    def __repr__(self) -> str:
        return "{}"


EMPTY_OBJECT = _EmptyObject()

# Tables given columns by later migrations, with the values every old row must get in
# them (appended at the end of each row): the old values are kept as they were.
WIDENED = {
    "evaluations_evaluation": (0, 0, EMPTY_OBJECT, 2),  # claim, lost, human, repeats
    "evaluations_evaluationcase": (None, None, None),  # predictor_feedback, human, repeats
    "metrics_app_check": (None, None),  # draft_parts, files
    "metrics_app_metricversion": (None,),  # files
    # stored_bytes, counted by the migration from the snapshot's one dataset: its 16-byte
    # file, and its rows', preview's and row numbers' JSON (28 + 14 + 6 bytes).
    "submissions_dataset": (64, None),  # and parent
    "submissions_draft": (3,),  # minibatch
}

# Where each moved model's content type was, and where it must be now.
RELABELLED = {
    ("submissions", "run"): ("runs", "run"),
    ("optimizations", "runcandidate"): ("runs", "runcandidate"),
    ("optimizations", "runevent"): ("runs", "runevent"),
    ("checks", "ratebucket"): ("jobs", "ratebucket"),
}

# Read through the ORM of this layout, in the upgraded database.
READ_BACK = """
import django, json
django.setup()
from django.contrib.auth.models import Group, Permission, User
from jobs.models import RateBucket
from metrics.models import Metric
from runs.models import Run, RunCandidate, RunEvent
owner = User.objects.get(username="owner")
run = Run.objects.get()
look = Permission.objects.get(codename="look_run")
newer = Metric.objects.create(owner=owner, name="after the upgrade")
print(json.dumps({
    "run": [run.name, run.draft.name, run.dataset.filename, run.metric_version.number,
            run.contract_check.status, bytes(run.checkpoint).hex(), run.status],
    "candidates": [c.text for c in run.candidates.all()],
    "events": [e.kind for e in RunEvent.objects.filter(run=run)],
    "bucket": [RateBucket.objects.get(owner=owner).tokens],
    "look": [look.content_type.app_label, look.content_type.model,
             Group.objects.get(name="reviewers").permissions.filter(pk=look.pk).exists()],
    "fresh_ids": newer.pk > Metric.objects.exclude(pk=newer.pk).order_by("-pk")[0].pk,
    "dataset": bytes(run.dataset.raw).decode(),
}))
"""

EXPECTED_READ_BACK = {
    "run": [
        "sums run",
        "sums",
        "sums.csv",
        1,
        "passed",
        b"\x00gepa-state\xff".hex(),
        "finished",
    ],
    "candidates": ["Answer: {q}", "Answer briefly: {q}"],
    "events": ["accepted"],
    "bucket": [3.5],
    "look": ["runs", "run", True],
    "fresh_ids": True,
    "dataset": "q,a\n2+2,4\n3+3,6\n",
}


def _manage(database_url: str, *args: str, script: str | None = None) -> str:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "DJANGO_"))},
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "skynet_web.settings",
    }
    argv = [sys.executable, "-c", script] if script else [sys.executable, "manage.py", *args]
    result = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result.stdout


def _check_upgrade(database_url: str, tables_of, rows_of) -> None:
    before_tables = tables_of()
    before = {table: rows_of(table) for table in before_tables}
    # Rows in every table of the snapshot, so every one of them is checked below.
    empty = {table for table, rows in before.items() if not rows}
    assert empty <= {"sqlite_sequence"}, empty
    types_before = {row[0]: (row[1], row[2]) for row in before["django_content_type"]}

    out = _manage(database_url, "migrate", "--no-input")
    assert "Applying runs.0002_run_moved... OK" in out
    assert "Applying jobs.0001_initial... OK" in out
    # Nothing left to apply, and the migrations match the models.
    assert "No planned migration operations." in _manage(database_url, "migrate", "--plan")
    _manage(database_url, "makemigrations", "--check", "--dry-run")

    # None dropped; the layout step made none and moved only the state. Later ones made
    # those of ADDED, empty.
    assert tables_of() == before_tables | set(ADDED)
    for table in ADDED:
        assert rows_of(table) == [], table
    for table in sorted(before_tables - REWRITTEN - GROWN):
        after = rows_of(table)
        if table in WIDENED:
            added = WIDENED[table]
            assert all(row[len(row) - len(added) :] == added for row in after), table
            after = sorted((row[: len(row) - len(added)] for row in after), key=repr)
        assert after == before[table], table
    types_after = {row[0]: (row[1], row[2]) for row in rows_of("django_content_type")}
    for pk, old in types_before.items():
        assert types_after[pk] == RELABELLED.get(old, old), old
    new_types = {types_after[pk] for pk in set(types_after) - set(types_before)}
    assert new_types == set(ADDED.values())
    for table in GROWN:
        after = rows_of(table)
        assert set(before[table]) <= set(after), table
        for row in set(after) - set(before[table]):
            assert any(model in str(value) for _, model in ADDED.values() for value in row), row
    applied = {(row[1], row[2]) for row in rows_of("django_migrations")}
    assert {(row[1], row[2]) for row in before["django_migrations"]} <= applied
    # The optimizations app's history is counted as the runs app's first migration.
    assert ("runs", "0001_initial") in applied

    read_back = json.loads(_manage(database_url, script=READ_BACK).strip().splitlines()[-1])
    assert read_back == EXPECTED_READ_BACK


# The backends checked: SQLite, and the suite's own database server when it is another.
BACKENDS = ["sqlite"]
if settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
    BACKENDS.append("postgresql")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_database_made_at_the_old_layout_upgrades_with_every_row_kept(backend, request):
    if backend == "sqlite":
        _sqlite(request.getfixturevalue("tmp_path"))
    else:
        request.getfixturevalue("db")
        _postgresql()


def _sqlite(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript((SNAPSHOTS / "36f1c93-sqlite.sql").read_text())
    db.commit()

    def tables_of() -> set[str]:
        rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        return {name for (name,) in rows}

    def rows_of(table: str) -> list[tuple]:
        rows = db.execute(f'SELECT * FROM "{table}"').fetchall()
        if table == "sqlite_sequence":  # the rewritten tables' counters move with them
            rows = [row for row in rows if row[0] not in REWRITTEN | GROWN]
        return sorted(rows, key=repr)

    try:
        _check_upgrade(f"sqlite:///{path}", tables_of, rows_of)
    finally:
        db.close()


def _postgresql() -> None:
    import psycopg

    params = connection.get_connection_params()
    server = {k: params[k] for k in ("host", "port", "user", "password") if params.get(k)}
    name = f"skynet_upgrade_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        with psycopg.connect(dbname=name, autocommit=True, **server) as db:
            db.execute((SNAPSHOTS / "36f1c93-postgres.sql").read_text())
            db.execute("SET search_path TO public")

            def tables_of() -> set[str]:
                rows = db.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                ).fetchall()
                return {table for (table,) in rows}

            def rows_of(table: str) -> list[tuple]:
                return sorted(db.execute(f'SELECT * FROM public."{table}"').fetchall(), key=repr)

            auth = f"{server.get('user', '')}@" if server.get("user") else ""
            if server.get("password"):
                auth = f"{server['user']}:{server['password']}@"
            url = f"postgres://{auth}{server.get('host', 'localhost')}:{server.get('port', 5432)}/{name}"
            _check_upgrade(url, tables_of, rows_of)
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
