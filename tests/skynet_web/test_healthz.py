from __future__ import annotations

import shutil

import pytest

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

TOKEN = "monitor-token-0123456789abcdefghij"


@pytest.fixture
def operator(django_user_model):
    """Olga runs the site: a staff user."""
    return django_user_model.objects.create_user(
        username="olga", password="olga-pass-123", is_staff=True
    )


@pytest.fixture
def operator_client(client, operator):
    client.force_login(operator)
    return client


@pytest.fixture
def health_token(settings):
    settings.HEALTH_TOKEN = TOKEN
    return TOKEN


def as_monitor(client, token: str = TOKEN):
    return client.get("/healthz", headers={"Authorization": f"Bearer {token}"})


def test_an_anonymous_caller_is_told_only_that_the_site_is_up(client, celery_worker_process):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_a_signed_in_user_who_is_not_staff_is_told_only_up_or_down(
    owner_client, celery_worker_process
):
    response = owner_client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_staff_see_the_database_broker_and_each_workers_sandbox(
    operator_client, celery_worker_process
):
    response = operator_client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["failing"] == []
    assert body["database"]["ok"] and body["broker"]["ok"] and body["worker"]["ok"]
    assert body["worker"]["workers"]
    # Each worker reports the confinement layers its self-test found at start.
    (status,) = [body["worker"]["sandbox"][name] for name in body["worker"]["workers"]]
    assert {"rlimits", "seccomp", "clean_env"} <= set(status["layers"])
    assert status["available"] is True
    if shutil.which("bwrap"):
        assert status["mode"] == "bwrap"
        assert "namespaces" in status["layers"]


def test_a_monitor_with_the_token_sees_the_details(client, health_token, celery_worker_process):
    response = as_monitor(client)
    assert response.status_code == 200
    body = response.json()
    assert body["failing"] == [] and body["worker"]["workers"]
    assert "Authorization" in response["Vary"]


def test_a_wrong_token_is_answered_as_an_anonymous_caller(
    client, health_token, celery_worker_process
):
    response = as_monitor(client, token=TOKEN[:-1] + "x")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_with_no_token_configured_no_bearer_header_unlocks_the_details(
    client, settings, celery_worker_process
):
    settings.HEALTH_TOKEN = ""
    for header in ("Bearer ", "Bearer", f"Bearer {TOKEN}"):
        response = client.get("/healthz", headers={"Authorization": header})
        assert response.json() == {"status": "ok"}, header


def test_healthz_names_the_broker_when_it_is_down(client, broker, health_token, monkeypatch):
    # Nothing listens on port 1 of loopback.
    monkeypatch.setattr(broker.conf, "broker_url", "redis://127.0.0.1:1/0")
    anonymous = client.get("/healthz")
    assert anonymous.status_code == 503
    assert anonymous.json() == {"status": "fail"}
    response = as_monitor(client)
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "fail"
    assert "broker" in body["failing"]
    assert body["database"]["ok"] is True


def test_healthz_names_the_worker_when_none_answers(
    operator_client, broker, settings, monkeypatch, tmp_path
):
    from skynet_web import embedded_redis

    settings.WORKER_PING_TIMEOUT = 200
    # A broker that is up but that no worker listens on: a second, empty Redis server.
    socket_path = tmp_path / "lonely.sock"
    process = embedded_redis.start(socket_path)
    try:
        monkeypatch.setattr(broker.conf, "broker_url", f"redis+socket://{socket_path}")
        response = operator_client.get("/healthz")
    finally:
        embedded_redis.stop(process, socket_path)
    assert response.status_code == 503
    body = response.json()
    assert body["failing"] == ["worker"]
    assert body["broker"]["ok"] is True
    assert body["worker"]["error"] == "RuntimeError: no worker answered"


def fake_replies(broker, monkeypatch, replies: list[dict]) -> None:
    """Workers that answer sandbox_status with `replies`, through the real test broker:
    what the reworked sandbox will say, which no real worker says yet."""

    def broadcast(command, **kwargs):
        assert command == "sandbox_status" and kwargs["reply"] is True
        return replies

    monkeypatch.setattr(broker.control, "broadcast", broadcast)


LAYERS = {"layers": ["rlimits", "seccomp", "clean_env"], "mode": "fallback"}


def test_a_worker_whose_sandbox_cannot_run_checks_fails_the_worker_part(
    client, operator_client, broker, monkeypatch
):
    fake_replies(
        broker,
        monkeypatch,
        [
            {"w1@host": {**LAYERS, "available": True}},
            {"w2@host": {**LAYERS, "available": False, "reason": "bwrap: permission denied"}},
        ],
    )
    response = operator_client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["failing"] == ["worker"]
    worker = body["worker"]
    assert worker["ok"] is False
    assert worker["error"] == "sandbox unavailable on w2@host: bwrap: permission denied"
    assert worker["workers"] == ["w1@host", "w2@host"]
    assert worker["sandbox"]["w2@host"]["available"] is False
    assert worker["sandbox"]["w2@host"]["reason"] == "bwrap: permission denied"
    assert worker["sandbox"]["w1@host"]["available"] is True
    client.logout()
    assert client.get("/healthz").json() == {"status": "fail"}


def test_a_reply_without_the_available_key_counts_as_available(
    operator_client, broker, monkeypatch
):
    fake_replies(broker, monkeypatch, [{"w1@host": LAYERS}])
    response = operator_client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["worker"]["sandbox"]["w1@host"]["available"] is True


def test_an_unavailable_sandbox_without_a_reason_still_says_where(
    operator_client, broker, monkeypatch
):
    fake_replies(broker, monkeypatch, [{"w1@host": {**LAYERS, "available": False}}])
    response = operator_client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["worker"]["error"] == "sandbox unavailable on w1@host: no reason given"
