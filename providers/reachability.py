"""Whether a model's provider answers at all, tested cheaply and remembered briefly.

The test is one unauthenticated HTTP GET of the endpoint's list of models (OpenAI's and
compatible servers' <base>/models, Anthropic's <base>/v1/models) with a short timeout:
any HTTP answer, even 401 or 404, means a server is there; no connection, or no answer
in time, means a call made now would fail. It sends no key and asks no model anything,
so it costs nothing.

Models are tested per endpoint (many models share one), all endpoints at once, and the
answers kept for CACHE_S seconds per process. `Reachability.of()` never takes much
longer than its timeout, however many endpoints there are: one that has not answered by
then counts as a timeout.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass

import httpx

from providers.catalogue import Model
from providers.clients import base_url

PROBE_TIMEOUT_S = 1.0
CACHE_S = 60.0
# What a probe may add to its timeout (thread start, DNS) before it counts as a timeout.
SLACK_S = 0.2
# "Test again" re-tests an endpoint only when its answer is older than this, so a
# button pressed many times does not become many requests.
RETEST_AFTER_S = 2.0


@dataclass(frozen=True)
class Reach:
    """One endpoint's answer: `code` "" when reachable, else "unreachable" or "timeout";
    `url` is what was asked; `tested_at` a time.monotonic() reading."""

    url: str
    code: str
    tested_at: float
    timeout_s: float = PROBE_TIMEOUT_S

    @property
    def reachable(self) -> bool:
        return not self.code


def probe_url(model: Model, env: Mapping[str, str]) -> str:
    """The URL a model's endpoint is tested with: its list of models."""
    base = base_url(model, env)
    return f"{base}/v1/models" if model.provider == "anthropic" else f"{base}/models"


def probe(url: str, timeout_s: float = PROBE_TIMEOUT_S, clock=time.monotonic) -> Reach:
    """GET `url` once; any HTTP status counts as reachable."""
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout_s), follow_redirects=False) as http:
            http.get(url, headers={"accept": "application/json"})
    except httpx.TimeoutException:
        return Reach(url, "timeout", clock(), timeout_s)
    except (httpx.HTTPError, OSError, ValueError):
        return Reach(url, "unreachable", clock(), timeout_s)
    return Reach(url, "", clock(), timeout_s)


class Reachability:
    """The endpoints' answers of the last `ttl_s` seconds, shared by a process's threads."""

    def __init__(
        self,
        *,
        ttl_s: float = CACHE_S,
        timeout_s: float = PROBE_TIMEOUT_S,
        retest_after_s: float = RETEST_AFTER_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_s = ttl_s
        self.retest_after_s = retest_after_s
        self.timeout_s = timeout_s
        self.clock = clock
        self._known: dict[str, Reach] = {}
        self._lock = threading.Lock()

    def of(self, urls: Iterable[str], *, fresh: bool = False) -> dict[str, Reach]:
        """Every URL's Reach: remembered ones younger than ttl_s as they are, the others
        tested now, all at once. `fresh` (a "Test again") keeps only those younger than
        retest_after_s."""
        wanted = list(dict.fromkeys(urls))
        now = self.clock()
        keep_s = self.retest_after_s if fresh else self.ttl_s
        with self._lock:
            known = {
                url: reach
                for url in wanted
                if (reach := self._known.get(url)) is not None and now - reach.tested_at < keep_s
            }
        missing = [url for url in wanted if url not in known]
        if missing:
            tested = self._test(missing)
            with self._lock:
                self._known.update(tested)
            known.update(tested)
        return {url: known[url] for url in wanted}

    def forget(self) -> None:
        with self._lock:
            self._known.clear()

    def _test(self, urls: list[str]) -> dict[str, Reach]:
        pool = ThreadPoolExecutor(max_workers=len(urls), thread_name_prefix="reachability")
        try:
            futures = {url: pool.submit(probe, url, self.timeout_s, self.clock) for url in urls}
            wait_for(futures.values(), timeout=self.timeout_s + SLACK_S)
            return {
                url: future.result()
                if future.done()
                else Reach(url, "timeout", self.clock(), self.timeout_s)
                for url, future in futures.items()
            }
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
