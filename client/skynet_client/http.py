"""The API over HTTP: JSON in and out, the server's errors as Stop (exit 2) with the
server's own words, in the language asked for (--language, else LANG).

Every answer of the workbench's API says its version (the Skynet-Api-Version header): an
answer without it comes from another server (a sign-in page, another JSON service) and
is said to be so, exit 2, never read as a failed metric; another major version exits 2
and another minor one is warned of, once."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import httpx

from skynet_client import __version__, words
from skynet_client.config import Server
from skynet_client.exits import USAGE, Stop
from skynet_client.words import _

# The API version this client was written for (api/version.py on the server).
API_VERSION = "1.1"
VERSION_HEADER = "Skynet-Api-Version"


def _stderr(text: str) -> None:
    print(text, file=sys.stderr)


class Api:
    def __init__(
        self, server: Server, *, lang: str | None = None, timeout: float = 60.0, warn=_stderr
    ) -> None:
        self.server = server
        self.warn = warn
        self.warned = False
        headers = {
            "Accept": "application/json",
            "Accept-Language": lang or words.language(),
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
                raise self.unreachable(error) from None
            self.recognise(response)
            if response.status_code != 429 or attempt == 3:
                break
            time.sleep(min(30.0, float(response.headers.get("Retry-After") or 5)))
        if response.status_code >= 400:
            raise failure(response)
        return response

    def unreachable(self, error: Exception) -> Stop:
        # An error's text may quote a header it could not send: never the token.
        said = f"{type(error).__name__}: {error}"
        if self.server.token:
            said = said.replace(self.server.token, "skn_…")
        return Stop(USAGE, _("Cannot reach {url}: {error}").format(url=self.server.url, error=said))

    def recognise(self, response: httpx.Response) -> None:
        """Stop unless the workbench's API answered, in a version this client reads."""
        version = response.headers.get(VERSION_HEADER)
        if version is None:
            kind = response.headers.get("Content-Type", "no content type").split(";")[0]
            raise Stop(
                USAGE,
                _(
                    "{url} is not a Skynet workbench: it answered {status} {kind}. Check "
                    "--url or SKYNET_URL."
                ).format(url=self.server.url, status=response.status_code, kind=kind),
            )
        theirs, ours = version.split("."), API_VERSION.split(".")
        if theirs[0] != ours[0]:
            raise Stop(
                USAGE,
                _(
                    "The workbench at {url} speaks API version {theirs}, and this skynet "
                    "({client}) speaks {ours}. {install}"
                ).format(
                    url=self.server.url,
                    theirs=version,
                    client=__version__,
                    ours=API_VERSION,
                    install=self.install_hint(),
                ),
            )
        if version != API_VERSION and not self.warned:
            self.warned = True
            self.warn(
                _(
                    "The workbench speaks API version {theirs}, this skynet {ours}: it may "
                    "miss what is new. {install}"
                ).format(theirs=version, ours=API_VERSION, install=self.install_hint())
            )

    def install_hint(self) -> str:
        """How to install the client the workbench serves (its index says where)."""
        try:
            wheel = self.http.get("/").json()["client"]["wheel"]
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            return _("Install the skynet client that comes with that workbench.")
        return _("Install the client that comes with it: pip install {wheel}").format(wheel=wheel)

    def get(self, path: str, **kwargs) -> dict:
        return self.request("GET", path, **kwargs).json()

    def post(self, path: str, body: dict | None = None, **kwargs) -> dict:
        return self.request("POST", path, json=body if body is not None else {}, **kwargs).json()

    def download(self, path: str, target: Path) -> int:
        """Write what `path` answers to the file `target` as it arrives; its size."""
        written = 0
        try:
            with self.http.stream("GET", path) as response:
                self.recognise(response)
                if response.status_code >= 400:
                    response.read()
                    raise failure(response)
                with target.open("wb") as handle:
                    for chunk in response.iter_bytes():
                        written += handle.write(chunk)
        except httpx.HTTPError as error:
            raise self.unreachable(error) from None
        except OSError as error:
            raise Stop(
                USAGE, _("Cannot write {file}: {error}").format(file=target, error=error)
            ) from None
        return written


def failure(response: httpx.Response) -> Stop:
    """The server's error as a Stop: its message, and the field it names."""
    try:
        error = response.json()
        message = error["message"]
    except (ValueError, KeyError, TypeError):
        error = {"code": f"http_{response.status_code}", "message": "", "field": None}
        message = _("The server answered {status} {reason}.").format(
            status=response.status_code, reason=response.reason_phrase
        )
    return Stop(USAGE, message, error=error)
