"""The run page's chart, drawn on the server as the evaluations' histogram is: the best
mean score on the validation cases over the metric calls spent, a step up at each better
candidate, as an inline SVG with a <title>, a <desc> and a visually hidden table of its
points for those who read tables."""

from __future__ import annotations

import hashlib

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from evaluations.charts import number
from messages import format_count

# The drawing's own units; the stylesheet scales it to the column's width.
WIDTH, HEIGHT = 480, 220
LEFT, RIGHT, TOP, BOTTOM = 44, 16, 12, 40
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
# Score gridlines, and metric-call labels under the axis.
Y_TICKS = 4
X_LABELS = 4


def improvements(points: list) -> list[tuple[int, float]]:
    """The chart's points ([metric calls, best score] pairs) cleaned: numbers only, in
    order of metric calls, each better than the one before."""
    found: list[tuple[int, float]] = []
    for pair in points or ():
        try:
            calls, score = int(pair[0]), float(pair[1])
        except (TypeError, ValueError, IndexError):
            continue
        found.append((max(0, calls), score))
    found.sort()
    best: list[tuple[int, float]] = []
    for calls, score in found:
        if not best or score > best[-1][1]:
            best.append((calls, score))
    return best


def _x(calls: float, top: float) -> float:
    return LEFT + PLOT_W * (calls / top if top else 0)


def _y(score: float, low: float, high: float) -> float:
    span = (high - low) or 1.0
    return TOP + PLOT_H * (1 - (score - low) / span)


def progress_svg(points: list, *, now_calls: int, max_calls: int, title: str) -> SafeString:
    """The best score over metric calls, from `points` (progress["points"]) carried on to
    `now_calls`, on an axis that runs to the budget (`max_calls`)."""
    found = improvements(points)
    if not found:
        return format_html('<p class="empty">{}</p>', _("No candidate has been scored yet."))
    chart_id = "chart-" + hashlib.blake2b(title.encode("utf-8"), digest_size=4).hexdigest()
    end = max(now_calls, found[-1][0])
    top_calls = max(max_calls, end, 1)
    scores = [score for _, score in found]
    low, high = min(0.0, min(scores)), max(1.0, max(scores))
    # The step line: across at each best, up to the next, and on to where the run is.
    path = [f"M{_x(found[0][0], top_calls):.2f},{_y(found[0][1], low, high):.2f}"]
    for calls, score in found[1:]:
        path.append(f"H{_x(calls, top_calls):.2f}")
        path.append(f"V{_y(score, low, high):.2f}")
    path.append(f"H{_x(end, top_calls):.2f}")
    marks = []
    rows = []
    for position, (calls, score) in enumerate(found):
        label = ngettext(
            "%(score)s after %(calls)s metric call", "%(score)s after %(calls)s metric calls", calls
        ) % {
            "score": number(score),
            "calls": format_count(calls),
        }
        marks.append(
            format_html(
                '<circle class="chart-point{}" cx="{}" cy="{}" r="3.5"><title>{}</title></circle>',
                " chart-seed" if position == 0 else "",
                f"{_x(calls, top_calls):.2f}",
                f"{_y(score, low, high):.2f}",
                label,
            )
        )
        rows.append((format_count(calls), number(score)))
    grid = []
    for tick in range(Y_TICKS + 1):
        score = low + (high - low) * tick / Y_TICKS
        y = _y(score, low, high)
        grid.append(
            format_html(
                '<line class="chart-grid" x1="{}" y1="{y}" x2="{}" y2="{y}"/>'
                '<text class="chart-label" x="{}" y="{}" text-anchor="end">{}</text>',
                LEFT,
                LEFT + PLOT_W,
                LEFT - 6,
                f"{y + 4:.2f}",
                number(round(score, 4)),
                y=f"{y:.2f}",
            )
        )
    ticks = sorted({round(top_calls * k / X_LABELS) for k in range(X_LABELS + 1)})
    labels = format_html_join(
        "",
        '<text class="chart-label" x="{}" y="{}" text-anchor="{}">{}</text>',
        (
            (
                f"{_x(calls, top_calls):.2f}",
                HEIGHT - BOTTOM + 16,
                "start" if calls == 0 else "end" if calls == top_calls else "middle",
                format_count(calls),
            )
            for calls in ticks
        ),
    )
    budget_line = ""
    if end < top_calls:
        budget_line = format_html(
            '<line class="chart-now" x1="{x}" y1="{}" x2="{x}" y2="{}"/>',
            TOP,
            TOP + PLOT_H,
            x=f"{_x(end, top_calls):.2f}",
        )
    better = len(found) - 1
    description = ngettext(
        "From %(first)s, the starting candidate's score, to %(best)s after %(calls)s of "
        "%(budget)s metric calls: %(better)s better candidate on the way.",
        "From %(first)s, the starting candidate's score, to %(best)s after %(calls)s of "
        "%(budget)s metric calls: %(better)s better candidates on the way.",
        better,
    ) % {
        "first": number(found[0][1]),
        "best": number(found[-1][1]),
        "calls": format_count(end),
        "budget": format_count(max_calls),
        "better": format_count(better),
    }
    svg = format_html(
        '<svg class="run-chart" viewBox="0 0 {w} {h}" role="img" '
        'aria-labelledby="{id}-title {id}-desc" xmlns="http://www.w3.org/2000/svg">'
        '<title id="{id}-title">{title}</title><desc id="{id}-desc">{desc}</desc>'
        "{grid}{now}"
        '<line class="chart-axis" x1="{left}" y1="{base}" x2="{right}" y2="{base}"/>'
        '<line class="chart-axis" x1="{left}" y1="{top}" x2="{left}" y2="{base}"/>'
        '<path class="chart-line" d="{path}"/>'
        "{marks}{labels}"
        '<text class="chart-label chart-axis-name" x="{middle}" y="{name_y}" text-anchor="middle">{axis}</text>'
        "</svg>",
        w=WIDTH,
        h=HEIGHT,
        id=chart_id,
        title=title,
        desc=description,
        grid=mark_safe("".join(grid)),
        now=budget_line,
        left=LEFT,
        right=LEFT + PLOT_W,
        top=TOP,
        base=TOP + PLOT_H,
        path=" ".join(path),
        marks=mark_safe("".join(marks)),
        labels=labels,
        middle=LEFT + PLOT_W / 2,
        name_y=HEIGHT - 4,
        axis=_("Metric calls"),
    )
    table = format_html(
        '<table class="visually-hidden"><caption>{}</caption><thead><tr>'
        '<th scope="col">{}</th><th scope="col">{}</th></tr></thead><tbody>{}</tbody></table>',
        title,
        _("Metric calls"),
        _("Best score"),
        format_html_join("", "<tr><td>{}</td><td>{}</td></tr>", rows),
    )
    return format_html(
        '<figure class="run-progress-chart">{}{}<figcaption class="meta">{}</figcaption></figure>',
        svg,
        table,
        description,
    )
