"""What the commands share: the API client from the flags, a file read or refused."""

from __future__ import annotations

from pathlib import Path

from skynet_client import config
from skynet_client.exits import USAGE, Stop
from skynet_client.http import Api


def api(args, *, need_token: bool = True) -> Api:
    return Api(config.server(args.url, args.token, need_token=need_token), lang=args.language)


def read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise Stop(USAGE, f"{what} not found: {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise Stop(USAGE, f"Cannot read {what} {path}: {error}") from None


def read_bytes(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise Stop(USAGE, f"{what} not found: {path}") from None
    except OSError as error:
        raise Stop(USAGE, f"Cannot read {what} {path}: {error}") from None
