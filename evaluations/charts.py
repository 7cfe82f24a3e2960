"""Charts drawn on the server: an SVG the page carries inline, so it needs no script, no
CDN and no second request, and its colours are the theme's (CSS classes over the
stylesheet's custom properties), so the light and the dark theme both draw it.

Every chart (the histogram here, the run page's progress in runs.charts) is drawn in one
Frame: the same two axes, the same <title> and <desc> for screen readers, and the same
visually hidden table of its points for those who read tables."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from django.utils import formats
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from wording import format_count


@dataclass(frozen=True)
class Frame:
    """A chart's drawing area in its own units (the stylesheet scales it to the column's
    width): the plot inside margins, its axes on the left and at the bottom."""

    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int

    @property
    def plot_w(self) -> int:
        return self.width - self.left - self.right

    @property
    def plot_h(self) -> int:
        return self.height - self.top - self.bottom

    def svg(
        self,
        *,
        css_class: str,
        title: str,
        description: str,
        under: str,
        over: str,
        axis_name: str,
    ) -> SafeString:
        """The chart: `under` the axes (bars, gridlines), `over` them (lines, points,
        labels), named by `title` and described by `description` for screen readers,
        and `axis_name` under the bottom axis. `under` and `over` are safe markup."""
        chart = chart_id(title)
        return format_html(
            '<svg class="{css}" viewBox="0 0 {w} {h}" role="img" '
            'aria-labelledby="{id}-title {id}-desc" xmlns="http://www.w3.org/2000/svg">'
            '<title id="{id}-title">{title}</title><desc id="{id}-desc">{desc}</desc>'
            "{under}"
            '<line class="chart-axis" x1="{left}" y1="{base}" x2="{right}" y2="{base}"/>'
            '<line class="chart-axis" x1="{left}" y1="{top}" x2="{left}" y2="{base}"/>'
            "{over}"
            '<text class="chart-label chart-axis-name" x="{middle}" y="{name_y}" text-anchor="middle">{axis}</text>'
            "</svg>",
            css=css_class,
            w=self.width,
            h=self.height,
            id=chart,
            title=title,
            desc=description,
            under=mark_safe(under),
            left=self.left,
            right=self.left + self.plot_w,
            top=self.top,
            base=self.top + self.plot_h,
            over=mark_safe(over),
            middle=self.left + self.plot_w / 2,
            name_y=self.height - 4,
            axis=axis_name,
        )


def data_table(title: str, headings: tuple[str, str], rows: Iterable[tuple]) -> SafeString:
    """A chart's points as a table only screen readers see, captioned as the chart is."""
    return format_html(
        '<table class="visually-hidden"><caption>{}</caption><thead><tr>'
        '<th scope="col">{}</th><th scope="col">{}</th></tr></thead><tbody>{}</tbody></table>',
        title,
        headings[0],
        headings[1],
        format_html_join("", "<tr><td>{}</td><td>{}</td></tr>", rows),
    )


HISTOGRAM = Frame(width=480, height=200, left=44, right=12, top=12, bottom=40)
WIDTH, HEIGHT = HISTOGRAM.width, HISTOGRAM.height
LEFT, TOP, BOTTOM = HISTOGRAM.left, HISTOGRAM.top, HISTOGRAM.bottom
PLOT_W, PLOT_H = HISTOGRAM.plot_w, HISTOGRAM.plot_h
# Bin edges labelled under the axis: at most this many, evenly spread (the hidden table
# names every bin).
EDGE_LABELS = 5


def number(value: object, digits: int = 4) -> str:
    """A number in the reader's locale with at most `digits` significant digits ("0,8333"
    in Spanish); "—" for None. Shared with the presenters, so a page writes every
    number one way."""
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, int):
        return formats.number_format(value)
    text = f"{value:.{digits}g}"
    if "e" in text:
        return text
    return formats.number_format(Decimal(text), decimal_pos=len(text.partition(".")[2]))


def fixed(value: float | None, places: int) -> str:
    """A number with exactly `places` decimals, in the reader's locale."""
    if value is None:
        return "—"
    return formats.number_format(round(float(value), places), decimal_pos=places)


