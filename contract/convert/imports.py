"""The last pass: imports of dspy and gepa that the converted module no longer uses go;
what still uses either gets a note.

Only these two packages' imports are touched: the converted returns no longer build
their objects, so their imports are the ones that just lost their uses. An import still
used stays (the sandbox can import dspy), with a note at each place that uses it, since
those places were written for DSPy's or gepa's objects.
"""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import MetadataWrapper, ParentNodeProvider, ScopeProvider

from contract.convert import names
from contract.convert.notes import NoteBook


def tidy_imports(module: cst.Module, book: NoteBook) -> cst.Module:
    wrapper = MetadataWrapper(module)
    scope = wrapper.resolve(ScopeProvider)[wrapper.module]
    parents = wrapper.resolve(ParentNodeProvider)
    module = wrapper.module

    dropped: set[cst.CSTNode] = set()  # import aliases no longer used
    uses: dict[cst.CSTNode, str] = {}  # statement to comment -> the package it uses
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            framework = _framework(small)
            if framework is None:
                continue
            if isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar):
                uses.setdefault(statement, framework)  # what it brings in cannot be known
                continue
            assert isinstance(small, cst.Import | cst.ImportFrom)
            assert not isinstance(small.names, cst.ImportStar)
            for alias in small.names:
                readers = _readers(scope, _bound(alias))
                if not readers:
                    dropped.add(alias)
                for reader in readers:
                    uses.setdefault(_anchor(module, parents, reader), framework)
    if not dropped and not uses:
        return module
    return module.visit(_Tidier(dropped, uses, book))


def _framework(small: cst.BaseSmallStatement) -> str | None:
    if isinstance(small, cst.Import):
        found = {
            names.framework_of_module(get_full_name_for_node(a.name) or "") for a in small.names
        }
        found.discard(None)
        return next(iter(found)) if len(found) == 1 else None
    if isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
        return names.framework_of_module(get_full_name_for_node(small.module) or "")
    return None


def _bound(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return get_full_name_for_node(alias.name) or ""


def _readers(scope, bound: str) -> list[cst.CSTNode]:
    """The nodes that read a name an import binds (for `import a.b`, `a` and `a.b`)."""
    head = bound.split(".")[0]
    found = []
    for assignment in scope.assignments:
        if assignment.name in (head, bound) or assignment.name.startswith(head + "."):
            found += [access.node for access in assignment.references]
    return found


def _anchor(module: cst.Module, parents, node: cst.CSTNode) -> cst.CSTNode:
    """The statement a use's comment goes above: the module-level statement holding it,
    or, inside a module-level function, the statement of the function's body."""
    chain = [node]
    while chain[-1] is not module:
        chain.append(parents[chain[-1]])
    top = chain[-2]
    if isinstance(top, cst.FunctionDef) and isinstance(top.body, cst.IndentedBlock):
        inner = next((n for n in chain if parents.get(n) is top.body), None)
        if inner is not None:
            return inner
    return top


# The lines the rewrite adds that use dspy on purpose (rewrite.py): not noted.
_OURS = (
    "# DSPy's gold example, rebuilt from the case's columns",
    "# DSPy's prediction, rebuilt from the output's fields",
)


def _rebuilt_by_us(statement: cst.CSTNode) -> bool:
    return any(
        line.comment is not None and line.comment.value.startswith(_OURS)
        for line in statement.leading_lines  # type: ignore[attr-defined]
    )


class _Tidier(cst.CSTTransformer):
    def __init__(self, dropped: set[cst.CSTNode], uses: dict[cst.CSTNode, str], book: NoteBook):
        super().__init__()
        self.dropped = dropped
        self.uses = uses
        self.book = book
        self.removed: set[cst.CSTNode] = set()

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        if (
            original in self.uses
            and hasattr(result, "leading_lines")
            and not _rebuilt_by_us(result)
        ):
            comment = self.book.comment(f"{self.uses[original]}_still_used", {})
            result = result.with_changes(leading_lines=[*result.leading_lines, comment])
        return result

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        return self._kept(original, updated)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        return self._kept(original, updated)

    def _kept(self, original, updated):
        if isinstance(original.names, cst.ImportStar):
            return updated
        kept = [
            new
            for old, new in zip(original.names, updated.names, strict=True)
            if old not in self.dropped
        ]
        if not kept:
            return cst.RemovalSentinel.REMOVE
        if len(kept) < len(updated.names) and original.names[-1] in self.dropped:
            # The last name went: the one now last takes its comma, or its lack of one.
            kept[-1] = kept[-1].with_changes(comma=updated.names[-1].comma)
        return updated.with_changes(names=kept)

    def leave_SimpleStatementLine(self, original, updated):
        if updated.body:
            return updated
        # Every import on the line went; the line goes in leave_Module, which knows
        # what stands around it.
        gone = cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=updated.leading_lines)
        self.removed.add(gone)
        return gone

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        """The lines of removed imports go, and the blank lines they stood after stay
        (none at the top of the file)."""
        body: list[cst.BaseStatement] = []
        carried: int | None = None  # blank lines owed to the next statement kept
        for statement in updated.body:
            if statement in self.removed:
                carried = max(carried or 0, _blank_lines(statement)) if body else 0
                continue
            if carried is not None:
                lines = list(statement.leading_lines)
                own = _blank_lines(statement)
                blanks = max(own, carried) if body else 0
                statement = statement.with_changes(
                    leading_lines=[cst.EmptyLine() for _ in range(blanks)] + lines[own:]
                )
                carried = None
            body.append(statement)
        return updated.with_changes(body=body)


def _blank_lines(statement: cst.BaseStatement) -> int:
    count = 0
    for line in statement.leading_lines:
        if line.comment is not None:
            break
        count += 1
    return count
