"""The API over HTTP: JSON in and out, the server's errors as Stop (exit 2) with the
server's own words, in the language asked for (--language, else LANG)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx

from skynet_client import __version__
from skynet_client.config import Server
from skynet_client.exits import USAGE, Stop


def language() -> str:
    raw = os.environ.get("SKYNET_LANGUAGE") or os.environ.get("LANG") or "en"
    code = raw.split(".")[0].split("_")[0].lower()
    return code if code in ("en", "es", "hi") else "en"


class Api:
    def __init__(self, server: Server, *, lang: str | None = None, timeout: float = 60.0) -> None:
        self.server = server
        headers = {
            "Accept": "application/json",
            "Accept-Language": lang or language(),
            "User-Agent": f"skynet-client/{__version__}",
        }
        if server.token:
            headers["Authorization"] = f"Bearer {server.token}"
        self.http = httpx.Client(base_url=f"{server.url}/api/v1", headers=headers, timeout=timeout)

    def __enter__(self) -> Api:
        return self

    def __exit__(self, *exc) -> None:
        self.http.close()

    def request(self, method: str, path: str, **kwargs) -> httpx.Response:
        # A 429 (a limit of checks a minute, of requests a minute) is waited out a few
        # times, as its Retry-After says, before it is reported.
        for attempt in range(4):
            try:
                response = self.http.request(method, path, **kwargs)
            except httpx.HTTPError as error:
                raise Stop(
                    USAGE, f"Cannot reach {self.server.url}: {type(error).__name__}: {error}"
                ) from None
            if response.status_code != 429 or attempt == 3:
                break
            time.sleep(min(30.0, float(response.headers.get("Retry-After") or 5)))
        if response.status_code >= 400:
            raise failure(response)
        return response

    def get(self, path: str, **kwargs) -> dict:
        return self.request("GET", path, **kwargs).json()

    def post(self, path: str, body: dict | None = None, **kwargs) -> dict:
        return self.request("POST", path, json=body if body is not None else {}, **kwargs).json()

    def download(self, path: str, target: Path) -> int:
        """Write what `path` answers to the file `target` as it arrives; its size."""
        written = 0
        try:
            with self.http.stream("GET", path) as response:
                if response.status_code >= 400:
                    response.read()
                    raise failure(response)
                with target.open("wb") as handle:
                    for chunk in response.iter_bytes():
                        written += handle.write(chunk)
        except httpx.HTTPError as error:
            raise Stop(
                USAGE, f"Cannot reach {self.server.url}: {type(error).__name__}: {error}"
            ) from None
        except OSError as error:
            raise Stop(USAGE, f"Cannot write {target}: {error}") from None
        return written


def failure(response: httpx.Response) -> Stop:
    """The server's error as a Stop: its message, and the field it names."""
    try:
        error = response.json()
        message = error["message"]
    except (ValueError, KeyError, TypeError):
        error = {"code": f"http_{response.status_code}", "message": "", "field": None}
        message = f"The server answered {response.status_code} {response.reason_phrase}."
    return Stop(USAGE, message, error=error)
