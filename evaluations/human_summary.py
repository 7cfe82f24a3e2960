"""How the metric agrees with people, for the summary of an evaluation whose dataset holds
a person's judgement of each row (dataset_files.human): computed once when it ends.

The pairs are streamed from the database CHUNK rows at a time into flat lists of
numbers and short labels (a 200,000-case evaluation holds a few megabytes), and the
figures, each with its bootstrap interval, are contract.agreement's (scikit-learn and
scipy). With a second version (compare), its agreement is computed on the same rows, so
the page can say which of the two agrees better with people.
"""

from __future__ import annotations

import math

from django.db.models import QuerySet

from contract import agreement
from evaluations.models import Evaluation

CHUNK = 2000
LISTED = 10  # the cases where metric and person disagree most


def human_summary(evaluation: Evaluation, cases: QuerySet) -> dict | None:
    """The summary's "human" part; None for an evaluation without human columns."""
    settings = evaluation.human or {}
    if not settings:
        return None
    kind = "score" if settings.get("score_column") else "label"
    pairs = _Pairs(kind)
    rows = (
        cases.filter(human__isnull=False)
        .order_by("index")
        .values_list("index", "status", "score", "second_status", "second_score", "human")
    )
    for index, status, score, second_status, second_score, human in rows.iterator(chunk_size=CHUNK):
        pairs.add(index, status, score, second_status, second_score, human)
    compare = evaluation.second == Evaluation.Second.COMPARE
    first = _figures(kind, settings, pairs.human, pairs.first)
    return {
        "kind": kind,
        "labelled": pairs.labelled,
        "notes": pairs.notes,
        "compared": first["n"] if first else 0,
        "unscored": pairs.unscored,
        "scale": settings.get("scale"),
        "classes": settings.get("classes"),
        "threshold": settings.get("threshold"),
        "first": first,
        "second": _figures(kind, settings, pairs.human, pairs.second) if compare else None,
        "disagree": _disagree(kind, settings, pairs),
    }


def _valid(status: str, score) -> float | None:
    if status != "valid" or score is None:
        return None
    score = float(score)
    return score if math.isfinite(score) else None


class _Pairs:
    """Each labelled case's index, the person's value, and each version's score (None
    where it gave no valid one)."""

    def __init__(self, kind: str):
        self.kind = kind
        self.indexes: list[int] = []
        self.human: list = []
        self.first: list[float | None] = []
        self.second: list[float | None] = []
        self.labelled = self.notes = self.unscored = 0

    def add(self, index, status, score, second_status, second_score, human) -> None:
        if not isinstance(human, dict):
            return
        self.notes += bool(human.get("note"))
        value = human.get(self.kind)
        if value is None:
            return
        self.labelled += 1
        first = _valid(status, score)
        self.unscored += first is None
        self.indexes.append(index)
        self.human.append(value)
        self.first.append(first)
        self.second.append(_valid(second_status, second_score))


def _figures(kind: str, settings: dict, human: list, scores: list) -> dict | None:
    """The agreement of one version's scores with the person's values, over the rows
    where both are given."""
    kept = [(h, s) for h, s in zip(human, scores, strict=True) if s is not None]
    if not kept:
        return None
    people = [h for h, _ in kept]
    metric = [s for _, s in kept]
    if kind == "label":
        classes = settings["classes"]
        verdicts = agreement.metric_classes(metric, classes, threshold=settings.get("threshold"))
        return agreement.label_agreement(people, verdicts, classes)
    return agreement.score_agreement(people, metric, scale=tuple(settings["scale"]))


def _disagree(kind: str, settings: dict, pairs: _Pairs) -> list[int]:
    """The indexes of the cases where the metric and the person disagree most, first
    version: on a 0..1 footing, the distance between the person's value and the
    metric's score (for labels, the label's place among the classes)."""
    if kind == "label":
        classes = settings["classes"]
        place = {c: i / (len(classes) - 1) for i, c in enumerate(classes)}
        people = [place.get(h) for h in pairs.human]
        verdicts = agreement.metric_classes(
            [s if s is not None else 0.0 for s in pairs.first],
            classes,
            threshold=settings.get("threshold"),
        )
        wrong = [h != v for h, v in zip(pairs.human, verdicts, strict=True)]
    else:
        lo, hi = settings["scale"]
        people = [(h - lo) / (hi - lo) for h in pairs.human]
        wrong = [True] * len(people)
    ranked = []
    for index, person, score, differs in zip(
        pairs.indexes, people, pairs.first, wrong, strict=True
    ):
        if score is None or person is None or not differs:
            continue
        gap = abs(min(1.0, max(0.0, score)) - person)
        if gap > 1e-9:
            ranked.append((-gap, index))
    ranked.sort()
    return [index for _, index in ranked[:LISTED]]
