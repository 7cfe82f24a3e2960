from __future__ import annotations

import shutil

import pytest

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def test_healthz_is_200_when_database_broker_and_worker_are_up(client, celery_worker_process):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["failing"] == []
    assert body["database"]["ok"] and body["broker"]["ok"] and body["worker"]["ok"]
    assert body["worker"]["workers"]
    # Each worker reports the confinement layers its self-test found at start.
    (status,) = [body["worker"]["sandbox"][name] for name in body["worker"]["workers"]]
    assert {"rlimits", "seccomp", "clean_env"} <= set(status["layers"])
    if shutil.which("bwrap"):
        assert status["mode"] == "bwrap"
        assert "namespaces" in status["layers"]


def test_healthz_names_the_broker_when_it_is_down(client, broker, monkeypatch):
    # Nothing listens on port 1 of loopback.
    monkeypatch.setattr(broker.conf, "broker_url", "redis://127.0.0.1:1/0")
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "fail"
    assert "broker" in body["failing"]
    assert body["database"]["ok"] is True


def test_healthz_names_the_worker_when_none_answers(
    client, broker, settings, monkeypatch, tmp_path
):
    from skynet_web import embedded_redis

    settings.WORKER_PING_TIMEOUT = 200
    # A broker that is up but that no worker listens on: a second, empty Redis server.
    socket_path = tmp_path / "lonely.sock"
    process = embedded_redis.start(socket_path)
    try:
        monkeypatch.setattr(broker.conf, "broker_url", f"redis+socket://{socket_path}")
        response = client.get("/healthz")
    finally:
        embedded_redis.stop(process, socket_path)
    assert response.status_code == 503
    body = response.json()
    assert body["failing"] == ["worker"]
    assert body["broker"]["ok"] is True
