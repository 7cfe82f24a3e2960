"""POST /api/v1/metrics/add-imports: the playground's one-click fix, in the same words."""

from __future__ import annotations

import pytest

from tests.checks.test_add_imports import FIXED_IMPORTS, PASTED


@pytest.mark.django_db
def test_the_api_adds_them_with_the_same_words(api):
    response = api.post("/metrics/add-imports", {"source": PASTED})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["added"] == FIXED_IMPORTS and body["line"] == 3
    assert body["message"].startswith("Added 3 imports: import re;")
    broken = api.post("/metrics/add-imports", {"source": "def (:"})
    assert broken.status_code == 422 and broken.json()["code"] == "syntax_error"
