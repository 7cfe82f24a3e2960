"""Which function of a metric.py is the metric, which framework it was written for, and
what its parameters held.

The metric is the module-level function named `score` when it has a framework's
signature; else the one module-level function, or callable class (gepa's evaluators), that
has one. A DSPy metric takes (gold example, prediction) and maybe trace, pred_name,
pred_trace and program_trace; a gepa evaluator takes (data, response). When several
functions fit, the one the module hands to an optimizer (`metric=`, `evaluator=`) wins,
else the one that gives feedback (it takes pred_name or pred_trace, or returns a
prediction or an EvaluationResult); otherwise nothing is guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import MetadataWrapper, PositionProvider, ScopeProvider

from contract.convert import names
from contract.convert.parse import parse

CONTRACT_NAMES = ("input", "output", "expected")
# Keyword arguments through which a module hands its metric to an optimizer or evaluator.
METRIC_KEYWORDS = frozenset({"metric", "evaluator", "metric_fn", "feedback_metric"})


@dataclass(frozen=True)
class Recognition:
    """A metric.py's metric as the converter reads it."""

    framework: str  # "dspy" or "gepa"
    kind: str  # "function", or "class" for a callable class whose __call__ is the metric
    name: str  # the function's or the class's name
    line: int
    example: str  # the parameter that held DSPy's gold example or gepa's data
    prediction: str  # the parameter that held DSPy's prediction or gepa's response
    dropped: tuple[str, ...] = ()  # parameters the contract has no place for (trace, ...)
    kept: tuple[str, ...] = ()  # the function's own options with defaults, kept after expected
    feedback: bool = False  # takes pred_name/pred_trace or returns a feedback object
    # How surely the signature is a framework's: 2 for trace parameters or the framework's
    # types as annotations, 1 for the usual parameter names, 0 for neither (only what the
    # function returns says so).
    strength: int = 1


@dataclass
class Candidate:
    recognition: Recognition
    node: cst.FunctionDef | cst.ClassDef
    function: cst.FunctionDef  # the function itself, or the class's __call__
    index: int  # where it stands in the module's body, to find it again after a pass


@dataclass
class Located:
    """What `locate` found. status: "found", "contract" (a score in the contract's form
    already), "none", "several", "score_taken" (the module binds score to something else)
    or "clash" (a parameter named like one of the contract's)."""

    status: str
    chosen: Candidate | None = None
    others: list[Candidate] = field(default_factory=list)
    line: int = 0


def recognise(source: str) -> Recognition | None:
    """Which framework a metric.py looks like and how its parameters map; None when no
    function has a framework's signature (or `score` is already in the contract's form)."""
    located = locate(MetadataWrapper(parse(source)))
    return located.chosen.recognition if located.status == "found" and located.chosen else None


def locate(wrapper: MetadataWrapper, metric: str | None = None) -> Located:
    """Which function is the metric; `metric` names it where several could be."""
    module = wrapper.module
    positions = wrapper.resolve(PositionProvider)
    scopes = wrapper.resolve(ScopeProvider)
    imports = names.import_map(module)
    frameworks = {names.framework_of_module(dotted) for dotted in imports.values()} - {None}

    def line_of(node: cst.CSTNode) -> int:
        return positions[node].start.line

    candidates: list[Candidate] = []
    score_function: cst.FunctionDef | None = None
    for index, statement in enumerate(module.body):
        if isinstance(statement, cst.FunctionDef) and statement.asynchronous is None:
            found = _candidate(index, statement, statement, imports, frameworks, line_of)
            if statement.name.value == "score":
                score_function = statement
                if found is None:
                    continue
            if found is not None:
                candidates.append(found)
        elif isinstance(statement, cst.ClassDef):
            method = _call_method(statement)
            if method is not None:
                found = _candidate(index, statement, method, imports, frameworks, line_of)
                if found is not None:
                    candidates.append(found)

    if score_function is not None:
        own = next((c for c in candidates if c.node is score_function), None)
        if own is None:
            return Located("contract")
        return _checked(own, [])
    if not candidates:
        return Located("none")
    # A function that only returns a framework's object, beside one with a framework's
    # signature, is a helper of it, not a second metric.
    if any(c.recognition.strength > 0 for c in candidates):
        candidates = [c for c in candidates if c.recognition.strength > 0]
    score_bindings = scopes[module].assignments["score"] if "score" in scopes[module] else ()
    if score_bindings:
        binding = next(iter(score_bindings)).node
        return Located("score_taken", candidates[0], line=line_of(binding))
    if len(candidates) == 1:
        return _checked(candidates[0], [])
    named = [c for c in candidates if c.recognition.name == metric]
    if metric is not None and len(named) == 1:
        return _checked(named[0], [c for c in candidates if c is not named[0]])
    chosen = _choose(module, candidates)
    if chosen is None:
        return Located("several", others=candidates, line=candidates[0].recognition.line)
    return _checked(chosen, [c for c in candidates if c is not chosen])


