from __future__ import annotations

from django import template

from checks import fair_share
from wording import words

register = template.Library()


@register.filter
def review_error(review) -> str:
    """A failed review's reason, in the reader's language."""
    return words(review.error_code, {"message": review.error_message}, family="model")


@register.simple_tag
def waiting_words(check) -> str:
    """Why a queued check waits (checks.fair_share), in the reader's language."""
    found = fair_share.waiting(check) or {"reason": "worker_busy", "ahead": 0}
    return words(found["reason"], found, family="waiting")
