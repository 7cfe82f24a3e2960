"""The production recipe (README.md, "Production") under a slow-client attack: gunicorn's
gthread workers behind nginx, started from deploy/gunicorn.conf.py and deploy/nginx.conf.

600 connections from one address each send part of a request and then one header byte
every 3 s. Straight at gunicorn that leaves logged-in users' pages timing out; behind
nginx, which reads requests whole before gunicorn sees them, a user at another address is
served, the attacker's address gets 429 past its connection limit, and nginx's access log
keeps no query string (no `?token=`)."""

from __future__ import annotations

import http.client
import os
import re
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from skynet_web.processes import Supervisor
from tests.conftest import ROOT, wait_for
from tests.servers import gunicorn

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

NGINX = Path("/usr/sbin/nginx")
DEPLOY = ROOT / "deploy"
ATTACKER, USER = "127.0.0.1", "127.0.0.2"  # both loopback: the source addresses differ
ATTACKERS = 600
CONNECTIONS_PER_ADDRESS = 20  # deploy/nginx.conf's limit_conn
# The bound for a page that never comes (the test fails), not a measure.
PATIENCE_S = 20


def _require(path: Path, package: str) -> None:
    """Skip loudly without `path`; on CI (SKYNET_REQUIRE_SANDBOX_TESTS=1) fail instead."""
    if path.exists():
        return
    reason = f"{path} is missing (apt-get install {package}): the recipe's nginx is untested"
    if os.environ.get("SKYNET_REQUIRE_SANDBOX_TESTS") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1: the recipe serves HTTPS only."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
        + ["-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return cert, key


def _nginx_conf(
    folder: Path, *, https: int, http: int, upstream: str, cert: Path, key: Path
) -> str:
    """deploy/nginx.conf with only its ports, upstream, placeholders and paths changed,
    run in the foreground. Each must be found: a recipe edited out of step fails here."""
    (folder / "logs").mkdir()
    (folder / "temp").mkdir()
    replacements = {
        # Workers run as root when the test does: tmp_path is private to its user.
        "user www-data;": "user root;" if os.geteuid() == 0 else "",
        "pid /run/nginx.pid;": f"daemon off;\npid {folder / 'nginx.pid'};",
        "/var/log/nginx/": f"{folder / 'logs'}/",
        "/var/lib/nginx/": f"{folder / 'temp'}/",
        "server 127.0.0.1:8000;": f"server {upstream};",
        "listen 80 default_server;": f"listen 127.0.0.1:{http} default_server;",
        "listen [::]:80 default_server;": "",
        "listen 443 ssl default_server;": f"listen 127.0.0.1:{https} ssl default_server;",
        "listen [::]:443 ssl default_server;": "",
        "@SERVER_NAME@": "127.0.0.1",
        "@TLS_CERTIFICATE@": str(cert),
        "@TLS_CERTIFICATE_KEY@": str(key),
    }
    text = (DEPLOY / "nginx.conf").read_text()
    for old, new in replacements.items():
        assert old in text, f"deploy/nginx.conf no longer has {old!r}"
        text = text.replace(old, new)
    return text


@dataclass
class Front:
    port: int
    tls: ssl.SSLContext
    access_log: Path
    gunicorn_log: Path


@contextmanager
def _nginx(folder: Path, upstream: str, gunicorn_log: Path) -> Iterator[Front]:
    _require(Path("/usr/bin/openssl"), "openssl")
    folder.mkdir()
    cert, key = _certificate(folder)
    port = _free_port()
    conf = folder / "nginx.conf"
    conf.write_text(
        _nginx_conf(folder, https=port, http=_free_port(), upstream=upstream, cert=cert, key=key)
    )
    children = Supervisor(cwd=folder)
    argv = [str(NGINX), "-p", f"{folder}/", "-e", str(folder / "logs" / "error.log")]
    children.start("nginx", [*argv, "-c", str(conf)], log=folder / "nginx.out")
    try:
        wait_for(lambda: children.raise_if_exited() or _accepts(port))
        tls = ssl.create_default_context(cafile=str(cert))
        yield Front(port, tls, folder / "logs" / "access.log", gunicorn_log)
    finally:
        children.stop(grace_s=10)


@pytest.fixture
def front(django_db_setup, redis_url, tmp_path) -> Iterator[Front]:
    _require(NGINX, "nginx")
    log = tmp_path / "gunicorn.log"
    # README's gunicorn: its config file, one worker of its 16 threads on a free port.
    with gunicorn(
        log, redis_url, threads=16, GUNICORN_CMD_ARGS=f"-c {DEPLOY / 'gunicorn.conf.py'}"
    ) as (url, _):
        with _nginx(tmp_path / "nginx", url.removeprefix("http://"), log) as front:
            yield front


class Slowloris(threading.Thread):
    """`count` connections from ATTACKER, each sending part of a request and then one
    header byte every 3 s; one that is closed is opened again, as an attacker would."""

    def __init__(self, port: int, count: int, tls: ssl.SSLContext | None) -> None:
        super().__init__(daemon=True)
        self.port, self.count, self.tls = port, count, tls
        self.opened, self.stopping = threading.Event(), threading.Event()
        self.sockets: list[socket.socket] = []
        self.reopened = 0
        self.error: BaseException | None = None

    def _open(self) -> socket.socket:
        conn = socket.create_connection(
            ("127.0.0.1", self.port), timeout=10, source_address=(ATTACKER, 0)
        )
        if self.tls is not None:
            conn = self.tls.wrap_socket(conn, server_hostname="127.0.0.1")
        conn.sendall(b"GET /en/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: ")
        return conn

    def run(self) -> None:
        try:
            self.sockets = [self._open() for _ in range(self.count)]
            self.opened.set()
            while not self.stopping.wait(3):
                for i, conn in enumerate(self.sockets):
                    try:
                        conn.sendall(b"a")
                    except OSError:
                        conn.close()
                        self.sockets[i] = self._open()
                        self.reopened += 1
        except BaseException as error:  # the test reports it
            self.error = error
            self.opened.set()

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=30)
        for conn in self.sockets:
            conn.close()


