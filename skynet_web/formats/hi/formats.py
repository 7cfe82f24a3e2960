"""Hindi number formats beyond Django's own (django/conf/locale/hi/formats.py), which sets
the separators but no grouping, so a count of 3000 stayed "3000" even where grouping is
asked for. Everything else falls back to Django's."""

# Indian grouping: the first three digits, then twos (12,34,567).
NUMBER_GROUPING = (3, 2, 0)

# Dates as Indian usage writes them and the whole site shows them: day before month, the
# month by name, and a 24-hour clock ("4 दिस् 2026, 18:55"). Django's own Hindi short
# format was month/day ("12/04/2026"), which reads as 12 April here.
DATE_FORMAT = "j M Y"
DATETIME_FORMAT = "j M Y, H:i"
SHORT_DATE_FORMAT = DATE_FORMAT
SHORT_DATETIME_FORMAT = DATETIME_FORMAT
