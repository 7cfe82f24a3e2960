"""One way to show a moment everywhere: `{{ value|when }}` is a <time> element whose text
is the reader's language's DATETIME_FORMAT (skynet_web/formats) and the time zone it is
in ("4 Dec 2026, 18:55 UTC"), and whose datetime attribute is the exact ISO moment;
`{{ value|when_date }}` the same with the date only."""

from __future__ import annotations

import datetime

from django import template
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html

from wording.formatting import format_moment

register = template.Library()


@register.filter
def when(value: datetime.datetime | None) -> str:
    if value is None:
        return ""
    return format_html('<time datetime="{}">{}</time>', value.isoformat(), format_moment(value))


@register.filter
def when_date(value: datetime.datetime | datetime.date | None) -> str:
    if value is None:
        return ""
    day = timezone.localtime(value) if isinstance(value, datetime.datetime) else value
    return format_html(
        '<time datetime="{}">{}</time>', value.isoformat(), date_format(day, "DATE_FORMAT")
    )
