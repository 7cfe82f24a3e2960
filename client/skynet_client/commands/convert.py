"""`skynet convert metric.py`: a DSPy GEPA or gepa metric rewritten into the contract by
the server's converter (the Convert page's conversion), with its notes."""

from __future__ import annotations

from pathlib import Path

from skynet_client.commands.common import api, read_text
from skynet_client.exits import PASSED, USAGE, Stop
from skynet_client.words import _


def add(commands, common) -> None:
    parser = commands.add_parser(
        "convert",
        parents=[common],
        help="convert a DSPy or gepa metric to the contract",
        description="Convert METRIC, a metric written for DSPy GEPA or gepa, to the "
        "contract's score(input, output, expected), as the playground's Convert does. "
        "The converted metric.py goes to stdout, the notes to stderr; --write puts it in "
        "METRIC instead.",
    )
    parser.add_argument("metric", metavar="METRIC", help="the metric.py to convert")
    parser.add_argument(
        "--write", action="store_true", help="write the conversion to METRIC in place"
    )
    parser.add_argument(
        "--function",
        metavar="NAME",
        help="where several functions of METRIC could be the metric, the one to convert",
    )
    parser.set_defaults(func=run)


def run(args, output) -> int:
    source = read_text(args.metric, "metric.py")
    with api(args) as client:
        body = {"source": source}
        if args.function:
            body["metric"] = args.function
        converted = client.post("/metrics/convert", body)
    output.document(converted)
    if args.write and converted["changed"]:
        try:
            Path(args.metric).write_text(converted["source"], encoding="utf-8")
        except OSError as error:
            raise Stop(
                USAGE, _("Cannot write {file}: {error}").format(file=args.metric, error=error)
            ) from None
    elif not args.write:
        output.line(converted["source"].rstrip("\n"))
    for note in converted["notes"]:
        where = f"{args.metric}:{note['line']}: " if note["line"] else ""
        output.note(where + note["message"])
    return PASSED
