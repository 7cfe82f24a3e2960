"""{{ value|grouped }}: a count as every page writes one, with the reader's grouping
("3,000", "3 000", "3,000" in Hindi), where a template has the bare number. Inside a
{% blocktranslate count %}, the plural is chosen from the number and the sentence shows
this: {% blocktranslate count n=rows with rows=rows|grouped %}."""

from __future__ import annotations

from django import template

from wording import format_count

register = template.Library()


@register.filter
def grouped(value: object) -> object:
    """The count grouped; anything but a whole number as it is."""
    if isinstance(value, bool) or not isinstance(value, int):
        return value
    return format_count(value)
