"""The models step's dollar budget: read in the reader's number format, refused when it
is no amount, and pinned in the run configuration."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.submissions.test_submit_wizard import fill_to_models, models_data

pytestmark = pytest.mark.django_db


def test_a_dollar_budget_in_spanish_decimals_is_read_as_written(
    owner_client, draft, saved_metric, session_models
):
    fill_to_models(owner_client, draft, saved_metric)
    response = owner_client.post(
        f"/es/submit/{draft.pk}/models/", models_data(budget_usd="2,50", action="save")
    )
    assert response.status_code in (200, 302), response.content.decode()
    draft.refresh_from_db()
    assert draft.budget_usd == Decimal("2.50")
    page = owner_client.get(f"/es/submit/{draft.pk}/models/").content.decode()
    assert 'value="2,50"' in page and 'inputmode="decimal"' in page


@pytest.mark.parametrize("value", ["abc", "0", "-3", "100001"])
def test_a_dollar_budget_that_is_no_amount_is_refused_and_kept(
    owner_client, draft, saved_metric, session_models, value
):
    fill_to_models(owner_client, draft, saved_metric)
    response = owner_client.post(f"/en/submit/{draft.pk}/models/", models_data(budget_usd=value))
    assert response.status_code == 400
    assert "Budget (US dollars)" in response.content.decode()
    draft.refresh_from_db()
    assert draft.budget_usd == Decimal("5.00")


def test_an_empty_dollar_budget_is_the_default(owner_client, draft, saved_metric, session_models):
    fill_to_models(owner_client, draft, saved_metric)
    response = owner_client.post(f"/en/submit/{draft.pk}/models/", models_data(budget_usd=""))
    assert response.status_code == 302
    draft.refresh_from_db()
    assert draft.budget_usd == Decimal("5.00")
