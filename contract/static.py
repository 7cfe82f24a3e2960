"""Diagnostics for the live editor, from the AST alone: nothing is executed.

Runs the load stage's parent part (size, UTF-8, syntax), then the signature of
a module-level `def score` and the REWARD_SPEC literal, with the same rules as
the child. What cannot be known without running (a decorated or assigned
score, a REWARD_SPEC built from expressions) is "skipped" with reason
"not_static", never guessed.
"""

from __future__ import annotations

import ast
import re

from contract import frameworks, missing_imports
from contract.parsing import parse as ast_parse
from contract.results import CheckResult
from contract.source import check_source
from skynet import rewardspec, signature

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Module-scope statements, including those nested in if/for/try/with/match."""
    found = []
    for stmt in body:
        found.append(stmt)
        if isinstance(stmt, _SCOPES):
            continue
        for name in ("body", "orelse", "finalbody"):
            found += _statements(getattr(stmt, name, []) or [])
        for handler in getattr(stmt, "handlers", []) or []:
            found += _statements(handler.body)
        for case in getattr(stmt, "cases", []) or []:
            found += _statements(case.body)
    return found


def _own_nodes(stmt: ast.stmt) -> list[ast.AST]:
    """Nodes of stmt itself: not nested statements and not inner scopes."""
    nodes, stack = [], [stmt]
    while stack:
        node = stack.pop()
        nodes.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.stmt, ast.Lambda, *_COMPREHENSIONS)):
                continue
            stack.append(child)
    return nodes


def _binds(stmt: ast.stmt, name: str) -> bool:
    if isinstance(stmt, _SCOPES):
        return stmt.name == name
    for node in _own_nodes(stmt):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.alias):
            bound = node.asname or node.name.split(".")[0]
            if bound == name:
                return True
        if isinstance(node, ast.ExceptHandler) and node.name == name:
            return True
    return False


def _last_binding(statements: list[ast.stmt], name: str) -> ast.stmt | None:
    bindings = [s for s in statements if _binds(s, name)]
    return max(bindings, key=lambda s: (s.lineno, s.col_offset)) if bindings else None


class _Locator:
    """1-based character line/column of AST nodes (col_offset counts UTF-8 bytes)."""

    def __init__(self, text: str) -> None:
        self._lines = re.split(r"\r\n|\r|\n", text)

    def of(self, node: ast.AST | None) -> dict:
        if node is None or not hasattr(node, "lineno"):
            return {"line": None, "column": None}
        line = node.lineno
        text = self._lines[line - 1] if 0 < line <= len(self._lines) else ""
        column = len(text.encode("utf-8")[: node.col_offset].decode("utf-8", "replace")) + 1
        return {"line": line, "column": column}


def _arg_node(func: ast.FunctionDef | ast.AsyncFunctionDef, names: list[str]) -> ast.AST:
    args = func.args
    for arg in args.posonlyargs + args.args + args.kwonlyargs:
        if names and arg.arg == names[0]:
            return arg
    return func


def _check_signature(result: CheckResult, binding: ast.stmt, where: _Locator) -> None:
    stage = result.stage("signature")
    if not isinstance(binding, ast.FunctionDef | ast.AsyncFunctionDef) or binding.decorator_list:
        stage.status, stage.params = "skipped", {"reason": "not_static"}
        return
    shape = frameworks.shape_of_def(binding)
    problems, _ = signature.check(shape)
    for problem in problems:
        node = _arg_node(binding, problem["params"]["names"])
        problem["params"].update(where.of(node))
    if problems:
        stage.status, stage.problem, stage.params = "failed", "bad_signature", problems[0]["params"]
        stage.problems = problems
        return
    stage.status = "passed"
    found = frameworks.recognise(shape)
    if found is not None:
        seen = frameworks.problem(found)
        seen["params"].update(where.of(binding))
        if found["fails"]:
            stage.status, stage.problem, stage.params = "failed", seen["code"], seen["params"]
            stage.problems = [seen]
        else:
            stage.warnings = [seen]


def _node_at(node: ast.AST, path: str) -> ast.AST:
    """The deepest node of a dict literal along a dotted path like "weights.speed"."""
    for part in path.split(".") if path else []:
        if not isinstance(node, ast.Dict):
            break
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and key.value == part:
                node = value
                break
        else:
            break
    return node


def _check_reward_spec(result: CheckResult, binding: ast.stmt | None, where: _Locator) -> None:
    stage = result.stage("reward_spec")
    if binding is None:
        stage.status, stage.params = "skipped", {"reason": "not_defined"}
        return
    value = binding.value if isinstance(binding, ast.Assign | ast.AnnAssign) else None
    try:
        if value is None:
            raise ValueError
        spec = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        stage.status, stage.params = "skipped", {"reason": "not_static"}
        return
    problems = rewardspec.validate(spec)
    for problem in problems:
        problem["params"].update(where.of(_node_at(value, problem["params"]["path"])))
    if problems:
        stage.status, stage.problem = "failed", "invalid_reward_spec"
        stage.params, stage.problems = {"count": len(problems)}, problems
    else:
        stage.status = "passed"


def _fail(result: CheckResult, stage_id: str) -> CheckResult:
    result.passed, result.failed_stage = False, stage_id
    after = False
    for stage in result.stages:
        if stage.id == stage_id:
            after = True
        elif after and stage.status == "pending":
            stage.status = "skipped"
    return result


def names_not_imported(tree: ast.Module, text: str) -> list[dict]:
    """A "name_not_imported" problem for each name metric.py uses but never binds."""
    return [
        {"code": "name_not_imported", "params": found.params()}
        for found in missing_imports.missing(tree, text)
    ]


def names_summary(problems: list[dict]) -> dict:
    """The load stage's params for names_not_imported: the names, where the first is,
    and the import lines that add every name that has one (`fix`)."""
    params = [problem["params"] for problem in problems]
    lines = missing_imports.import_block([p["import"] for p in params if p["import"]])
    return {
        "count": len(params),
        "names": ", ".join(p["name"] for p in params),
        "line": params[0]["line"],
        "column": params[0]["column"],
        "fix": lines,
        "fixable": sum(1 for p in params if p["import"]),
    }


def static_check(source: bytes | str) -> CheckResult:
    """load (size, UTF-8, syntax, a `score` binding), signature and reward_spec, statically.

    The run-time stages (call, return_value) stay "pending"; `passed` is None
    unless a static stage failed. Problems carry line/column where known.
    """
    result = CheckResult()
    load = result.stage("load")
    checked = check_source(source)
    if checked.problem is not None:
        load.status, load.problem, load.params = "failed", checked.problem, checked.params
        load.problems = [{"code": checked.problem, "params": checked.params}]
        return _fail(result, "load")
    assert checked.tree is not None and checked.text is not None
    where = _Locator(checked.text)
    statements = _statements(checked.tree.body)
    score = _last_binding(statements, "score")
    names = names_not_imported(checked.tree, checked.text)
    if score is None:
        if missing_imports.is_dynamic(checked.tree):
            load.status, load.params = "skipped", {"reason": "not_static"}
        else:
            params = {"line": None, "column": None}
            # A metric brought from DSPy or gepa: name the function that looks like one.
            found = frameworks.candidates(checked.tree)
            if found:
                # The editor marks the function that looks like the metric.
                params.update(line=found[0]["line"], candidates=found)
            load.status, load.problem, load.params = "failed", "no_score_function", params
            load.problems = [{"code": "no_score_function", "params": params}, *names]
            return _fail(result, "load")
    elif names:
        params = names_summary(names)
        load.status, load.problem, load.params = "failed", "names_not_imported", params
        load.problems = names
        return _fail(result, "load")
    else:
        load.status = "passed"
        _check_signature(result, score, where)
    if result.stage("signature").status == "failed":
        return _fail(result, "signature")
    if result.stage("signature").status == "pending":
        result.stage("signature").status, result.stage("signature").params = (
            "skipped",
            {"reason": "not_static"},
        )
    _check_reward_spec(result, _last_binding(statements, "REWARD_SPEC"), where)
    if result.stage("reward_spec").status == "failed":
        return _fail(result, "reward_spec")
    return result


def calls_llm(source: str) -> bool:
    """Whether metric.py uses skynet.llm(): imports it from skynet, or reads it off the
    skynet module. From the AST alone; False for source that does not parse."""
    try:
        tree = ast_parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "skynet":
            if any(alias.name in ("llm", "*") for alias in node.names):
                return True
        if isinstance(node, ast.Attribute) and node.attr == "llm":
            return True
    return False
