"""`skynet check metric.py`: the contract check of a metric.py, in the server's worker."""

from __future__ import annotations

import argparse

from skynet_client import project
from skynet_client.commands.common import add_reports, api, read_text
from skynet_client.exits import FAILED, PASSED
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
    parser.add_argument("--reflection-model", default="", help="a model id of the server's")
    parser.add_argument("--metric-model", default="", help="a model id of the server's")
    parser.add_argument(
        "--timeout",
        type=seconds,
        help="seconds per call, 1 to 600 (default 60)",
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
    with api(args) as client:
        check = client.post("/checks", body)
        check = wait_for_check(client, check, output, cancel=args.cancel_on_interrupt)
    report(check, output)
    ci_reports(check, args)
    return PASSED if check["passed"] else FAILED


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


def report(check: dict, output) -> None:
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
