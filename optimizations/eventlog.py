"""A run's events (optimizations.models.RunEvent) as the run page's log says them: one
sentence each, in the reader's language, from the event's kind and data."""

from __future__ import annotations

from django.utils import formats
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from evaluations.charts import number
from optimizations.models import RunEvent
from submissions.models import Run

# Candidates a "front" event names before it says how many more there are.
FRONT_NAMED = 8


def _status(status: str) -> str:
    try:
        return str(Run.Status(status).label)
    except ValueError:
        return status or "?"


def _candidates(indexes: list) -> str:
    named = [formats.number_format(i) for i in indexes[:FRONT_NAMED] if isinstance(i, int)]
    text = ", ".join(named)
    more = len(indexes) - len(named)
    if more > 0:
        text = ngettext("%(list)s and %(more)s more", "%(list)s and %(more)s more", more) % {
            "list": text,
            "more": formats.number_format(more),
        }
    return text


def event_text(event: RunEvent) -> str:
    data = event.data or {}
    kind = event.kind
    if kind == "claimed":
        return _("A worker (%(worker)s) started the run.") % {"worker": data.get("worker") or "?"}
    if kind == "resumed":
        return _("A worker (%(worker)s) went on from the last checkpoint.") % {
            "worker": data.get("worker") or "?"
        }
    if kind == "parent_selected":
        return _("Candidate %(parent)s (mean %(score)s) was picked to improve on.") % {
            "parent": data.get("parent", "?"),
            "score": number(data.get("score")),
        }
    if kind == "proposed":
        return _("The reflection model proposed a new candidate.")
    if kind == "accepted":
        parents = data.get("parents") or []
        return ngettext(
            "Candidate %(candidate)s, from candidate %(parents)s, did better on the sample "
            "(%(score)s in all) and joined the pool.",
            "Candidate %(candidate)s, from candidates %(parents)s, did better on the sample "
            "(%(score)s in all) and joined the pool.",
            max(1, len(parents)),
        ) % {
            "candidate": data.get("candidate", "?"),
            "parents": _candidates(parents) or "?",
            "score": number(data.get("score")),
        }
    if kind == "rejected":
        return _(
            "The new candidate scored %(new)s in all on the sample, no better than "
            "%(old)s: it was dropped."
        ) % {"new": number(data.get("new")), "old": number(data.get("old"))}
    if kind == "valset":
        template = (
            _(
                "Candidate %(candidate)s scored %(average)s on the validation cases: the best so far."
            )
            if data.get("best")
            else _("Candidate %(candidate)s scored %(average)s on the validation cases.")
        )
        return template % {
            "candidate": data.get("candidate", "?"),
            "average": number(data.get("average")),
        }
    if kind == "front":
        return _("The Pareto frontier now holds candidates %(candidates)s.") % {
            "candidates": _candidates(list(data.get("front") or [])) or "—"
        }
    if kind == "paused":
        return _("The run paused.")
    if kind == "ended":
        return _("The run ended: %(status)s.") % {"status": _status(data.get("status") or "")}
    if kind == "iteration":
        return _("Iteration %(number)s began.") % {"number": event.iteration}
    return kind


def log_rows(events: list[RunEvent]) -> list[dict]:
    return [
        {
            "id": event.pk,
            "kind": event.kind,
            "iteration": event.iteration,
            "created_at": event.created_at,
            "text": event_text(event),
        }
        for event in events
    ]
