"""What a metric.py that failed its check looks like, and whether Convert would change it.

A metric pasted from a tutorial or a repository fails for reasons its author never met:
no `score`, DSPy's or gepa's parameters, their return objects, names whose imports were in
another cell. The check's stages say what is wrong; this says what the file is (a DSPy
metric, a gepa evaluator, a gepa adapter, or a metric with the contract's signature and
another return) and whether Convert to the contract would change it, so that every surface
(the panel, `check_metric`, `skynet check`, the API) offers Convert exactly where it does
something, and nowhere else.

The conversion runs only for a check that failed in a way a framework's metric fails: in
the worker's process for a file of a few KB, else in a bounded child process
(contract.convert.bounded).
"""

from __future__ import annotations

import ast

from contract import frameworks
from contract.convert import ConvertError, convert
from contract.convert.bounded import convert_bounded

# Up to this size a conversion costs at most about 2 s of CPU (some 125 ms a KB of code):
# it runs in the worker's own process, sparing a child's start; a larger file converts in
# a bounded child process.
IN_PROCESS_BYTES = 16 * 1024

# Load problems a pasted metric meets before any framework's signature is seen: no
# score, names imported in another cell, or an import of gepa (or of what its adapters
# use), which the sandbox does not have.
_LOAD = ("no_score_function", "names_not_imported", "module_not_available")
# gepa's GEPAAdapter protocol: evaluate(batch, candidate, capture_traces).
_ADAPTER_METHODS = frozenset({"evaluate", "make_reflective_dataset"})


def looks_like(source: str, result: dict, *, seconds: int = 5) -> dict | None:
    """{"kind", "convertible"} for a failed check's result (CheckResult.to_dict()), or
    None when the failure is not one a framework's metric has."""
    if result.get("passed") is not False or not _framework_related(result):
        return None
    try:
        if len(source.encode("utf-8", "surrogatepass")) <= IN_PROCESS_BYTES:
            conversion = convert(source)
        else:
            conversion = convert_bounded(source, seconds=seconds)
    except (ConvertError, RecursionError, MemoryError):
        conversion = None
    framework = conversion.framework if conversion is not None else None
    changed = conversion is not None and conversion.changed
    if _has_contract_score(source):
        framework = None  # the contract's signature: only its returns are a framework's
    if framework == "dspy":
        kind = "dspy_metric"
    elif framework == "gepa" and not _is_adapter(source):
        kind = "gepa_evaluator"
    elif _is_adapter(source):
        kind, changed = "gepa_adapter", False
    elif changed and _returns_failed(result):
        kind = "contract_return"
    elif _candidates_framework(source) is not None:
        # A framework's metric Convert does not read (a static method of a class).
        kind = {"dspy": "dspy_metric", "gepa": "gepa_evaluator"}[_candidates_framework(source)]
        changed = False
    else:
        return None
    return {"kind": kind, "convertible": changed}


def _has_contract_score(source: str) -> bool:
    """A module-level `def score` whose first parameters are the contract's."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "score":
            names = [a.arg for a in node.args.posonlyargs + node.args.args]
            return names[:2] == ["input", "output"]
    return False


def _candidates_framework(source: str) -> str | None:
    try:
        found = frameworks.candidates(ast.parse(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return found[0]["framework"] if found else None


def _framework_related(result: dict) -> bool:
    stages = {stage["id"]: stage for stage in result.get("stages") or []}
    if (stages.get("load") or {}).get("problem") in _LOAD:
        return True
    return frameworks.seen_in(result)


def _returns_failed(result: dict) -> bool:
    return any(
        stage.get("id") == "return_value" and stage.get("status") == "failed"
        for stage in result.get("stages") or []
    )


def _is_adapter(source: str) -> bool:
    """A class with gepa's adapter methods and no score: it scores in evaluate()."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "score":
            return False
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            methods = {
                item.name
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            if "evaluate" in methods and methods & _ADAPTER_METHODS == _ADAPTER_METHODS:
                return True
    return False
