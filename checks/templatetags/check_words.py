from __future__ import annotations

from django import template

from wording import words

register = template.Library()


@register.filter
def review_error(review) -> str:
    """A failed review's reason, in the reader's language."""
    return words(review.error_code, {"message": review.error_message}, family="model")
