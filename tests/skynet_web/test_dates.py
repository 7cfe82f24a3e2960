"""One presentation of a moment everywhere: day, month by name, year, a 24-hour clock
and the time zone, in the reader's language (skynet_web/formats and the `when` filter).
Hindi's was "12/04/2026 6:55 बजे" for 4 December, which reads as 12 April."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest
from django.utils import translation

from checks.models import Check
from tests.conftest import ROOT

pytestmark = pytest.mark.django_db

MOMENT = datetime.datetime(2026, 12, 4, 18, 55, 6, tzinfo=datetime.UTC)
SHOWN = {
    "en": "4 Dec 2026, 18:55 UTC",
    "es": "4 dic 2026, 18:55 UTC",
    "hi": "4 दिस् 2026, 18:55 UTC",
}


@pytest.mark.parametrize("language", sorted(SHOWN))
def test_a_checks_moment_reads_the_same_way_on_its_page_and_in_the_history(
    owner, owner_client, language
):
    check = Check.objects.create(owner=owner, source="x", status=Check.Status.PASSED, result={})
    Check.objects.filter(pk=check.pk).update(created_at=MOMENT)
    body = owner_client.get(f"/{language}/checks/{check.pk}/").content.decode()
    assert f'<time datetime="2026-12-04T18:55:06+00:00">{SHOWN[language]}</time>' in body


@pytest.mark.parametrize("language", sorted(SHOWN))
def test_the_formats_put_the_day_first_and_a_24_hour_clock(language):
    from wording.formatting import format_moment

    with translation.override(language):
        assert format_moment(MOMENT) == SHOWN[language]
        evening = format_moment(MOMENT.replace(hour=6))
    assert "06:55" in evening  # the morning is told apart without a.m./p.m.


def test_no_template_formats_a_moment_its_own_way():
    """Every date shown goes through `when` / `when_date`; a template's own `|date:"…"`
    is the machine-readable 'c' of a <time> element or the run log's time of day."""
    own = []
    for path in (ROOT / "templates").rglob("*.html"):
        for found in re.finditer(r'\|date:(["\'])([^"\']+)\1', path.read_text()):
            if found.group(2) not in ("c", "H:i:s"):
                own.append(f"{Path(path).relative_to(ROOT)}: {found.group(0)}")
    assert own == []
