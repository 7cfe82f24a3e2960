"""Run moves here from the wizard (submissions): its table (submissions_run) stays as it
is, only Django's record of who owns it changes, and the runs' candidates and events point
at it here. The content types of the three models (so any permission granted on them)
follow them to this app's label, from "submissions" and from "optimizations", the label
the candidates and events were made under."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MOVED = {
    "run": "submissions",
    "runcandidate": "optimizations",
    "runevent": "optimizations",
}


def relabel_content_types(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    for model, label in MOVED.items():
        if not content_type.objects.filter(app_label="runs", model=model).exists():
            content_type.objects.filter(app_label=label, model=model).update(app_label="runs")


def restore_content_types(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    for model, label in MOVED.items():
        content_type.objects.filter(app_label="runs", model=model).update(app_label=label)


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0001_initial"),
        ("submissions", "0005_column_types"),
        ("checks", "0003_check_cancel_requested"),
        ("metrics", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="Run",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("failure", models.CharField(blank=True, default="", max_length=40)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("enqueued_at", models.DateTimeField(blank=True, null=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("heartbeat_at", models.DateTimeField(blank=True, null=True)),
                        ("worker", models.CharField(blank=True, default="", max_length=200)),
                        ("cancel_requested", models.BooleanField(default=False)),
                        ("name", models.CharField(max_length=120)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("queued", "Queued"),
                                    ("running", "Running"),
                                    ("paused", "Paused"),
                                    ("finished", "Finished"),
                                    ("cancelled", "Cancelled"),
                                    ("failed", "Failed"),
                                ],
                                default="queued",
                                max_length=10,
                            ),
                        ),
                        ("config", models.JSONField()),
                        ("metric_source", models.TextField()),
                        ("failure_params", models.JSONField(blank=True, default=dict)),
                        ("stop_reason", models.CharField(blank=True, default="", max_length=20)),
                        ("attempt", models.PositiveIntegerField(default=0)),
                        ("progress", models.JSONField(blank=True, default=dict)),
                        ("result", models.JSONField(blank=True, null=True)),
                        ("checkpoint", models.BinaryField(blank=True, null=True)),
                        ("checkpoint_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "contract_check",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="checks.check",
                            ),
                        ),
                        (
                            "dataset",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="runs",
                                to="submissions.dataset",
                            ),
                        ),
                        (
                            "draft",
                            models.OneToOneField(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="run",
                                to="submissions.draft",
                            ),
                        ),
                        (
                            "metric_version",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to="metrics.metricversion",
                            ),
                        ),
                        (
                            "owner",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="runs",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "submissions_run",
                        "ordering": ["-created_at"],
                    },
                ),
                migrations.AlterField(
                    model_name="runcandidate",
                    name="run",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="candidates",
                        to="runs.run",
                    ),
                ),
                migrations.AlterField(
                    model_name="runevent",
                    name="run",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="runs.run",
                    ),
                ),
            ],
        ),
        migrations.RunPython(relabel_content_types, restore_content_types),
    ]
