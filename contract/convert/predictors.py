"""Before the trace pass: a DSPy metric's feedback per predictor, kept.

DSPy GEPA asks a metric for one predictor's feedback at a time, through `pred_name`:

    if pred_name is None:
        return total
    elif pred_name == "urgency_module.predict":
        feedback = fb_urgency
    elif pred_name == "sentiment_module.predict":
        feedback = fb_sentiment
    return dspy.Prediction(score=total, feedback=feedback)

The workbench asks once per case, so the trace pass alone would keep only the first
branch (`return total`) and lose every predictor's text. Such a chain becomes the
contract's "predictor_feedback", each branch's text under its predictor's name, and a
"feedback" that joins them, labelled by predictor (or the chain's `else`, which DSPy gave
every other predictor):

    predictor_feedback = {"urgency_module.predict": fb_urgency, ...}
    feedback = "\\n\\n".join(f"{name}: {text}" for name, text in predictor_feedback.items())
    return dspy.Prediction(score=total, feedback=feedback, predictor_feedback=predictor_feedback)

The return pass then makes that the pair. Only the plain shapes are read: a chain at the
function's top level whose first test is `pred_name is None` returning the score, whose
other tests are `pred_name == "<name>"`, and whose branches each either assign one name
the following return passes as feedback, or return a dspy.Prediction of the same score.
Anything else is left to the trace pass, as before.
"""

from __future__ import annotations

import json

import libcst as cst

from contract.convert import names

COMMENT = (
    "# DSPy GEPA asked for each predictor's feedback by its name (pred_name); the contract "
    'keeps each under its name in "predictor_feedback", and all of them in "feedback".'
)


def route_predictors(module: cst.Module, function: cst.FunctionDef) -> cst.Module | None:
    """The module with `function`'s pred_name chain rewritten, or None when it has none
    this reads."""
    if not isinstance(function.body, cst.IndentedBlock):
        return None
    body = list(function.body.body)
    for index, statement in enumerate(body):
        if not isinstance(statement, cst.If):
            continue
        routed = _route(module, function, statement, body[index + 1 :])
        if routed is None:
            continue
        replaced, rest = routed
        new_body = [*body[:index], *replaced, *rest]
        new_function = function.with_changes(body=function.body.with_changes(body=new_body))
        return module.deep_replace(function, new_function)  # type: ignore[return-value]
    return None


def _route(module, function, chain: cst.If, after: list) -> tuple[list, list] | None:
    score = _none_branch(chain)
    if score is None:
        return None
    branches: list[tuple[str, cst.BaseStatement]] = []
    fallback: cst.BaseStatement | None = None
    node = chain.orelse
    while node is not None:
        if isinstance(node, cst.Else):
            fallback = _only(node.body)
            if fallback is None:
                return None
            break
        name = _predictor_name(node.test)
        only = _only(node.body)
        if name is None or only is None:
            return None
        branches.append((name, only))
        node = node.orelse
    if len(branches) < 1:
        return None
    config = module.config_for_parsing
    code = module.code_for_node
    # Each branch returns a Prediction of the score, or assigns the one name returned.
    if all(_returns_prediction(s, code(score)) for _, s in branches):
        texts = [(name, _feedback_arg(s.body[0].value)) for name, s in branches]  # type: ignore[union-attr]
        other = _feedback_arg(fallback.body[0].value) if fallback is not None else None  # type: ignore[union-attr]
        if fallback is not None and not _returns_prediction(fallback, code(score)):
            return None
        if any(text is None for _, text in texts):
            return None
        target = _free(function, "feedback")
        call = _prediction_call(branches[0][1].body[0].value)  # type: ignore[union-attr]
        built = _assignments(texts, other, target, code, config)
        returned = cst.parse_statement(
            f"return {code(call.func)}(score={code(score)}, feedback={target}, "
            "predictor_feedback=predictor_feedback)\n",
            config,
        )
        built[0] = built[0].with_changes(
            leading_lines=[*chain.leading_lines, *built[0].leading_lines]
        )
        return [*built, returned], after
    target = _assigned(branches[0][1])
    if target is None or any(_assigned(s) != target for _, s in branches):
        return None
    if fallback is not None and _assigned(fallback) != target:
        return None
    follow = _following_return(after, target, code(score))
    if follow is None:
        return None
    texts = [(name, s.body[0].value) for name, s in branches]  # type: ignore[union-attr]
    other = fallback.body[0].value if fallback is not None else None  # type: ignore[union-attr]
    built = _assignments(texts, other, target, code, config)
    built[0] = built[0].with_changes(leading_lines=[*chain.leading_lines, *built[0].leading_lines])
    rest = list(after)
    rest[follow] = _with_predictor_feedback(rest[follow])
    return built, rest


