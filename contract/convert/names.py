"""The names a DSPy GEPA or gepa metric is written with, and how to read them in a module.

Which parameter names mean the gold example, the prediction, gepa's data and response;
which calls build DSPy's and gepa's return values; which methods a DSPy Example has. The
lists are of what published metrics use; a name outside them is not guessed at.
"""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

# The parameter names of DSPy's metrics and gepa's evaluators, shared with the Signature
# stage's recognition.
from contract.frameworks import DATA_NAMES as DATA_NAMES
from contract.frameworks import GOLD_NAMES as GOLD_NAMES
from contract.frameworks import PREDICTION_NAMES as PREDICTION_NAMES
from contract.frameworks import RESPONSE_NAMES as RESPONSE_NAMES
from contract.frameworks import STATE_NAMES as STATE_NAMES
from contract.frameworks import TRACE_NAMES as TRACE_NAMES

# Names that fit the second parameter of either framework; the first one decides.
EITHER_SECOND = frozenset({"output", "outputs", "result", "answer", "text"})

# Annotations that name the framework outright.
DSPY_TYPES = frozenset({"Example", "Prediction"})
GEPA_TYPES = frozenset({"DefaultDataInst"})

# The methods of dspy.Example (and so of dspy.Prediction). An attribute of the example
# with one of these names is the method, never a field: Example.__getattr__ is only asked
# for names the class does not have.
EXAMPLE_METHODS = frozenset(
    {
        "get",
        "keys",
        "values",
        "items",
        "copy",
        "without",
        "toDict",
        "with_inputs",
        "inputs",
        "labels",
    }
)
# Those a dict has with the same meaning, so they keep working on the dict of columns.
DICT_METHODS = frozenset({"get", "keys", "values", "items"})
PREDICTION_METHODS = EXAMPLE_METHODS | {
    "completions",
    "get_lm_usage",
    "set_lm_usage",
    "from_completions",
}

# Calls that hand back a number, so a bare return of one is a score.
NUMERIC_CALLS = frozenset({"float", "int", "round", "sum", "len", "max", "min", "abs", "bool"})
NUMERIC_MODULES = ("math.", "statistics.", "np.", "numpy.")
# Built-ins that read a dict as well as a dspy.Example, so passing the example on is safe.
SAFE_CALLS = frozenset(
    {"dict", "len", "list", "sorted", "set", "tuple", "print", "isinstance", "bool", "iter"}
)


def import_map(module: cst.Module) -> dict[str, str]:
    """Each name a module-level import binds, with the dotted name it stands for."""
    names: dict[str, str] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    dotted = get_full_name_for_node(alias.name) or ""
                    if alias.asname is not None:
                        names[_bound(alias)] = dotted
                    else:
                        names[dotted.split(".")[0]] = dotted.split(".")[0]
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                base = get_full_name_for_node(small.module) if small.module else ""
                for alias in small.names:
                    imported = get_full_name_for_node(alias.name) or ""
                    names[_bound(alias)] = f"{base}.{imported}" if base else imported
    return names


def _bound(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return (get_full_name_for_node(alias.name) or "").split(".")[0]


def full_name(node: cst.BaseExpression, imports: dict[str, str]) -> str | None:
    """The dotted name an expression like `dspy.Prediction` or `P` stands for, through
    the module's imports; a name the module does not import reads as itself."""
    written = get_full_name_for_node(node)
    if not written:
        return None
    head, _, rest = written.partition(".")
    base = imports.get(head, head)
    return f"{base}.{rest}" if rest else base


def is_prediction_call(name: str | None) -> bool:
    """dspy.Prediction, dspy's ScoreWithFeedback, under any import path or bare."""
    if not name:
        return False
    last = name.rsplit(".", 1)[-1]
    if last not in ("Prediction", "ScoreWithFeedback"):
        return False
    return "." not in name or name.split(".")[0] == "dspy"


def is_evaluation_result(name: str | None) -> bool:
    """gepa's EvaluationResult (the default adapter's), imported or bare."""
    if not name or name.rsplit(".", 1)[-1] != "EvaluationResult":
        return False
    return "." not in name or name.split(".")[0] == "gepa"


def framework_of_module(name: str) -> str | None:
    """The package, "dspy" or "gepa", of a dotted module name of either package."""
    root = name.split(".")[0]
    return root if root in ("dspy", "gepa") else None
