"""The first pass: branches on trace, pred_name, pred_trace and program_trace, which are
always None in the workbench, are decided once and for all.

`if trace is None: A else: B` becomes A, `if trace is not None: ...` goes, `x and
pred_name is None` becomes `x`, `A if trace is None else B` becomes A. Statements after an
inlined branch that always returns are dead, and go too (they are where DSPy metrics
give per-predictor feedback, which the workbench never asks for). Only names that still
mean the parameter are decided: one the function assigns again is left for the rewrite,
which binds it to None and says so.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider

from contract.convert import names

Decided = bool | cst.BaseExpression


def settled_names(wrapper: MetadataWrapper, function: cst.FunctionDef) -> set[str]:
    """The trace parameters of `function` that are never assigned again in it, so every
    use of the name inside it means the parameter."""
    scope = wrapper.resolve(ScopeProvider)[function.body]
    settled = set()
    for name in names.TRACE_NAMES:
        if name in scope and len(scope.assignments[name]) == 1:
            (assignment,) = scope.assignments[name]
            if isinstance(assignment.node, cst.Param) and not _shadowed(function, name):
                settled.add(name)
    return settled


def _shadowed(function: cst.FunctionDef, name: str) -> bool:
    """Whether a function or lambda inside `function` has a parameter called `name`."""

    class Finder(cst.CSTVisitor):
        def __init__(self) -> None:
            self.found = False

        def visit_Param(self, node: cst.Param) -> None:
            self.found = self.found or node.name.value == name

    finder = Finder()
    function.body.visit(finder)
    return finder.found


def decide_traces(wrapper: MetadataWrapper, function: cst.FunctionDef) -> cst.Module:
    """The module with `function`'s branches on its trace parameters decided, and its
    body on lines of its own (`def m(e, p): return ...` too), where comments can go."""
    return wrapper.module.visit(_Decider(function, settled_names(wrapper, function)))


class _Decider(cst.CSTTransformer):
    def __init__(self, function: cst.FunctionDef, settled: set[str]) -> None:
        super().__init__()
        self.function = function
        self.settled = settled
        self.inside = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if node is self.function:
            self.inside += 1
        return True

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        if original is not self.function:
            return updated
        self.inside -= 1
        if isinstance(updated.body, cst.SimpleStatementSuite):
            statements, _ = _inlined(updated.body, [])
            return updated.with_changes(body=cst.IndentedBlock(body=statements))
        return updated

    def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
        if not self.inside:
            return updated
        test = self.decide(updated.test)
        if test is True or test is False:
            chosen = updated.body if test else updated.orelse
            if updated.lpar and not chosen.lpar and not _atomic(chosen):
                chosen = chosen.with_changes(lpar=updated.lpar, rpar=updated.rpar)
            return chosen
        return updated.with_changes(test=test)

    def leave_IndentedBlock(
        self, original: cst.IndentedBlock, updated: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        if not self.inside:
            return updated
        body: list[cst.BaseStatement] = []
        for statement in updated.body:
            if isinstance(statement, cst.If):
                kept, ends = self.decide_if(statement)
                body.extend(kept)
                if ends:
                    break  # what follows a return of an inlined branch never runs
            else:
                body.append(statement)
        if not body:
            body = [cst.SimpleStatementLine(body=[cst.Pass()])]
        return updated.with_changes(body=body)

    def decide_if(self, node: cst.If) -> tuple[list[cst.BaseStatement], bool]:
        """The statements that replace an if statement, and whether they always end the
        block (an inlined branch that returns or raises)."""
        test = self.decide(node.test)
        if test is True:
            return _inlined(node.body, [*node.leading_lines])
        if test is False:
            if node.orelse is None:
                return [], False
            if isinstance(node.orelse, cst.Else):
                return _inlined(node.orelse.body, [*node.leading_lines, *node.orelse.leading_lines])
            return self.decide_if(node.orelse.with_changes(leading_lines=node.leading_lines))
        return [node.with_changes(test=test, orelse=self.decide_orelse(node.orelse))], False

    def decide_orelse(self, orelse: cst.If | cst.Else | None) -> cst.If | cst.Else | None:
        if not isinstance(orelse, cst.If):
            return orelse
        test = self.decide(orelse.test)
        if test is True:
            return cst.Else(body=orelse.body, leading_lines=orelse.leading_lines)
        if test is False:
            return self.decide_orelse(orelse.orelse)
        return orelse.with_changes(test=test, orelse=self.decide_orelse(orelse.orelse))

    def decide(self, node: cst.BaseExpression) -> Decided:
        """True or False when the test is known with every trace parameter None, else the
        test with what is known taken out (`x and trace is None` -> `x`)."""
        if isinstance(node, cst.Name) and node.value in self.settled:
            return False
        if isinstance(node, cst.Call) and _is_name(node.func, "bool") and len(node.args) == 1:
            inner = self.decide(node.args[0].value)
            return inner if isinstance(inner, bool) else node
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            return self._compare(node)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            inner = self.decide(node.expression)
            if isinstance(inner, bool):
                return not inner
            return node.with_changes(expression=inner)
        if isinstance(node, cst.BooleanOperation):
            return self._boolean(node)
        return node

    def _compare(self, node: cst.Comparison) -> Decided:
        """`trace is None`, `pred_name == "x"`, `pred_name in ("a", "b")` and their
        negations, with the parameter None."""
        target = node.comparisons[0]
        operator = target.operator
        left, right = node.left, target.comparator
        left_traced = isinstance(left, cst.Name) and left.value in self.settled
        right_traced = isinstance(right, cst.Name) and right.value in self.settled
        if left_traced == right_traced:
            return node
        other = right if left_traced else left
        if _is_name(other, "None"):
            if isinstance(operator, cst.Is | cst.Equal):
                return True
            if isinstance(operator, cst.IsNot | cst.NotEqual):
                return False
        elif _literal(other):
            if isinstance(operator, cst.Equal | cst.Is):
                return False
            if isinstance(operator, cst.NotEqual | cst.IsNot):
                return True
        elif left_traced and _literals(other):
            if isinstance(operator, cst.In):
                return False
            if isinstance(operator, cst.NotIn):
                return True
        return node

    def _boolean(self, node: cst.BooleanOperation) -> Decided:
        left, right = self.decide(node.left), self.decide(node.right)
        is_and = isinstance(node.operator, cst.And)
        for one, other in ((left, right), (right, left)):
            if isinstance(one, bool):
                if one is not is_and:  # False in an `and`, True in an `or`
                    return one
                return other  # True in an `and`, False in an `or`: the other decides
        return node.with_changes(left=left, right=right)


def _is_name(node: cst.BaseExpression, value: str) -> bool:
    return isinstance(node, cst.Name) and node.value == value


def _literal(node: cst.BaseExpression) -> bool:
    """A str or number literal: never equal to None."""
    return isinstance(node, cst.BaseNumber | cst.SimpleString | cst.ConcatenatedString)


def _literals(node: cst.BaseExpression) -> bool:
    """A tuple, list or set of such literals, which None is never in."""
    return isinstance(node, cst.Tuple | cst.List | cst.Set) and all(
        isinstance(element, cst.Element) and _literal(element.value) for element in node.elements
    )


def _atomic(node: cst.BaseExpression) -> bool:
    return isinstance(
        node,
        cst.Name
        | cst.Attribute
        | cst.Call
        | cst.Subscript
        | cst.BaseNumber
        | cst.BaseString
        | cst.Tuple
        | cst.List
        | cst.Dict
        | cst.Set,
    )


def _ends(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and isinstance(
        statement.body[-1], cst.Return | cst.Raise | cst.Continue | cst.Break
    )


def _inlined(
    block: cst.BaseSuite, leading: Sequence[cst.EmptyLine]
) -> tuple[list[cst.BaseStatement], bool]:
    """A branch's statements, to stand in the enclosing block; the comments above the if
    (and on its header line) go above the first of them."""
    if isinstance(block, cst.SimpleStatementSuite):
        small = list(block.body)
        small[-1] = small[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        statements: list[cst.BaseStatement] = [
            cst.SimpleStatementLine(body=small, trailing_whitespace=block.trailing_whitespace)
        ]
    else:
        statements = list(block.body)
        header = block.header
        if header.comment is not None:
            leading = [*leading, cst.EmptyLine(comment=header.comment)]
    if not statements:
        return [], False
    first = statements[0]
    statements[0] = first.with_changes(leading_lines=[*leading, *first.leading_lines])
    return statements, _ends(statements[-1])
