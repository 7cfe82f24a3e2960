"""What the commands share: the API client from the flags, a file read or refused."""

from __future__ import annotations

import hashlib
from pathlib import Path

from skynet_client import config
from skynet_client.exits import USAGE, Stop
from skynet_client.http import Api
from skynet_client.words import _


def api(args, *, need_token: bool = True) -> Api:
    server = config.server(
        args.url,
        args.token,
        need_token=need_token,
        project_url=getattr(args, "project_url", None),
    )
    return Api(server, lang=args.language)


def add_reports(parser) -> None:
    """The reports a CI system reads, for check and evaluate."""
    parser.add_argument(
        "--junit",
        metavar="FILE",
        help="write a JUnit XML report: one testcase per stage and case, failures with "
        "the problem, the feedback and the fix",
    )
    parser.add_argument(
        "--summary",
        metavar="FILE",
        help="write a Markdown summary to FILE (on GitHub Actions it is appended to "
        "$GITHUB_STEP_SUMMARY without this)",
    )


def read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise Stop(USAGE, _("{what} not found: {path}").format(what=what, path=path)) from None
    except (OSError, UnicodeDecodeError) as error:
        raise Stop(
            USAGE, _("Cannot read {what} {path}: {error}").format(what=what, path=path, error=error)
        ) from None


def read_bytes(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise Stop(USAGE, _("{what} not found: {path}").format(what=what, path=path)) from None
    except OSError as error:
        raise Stop(
            USAGE, _("Cannot read {what} {path}: {error}").format(what=what, path=path, error=error)
        ) from None


def dataset_on_server(client, name: str, data: bytes, output) -> dict:
    """The server's dataset of this file: the one uploaded before under this name with
    these very bytes (a CI job's every push sends the same file), else a new upload."""
    digest = hashlib.sha256(data).hexdigest()
    for found in client.get("/datasets", params={"sha256": digest, "name": name}):
        output.note(_("Dataset {id} is {name} already.").format(id=found["id"], name=name))
        return client.get(f"/datasets/{found['id']}")
    uploaded = client.request("POST", "/datasets", files={"file": (name, data)}).json()
    output.note(_("Uploaded {name}: dataset {id}.").format(name=name, id=uploaded["id"]))
    return uploaded
