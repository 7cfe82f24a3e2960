"""The calibration chart (evaluations.charts.calibration_svg): the mean human score of each
bin of the metric's score, drawn on the server from contract.agreement's calibration."""

from __future__ import annotations

import re

from django.utils import translation

from contract.agreement import score_agreement
from evaluations.charts import CALIBRATION, calibration_svg

HUMAN = [1, 1, 2, 3, 3, 4, 5, 5, 4]
METRIC = [0.05, 0.1, 0.15, 0.5, 0.55, 0.62, 0.95, 1.0, 0.99]


def _calibration() -> list[dict]:
    return score_agreement(HUMAN, METRIC, scale=(1, 5), bins=5, resamples=0)["calibration"]


def test_it_draws_one_point_for_each_bin_with_cases_joined_by_a_line():
    bins = _calibration()
    filled = [b for b in bins if b["count"]]
    assert len(bins) == 5 and len(filled) == 4  # 0.2 to 0.4 has no case

    html = calibration_svg(bins, scale=(1, 5), title="Metric score against people")

    svg = re.search(r"<svg.*?</svg>", html, re.S).group(0)
    points = re.findall(r'<circle class="chart-point" cx="([\d.]+)" cy="([\d.]+)"', svg)
    assert len(points) == len(filled)
    line = re.search(r'<path class="chart-line" d="([^"]+)"', svg).group(1)
    assert line.count("M") + line.count("L") == len(filled)
    # Higher mean human scores sit higher (a smaller y), in the order of the bins.
    heights = [float(y) for _, y in points]
    means = [b["human_mean"] for b in filled]
    assert sorted(range(4), key=lambda i: -heights[i]) == sorted(range(4), key=lambda i: means[i])
    assert [float(x) for x, _ in points] == sorted(float(x) for x, _ in points)
    # Each bin's count, as a faint bar and in its tooltip.
    assert svg.count('<rect class="chart-count"') == len(filled)
    assert "0.8 to 1: 3 cases" in svg


def test_the_diagonal_runs_from_the_bottom_left_to_the_top_right():
    html = calibration_svg(_calibration(), scale=(1, 5), title="Calibration")

    x1, y1, x2, y2 = map(
        float,
        re.search(
            r'<line class="chart-now" x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="([\d.]+)"',
            html,
        ).groups(),
    )
    frame = CALIBRATION
    assert (x1, y1) == (frame.left, frame.top + frame.plot_h)  # (metric 0, human 1)
    assert (x2, y2) == (frame.left + frame.plot_w, frame.top)  # (metric 1, human 5)
    assert "<title>Perfect calibration</title>" in html


def test_it_carries_its_title_and_a_table_of_every_bin():
    html = calibration_svg(_calibration(), scale=(1, 5), title="Metric score against people")

    assert re.search(r'<title id="chart-[0-9a-f]+-title">Metric score against people</title>', html)
    assert "<desc" in html and "over 9 cases" in html
    table = re.search(r'<table class="visually-hidden">.*?</table>', html, re.S).group(0)
    assert "<caption>Metric score against people</caption>" in table
    assert table.count("<tr><td>") == 5  # every bin, the empty one too
    assert "<tr><td>0.2 to 0.4</td><td>— over 0 cases</td></tr>" in table
    assert "<tr><td>0 to 0.2</td><td>1.333 over 3 cases</td></tr>" in table


def test_numbers_are_written_in_the_readers_language():
    with translation.override("es"):
        html = calibration_svg(_calibration(), scale=(1, 5), title="Calibración")

    assert "1,333" in html and "0,2" in html
    assert "1.333" not in html


def test_no_bin_with_cases_draws_nothing_but_says_so():
    empty = score_agreement([], [], scale=(1, 5))["calibration"]

    assert "No scores to draw." in calibration_svg(empty, scale=(1, 5), title="Calibration")
    assert "<svg" not in calibration_svg([], scale=(1, 5), title="Calibration")
