"""Every page, rendered in Spanish and Hindi, shows no English interface string.

The English strings are the catalogue's msgids; a page's words are its text and its
labelling attributes, leaving out code, editors and user data cells.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import polib
import pytest

from checks.models import Check
from contract.artifacts import Artifact
from contract.cases import case_from_dict
from contract.engine import run_check
from docs_site import pages
from metrics import services as metric_services
from metrics.starters import EXACT_MATCH
from runs import services as run_services
from submissions import datasets, rules
from submissions import services as submit_services
from submissions.models import STEPS
from tests.conftest import ROOT

pytestmark = pytest.mark.django_db

SKIPPED_TAGS = {"script", "style", "pre", "code", "textarea", "option"}
LABEL_ATTRIBUTES = ("aria-label", "title", "placeholder", "alt")
PLACEHOLDER = re.compile(r"%\(\w+\)[sdfr]|\{\{.*?\}\}|%%")


class VisibleText(HTMLParser):
    """Text a reader sees, leaving out code and anything marked as another language
    (the switcher names each language in that language, which is right)."""

    def __init__(self) -> None:
        super().__init__()
        self.skipping: list[str] = []
        self.page_language: str | None = None
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "html":
            self.page_language = attributes.get("lang")
        elif tag in SKIPPED_TAGS or attributes.get("lang", self.page_language) != (
            self.page_language
        ):
            self.skipping.append(tag)
            return
        if not self.skipping:
            self.parts += [attributes[name] for name in LABEL_ATTRIBUTES if attributes.get(name)]

    def handle_endtag(self, tag):
        if self.skipping and self.skipping[-1] == tag:
            self.skipping.pop()

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = VisibleText()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


def english_fragments(language: str) -> list[tuple[str, re.Pattern]]:
    """(msgid, pattern) for each English string that a translated page must not show."""
    po = polib.pofile(str(ROOT / "locale" / language / "LC_MESSAGES" / "django.po"))
    found = []
    for entry in po.translated_entries():
        if entry.msgstr == entry.msgid:  # identifiers such as REWARD_SPEC or JSON
            continue
        for fragment in PLACEHOLDER.split(entry.msgid):
            fragment = " ".join(fragment.split())
            # Single short words (a column name like "Cost") are checked only as whole
            # words; anything shorter than 4 letters says too little to check.
            if sum(ch.isalpha() for ch in fragment) < 4:
                continue
            pattern = re.compile(r"(?<![\w])" + re.escape(fragment) + r"(?![\w])")
            found.append((entry.msgid, pattern))
    return found


@pytest.fixture
def world(owner, outsider):
    metric = metric_services.metric_create(owner=owner, name="ticket labels", starter="exact_match")
    metric_services.metric_save(metric, source=EXACT_MATCH.replace("Correct.", "Right label."))
    source = "def score(input, output):\n    return 5, {'feedback': 'x'}\n"
    check = Check.objects.create(
        owner=owner, source=source, metric_version=metric.latest_version, status="passed"
    )
    check.result = run_check(source, timeout_s=10).to_dict()
    check.save()
    failing = "def score(input, output):\n    return 0.8, 'Close.'\n"
    bad = Check.objects.create(
        owner=owner, source=failing, metric_version=metric.latest_version, status="failed"
    )
    bad.result = run_check(failing, timeout_s=10).to_dict()
    bad.save()
    return {
        "metric": metric,
        "check": check,
        "bad": bad,
        "draft": _checked_draft(owner, metric),
        "run": run_services.run_submit(_checked_draft(owner, metric)),
    }


def _checked_draft(owner, metric):
    """A draft with every step done and a passed check of exactly what it holds."""
    draft = submit_services.draft_create(owner=owner)
    program = "def run(artifact, input):\n    return 'billing'\n"
    submit_services.draft_update(
        draft, "artifact", {"artifact_kind": "python", "program_source": program}
    )
    rows = "".join(f"q{i},billing\n" for i in range(6))
    submit_services.dataset_upload(draft, filename="t.csv", data=f"question,label\n{rows}".encode())
    submit_services.draft_update(
        draft, "metric", {"metric_mode": "saved", "metric_version": metric.latest_version}
    )
    submit_services.draft_update(
        draft, "models", {"task_model": "openai/gpt-4.1", "reflection_model": "openai/gpt-4.1"}
    )
    facts = datasets.current_facts(draft)
    cases = [case_from_dict(case) for case in facts["sample_cases"]]
    result = run_check(
        metric.latest_version.source, cases, timeout_s=10, artifact=Artifact.python(program)
    )
    draft.contract_check = Check.objects.create(
        owner=owner,
        source=metric.latest_version.source,
        cases=facts["sample_cases"],
        status="passed" if result.passed else "failed",
        result=result.to_dict(),
        artifact=Artifact.python(program).to_dict(),
    )
    draft.check_fingerprint = rules.fingerprint(draft)
    draft.save()
    return draft


def urls(language: str, world: dict) -> list[str]:
    m, c, b = world["metric"].pk, world["check"].pk, world["bad"].pk
    found = [
        f"/{language}/",
        f"/{language}/metrics/new/",
        f"/{language}/metrics/{m}/",
        f"/{language}/metrics/{m}/?check={b}",
        f"/{language}/checks/{c}/",
        f"/{language}/checks/{b}/",
        f"/{language}/metrics/{m}/versions/",
        f"/{language}/metrics/{m}/versions/1/",
        f"/{language}/metrics/{m}/diff/?a=1&b=2",
        f"/{language}/metrics/new/?example=concepts/scorers:0",
    ]
    d, r = world["draft"].pk, world["run"].pk
    found += [f"/{language}/submit/{d}/{step}/" for step in STEPS]
    found += [f"/{language}/submit/", f"/{language}/runs/", f"/{language}/runs/{r}/"]
    found += [f"/{language}/accounts/tokens/"]
    found += [f"/docs/{language}/{slug}" for slug in pages.SLUGS]
    return found


ANONYMOUS = ("/{l}/", "/{l}/accounts/login/", "/{l}/accounts/signup/")


@pytest.mark.parametrize("language", ["es", "hi"])
def test_no_english_interface_string_on_any_page(client, owner, world, language):
    fragments = english_fragments(language)
    leaks = []
    for url in [u.format(l=language) for u in ANONYMOUS]:
        text = visible_text(client.get(url).content.decode())
        leaks += [(url, msgid) for msgid, pattern in fragments if pattern.search(text)]
    client.force_login(owner)
    for url in urls(language, world):
        response = client.get(url)
        assert response.status_code == 200, url
        text = visible_text(response.content.decode())
        leaks += [(url, msgid) for msgid, pattern in fragments if pattern.search(text)]
    assert leaks == []


def test_the_detector_finds_english_on_an_english_page(client):
    """Guards the test above: the same check on an English page must find English."""
    text = visible_text(client.get("/en/accounts/login/").content.decode())
    leaks = {msgid for msgid, pattern in english_fragments("es") if pattern.search(text)}
    assert {"Log in", "No account yet?"} <= leaks
