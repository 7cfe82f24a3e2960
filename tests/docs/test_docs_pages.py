"""The docs pages: every page in every language, their links, anchors and buttons."""

from __future__ import annotations

import re

import pytest

from docs_site import pages
from metrics.models import Metric

pytestmark = pytest.mark.django_db

ALL = [(language, slug) for language in pages.LANGUAGES for slug in pages.SLUGS]


@pytest.mark.parametrize(("language", "slug"), ALL)
def test_every_page_renders_with_sidebar_headings_and_working_links(client, language, slug):
    response = client.get(f"/docs/{language}/{slug}")
    assert response.status_code == 200
    body = response.content.decode()
    assert f'<html lang="{language}">' in body
    assert 'class="docs-sidebar"' in body and 'aria-current="page"' in body
    ids = re.findall(r'<h[23] id="([^"]+)"', body)
    assert ids, "headings get anchors"
    targets = set(re.findall(r'\sid="([^"]+)"', body))  # headings, and #main (skip link)
    for anchor in re.findall(r'href="#([^"]+)"', body):
        assert anchor in targets, f"#{anchor} has no target"
    for link in set(re.findall(r'href="(/docs/[^"#]+)', body)):
        assert client.get(link).status_code == 200, link
        assert link.startswith(f"/docs/{language}/"), f"{link} leaves the page's language"


@pytest.mark.parametrize("language", pages.LANGUAGES)
def test_the_scorers_page_carries_every_table_in_every_language(client, language):
    body = client.get(f"/docs/{language}/concepts/scorers").content.decode()
    assert body.count("<table>") >= 4  # arguments, return values, feedback, limits
    for value in ('(0.8, {"feedback": "Close. Missing the date."})', '("0.8", {"feedback": "OK"})'):
        assert value.replace('"', "&quot;") in body
    assert "600" in body


def test_code_blocks_are_highlighted_with_copy_and_open_buttons(client):
    body = client.get("/docs/en/concepts/scorers").content.decode()
    assert '<span class="k">def</span>' in body  # Pygments
    assert body.count('class="copy-code"') >= 5
    assert '/en/metrics/new/?example=concepts/scorers:0"' in body
    assert "Open in playground" in body


def test_the_interface_follows_the_docs_language(client):
    body = client.get("/docs/es/concepts/scorers").content.decode()
    assert "Copiar" in body
    assert "/es/metrics/new/?example=concepts/scorers:0" in body


def test_unknown_docs_pages_are_404(client):
    assert client.get("/docs/fr/concepts/scorers").status_code == 404
    assert client.get("/docs/en/concepts/nothing").status_code == 404


def test_docs_index_goes_to_the_first_page_in_the_readers_language(client):
    response = client.get("/docs/", HTTP_ACCEPT_LANGUAGE="hi")
    assert response["Location"] == "/docs/hi/concepts/scorers"


def test_open_in_playground_starts_a_metric_from_the_example(owner_client, owner):
    page = owner_client.get("/es/metrics/new/?example=concepts/scorers:1").content.decode()
    assert 'name="example" value="concepts/scorers:1"' in page
    response = owner_client.post(
        "/es/metrics/new/",
        {
            "name": "ejemplo",
            "starter": "exact_match",
            "example": "concepts/scorers:1",
            "example_language": "es",
        },
    )
    metric = Metric.objects.get(owner=owner)
    assert response["Location"] == f"/es/metrics/{metric.pk}/"
    assert metric.latest_version.source == pages.load("es", "concepts/scorers").examples[1]
    assert "json.loads(output)" in metric.latest_version.source
    assert metric.cases[0]["expected"] == {"fields": ["number", "vendor", "due", "total"]}


def test_a_missing_example_is_a_clear_form_error(owner_client):
    response = owner_client.post(
        "/en/metrics/new/",
        {"name": "x", "starter": "exact_match", "example": "concepts/scorers:99"},
    )
    assert response.status_code == 200
    assert "That docs example does not exist." in response.content.decode()
