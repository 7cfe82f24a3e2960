"""What the rewrite pass will do, decided before it starts.

The analysis reads the tree with its metadata (scopes, parents, positions) and records,
by node of that tree, what each node becomes; the transformer then only applies it. So
every decision is made on the original code, never on half-rewritten code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import (
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    ScopeProvider,
)

from contract.convert import names
from contract.convert.recognise import Recognition

Replace = Callable[[cst.CSTNode], cst.CSTNode]


@dataclass
class Plan:
    # Name nodes that become another name (the prediction's parameter -> output).
    renames: dict[cst.CSTNode, str] = field(default_factory=dict)
    # Nodes that become something else, built from the node as rewritten inside.
    replace: dict[cst.CSTNode, Replace] = field(default_factory=dict)
    # Statements that get `# convert:` comments: (code, params) each.
    comments: dict[cst.CSTNode, list[tuple[str, dict]]] = field(default_factory=dict)
    # The example and the prediction handed on whole to a function of the module that
    # reads them as DSPy's objects (PAPILLON's compute_metrics): rebuilt as those.
    dspy_example: bool = False
    dspy_prediction: bool = False
    # The fields the code it is handed to reads off the prediction (`pred.response`).
    dspy_prediction_fields: set[str] = field(default_factory=set)

    def note(self, statement: cst.CSTNode, code: str, params: dict) -> None:
        notes = self.comments.setdefault(statement, [])
        if (code, params) not in notes:
            notes.append((code, params))


class Context:
    """The tree being converted and what is known about it."""

    def __init__(
        self, wrapper: MetadataWrapper, function: cst.FunctionDef, recognition: Recognition
    ) -> None:
        self.module = wrapper.module
        self.function = function
        self.recognition = recognition
        self.parents = wrapper.resolve(ParentNodeProvider)
        self.positions = wrapper.resolve(PositionProvider)
        self.scopes = wrapper.resolve(ScopeProvider)
        self.scope = self.scopes[function.body]
        self.imports = names.import_map(self.module)
        self.plan = Plan()

    def module_function(self, value: cst.CSTNode | None) -> cst.FunctionDef | None:
        """The function of the module that `value` calls (`helper(...)`): bound once, by a
        `def` at the module's top level, and not the metric itself; else None."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return None
        module_scope = self.scopes[self.module]
        name = value.func.value
        bound = list(module_scope.assignments[name]) if name in module_scope else []
        if len(bound) != 1 or not isinstance(bound[0].node, cst.FunctionDef):
            return None
        helper = bound[0].node
        if helper is self.function or self.parents.get(helper) is not self.module:
            return None
        return helper

    def scope_of(self, function: cst.FunctionDef | None):
        return self.scope if function is None else self.scopes[function.body]

    def accesses(self, name: str, function: cst.FunctionDef | None = None) -> list[cst.Name]:
        """Every read of the function's local `name` (its inner functions' included), in
        the order of the source. The function is the metric unless another is given."""
        scope = self.scope_of(function)
        if name not in scope:
            return []
        found = {
            access.node
            for assignment in scope.assignments[name]
            for access in assignment.references
            if isinstance(access.node, cst.Name)
        }
        return sorted(found, key=self.start)

    def start(self, node: cst.CSTNode) -> tuple[int, int]:
        position = self.positions[node].start
        return position.line, position.column

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The statement (or clause: elif, else, except) a node stands in, whose line a
        comment can go above."""
        while not hasattr(node, "leading_lines"):
            node = self.parents[node]
        return node

    def bindings(self, name: str, function: cst.FunctionDef | None = None) -> list[object] | None:
        """Every value the function assigns to its local `name`: the expression of a
        plain assignment, ("+=", value) of an augmented one, None for any other binding."""
        scope = self.scope_of(function)
        if name not in scope:
            return None
        values: list[object] = []
        for assignment in scope.assignments[name]:
            node = assignment.node
            parent = self.parents.get(node)
            if isinstance(parent, cst.AssignTarget):
                statement = self.parents[parent]
                values.append(statement.value if len(statement.targets) == 1 else None)
            elif isinstance(parent, cst.AnnAssign) and parent.value is not None:
                values.append(parent.value)
            elif isinstance(parent, cst.AugAssign):
                kind = "+=" if isinstance(parent.operator, cst.AddAssign) else "op="
                values.append((kind, parent.value))
            else:
                values.append(None)
        return values

    def assignments_of(
        self, name: str, function: cst.FunctionDef | None = None
    ) -> list[cst.Assign] | None:
        """The plain assignments of a local name, or None when it has any other binding."""
        scope = self.scope_of(function)
        found = []
        for assignment in scope.assignments[name] if name in scope else ():
            parent = self.parents.get(assignment.node)
            if not isinstance(parent, cst.AssignTarget):
                return None
            statement = self.parents[parent]
            if len(statement.targets) != 1:
                return None
            found.append(statement)
        return found

    def mentions(self, name: str) -> bool:
        """Whether the function's code has the name anywhere, as a variable of any scope."""

        class Finder(cst.CSTVisitor):
            def __init__(self) -> None:
                self.found = False

            def visit_Name(self, node: cst.Name) -> None:
                self.found = self.found or node.value == name

            def visit_Attribute(self, node: cst.Attribute) -> bool:
                node.value.visit(self)  # the attribute's own name is no variable
                return False

            def visit_Arg(self, node: cst.Arg) -> bool:
                node.value.visit(self)  # nor is a keyword argument's name
                return False

        finder = Finder()
        self.function.body.visit(finder)
        return finder.found
