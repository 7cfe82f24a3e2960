"""In Chromium: the API tokens page makes a token, shows it once selected for copying,
lists and revokes it, on a laptop and a phone in every language; and the API's
browsable docs render under the site's Content-Security-Policy (no CDN)."""

from __future__ import annotations

import re

import pytest

import skynet_client
from api.models import ApiToken
from tests.browser.conftest import log_in

WHEEL = f"skynet_client-{skynet_client.__version__}-py3-none-any.whl"

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 900}
SIDEWAYS = "() => document.documentElement.scrollWidth - window.innerWidth"


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user(username="alice", password="alice-pass-123")


@pytest.mark.parametrize("language", ["en", "es", "hi"])
def test_make_see_once_and_revoke_a_token(page, live_server, alice, language, screenshot):
    log_in(page, live_server, "alice", "alice-pass-123", language)
    page.click(f"a[href='/{language}/accounts/tokens/']")
    page.fill("input[name=name]", "CI")
    page.check("input[name=scope][value=write]")
    page.click("form.token-form button[type=submit]")
    shown = page.locator("#new-token").input_value()
    assert re.fullmatch(r"skn_[A-Za-z0-9_-]{40,}", shown)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("button[data-copy-target=new-token]")
    page.wait_for_function("() => document.querySelector('.copy-status').textContent !== ''")
    assert page.evaluate("() => navigator.clipboard.readText()") == shown
    # The line that installs this workbench's own client, copied whole.
    page.click("button[data-copy-target=install-line]")
    page.wait_for_function(
        "() => navigator.clipboard.readText().then(text => text.startsWith('pip install '))"
    )
    installs = page.evaluate("() => navigator.clipboard.readText()")
    assert installs == f"pip install {live_server.url}/client/{WHEEL}"
    row = ApiToken.objects.get(owner=alice)
    assert row.scope == "write" and shown.startswith(f"skn_{row.prefix}")
    for size, name in ((LAPTOP, "laptop"), (PHONE, "phone")):
        page.set_viewport_size(size)
        assert page.evaluate(SIDEWAYS) <= 0, f"{name} scrolls sideways"
        screenshot(page, f"api-tokens-{language}-{name}")
    page.set_viewport_size(LAPTOP)
    page.goto(f"{live_server.url}/{language}/accounts/tokens/")
    assert page.locator("#new-token").count() == 0  # shown once
    assert shown not in page.content()
    page.click("table.tokens a.button.secondary")  # asks first, on its own page
    page.wait_for_selector("#confirm-revoke")
    screenshot(page, f"api-token-revoke-{language}")
    page.click("#confirm-revoke")
    page.wait_for_selector("table.tokens .status-failed")
    row.refresh_from_db()
    assert row.revoked_at is not None


def test_the_api_docs_render_under_the_sites_policy(page, live_server):
    errors = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(f"{live_server.url}/api/v1/docs")
    page.wait_for_selector("text=Skynet metric workbench API")
    page.wait_for_selector('[data-path="/api/v1/checks"]')
    # The description's header is shown whole, its <token> not taken for HTML.
    assert "Authorization: Bearer <token>" in page.inner_text("body")
    assert not [e for e in errors if "Content Security Policy" in e], errors
    assert all(url.startswith(live_server.url) for url in requests), requests
