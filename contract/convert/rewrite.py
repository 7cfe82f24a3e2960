"""The rewrite pass: the metric function becomes the contract's `score`.

Its signature becomes (input, output, expected=None); its first statements bind what the
old parameters held (the gold example or gepa's data as a dict of the case's columns;
the trace parameters as None where code still reads them); the reads of the example and
the prediction and every return are rewritten as planned. A callable class keeps its
class, with its __call__ rewritten the same way, and a module-level `score` calls an
instance of it.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper

from contract.convert import names
from contract.convert.evaluator import evaluator_statements
from contract.convert.fields import plan_example, plan_prediction
from contract.convert.notes import NoteBook
from contract.convert.plan import Context
from contract.convert.recognise import Candidate, Recognition
from contract.convert.return_plan import plan_returns

EXAMPLE_COMMENTS = {
    "dspy": "# DSPy's gold example held the case's input columns and its expected values.",
    "gepa": "# gepa's data held the case's input and its expected answer, as gepa's default adapter reads a dataset.",
}
DSPY_EXAMPLE_COMMENT = (
    "# DSPy's gold example, rebuilt from the case's columns: the metric hands it on whole."
)
DSPY_PREDICTION_COMMENT = (
    "# DSPy's prediction, rebuilt from the output's fields: the metric hands it on whole."
)
STATE_COMMENT = (
    "# gepa's LangChain adapter passed the rollout state; its last message held the response."
)
# Above the line that keeps the old behaviour on an empty output (fields.plan_prediction).
EMPTY_COMMENTS = {
    "dspy": '# A DSPy prediction\'s empty field was ""; the workbench gives None.',
    "gepa": '# gepa\'s response was "" when empty; the workbench gives None.',
}


def rewrite(
    wrapper: MetadataWrapper,
    chosen: Candidate,
    others: list[Candidate],
    book: NoteBook,
) -> cst.Module:
    module = wrapper.module
    node = module.body[chosen.index]
    function = node if chosen.recognition.kind == "function" else _call_method(node)
    ctx = Context(wrapper, function, chosen.recognition)
    rec = chosen.recognition

    target = "output"
    helpers = _Helpers(ctx, rec)
    if helpers.state:
        target = rec.prediction  # stays: a rollout state whose last message is output
    elif rec.prediction != "output" and ctx.mentions("output"):
        target = rec.prediction  # the function has an `output` of its own: keep the name
    example_fields = plan_example(ctx)
    as_text = plan_prediction(ctx, target, example_fields)
    plan_returns(ctx)
    alias = _plan_old_name(ctx, node) if rec.kind == "function" else False
    for other in others:
        ctx.plan.note(
            module.body[other.index],
            "other_metric_functions",
            {"name": other.recognition.name, "chosen": rec.name},
        )

    bindings = _bindings(ctx, target, book, as_text=as_text, helpers=helpers)
    transformer = _Rewriter(ctx, book, node, bindings, alias, helpers)
    return module.visit(transformer)


class _Helpers:
    """Module-level helpers a gepa evaluator's conversion needs: one building gepa's data
    instance from a case, and one giving the response as a rollout's last message. Each
    is named so as not to clash with a name the module has."""

    def __init__(self, ctx: Context, rec: Recognition) -> None:
        gepa = rec.framework == "gepa"
        self.data = gepa and bool(ctx.accesses(rec.example))
        self.state = gepa and rec.prediction in names.STATE_NAMES
        taken = ctx.scopes[ctx.module]
        self.data_name = _free("_gepa_data", taken)
        self.message_name = _free("_Message", taken)

    def statements(self, config) -> list[cst.BaseStatement]:
        two_blank = [cst.EmptyLine(), cst.EmptyLine()]
        found = []
        if self.data:
            found.append(GEPA_DATA.format(name=self.data_name))
        if self.state:
            found.append(MESSAGE.format(name=self.message_name))
        return [
            cst.parse_statement(text, config).with_changes(leading_lines=two_blank)
            for text in found
        ]


def _free(name: str, taken) -> str:
    while name in taken:
        name += "_"
    return name


# gepa's data as gepa's default adapter reads a dataset (DefaultDataInst).
GEPA_DATA = '''def {name}(input, expected):
    """gepa's data instance for a case: "input" is the input column (a "name: value" line
    each when there are several), "answer" the expected answer (the "answer" column, else
    the first expected column) and "additional_context" the other expected columns as
    text. Every column is also there under its own name."""
    expected = dict(expected or {{}})
    key = "answer" if "answer" in expected else next(iter(expected), None)
    given = expected.get("additional_context")
    context = {{k: str(v) for k, v in given.items()}} if isinstance(given, dict) else {{}}
    for column, value in expected.items():
        if column not in (key, "additional_context"):
            context[column] = str(value)
    if "input" in input:
        text = input["input"]
    elif len(input) == 1:
        text = next(iter(input.values()))
    else:
        text = "\\n".join(f"{{k}}: {{v}}" for k, v in input.items())
    answer = expected[key] if key is not None else ""
    return {{**input, **expected, "input": text, "answer": answer, "additional_context": context}}
'''

MESSAGE = '''class {name}(str):
    """The response as a LangChain rollout's last message: its text, with .content."""

    @property
    def content(self):
        return str(self)
