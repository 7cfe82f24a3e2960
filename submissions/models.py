"""The submit wizard's draft and the datasets it uploads (a submitted draft's run is
runs.models.Run, which points back at both)."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from checks.models import Check
from metrics.models import MetricVersion

STEPS = ("artifact", "dataset", "metric", "models", "check", "review")
# The steps that are forms; the last two show and act on what these saved.
FORM_STEPS = STEPS[:4]


class ArtifactKind(models.TextChoices):
    PROMPT = "prompt", _("Prompt template")
    PYTHON = "python", _("Python program")
    DSPY = "dspy", _("DSPy program")


class Engine(models.TextChoices):
    AUTO = "auto", _("Auto")
    GEPA = "gepa", _("GEPA")
    DSPY_GEPA = "dspy_gepa", _("DSPy GEPA")


class Dataset(models.Model):
    """One uploaded file, exactly as uploaded, and what parsing it found. Immutable:
    a new upload is a new row, so a submitted run keeps the file it was checked on."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="datasets"
    )
    filename = models.CharField(max_length=255)
    raw = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    format = models.CharField(max_length=8)  # "csv" | "jsonl"
    encoding = models.CharField(max_length=40)
    columns = models.JSONField(default=list)
    row_count = models.PositiveIntegerField(default=0)
    # The first rows, for the preview, so that showing it never loads every row.
    preview = models.JSONField(default=list)
    rows = models.JSONField(default=list)
    # Where each row sits in the file, so later errors can name the row.
    row_numbers = models.JSONField(default=list)
    # Each column's type as read from its values ({column: "number" | "text" | "json"},
    # dataset_files.infer_types): what a draft or an evaluation that declares none uses.
    inferred_types = models.JSONField(default=dict, blank=True)
    warnings = models.JSONField(default=list)
    # What it takes in storage, counted against the owner's quota (submissions.storage):
    # the file's bytes and the JSON of its rows, preview and row numbers, set at upload.
    stored_bytes = models.PositiveBigIntegerField(default=0)
    # The dataset this one is a new version of (its rows, plus columns of labels people
    # gave in the browser, labelling.versions); the parent stays as uploaded, byte for byte.
    parent = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="versions"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # Finding a file uploaded before (the same bytes are stored once per user).
        indexes = [models.Index(fields=["owner", "sha256"], name="dataset_owner_sha256")]

    def __str__(self) -> str:
        return self.filename

    @property
    def size(self) -> int:
        return len(self.raw)


class Draft(models.Model):
    """A submission in progress, saved step by step on the server so it can be resumed."""

    class SplitMode(models.TextChoices):
        RATIO = "ratio", _("By ratio, with a seed")
        COLUMN = "column", _("From a split column")

    class MetricMode(models.TextChoices):
        SAVED = "saved", _("A saved metric version")
        INLINE = "inline", _("Write it here")

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="drafts"
    )
    name = models.CharField(_("name"), max_length=120)
    # 1. Artifact
    artifact_kind = models.CharField(
        max_length=10, choices=ArtifactKind.choices, default=ArtifactKind.PROMPT
    )
    artifact_content = models.TextField(blank=True, default="")
    program_source = models.TextField(blank=True, default="")
    # 2. Dataset
    dataset = models.ForeignKey(
        Dataset, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    roles = models.JSONField(default=dict, blank=True)
    # The type each column's values reach the metric with, as the user declared it; a
    # column it does not name has its type as read (Dataset.inferred_types).
    column_types = models.JSONField(default=dict, blank=True)
    split_mode = models.CharField(max_length=8, choices=SplitMode.choices, default="ratio")
    train_percent = models.PositiveSmallIntegerField(default=70)
    validation_percent = models.PositiveSmallIntegerField(default=15)
    test_percent = models.PositiveSmallIntegerField(default=15)
    seed = models.BigIntegerField(default=0)
    split_column = models.CharField(max_length=200, blank=True, default="")
    # What the dataset settings above make of the dataset (problem, split counts, the
    # check's sample), computed when they are saved; see datasets.current_facts.
    dataset_facts = models.JSONField(default=dict, blank=True)
    # 3. Metric
    metric_mode = models.CharField(max_length=8, choices=MetricMode.choices, default="saved")
    metric_version = models.ForeignKey(
        MetricVersion, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    inline_source = models.TextField(blank=True, default="")
    # 4. Models and engine (catalogue ids; an empty metric model means the reflection model)
    task_model = models.CharField(max_length=120, blank=True, default="")
    reflection_model = models.CharField(max_length=120, blank=True, default="")
    metric_model = models.CharField(max_length=120, blank=True, default="")
    engine = models.CharField(max_length=10, choices=Engine.choices, default=Engine.AUTO)
    budget = models.PositiveIntegerField(default=500)
    # Cases per reflection minibatch: the candidates' comparison GEPA's acceptance rests
    # on (gepa's and DSPy GEPA's reflection_minibatch_size).
    minibatch = models.PositiveSmallIntegerField(default=3)
    # The run's dollar budget across its task, metric and reflection models.
    budget_usd = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("5.00"))
    # 5. The latest contract check started from this draft, and what it checked
    # (rules.fingerprint when it started): the gate is open only while the draft still
    # has that fingerprint (rules.check_state).
    contract_check = models.ForeignKey(
        Check, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    check_fingerprint = models.CharField(max_length=64, blank=True, default="")
    # Input of a step that did not validate, kept so that Back never loses it.
    unsaved = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.name

    @property
    def saved_version(self):
        """The saved metric version the draft uses; None when its metric is written inline."""
        return self.metric_version if self.metric_mode == self.MetricMode.SAVED else None

    @property
    def submitted(self) -> bool:
        return hasattr(self, "run") and self.run is not None