def _assignments(texts, other, target: str, code, config) -> list[cst.BaseStatement]:
    entries = "".join(f"    {json.dumps(name)}: {code(text)},\n" for name, text in texts)
    joined = (
        code(other)
        if other is not None
        else '"\\n\\n".join(f"{name}: {text}" for name, text in predictor_feedback.items())'
    )
    statements = [
        cst.parse_statement(f"predictor_feedback = {{\n{entries}}}\n", config),
        cst.parse_statement(f"{target} = {joined}\n", config),
    ]
    comment = cst.EmptyLine(comment=cst.Comment(COMMENT))
    statements[0] = statements[0].with_changes(leading_lines=[comment])
    return statements


def _none_branch(chain: cst.If) -> cst.BaseExpression | None:
    """The score returned by `if pred_name is None: return <score>`."""
    test = chain.test
    if not (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is)
        and isinstance(test.left, cst.Name)
        and test.left.value == "pred_name"
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        return None
    only = _only(chain.body)
    if only is None or not isinstance(only.body[0], cst.Return):  # type: ignore[union-attr]
        return None
    return only.body[0].value  # type: ignore[union-attr]


def _predictor_name(test: cst.BaseExpression) -> str | None:
    """ "a.predict" of `pred_name == "a.predict"` (either way round)."""
    if not (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Equal)
    ):
        return None
    left, right = test.left, test.comparisons[0].comparator
    for name, other in ((left, right), (right, left)):
        if isinstance(name, cst.Name) and name.value == "pred_name":
            if isinstance(other, cst.SimpleString) and "b" not in other.prefix.lower():
                value = other.evaluated_value
                return value if isinstance(value, str) else None
    return None


def _only(block: cst.BaseSuite) -> cst.SimpleStatementLine | None:
    """The block's one simple statement of one small statement."""
    if isinstance(block, cst.IndentedBlock):
        if len(block.body) != 1 or not isinstance(block.body[0], cst.SimpleStatementLine):
            return None
        line = block.body[0]
    elif isinstance(block, cst.SimpleStatementSuite):
        line = cst.SimpleStatementLine(body=block.body)
    else:
        return None
    return line if len(line.body) == 1 else None


def _assigned(line: cst.SimpleStatementLine) -> str | None:
    small = line.body[0]
    if (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
    ):
        return small.targets[0].target.value
    return None


def _prediction_call(value: cst.BaseExpression | None) -> cst.Call | None:
    if isinstance(value, cst.Call) and names.is_prediction_call(names.full_name(value.func, {})):
        return value
    return None


def _feedback_arg(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    call = _prediction_call(value)
    if call is None:
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "feedback":
            return arg.value
    return None


def _score_arg(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "score":
            return arg.value
    return None


def _returns_prediction(line: cst.SimpleStatementLine, score: str) -> bool:
    small = line.body[0]
    if not isinstance(small, cst.Return):
        return False
    call = _prediction_call(small.value)
    if call is None or {a.keyword.value for a in call.args if a.keyword} != {"score", "feedback"}:
        return False
    given = _score_arg(call)
    return given is not None and cst.Module([]).code_for_node(given) == score


def _following_return(after: list, target: str, score: str) -> int | None:
    """The index of the first statement after the chain when it is `return
    Prediction(score=<score>, feedback=<target>)`."""
    if not after or not isinstance(after[0], cst.SimpleStatementLine):
        return None
    line = after[0]
    if len(line.body) != 1 or not _returns_prediction(line, score):
        return None
    feedback = _feedback_arg(line.body[0].value)  # type: ignore[union-attr]
    if not (isinstance(feedback, cst.Name) and feedback.value == target):
        return None
    return 0


def _with_predictor_feedback(line: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
    small = line.body[0]
    assert isinstance(small, cst.Return)
    call = _prediction_call(small.value)
    assert call is not None
    last = call.args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    added = cst.Arg(
        value=cst.Name("predictor_feedback"),
        keyword=cst.Name("predictor_feedback"),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""),
            whitespace_after=cst.SimpleWhitespace(""),
        ),
    )
    new_call = call.with_changes(args=[*call.args[:-1], last, added])
    return line.with_changes(body=[small.with_changes(value=new_call)])


def _free(function: cst.FunctionDef, name: str) -> str:
    """`name` unless the function already uses it (then with underscores)."""
    used = {n.value for n in _names(function)}
    while name in used:
        name += "_"
    return name


def _names(node: cst.CSTNode) -> list[cst.Name]:
    found: list[cst.Name] = []

    class Collector(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.append(name)

    node.visit(Collector())
    return found
