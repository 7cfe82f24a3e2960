"""The checks' models take over the tables metrics_app created: state only, no data moves."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("metrics_app", "0008_rate_bucket"),
        ("metrics", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="Check",
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
                        ("source", models.TextField()),
                        ("cases", models.JSONField(blank=True, null=True)),
                        ("timeout_s", models.PositiveIntegerField(default=60)),
                        (
                            "reflection_model",
                            models.CharField(blank=True, default="", max_length=120),
                        ),
                        ("metric_model", models.CharField(blank=True, default="", max_length=120)),
                        ("artifact", models.JSONField(blank=True, null=True)),
                        ("task_model", models.CharField(blank=True, default="", max_length=120)),
                        ("fingerprint", models.CharField(blank=True, default="", max_length=64)),
                        ("language", models.CharField(default="en", max_length=8)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("queued", "Queued"),
                                    ("running", "Running"),
                                    ("passed", "Passed"),
                                    ("failed", "Failed"),
                                ],
                                default="queued",
                                max_length=10,
                            ),
                        ),
                        ("failure", models.CharField(blank=True, default="", max_length=40)),
                        ("result", models.JSONField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("enqueued_at", models.DateTimeField(blank=True, null=True)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("heartbeat_at", models.DateTimeField(blank=True, null=True)),
                        ("worker", models.CharField(blank=True, default="", max_length=200)),
                        (
                            "metric_version",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="checks",
                                to="metrics.metricversion",
                            ),
                        ),
                        (
                            "owner",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="checks",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "metrics_app_check",
                        "ordering": ["-created_at"],
                    },
                ),
                migrations.CreateModel(
                    name="FeedbackReview",
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
                        ("case_index", models.PositiveSmallIntegerField()),
                        ("model", models.CharField(max_length=120)),
                        ("language", models.CharField(default="en", max_length=8)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("queued", "Queued"),
                                    ("running", "Running"),
                                    ("done", "Done"),
                                    ("failed", "Failed"),
                                ],
                                default="queued",
                                max_length=10,
                            ),
                        ),
                        ("text", models.TextField(blank=True, default="")),
                        ("error_code", models.CharField(blank=True, default="", max_length=40)),
                        ("error_message", models.TextField(blank=True, default="")),
                        ("usage", models.JSONField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "contract_check",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="reviews",
                                to="checks.check",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "metrics_app_feedbackreview",
                        "ordering": ["-created_at"],
                    },
                ),
                migrations.CreateModel(
                    name="RateBucket",
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
                        ("kind", models.CharField(max_length=16)),
                        ("tokens", models.FloatField()),
                        ("refilled_at", models.DateTimeField()),
                        (
                            "owner",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="rate_buckets",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "metrics_app_ratebucket",
                    },
                ),
                migrations.AddIndex(
                    model_name="check",
                    index=models.Index(
                        fields=["status", "heartbeat_at"], name="metrics_app_status_8607d5_idx"
                    ),
                ),
                migrations.AddIndex(
                    model_name="check",
                    index=models.Index(
                        fields=["status", "enqueued_at"], name="metrics_app_status_88f988_idx"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="ratebucket",
                    constraint=models.UniqueConstraint(
                        fields=("owner", "kind"), name="one_bucket_per_kind"
                    ),
                ),
            ],
        ),
    ]
