from __future__ import annotations

from django import template

from checks import check_text

register = template.Library()


@register.filter
def review_error(review) -> str:
    """A failed review's reason, in the reader's language."""
    return check_text.model_error_message(review.error_code, review.error_message)
