"""Words for what the allowances refuse: too many checks or reviews, a review that cannot start."""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext_lazy as _

from messages.formatting import table_words

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
