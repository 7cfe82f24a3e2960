"""`skynet login`: test a token against the server and save both for later commands."""

from __future__ import annotations

import getpass
import os
import sys

from skynet_client import config
from skynet_client.commands.common import api
from skynet_client.exits import PASSED, USAGE, Stop
from skynet_client.words import _


def add(commands, common) -> None:
    parser = commands.add_parser(
        "login",
        parents=[common],
        help="save the server's address and your API token",
        description="Test an API token and save it, with the address, in "
        "~/.config/skynet/config.json (readable by you only). The token comes from --token, "
        "SKYNET_TOKEN, the first line of standard input (--token-stdin), or a prompt that "
        "does not echo it.",
    )
    parser.add_argument("--token-stdin", action="store_true", help="read the token from stdin")
    parser.set_defaults(func=run)


def run(args, output) -> int:
    token = args.token or os.environ.get("SKYNET_TOKEN") or ""
    if args.token_stdin:
        token = sys.stdin.readline().strip()
    elif not token:
        if not sys.stdin.isatty():
            raise Stop(USAGE, _("No token: pass --token-stdin and pipe it, or set SKYNET_TOKEN."))
        token = getpass.getpass(_("API token: ")).strip()
    if not token:
        raise Stop(USAGE, _("No token given."))
    args.token = token
    with api(args) as client:
        me = client.get("/me")
    path = config.save(client.server.url, token)
    output.document({"url": client.server.url, **me, "config": str(path)})
    said = _("Logged in to {url} as {user} (token “{token}”, {scope}). Saved in {file}.")
    output.line(
        said.format(
            url=client.server.url,
            user=me["username"],
            token=me["token_name"],
            scope=me["scope"],
            file=path,
        )
    )
    return PASSED
