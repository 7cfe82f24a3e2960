"""Spanish dates as the whole site shows them: "4 dic 2026, 18:55" (day, the month's
name in lower case as Spanish writes it, year, a 24-hour clock). Everything else is
Django's."""

DATE_FORMAT = "j b Y"
DATETIME_FORMAT = "j b Y, H:i"
SHORT_DATE_FORMAT = DATE_FORMAT
SHORT_DATETIME_FORMAT = DATETIME_FORMAT
