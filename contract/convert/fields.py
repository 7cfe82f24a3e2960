"""Reads of DSPy's gold example and of the prediction, as reads of the contract's dicts.

The gold example becomes a dict of the case's input and expected columns, so
`example.answer` reads `example["answer"]`; what a dict has the same way (`example["x"]`,
`.get`, `.keys()`...) stays. The prediction becomes `output`: the program's output field
when the metric reads one field of it, a dict of the fields when it reads several (the
workbench passes what the dataset's output columns name, one value or a dict).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from contract.convert import names
from contract.convert.plan import Context


def _key(field: str, quote: str = '"') -> cst.SimpleString:
    return cst.SimpleString(f"{quote}{field}{quote}")


def _subscript(value: cst.BaseExpression, field: str, quote: str = '"') -> cst.Subscript:
    return cst.Subscript(value=value, slice=[cst.SubscriptElement(cst.Index(_key(field, quote)))])


def quote_for(ctx: Context, node: cst.CSTNode) -> str:
    """The quote a new string key can use where `node` stands: inside an f-string on one
    line, Python before 3.12 ends the f-string at its own quote, so the other one."""
    used = set()
    while node is not None:
        if isinstance(node, cst.FormattedString) and len(node.quote) == 1:
            used.add(node.quote)
        node = ctx.parents.get(node)
    return "'" if '"' in used else '"'


def _string_key(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str):
        return node.evaluated_value
    return None


def _subscript_key(node: cst.Subscript) -> str | None:
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        return _string_key(node.slice[0].slice.value)
    return None


def _called(ctx: Context, attribute: cst.Attribute) -> cst.Call | None:
    parent = ctx.parents.get(attribute)
    return parent if isinstance(parent, cst.Call) and parent.func is attribute else None


def _as_dict():
    """dict(value), for a copying method of the example (`toDict()`, `copy()`)."""

    def replace(call: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
        return cst.Call(
            func=cst.Name("dict"), args=[cst.Arg(call.func.value)], lpar=call.lpar, rpar=call.rpar
        )

    return replace


def _field_of(field: str, quote: str):
    """example.field -> example["field"]."""

    def replace(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Attribute)
        subscript = _subscript(updated.value, field, quote)
        return subscript.with_changes(lpar=updated.lpar, rpar=updated.rpar)

    return replace


def plan_example(ctx: Context) -> set[str]:
    """Plan the gold example's reads; the fields it reads by name."""
    name = ctx.recognition.example
    fields: set[str] = set()
    for node in ctx.accesses(name):
        parent = ctx.parents[node]
        if isinstance(parent, cst.Attribute) and parent.value is node:
            attr = parent.attr.value
            call = _called(ctx, parent)
            if attr in names.DICT_METHODS:
                if attr == "get" and call is not None and call.args:
                    key = _string_key(call.args[0].value)
                    fields |= {key} if key else set()
                continue
            if attr in ("toDict", "copy") and call is not None and not call.args:
                ctx.plan.replace[call] = _as_dict()
                continue
            if attr in names.EXAMPLE_METHODS or attr.startswith("_"):
                ctx.plan.note(
                    ctx.statement_of(node), "example_method_used", {"name": name, "method": attr}
                )
                continue
            fields.add(attr)
            ctx.plan.replace[parent] = _field_of(attr, quote_for(ctx, parent))
        elif isinstance(parent, cst.Subscript) and parent.value is node:
            key = _subscript_key(parent)
            fields |= {key} if key else set()
        elif isinstance(parent, cst.Arg):
            call = ctx.parents[parent]
            key = _builtin_key(ctx, node, "getattr")
            if key is not None:
                fields.add(key)
                read = _Read(call, "getattr", key)
                ctx.plan.replace[call] = _read_replacement(read, name, False, quote_for(ctx, call))
            elif _builtin_key(ctx, node, "hasattr") is not None:
                field = _builtin_key(ctx, node, "hasattr") or ""
                ctx.plan.replace[call] = _has_key(name, field, quote_for(ctx, call))
            elif parent.star:
                continue  # *example and **example read a dict of columns as they read an Example
            elif handed_to_module_function(ctx, call):
                ctx.plan.dspy_example = True  # rebuilt as a dspy.Example (rewrite.py)
            elif not (isinstance(call.func, cst.Name) and call.func.value in names.SAFE_CALLS):
                ctx.plan.note(ctx.statement_of(node), "example_passed_on", {"name": name})
    return fields


