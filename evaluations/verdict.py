"""An evaluation's verdict, counted over every case: what its page says in words above the
results, what the API answers as `verdict` and what `skynet evaluate` exits by.

A mean over the valid cases alone hides the rest: 4 valid cases scoring 1.0 beside 6 that
raised is a mean of 1.0. So an evaluation passes only when it finished and every case it
scored is valid; a case that is not valid names the problem most cases share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from evaluations import presenters
from evaluations.models import Evaluation, EvaluationCase
from wording import format_count

# The verdict's codes, stable for the API and the client.
RUNNING = "running"  # not ended yet
STOPPED = "stopped"  # ended early: cancelled, lost, its metric would not load, ...
NO_CASES = "no_cases"  # ended with no case scored
ALL_VALID = "all_valid"
CASES_FAILED = "cases_failed"
CODES = (RUNNING, STOPPED, NO_CASES, ALL_VALID, CASES_FAILED)


@dataclass(frozen=True)
class Verdict:
    code: str
    cases: int  # cases scored
    failed: int  # of those, not valid
    # The problem the most failed cases share, in words ("" when none failed).
    reason: str
    # The verdict in a few words ("6 of 10 cases failed"), and with its reason.
    headline: str
    text: str

    @property
    def passed(self) -> bool:
        return self.code == ALL_VALID

    def as_dict(self) -> dict:
        return {
            "code": self.code,
            "passed": self.passed,
            "cases": self.cases,
            "failed": self.failed,
            "reason": self.reason,
            "headline": self.headline,
            "text": self.text,
        }


def _top_reason(failures: list[Mapping], first: EvaluationCase | None) -> str:
    if not failures:
        return ""
    shown = {first.index: first} if first is not None else {}
    return presenters.failure_groups(failures[:1], shown)[0]["title"]


def _first_failed(evaluation: Evaluation, failures: list[Mapping]) -> EvaluationCase | None:
    examples = (failures[0].get("examples") or []) if failures else []
    if not examples:
        return None
    return EvaluationCase.objects.filter(evaluation=evaluation, index=examples[0]).first()


def passed(evaluation: Evaluation) -> bool:
    """Whether the verdict is a pass, from the row alone (no case is read)."""
    if evaluation.status != Evaluation.Status.DONE:
        return False
    summary = evaluation.summary or {}
    cases = summary.get("cases") or 0
    return bool(cases) and (summary.get("counts") or {}).get("valid") == cases


def verdict(evaluation: Evaluation, *, first_failed: EvaluationCase | None = None) -> Verdict:
    """The verdict of `evaluation` as it stands. `first_failed` is the first example of its
    largest failure group when the caller read it already (else it is read here)."""
    if not evaluation.is_final:
        done, total = format_count(evaluation.done), format_count(evaluation.total)
        text = _("Running: %(done)s of %(total)s cases scored so far.") % {
            "done": done,
            "total": total,
        }
        return Verdict(RUNNING, evaluation.done, 0, "", text, text)
    if evaluation.status == Evaluation.Status.FAILED:
        headline = _("The evaluation did not finish")
        reason = presenters.failure_text(evaluation)
        return Verdict(
            STOPPED, evaluation.done, 0, reason, headline, f"{headline}: {reason}".rstrip(": ")
        )
    summary = evaluation.summary or {}
    cases = summary.get("cases") or 0
    valid = (summary.get("counts") or {}).get("valid") or 0
    if not cases:
        text = _("No case was scored.")
        return Verdict(NO_CASES, 0, 0, "", text, text)
    failed = cases - valid
    params = {"failed": format_count(failed), "cases": format_count(cases)}
    if not failed:
        text = (
            ngettext("%(cases)s case is valid.", "All %(cases)s cases are valid.", cases) % params
        )
        return Verdict(ALL_VALID, cases, 0, "", text, text)
    failures = list(summary.get("failures") or [])
    if first_failed is None:
        first_failed = _first_failed(evaluation, failures)
    reason = _top_reason(failures, first_failed)
    # The verb agrees with the cases that failed ("1 of 10 cases failed" is said
    # otherwise than "6 of 10" in Spanish and Hindi).
    headline = (
        ngettext(
            "%(failed)s of %(cases)s cases failed",
            "%(failed)s of %(cases)s cases failed",
            failed,
        )
        % params
    )
    if failed == cases:
        headline = ngettext("%(cases)s case failed", "All %(cases)s cases failed", cases) % params
    text = _("%(headline)s: %(reason)s") % {"headline": headline, "reason": reason}
    return Verdict(CASES_FAILED, cases, failed, reason, headline, text)
