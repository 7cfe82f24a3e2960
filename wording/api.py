"""Words for the JSON API's errors: its `code`s (api.errors), each read in the language of
the request's Accept-Language header."""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext_lazy as _

from wording.datasets import DATASET_ERRORS, dataset_error_words
from wording.formatting import table_words

# A user's datasets (api.routes.datasets): the pages' words, with the parameters the
# dataset words prepare (sizes in MB, what keeps a dataset).
DATASET_CODES = ("storage_quota", "dataset_in_use")

API_ERRORS = {
    "unauthenticated": _(
        "This needs an API token: send it as the header “Authorization: Bearer <token>”."
    ),
    "token_invalid": _(
        "This API token is not known. Create one on your account's API tokens page."
    ),
    "token_revoked": _("This API token was revoked. Create a new one on your API tokens page."),
    "token_expired": _(
        "This API token expired on %(date)s. Create a new one on your API tokens page."
    ),
    "read_only_token": _(
        "This API token may only read. Create a token that may read and write to change anything."
    ),
    "rate_limited": _(
        "Too many requests with this token in the last minute (at most %(limit)s). Wait a moment, then try again."
    ),
    "auth_rate_limited": _(
        "Too many requests with a wrong API token from this address. Wait a minute, then try again."
    ),
    "rate_unavailable": _(
        "The server cannot count requests right now, so it takes none. Try again in a few minutes."
    ),
    "not_found": _("There is nothing here: the address is wrong, or the object is not yours."),
    "method_not_allowed": _("This address does not take a %(method)s request."),
    "server_error": _(
        "Something went wrong on the server. Nothing was lost; try again in a moment."
    ),
    "invalid": _("%(field)s: %(problem)s"),
    "too_large": _("The request is larger than %(limit)s."),
    "not_json": _("The body is not JSON: %(detail)s"),
    "bad_label": _(
        "“%(label)s” cannot be a label: use letters, digits and . _ / + - (at most 100)."
    ),
    "too_many_labels": _("A version may be given at most %(max)s labels at once."),
    "unsupported_media_type": _("Send the body as application/json; this request's was %(type)s."),
    "unknown_parameter": _("This address takes no query parameter %(name)s. It takes: %(known)s."),
    "cases_or_jsonl": _(
        "Send the cases either as cases (a list) or as cases_jsonl (a file's text), not both."
    ),
    "metric_or_source": _(
        "Send either metric_id (a saved metric) or source (a metric.py), not both."
    ),
    "files_need_source": _(
        "Send files with source: a saved version is checked with its own helper files."
    ),
    # Runs and their drafts (api.routes.runs).
    "check_stale": _(
        "Something changed since the last check (the artifact, the dataset, the metric or the "
        "models). Run the check again."
    ),
    "already_ended": _("This run has already ended; there is nothing to cancel."),
    "not_resumable": _("Only a paused run can be resumed; this one is %(status)s."),
    "no_result_yet": _("This run has no result yet: it has not scored its starting candidate."),
    "no_candidate_yet": _("This run has no candidate yet: it has not scored its starting one."),
    **{code: DATASET_ERRORS[code] for code in DATASET_CODES},
}


def api_error_words(code: str | None, params: Mapping) -> str:
    if code in DATASET_CODES:
        return dataset_error_words(code, params)
    return table_words(API_ERRORS, code, params)
