"""The wizard's foreign keys follow Check and MetricVersion to their new apps; the
columns and their constraints stay as they are."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("metrics_app", "0008_rate_bucket"),
        ("checks", "0001_initial"),
        ("metrics", "0001_initial"),
        ("submissions", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name="draft",
                    name="contract_check",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="checks.check",
                    ),
                ),
                migrations.AlterField(
                    model_name="draft",
                    name="metric_version",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="metrics.metricversion",
                    ),
                ),
                migrations.AlterField(
                    model_name="run",
                    name="contract_check",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="checks.check",
                    ),
                ),
                migrations.AlterField(
                    model_name="run",
                    name="metric_version",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="metrics.metricversion",
                    ),
                ),
            ],
        ),
    ]
