"""Words for a model call that failed: the model handler's, the providers' and the budget's codes."""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext_lazy as _

from wording.formatting import fill

MODEL_ERRORS = {
    "no_task_model": _("llm() was called in run, but no task model is selected."),
    "no_metric_model": _("llm() was called, but no metric model or reflection model is selected."),
    "handler_error": _("The model call failed: %(message)s"),
    "reply_too_large": _("The model's reply was too large to pass to the metric."),
    "no_channel": _("llm() can only be called while the contract check runs score."),
    "request_too_large": _("The llm() request was too large."),
    "channel_closed": _("The connection to the check closed during an llm() call."),
    "protocol": _("The model call failed: the check received a malformed message."),
    "unknown_model": _("The chosen model %(message)s is not in the model catalogue."),
    "not_configured": _(
        "The chosen model cannot be used until the server sets the environment variable %(message)s."
    ),
    "unauthorized": _("The model provider refused the API key: %(message)s"),
    "not_found": _("The model provider does not know this model: %(message)s"),
    "bad_request": _("The model provider rejected the request: %(message)s"),
    "rate_limited": _("The model provider's rate limit was hit, even after retrying: %(message)s"),
    "server_error": _("The model provider failed, even after retrying: %(message)s"),
    "unreachable": _("The model provider could not be reached: %(message)s"),
    "timeout": _("The model did not answer in time: %(message)s"),
    "bad_response": _("The model provider's reply could not be read: %(message)s"),
    "refused": _("The model declined to answer: %(message)s"),
    "budget_exceeded": _(
        "This check's budget for model calls is used up (%(message)s). Call llm() fewer times."
    ),
}

# A feedback review is one paid call, held to the model budget of one check.
REVIEW_OVER_BUDGET = _(
    "This review would go over the model budget of one check, so it was not sent. "
    "A shorter case or shorter feedback fits."
)


# Why a model picker cannot offer a model right now (providers.reachability's codes), and
# the start of the option's label; "host" is where its endpoint lives.
REACH = {
    "unreachable": _("nothing answers at %(host)s"),
    "timeout": _("%(host)s did not answer within %(seconds)s s"),
}


def reach_words(code: str | None, params: Mapping) -> str:
    """Why a model's endpoint cannot be used right now, e.g. "nothing answers at
    127.0.0.1:11434"."""
    return fill(REACH.get(code, REACH["unreachable"]), dict(params))


def model_error_words(code: str | None, params: Mapping) -> str:
    """A model_error's sentence (`params` carries the provider's "message"), or why a
    feedback review was not sent."""
    if code == "review_over_budget":
        return str(REVIEW_OVER_BUDGET)
    return fill(MODEL_ERRORS.get(code, MODEL_ERRORS["handler_error"]), {"code": code, **params})
