"""In real Chromium, in three languages: a metric pasted without its imports is marked
while typing, the editor offers to add them, one click adds them where a reader expects
them, and the check then passes."""

from __future__ import annotations

import pytest

from metrics import services as metric_services
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

PASTED = """@dataclass
class Verdict:
    score: float
    feedback: str


def score(input, output, expected=None):
    words = Counter(re.findall(r"\\w+", output.lower()))
    hit = words[expected["label"]] > 0
    verdict = Verdict(1.0 if hit else 0.0, f"Expected {expected['label']!r} in {output!r}.")
    return verdict.score, {"feedback": verdict.feedback}
"""
LABELS = {
    "en": "Add the 3 missing imports",
    "es": "Añadir los 3 imports que faltan",
    "hi": "छूटे हुए 3 import जोड़ें",
}


@pytest.mark.parametrize("language", ["en", "es", "hi"])
def test_the_missing_imports_are_offered_and_added_in_one_click(
    page, live_server, django_user_model, celery_worker_process, screenshot, language
):
    owner = django_user_model.objects.create_user(username="alice", password="alice-pass-123")
    metric = metric_services.metric_create(owner=owner, name="pasted", starter="exact_match")
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, live_server, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/{language}/metrics/{metric.pk}/")
    page.wait_for_selector(".cm-editor")
    page.evaluate(
        "text => document.querySelector('textarea[name=source]').skynetEditor.setValue(text)",
        PASTED,
    )
    offer = page.locator("#diagnostics-add-imports button")
    offer.wait_for(state="visible", timeout=15_000)
    assert offer.inner_text() == LABELS[language]
    screenshot(page, f"add-imports-offered-{language}")
    offer.click()
    page.wait_for_function(
        "() => document.querySelector('textarea[name=source]').skynetEditor.getValue()"
        ".startsWith('import re')"
    )
    text = page.evaluate(
        "() => document.querySelector('textarea[name=source]').skynetEditor.getValue()"
    )
    assert text.startswith(
        "import re\nfrom collections import Counter\nfrom dataclasses import dataclass\n\n@dataclass"
    )
    page.locator("#add-imports-said").wait_for(state="visible")
    # The marks go once the lines are there; then the check passes.
    page.wait_for_function(
        "() => !document.querySelector('#diagnostics-add-imports button').offsetParent"
    )
    page.locator("#run-check").click()
    page.wait_for_selector("#check .verdict.ok", timeout=60_000)
    screenshot(page, f"add-imports-passed-{language}")
    assert errors == []