def trimmed(value: float, places: int) -> str:
    """A number rounded to `places` decimals without the trailing zeros ("0.25", not
    "0.250"), in the reader's locale."""
    text = f"{float(value):.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text in ("-0", ""):
        text = "0"
    return formats.number_format(Decimal(text), decimal_pos=len(text.partition(".")[2]))


def _edge_places(bins: list[Mapping]) -> int:
    """Decimals enough to tell neighbouring bin edges apart, and no more."""
    width = max((b["hi"] - b["lo"] for b in bins), default=0)
    if width <= 0:
        return 4
    return max(0, min(6, 1 - math.floor(math.log10(width))))


def chart_id(title: str) -> str:
    """The id a chart's <title> and <desc> are named by: the same for the same title."""
    return "chart-" + hashlib.blake2b(title.encode("utf-8"), digest_size=4).hexdigest()


def histogram_svg(stats: Mapping, *, title: str) -> SafeString:
    """The score distribution of `stats` (a summary's Stats: n, mean, median, min, max and
    bins of {lo, hi, count}) as a bar chart: one <rect> a bin, the bin edges under the
    axis, the largest count beside it, a <title> and <desc> for screen readers and a
    visually hidden table of every bin for those who read tables."""
    bins = list(stats.get("bins") or [])
    if not stats.get("n") or not bins:
        return format_html('<p class="empty">{}</p>', _("No scores to draw."))
    places = _edge_places(bins)
    top = max(b["count"] for b in bins) or 1
    bar_w = PLOT_W / len(bins)
    bars = []
    rows = []
    for position, item in enumerate(bins):
        height = PLOT_H * item["count"] / top
        span = _("%(lo)s to %(hi)s") % {
            "lo": trimmed(item["lo"], places),
            "hi": trimmed(item["hi"], places),
        }
        label = ngettext(
            "%(range)s: %(count)s case", "%(range)s: %(count)s cases", item["count"]
        ) % {"range": span, "count": format_count(item["count"])}
        bars.append(
            format_html(
                '<rect class="chart-bar" x="{}" y="{}" width="{}" height="{}"><title>{}</title></rect>',
                f"{LEFT + position * bar_w + 0.5:.2f}",
                f"{TOP + PLOT_H - height:.2f}",
                f"{max(bar_w - 1, 0.5):.2f}",
                f"{height:.2f}",
                label,
            )
        )
        rows.append((span, format_count(item["count"])))
    edges = [bins[0]["lo"]] + [b["hi"] for b in bins]
    step = max(1, math.ceil((len(edges) - 1) / (EDGE_LABELS - 1)))
    marks = sorted({*range(0, len(edges), step), len(edges) - 1})
    if len(bins) == 1:
        marks = [0]  # min == max: one value, under the middle of its one bar
    labels = format_html_join(
        "",
        '<text class="chart-label" x="{}" y="{}" text-anchor="middle">{}</text>',
        (
            (
                f"{LEFT + (PLOT_W / 2 if len(bins) == 1 else at * bar_w):.2f}",
                HEIGHT - BOTTOM + 16,
                trimmed(edges[at], places),
            )
            for at in marks
        ),
    )
    description = _("%(n)s scores from %(min)s to %(max)s; mean %(mean)s, median %(median)s.") % {
        "n": format_count(stats["n"]),
        "min": number(stats.get("min")),
        "max": number(stats.get("max")),
        "mean": number(stats.get("mean")),
        "median": number(stats.get("median")),
    }
    over = format_html(
        '<text class="chart-label" x="{tick}" y="{top_label}" text-anchor="end">{most}</text>'
        '<text class="chart-label" x="{tick}" y="{base}" text-anchor="end">0</text>'
        "{labels}",
        tick=LEFT - 6,
        top_label=TOP + 8,
        most=format_count(top),
        base=TOP + PLOT_H,
        labels=labels,
    )
    svg = HISTOGRAM.svg(
        css_class="histogram-chart",
        title=title,
        description=description,
        under="".join(bars),
        over=over,
        axis_name=_("Score"),
    )
    table = data_table(title, (_("Scores"), _("Cases")), rows)
    return format_html('<figure class="histogram">{}{}</figure>', svg, table)