def _checked(chosen: Candidate, others: list[Candidate]) -> Located:
    """A parameter already named like a contract's other parameter cannot be renamed
    without a clash (a prediction named input, a gold example named output)."""
    rec = chosen.recognition
    if rec.example == "output" or rec.prediction in ("input", "expected"):
        return Located("clash", chosen, line=rec.line)
    return Located("found", chosen, others)


def _call_method(cls: cst.ClassDef) -> cst.FunctionDef | None:
    """The class's __call__; none for a Protocol, which only says what one looks like."""
    if not isinstance(cls.body, cst.IndentedBlock):
        return None
    for base in cls.bases:
        if (get_full_name_for_node(base.value) or "").rsplit(".", 1)[-1] == "Protocol":
            return None
    for statement in cls.body.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "__call__":
            return statement
    return None


def _is_stub(function: cst.FunctionDef) -> bool:
    """A body of only a docstring, `...`, `pass` or `raise NotImplementedError`."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    if isinstance(function.body, cst.SimpleStatementSuite):
        body = [cst.SimpleStatementLine(body=function.body.body)]
    for statement in body:
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            if isinstance(small, cst.Pass):
                continue
            if isinstance(small, cst.Expr) and isinstance(
                small.value, cst.Ellipsis | cst.SimpleString | cst.ConcatenatedString
            ):
                continue
            if isinstance(small, cst.Raise) and "NotImplementedError" in (
                get_full_name_for_node(small.exc) or ""
                if not isinstance(small.exc, cst.Call)
                else get_full_name_for_node(small.exc.func) or ""
            ):
                continue
            return False
    return True


def _annotation(param: cst.Param, imports: dict[str, str]) -> str:
    if param.annotation is None:
        return ""
    dotted = names.full_name(param.annotation.annotation, imports) or ""
    return dotted.rsplit(".", 1)[-1]


def _candidate(index, node, function, imports, frameworks, line_of) -> Candidate | None:
    """The function as a metric candidate, or None when its signature is no framework's."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    if node is not function:
        positional = positional[1:]  # self
    if len(positional) < 2:
        return None
    gold, pred, rest = positional[0], positional[1], positional[2:]
    if (gold.name.value, pred.name.value) == ("input", "output"):
        return None  # the contract's own signature
    dropped: list[str] = []  # what the contract has no place for
    kept: list[str] = []  # the function's own options, with their defaults
    for param in [*rest, *params.kwonly_params]:
        if param.name.value in names.TRACE_NAMES:
            dropped.append(param.name.value)
        elif param.default is not None and param.name.value not in CONTRACT_NAMES:
            kept.append(param.name.value)
        else:
            return None  # a third argument the framework never passes
    if isinstance(params.star_arg, cst.Param):
        dropped.append(params.star_arg.name.value)
    if params.star_kwarg is not None:
        dropped.append(params.star_kwarg.name.value)
    if _is_stub(function):
        return None
    returned = _returned_kinds(function, imports)
    imported = _returned_kinds(function, imports, imported_only=True)
    found = _framework(
        gold.name.value,
        pred.name.value,
        traced=any(name in names.TRACE_NAMES for name in dropped),
        annotations=(_annotation(gold, imports), _annotation(pred, imports)),
        returned=returned,
        imported=imported,
        frameworks=frameworks,
    )
    if found is None:
        return None
    framework, strength = found
    feedback = bool({"pred_name", "pred_trace"} & set(dropped)) or bool(returned)
    recognition = Recognition(
        framework=framework,
        kind="function" if node is function else "class",
        name=node.name.value,
        line=line_of(node),
        example=gold.name.value,
        prediction=pred.name.value,
        dropped=tuple(dropped),
        kept=tuple(kept),
        feedback=feedback,
        strength=strength,
    )
    return Candidate(recognition, node, function, index)


