"""RateBucket moved to the jobs app (jobs' 0001_initial takes the same table over):
checks forgets it without touching the table."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("checks", "0003_check_cancel_requested"),
        ("jobs", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[migrations.DeleteModel(name="RateBucket")],
        ),
    ]
