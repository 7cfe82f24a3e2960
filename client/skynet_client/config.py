"""Where the server is and which token to send: a flag, else an environment variable
(SKYNET_URL, SKYNET_TOKEN), else what `skynet login` saved in the config file
($SKYNET_CONFIG, else $XDG_CONFIG_HOME/skynet/config.json), readable by its owner only."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from skynet_client.exits import USAGE, Stop
from skynet_client.words import _

DEFAULT_URL = "http://127.0.0.1:8000"


def config_path() -> Path:
    explicit = os.environ.get("SKYNET_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "skynet" / "config.json"


def saved() -> dict:
    try:
        return json.loads(config_path().read_text())
    except (OSError, ValueError):
        return {}


def save(url: str, token: str) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # Made 0600 before the token is written into it.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump({"url": url, "token": token}, handle)
    return path


@dataclass(frozen=True)
class Server:
    url: str
    token: str


def server(
    url_flag: str | None,
    token_flag: str | None,
    *,
    need_token: bool = True,
    project_url: str | None = None,
) -> Server:
    """The flag, else the environment, else skynet.toml's [server] url, else what `skynet
    login` saved, else the local workbench."""
    stored = saved()
    url = (
        url_flag or os.environ.get("SKYNET_URL") or project_url or stored.get("url") or DEFAULT_URL
    )
    # A token pasted into a CI secret often ends in a newline: it is no part of the token.
    token = (token_flag or os.environ.get("SKYNET_TOKEN") or stored.get("token") or "").strip()
    if need_token and not token:
        raise Stop(
            USAGE,
            _(
                "No API token: pass --token, set SKYNET_TOKEN, or run `skynet login`. "
                "Create a token on the workbench's API tokens page."
            ),
        )
    if not token.isascii() or not token.isprintable() or " " in token:
        # Said without the token itself: a CI log is read by more people than its owner.
        raise Stop(
            USAGE,
            _(
                "The API token holds characters no token has (spaces, control characters or "
                "letters outside ASCII): copy it again from the workbench's API tokens page."
            ),
        )
    return Server(url.rstrip("/"), token)