def _framework(
    gold: str,
    pred: str,
    *,
    traced: bool,
    annotations: tuple[str, str],
    returned: set[str],
    imported: set[str],
    frameworks: set[str],
) -> tuple[str, int] | None:
    """The framework a signature is written for, and how surely (see Recognition)."""
    if traced or set(annotations) & names.DSPY_TYPES:
        return "dspy", 2
    if set(annotations) & names.GEPA_TYPES:
        return "gepa", 2
    if gold in names.GOLD_NAMES and pred in names.PREDICTION_NAMES | names.EITHER_SECOND:
        return "dspy", 1
    if gold in names.DATA_NAMES and pred in (
        names.RESPONSE_NAMES | names.EITHER_SECOND | names.STATE_NAMES
    ):
        return "gepa", 1
    known = (
        gold in names.GOLD_NAMES | names.DATA_NAMES
        and pred in names.PREDICTION_NAMES | names.RESPONSE_NAMES
    )
    # A mixed pair of names (gold, response): what it returns, then what the module
    # imports. Any other names: only a function that builds an object it imports from a
    # framework (a class of the module's own that is merely named Prediction or
    # EvaluationResult says nothing).
    if known:
        for evidence in (returned, frameworks):
            if len(evidence) == 1:
                return next(iter(evidence)), 1
    elif len(imported) == 1:
        return next(iter(imported)), 0
    return None


def _returned_kinds(
    function: cst.FunctionDef, imports: dict[str, str], imported_only: bool = False
) -> set[str]:
    """The frameworks whose objects the function builds in a return: "dspy" for a
    dspy.Prediction or ScoreWithFeedback, "gepa" for an EvaluationResult; with
    `imported_only`, only those the module imports from dspy or gepa."""
    found: set[str] = set()
    for value in own_returns(function):
        if isinstance(value.value, cst.Call):
            called = names.full_name(value.value.func, imports)
            if imported_only and "." not in (called or ""):
                continue
            if names.is_prediction_call(called):
                found.add("dspy")
            elif names.is_evaluation_result(called):
                found.add("gepa")
    return found


class _Returns(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.Return] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Return(self, node: cst.Return) -> None:
        self.found.append(node)


def own_returns(function: cst.FunctionDef) -> list[cst.Return]:
    """The function's own return statements, not those of functions inside it."""
    visitor = _Returns()
    function.body.visit(visitor)
    return visitor.found


def chosen_by_module(module: cst.Module) -> set[str]:
    """Names the module hands over as a metric: `metric=NAME`, `evaluator=NAME`, and the
    classes of instances handed over so."""
    handed: set[str] = set()
    instances: dict[str, str] = {}

    class Finder(cst.CSTVisitor):
        def visit_Arg(self, node: cst.Arg) -> None:
            if (
                node.keyword is not None
                and node.keyword.value in METRIC_KEYWORDS
                and isinstance(node.value, cst.Name | cst.Call)
            ):
                value = node.value.func if isinstance(node.value, cst.Call) else node.value
                if isinstance(value, cst.Name):
                    handed.add(value.value)

        def visit_Assign(self, node: cst.Assign) -> None:
            if (
                len(node.targets) == 1
                and isinstance(node.targets[0].target, cst.Name)
                and isinstance(node.value, cst.Call)
                and isinstance(node.value.func, cst.Name)
            ):
                instances[node.targets[0].target.value] = node.value.func.value

    module.visit(Finder())
    return handed | {instances[name] for name in handed if name in instances}


def _choose(module: cst.Module, candidates: list[Candidate]) -> Candidate | None:
    handed = chosen_by_module(module)
    picked = [c for c in candidates if c.recognition.name in handed]
    if len(picked) == 1:
        return picked[0]
    feedback = [c for c in candidates if c.recognition.feedback]
    if len(feedback) == 1:
        return feedback[0]
    return None
