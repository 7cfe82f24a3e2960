"""A stored check, shaped for the results panel in the reader's language."""

from __future__ import annotations

import json

from django.utils.translation import gettext as _

import wording
from checks.models import Check
from checks.selectors import latest_reviews
from contract import frameworks
from contract.cases import DEFAULT_CASES
from wording.contract import HINT_ADVICE, RETURN_EXAMPLES, RUN_STATUSES, output_cut_words

CELL_LIMIT = 2000


def _json(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= CELL_LIMIT else text[:CELL_LIMIT] + "…"


def _ms(value: float | None) -> str:
    if value is None:
        return "—"
    return _("%(ms)s ms") % {"ms": f"{value:.0f}" if value >= 10 else f"{value:.1f}"}


def _usd(cost: float | None) -> str:
    return "—" if cost is None else f"${cost:.6f}".rstrip("0").rstrip(".")


def present(check: Check | None) -> dict | None:
    if check is None or not check.result:
        return None
    rendered = wording.render(check.result)
    inputs = check.cases or [case.to_job() for case in DEFAULT_CASES]
    reviews = latest_reviews(check) if check.is_final else {}
    for case in rendered["cases"]:
        case["review"] = reviews.get(case["index"])
        given = inputs[case["index"]] if case["index"] < len(inputs) else {}
        usage = case.get("usage") or {}
        case["input_json"] = _json(given.get("input"))
        run = case.get("run")
        if run:
            # A wizard check: the output is what the artifact's run returned (its repr),
            # measured by the parent.
            case["output_json"] = run.get("output_repr") or ""
            case["run_label"] = str(RUN_STATUSES.get(run.get("status"), ""))
            # A failed run is the case's error; its traceback is program.py's.
            case["in_program"] = run.get("status") != "ok" and case.get("problem") == run.get(
                "problem"
            )
            case["run_duration_text"] = _ms(run.get("duration_ms"))
            run_cost = (run.get("usage") or {}).get("cost_usd")
            case["run_cost_text"] = _usd(run_cost)
        else:
            case["output_json"] = _json(given.get("output"))
        case["expected_json"] = _json(given.get("expected"))
        case["score_text"] = "" if case["score"] is None else wording.format_number(case["score"])
        case["scores_text"] = [
            (name, wording.format_number(value)) for name, value in (case["scores"] or {}).items()
        ]
        # Each DSPy predictor's own feedback, by its name (results stored before have none).
        # By name: PostgreSQL's jsonb keeps no order of keys, so both databases show one.
        case["predictor_feedback_items"] = sorted((case.get("predictor_feedback") or {}).items())
        case["predictor_feedback_omitted"] = case.get("predictor_feedback_omitted") or 0
        for stream in ("stdout", "stderr"):
            cut = case.get(f"{stream}_truncated") or 0
            # Results stored before the count of printed bytes have only what was cut.
            printed = case.get(f"{stream}_printed") or 0
            kept = len((case.get(stream) or "").encode("utf-8"))
            note = output_cut_words(kept, max(printed, kept + cut)) if cut else ""
            case[f"{stream}_note"] = note
        # The return built from the case's own values, where the result names its shape;
        # else the docs' example for the problem.
        case["return_example"] = case.get("fix") or RETURN_EXAMPLES.get(
            case.get("problem") or "", ""
        )
        case["duration_text"] = _ms(case.get("duration_ms"))
        case["model_calls_text"] = str(usage.get("model_calls") or 0)
        cost = usage.get("cost_usd")
        case["cost_text"] = _usd(cost)
    # Where Convert would change the metric, the panel offers it (a result stored before
    # the check said so is read from its shapes).
    found = check.result.get("looks_like")
    if "looks_like" in check.result:
        rendered["convertible"] = bool(found and found.get("convertible"))
    else:
        rendered["convertible"] = frameworks.seen_in(check.result)
    rendered["advice"] = str(HINT_ADVICE)
    rendered["feedback_examples"] = wording.feedback_examples()
    return rendered
