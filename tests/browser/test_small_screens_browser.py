"""In real Chromium on a phone-sized window (390x844) and a laptop one (1366x900), light and
dark: no page scrolls sideways, the top bar's language switch and Log out stay on screen, and
the check's case table keeps its rows compact and its words whole."""

from __future__ import annotations

import pytest

from checks.models import Check
from contract.engine import run_check
from metrics import services as metric_services
from submissions import services as submit_services
from submissions.models import Draft
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

# Prints a long line, so each case row has a "Printed output" <pre> to open.
SOURCE = """def score(input, output, expected=None):
    want = expected["label"]
    print("comparing the output against the expected label, " * 4 + repr(output))
    if output == want:
        return 1.0, {"feedback": f"Correct: the label is {want!r}."}
    return 0.0, {"feedback": f"Expected {want!r}, got {output!r}."}
"""

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 900}
LANGUAGES = ("en", "es", "hi")

IN_VIEW = """selector => {
    const box = document.querySelector(selector).getBoundingClientRect();
    return box.width > 0 && box.left >= 0 && box.right <= window.innerWidth;
}"""


@pytest.fixture
def finished_check(django_user_model):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(
        owner=owner, name="ticket labels", starter="exact_match", source=SOURCE
    )
    check = Check.objects.create(
        owner=owner, source=SOURCE, metric_version=metric.latest_version, status="passed"
    )
    check.result = run_check(SOURCE, timeout_s=10).to_dict()
    check.save()
    # A second version to compare with, and a draft in the wizard.
    metric_services.metric_save(metric, source=SOURCE.replace("* 4", "* 5"))
    submit_services.draft_create(owner=owner)
    return check


def pages_of(check) -> dict[str, str]:
    metric = check.metric_version.metric_id
    draft = Draft.objects.get(owner=check.owner).pk
    return {
        "home": "/{l}/",
        "playground": f"/{{l}}/metrics/{metric}/",
        "check": f"/{{l}}/checks/{check.pk}/",
        "docs": "/docs/{l}/concepts/scorers",
        "versions": f"/{{l}}/metrics/{metric}/versions/",
        "version": f"/{{l}}/metrics/{metric}/versions/1/",
        "diff": f"/{{l}}/metrics/{metric}/diff/?a=1&b=2",
        "new-metric": "/{l}/metrics/new/",
        "drafts": "/{l}/submit/",
        "wizard": f"/{{l}}/submit/{draft}/artifact/",
        "runs": "/{l}/runs/",
        "datasets": "/{l}/datasets/",
        "tokens": "/{l}/accounts/tokens/",
    }


def open_printed_output(page) -> None:
    page.evaluate("() => document.querySelectorAll('details.output').forEach(d => d.open = true)")


