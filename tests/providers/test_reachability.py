"""Whether a provider's endpoint answers: a free GET with a short timeout, remembered."""

from __future__ import annotations

import socket
import time

import pytest

from providers.catalogue import parse_catalogue
from providers.reachability import Reachability, probe, probe_url
from tests.providers.conftest import TEST_CATALOGUE


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens: a port bound, then let go."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def silent():
    """A port that accepts connections and never answers them."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    sock.close()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_provider_that_answers_is_reachable_and_a_closed_port_is_not(provider):
    up = probe(f"{provider.url}/v1/models")
    down = probe(closed_port_url() + "/models")
    assert (up.reachable, up.code) == (True, "")
    assert (down.reachable, down.code) == (False, "unreachable")
    assert provider.requests == []  # a GET of the models list: no completion was asked for


def test_a_server_that_never_answers_times_out_within_the_limit(silent):
    started = time.monotonic()
    reach = probe(f"{silent}/models", timeout_s=0.3)
    assert reach.code == "timeout" and reach.timeout_s == 0.3
    assert time.monotonic() - started < 1.0


def test_endpoints_are_tested_at_once(silent, provider):
    urls = [f"{silent}/models", f"{silent}/other", f"{provider.url}/v1/models"]
    started = time.monotonic()
    reaches = Reachability(timeout_s=0.4).of(urls)
    assert time.monotonic() - started < 0.4 * 2  # not one after the other
    assert [reaches[u].code for u in urls] == ["timeout", "timeout", ""]


def test_answers_are_remembered_and_a_retest_asks_again(provider):
    clock = Clock()
    memory = Reachability(ttl_s=60, retest_after_s=2, clock=clock)
    url = f"{provider.url}/v1/models"
    assert memory.of([url])[url].reachable
    provider.stop()
    clock.now += 1
    assert memory.of([url], fresh=True)[url].reachable  # pressed twice at once: asked once
    clock.now += 29
    assert memory.of([url])[url].reachable  # remembered for 60 s
    assert memory.of([url], fresh=True)[url].code == "unreachable"
    assert memory.of([url])[url].code == "unreachable"  # and that is remembered


def test_a_remembered_answer_expires(provider):
    clock = Clock()
    memory = Reachability(ttl_s=60, clock=clock)
    url = closed_port_url() + "/models"
    assert memory.of([url])[url].code == "unreachable"
    first = memory.of([url])[url]
    clock.now += 61
    assert memory.of([url])[url].tested_at > first.tested_at


def test_each_wire_format_is_tested_at_its_list_of_models(provider, env):
    catalogue = parse_catalogue(TEST_CATALOGUE.replace("{base}", provider.url), env)
    urls = {m.id: probe_url(m, catalogue.env) for m in catalogue.models}
    assert urls == {
        "openai/test-gpt": f"{provider.url}/v1/models",
        "anthropic/test-claude": f"{provider.url}/v1/models",
        "local/free": f"{provider.url}/v1/models",
    }
