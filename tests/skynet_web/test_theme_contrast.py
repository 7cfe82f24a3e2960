"""The theme's text/background pairs meet WCAG AA (4.5:1) in the light and the dark theme,
read from the custom properties in static/css/site.css."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT

CSS = (ROOT / "static" / "css" / "site.css").read_text()

# (text, background) pairs the pages draw, by custom property name.
PAIRS = [
    ("on-accent", "accent"),  # primary buttons
    ("fg", "bg"),
    ("fg", "panel"),
    ("muted", "bg"),
    ("muted", "panel"),
    ("accent", "bg"),  # links
    ("accent", "panel"),  # secondary buttons, links in panels
    ("ok", "bg"),
    ("ok", "panel"),
    ("bad", "bg"),
    ("bad", "panel"),
]


def properties(block: str) -> dict[str, str]:
    return dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{3,6})\b", block))


def themes() -> dict[str, dict[str, str]]:
    light = re.search(r"^:root \{([^}]*)\}", CSS, re.M).group(1)
    dark = re.search(r"prefers-color-scheme: dark\) \{ :root \{([^}]*)\}", CSS).group(1)
    base = properties(light)
    return {"light": base, "dark": {**base, **properties(dark)}}


def relative_luminance(color: str) -> float:
    hex_digits = color.lstrip("#")
    if len(hex_digits) == 3:
        hex_digits = "".join(digit * 2 for digit in hex_digits)
    channels = [int(hex_digits[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    red, green, blue = linear
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(first: str, second: str) -> float:
    lighter, darker = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def test_the_formula_matches_known_ratios():
    assert contrast("#000", "#fff") == pytest.approx(21.0)
    assert contrast("#fff", "#7aa2ff") == pytest.approx(2.49, abs=0.01)
    assert contrast("#777", "#fff") == pytest.approx(4.48, abs=0.01)


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize(("text", "background"), PAIRS, ids=[f"{t}-on-{b}" for t, b in PAIRS])
def test_text_on_background_meets_aa(theme, text, background):
    colors = themes()[theme]
    ratio = contrast(colors[text], colors[background])
    assert ratio >= 4.5, f"{theme}: --{text} on --{background} is {ratio:.2f}:1"


def test_primary_buttons_take_their_text_colour_from_the_theme():
    rule = re.search(r"^button, \.button \{([^}]*)\}", CSS, re.M).group(1)
    assert re.search(r"(?<!-)color:\s*var\(--on-accent\)", rule), rule
    assert re.search(r"background:\s*var\(--accent\)", rule), rule
