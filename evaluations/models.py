"""An evaluation: one metric (or two) scored on many cases of a dataset, and its cases.

The Evaluation row is the truth about the run, as a Check row is about a check: claimed
once, kept alive by heartbeats, ended by the sweeps when its worker dies. Its cases are
rows of their own, written by the worker in chunks as they end, so neither the worker
nor a page ever holds every case; what the results page shows of all of them is the
`summary`, computed once by the database when the evaluation ends.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from contract.artifacts import Artifact
from jobs.models import WorkerRow


class Evaluation(WorkerRow):
    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    class Second(models.TextChoices):
        """What, if anything, scores each case's output a second time."""

        NONE = "", _("Score each case once")
        REPEAT = "repeat", _("Score each case several times, to measure its noise")
        COMPARE = "compare", _("Score each case with a second version too")

    FINAL = (Status.DONE, Status.FAILED)

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="evaluations"
    )
    # Where it was started from: a wizard draft (its artifact runs first), else the
    # playground (the dataset's recorded outputs are scored as they are).
    draft = models.ForeignKey(
        "submissions.Draft",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="evaluations",
    )
    metric_version = models.ForeignKey(
        "metrics.MetricVersion",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="evaluations",
    )
    source = models.TextField()
    second = models.CharField(max_length=8, choices=Second.choices, blank=True, default="")
    second_version = models.ForeignKey(
        "metrics.MetricVersion",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    # The metric scoring the second time: `source` again (repeat) or another one (compare).
    second_source = models.TextField(blank=True, default="")
    # With `second` "repeat": how many times each case is scored in all (2 to 5), each
    # time in a fresh process, to measure a judge's own noise.
    repeats = models.PositiveSmallIntegerField(default=2)
    # The cases: the dataset's rows that `selection` picks, made cases by `roles`.
    dataset = models.ForeignKey(
        "submissions.Dataset", on_delete=models.PROTECT, related_name="evaluations"
    )
    roles = models.JSONField(default=dict)
    # Each column's type ({column: "number" | "text" | "json"}) as the evaluation was
    # started with; a column it does not name has its type as read.
    column_types = models.JSONField(default=dict, blank=True)
    # The column whose cells are the outputs scored (playground); "" when the artifact
    # produces them (draft).
    recorded_column = models.CharField(max_length=200, blank=True, default="")
    # The columns that hold a person's judgement of each row (roles human_score,
    # human_label, human_note) and how to read them: {"scale": [lo, hi] of a human score,
    # "classes": [label values, lowest first], "threshold": the metric score from which
    # its verdict is the higher class}; see evaluations.human. Empty: no human labels.
    human = models.JSONField(default=dict, blank=True)
    # {"split": "all"|"train"|"validation"|"test", "mode": "ratio"|"column", "ratios":
    #  [70, 15, 15], "seed": 0, "column": "", "sample": N or 0 for every row,
    #  "sample_seed": 0}; see evaluations.selection.
    selection = models.JSONField(default=dict)
    timeout_s = models.PositiveIntegerField(default=60)
    reflection_model = models.CharField(max_length=120, blank=True, default="")
    metric_model = models.CharField(max_length=120, blank=True, default="")
    artifact = models.JSONField(null=True, blank=True)
    task_model = models.CharField(max_length=120, blank=True, default="")
    # What the admission projected (evaluations.admission): cost per case and in all.
    projected = models.JSONField(null=True, blank=True)
    # The model budget this evaluation is held to ({max_calls, max_tokens, max_usd}).
    limits = models.JSONField(default=dict)

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    # When it began waiting for a worker: its start, or the end of its last turn. A worker
    # takes the one waiting longest, whichever message woke it (evaluations.turns).
    waiting_since = models.DateTimeField(null=True, blank=True)
    # The failure's details, e.g. the load problem of a metric that does not load.
    failure_params = models.JSONField(default=dict, blank=True)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    # Which claim holds it: each claim counts one, and every write of a worker names its
    # own, so a worker that was thought lost and wakes writes nothing.
    claim = models.PositiveIntegerField(default=0)
    # How many times its worker was lost and it went back in line to resume.
    lost = models.PositiveIntegerField(default=0)
    # Counts so far by case status, and what the models used: the live page's numbers;
    # and what its next turn goes on from: turns taken, seconds run, budgets spent.
    progress = models.JSONField(default=dict, blank=True)
    # Everything the results page shows of all cases (evaluations.summary).
    summary = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["status", "heartbeat_at"], name="evaluation_status_beat"),
            models.Index(fields=["status", "enqueued_at"], name="evaluation_status_sent"),
            models.Index(fields=["status", "waiting_since"], name="evaluation_status_waiting"),
        ]

    def __str__(self) -> str:
        return f"evaluation {self.pk} ({self.status})"

    @property
    def artifact_value(self) -> Artifact | None:
        return Artifact.from_dict(self.artifact) if self.artifact else None

    @property
    def live_token(self) -> str:
        """Changes whenever the row does in a way the live panel shows: its status, its
        cases written (each chunk also moves the heartbeat), a cancel asked for."""
        beat = int(self.heartbeat_at.timestamp() * 1000) if self.heartbeat_at else 0
        stopping = "s" if self.cancel_requested else ""
        return f"{self.status}.{self.done}.{beat}{stopping}"

    @property
    def elapsed_s(self) -> float:
        if self.started_at is None:
            return 0.0
        end = self.finished_at or timezone.now()
        return max(0.0, (end - self.started_at).total_seconds())

    @property
    def rate(self) -> float | None:
        """Cases a second so far; None before there is anything to divide."""
        elapsed = self.elapsed_s
        return self.done / elapsed if self.done and elapsed > 0 else None

    @property
    def seconds_left(self) -> float | None:
        rate = self.rate
        if rate is None or self.is_final:
            return None
        return max(0, self.total - self.done) / rate


