"""An existing database migrates to the split apps (metrics, checks, skynet_web) with
nothing lost: every row, every relation between them, and the content types (so any
permission granted on a moved model) follow the models to their new app."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

# The migration head the day the models still lived in metrics_app.
BEFORE_THE_SPLIT = [
    ("metrics_app", "0008_rate_bucket"),
    ("submissions", "0001_initial"),
    ("metrics", None),
    ("checks", None),
    ("skynet_web", None),
]

# Which app each moved model went to, as the migration that moved them says.
MOVED = importlib.import_module("metrics.history.migrations.0009_models_moved").MOVED


def _migrate(targets) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return MigrationExecutor(connection)  # a fresh loader sees what is applied now


def _fill_old_tables(apps) -> dict:
    """One row in every table of the old head, each pointing at the others."""
    from django.utils import timezone

    user = apps.get_model("auth", "User").objects.create(username="old-timer")
    Metric = apps.get_model("metrics_app", "Metric")
    metric = Metric.objects.create(owner_id=user.pk, name="kept", cases=[{"input": "a"}])
    version = apps.get_model("metrics_app", "MetricVersion").objects.create(
        metric=metric, number=1, source="def score(input, output, expected=None): ..."
    )
    check = apps.get_model("metrics_app", "Check").objects.create(
        owner_id=user.pk,
        metric_version=version,
        source=version.source,
        status="passed",
        result={"passed": True, "cases": [{"feedback": "fine"}]},
        artifact={"kind": "prompt", "content": "Say hi"},
        task_model="openai/gpt-4o-mini",
        fingerprint="f" * 64,
    )
    review = apps.get_model("metrics_app", "FeedbackReview").objects.create(
        contract_check=check, case_index=0, model="openai/gpt-4o-mini", text="useful"
    )
    apps.get_model("metrics_app", "Profile").objects.create(user_id=user.pk, language="hi")
    apps.get_model("metrics_app", "RateBucket").objects.create(
        owner_id=user.pk, kind="check", tokens=3.5, refilled_at=timezone.now()
    )
    dataset = apps.get_model("submissions", "Dataset").objects.create(
        owner_id=user.pk,
        filename="d.csv",
        raw=b"input\na\n",
        sha256="0" * 64,
        format="csv",
        encoding="utf-8",
        columns=["input"],
        row_count=1,
    )
    draft = apps.get_model("submissions", "Draft").objects.create(
        owner_id=user.pk,
        name="draft",
        dataset=dataset,
        metric_version=version,
        contract_check=check,
    )
    run = apps.get_model("submissions", "Run").objects.create(
        owner_id=user.pk,
        draft=draft,
        name="run",
        config={"engine": "gepa"},
        metric_source=version.source,
        metric_version=version,
        dataset=dataset,
        contract_check=check,
    )
    return {
        "user": user.pk,
        "metric": metric.pk,
        "version": version.pk,
        "check": check.pk,
        "review": review.pk,
        "dataset": dataset.pk,
        "draft": draft.pk,
        "run": run.pk,
    }


def test_a_database_at_the_old_head_migrates_with_every_row_and_relation_kept():
    from django.contrib.auth.models import Permission
    from django.contrib.contenttypes.models import ContentType

    executor = _migrate(BEFORE_THE_SPLIT)
    old = executor.loader.project_state(
        [("metrics_app", "0008_rate_bucket"), ("submissions", "0001_initial")]
    ).apps
    ids = _fill_old_tables(old)
    # As on a database made before the split: content types under the old label, one of
    # them with a permission granted on it.
    ContentType.objects.filter(model__in=MOVED).delete()
    for model in MOVED:
        ContentType.objects.create(app_label="metrics_app", model=model)
    granted = Permission.objects.create(
        name="Can look",
        codename="look_check",
        content_type=ContentType.objects.get(app_label="metrics_app", model="check"),
    )

    executor = _migrate(executor.loader.graph.leaf_nodes())
    assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []

    from checks.models import Check, FeedbackReview
    from jobs.models import RateBucket
    from metrics.models import Metric, MetricVersion
    from runs.models import Run
    from skynet_web.models import Profile
    from submissions.models import Dataset, Draft

    metric = Metric.objects.get(pk=ids["metric"])
    assert (metric.name, metric.cases, metric.owner_id) == ("kept", [{"input": "a"}], ids["user"])
    version = MetricVersion.objects.get(pk=ids["version"])
    assert version.metric == metric and version.number == 1
    check = Check.objects.get(pk=ids["check"])
    assert check.metric_version == version and check.status == "passed"
    assert check.result == {"passed": True, "cases": [{"feedback": "fine"}]}
    assert check.artifact == {"kind": "prompt", "content": "Say hi"}
    review = FeedbackReview.objects.get(pk=ids["review"])
    assert review.contract_check == check and review.text == "useful"
    assert Profile.objects.get(user_id=ids["user"]).language == "hi"
    assert RateBucket.objects.get(owner_id=ids["user"], kind="check").tokens == 3.5
    dataset = Dataset.objects.get(pk=ids["dataset"])
    assert bytes(dataset.raw) == b"input\na\n"
    draft = Draft.objects.get(pk=ids["draft"])
    assert (draft.dataset, draft.metric_version, draft.contract_check) == (dataset, version, check)
    # What the check checked moved from the check to the draft.
    assert draft.check_fingerprint == "f" * 64
    run = Run.objects.get(pk=ids["run"])
    assert (run.draft, run.metric_version, run.contract_check) == (draft, version, check)
    # New rows still get fresh ids after the old ones (the sequences came along).
    newer = Metric.objects.create(owner_id=ids["user"], name="new")
    assert newer.pk > metric.pk

    for model, label in MOVED.items():
        assert ContentType.objects.filter(app_label=label, model=model).count() == 1
        assert not ContentType.objects.filter(app_label="metrics_app", model=model).exists()
    granted.refresh_from_db()
    assert (granted.content_type.app_label, granted.content_type.model) == ("checks", "check")
