"""Fixtures for the optimizer core: Django-free, real sandboxes, the fake provider."""

from __future__ import annotations

import pytest

from contract.warm import WarmSandbox


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


@pytest.fixture
def sandboxes():
    source = KeptWarm()
    yield source
    source.close()