def overflow(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")


WIDEST = """() => [...document.querySelectorAll('body *')]
    .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
    .filter(e => ![...e.children].some(c => c.getBoundingClientRect().right > window.innerWidth + 1))
    .slice(0, 3).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))"""


def too_wide(page) -> str:
    """What sticks out past the window's right edge (for the failure message)."""
    return ", ".join(page.evaluate(WIDEST))


def test_every_page_fits_a_phone_in_every_language(page, live_server, finished_check, screenshot):
    log_in(page, live_server, "alice", "alice-pass-123")
    page.set_viewport_size(PHONE)
    for language in LANGUAGES:
        for name, path in pages_of(finished_check).items():
            page.goto(live_server.url + path.format(l=language))
            open_printed_output(page)
            where = f"{language} {name}"
            assert overflow(page) <= 0, f"{where}: the page scrolls sideways ({too_wide(page)})"
            assert page.evaluate(IN_VIEW, ".language-switch"), f"{where}: language switch"
            assert page.evaluate(IN_VIEW, ".account button"), f"{where}: Log out"
            for scheme in ("light", "dark"):
                page.emulate_media(color_scheme=scheme)
                screenshot(page, f"phone-{scheme}-{language}-{name}")
            page.emulate_media(color_scheme="light")


def test_the_laptop_layout_stays_side_by_side(page, live_server, finished_check, screenshot):
    log_in(page, live_server, "alice", "alice-pass-123")
    page.set_viewport_size(LAPTOP)
    for language in LANGUAGES:
        for name, path in pages_of(finished_check).items():
            page.goto(live_server.url + path.format(l=language))
            open_printed_output(page)
            assert overflow(page) <= 0, f"{language} {name}: the page scrolls sideways"
            for scheme in ("light", "dark"):
                page.emulate_media(color_scheme=scheme)
                screenshot(page, f"laptop-{scheme}-{language}-{name}")
            page.emulate_media(color_scheme="light")
    page.goto(f"{live_server.url}/en/metrics/{finished_check.metric_version.metric_id}/")
    editor = page.locator(".editor-column").bounding_box()
    cases = page.locator(".cases-column").bounding_box()
    assert cases["x"] > editor["x"] + editor["width"] - 1, "editor and cases side by side"
    brand = page.locator(".brand").bounding_box()
    account = page.locator(".account").bounding_box()
    assert abs(brand["y"] - account["y"]) < 20, "the top bar is one line"


@pytest.mark.parametrize("size", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_case_rows_are_compact_and_words_whole(page, live_server, finished_check, size):
    log_in(page, live_server, "alice", "alice-pass-123")
    page.set_viewport_size(size)
    page.goto(f"{live_server.url}/en/checks/{finished_check.pk}/")
    rows = page.locator("table.cases tbody tr")
    assert rows.count() == 3
    for index in range(3):
        # The feedback cell holds the feedback and a one-line "Review my feedback" link.
        feedback = rows.nth(index).locator("td.feedback").bounding_box()["height"]
        assert feedback < 100, f"case {index + 1}: its feedback cell is {feedback:.0f} px tall"
        if size is LAPTOP:  # on a phone each case is a card of labelled lines instead
            height = rows.nth(index).bounding_box()["height"]
            assert height < 160, f"case {index + 1} is {height:.0f} px tall"
    # "billing" stays one word on one line in the Output column.
    output = page.locator("table.cases tbody tr").first.locator("td").nth(1).locator("code")
    box = output.bounding_box()
    line = page.evaluate(
        "el => parseFloat(getComputedStyle(el).lineHeight) || el.offsetHeight",
        output.element_handle(),
    )
    assert box["height"] <= line * 1.5, "the output breaks inside a word"
    width_before = page.locator("table.cases tbody tr").first.locator("td").first.bounding_box()
    open_printed_output(page)
    width_after = page.locator("table.cases tbody tr").first.locator("td").first.bounding_box()
    assert width_after["width"] >= width_before["width"] * 0.8, "the <pre> squeezes Input"
    pre = page.locator("details.output pre").first
    fits = page.evaluate(
        "el => el.scrollWidth <= el.clientWidth || getComputedStyle(el).overflowX !== 'visible'",
        pre.element_handle(),
    )
    assert fits, "the printed output neither wraps nor scrolls in its cell"
    assert overflow(page) <= 0


def test_the_pages_before_log_in_fit_a_phone(page, live_server, screenshot):
    page.set_viewport_size(PHONE)
    for language in LANGUAGES:
        for name, path in {
            "welcome": "/{l}/",
            "login": "/{l}/accounts/login/",
            "signup": "/{l}/accounts/signup/",
        }.items():
            page.goto(live_server.url + path.format(l=language))
            where = f"{language} {name}"
            assert overflow(page) <= 0, f"{where}: the page scrolls sideways ({too_wide(page)})"
            assert page.evaluate(IN_VIEW, ".language-switch"), f"{where}: language switch"
            screenshot(page, f"phone-light-{language}-{name}")


def test_the_phone_header_takes_four_short_lines_at_most(page, live_server, screenshot):
    """It wrapped to six lines (about 180 px) before the page began."""
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user(username="carol", password="carol-pass-123")
    log_in(page, live_server, "carol", "carol-pass-123")
    page.set_viewport_size(PHONE)
    for language in LANGUAGES:
        page.goto(f"{live_server.url}/{language}/")
        height = page.evaluate(
            "() => document.querySelector('.topbar').getBoundingClientRect().height"
        )
        screenshot(page, f"phone-header-{language}")
        assert height <= 120, f"{language}: the header is {height:.0f} px high"
        assert page.evaluate(IN_VIEW, ".account button"), f"{language}: Log out"
