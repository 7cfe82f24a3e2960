"""The results page's "Does the metric agree with people?" block, from the summary's
"human" part (evaluations.human_summary), in the reader's language and number format."""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext as _

from evaluations import charts
from evaluations.charts import number
from evaluations.models import Evaluation, EvaluationCase
from evaluations.presenters import case_row, count, cut, percent, version_name

# The figure two versions are compared by: the one that corrects for chance (labels), or
# for ranks (scores).
HEADLINE = {"label": "kappa", "score": "spearman"}


def interval_text(figure: Mapping | None, *, share: bool = False) -> dict:
    """A figure and its 95% interval as text: {"value", "interval"}; "—" when undefined."""
    figure = figure or {}
    shown = percent if share else (lambda v: number(v, 3) if v is not None else "—")
    value, low, high = figure.get("value"), figure.get("low"), figure.get("high")
    interval = ""
    if value is not None and low is not None and high is not None:
        interval = _("%(low)s to %(high)s") % {"low": shown(low), "high": shown(high)}
    return {"value": shown(value), "interval": interval}


def _figure_rows(kind: str, figures: Mapping) -> list[dict]:
    if kind == "label":
        rows = [
            (_("Accuracy (the same label)"), figures.get("accuracy"), True),
            (_("Cohen's kappa (agreement beyond chance)"), figures.get("kappa"), False),
        ]
    else:
        rows = [
            (_("Spearman correlation (ranks)"), figures.get("spearman"), False),
            (_("Kendall's tau (ordered pairs)"), figures.get("kendall"), False),
            (_("Mean absolute difference (both on 0 to 1)"), figures.get("mad"), False),
        ]
    return [{"name": name, **interval_text(figure, share=share)} for name, figure, share in rows]


def _version(evaluation: Evaluation, kind: str, figures: Mapping | None, *, second: bool):
    if not figures:
        return None
    block = {
        "name": version_name(evaluation, second=second),
        "n": count(figures.get("n")),
        "rows": _figure_rows(kind, figures),
    }
    if kind == "label":
        classes = figures.get("classes") or []
        block["confusion"] = {
            "classes": classes,
            "rows": [
                {"label": label, "counts": [count(c) for c in row]}
                for label, row in zip(classes, figures.get("confusion") or [], strict=False)
            ],
        }
        block["per_class"] = [
            {
                "label": item.get("class"),
                "support": count(item.get("support")),
                "precision": interval_text(item.get("precision"), share=True),
                "recall": interval_text(item.get("recall"), share=True),
            }
            for item in figures.get("per_class") or []
        ]
    return block


def _better(evaluation: Evaluation, kind: str, first: Mapping | None, second: Mapping | None):
    """Which version agrees better with people, by the headline figure, and whether the
    intervals let the rows tell them apart."""
    key = HEADLINE[kind]
    a, b = (first or {}).get(key) or {}, (second or {}).get(key) or {}
    if a.get("value") is None or b.get("value") is None:
        return ""
    names = {
        "first": version_name(evaluation),
        "second": version_name(evaluation, second=True),
    }
    if abs(a["value"] - b["value"]) < 1e-9:
        return _("Both versions agree with people equally.")
    winner, loser = ("first", "second") if a["value"] > b["value"] else ("second", "first")
    values = {"first": a, "second": b}
    text = _("%(better)s agrees better with people (%(figure)s %(high)s against %(low)s).") % {
        "better": names[winner],
        "figure": _("kappa") if kind == "label" else _("Spearman"),
        "high": number(values[winner]["value"], 3),
        "low": number(values[loser]["value"], 3),
    }
    lows = (a.get("low"), b.get("low"), a.get("high"), b.get("high"))
    if None not in lows and values[loser]["high"] >= values[winner]["low"]:
        text += " " + _(
            "Their intervals overlap, so these rows cannot tell them apart with confidence: "
            "label more rows."
        )
    return text


def human_value_text(human: Mapping | None, kind: str) -> str:
    value = (human or {}).get(kind)
    if value is None:
        return "—"
    return number(value) if kind == "score" else str(value)


def _disagree_rows(indexes, shown: Mapping[int, EvaluationCase], kind: str) -> list[dict]:
    rows = []
    for index in indexes or ():
        case = shown.get(index)
        if case is None:
            continue
        row = case_row(case)
        row["human_text"] = human_value_text(case.human, kind)
        row["human_note"] = cut((case.human or {}).get("note"))
        rows.append(row)
    return rows


def human_block(
    evaluation: Evaluation, human: Mapping | None, shown: Mapping[int, EvaluationCase]
) -> dict | None:
    """Everything the page says of the metric's agreement with people; None without
    human columns."""
    if not human:
        return None
    kind = human.get("kind") or "label"
    first, second = human.get("first"), human.get("second")
    scale = human.get("scale") or [0, 1]
    block = {
        "kind": kind,
        "labelled": count(human.get("labelled")),
        "compared": count(human.get("compared")),
        "unscored": human.get("unscored") or 0,
        "unscored_text": count(human.get("unscored")),
        "notes": human.get("notes") or 0,
        "versions": [
            v
            for v in (
                _version(evaluation, kind, first, second=False),
                _version(evaluation, kind, second, second=True),
            )
            if v is not None
        ],
        "better": _better(evaluation, kind, first, second) if second else "",
        "cases": _disagree_rows(human.get("disagree"), shown, kind),
        "classes": ", ".join(human.get("classes") or []),
        "threshold": number(human.get("threshold")) if human.get("threshold") is not None else "",
        "scale": _("%(lo)s to %(hi)s") % {"lo": number(scale[0]), "hi": number(scale[1])},
        "calibration": "",
    }
    if kind == "score" and first and first.get("calibration"):
        block["calibration"] = charts.calibration_svg(
            first["calibration"],
            scale=(scale[0], scale[1]),
            title=_("Metric score against the mean human score"),
        )
    return block
