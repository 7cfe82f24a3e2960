"""How a code's words take their parameters: filling a sentence and writing numbers."""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping

from django.utils import timezone
from django.utils.formats import date_format, number_format
from django.utils.translation import gettext_lazy as _

UNKNOWN = _("Unknown problem (%(code)s).")


class _Params(dict):
    """Parameters for %-formatting that never raise on a missing name."""

    def __missing__(self, key: str) -> str:
        return "?"


def _display(key: str, value: object) -> object:
    if key == "count":
        return value  # the plural form is chosen from this number
    if key == "cases" and isinstance(value, list):
        return ", ".join(str(index + 1) for index in value if isinstance(index, int))
    if key in ("names", "parameters", "dropped", "available") and isinstance(value, list):
        return ", ".join(str(name) for name in value)
    if key == "scores" and isinstance(value, list):
        return ", ".join(format_number(v) for v in value)
    if key in ("score", "value") and isinstance(value, int | float):
        return format_number(value)
    if key == "line" and value is None:
        return "?"
    return value


def format_number(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def format_count(value: int) -> str:
    """A count of rows or cases, grouped as the reader's language groups digits."""
    return number_format(value, force_grouping=True)


def format_usd(value: float) -> str:
    """US dollars in the reader's notation: cents, or below a dollar as many places as
    two significant digits need (a case's model cost is often a fraction of a cent)."""
    places = 2
    if 0 < abs(value) < 1:
        places = min(8, max(2, 1 - math.floor(math.log10(abs(value)))))
        while places > 2 and round(value, places - 1) == round(value, places):
            places -= 1  # no trailing zero: $0.05, not $0.050
    return "$" + number_format(value, decimal_pos=places, force_grouping=True)


def format_moment(value: datetime.datetime | None) -> str:
    """A moment as the whole site shows it: the reader's language's DATETIME_FORMAT
    (skynet_web/formats: day, month by name, year, 24-hour clock) and its time zone,
    "4 Dec 2026, 18:55 UTC"; "" for None."""
    if value is None:
        return ""
    local = timezone.localtime(value) if timezone.is_aware(value) else value
    return f"{date_format(local, 'DATETIME_FORMAT')} {local.tzname() or ''}".strip()


def fill(template, params: Mapping | None) -> str:
    values = _Params({key: _display(key, value) for key, value in (params or {}).items()})
    try:
        # Format the lazy object itself: an ngettext_lazy message picks its plural form
        # from params["count"].
        return str(template % values)
    except (TypeError, ValueError, KeyError):
        return str(UNKNOWN % {"code": "format"})


def table_words(table: Mapping, code: str | None, params: Mapping) -> str:
    """The words `table` has for `code`, or the unknown-problem sentence naming it."""
    return fill(table.get(code, UNKNOWN), {"code": code, **params})
