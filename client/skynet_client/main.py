"""`skynet`: the workbench from a terminal, a script or a CI job.

Exit codes: 0 passed; 1 the metric failed its check, an evaluation had a case that was
not valid (beyond --max-invalid) or fell below --min-mean, or a run failed; 2 a usage
error, a file that cannot be read, or a server that cannot be reached, refuses the
request or is not the workbench; 130 Ctrl+C stopped the watching (what was watched goes
on, unless --cancel-on-interrupt).
"""

from __future__ import annotations

import argparse
import sys

from skynet_client import __version__, words
from skynet_client.commands import (
    accept_prompt,
    align,
    check,
    convert,
    evaluate,
    init,
    labels,
    login,
    run,
)
from skynet_client.exits import INTERRUPTED, USAGE, Stop
from skynet_client.output import Output
from skynet_client.words import _

COMMANDS = (login, init, check, convert, evaluate, run, align, accept_prompt, labels)


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse exits 2 on a usage error, as we do
        self.print_usage(sys.stderr)
        raise Stop(USAGE, f"{self.prog}: {message}")


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--url", help="the workbench's address (else SKYNET_URL, else login's)")
    common.add_argument(
        "--token", help="an API token (else SKYNET_TOKEN, else login's); never printed"
    )
    common.add_argument("--json", action="store_true", help="print one JSON document")
    common.add_argument(
        "--language", choices=("en", "es", "hi"), help="the server's messages' language"
    )
    common.add_argument(
        "--quiet", "-q", action="store_true", help="print nothing but errors and a failure's reason"
    )
    common.add_argument(
        "--cancel-on-interrupt",
        action="store_true",
        help="Ctrl+C cancels what is watched on the server too (else it goes on there)",
    )
    top = Parser(
        prog="skynet",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--version", action="version", version=f"skynet {__version__}")
    commands = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True
    for command in COMMANDS:
        command.add(commands, common)
    return top


def asked_language(argv: list[str]) -> str | None:
    """--language's value, read before the parsing, so that its errors speak it too."""
    for index, word in enumerate(argv):
        if word.startswith("--language="):
            return word.partition("=")[2]
        if word == "--language" and index + 1 < len(argv):
            return argv[index + 1]
    return None


def main(argv: list[str] | None = None) -> int:
    given = argv if argv is not None else sys.argv[1:]
    words.use(words.language(asked_language(given)))
    output = Output(as_json="--json" in given)
    try:
        args = parser().parse_args(argv)
        output = Output(as_json=args.json, quiet=args.quiet)
        return args.func(args, output)
    except Stop as stop:
        if output.as_json:
            output.document({"error": stop.error or {"code": "usage", "message": stop.message}})
        output.error(stop.message)
        return stop.code
    except KeyboardInterrupt:
        output.error(_("Interrupted."))
        return INTERRUPTED
