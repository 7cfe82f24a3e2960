"""The run page's chart, drawn on the server as the evaluations' histogram is: the best
mean score on the validation cases over the metric calls spent, a step up at each better
candidate, as an inline SVG with a <title>, a <desc> and a visually hidden table of its
points for those who read tables."""

from __future__ import annotations

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from evaluations.charts import Frame, data_table, number
from wording import format_count

PROGRESS = Frame(width=480, height=220, left=44, right=16, top=12, bottom=40)
HEIGHT, LEFT, TOP, BOTTOM = PROGRESS.height, PROGRESS.left, PROGRESS.top, PROGRESS.bottom
PLOT_W, PLOT_H = PROGRESS.plot_w, PROGRESS.plot_h
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
    svg = PROGRESS.svg(
        css_class="run-chart",
        title=title,
        description=description,
        under="".join(grid) + budget_line,
        over=format_html(
            '<path class="chart-line" d="{}"/>{}{}',
            " ".join(path),
            mark_safe("".join(marks)),
            labels,
        ),
        axis_name=_("Metric calls"),
    )
    table = data_table(title, (_("Metric calls"), _("Best score")), rows)
    return format_html(
        '<figure class="run-progress-chart">{}{}<figcaption class="meta">{}</figcaption></figure>',
        svg,
        table,
        description,
    )
