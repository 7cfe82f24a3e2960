"""The metrics' models take over the tables metrics_app created: state only, no data moves."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("metrics_app", "0008_rate_bucket"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="Metric",
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
                        ("name", models.CharField(max_length=120, verbose_name="name")),
                        ("cases", models.JSONField(blank=True, default=list)),
                        (
                            "timeout_s",
                            models.PositiveIntegerField(
                                default=60, verbose_name="time limit (seconds)"
                            ),
                        ),
                        (
                            "reflection_model",
                            models.CharField(
                                blank=True,
                                default="",
                                max_length=120,
                                verbose_name="reflection model",
                            ),
                        ),
                        (
                            "metric_model",
                            models.CharField(
                                blank=True, default="", max_length=120, verbose_name="metric model"
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "owner",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="metrics",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "metrics_app_metric",
                        "ordering": ["-updated_at"],
                    },
                ),
                migrations.CreateModel(
                    name="MetricVersion",
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
                        ("number", models.PositiveIntegerField()),
                        ("source", models.TextField()),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "metric",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="versions",
                                to="metrics.metric",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "metrics_app_metricversion",
                        "ordering": ["-number"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("metric", "number"), name="unique_version_number"
                            )
                        ],
                    },
                ),
            ],
        ),
    ]
