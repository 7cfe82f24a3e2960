"""In real Chromium: every page in every language (screenshots kept as artifacts), Hindi in
Devanagari, and switching language on a docs page."""

from __future__ import annotations

import pytest

from checks.models import Check
from contract.engine import run_check
from docs_site import pages
from metrics import services as metric_services
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

DEVANAGARI = range(0x0900, 0x0980)


def devanagari_share(text: str) -> float:
    letters = [ch for ch in text if ch.isalpha()]
    return sum(ord(ch) in DEVANAGARI for ch in letters) / max(len(letters), 1)


def test_every_page_in_every_language(page, live_server, django_user_model, screenshot):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    source = "def score(input, output):\n    return 0.8, 'Close.'\n"
    check = Check.objects.create(
        owner=owner, source=source, metric_version=metric.latest_version, status="failed"
    )
    check.result = run_check(source, timeout_s=10).to_dict()
    check.save()
    for language in ("en", "es", "hi"):
        page.goto(f"{live_server.url}/{language}/accounts/login/")
        screenshot(page, f"{language}-login")
    log_in(page, live_server, "alice", "alice-pass-123")
    views = {
        "home": "/{l}/",
        "playground": f"/{{l}}/metrics/{metric.pk}/",
        "check": f"/{{l}}/checks/{check.pk}/",
        "versions": f"/{{l}}/metrics/{metric.pk}/versions/",
        "new-metric": "/{l}/metrics/new/",
    }
    views.update({f"docs-{slug.replace('/', '-')}": f"/docs/{{l}}/{slug}" for slug in pages.SLUGS})
    for language in ("en", "es", "hi"):
        for name, path in views.items():
            page.goto(live_server.url + path.format(l=language))
            assert page.locator("html").get_attribute("lang") == language
            text = page.inner_text("main")
            if language == "hi":
                assert devanagari_share(text) > 0.3, f"{name}: too little Devanagari"
            screenshot(page, f"{language}-{name}")


def test_hindi_renders_in_devanagari_glyphs(page, live_server):
    page.goto(f"{live_server.url}/docs/hi/concepts/scorers")
    heading = page.locator("article h1")
    assert devanagari_share(heading.inner_text()) > 0.5
    # With the Noto fonts installed the Devanagari text lays out at a real width; without
    # a font it would collapse to tofu boxes of one width each.
    widths = page.evaluate(
        """() => {
            const probe = (text) => { const s = document.createElement('span');
                s.textContent = text; document.body.appendChild(s);
                const w = s.getBoundingClientRect().width; s.remove(); return w; };
            return [probe('क'), probe('कि'), probe('क्ष')];
        }"""
    )
    assert all(width > 0 for width in widths)
    assert widths[1] != widths[0] * 2, "conjuncts and vowel signs are shaped"


def test_browse_the_docs_and_switch_language_on_a_page(page, live_server, screenshot):
    page.goto(f"{live_server.url}/docs/en/concepts/scorers")
    page.click(".docs-sidebar a[href='/docs/en/concepts/engines']")
    page.wait_for_url("**/docs/en/concepts/engines")
    assert page.locator("article h1").inner_text() == pages.load("en", "concepts/engines").title
    page.click(".language-switch button[value=es]")
    page.wait_for_url("**/docs/es/concepts/engines")
    assert page.locator("article h1").inner_text() == pages.load("es", "concepts/engines").title
    page.click(".language-switch button[value=hi]")
    page.wait_for_url("**/docs/hi/concepts/engines")
    screenshot(page, "docs-switched-to-hi")
    related = page.locator("section.related a").first
    related.click()
    assert "/docs/hi/" in page.url


def test_english_from_every_hindi_page_reaches_the_same_page(
    page, live_server, django_user_model, session_models
):
    from django.test import Client

    from submissions import services as submission_services
    from tests.submissions.test_submit_wizard import LABEL_METRIC, fill_to_check

    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    version, _ = metric_services.metric_save(metric, source=LABEL_METRIC)
    check = Check.objects.create(
        owner=owner, source=LABEL_METRIC, metric_version=version, status="failed"
    )
    draft = submission_services.draft_create(owner=owner)
    client = Client()
    client.force_login(owner)
    fill_to_check(client, draft, version)
    # Signed in with Spanish saved, so every page below is in a language other than the
    # saved one, as when a shared link is opened.
    log_in(page, live_server, "alice", "alice-pass-123", language="es")
    paths = [
        "/",
        f"/metrics/{metric.pk}/",
        f"/checks/{check.pk}/",
        f"/metrics/{metric.pk}/versions/",
        *(f"/submit/{draft.pk}/{step}/" for step in ("artifact", "dataset", "metric", "models")),
        f"/submit/{draft.pk}/check/",
        "/submit/",
    ]
    for path in paths:
        page.goto(f"{live_server.url}/hi{path}")
        assert page.locator("html").get_attribute("lang") == "hi", path
        page.click(".language-switch button[value=en]")
        page.wait_for_url(f"{live_server.url}/en{path}")
        assert page.locator("html").get_attribute("lang") == "en", path
    page.goto(f"{live_server.url}/docs/hi/concepts/scorers")
    page.click(".language-switch button[value=en]")
    page.wait_for_url(f"{live_server.url}/docs/en/concepts/scorers")
    # The choice was saved: an unprefixed URL now opens in English.
    page.goto(f"{live_server.url}/")
    page.wait_for_url(f"{live_server.url}/en/")
