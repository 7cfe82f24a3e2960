"""Fixtures the web tests share: an empty draft, a saved metric version that labels, a
fake OpenAI provider on 127.0.0.1, and announcements of changed rows through the test
Redis."""

from __future__ import annotations

import pytest


@pytest.fixture
def draft(owner):
    from submissions import services

    return services.draft_create(owner=owner)


@pytest.fixture
def saved_metric(owner):
    from metrics import services as metric_services
    from tests.web.test_submit_wizard import LABEL_METRIC

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
