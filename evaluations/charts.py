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


CALIBRATION = Frame(width=480, height=240, left=58, right=12, top=12, bottom=40)
# The bars of each bin's count, under the points, reach at most this share of the plot.
COUNT_BARS = 0.3
HUMAN_TICKS = 4


def calibration_svg(
    calibration: list[dict], *, scale: tuple[float, float], title: str
) -> SafeString:
    """The metric's calibration against people (contract.agreement's "calibration": bins
    of {lo, hi, count, human_mean} over the metric's range): the mean human score of each
    non-empty bin as a point at the bin's middle, the points joined by a line, each bin's
    count as a faint bar under them, and the dashed diagonal of perfect calibration from
    (the range's lo, the scale's lo) to (its hi, the scale's hi). Drawn as histogram_svg
    is: a <title> and <desc>, and the hidden table of every bin. The line chart's classes
    (run-chart) style it; the bars take the text's colour, faint, in either theme."""
    bins = list(calibration or [])
    filled = [b for b in bins if b.get("count") and b.get("human_mean") is not None]
    if not filled:
        return format_html('<p class="empty">{}</p>', _("No scores to draw."))
    frame = CALIBRATION
    x_lo, x_hi = bins[0]["lo"], bins[-1]["hi"]
    y_lo, y_hi = float(scale[0]), float(scale[1])

    def x(value: float) -> float:
        return frame.left + frame.plot_w * ((value - x_lo) / ((x_hi - x_lo) or 1.0))

    def y(value: float) -> float:
        share = (value - y_lo) / ((y_hi - y_lo) or 1.0)
        return frame.top + frame.plot_h * (1 - min(1.0, max(0.0, share)))

    places = _edge_places(bins)
    most = max(b["count"] for b in bins)
    base = frame.top + frame.plot_h
    bars, points, path, rows = [], [], [], []
    for item in bins:
        span = _("%(lo)s to %(hi)s") % {
            "lo": trimmed(item["lo"], places),
            "hi": trimmed(item["hi"], places),
        }
        count = item.get("count") or 0
        mean = item.get("human_mean") if count else None
        if count:
            height = frame.plot_h * COUNT_BARS * count / most
            bars.append(
                format_html(
                    '<rect class="chart-count" x="{}" y="{}" width="{}" height="{}" '
                    'fill="currentColor" fill-opacity="0.14"><title>{}</title></rect>',
                    f"{x(item['lo']) + 0.5:.2f}",
                    f"{base - height:.2f}",
                    f"{max(x(item['hi']) - x(item['lo']) - 1, 0.5):.2f}",
                    f"{height:.2f}",
                    ngettext("%(range)s: %(count)s case", "%(range)s: %(count)s cases", count)
                    % {"range": span, "count": format_count(count)},
                )
            )
        described = ngettext(
            "%(mean)s over %(count)s case", "%(mean)s over %(count)s cases", count
        ) % {"mean": number(mean), "count": format_count(count)}
        rows.append((span, described))
        if mean is None:
            continue
        at = (f"{x((item['lo'] + item['hi']) / 2):.2f}", f"{y(mean):.2f}")
        path.append(("M" if not path else "L") + f"{at[0]},{at[1]}")
        points.append(
            format_html(
                '<circle class="chart-point" cx="{}" cy="{}" r="3.5"><title>{}</title></circle>',
                at[0],
                at[1],
                _("%(range)s: mean human score %(described)s")
                % {"range": span, "described": described},
            )
        )
    grid = []
    for tick in range(HUMAN_TICKS + 1):
        value = y_lo + (y_hi - y_lo) * tick / HUMAN_TICKS
        grid.append(
            format_html(
                '<line class="chart-grid" x1="{}" y1="{at}" x2="{}" y2="{at}"/>'
                '<text class="chart-label" x="{}" y="{}" text-anchor="end">{}</text>',
                frame.left,
                frame.left + frame.plot_w,
                frame.left - 6,
                f"{y(value) + 4:.2f}",
                number(round(value, 4)),
                at=f"{y(value):.2f}",
            )
        )
    edges = [bins[0]["lo"]] + [b["hi"] for b in bins]
    step = max(1, math.ceil((len(edges) - 1) / (EDGE_LABELS - 1)))
    marks = sorted({*range(0, len(edges), step), len(edges) - 1})
    labels = format_html_join(
        "",
        '<text class="chart-label" x="{}" y="{}" text-anchor="middle">{}</text>',
        (
            (f"{x(edges[at]):.2f}", frame.height - frame.bottom + 16, trimmed(edges[at], places))
            for at in marks
        ),
    )
    perfect = _("Perfect calibration")
    over = format_html(
        '<line class="chart-now" x1="{}" y1="{}" x2="{}" y2="{}"><title>{}</title></line>'
        '<path class="chart-line" d="{}"/>{}{}'
        '<text class="chart-label chart-axis-name" x="{}" y="{}" text-anchor="middle" '
        'transform="rotate(-90 {} {})">{}</text>',
        f"{x(x_lo):.2f}",
        f"{y(y_lo):.2f}",
        f"{x(x_hi):.2f}",
        f"{y(y_hi):.2f}",
        perfect,
        " ".join(path),
        mark_safe("".join(points)),
        labels,
        14,
        f"{frame.top + frame.plot_h / 2:.2f}",
        14,
        f"{frame.top + frame.plot_h / 2:.2f}",
        _("Mean human score"),
    )
    cases = sum(b.get("count") or 0 for b in bins)
    description = ngettext(
        "The mean human score (on a scale of %(lo)s to %(hi)s) in %(filled)s of %(bins)s "
        "ranges of the metric's score, over %(cases)s case; the dashed line is perfect "
        "calibration, and the faint bars count the cases in each range.",
        "The mean human score (on a scale of %(lo)s to %(hi)s) in %(filled)s of %(bins)s "
        "ranges of the metric's score, over %(cases)s cases; the dashed line is perfect "
        "calibration, and the faint bars count the cases in each range.",
        cases,
    ) % {
        "lo": number(y_lo),
        "hi": number(y_hi),
        "filled": format_count(len(filled)),
        "bins": format_count(len(bins)),
        "cases": format_count(cases),
    }
    svg = frame.svg(
        css_class="run-chart calibration-chart",
        title=title,
        description=description,
        under="".join(grid) + "".join(bars),
        over=over,
        axis_name=_("Metric score"),
    )
    table = data_table(title, (_("Metric score"), _("Mean human score")), rows)
    return format_html(
        '<figure class="run-progress-chart calibration-plot">{}{}</figure>', svg, table
    )
