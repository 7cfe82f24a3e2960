"""English dates as the whole site shows them: day, month's name, year, and a 24-hour
clock ("4 Dec 2026, 18:55"), one order in every language so no date reads as another
(12/04 is April in some places, December in others). Everything else is Django's."""

DATE_FORMAT = "j M Y"
DATETIME_FORMAT = "j M Y, H:i"
SHORT_DATE_FORMAT = DATE_FORMAT
SHORT_DATETIME_FORMAT = DATETIME_FORMAT
