"""Make the database snapshots the upgrade test (tests/skynet_web/test_upgrade.py) starts
from: a database migrated by the workbench as it was at commit 36f1c93 (the layout before
runs/, jobs/ and metrics/history/), with rows in every one of its tables, dumped as SQL.

Run from a checkout of that commit, with the workbench's virtualenv:

    DATABASE_URL=sqlite:////tmp/snap.sqlite3 python make_snapshot.py sqlite OUT.sql
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/snap python make_snapshot.py postgres OUT.sql

It is kept beside the snapshots so their making can be read and repeated; the suite
never runs it (it needs the old code).
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "skynet_web.settings")

import django

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

WHEN = dt.datetime(2026, 12, 4, 12, 0, tzinfo=dt.UTC)


def fill() -> None:
    from axes.models import AccessAttempt, AccessAttemptExpiration, AccessFailureLog, AccessLog
    from django.contrib.admin.models import LogEntry
    from django.contrib.auth.models import Group, Permission, User
    from django.contrib.contenttypes.models import ContentType
    from django.contrib.sessions.models import Session
    from optimizations.models import RunCandidate, RunEvent

    from api.models import ApiToken
    from checks.models import Check, FeedbackReview, RateBucket
    from evaluations.models import Evaluation, EvaluationCase
    from metrics.models import Metric, MetricVersion
    from skynet_web.models import Profile
    from submissions.models import Dataset, Draft, Run

    owner = User.objects.create_user("owner", "owner@example.com", "kept-password")
    other = User.objects.create_user("outsider", "", "other-password")
    group = Group.objects.create(name="reviewers")
    run_type = ContentType.objects.get(app_label="submissions", model="run")
    granted = Permission.objects.create(name="Can look", codename="look_run", content_type=run_type)
    group.permissions.add(granted)
    owner.groups.add(group)
    owner.user_permissions.add(Permission.objects.get(codename="view_check"))
    Profile.objects.create(user=owner, language="hi")
    Profile.objects.create(user=other, language="es")
    Session.objects.create(session_key="k" * 32, session_data="e30:kept", expire_date=WHEN)
    LogEntry.objects.create(
        user=owner, content_type=run_type, object_id="1", object_repr="run", action_flag=1
    )
    attempt = AccessAttempt.objects.create(
        username="owner", ip_address="127.0.0.1", user_agent="ua", failures_since_start=2
    )
    AccessAttemptExpiration.objects.create(access_attempt=attempt, expires_at=WHEN)
    AccessLog.objects.create(username="owner", ip_address="127.0.0.1", user_agent="ua")
    AccessFailureLog.objects.create(username="owner", ip_address="127.0.0.1", user_agent="ua")

    source = "def score(input, output, expected=None):\n    return float(output == expected)\n"
    metric = Metric.objects.create(
        owner=owner, name="exact match", cases=[{"input": {"q": "2+2"}, "output": "4"}]
    )
    version = MetricVersion.objects.create(metric=metric, number=1, source=source)
    second = MetricVersion.objects.create(metric=metric, number=2, source=source + "# two\n")
    check = Check.objects.create(
        owner=owner,
        metric_version=version,
        source=source,
        cases=[{"input": {"q": "2+2"}, "output": "4", "expected": "4"}],
        status="passed",
        result={"passed": True, "cases": [{"status": "valid", "feedback": "fine"}]},
        artifact={"kind": "prompt", "content": "Answer: {q}"},
        task_model="openai/gpt-4o-mini",
        metric_model="openai/gpt-4o-mini",
        reflection_model="openai/gpt-4o",
        enqueued_at=WHEN,
        started_at=WHEN,
        finished_at=WHEN,
        heartbeat_at=WHEN,
        worker="worker-1",
    )
    FeedbackReview.objects.create(
        contract_check=check, case_index=0, model="openai/gpt-4o", status="done", text="useful"
    )
    RateBucket.objects.create(owner=owner, kind="check", tokens=3.5, refilled_at=WHEN)
    raw = b"q,a\n2+2,4\n3+3,6\n"
    dataset = Dataset.objects.create(
        owner=owner,
        filename="sums.csv",
        raw=raw,
        sha256="a" * 64,
        format="csv",
        encoding="utf-8",
        columns=["q", "a"],
        row_count=2,
        preview=[["2+2", "4"]],
        rows=[["2+2", "4"], ["3+3", "6"]],
        row_numbers=[2, 3],
        inferred_types={"q": "text", "a": "number"},
    )
    draft = Draft.objects.create(
        owner=owner,
        name="sums",
        artifact_kind="prompt",
        artifact_content="Answer: {q}",
        dataset=dataset,
        roles={"q": "input", "a": "output"},
        column_types={"a": "number"},
        metric_version=version,
        task_model="openai/gpt-4o-mini",
        reflection_model="openai/gpt-4o",
        budget=200,
        budget_usd=Decimal("2.50"),
        contract_check=check,
        check_fingerprint="f" * 64,
    )
    run = Run.objects.create(
        owner=owner,
        draft=draft,
        name="sums run",
        status="finished",
        config={"engine": "gepa", "budget": {"metric_calls": 200, "usd": 2.5}},
        metric_source=source,
        metric_version=version,
        dataset=dataset,
        contract_check=check,
        progress={"metric_calls": 200},
        result={"best": 1},
        checkpoint=b"\x00gepa-state\xff",
        checkpoint_at=WHEN,
        attempt=1,
    )
    RunCandidate.objects.create(
        run=run, idx=0, text="Answer: {q}", val_scores={"0": 1.0}, average=1.0
    )
    RunCandidate.objects.create(
        run=run, idx=1, text="Answer briefly: {q}", parents=[0], average=0.5, discovered_at=40
    )
    RunEvent.objects.create(run=run, attempt=1, iteration=3, kind="accepted", data={"idx": 1})
    evaluation = Evaluation.objects.create(
        owner=owner,
        draft=draft,
        metric_version=version,
        source=source,
        second="version",
        second_version=second,
        second_source=second.source,
        dataset=dataset,
        roles={"q": "input", "a": "expected"},
        recorded_column="a",
        selection={"kind": "all"},
        status="done",
        total=2,
        done=2,
        summary={"mean": 0.5},
    )
    for index in range(2):
        EvaluationCase.objects.create(
            evaluation=evaluation,
            index=index,
            row=index,
            file_row=index + 2,
            status="valid",
            score=float(index),
            feedback=f"case {index}",
            case={"input": {"q": "2+2"}, "output": "4", "expected": 4},
            total_ms=1.5,
        )
    ApiToken.objects.create(
        owner=owner, name="ci", prefix="skn_abcd", digest="d" * 64, scope="write"
    )


def dump(kind: str, out: Path) -> None:
    if kind == "sqlite":
        import sqlite3

        db = sqlite3.connect(connection.settings_dict["NAME"])
        out.write_text("\n".join(db.iterdump()) + "\n")
        return
    url = os.environ["DATABASE_URL"]
    subprocess.run(
        ["pg_dump", "--inserts", "--no-owner", "--no-privileges", "--file", str(out), url],
        check=True,
    )
    # Plain SQL only: psql's meta-commands (pg_dump's \restrict lines) are dropped.
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(line for line in lines if not line.startswith("\\")))


def main() -> None:
    kind, out = sys.argv[1], Path(sys.argv[2])
    call_command("migrate", verbosity=0)
    fill()
    connection.close()
    dump(kind, out)


if __name__ == "__main__":
    main()
