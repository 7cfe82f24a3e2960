"""A labelling's case, shaped for its page and the API in the reader's language: what
to judge, the person's own label, and (only once they have labelled it) what the metric
and the other labeller said."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.utils.translation import gettext as _

from evaluations.charts import number
from evaluations.presenters import status_label
from labelling import selectors
from labelling.cases import Case
from labelling.models import Label, Labelling
from labelling.words import value_text


def _label(labelling: Labelling, label: Label | None) -> dict | None:
    if label is None:
        return None
    return {
        "value": label.value,
        "key": str(int(label.value)),
        "text": value_text(labelling, label.value),
        "note": label.note,
    }


def revealed(labelling: Labelling, viewer: AbstractBaseUser, case: Case) -> dict:
    """The metric's score and feedback of the row, and the other labels the viewer may see.
    Call it only for a row the viewer has labelled: before, they would anchor them."""
    scored = selectors.metric_case(labelling, case.case)
    metric = None
    if scored is not None:
        metric = {
            "status": scored.status,
            "status_label": status_label(scored.status),
            "score": scored.score,
            "score_text": number(scored.score),
            "feedback": scored.feedback,
        }
    others = [
        {
            "labeller": label.labeller.get_username(),
            "owner": label.labeller_id == labelling.owner_id,
            **_label(labelling, label),
        }
        for label in selectors.others_labels(labelling, viewer, case.row)
    ]
    return {"metric": metric, "others": others, "scored": labelling.evaluation_id is not None}


def case_view(labelling: Labelling, viewer: AbstractBaseUser, case: Case) -> dict:
    """Everything the case panel shows of one case for `viewer`."""
    mine = selectors.label_of(labelling, viewer, case.row)
    return {
        "position": case.position,
        "number": case.number,
        "row": case.row,
        "row_number": case.row + 1,
        "input": list(case.input.items()),
        "output": case.output,
        "expected": case.expected,
        "has_output": bool(labelling.output_column),
        "has_expected": bool(labelling.expected_column),
        "label": _label(labelling, mine),
        "revealed": revealed(labelling, viewer, case) if mine is not None else None,
        "previous": case.position - 1 if case.position > 0 else None,
        "next": case.position + 1 if case.position + 1 < labelling.total else None,
    }


def buttons(labelling: Labelling) -> list[dict]:
    """The label buttons: each value, its words and its key."""
    return [
        {"value": value, "key": str(value), "text": value_text(labelling, float(value))}
        for value in labelling.values
    ]


def kind_text(labelling: Labelling) -> str:
    if labelling.kind == Labelling.Kind.PASS_FAIL:
        return _("Pass or fail")
    return _("A scale from 1 to %(n)s") % {"n": labelling.scale}


def interval_text(figure: dict | None) -> str:
    """ "0.62 (0.41 to 0.80)" in the reader's numbers; "—" when undefined."""
    if not figure or figure.get("value") is None:
        return "—"
    if figure.get("low") is None or figure.get("high") is None:
        return number(figure["value"], 2)
    return _("%(value)s (%(low)s to %(high)s)") % {
        "value": number(figure["value"], 2),
        "low": number(figure["low"], 2),
        "high": number(figure["high"], 2),
    }


def agreement_rows(pairs: list[dict]) -> list[dict]:
    rows = []
    for pair in pairs:
        figures = pair["figures"]
        agreement = figures.get("agreement") or {}
        rows.append(
            {
                "other": pair["other"].get_username(),
                "n": figures.get("n"),
                "kappa": interval_text(figures.get("kappa")),
                "kappa_value": (figures.get("kappa") or {}).get("value"),
                "agreement": _share(agreement) if agreement.get("value") is not None else "—",
                "weighted": interval_text(figures.get("weighted_kappa"))
                if figures.get("weighted_kappa")
                else None,
            }
        )
    return rows


def _share(figure: dict) -> str:
    """A share as a percentage, with its interval."""

    def percent(value: float) -> str:
        return _("%(n)s%%") % {"n": number(value * 100, 3)}

    if figure.get("low") is None or figure.get("high") is None:
        return percent(figure["value"])
    return _("%(value)s (%(low)s to %(high)s)") % {
        "value": percent(figure["value"]),
        "low": percent(figure["low"]),
        "high": percent(figure["high"]),
    }
