"""Editor support: static diagnostics and completions, in the reader's language."""

from __future__ import annotations

import ast
import sys

from django.http import JsonResponse
from django.utils.translation import gettext as _

from contract import missing_imports, parsing
from contract.static import static_check
from sandbox.libraries import AVAILABLE
from wording import words
from wording.contract import (
    STAGE_NAMES,
    add_imports_label,
    fixable_imports,
    imports_added_words,
    warning_words,
)

# Load problems after which the source was still read whole (its imports can be listed).
_STILL_READ = ("no_score_function", "names_not_imported")


def static_diagnostics(source: str) -> list[dict]:
    """The load, signature and REWARD_SPEC problems of `source`, found without running it,
    and what a passed stage warns of (a signature named like another framework's)."""
    result = static_check(source).to_dict()
    load = result["stages"][0]
    unread = load["status"] == "failed" and load["problem"] not in _STILL_READ
    found = [] if unread else _imports_not_available(source)
    for stage in result["stages"]:
        fixable = fixable_imports(stage)
        for problem in stage["problems"]:
            message = words(problem["code"], problem.get("params") or {})
            found.append(_diagnostic(stage["id"], problem, "error", message))
            if problem["code"] == "name_not_imported" and fixable:
                # The editor offers to add them all at once (static/js/playground.js).
                found[-1]["fix_label"] = add_imports_label(len(fixable))
        for warning in stage.get("warnings") or []:
            found.append(_diagnostic(stage["id"], warning, "warning", warning_words(warning)))
    return found


# What a metric may import besides the libraries: the standard library, and skynet.
_IMPORTABLE = frozenset(sys.stdlib_module_names) | {"skynet", *AVAILABLE}


def _imports_not_available(source: str) -> list[dict]:
    """An import of a module the sandbox does not have (`import torch`), said while
    typing as the check would say it at Load. One inside a `try` is left alone: the
    metric may well go on without it."""
    try:
        tree = parsing.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # the load stage says why
    guarded = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.Try)
        for statement in block.body
        for node in ast.walk(statement)
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            module = name.split(".")[0]
            if module in _IMPORTABLE:
                continue
            params = {"module": module, "available": ", ".join(AVAILABLE)}
            problem = {
                "code": "module_not_available",
                "params": {
                    "line": node.lineno,
                    "column": node.col_offset + 1,
                    "end_line": node.end_lineno,
                    "end_column": (node.end_col_offset or 0) + 1,
                },
            }
            message = words("module_not_available", params)
            found.append(_diagnostic("load", problem, "error", message))
    return found


def _diagnostic(stage_id: str, problem: dict, severity: str, message: str) -> dict:
    params = problem.get("params") or {}
    return {
        "stage": stage_id,
        "stage_name": str(STAGE_NAMES[stage_id]),
        "code": problem["code"],
        "line": params.get("line") or 1,
        "column": params.get("column"),
        "end_line": params.get("end_line"),
        "end_column": params.get("end_column"),
        "whole_line": params.get("line") is None,
        "severity": severity,
        "message": message,
    }


def add_imports_response(request) -> JsonResponse:
    """{"source", "added", "line", "missing", "message"} for the posted source: the text
    with the missing imports added (contract.missing_imports.fix), and what was done."""
    fixed = missing_imports.fix(request.POST.get("source", ""))
    if fixed.problem is not None:
        return JsonResponse({"error": words(fixed.problem, fixed.params or {})}, status=400)
    return JsonResponse(
        {
            "source": fixed.source,
            "added": fixed.added,
            "line": fixed.line,
            "missing": fixed.left,
            "message": imports_added_words(fixed.added, fixed.left),
        }
    )


def response(request) -> JsonResponse:
    """The answer to an editor's diagnostics request: {"diagnostics": [...]} for the
    posted source. The caller has already checked that the user owns what it edits."""
    return JsonResponse({"diagnostics": static_diagnostics(request.POST.get("source", ""))})


def completions() -> list[dict]:
    """Completion entries for the skynet helpers and a REWARD_SPEC snippet."""
    return [
        {
            "label": "llm",
            "type": "function",
            "detail": "llm(instructions, input=None) -> str",
            "info": _("Ask the metric model; returns its text. Import it from skynet."),
        },
        {
            "label": "reward",
            "type": "function",
            "detail": "reward(REWARD_SPEC, accuracy, feedback) -> (score, side_info)",
            "info": _(
                "Blend accuracy with the measured speed and cost, as REWARD_SPEC weighs them."
            ),
        },
        {
            "label": "observation",
            "type": "function",
            "detail": "observation() -> Mapping",
            "info": _(
                "The case's measurements: duration_ms, cost_usd, model_calls, input_tokens, output_tokens."
            ),
        },
        {
            "label": "service_cost",
            "type": "function",
            "detail": "service_cost() -> float | None",
            "info": _("The measured model cost of the case in US dollars, or None."),
        },
        {
            "label": "REWARD_SPEC",
            "type": "snippet",
            "detail": _("accuracy, speed and cost weights"),
            "info": _(
                "Weights are scaled to sum 1; speed.reference is in milliseconds, cost.reference in US dollars."
            ),
            "snippet": (
                "REWARD_SPEC = {\n"
                '    "weights": {"accuracy": ${0.7}, "speed": ${0.2}, "cost": ${0.1}},\n'
                '    "accuracy": {},\n'
                '    "speed": {"reference": ${2000}},\n'
                '    "cost": {"reference": ${0.01}},\n'
                "}\n"
            ),
        },
        {
            "label": "from skynet import",
            "type": "snippet",
            "detail": "from skynet import llm, reward, observation, service_cost",
            "info": _("Import the skynet helpers."),
            "snippet": "from skynet import ${llm}\n",
        },
    ]
