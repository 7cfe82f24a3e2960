"""Words for what the allowances refuse: too many checks, reviews or evaluations, a review
that cannot start, an evaluation too large or too costly."""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from wording.formatting import format_count, format_usd, table_words

# A check or a review the user may not start now (CheckRefused); `limit` is the bound hit.
REFUSALS = {
    "rate_limited": _(
        "You have started %(limit)s checks in the last minute. Wait a moment, then run it again."
    ),
    "too_many_active": _(
        "You already have %(limit)s checks queued or running. Wait for one to finish."
    ),
    "reviews_rate_limited": _(
        "You have asked for %(limit)s feedback reviews in the last minute. Wait a moment, "
        "then ask again."
    ),
}

REVIEW_REFUSALS = {
    "no_reflection_model": _("Pick a reflection model first, then ask again."),
    "not_reviewable": _("Only a finished case with feedback can be reviewed."),
}


def refusal_words(code: str | None, params: Mapping) -> str:
    return table_words(REFUSALS, code, params)


def review_refusal_words(code: str | None, params: Mapping) -> str:
    return table_words(REVIEW_REFUSALS, code, params)


# An evaluation the user may not start now (evaluations.services.EvaluationRefused).
EVALUATION_REFUSALS = {
    "no_cases": _("These rows hold no case to score. Choose another split, or more rows."),
    "too_many_cases": _(
        "An evaluation scores at most %(max)s cases; the rows you chose make %(cases)s. "
        "Take a sample, or a smaller split."
    ),
    "over_budget": _(
        "This evaluation would cost about %(projected_usd)s in model calls: %(cases)s cases "
        "at %(per_case_usd)s each, as the latest check measured. Its budget is "
        "%(max_usd)s. Take a smaller sample."
    ),
    "too_many_active": ngettext_lazy(
        "You already have %(count)s evaluation queued or running. Wait for it to finish, "
        "or cancel it.",
        "You already have %(count)s evaluations queued or running. Wait for one to "
        "finish, or cancel it.",
        "count",
    ),
    "rate_limited": ngettext_lazy(
        "You have started %(count)s evaluation in the last minute. Wait a moment, then "
        "start it again.",
        "You have started %(count)s evaluations in the last minute. Wait a moment, then "
        "start it again.",
        "count",
    ),
}
USD_PARAMS = ("projected_usd", "per_case_usd", "max_usd")
COUNT_PARAMS = ("cases", "max")


def evaluation_refusal_words(code: str | None, params: Mapping) -> str:
    """An EvaluationRefused worded, its amounts and counts in the reader's notation."""
    shown = dict(params)
    if "limit" in shown:
        shown["count"] = shown["limit"]  # picks the plural form
    for key in USD_PARAMS:
        if isinstance(shown.get(key), int | float):
            shown[key] = format_usd(shown[key])
    for key in COUNT_PARAMS:
        if isinstance(shown.get(key), int):
            shown[key] = format_count(shown[key])
    return table_words(EVALUATION_REFUSALS, code, shown)


# Why a queued check waits (checks.fair_share.waiting): its code, with "ahead".
WAITING = {
    "own_check_running": _(
        "Waiting for your other check to end: one user's checks run one at a time, so "
        "nobody's checks are held behind another's."
    ),
    "worker_busy": ngettext_lazy(
        "Waiting for a worker: %(count)s check is ahead of this one.",
        "Waiting for a worker: %(count)s checks are ahead of this one.",
        "count",
    ),
    "next": _("Waiting for a worker to pick it up."),
}


def waiting_words(code: str | None, params: Mapping) -> str:
    """Why a check is still queued, in the reader's words."""
    ahead = params.get("ahead")
    if code == "worker_busy" and not ahead:
        code = "next"
    return table_words(WAITING, code, {**params, "count": ahead or 0})
