"""The "Is my metric right?" page stays true: its judge example is the starter (so "Open
in playground" gets the starter's cases), its code and command lines are the same in every
language and use options the command line has, it links the example dataset it quotes, and
the names it puts in bold are the interface's own, in each language's words."""

from __future__ import annotations

import re
import shlex
from collections import Counter
from pathlib import Path

import pytest
from django.utils import translation
from django.utils.translation import gettext
from markdown_it import MarkdownIt

from docs_site import pages
from metrics.models import Metric
from metrics.starters import JUDGE_WITH_LABELS, STARTERS
from tests.docs.test_docs_ci import help_of

SLUG = "guides/is-my-metric-right"
ROOT = pages.DOCS_DIR.parent
DATASET = pages.DOCS_DIR / "examples" / "judge-labels.csv"
# Where the interface's words are: the templates and the apps' Python.
INTERFACE = ("templates", "evaluations", "labelling", "metrics", "submissions", "wording")
BOLD = re.compile(r"\*\*(.+?)\*\*")


def text(language: str) -> str:
    return (pages.DOCS_DIR / language / f"{SLUG}.md").read_text(encoding="utf-8")


def fences(language: str, info: str) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(text(language))
    return [t.content for t in tokens if t.type == "fence" and t.info.strip() == info]


def bold_terms(language: str) -> list[str]:
    return BOLD.findall(text(language))


def interface_strings() -> str:
    found = []
    for folder in INTERFACE:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".html") and "migrations" not in path.parts:
                found.append(path.read_text(encoding="utf-8"))
    return "\n".join(found)


@pytest.mark.parametrize("language", pages.LANGUAGES)
def test_the_judge_example_is_the_starter_with_its_prompt_constant(language):
    assert pages.load(language, SLUG).examples == (JUDGE_WITH_LABELS,)
    assert 'JUDGE_PROMPT = """' in JUDGE_WITH_LABELS


@pytest.mark.django_db
def test_open_in_playground_starts_the_judge_with_the_starters_cases(owner_client, owner):
    page = owner_client.get(f"/docs/es/{SLUG}").content.decode()
    assert f'href="/es/metrics/new/?example={SLUG}:0"' in page
    owner_client.post(
        "/es/metrics/new/",
        {
            "name": "juez",
            "starter": "exact_match",
            "example": f"{SLUG}:0",
            "example_language": "es",
        },
    )
    metric = Metric.objects.get(owner=owner)
    assert metric.latest_version.source == JUDGE_WITH_LABELS
    assert metric.cases == [dict(case) for case in STARTERS["judge_with_labels"].cases]


@pytest.mark.django_db
@pytest.mark.parametrize("language", pages.LANGUAGES)
def test_the_page_links_the_example_dataset_it_quotes(client, language):
    body = client.get(f"/docs/{language}/{SLUG}").content.decode()
    link = f"/docs/{language}/examples/judge-labels.csv"
    assert f'href="{link}"' in body
    assert client.get(link).content == DATASET.read_bytes()
    # The lines the page shows are the file's first lines.
    (shown,) = fences(language, "csv")
    lines = DATASET.read_text(encoding="utf-8").splitlines(keepends=True)
    assert shown == "".join(lines[: len(shown.splitlines())])
    assert len(shown.splitlines()) >= 3


@pytest.mark.parametrize("language", [code for code in pages.LANGUAGES if code != "en"])
def test_every_language_shows_the_same_code(language):
    for info in ("csv", "sh", pages.EXAMPLE_INFO):
        assert fences(language, info) == fences("en", info)


def test_the_commands_on_the_page_are_ones_the_command_line_has():
    (block,) = fences("en", "sh")
    lines = [shlex.split(line) for line in block.splitlines() if line.startswith("skynet ")]
    assert len(lines) == 3
    options = help_of("evaluate")
    used = set()
    for line in lines:
        assert line[1] == "evaluate"
        for word in line[2:]:
            if word.startswith("--"):
                used.add(word)
                assert re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", options), word
    assert {"--column", "--human-scale", "--human-labels", "--pass-score", "--repeats"} <= used


def test_the_names_in_bold_are_strings_of_the_interface():
    code = interface_strings()
    missing = [term for term in bold_terms("en") if f'"{term}"' not in code]
    assert missing == []


