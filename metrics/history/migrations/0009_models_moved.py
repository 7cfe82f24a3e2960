"""The models moved to the metrics, checks and skynet_web apps (their first migrations
take the same tables over): metrics_app forgets them without touching a table, and the
content types (so any permission granted on them) follow to the new app labels."""

from django.db import migrations

MOVED = {
    "metric": "metrics",
    "metricversion": "metrics",
    "check": "checks",
    "feedbackreview": "checks",
    "ratebucket": "checks",
    "profile": "skynet_web",
}


def relabel_content_types(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    for model, label in MOVED.items():
        if not content_type.objects.filter(app_label=label, model=model).exists():
            content_type.objects.filter(app_label="metrics_app", model=model).update(
                app_label=label
            )


def restore_content_types(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    for model, label in MOVED.items():
        content_type.objects.filter(app_label=label, model=model).update(app_label="metrics_app")


class Migration(migrations.Migration):
    dependencies = [
        ("metrics_app", "0008_rate_bucket"),
        ("metrics", "0001_initial"),
        ("checks", "0001_initial"),
        ("skynet_web", "0001_initial"),
        ("submissions", "0002_models_moved"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(name="FeedbackReview"),
                migrations.DeleteModel(name="Check"),
                migrations.DeleteModel(name="RateBucket"),
                migrations.DeleteModel(name="Profile"),
                migrations.DeleteModel(name="MetricVersion"),
                migrations.DeleteModel(name="Metric"),
            ],
        ),
        migrations.RunPython(relabel_content_types, restore_content_types),
    ]