def _fields_read_by_callee(ctx: Context, arg: cst.Arg) -> set[str]:
    """The attributes the called function reads off the parameter `arg` is passed as."""
    call = ctx.parents[arg]
    callee = ctx.module_function(call)
    assert isinstance(call, cst.Call) and callee is not None
    params = [*callee.params.posonly_params, *callee.params.params]
    position = list(call.args).index(arg)
    if arg.keyword is not None:
        named = [p for p in params if p.name.value == arg.keyword.value]
    else:
        named = params[position : position + 1]
    if not named:
        return set()
    name = named[0].name.value
    found: set[str] = set()

    class Reads(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if isinstance(node.value, cst.Name) and node.value.value == name:
                found.add(node.attr.value)

    callee.body.visit(Reads())
    return found - names.PREDICTION_METHODS


def handed_to_module_function(ctx: Context, call: cst.CSTNode) -> bool:
    """Whether `call` calls a function of the module, in a module that imports dspy: the
    metric hands DSPy's object on to code of its own, which can have it rebuilt."""
    if "dspy" not in {dotted.split(".")[0] for dotted in ctx.imports.values()}:
        return False
    return ctx.module_function(call) is not None


def _has_key(name: str, field: str, quote: str):
    """hasattr(example, "field") -> "field" in example."""

    def replace(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Call)
        return cst.Comparison(
            left=_key(field, quote),
            comparisons=[cst.ComparisonTarget(cst.In(), cst.Name(name))],
            lpar=updated.lpar,
            rpar=updated.rpar,
        )

    return replace


@dataclass
class _Read:
    node: cst.CSTNode  # what is replaced: the attribute, subscript or call
    kind: str  # "attr", "subscript", "get", "getattr"
    field: str


def plan_prediction(ctx: Context, target: str, example_fields: set[str]) -> bool:
    """Plan the prediction's reads as reads of `target` (output, or the old name when
    the function has its own `output`). True when every read now reads `target` as the
    text it read: a DSPy prediction's one field, or gepa's response. An empty field of
    those was "", where the workbench gives None, so the caller binds `target` to ""
    then, and code such as `int(pred.answer)` under `except ValueError` still holds."""
    name = ctx.recognition.prediction
    accesses = ctx.accesses(name)
    if target != name:
        for node in accesses:
            ctx.plan.renames[node] = target
    if ctx.recognition.framework != "dspy":
        return bool(accesses)  # gepa's response is a str: output is the same str
    reads: list[_Read] = []
    methods: list[tuple[cst.Name, str, cst.Call | None]] = []
    for node in accesses:
        parent = ctx.parents[node]
        if isinstance(parent, cst.Attribute) and parent.value is node:
            attr = parent.attr.value
            call = _called(ctx, parent)
            key = _string_key(call.args[0].value) if call is not None and call.args else None
            if attr == "get" and key:
                reads.append(_Read(call, "get", key))
            elif attr in names.PREDICTION_METHODS or attr.startswith("_"):
                methods.append((node, attr, call))
            else:
                reads.append(_Read(parent, "attr", attr))
        elif isinstance(parent, cst.Subscript) and parent.value is node and _subscript_key(parent):
            reads.append(_Read(parent, "subscript", _subscript_key(parent) or ""))
        elif _builtin_key(ctx, node, "getattr"):
            reads.append(
                _Read(ctx.parents[parent], "getattr", _builtin_key(ctx, node, "getattr") or "")
            )
        elif _builtin_key(ctx, node, "hasattr"):
            # hasattr(pred, "outline"): whether the program gave that output field.
            reads.append(
                _Read(ctx.parents[parent], "hasattr", _builtin_key(ctx, node, "hasattr") or "")
            )
        elif (
            isinstance(parent, cst.Arg)
            and not parent.star
            and handed_to_module_function(ctx, ctx.parents[parent])
        ):
            # Handed on whole to the module's own code: kept under its name, rebuilt as
            # a dspy.Prediction (rewrite.py).
            ctx.plan.dspy_prediction = True
            ctx.plan.renames.pop(node, None)
            ctx.plan.dspy_prediction_fields |= _fields_read_by_callee(ctx, parent)
        else:
            ctx.plan.note(ctx.statement_of(node), "prediction_used", {"name": name})
    fields = list(dict.fromkeys(read.field for read in reads))
    single = len(fields) <= 1
    for read in reads:
        quote = quote_for(ctx, read.node)
        ctx.plan.replace[read.node] = _read_replacement(read, target, single, quote)
    for node, attr, call in methods:
        if not single and attr in names.DICT_METHODS:
            continue
        if not single and attr in ("toDict", "copy") and call is not None and not call.args:
            ctx.plan.replace[call] = _as_dict()
            continue
        ctx.plan.note(ctx.statement_of(node), "prediction_used", {"name": name})
    unknown = [read for read in reads if read.field not in example_fields]
    if not single and unknown:
        # Several fields read: output is a dict of them only if the dataset names them
        # all as output columns, which fields the gold example also has are sure to be.
        ctx.plan.note(ctx.statement_of(unknown[0].node), "prediction_fields", {"fields": fields})
    return single and bool(reads) and not methods


def _builtin_key(ctx: Context, node: cst.Name, builtin: str) -> str | None:
    """The field of `getattr(pred, "field"[, default])` or `hasattr(pred, "field")`."""
    parent = ctx.parents[node]
    if not isinstance(parent, cst.Arg):
        return None
    call = ctx.parents[parent]
    if (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value == builtin
        and len(call.args) in ((2, 3) if builtin == "getattr" else (2,))
        and call.args[0] is parent
    ):
        return _string_key(call.args[1].value)
    return None


def _read_replacement(read: _Read, target: str, single: bool, quote: str):
    def replace(updated: cst.CSTNode) -> cst.CSTNode:
        parens = {"lpar": updated.lpar, "rpar": updated.rpar}  # type: ignore[attr-defined]
        if read.kind == "hasattr":
            operator, left = (
                (cst.IsNot(), cst.Name(target)) if single else (cst.In(), _key(read.field, quote))
            )
            right = cst.Name("None") if single else cst.Name(target)
            return cst.Comparison(
                left=left, comparisons=[cst.ComparisonTarget(operator, right)], **parens
            )
        if single:
            return cst.Name(target, **parens)
        if read.kind == "attr":
            return _subscript(cst.Name(target), read.field, quote).with_changes(**parens)
        if read.kind == "getattr":
            assert isinstance(updated, cst.Call)
            if len(updated.args) == 2:
                return _subscript(cst.Name(target), read.field, quote).with_changes(**parens)
            default = updated.args[2].value
            return cst.Call(
                func=cst.Attribute(cst.Name(target), cst.Name("get")),
                args=[
                    cst.Arg(
                        _key(read.field, quote),
                        comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                    ),
                    cst.Arg(default),
                ],
                **parens,
            )
        return updated  # output["field"] and output.get("field") read a dict as they are

    return replace
