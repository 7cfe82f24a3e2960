"""People labelling a dataset's rows in the browser, one case at a time.

A Labelling is one owner's task over one dataset (or the rows an evaluation scored): which
columns show as the input, the recorded output and the expected value, and what a label
is (pass/fail, or a 1..N scale). Its cases are copied once into CaseChunk rows, so a page
reads one chunk of a hundred cases and never the dataset's rows column (one JSON value
of up to 20 MB). Each person's judgement of a row is a Label of their own; an Invitation
lets one more account label the same rows, read-only as to everything else.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

# Cases a chunk holds: a page reads one chunk (about a hundred rows of text, decoded in
# well under a millisecond), whatever the dataset's size.
CHUNK = 100


class Labelling(models.Model):
    class Kind(models.TextChoices):
        PASS_FAIL = "pass_fail", _("Pass or fail")
        SCALE = "scale", _("A scale from 1 to N")

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="labellings"
    )
    dataset = models.ForeignKey(
        "submissions.Dataset", on_delete=models.CASCADE, related_name="labellings"
    )
    # Made from an evaluation: its rows are the cases, and a case's score and feedback
    # are shown beside a person's label once they have given it.
    evaluation = models.ForeignKey(
        "evaluations.Evaluation",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="labellings",
    )
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.PASS_FAIL)
    # N of a 1..N scale (2 to 5); 2 for pass/fail, whose labels are 1 (pass) and 0 (fail).
    scale = models.PositiveSmallIntegerField(default=2)
    input_columns = models.JSONField(default=list)
    output_column = models.CharField(max_length=200, blank=True, default="")
    expected_column = models.CharField(max_length=200, blank=True, default="")
    # How many cases there are to label (the rows of its chunks).
    total = models.PositiveIntegerField(default=0)
    # What its copy of the cases takes in storage (the chunks' JSON), counted against its
    # owner's quota beside their datasets (submissions.storage).
    stored_bytes = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"labelling {self.pk}"

    @property
    def values(self) -> list[int]:
        """The labels a person may give, in the order the buttons show them."""
        if self.kind == self.Kind.PASS_FAIL:
            return [1, 0]
        return list(range(1, self.scale + 1))


class CaseChunk(models.Model):
    """CHUNK consecutive cases of a labelling, as the page shows them: [{"row", "input":
    {column: value}, "output", "expected", "case": the evaluation case's index or None}],
    in the order of their rows (ascending), from position `start`."""

    labelling = models.ForeignKey(Labelling, on_delete=models.CASCADE, related_name="chunks")
    start = models.PositiveIntegerField()
    # The dataset row of its first case: the chunk a row is in, for a label given by row.
    first_row = models.PositiveIntegerField()
    cases = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["labelling", "start"], name="one_chunk_per_start")
        ]
        indexes = [models.Index(fields=["labelling", "first_row"], name="chunk_first_row")]

    def __str__(self) -> str:
        return f"cases {self.start + 1}- of labelling {self.labelling_id}"


class Label(models.Model):
    """One person's judgement of one row: 1 or 0 (pass/fail), or 1..N on a scale."""

    labelling = models.ForeignKey(Labelling, on_delete=models.CASCADE, related_name="labels")
    labeller = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="labels"
    )
    # The dataset row (index into its rows), and the case's place in the labelling (kept
    # with it so the first case a person has not labelled is one indexed query).
    row = models.PositiveIntegerField()
    position = models.PositiveIntegerField()
    value = models.FloatField()
    note = models.TextField(blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["labelling", "labeller", "row"], name="one_label_per_row"
            )
        ]
        indexes = [
            models.Index(fields=["labelling", "labeller", "position"], name="label_position"),
        ]

    def __str__(self) -> str:
        return f"label of row {self.row}"


class Invitation(models.Model):
    """Another account asked to label the same rows: it labels them with labels of its
    own, and sees nothing else of the owner's."""

    labelling = models.ForeignKey(Labelling, on_delete=models.CASCADE, related_name="invitations")
    invitee = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="labelling_invitations"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["labelling", "invitee"], name="one_invitation_each")
        ]

    def __str__(self) -> str:
        return f"invitation to labelling {self.labelling_id}"
