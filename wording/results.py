"""A stored check result in the reader's words, and the docs' tables shown beside it."""

from __future__ import annotations

from collections.abc import Mapping

from django.utils.translation import gettext_lazy as _
from django.utils.translation import override

from contract.codes import NOTES, RETURN_VALUE_PROBLEMS
from wording.contract import (
    CASE_STATUSES,
    PROBLEMS,
    STAGE_NAMES,
    STAGE_STATUSES,
    add_imports_label,
    check_problem_words,
    fixable_imports,
    hint_words,
    looks_like_words,
    shape_words,
    stage_words,
    warning_words,
)
from wording.sandbox import LAYER_NAMES, SANDBOX_MODE_NOTES


def render(result: Mapping, language: str | None = None) -> dict:
    """The result with `name`, `status_label` and `message` added, in `language` (or the active one).

    The positive notes among the stored hints (contract.codes.NOTES) come apart as `notes`.
    """
    if language:
        with override(language):
            return render(result, None)
    stages = []
    for stage in result.get("stages", []):
        stages.append(
            {
                **stage,
                "name": str(STAGE_NAMES.get(stage["id"], stage["id"])),
                "status_label": str(STAGE_STATUSES.get(stage["status"], stage["status"])),
                "message": stage_words(stage),
                "details": [
                    check_problem_words(problem["code"], problem.get("params") or {})
                    for problem in stage.get("problems", [])
                    if problem["code"] != stage.get("problem")
                ],
                "warnings": [warning_words(w) for w in stage.get("warnings") or []],
                **_add_imports(stage),
            }
        )
    cases = []
    for case in result.get("cases", []):
        params = case.get("params") or {}
        cases.append(
            {
                **case,
                "number": case["index"] + 1,
                "status_label": str(CASE_STATUSES.get(case["status"], case["status"])),
                "message": check_problem_words(case.get("problem"), params),
                **return_help(case.get("problem"), params),
            }
        )
    worded = [
        {**hint, "message": hint_words(hint.get("code"), hint.get("params") or {})}
        for hint in result.get("hints", [])
    ]
    hints = [hint for hint in worded if hint.get("code") not in NOTES]
    notes = [hint for hint in worded if hint.get("code") in NOTES]
    layers = [str(LAYER_NAMES.get(layer, layer)) for layer in result.get("layers") or []]
    note = SANDBOX_MODE_NOTES.get(result.get("sandbox_mode") or "")
    return {
        **result,
        "looks_like_message": looks_like_words(result.get("looks_like")),
        "stages": stages,
        "cases": cases,
        "hints": hints,
        "notes": notes,
        "layer_names": layers,
        "sandbox_note": str(note) if note else "",
    }


def _add_imports(stage: Mapping) -> dict:
    """A failed load stage with missing names that have import lines offers to add them."""
    lines = fixable_imports(stage)
    if not lines:
        return {}
    return {"add_imports": lines, "add_imports_label": add_imports_label(len(lines))}


# Which row of the docs' table of return values (reference_rows) a problem is, by its code;
# not_a_pair is the row of 0.8 only when a number (or a bool) came back.
_DOCS_ROWS = {
    "side_info_not_dict": 3,
    "feedback_missing": 4,
    "named_score_not_number": 6,
    "predictor_feedback_not_dict": 8,
    "predictor_feedback_empty": 9,
}


def docs_row(problem: str | None, params: Mapping) -> int | None:
    """The index in reference_rows() of the docs' row this return-value problem matches."""
    if problem == "not_a_pair":
        shape = params.get("shape")
        kind = shape.get("kind") if isinstance(shape, Mapping) else None
        return 2 if kind in ("number", "bool") else None
    if problem == "score_not_number":
        return 5 if params.get("type") == "str" else None
    return _DOCS_ROWS.get(problem or "")


def return_help(problem: str | None, params: Mapping) -> dict:
    """For a return-value problem: the shape that came back (data and words), the return
    line that keeps the contract built from the case's own values, and the docs' row."""
    if problem not in RETURN_VALUE_PROBLEMS or not isinstance(params.get("shape"), Mapping):
        return {}
    row = docs_row(problem, params)
    fix = params.get("fix")
    return {
        "shape": dict(params["shape"]),
        "shape_text": shape_words(params["shape"]),
        "fix": fix if isinstance(fix, str) else None,
        "docs_row": row,
        "docs_row_text": reference_rows()[row] if row is not None else None,
    }


def reference_rows() -> list[tuple[str, str, bool]]:
    """The docs' table of return values: (value, verdict in words, valid)."""
    return [
        ('(0.8, {"feedback": "Close. Missing the date."})', str(_("Yes")), True),
        ('[1.0, {"feedback": "OK", "scores": {"format": 1.0}}]', str(_("Yes")), True),
        ("0.8", str(_("No. There is no side info.")), False),
        ('(0.8, "Close.")', str(PROBLEMS["side_info_not_dict"]), False),
        ("(0.8, {})", str(PROBLEMS["feedback_missing"]), False),
        ('("0.8", {"feedback": "OK"})', str(_("No. The score is a string.")), False),
        (
            '(0.8, {"feedback": "OK", "scores": {"a": "high"}})',
            str(_("No. A named score is not a number.")),
            False,
        ),
        (
            '(0.5, {"feedback": "Label wrong.", "predictor_feedback": '
            '{"classify.predict": "Answer with the label alone."}})',
            str(_("Yes")),
            True,
        ),
        (
            '(0.5, {"feedback": "OK", "predictor_feedback": "Be brief."})',
            str(_("No. The feedback per predictor is not a dict.")),
            False,
        ),
        (
            '(0.5, {"feedback": "OK", "predictor_feedback": {"classify.predict": ""}})',
            str(_("No. A predictor's feedback is empty.")),
            False,
        ),
    ]


def feedback_examples() -> list[tuple[str, str]]:
    """The docs' poor vs useful feedback, shown beside the hints."""
    return [
        (
            str(_("Incorrect.")),
            str(_("Expected 'billing', got 'other'. The message mentions a charge.")),
        ),
        (
            str(_("Wrong format.")),
            str(_("The output is not valid JSON. It has a trailing comma after the last field.")),
        ),
    ]
