"""A running check can be asked to stop: the worker running it kills its sandbox."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("checks", "0002_fingerprint_on_the_draft"),
    ]

    operations = [
        migrations.AddField(
            model_name="check",
            name="cancel_requested",
            field=models.BooleanField(default=False),
        ),
    ]
