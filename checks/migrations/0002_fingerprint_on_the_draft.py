"""A check no longer keeps the wizard's fingerprint (the draft does, since submissions
0003 copied it) nor the language it was started in, which nothing read."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("checks", "0001_initial"),
        ("submissions", "0003_draft_check_fingerprint"),
    ]

    operations = [
        migrations.RemoveField(model_name="check", name="fingerprint"),
        migrations.RemoveField(model_name="check", name="language"),
    ]
