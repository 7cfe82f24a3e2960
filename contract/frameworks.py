"""Which framework a metric's parameters come from, and how they map onto the contract.

A metric written for DSPy (GEPA) takes `(example, prediction, trace=None, pred_name=None,
pred_trace=None)` (or `(gold, pred, trace=None)`); one written as a gepa evaluator takes
`(data, response)`. The contract calls `score(input, output, expected)`: DSPy's gold
example and gepa's data are the input columns plus the expected values; the prediction
and the response are the output; DSPy's trace arguments are never passed.

Such a signature can pass the contract's own rules and then fail at Calls (a KeyError or
AttributeError on `example.answer`), so the Signature stage says what it looks like:
it fails where a parameter exists only in DSPy (a trace argument would receive
`expected`), and warns where only the names suggest it (the call itself would work).
Pure functions of a signature.Shape: the child's (inspect) and the editor's (AST) agree.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from skynet.signature import Param, Shape

# DSPy passes trace, pred_name, pred_trace and program_trace (GEPAFeedbackMetric, and
# the classic `metric(example, pred, trace=None)`); the contract has no place for them.
TRACE_NAMES = ("trace", "pred_name", "pred_trace", "program_trace")
# The gold example's parameter in DSPy metrics (the protocol says gold; the docs and
# tutorials say example), and the prediction's. The lists are of what published metrics
# use; a name outside them is not guessed at.
GOLD_NAMES = frozenset(
    {"example", "gold", "ex", "eg", "gold_example", "example_", "sample", "reference", "gt"}
)
PREDICTION_NAMES = frozenset(
    {"pred", "prediction", "predicted", "preds", "pred_example", "prediction_", "y_pred"}
)
# gepa's Evaluator protocol: __call__(self, data, response).
DATA_NAMES = frozenset({"data", "data_inst", "datum", "inst", "instance", "item"})
RESPONSE_NAMES = frozenset(
    {"response", "completion", "generated", "llm_output", "model_output", "assistant_response"}
)
# gepa's LangChain adapter hands its evaluators the rollout state, whose last message is
# the response: evaluate_response(data, state).
STATE_NAMES = frozenset({"state", "rollout_state"})


def _names(params: Iterable[Param]) -> list[str]:
    return [p.name for p in params]


def recognise(shape: Shape) -> dict | None:
    """{"framework", "fails", "parameters", "gold", "prediction", "dropped"} when the
    signature is another framework's, else None. `gold` and `prediction` name the
    parameters that take the contract's input (+ expected) and output."""
    positional = _names(shape.positional)
    every = positional + _names(shape.keyword_only)
    dropped = [name for name in every if name in TRACE_NAMES]
    first = positional[0] if positional else None
    second = positional[1] if len(positional) > 1 else None
    if dropped or (first in GOLD_NAMES and second in PREDICTION_NAMES):
        framework = "dspy"
    elif first in DATA_NAMES and second in RESPONSE_NAMES | STATE_NAMES:
        framework = "gepa"
    else:
        return None
    return {
        "framework": framework,
        # A DSPy-only parameter among the first three positions would receive `expected`
        # (or one the call never passes is required): the call cannot be what it means.
        "fails": bool(dropped),
        "parameters": shape.names(),
        "gold": first or "",
        "prediction": second or "",
        "dropped": dropped,
    }


def problem(found: dict) -> dict:
    """The Signature stage's problem (or warning) for a recognised signature."""
    params = {key: found[key] for key in ("framework", "parameters", "gold", "prediction")}
    params["dropped"] = found["dropped"]
    return {"code": "framework_signature", "params": params}


def shape_of_def(func: ast.FunctionDef | ast.AsyncFunctionDef) -> Shape:
    """The Shape of a `def`, from its AST (what inspect would say of it)."""
    args = func.args
    positional = args.posonlyargs + args.args
    first_default = len(positional) - len(args.defaults)
    return Shape(
        positional=tuple(Param(a.arg, i < first_default) for i, a in enumerate(positional)),
        varargs=args.vararg.arg if args.vararg else None,
        keyword_only=tuple(
            Param(a.arg, d is None) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
        ),
        varkw=args.kwarg.arg if args.kwarg else None,
    )


def candidates(tree: ast.Module) -> list[dict]:
    """Module-level functions (and callable classes' __call__) of another framework's
    shape, for a metric.py without `score`: [{"name", "line", "framework", "parameters"}]."""
    found = []
    for node in tree.body:
        funcs: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool]] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            funcs.append((node.name, node, False))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__call__":
                    funcs.append((node.name, item, True))
            statics = []
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and _is_static(item):
                    statics.append((f"{node.name}.{item.name}", item, False))
            funcs += statics
        for name, func, method in funcs:
            shape = shape_of_def(func)
            if method and shape.positional:
                shape = shape._replace(positional=shape.positional[1:])  # drop self
            seen = recognise(shape)
            if seen is not None:
                candidate = {
                    "name": name,
                    "line": func.lineno,
                    "framework": seen["framework"],
                    "parameters": seen["parameters"],
                }
                if "." in name:
                    candidate["in_class"] = (
                        True  # a static method (Class.metric): Convert leaves it
                    )
                found.append(candidate)
    return found[:5]


def _is_static(func: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list)


# Shapes of a return that another framework's metric gives: a check that saw one offers
# the conversion.
_FOREIGN_SHAPES = ("dspy_prediction", "gepa_result", "dict", "number", "bool")


def seen_in(result: dict | None) -> bool:
    """Whether a check's result (CheckResult.to_dict()) shows a metric written for DSPy or
    gepa: its signature, a function of theirs in place of score, or their return shapes."""
    if not result:
        return False
    for stage in result.get("stages") or []:
        params = stage.get("params") or {}
        if stage.get("problem") == "framework_signature" or stage.get("warnings"):
            return True
        if stage.get("problem") == "no_score_function" and params.get("candidates"):
            return True
    for case in result.get("cases") or []:
        shape = (case.get("params") or {}).get("shape") or {}
        if case.get("problem") == "not_a_pair" and shape.get("kind") in _FOREIGN_SHAPES:
            return True
        if case.get("problem") == "side_info_not_dict":
            return True
    return False
