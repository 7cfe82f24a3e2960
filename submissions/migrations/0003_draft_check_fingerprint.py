"""What a draft's contract check checked moves from the check (a wizard-only column) to
the draft, copied for every draft that has a check."""

from django.db import migrations, models


def copy_from_checks(apps, schema_editor):
    draft_model = apps.get_model("submissions", "Draft")
    for draft in draft_model.objects.exclude(contract_check=None).select_related("contract_check"):
        draft.check_fingerprint = draft.contract_check.fingerprint
        draft.save(update_fields=["check_fingerprint"])


def copy_to_checks(apps, schema_editor):
    draft_model = apps.get_model("submissions", "Draft")
    for draft in draft_model.objects.exclude(contract_check=None).select_related("contract_check"):
        draft.contract_check.fingerprint = draft.check_fingerprint
        draft.contract_check.save(update_fields=["fingerprint"])


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0002_models_moved"),
        ("checks", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="draft",
            name="check_fingerprint",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.RunPython(copy_from_checks, copy_to_checks),
    ]
