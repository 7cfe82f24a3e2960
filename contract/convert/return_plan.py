"""Every return of the metric planned as the contract's pair.

returns.py says what shape a returned expression has and builds its pair; this walks the
metric's returns and plans each: the return itself, or the assignments of a name it
returns, or the returns of a helper of the module whose result it returns.
"""

from __future__ import annotations

import libcst as cst

from contract.convert.plan import Context
from contract.convert.recognise import own_returns
from contract.convert.returns import Reading, build, classify, is_number


def plan_returns(ctx: Context) -> None:
    """Plan the metric's returns; what it cannot understand gets a note."""
    rec = ctx.recognition
    _plan_returns_of(ctx, ctx.function, {rec.example, rec.prediction, *rec.dropped}, True)


def _plan_returns_of(
    ctx: Context, function: cst.FunctionDef, parameters: set[str], follow: bool
) -> None:
    """Plan each return of `function` as a pair; one it cannot understand gets a note.

    `follow`: a return of a call of a helper function of the module that builds the
    feedback object (and is called nowhere else) is followed into that helper, whose
    own returns become pairs.
    """
    reading = Reading(
        imports=ctx.imports,
        bindings=lambda name: ctx.bindings(name, function),
        parameters=frozenset(parameters),
    )
    indent = ctx.module.default_indent
    for statement in own_returns(function):
        value = statement.value
        shape = classify(value, reading)
        where = ctx.statement_of(statement)
        if shape == "pair":
            continue
        if shape == "unknown" and follow and _helper_followed(ctx, value):
            continue
        if shape == "unknown" and _helper_returns_number(ctx, value):
            shape = "number"  # `return _answer_match(...)`: a helper that gives a score
        if shape == "unknown" or value is None:
            ctx.plan.note(where, "return_not_understood", {})
            continue
        if shape == "bound":
            assert isinstance(value, cst.Name)
            assigns = ctx.assignments_of(value.value, function)
            if not assigns or not _only_returned(ctx, value.value, function):
                ctx.plan.note(where, "return_not_understood", {})
                continue
            for assign in assigns:
                _plan_value(ctx, assign, classify(assign.value, reading), indent)
            continue
        _plan_value(ctx, statement, shape, indent)


def _helper_returns_number(ctx: Context, value: cst.BaseExpression | None, depth: int = 0) -> bool:
    """Whether `value` calls a function of the module whose every return is a number (a
    comparison, a count, another such function's result): a bare score."""
    helper = ctx.module_function(value) if depth <= 3 else None
    if helper is None:
        return False
    own = {p.name.value for p in [*helper.params.posonly_params, *helper.params.params]}
    reading = Reading(
        imports=ctx.imports,
        bindings=lambda local: ctx.bindings(local, helper),
        parameters=frozenset(own),
    )
    returns = own_returns(helper)
    return bool(returns) and all(
        r.value is not None
        and (is_number(r.value, reading) or _helper_returns_number(ctx, r.value, depth + 1))
        for r in returns
    )


def _helper_followed(ctx: Context, value: cst.BaseExpression | None) -> bool:
    """Whether `return helper(...)` was planned by planning the helper's own returns."""
    helper = ctx.module_function(value)
    if helper is None:
        return False
    (binding,) = ctx.scopes[ctx.module].assignments[helper.name.value]
    # Called only as `return helper(...)` from the metric: nothing else sees it change.
    for access in binding.references:
        call = ctx.parents.get(access.node)
        if not (
            isinstance(call, cst.Call)
            and call.func is access.node
            and isinstance(ctx.parents.get(call), cst.Return)
            and ctx.parents[call] in own_returns(ctx.function)
        ):
            return False
    reading = Reading(
        imports=ctx.imports,
        bindings=lambda local: ctx.bindings(local, helper),
        parameters=frozenset(),
    )
    shapes = {classify(r.value, reading) for r in own_returns(helper)}
    if not shapes or not shapes & {"prediction", "evaluation", "dict", "bound"}:
        return False  # it does not build a feedback object: nothing to follow
    if "unknown" in shapes or "number" in shapes:
        return False
    own = {p.name.value for p in [*helper.params.posonly_params, *helper.params.params]}
    _plan_returns_of(ctx, helper, own, False)
    # Its return annotation (ScoreWithFeedback, EvaluationResult) no longer holds.
    ctx.plan.replace[helper] = lambda updated: updated.with_changes(returns=None)
    return True


def _plan_value(ctx: Context, holder: cst.Return | cst.Assign, shape: str, indent: str) -> None:
    """The return's or assignment's value becomes the pair."""
    assert holder.value is not None
    multiline = "\n" in ctx.module.code_for_node(holder.value)
    _, missing = build(shape, holder.value, multiline, indent)
    if missing:
        ctx.plan.note(ctx.statement_of(holder), "feedback_needed", {})

    def replace(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Return | cst.Assign) and updated.value is not None
        value, _ = build(shape, updated.value, multiline, indent)
        return updated.with_changes(value=value)

    ctx.plan.replace[holder] = replace


def _only_returned(ctx: Context, name: str, function: cst.FunctionDef) -> bool:
    """Whether every read of a local name is `return name`, so the name can hold the
    pair instead of the prediction without anything else reading it as one."""
    return all(isinstance(ctx.parents[node], cst.Return) for node in ctx.accesses(name, function))


def returns_only(wrapper, function: cst.FunctionDef, recognition) -> tuple[Context, str | None]:
    """The plan for a `score` that has the contract's signature already: only its returns
    that are a framework's object, a dict of score and feedback, or a bare score become
    the pair (a return it cannot read is left alone, with no note: it may well be a pair
    made elsewhere). Also the framework its returns were written for, if any."""
    ctx = Context(wrapper, function, recognition)
    reading = Reading(
        imports=ctx.imports,
        bindings=lambda name: ctx.bindings(name, function),
        parameters=frozenset({recognition.example, recognition.prediction}),
    )
    shapes = [classify(r.value, reading) for r in own_returns(function)]
    framework = "dspy" if "prediction" in shapes else "gepa" if "evaluation" in shapes else None
    if not set(shapes) & {"prediction", "evaluation", "dict", "number", "bound"}:
        return ctx, framework
    indent = ctx.module.default_indent
    for statement, shape in zip(own_returns(function), shapes, strict=True):
        if shape in ("prediction", "evaluation", "dict", "number"):
            _plan_value(ctx, statement, shape, indent)
        elif shape == "bound":
            assert isinstance(statement.value, cst.Name)
            name = statement.value.value
            assigns = ctx.assignments_of(name, function)
            if assigns and _only_returned(ctx, name, function):
                for assign in assigns:
                    _plan_value(ctx, assign, classify(assign.value, reading), indent)
    return ctx, framework