class EvaluationCase(models.Model):
    """One case's outcome: what the metric returned (and the second scoring's, if any)."""

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="cases")
    # Its place in the evaluation (0..total-1), and the dataset row it came from (0-based
    # index into the dataset's rows; file_row is the line or row the user sees).
    index = models.PositiveIntegerField()
    row = models.PositiveIntegerField()
    file_row = models.PositiveIntegerField()
    # valid | invalid | error | timeout | skipped (the check's case statuses)
    status = models.CharField(max_length=10)
    problem = models.CharField(max_length=60, blank=True, default="")
    # For a case whose code raised: the exception's class name, so failures group by it.
    exception_type = models.CharField(max_length=120, blank=True, default="")
    params = models.JSONField(default=dict, blank=True)
    score = models.FloatField(null=True, blank=True)
    feedback = models.TextField(blank=True, default="")
    feedback_length = models.PositiveIntegerField(default=0)
    # "" (none returned), "empty", "generic" or "specific": contract.evaluation's reading.
    feedback_kind = models.CharField(max_length=10, blank=True, default="")
    # Short digests, so the database can group equal feedbacks and equal outputs.
    feedback_digest = models.CharField(max_length=16, blank=True, default="")
    output_digest = models.CharField(max_length=16, blank=True, default="")
    scores = models.JSONField(null=True, blank=True)
    # Each DSPy predictor's own feedback ({predictor name: text}, each text cut as the
    # feedback is) of the side info's "predictor_feedback"; None when it returned none.
    predictor_feedback = models.JSONField(null=True, blank=True)
    # The case as scored: {"input", "output", "expected"} (long values cut short).
    case = models.JSONField(default=dict)
    # Times in ms: the metric's score() call, the artifact's run, the whole case.
    metric_ms = models.FloatField(null=True, blank=True)
    run_ms = models.FloatField(null=True, blank=True)
    total_ms = models.FloatField(default=0.0)
    task_usd = models.FloatField(default=0.0)
    metric_usd = models.FloatField(default=0.0)
    model_calls = models.PositiveIntegerField(default=0)
    # What else is worth showing: exception and traceback, printed output, run problem.
    detail = models.JSONField(default=dict, blank=True)
    # The second scoring ({status, problem, score, feedback, scores, metric_ms}) and
    # whether it differs from the first (flaky, or the two versions disagree), by how much.
    second = models.JSONField(null=True, blank=True)
    second_status = models.CharField(max_length=10, blank=True, default="")
    second_score = models.FloatField(null=True, blank=True)
    differs = models.BooleanField(default=False)
    gap = models.FloatField(null=True, blank=True)
    # The person's judgement of the row, from the human columns: {"score": number} or
    # {"label": text}, and "note"; None for an evaluation without them or a row unlabelled.
    human = models.JSONField(null=True, blank=True)
    # With K repeats: every scoring after the first, [{"status", "problem", "score"}, ...]
    # (K - 1 of them; the first of them is also `second`).
    repeats = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["index"]
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "index"], name="one_case_per_index")
        ]
        indexes = [
            models.Index(fields=["evaluation", "score"], name="evalcase_score"),
            models.Index(fields=["evaluation", "status", "index"], name="evalcase_status"),
            models.Index(fields=["evaluation", "problem", "index"], name="evalcase_problem"),
            models.Index(fields=["evaluation", "total_ms"], name="evalcase_time"),
            models.Index(fields=["evaluation", "differs", "gap"], name="evalcase_differs"),
            models.Index(fields=["evaluation", "feedback_digest"], name="evalcase_feedback"),
        ]

    def __str__(self) -> str:
        return f"case {self.index + 1} of evaluation {self.evaluation_id}"

    @property
    def number(self) -> int:
        return self.index + 1