@contextmanager
def _attack(port: int, tls: ssl.SSLContext | None) -> Iterator[Slowloris]:
    attack = Slowloris(port, ATTACKERS, tls)
    attack.start()
    try:
        attack.opened.wait(timeout=60)
        assert attack.error is None, f"the attack could not open its connections: {attack.error!r}"
        yield attack
    finally:
        attack.stop()


def _session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    name = settings.SESSION_COOKIE_NAME
    return f"{name}={client.cookies[name].value}"


def _get(front: Front, path: str, *, cookie: str = "") -> tuple[int, str]:
    """A GET from USER's address over HTTPS, as a browser would send it."""
    conn = http.client.HTTPSConnection(
        "127.0.0.1", front.port, timeout=PATIENCE_S, source_address=(USER, 0), context=front.tls
    )
    try:
        conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        response = conn.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        conn.close()


def _statuses_of_held_posts(front: Front, count: int) -> list[int | None]:
    """`count` POSTs from ATTACKER whose bodies never come, all held open at once: the
    status each is answered with at once (None: still held, waiting for its body)."""
    conns = []
    for _ in range(count):
        raw = socket.create_connection(("127.0.0.1", front.port), source_address=(ATTACKER, 0))
        conn = front.tls.wrap_socket(raw, server_hostname="127.0.0.1")
        conn.sendall(b"POST /en/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n")
        conns.append(conn)
    time.sleep(1)  # nginx answers a refused one at once
    try:
        return [_status(conn) for conn in conns]
    finally:
        for conn in conns:
            conn.close()


def _status(conn: ssl.SSLSocket) -> int | None:
    # Not select(): a TLS 1.3 session ticket makes the socket readable with no answer.
    conn.settimeout(0.1)
    try:
        head = conn.recv(4096).decode(errors="replace")
    except TimeoutError:
        return None
    found = re.match(r"HTTP/1\.1 (\d{3})", head)
    return int(found.group(1)) if found else 0


def test_behind_nginx_a_slow_client_attack_leaves_other_users_served(front, owner):
    cookie = _session_cookie(owner)
    with _attack(front.port, front.tls) as attack:
        # Another address's logged-in page is served while every attacking connection
        # is held open, and again once nginx has dropped them all for being too slow
        # (client_header_timeout) and the attacker has opened them again.
        status, page = _get(front, "/en/", cookie=cookie)
        assert status == 200 and "Signed in as alice" in page
        wait_for(lambda: attack.reopened >= ATTACKERS, timeout=40)
        status, page = _get(front, "/en/", cookie=cookie)
        assert status == 200 and "Signed in as alice" in page

        # The attacker's address may hold CONNECTIONS_PER_ADDRESS requests; past them
        # each is answered 429 at once, before anything reaches gunicorn.
        statuses = _statuses_of_held_posts(front, CONNECTIONS_PER_ADDRESS + 10)
        assert statuses.count(None) == CONNECTIONS_PER_ADDRESS
        assert statuses.count(429) == 10

        # A token sent in a query string is kept in no log: nginx's has no query
        # string at all, gunicorn's masks it.
        _get(front, "/en/?token=skn_test123")
    requests = re.findall(r'"([A-Z]+ \S* HTTP/[\d.]+)"', front.access_log.read_text())
    assert "GET /en/ HTTP/1.1" in requests
    assert not [line for line in requests if "?" in line]
    assert "skn_test123" not in front.access_log.read_text()
    gunicorn_log = front.gunicorn_log.read_text()
    assert "token=[redacted]" in gunicorn_log and "skn_test123" not in gunicorn_log
