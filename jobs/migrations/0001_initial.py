"""RateBucket moves here from checks: the table (metrics_app_ratebucket) stays as it is,
only Django's record of who owns it changes, and its content type (so any permission
granted on it) follows it to this app."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def relabel_content_type(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    if not content_type.objects.filter(app_label="jobs", model="ratebucket").exists():
        content_type.objects.filter(app_label="checks", model="ratebucket").update(app_label="jobs")


def restore_content_type(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="jobs", model="ratebucket").update(app_label="checks")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("checks", "0003_check_cancel_requested"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
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
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("owner", "kind"), name="one_bucket_per_kind"
                            )
                        ],
                    },
                ),
            ],
        ),
        migrations.RunPython(relabel_content_type, restore_content_type),
    ]
