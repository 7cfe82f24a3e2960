"""The docs pages: Markdown files in docs/<lang>/, rendered once per process.

A fenced block whose info string is `python metric.py` is a complete metric example: it
gets an "Open in playground" button, and the test suite runs each one through the
contract check, so the docs cannot drift from what the check accepts.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from django.conf import settings
from markdown_it import MarkdownIt
from mdit_py_plugins.anchors import anchors_plugin
from mdit_py_plugins.front_matter import front_matter_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

DOCS_DIR = Path(__file__).resolve().parent.parent / "docs"
# The site's languages (settings.LANGUAGES): every page exists in each.
LANGUAGES = tuple(code for code, _name in settings.LANGUAGES)
# Sidebar order.
SLUGS = (
    "concepts/scorers",
    "concepts/datasets",
    "concepts/engines",
    "concepts/optimization",
    "guides/is-my-metric-right",
    "guides/submit",
    "guides/from-ci",
)
# Files a page links for download, kept in docs/examples/: {name: content type}.
DOWNLOADS = {"judge-labels.csv": "text/csv; charset=utf-8"}
EXAMPLE_INFO = "python metric.py"
COPY, OPEN, OPEN_BASE = "\x00copy\x00", "\x00open\x00", "\x00open-base\x00"
NOTE = "\x00note\x00"
# GitHub's note syntax, "> [!NOTE]" as the first line of a quote.
NOTE_MARK = re.compile(r"<blockquote>\s*<p>\[!NOTE\]\s*")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    anchor: str


@dataclass(frozen=True)
class Page:
    language: str
    slug: str
    title: str
    description: str
    related: tuple[str, ...]
    html: str
    headings: tuple[Heading, ...] = ()
    examples: tuple[str, ...] = field(default=())


class PageNotFound(LookupError):
    pass


def slugify(text: str) -> str:
    """A heading's anchor. Keeps letters, marks and digits of every script, so Hindi
    headings keep their vowel signs (the plugin's default drops them)."""
    kept = "".join(
        ch if unicodedata.category(ch)[0] in "LMN" else (" " if ch in " -_" else "")
        for ch in text.strip().lower()
    )
    return "-".join(kept.split())


def _highlight(code: str, language: str) -> str:
    try:
        lexer = get_lexer_by_name(language or "text")
    except ClassNotFound:
        lexer = get_lexer_by_name("text")
    return highlight(code, lexer, HtmlFormatter(nowrap=True))


def _renderer(examples: list[str], language: str, slug: str) -> MarkdownIt:
    md = (
        MarkdownIt("commonmark", {"html": False, "linkify": False})
        .enable("table")
        .use(front_matter_plugin)
        .use(
            anchors_plugin,
            min_level=2,
            max_level=3,
            permalink=True,
            permalinkSymbol="#",
            slug_func=slugify,
        )
    )

    def fence(self, tokens, index, options, env) -> str:
        token = tokens[index]
        info = token.info.strip()
        language_name = info.split()[0] if info else "text"
        code_html = _highlight(token.content, language_name)
        example = info == EXAMPLE_INFO
        number = len(examples)
        if example:
            examples.append(token.content)
        # The labels and the playground URL are filled in per request (see fill_labels),
        # so a page rendered once serves every interface language.
        tools = f'<button type="button" class="copy-code" data-copy>{COPY}</button>'
        if example:
            tools += (
                f'<a class="open-example button" href="{OPEN_BASE}?example={slug}:{number}">'
                f"{OPEN}</a>"
            )
        label = "metric.py" if example else html.escape(language_name)
        return (
            f'<div class="code-block" data-language="{html.escape(language_name)}">'
            f'<div class="code-tools"><span class="code-label">{label}</span>{tools}</div>'
            f'<pre class="highlight"><code>{code_html}</code></pre></div>'
        )

    md.add_render_rule("fence", fence)
    return md


@functools.cache
def load(language: str, slug: str) -> Page:
    if language not in LANGUAGES or slug not in SLUGS:
        raise PageNotFound(f"{language}/{slug}")
    path = DOCS_DIR / language / f"{slug}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PageNotFound(f"{language}/{slug}") from None
    examples: list[str] = []
    md = _renderer(examples, language, slug)
    tokens = md.parse(text)
    meta: dict = {}
    headings = []
    for index, token in enumerate(tokens):
        if token.type == "front_matter":
            meta = yaml.safe_load(token.content) or {}
        elif token.type == "heading_open" and token.tag in ("h2", "h3"):
            inline = tokens[index + 1]
            headings.append(Heading(int(token.tag[1]), inline.content, token.attrs.get("id", "")))
    body = md.renderer.render(tokens, md.options, {})
    body = NOTE_MARK.sub(
        f'<blockquote class="note"><p><strong class="note-label">{NOTE}</strong> ', body
    )
    return Page(
        language=language,
        slug=slug,
        title=str(meta.get("title", slug)),
        description=str(meta.get("description", "")),
        related=tuple(meta.get("related") or ()),
        html=body,
        headings=tuple(headings),
        examples=tuple(examples),
    )


def example(language: str, reference: str) -> str:
    """The source of example `slug:n` of a page, for "Open in playground"."""
    slug, _, number = reference.rpartition(":")
    page = load(language, slug)
    try:
        return page.examples[int(number)]
    except (ValueError, IndexError):
        raise PageNotFound(reference) from None


def fill_labels(page_html: str, *, copy: str, open_label: str, open_base: str, note: str) -> str:
    """Put the reader's words and the playground URL into a rendered page."""
    return (
        page_html.replace(COPY, html.escape(copy))
        .replace(NOTE, html.escape(note))
        .replace(OPEN, html.escape(open_label))
        .replace(OPEN_BASE, html.escape(open_base))
    )
