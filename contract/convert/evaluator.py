"""A gepa evaluator class as the contract's metric: the module-level `score` the contract
calls, handing each case to an instance of the class (whose __call__ the rewrite gave the
contract's parameters)."""

from __future__ import annotations

import libcst as cst

from contract.convert.notes import NoteBook
from contract.convert.plan import Context


def evaluator_statements(
    ctx: Context, book: NoteBook, original: cst.Module
) -> list[cst.BaseStatement]:
    """An instance of the evaluator class, and the module-level score that calls it."""
    rec = ctx.recognition
    config = original.config_for_parsing
    two_blank = [cst.EmptyLine(), cst.EmptyLine()]
    instance = _existing_instance(original, rec.name)
    statements: list[cst.BaseStatement] = []
    if instance is None:
        taken = ctx.scopes[original]
        instance = "_evaluator"
        while instance in taken:
            instance += "_"
        made = cst.parse_statement(f"{instance} = {rec.name}()\n", config)
        comment = cst.EmptyLine(
            comment=cst.Comment(
                "# The contract calls a module-level score; it hands each case to an instance of the evaluator."
            )
        )
        leading = [*two_blank, comment]
        if _needs_arguments(original, rec.name):
            leading.append(book.comment("evaluator_needs_arguments", {"name": rec.name}))
        statements.append(made.with_changes(leading_lines=leading))
    score = cst.parse_statement(
        f"def score(input, output, expected=None):\n"
        f"{original.default_indent}return {instance}(input, output, expected)\n",
        config,
    )
    statements.append(score.with_changes(leading_lines=two_blank))
    return statements


def _existing_instance(module: cst.Module, cls: str) -> str | None:
    """A module-level `name = Cls(...)` to call, rather than making a second instance."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and isinstance(small.value, cst.Call)
                and isinstance(small.value.func, cst.Name)
                and small.value.func.value == cls
            ):
                return small.targets[0].target.value
    return None


def _needs_arguments(module: cst.Module, cls: str) -> bool:
    for statement in module.body:
        if not (isinstance(statement, cst.ClassDef) and statement.name.value == cls):
            continue
        if not isinstance(statement.body, cst.IndentedBlock):
            return False
        for member in statement.body.body:
            if isinstance(member, cst.FunctionDef) and member.name.value == "__init__":
                params = member.params
                positional = [*params.posonly_params, *params.params][1:]
                required = [p for p in positional if p.default is None]
                required += [p for p in params.kwonly_params if p.default is None]
                return bool(required)
    return False
