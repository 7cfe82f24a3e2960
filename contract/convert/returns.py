"""What a metric's return gives back, and the contract's pair it becomes.

`classify` reads a returned expression of the original metric and names its shape;
`build` makes the pair from the same expression once the other rewrites have run inside
it (its shape is the same; only the reads of the example and the prediction changed).

Shapes:
- "pair": already `score, {"feedback": ...}` (or a list of two): left alone;
- "prediction": dspy.Prediction(score=S, feedback=F, ...) or ScoreWithFeedback(...);
- "evaluation": gepa's EvaluationResult(S, F, O), positional or by keyword;
- "dict": a dict literal with a "score" key;
- "tuple": (S, F) where F is clearly a string;
- "number": anything that is clearly a number: a name, a number, a comparison, float(...);
- "bound": a name every assignment of which is one of the shapes above (those
  assignments become the pair, the return stays);
- "unknown": anything else, left as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from contract.convert import names

PAIR_SHAPES = ("prediction", "evaluation", "dict", "tuple")
EVALUATION_FIELDS = ("score", "feedback", "objective_scores")
_ARITHMETIC = (
    cst.Add,
    cst.Subtract,
    cst.Multiply,
    cst.Divide,
    cst.FloorDivide,
    cst.Modulo,
    cst.Power,
)


@dataclass(frozen=True)
class Reading:
    """What the converter knows about the metric function, to read its returns with."""

    imports: dict[str, str]
    # Every value a local name is assigned in the function; None for a binding that is not
    # a plain assignment (a for target, an import...). ("+=", value) for `name += value`.
    bindings: Callable[[str], list[object] | None]
    parameters: frozenset[str]


def classify(node: cst.BaseExpression | None, reading: Reading) -> str:
    if node is None:
        return "unknown"
    if _is_pair(node):
        return "pair"
    if isinstance(node, cst.Call):
        called = names.full_name(node.func, reading.imports)
        if names.is_prediction_call(called) and _prediction_args(node) is not None:
            return "prediction"
        if names.is_evaluation_result(called) and _evaluation_args(node) is not None:
            return "evaluation"
    if isinstance(node, cst.Dict) and _dict_score(node) is not None:
        return "dict"
    if (
        isinstance(node, cst.Tuple | cst.List)
        and _two(node)
        and is_string(node.elements[1].value, reading)
    ):
        return "tuple"
    if isinstance(node, cst.Name) and node.value not in ("None", *reading.parameters):
        bound = reading.bindings(node.value)
        if bound:
            shapes = {
                classify(value, reading) if isinstance(value, cst.BaseExpression) else "unknown"
                for value in bound
            }
            if shapes == {"pair"}:
                return "pair"
            if shapes <= set(PAIR_SHAPES):
                return "bound"
            if shapes & {"pair", *PAIR_SHAPES}:
                return "unknown"  # some assignments are pairs and some are not
    if is_number(node, reading):
        return "number"
    return "unknown"


def build(shape: str, node: cst.BaseExpression, multiline: bool, indent: str):
    """The pair for `node` of `shape` (from classify on the original), and whether the
    feedback had to be left empty."""
    if shape == "prediction":
        args = _prediction_args(node)
    elif shape == "evaluation":
        args = _evaluation_args(node)
    elif shape == "dict":
        return _from_dict(node)
    elif shape == "tuple":
        first, second = node.elements
        side = _side_info([('"feedback"', second.value)], multiline=False, indent=indent)
        return node.with_changes(
            elements=[
                first.with_changes(value=score_value(first.value)),
                second.with_changes(value=side),
            ]
        ), False
    elif shape == "number":
        return pair(score_value(node), _side_info([('"feedback"', _empty())], False, indent)), True
    else:
        raise ValueError(f"no pair is built for a return of shape {shape}")
    assert args is not None  # classify saw the same arguments
    feedback = args.pop("feedback", None)
    missing = feedback is None or _is_none(feedback)
    entries = [('"feedback"', _empty() if missing else feedback)]
    scores = args.pop("objective_scores", None)
    if scores is not None and not _is_none(scores):
        entries.append(('"scores"', scores))
    entries += [(f'"{key}"', value) for key, value in args.items() if key != "score"]
    side = _side_info(entries, multiline, indent)
    return pair(score_value(args["score"]), side), missing


def pair(score: cst.BaseExpression, side: cst.BaseExpression) -> cst.Tuple:
    """`score, side` as a return or assignment value: no parentheses of its own."""
    if isinstance(score, cst.IfExp | cst.BooleanOperation | cst.Lambda) and not score.lpar:
        score = score.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Tuple(
        elements=[
            cst.Element(score, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Element(side),
        ],
        lpar=[],
        rpar=[],
    )


def score_value(node: cst.BaseExpression) -> cst.BaseExpression:
    """A score that is a bool (a comparison, `not`, True) as the float it counts as, so
    the contract gets a number and the check no hint about a bool score."""
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return cst.Float("1.0" if node.value == "True" else "0.0")
    if _is_boolean(node):
        return cst.Call(func=cst.Name("float"), args=[cst.Arg(node.with_changes(lpar=[], rpar=[]))])
    return node


def _is_boolean(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Comparison):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return True
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return True
    if isinstance(node, cst.BooleanOperation):
        return _is_boolean(node.left) and _is_boolean(node.right)
    return False


def is_string(node: cst.BaseExpression, reading: Reading, depth: int = 0) -> bool:
    """Whether the expression is clearly a str: a literal, an f-string, a str(...), a
    join or format, a sum with one, or a local name only ever assigned such."""
    if depth > 8:
        return False
    if isinstance(node, cst.SimpleString):
        return "b" not in node.prefix.lower()
    if isinstance(node, cst.ConcatenatedString | cst.FormattedString):
        return True
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, cst.Add):
            return is_string(node.left, reading, depth + 1) or is_string(
                node.right, reading, depth + 1
            )
        if isinstance(node.operator, cst.Modulo):
            return is_string(node.left, reading, depth + 1)
        return False
    if isinstance(node, cst.IfExp):
        return is_string(node.body, reading, depth + 1) and is_string(
            node.orelse, reading, depth + 1
        )
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Name):
            return node.func.value in ("str", "repr")
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("join", "format"):
            return is_string(node.func.value, reading, depth + 1)
        return False
    if isinstance(node, cst.Name) and node.value not in reading.parameters:
        bound = reading.bindings(node.value)
        if not bound:
            return False
        plain = [value for value in bound if isinstance(value, cst.BaseExpression)]
        added = [value for value in bound if isinstance(value, tuple) and value[0] == "+="]
        return (
            bool(plain)
            and len(plain) + len(added) == len(bound)
            and all(is_string(value, reading, depth + 1) for value in plain)
        )
    return False


def is_number(node: cst.BaseExpression, reading: Reading) -> bool:
    """Whether a bare return of the expression is clearly a score."""
    if isinstance(node, cst.Integer | cst.Float | cst.Comparison | cst.BooleanOperation):
        return True
    if isinstance(node, cst.Name):
        return node.value not in ("None", *reading.parameters)
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, cst.Not) or is_number(node.expression, reading)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
        return (
            is_number(node.left, reading)
            and is_number(node.right, reading)
            and not is_string(node.left, reading)
        )
    if isinstance(node, cst.IfExp):
        return is_number(node.body, reading) and is_number(node.orelse, reading)
    if isinstance(node, cst.Call):
        called = names.full_name(node.func, reading.imports) or ""
        return called in names.NUMERIC_CALLS or called.startswith(names.NUMERIC_MODULES)
    return False


def _is_pair(node: cst.BaseExpression) -> bool:
    if not (isinstance(node, cst.Tuple | cst.List) and _two(node)):
        return False
    side = node.elements[1].value
    return isinstance(side, cst.Dict) and _dict_key(side, "feedback") is not None


def _two(node: cst.Tuple | cst.List) -> bool:
    return len(node.elements) == 2 and not any(
        isinstance(element, cst.StarredElement) for element in node.elements
    )


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _empty() -> cst.SimpleString:
    return cst.SimpleString('""')


def _key(element: cst.BaseDictElement) -> str | None:
    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
        return element.key.evaluated_value if isinstance(element.key.evaluated_value, str) else None
    return None


def _dict_key(node: cst.Dict, key: str) -> cst.DictElement | None:
    return next((e for e in node.elements if _key(e) == key), None)  # type: ignore[misc]


def _dict_score(node: cst.Dict) -> cst.DictElement | None:
    if any(not isinstance(element, cst.DictElement) for element in node.elements):
        return None
    return _dict_key(node, "score")


def _prediction_args(node: cst.Call) -> dict[str, cst.BaseExpression] | None:
    """dspy.Prediction's keyword arguments by name; None when it has others (positional,
    **kwargs) or no score."""
    args: dict[str, cst.BaseExpression] = {}
    for arg in node.args:
        if arg.keyword is None or arg.star:
            return None
        args[arg.keyword.value] = arg.value
    return args if "score" in args else None


def _evaluation_args(node: cst.Call) -> dict[str, cst.BaseExpression] | None:
    """EvaluationResult's arguments by field, positional or by keyword."""
    args: dict[str, cst.BaseExpression] = {}
    for index, arg in enumerate(node.args):
        if arg.star:
            return None
        if arg.keyword is None:
            if index >= len(EVALUATION_FIELDS):
                return None
            args[EVALUATION_FIELDS[index]] = arg.value
        elif arg.keyword.value in EVALUATION_FIELDS:
            args[arg.keyword.value] = arg.value
        else:
            return None
    return args if "score" in args else None


