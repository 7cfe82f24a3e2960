"""Fixtures for the optimizer core: Django-free, real sandboxes, the fake provider."""

from __future__ import annotations

import dataclasses

import pytest

import sandbox
from contract.warm import WarmSandbox
from engines.models import RunModels
from providers.catalogue import parse_catalogue
from sandbox import site
from tests import quiz
from tests.providers.conftest import FAST_RETRY, OPENAI_KEY, TEST_CATALOGUE
from tests.providers.fakes import FakeProvider


@pytest.fixture(autouse=True)
def _plain_static_storage():
    """Shadow the project-wide Django fixture: the optimizer core is Django-free."""
    yield


class KeptWarm:
    """A sandbox source that keeps what it is given back, as the worker's pool does."""

    def __init__(self) -> None:
        self.idle: list[WarmSandbox] = []
        self.started = 0

    def take(self) -> WarmSandbox:
        if self.idle:
            return self.idle.pop()
        self.started += 1
        return WarmSandbox.start(None)

    def release(self, warm: WarmSandbox) -> None:
        self.idle.append(warm)

    def close(self) -> None:
        for warm in self.idle:
            warm.close()


@pytest.fixture(scope="module")
def dspy_config():
    """A sandbox that can load dspy: its packages staged for the sandbox."""
    config = sandbox.SandboxConfig()
    staged = site.site_packages(sandbox.stage_gid(config))
    assert staged, "dspy's packages could not be staged for the sandbox"
    return dataclasses.replace(config, site_packages=staged)


@pytest.fixture
def sandboxes():
    source = KeptWarm()
    yield source
    source.close()


@pytest.fixture
def provider():
    server = FakeProvider(openai_key=OPENAI_KEY).start()
    server.respond = quiz.respond_any
    yield server
    server.stop()


@pytest.fixture
def models(provider):
    env = {"OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": f"{provider.url}/v1"}
    catalogue = parse_catalogue(TEST_CATALOGUE.replace("{base}", provider.url), env)
    made = []

    def make(max_usd: float = 5.0):
        run_models = RunModels(
            task=catalogue.resolve("openai/test-gpt"),
            metric=catalogue.resolve("openai/test-gpt"),
            reflection=catalogue.resolve("openai/test-gpt"),
            env=env,
            max_usd=max_usd,
            timeout_s=2.0,
            retry=FAST_RETRY,
        )
        made.append(run_models)
        return run_models

    yield make
    for run_models in made:
        run_models.close()