@pytest.mark.parametrize("language", [code for code in pages.LANGUAGES if code != "en"])
def test_the_names_in_bold_are_the_interfaces_words_in_each_language(language):
    english = bold_terms("en")
    translated = Counter(bold_terms(language))
    # The same names, each said as the interface says it in that language (a sentence
    # may put them in another order). A name the interface does not translate yet is
    # the page's own translation until it does.
    assert sum(translated.values()) == len(english)
    with translation.override(language):
        said = Counter(gettext(term) for term in english if gettext(term) != term)
    assert said - translated == Counter()


def test_the_page_is_in_the_sidebar_before_submitting_a_run():
    assert pages.SLUGS.index(SLUG) == pages.SLUGS.index("guides/submit") - 1
    for language in pages.LANGUAGES:
        assert Path(pages.DOCS_DIR / language / f"{SLUG}.md").is_file()


def test_the_numbers_the_page_gives_are_the_codes():
    from alignment import plans
    from contract import agreement
    from dataset_files.human import MAX_CLASSES
    from evaluations.start_forms import REPEATS_DEFAULT, REPEATS_MAX, REPEATS_MIN
    from providers.projection import (
        COIN_TOSS,
        MINIBATCH_LIMITS,
        REFLECTION_MINIBATCH,
        RIGHT_CALL_TARGET,
        minibatch_gate,
    )

    page = text("en")
    assert "at least 20 rows with a person's judgement" in page and plans.MIN_LABELLED == 20
    assert (plans.RATIOS, plans.SEED, plans.DEFAULT_BUDGET) == ((60, 20, 20), 0, 150)
    assert "2 to 5 scorings of each case in all (3 by default)" in page
    assert (REPEATS_MIN, REPEATS_MAX, REPEATS_DEFAULT) == (2, 5, 3)
    assert "(3 by default, 1 to 50)" in page
    assert (REFLECTION_MINIBATCH, MINIBATCH_LIMITS) == (3, (1, 50))
    assert "There may be 2 to 10 labels." in page and MAX_CLASSES == 10
    # The noisy judge: variance 0.04 at the default minibatch, and the size for 90%.
    gate = minibatch_gate(0.04, REFLECTION_MINIBATCH)
    assert round(gate["right_call"] * 100) == 73 and gate["minibatch_for"] == 14
    assert "wins only 73% of the time. It takes 14 cases to reach 90%." in page
    assert "warns when that is below 75%" in page and (COIN_TOSS, RIGHT_CALL_TARGET) == (0.75, 0.9)
    # A 2-1 split of three 0/1 scorings has variance 1/3: 12% of cases flipping is 0.04.
    assert round(0.12 / 3, 2) == 0.04

    # The same agreement on 30 rows and on 300: the table's figures and intervals.
    def figures(times: int) -> str:
        # Per 30 rows: 15 both pass, 9 both fail, 3 the metric passes and the person
        # fails, 3 the other way round.
        human = ["pass"] * 15 * times + ["fail"] * 12 * times + ["pass"] * 3 * times
        metric = ["pass"] * 15 * times + ["fail"] * 9 * times + ["pass"] * 3 * times
        metric += ["fail"] * 3 * times
        found = agreement.label_agreement(human, metric, ["fail", "pass"])
        return " | ".join(
            f"{f['value']:.2f} ({f['low']:.2f} to {f['high']:.2f})"
            for f in (found["accuracy"], found["kappa"])
        )

    assert f"| 30   | {figures(1)} |" in page
    assert f"| 300  | {figures(10)} |" in page
    # Passing everything when people pass 27 of 30: 90% accurate, kappa 0.
    always = agreement.label_agreement(
        ["pass"] * 27 + ["fail"] * 3, ["pass"] * 30, ["fail", "pass"]
    )
    assert (always["accuracy"]["value"], always["kappa"]["value"]) == (0.9, 0.0)


@pytest.mark.parametrize("language", [code for code in pages.LANGUAGES if code != "en"])
def test_every_language_gives_the_same_numbers(language):
    def numbers(page: str) -> list[str]:
        # 1,000 in English is 1000 in Spanish; the figures keep their decimal point.
        found = re.findall(r"\d+(?:[.,]\d+)*", re.sub(r"```.*?```", "", page, flags=re.S))
        return [number.replace(",", "") for number in found]

    assert sorted(numbers(text(language))) == sorted(numbers(text("en")))