def _from_dict(node: cst.Dict):
    score = _dict_score(node)
    assert score is not None
    kept = [element for element in node.elements if element is not score]
    if kept and node.elements[-1] is score:
        # The score was last: the one now last takes its comma (or its lack of one).
        kept[-1] = kept[-1].with_changes(comma=score.comma)
    missing = _dict_key(node, "feedback") is None
    if missing:
        kept.insert(
            0,
            cst.DictElement(
                cst.SimpleString('"feedback"'),
                _empty(),
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                if kept
                else cst.MaybeSentinel.DEFAULT,
            ),
        )
    return pair(score_value(score.value), node.with_changes(elements=kept)), missing


def _line_break(indent: str) -> cst.ParenthesizedWhitespace:
    """A new line inside brackets, `indent` deeper than the statement."""
    return cst.ParenthesizedWhitespace(
        first_line=cst.TrailingWhitespace(),
        empty_lines=[],
        indent=True,
        last_line=cst.SimpleWhitespace(indent),
    )


def _side_info(
    entries: list[tuple[str, cst.BaseExpression]], multiline: bool, indent: str
) -> cst.Dict:
    """{"feedback": F, ...}: on one line, or one entry a line when the call it replaces
    took several lines."""
    elements = []
    for index, (key, value) in enumerate(entries):
        last = index == len(entries) - 1
        if multiline:
            comma = cst.Comma(whitespace_after=_line_break("" if last else indent))
        elif last:
            comma = cst.MaybeSentinel.DEFAULT
        else:
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        elements.append(cst.DictElement(cst.SimpleString(key), value, comma=comma))
    lbrace = cst.LeftCurlyBrace(whitespace_after=_line_break(indent)) if multiline else None
    return cst.Dict(elements=elements, lbrace=lbrace or cst.LeftCurlyBrace())
