"""The alignment's pages in Spanish and Hindi show no English interface string: the start
page, its refusal, the evaluation's link, the run page's Accept and what follows it, and
the API's refusals.

The English strings are the catalogues' msgids (tests.i18n), and, before this work's
translations are merged into the catalogues, those of the JSON file named by
SKYNET_PENDING_TRANSLATIONS (tests.alignment.conftest.pending_translations)."""

from __future__ import annotations

import re

import pytest
from django.template import Context, Template
from django.urls import reverse
from django.utils import translation

from alignment.models import Alignment
from tests.alignment.conftest import finished_run, hand_evaluation
from tests.alignment.world import JUDGE_PROMPT
from tests.i18n.test_pages_localized import PLACEHOLDER, english_fragments, visible_text

pytestmark = pytest.mark.django_db

LANGUAGES = ["es", "hi"]


def fragments(language: str, pending: dict) -> list[tuple[str, re.Pattern]]:
    found = english_fragments(language)
    for key in pending:
        for msgid in key.split("||"):
            for fragment in PLACEHOLDER.split(re.sub(r"<[^>]+>", " ", msgid)):
                fragment = " ".join(fragment.split())
                if sum(ch.isalpha() for ch in fragment) >= 4:
                    pattern = re.compile(r"(?<![\w])" + re.escape(fragment) + r"(?![\w])")
                    found.append((msgid, pattern))
    return found


def leaks(html: str, found) -> list[str]:
    text = visible_text(html)
    return [msgid for msgid, pattern in found if pattern.search(text)]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_pages_speak_the_readers_language(
    language,
    owner,
    owner_client,
    judge_version,
    evaluation,
    pending_translations,
    django_capture_on_commit_callbacks,
):
    found = fragments(language, pending_translations)
    few = hand_evaluation(owner, judge_version, labelled=4)
    start = f"/{language}/evaluations/{evaluation.pk}/align/"
    pages = {
        "start": owner_client.get(start),
        "refusal": owner_client.get(f"/{language}/evaluations/{few.pk}/align/"),
        "bad budget": owner_client.post(start, {"budget": "0"}),
    }
    with django_capture_on_commit_callbacks(execute=False):
        started = owner_client.post(start, {"budget": "20"}, follow=True)
    pages["check step"] = started
    alignment = Alignment.objects.get()
    run = finished_run(alignment)
    pages["run"] = owner_client.get(f"/{language}/runs/{run.pk}/")
    with django_capture_on_commit_callbacks(execute=False):
        pages["accepted"] = owner_client.post(
            f"/{language}/runs/{run.pk}/accept-prompt/", follow=True
        )
    pages["run accepted"] = owner_client.get(f"/{language}/runs/{run.pk}/")
    pages["accepted again"] = owner_client.post(
        f"/{language}/runs/{run.pk}/accept-prompt/", follow=True
    )
    found_leaks = {}
    for name, response in pages.items():
        html = response.content.decode()
        assert f'<html lang="{language}"' in html, name
        found_leaks[name] = leaks(html, found)
    assert found_leaks == {name: [] for name in pages}
    # The pages said what they are about (so an empty page cannot pass).
    assert JUDGE_PROMPT.splitlines()[0] in pages["start"].content.decode()
    assert 'id="align-refusal"' in pages["refusal"].content.decode()
    assert 'id="align-accept"' in pages["run"].content.decode()
    assert 'id="align-comparison"' in pages["run accepted"].content.decode()
    with translation.override(language):
        link = Template("{% load alignment_links %}{% alignment_link evaluation %}").render(
            Context({"evaluation": evaluation})
        )
    assert (
        'id="align-judge"' in link and leaks(f'<html lang="{language}">{link}</html>', found) == []
    )


def test_the_detector_finds_english_on_an_english_page(
    owner_client, evaluation, pending_translations
):
    """Guards the test above: on the English page, the same check finds the English."""
    html = owner_client.get(reverse("alignment:start", args=[evaluation.pk])).content.decode()
    assert "Improve the judge against the human labels" in leaks(
        html, fragments("es", pending_translations)
    )
