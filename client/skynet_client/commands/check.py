"""`skynet check metric.py`: the contract check of a metric.py, in the server's worker."""

from __future__ import annotations

import argparse
from pathlib import Path

from skynet_client import helpers, project
from skynet_client.commands.common import add_reports, api, read_text
from skynet_client.exits import FAILED, PASSED, USAGE, Stop
from skynet_client.reports import annotations, junit, of_check, summary
from skynet_client.waiting import wait_for_check
from skynet_client.words import _


def seconds(text: str) -> int:
    """--timeout's value: whole seconds within the server's range (1 to 600)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("expected whole seconds, got {value}").format(value=repr(text))
        ) from None
    if not 1 <= value <= 600:
        raise argparse.ArgumentTypeError(
            _("must lie between 1 and 600 seconds, got {value}").format(value=value)
        )
    return value


def add(commands, common) -> None:
    parser = commands.add_parser(
        "check",
        parents=[common],
        help="run the contract check on a metric.py",
        description="Run the 3-case contract check on METRIC in the workbench's worker and "
        "print its stages, cases and hints. Exit 0 when it passed, 1 when it failed.",
    )
    parser.add_argument(
        "metric", metavar="METRIC", nargs="?", help="the metric.py to check (else skynet.toml's)"
    )
    parser.add_argument(
        "--cases", metavar="FILE", help="three sample cases as JSON Lines (else the defaults)"
    )
    parser.add_argument(
        "--with",
        dest="helpers",
        action="append",
        metavar="PATH",
        help="a helper module METRIC imports, sent beside it (repeatable): a folder adds "
        "its .py files by their paths from its parent (--with src/ gives "
        "src/evaluation.py), a .py file its path from METRIC's folder",
    )
    parser.add_argument("--reflection-model", default="", help="a model id of the server's")
    parser.add_argument("--metric-model", default="", help="a model id of the server's")
    parser.add_argument(
        "--timeout",
        type=seconds,
        help="seconds per call, 1 to 600 (default 60)",
    )
    parser.add_argument(
        "--add-imports",
        action="store_true",
        help="first add to METRIC the imports of the names it uses but never imports "
        "(as the playground's Add the missing imports does)",
    )
    add_reports(parser)
    project.add_option(parser)
    parser.set_defaults(func=run)


def run(args, output) -> int:
    project.apply_check(args, project.load(args), seconds)
    project.require(args, "metric")
    body = {
        "source": read_text(args.metric, "metric.py"),
        "timeout_s": args.timeout,
        "reflection_model": args.reflection_model,
        "metric_model": args.metric_model,
    }
    if args.cases:
        body["cases_jsonl"] = read_text(args.cases, _("The cases file"))
    if args.helpers:
        body["files"] = helpers.collect(args.helpers, args.metric)
    with api(args) as client:
        if args.add_imports:
            body["source"] = add_imports(client, args.metric, body["source"], output)
        check = client.post("/checks", body)
        check = wait_for_check(client, check, output, cancel=args.cancel_on_interrupt)
    report(check, output, metric=args.metric)
    ci_reports(check, args)
    return PASSED if check["passed"] else FAILED


def add_imports(client, path: str, source: str, output) -> str:
    """METRIC with the server's import lines added, written back to the file when any
    were; what was done is said on stderr in the server's words."""
    fixed = client.post("/metrics/add-imports", {"source": source})
    if fixed["added"]:
        try:
            Path(path).write_text(fixed["source"], encoding="utf-8")
        except OSError as error:
            raise Stop(
                USAGE, _("Cannot write {file}: {error}").format(file=path, error=error)
            ) from None
    output.note(fixed["message"])
    return fixed["source"]


def ci_reports(check: dict, args) -> None:
    """The JUnit file, the Markdown summary and, on GitHub Actions, the annotations."""
    if args.junit:
        junit.write(of_check.suite(check, args.metric), args.junit)
    summary.write(summary.check_markdown(check, first_line(check)), args.summary)
    if annotations.on_github() and not check["passed"]:
        for found in of_check.annotations(check, args.metric):
            print(annotations.command(found), flush=True)


def first_line(check: dict) -> str:
    return _("PASSED") if check["passed"] else f"{_('FAILED')}  {check['message']}"


def report(check: dict, output, *, metric: str = "metric.py") -> None:
    output.document(check)
    mark = _("PASSED") if check["passed"] else _("FAILED")
    result = check.get("result") or {}
    # The verdict's words once: a pass says only PASSED, and a failed stage's words stay
    # on that stage's line; a check that ended otherwise (cancelled, lost) says why here.
    stage_words = {f"{stage['name']}: {stage['message']}" for stage in result.get("stages", [])}
    if check["passed"]:
        output.line(mark, style="bold green")
    elif output.quiet or check["message"] not in stage_words:
        # With -q this line is all that is printed: it says why.
        output.failure(first_line(check))
    else:
        output.failure(mark)
    for stage in result.get("stages", []):
        said = f": {stage['message']}" if stage.get("message") else ""
        output.line(f"  {stage['status_label']:<10} {stage['name']}{said}")
        for detail in stage.get("details") or []:
            output.line(f"      {detail}")
        if stage.get("add_imports_label"):
            # The playground's one-click fix; here, the option that does the same.
            fix = f"{stage['add_imports_label']}: --add-imports"
            output.line("      " + _("fix: {text}").format(text=fix))
    if result.get("looks_like_message"):
        # What the file looks like, and Convert where it would change it.
        output.line(f"  {result['looks_like_message']}")
        if (result.get("looks_like") or {}).get("convertible"):
            fix = f"skynet convert {metric} --write"
            output.line("      " + _("fix: {text}").format(text=fix))
    for case in result.get("cases", []):
        parts = [case["status_label"]]
        if case.get("score") is not None:
            parts.append(_("score {score}").format(score=case["score"]))
        if case.get("message"):
            parts.append(case["message"])
        output.line(f"  #{case['number']}  " + " · ".join(parts))
        if case.get("feedback"):
            output.line("      " + _("feedback: {text}").format(text=case["feedback"]))
        if case.get("fix"):
            # The return line that keeps the contract, built from the case's own values.
            output.line("      " + _("fix: {text}").format(text=case["fix"]))
    for hint in result.get("hints", []):
        output.line("  " + _("hint: {text}").format(text=hint["message"]))
    output.line(f"  {check['page']}")
