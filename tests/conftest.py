"""Shared fixtures: named actors, and real Redis + Celery worker processes."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest
from django.core.cache import caches

from skynet_web.env import redis_py_url
from skynet_web.private_files import private_dir
from skynet_web.processes import Supervisor, celery_worker_argv

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _plain_static_storage(settings):
    # The manifest storage needs collectstatic; tests render templates without it.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture(autouse=True)
def _sign_up_counts_kept_apart(request):
    # Sign-ups are counted in Redis. No test counts them in the Redis of a site running on
    # this machine: a test that signs up asks for `signup_counts`; any other is refused as
    # "unavailable", loudly, instead of counting somewhere shared.
    if not request.config.pluginmanager.hasplugin("django"):
        return  # a Django-free run (-p no:django) signs nobody up
    settings = request.getfixturevalue("settings")
    settings.CACHES = {
        **settings.CACHES,
        "ratelimit": {
            **settings.CACHES["ratelimit"],
            "LOCATION": "unix:///nonexistent/skynet-no-test-counts.sock",
        },
    }


@pytest.fixture
def signup_counts(settings, redis_url):
    """Sign-up counts kept in the test Redis under a prefix of this test's own, so each
    test starts from zero and none sees another's (CI shares one external Redis)."""
    settings.CACHES = {
        **settings.CACHES,
        "ratelimit": {
            **settings.CACHES["ratelimit"],
            "LOCATION": redis_py_url(redis_url),
            "KEY_PREFIX": f"test-{uuid.uuid4().hex}",
        },
    }
    return caches["ratelimit"]


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user(username="alice", password="alice-pass-123")


@pytest.fixture
def outsider(django_user_model):
    return django_user_model.objects.create_user(username="bob", password="bob-pass-123")


@pytest.fixture
def owner_client(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    """REDIS_URL when it is set (CI's external Redis), else a private embedded server."""
    external = os.environ.get("REDIS_URL")
    if external:
        yield external
        return
    from skynet_web import embedded_redis

    socket_path = Path("/tmp") / f"skynet-test-redis-{os.getpid()}.sock"
    process = embedded_redis.start(socket_path)
    try:
        yield f"redis+socket://{socket_path}"
    finally:
        embedded_redis.stop(process, socket_path)


@pytest.fixture(scope="session")
def broker(redis_url):
    """Point this process's Celery app at the test broker."""
    from skynet_web.celery import app

    app.conf.broker_url = redis_url
    # A test that enqueued before this fixture ran (a check created on commit, its send
    # refused without a broker) left pools on the default URL: start them again.
    app._pool = None
    app.amqp._producer_pool = None
    yield app


@pytest.fixture
def announced(settings, redis_url, monkeypatch):
    """Announcements go through the test Redis, the one the test worker publishes to, so
    a waiting request (a live panel, an API wait) hears them."""
    from jobs import notify
    from skynet_web.env import redis_py_url

    settings.REDIS_PY_URL = redis_py_url(redis_url)
    monkeypatch.setattr(notify, "_client", None)
    yield
    notify._client = None


def _database_url(settings_dict: dict) -> str:
    engine = settings_dict["ENGINE"]
    if engine.endswith("sqlite3"):
        return f"sqlite:///{settings_dict['NAME']}"
    user = settings_dict.get("USER") or ""
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = settings_dict.get("HOST") or "localhost"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{settings_dict['NAME']}"


@pytest.fixture(scope="session")
def session_provider(tmp_path_factory):
    """A fake model provider on 127.0.0.1 for the whole session, and a catalogue file
    whose models point at it: what the test worker's llm() calls reach."""
    from tests.providers.conftest import OPENAI_KEY, TEST_CATALOGUE
    from tests.providers.fakes import FakeProvider

    server = FakeProvider(openai_key=OPENAI_KEY).start()
    path = tmp_path_factory.mktemp("models") / "catalogue.toml"
    path.write_text(TEST_CATALOGUE.replace("{base}", server.url))
    server.catalogue_path = str(path)
    server.env = {"OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": f"{server.url}/v1"}
    yield server
    server.stop()


@pytest.fixture
def session_models(session_provider, settings, monkeypatch):
    """This process uses the session provider's catalogue too (the test worker does)."""
    from jobs import model_choices

    settings.MODEL_CATALOGUE = session_provider.catalogue_path
    for name, value in session_provider.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    model_choices.catalogue.cache_clear()
    yield session_provider
    model_choices.catalogue.cache_clear()


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker, broker, redis_url, session_provider):
    """A real `celery worker` process on the test database and the test broker."""
    from django.db import connection

    env = {
        **os.environ,
        **session_provider.env,
        "SKYNET_MODEL_CATALOGUE": session_provider.catalogue_path,
        "REDIS_URL": redis_url,
        "DATABASE_URL": _database_url(connection.settings_dict),
        "DJANGO_SETTINGS_MODULE": "skynet_web.settings",
    }
    env.pop("ANTHROPIC_API_KEY", None)
    log_path = private_dir(ROOT / "var", tighten=True) / "test-worker.log"
    children = Supervisor(cwd=ROOT, env=env)
    process = children.start(
        "test worker", celery_worker_argv(name=f"test-{os.getpid()}@%h", quiet=True), log=log_path
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the test worker exited; see {log_path}")
            if broker.control.ping(timeout=0.5):
                break
        else:
            raise RuntimeError(f"the test worker did not answer a ping; see {log_path}")
        yield process
    finally:
        children.stop()


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")


# -- what the apps' tests share: an empty draft, a saved metric version that labels, and a
# fake OpenAI provider on 127.0.0.1 ---------------------------------------------------


@pytest.fixture
def draft(owner):
    from submissions import services

    return services.draft_create(owner=owner)


@pytest.fixture
def saved_metric(owner):
    from metrics import services as metric_services
    from tests.submissions.test_submit_wizard import LABEL_METRIC

    metric = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    version, _ = metric_services.metric_save(metric, source=LABEL_METRIC)
    return version


@pytest.fixture
def provider():
    from tests.providers.conftest import OPENAI_KEY
    from tests.providers.fakes import FakeProvider

    server = FakeProvider(openai_key=OPENAI_KEY).start()
    yield server
    server.stop()
