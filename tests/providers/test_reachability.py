"""Whether a provider's endpoint answers: a free GET with a short timeout, remembered."""

from __future__ import annotations

import contextlib
import socket
import threading

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


def test_a_server_that_never_answers_counts_as_a_timeout(silent):
    reach = probe(f"{silent}/models", timeout_s=0.3)
    assert reach.code == "timeout" and reach.timeout_s == 0.3


@pytest.fixture
def answers_only_to_a_crowd():
    """A server that answers no request until `crowd` of them wait at once, then all:
    probes sent one after the other would each time out waiting for the next."""
    crowd = 3
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    waiting: list[socket.socket] = []

    def serve() -> None:
        while len(waiting) < crowd:
            try:
                connection, _ = sock.accept()
            except OSError:
                return
            waiting.append(connection)
        for connection in waiting:
            with contextlib.suppress(OSError):
                connection.recv(65536)
                connection.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1", crowd
    sock.close()
    thread.join(5)


def test_endpoints_are_tested_at_once(answers_only_to_a_crowd):
    base, crowd = answers_only_to_a_crowd
    urls = [f"{base}/models{i}" for i in range(crowd)]
    reaches = Reachability(timeout_s=5).of(urls)
    assert [reaches[u].code for u in urls] == [""] * crowd


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
