"""A run's events (runs.models.RunEvent) as the run page's log says them: one
sentence each, in the reader's language, from the event's kind and data; a long series
of iterations that proposed nothing because their minibatch scored perfectly reads as
one sentence."""

from __future__ import annotations

from django.utils import formats
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from evaluations.charts import number
from runs.models import Run, RunEvent
from wording import format_count

# Candidates a "front" event names before it says how many more there are.
FRONT_NAMED = 8
# Iterations in a row whose minibatch scored perfectly that the log says in one line: a
# run whose candidate is already perfect on the training cases can spend most of its
# budget this way, and a line per iteration would push everything else off the log.
SERIES = 3


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
            "more": format_count(more),
        }
    return text


def _cases(indexes: object) -> str:
    """Training cases by number (their position in the training split, from 1)."""
    if not isinstance(indexes, list):
        return "?"
    return ", ".join(format_count(i + 1) for i in indexes if isinstance(i, int)) or "?"


def _skipped_text(data: dict) -> str:
    if data.get("code") == "perfect_minibatch":
        return _(
            "The minibatch of training cases %(cases)s scored perfectly on candidate "
            "%(candidate)s: nothing to improve, so no reflection call."
        ) % {"cases": _cases(data.get("cases")), "candidate": data.get("candidate", "?")}
    return _(
        "Nothing was proposed from candidate %(candidate)s on the minibatch of training "
        "cases %(cases)s (%(code)s), so no reflection call."
    ) % {
        "candidate": data.get("candidate", "?"),
        "cases": _cases(data.get("cases")),
        "code": data.get("code") or "?",
    }


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
    if kind == "reflection_skipped":
        return _skipped_text(data)
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


def _is_perfect_skip(event: RunEvent) -> bool:
    return event.kind == "reflection_skipped" and (event.data or {}).get("code") == (
        "perfect_minibatch"
    )


def _perfect_series(events: list[RunEvent], start: int) -> list[list[RunEvent]]:
    """The iterations in a row, from events[start] on (newest first), whose minibatch
    scored perfectly: each its skip and, just before it, the parent it picked."""
    series = []
    at = start
    while at < len(events) and _is_perfect_skip(events[at]):
        skip = events[at]
        iteration = [skip]
        picked = events[at + 1] if at + 1 < len(events) else None
        if (
            picked is not None
            and picked.kind == "parent_selected"
            and (picked.iteration, picked.attempt) == (skip.iteration, skip.attempt)
        ):
            iteration.append(picked)
        series.append(iteration)
        at += len(iteration)
    return series


def _series_row(series: list[list[RunEvent]]) -> dict:
    newest, oldest = series[0][0], series[-1][0]
    candidates = sorted(
        {c for c in ((it[0].data or {}).get("candidate") for it in series) if isinstance(c, int)}
    )
    text = ngettext(
        "Iterations %(first)s to %(last)s: %(count)s minibatch in a row scored perfectly on "
        "the candidate picked (%(candidates)s): nothing to improve, so no reflection call.",
        "Iterations %(first)s to %(last)s: %(count)s minibatches in a row scored perfectly on "
        "the candidate picked (%(candidates)s): nothing to improve, so no reflection calls.",
        len(series),
    ) % {
        "first": format_count(oldest.iteration),
        "last": format_count(newest.iteration),
        "count": format_count(len(series)),
        "candidates": _candidates(candidates) or "?",
    }
    return {
        "id": newest.pk,
        "kind": newest.kind,
        "iteration": None,  # the sentence names them
        "iteration_text": "",
        "created_at": newest.created_at,
        "text": text,
    }


def log_rows(events: list[RunEvent], limit: int | None = None) -> list[dict]:
    """The log's rows from `events` (newest first), at most `limit` of them."""
    rows = []
    at = 0
    while at < len(events) and (limit is None or len(rows) < limit):
        series = _perfect_series(events, at)
        if len(series) >= SERIES:
            rows.append(_series_row(series))
            at += sum(len(iteration) for iteration in series)
            continue
        event = events[at]
        rows.append(
            {
                "id": event.pk,
                "kind": event.kind,
                "iteration": event.iteration,
                "iteration_text": format_count(event.iteration),
                "created_at": event.created_at,
                "text": event_text(event),
            }
        )
        at += 1
    return rows
