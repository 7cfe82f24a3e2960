"""The site's icon: every page links it, and /favicon.ico (asked for by browsers and feed
readers whatever a page links) leads to it instead of a 404 on every page."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.staticfiles import finders

pytestmark = pytest.mark.django_db


def test_every_page_links_the_icon_and_favicon_ico_leads_to_it(client):
    page = client.get("/en/accounts/login/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg' in page
    answer = client.get("/favicon.ico")
    assert answer.status_code == 301 and answer["Location"].startswith("/static/favicon.svg")
    found = finders.find("favicon.svg")
    assert found and "<svg" in Path(found).read_text()
