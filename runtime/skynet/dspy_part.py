"""The "dspy" part of a DSPy program's run_finished frame: its shape and its limits.

A run child of a DSPy program reports what dspy did on one case as data: the names of
the program's predictors, the prediction's fields and the trace of its predictor calls
({"names", "fields", "trace"}), or, when asked to describe the program, its predictors
({"predictors"}). The child passes what it built through `fit` before it sends it
(skynet._artifact). The program runs in that same process and can replace anything
there, so the worker passes what arrives through `fit` again (contract.frames): both
sides cut by the same rules, a child's part comes through the worker unchanged, and
what the worker keeps of one case is bounded whatever a child sent.

`fit` cuts what is too long or too many, as the child always did: each text to its
limit, the trace to its first steps, and all texts together to PART_LIMIT characters,
after which nothing more is kept. What is not of the shape at all (a field's value that
is not a string, a trace that is not a list) raises Malformed.
"""

from __future__ import annotations

from itertools import islice

# One text: a field's value, a step's input or output, a predictor's instructions.
TEXT_LIMIT = 20_000
# A predictor's, a step's or a field's name, and a field's prefix.
NAME_LIMIT = 200
# A field's description.
DESC_LIMIT = 2_000
# Predictor calls kept of one run.
TRACE_LIMIT = 50
# Fields of a prediction, of a step's inputs or outputs, or of a predictor's signature.
FIELD_LIMIT = 100
# Predictors of one program's description.
PREDICTOR_LIMIT = 50
# Characters of all the part's texts together, names included: ten full texts. A check
# stores the part of each of its cases, and a run holds it while dspy reflects on it.
PART_LIMIT = 200_000


class Malformed(ValueError):
    """Not a "dspy" part a run child makes."""


class _Budget:
    def __init__(self) -> None:
        self.left = PART_LIMIT

    def text(self, value: object, limit: int) -> str:
        if not isinstance(value, str):
            raise Malformed("not a string")
        kept = value[: min(limit, self.left)]
        self.left -= len(kept)
        return kept


def _texts(value: object, budget: _Budget) -> dict[str, str]:
    """{name: text}: a prediction's fields, a step's inputs or outputs."""
    if not isinstance(value, dict):
        raise Malformed("not a dict")
    kept: dict[str, str] = {}
    for name, text in islice(value.items(), FIELD_LIMIT):
        if budget.left <= 0:
            break
        key = budget.text(name, NAME_LIMIT)
        kept[key] = budget.text(text, TEXT_LIMIT)
    return kept


def _trace(value: object, budget: _Budget) -> list[dict]:
    if not isinstance(value, list):
        raise Malformed("not a list")
    steps = []
    for step in value[:TRACE_LIMIT]:
        if budget.left <= 0:
            break
        if not isinstance(step, dict):
            raise Malformed("not a dict")
        steps.append(
            {
                "predictor": budget.text(step.get("predictor"), NAME_LIMIT),
                "inputs": _texts(step.get("inputs"), budget),
                "outputs": _texts(step.get("outputs"), budget),
            }
        )
    return steps


def _fields(value: object, budget: _Budget) -> list[dict]:
    """A predictor's input or output fields, each {"name", "desc", "prefix"}."""
    if not isinstance(value, list):
        raise Malformed("not a list")
    fields = []
    for field in value[:FIELD_LIMIT]:
        if budget.left <= 0:
            break
        if not isinstance(field, dict):
            raise Malformed("not a dict")
        fields.append(
            {
                "name": budget.text(field.get("name"), NAME_LIMIT),
                "desc": budget.text(field.get("desc", ""), DESC_LIMIT),
                "prefix": budget.text(field.get("prefix", ""), NAME_LIMIT),
            }
        )
    return fields


def _predictors(value: object, budget: _Budget) -> list[dict]:
    if not isinstance(value, list):
        raise Malformed("not a list")
    predictors = []
    for described in value[:PREDICTOR_LIMIT]:
        if budget.left <= 0:
            break
        if not isinstance(described, dict):
            raise Malformed("not a dict")
        predictors.append(
            {
                "name": budget.text(described.get("name"), NAME_LIMIT),
                "instructions": budget.text(described.get("instructions"), TEXT_LIMIT),
                "inputs": _fields(described.get("inputs", []), budget),
                "outputs": _fields(described.get("outputs", []), budget),
            }
        )
    return predictors


def _names(value: object, budget: _Budget) -> list[str]:
    """Every predictor's name (program.named_predictors()), whether this case called it
    or not: what the side info's "predictor_feedback" may name."""
    if not isinstance(value, list):
        raise Malformed("not a list")
    names = []
    for name in value[:PREDICTOR_LIMIT]:
        if budget.left <= 0:
            break
        names.append(budget.text(name, NAME_LIMIT))
    return names


def fit(part: object) -> dict:
    """`part` within the limits, as new containers of plain strings; Malformed when it
    is not of the shape. Keys other than "names", "fields", "trace" and "predictors" are
    dropped."""
    if not isinstance(part, dict):
        raise Malformed("not a dict")
    budget = _Budget()
    kept: dict = {}
    if "names" in part:
        kept["names"] = _names(part["names"], budget)
    if "predictors" in part:
        kept["predictors"] = _predictors(part["predictors"], budget)
    if "fields" in part:
        kept["fields"] = _texts(part["fields"], budget)
    if "trace" in part:
        kept["trace"] = _trace(part["trace"], budget)
    return kept
