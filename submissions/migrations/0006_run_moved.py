"""Run moved to the runs app (runs' 0002_run_moved takes the same table over): the wizard
forgets it without touching the table."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0005_column_types"),
        ("runs", "0002_run_moved"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[migrations.DeleteModel(name="Run")],
        ),
    ]