'''


def _call_method(cls: cst.CSTNode) -> cst.FunctionDef:
    assert isinstance(cls, cst.ClassDef) and isinstance(cls.body, cst.IndentedBlock)
    return next(
        s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__call__"
    )


def _plan_old_name(ctx: Context, function: cst.CSTNode) -> bool:
    """Whether the module still uses the metric's old name (an alias keeps it working);
    calls of it get a note, since they pass the old arguments."""
    old = ctx.recognition.name
    if old == "score":
        return False
    module_scope = ctx.scopes[ctx.module]
    used = False
    for assignment in module_scope.assignments[old] if old in module_scope else ():
        for access in assignment.references:
            node = access.node
            if _inside(ctx, node, function):
                continue
            used = True
            parent = ctx.parents.get(node)
            if isinstance(parent, cst.Call) and parent.func is node:
                ctx.plan.note(ctx.statement_of(node), "old_name_called", {"name": old})
    return used


def _inside(ctx: Context, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
    while node is not None:
        if node is ancestor:
            return True
        node = ctx.parents.get(node)
    return False


def _bindings(
    ctx: Context, target: str, book: NoteBook, *, as_text: bool, helpers: _Helpers
) -> list[cst.SimpleStatementLine]:
    """The statements the new function starts with; with `as_text`, one that gives the
    old prediction's "" for an empty output."""
    rec = ctx.recognition
    config = ctx.module.config_for_parsing
    statements = []
    if helpers.data:
        first = cst.parse_statement(
            f"{rec.example} = {helpers.data_name}(input, expected)\n", config
        )
        comment = cst.EmptyLine(comment=cst.Comment(EXAMPLE_COMMENTS["gepa"]))
        statements.append(first.with_changes(leading_lines=[comment]))
    elif ctx.accesses(rec.example) and ctx.plan.dspy_example:
        first = cst.parse_statement(
            f"{rec.example} = dspy.Example({{**input, **(expected or {{}})}})\n", config
        )
        comment = cst.EmptyLine(comment=cst.Comment(DSPY_EXAMPLE_COMMENT))
        statements.append(first.with_changes(leading_lines=[comment]))
    elif ctx.accesses(rec.example):
        first = cst.parse_statement(f"{rec.example} = {{**input, **(expected or {{}})}}\n", config)
        comment = cst.EmptyLine(comment=cst.Comment(EXAMPLE_COMMENTS[rec.framework]))
        statements.append(first.with_changes(leading_lines=[comment]))
    if helpers.state:
        state = cst.parse_statement(
            f'{target} = {{"messages": [{helpers.message_name}("" if output is None else output)]}}\n',
            config,
        )
        comment = cst.EmptyLine(comment=cst.Comment(STATE_COMMENT))
        statements.append(state.with_changes(leading_lines=[comment]))
    elif as_text:
        empty = cst.parse_statement(f'{target} = "" if output is None else output\n', config)
        comment = cst.EmptyLine(comment=cst.Comment(EMPTY_COMMENTS[rec.framework]))
        statements.append(empty.with_changes(leading_lines=[comment]))
    elif target != "output":
        statements.append(cst.parse_statement(f"{target} = output\n", config))
    if ctx.plan.dspy_prediction and rec.prediction not in (target, "output"):
        fields = sorted(ctx.plan.dspy_prediction_fields)
        # A one-field output is that field's value: the field the code reads names it.
        single = f"dspy.Prediction({fields[0]}=output)" if len(fields) == 1 else "output"
        rebuilt = cst.parse_statement(
            f"{rec.prediction} = dspy.Prediction(**output) if isinstance(output, dict) "
            f"else {single}\n",
            config,
        )
        comment = cst.EmptyLine(comment=cst.Comment(DSPY_PREDICTION_COMMENT))
        statements.append(rebuilt.with_changes(leading_lines=[comment]))
    for name in rec.dropped:
        if not ctx.accesses(name):
            continue
        if name in names.TRACE_NAMES:
            code, value = f"{name}_used", "None"
        else:  # *args or **kwargs, which the contract never fills
            code = "extra_arguments_used"
            value = "()" if _is_star_args(ctx.function, name) else "{}"
        statement = cst.parse_statement(f"{name} = {value}\n", config)
        statements.append(
            statement.with_changes(leading_lines=[book.comment(code, {"name": name})])
        )
    return statements


def _is_star_args(function: cst.FunctionDef, name: str) -> bool:
    star = function.params.star_arg
    return isinstance(star, cst.Param) and star.name.value == name


def _parameters(function: cst.FunctionDef, rec: Recognition) -> cst.Parameters:
    """(input, output, expected=None), after self for a __call__, then the function's
    own options with their defaults (`frac=1.0`), which the contract leaves alone."""
    no_space = cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
    )
    params = [
        cst.Param(cst.Name("input")),
        cst.Param(cst.Name("output")),
        cst.Param(cst.Name("expected"), default=cst.Name("None"), equal=no_space),
    ]
    old = function.params
    positional = [*old.posonly_params, *old.params]
    if rec.kind == "class":
        params.insert(0, cst.Param(positional[0].name))  # self
    params += [_plain(p) for p in positional if p.name.value in rec.kept]
    keyword = [_plain(p) for p in old.kwonly_params if p.name.value in rec.kept]
    if keyword:
        return cst.Parameters(params=params, star_arg=cst.ParamStar(), kwonly_params=keyword)
    return cst.Parameters(params=params)


def _plain(param: cst.Param) -> cst.Param:
    """A parameter without the commas and line breaks of its old place."""
    return param.with_changes(
        comma=cst.MaybeSentinel.DEFAULT,
        whitespace_after_star=cst.SimpleWhitespace(""),
        whitespace_after_param=cst.SimpleWhitespace(""),
    )


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )


def _with_bindings(
    body: cst.BaseSuite, bindings: list[cst.SimpleStatementLine]
) -> cst.IndentedBlock:
    if isinstance(body, cst.SimpleStatementSuite):
        small = [s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in body.body]
        body = cst.IndentedBlock(
            body=[cst.SimpleStatementLine(body=[s]) for s in small],
            header=body.trailing_whitespace,
        )
    assert isinstance(body, cst.IndentedBlock)
    statements = list(body.body)
    at = 1 if statements and _is_docstring(statements[0]) else 0
    return body.with_changes(body=[*statements[:at], *bindings, *statements[at:]])


class _Rewriter(cst.CSTTransformer):
    def __init__(
        self,
        ctx: Context,
        book: NoteBook,
        node: cst.CSTNode,
        bindings: list[cst.SimpleStatementLine],
        alias: bool,
        helpers: _Helpers,
    ) -> None:
        super().__init__()
        self.ctx = ctx
        self.book = book
        self.node = node
        self.bindings = bindings
        self.alias = alias
        self.helpers = helpers

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        plan = self.ctx.plan
        if original in plan.renames:
            result = result.with_changes(value=plan.renames[original])
        if original in plan.replace:
            result = plan.replace[original](result)
        if original is self.ctx.function:
            result = self._function(result)
        if original in plan.comments and hasattr(result, "leading_lines"):
            comments = [self.book.comment(code, params) for code, params in plan.comments[original]]
            result = result.with_changes(leading_lines=[*result.leading_lines, *comments])
        if isinstance(original, cst.Module):
            result = self._module(original, result)
        return result

    def _function(self, function: cst.FunctionDef) -> cst.FunctionDef:
        rec = self.ctx.recognition
        changes = {
            "params": _parameters(function, rec),
            "whitespace_before_params": cst.SimpleWhitespace(""),
            "returns": None,
            "body": _with_bindings(function.body, self.bindings),
        }
        if rec.kind == "function":
            changes["name"] = cst.Name("score")
        return function.with_changes(**changes)

    def _module(self, original: cst.Module, module: cst.Module) -> cst.Module:
        rec = self.ctx.recognition
        config = module.config_for_parsing
        body = list(module.body)
        index = next(i for i, s in enumerate(original.body) if s is self.node)
        two_blank = [cst.EmptyLine(), cst.EmptyLine()]
        if rec.kind == "function" and self.alias:
            alias = cst.parse_statement(f"{rec.name} = score\n", config)
            comment = cst.EmptyLine(
                comment=cst.Comment("# The metric's old name, which this module still uses.")
            )
            body.insert(index + 1, alias.with_changes(leading_lines=[*two_blank, comment]))
        if rec.kind == "class":
            body += evaluator_statements(self.ctx, self.book, original)
        helpers = self.helpers.statements(config)
        if helpers:
            # Before the metric; the metric keeps the blank lines it had before it.
            metric = body[index]
            body[index] = metric.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
            helpers[0] = helpers[0].with_changes(leading_lines=metric.leading_lines)
            body[index:index] = helpers
        return module.with_changes(body=body)
