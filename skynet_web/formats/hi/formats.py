"""Hindi number formats beyond Django's own (django/conf/locale/hi/formats.py), which sets
the separators but no grouping, so a count of 3000 stayed "3000" even where grouping is
asked for. Everything else falls back to Django's."""

# Indian grouping: the first three digits, then twos (12,34,567).
NUMBER_GROUPING = (3, 2, 0)
