"""The model pickers show which models can answer right now: each endpoint is tested
(a free GET, 1 s at most, remembered 60 s), and "Test again" tests it anew."""

from __future__ import annotations

import re
import socket

import pytest

from jobs import model_choices
from metrics import services as metric_services
from providers.reachability import Reachability
from submissions import services as draft_services
from tests.providers.conftest import OPENAI_KEY, TEST_CATALOGUE
from tests.providers.fakes import FakeProvider
from tests.providers.test_reachability import closed_port_url
from tests.submissions.test_submit_wizard import fill_to_models, url

pytestmark = pytest.mark.django_db


@pytest.fixture
def use_catalogue(provider, settings, monkeypatch, tmp_path):
    """use_catalogue(local_base): OpenAI configured and answering (the fake provider), the
    keyless local model at local_base, Anthropic not configured; a fresh memory of
    endpoints that re-tests at once when asked to."""

    def use(local_base: str) -> None:
        path = tmp_path / "catalogue.toml"
        path.write_text(TEST_CATALOGUE.replace("{base}/v1", local_base))
        settings.MODEL_CATALOGUE = str(path)
        model_choices.catalogue.cache_clear()

    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{provider.url}/v1")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr(model_choices, "reachability", Reachability(retest_after_s=0))
    yield use
    model_choices.catalogue.cache_clear()


@pytest.fixture
def metric(owner):
    return metric_services.metric_create(owner=owner, name="judge", starter="model_as_judge")


def _option(body: str, select: str, value: str) -> str:
    found = re.search(rf'<select name="{select}".*?</select>', body, re.S)
    assert found, f"no {select} picker"
    option = re.search(rf'<option value="{re.escape(value)}"[^>]*>[^<]*</option>', found[0])
    assert option, f"no {value} in {select}"
    return option[0]


def test_the_playground_disables_a_model_that_cannot_be_reached(
    owner_client, metric, use_catalogue
):
    dead = closed_port_url()
    use_catalogue(dead)
    body = owner_client.get(f"/en/metrics/{metric.pk}/").content.decode()
    host = dead.removeprefix("http://").removesuffix("/v1")
    for picker in ("reflection_model", "metric_model"):
        assert _option(body, picker, "local/free") == (
            '<option value="local/free" disabled>Local (local/free): cannot be reached right '
            f"now (nothing answers at {host})</option>"
        )
        assert _option(body, picker, "openai/test-gpt") == (
            '<option value="openai/test-gpt">Test GPT (openai/test-gpt)</option>'
        )
    assert "Models whose server does not answer a connection test are disabled" in body
    assert "Test again" in body


def test_the_wizard_models_step_disables_it_too(owner_client, owner, use_catalogue):
    dead = closed_port_url()
    use_catalogue(dead)
    draft = draft_services.draft_create(owner=owner)
    saved = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    fill_to_models(owner_client, draft, saved.latest_version)
    body = owner_client.get(url(draft, "models")).content.decode()
    host = dead.removeprefix("http://").removesuffix("/v1")
    for picker in ("task_model", "reflection_model", "metric_model"):
        option = _option(body, picker, "local/free")
        assert "disabled" in option
        assert f"cannot be reached right now (nothing answers at {host})" in option


def test_test_again_tests_anew_and_keeps_the_choice(owner_client, metric, use_catalogue):
    local = FakeProvider().start()
    use_catalogue(f"{local.url}/v1")
    page = owner_client.get(f"/en/metrics/{metric.pk}/").content.decode()
    assert _option(page, "metric_model", "local/free") == (
        '<option value="local/free">Local (local/free)</option>'
    )
    local.stop()
    # Remembered: the page does not test again by itself within a minute.
    page = owner_client.get(f"/en/metrics/{metric.pk}/").content.decode()
    assert "disabled" not in _option(page, "metric_model", "local/free")
    answer = owner_client.post(
        "/en/models/test-again/",
        {"form": "editor", "metric_model": "local/free", "reflection_model": ""},
        HTTP_HX_REQUEST="true",
    )
    assert answer.status_code == 200
    body = answer.content.decode()
    assert 'id="model-reach"' in body and "Tested just now." in body
    assert body.count('hx-swap-oob="outerHTML"') == 2
    # The model chosen stays chosen, and says why it may fail; elsewhere it is disabled.
    assert _option(body, "metric_model", "local/free") == (
        '<option value="local/free" selected>Local (local/free): cannot be reached right now '
        f"(nothing answers at {local.url.removeprefix('http://')})</option>"
    )
    assert "disabled" in _option(body, "reflection_model", "local/free")


def test_test_again_needs_a_known_form(owner_client, use_catalogue):
    use_catalogue(closed_port_url())
    assert owner_client.post("/en/models/test-again/", {"form": "nope"}).status_code == 400


def test_a_server_that_never_answers_is_shown_as_not_answering(owner_client, metric, use_catalogue):
    # The page waits for it no longer than the probe's timeout (providers.reachability).
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        use_catalogue(f"http://127.0.0.1:{silent.getsockname()[1]}/v1")
        body = owner_client.get(f"/en/metrics/{metric.pk}/").content.decode()
    assert "did not answer within 1 s" in _option(body, "metric_model", "local/free")


def test_the_panel_names_an_unreachable_task_model(owner, owner_client, use_catalogue):
    from checks import execution
    from checks import services as check_services
    from checks.models import Check
    from contract.artifacts import Artifact

    dead = closed_port_url()
    use_catalogue(dead)
    check = check_services.check_create(
        owner=owner,
        source="def score(input, output, expected=None):\n    return 1.0, {'feedback': 'ok'}\n",
        cases=[{"input": {"question": q}, "output": ""} for q in ("a", "b", "c")],
        timeout_s=20,
        artifact=Artifact.prompt("Classify: {question}"),
        task_model="local/free",
    )
    execution.execute_check(check.pk)
    check.refresh_from_db()
    assert check.status == Check.Status.FAILED
    assert check.result["stages"][3]["problem"] == "task_model_error"
    body = owner_client.get(f"/en/checks/{check.pk}/").content.decode()
    assert "The task model local/free could not be reached: could not connect to" in body
    assert "did not return a value" not in body


def test_the_judge_starters_first_run_asks_for_a_model_first(owner_client, metric, use_catalogue):
    from checks.models import Check
    from tests.metrics.test_playground import editor_data

    use_catalogue(closed_port_url())
    data = editor_data(metric.latest_version.source, action="run")
    answer = owner_client.post(f"/en/metrics/{metric.pk}/save/", data, HTTP_HX_REQUEST="true")
    assert answer.status_code == 400 and answer["HX-Retarget"] == "#messages"
    body = answer.content.decode()
    assert "This metric calls llm(), but no model is selected to answer it." in body
    assert '<a href="#models">Go to the model pickers</a>' in body
    assert Check.objects.count() == 0
    page = owner_client.get(f"/en/metrics/{metric.pk}/").content.decode()
    assert '<fieldset class="models" id="models">' in page
    # Without htmx: back to the page, at the pickers.
    plain = owner_client.post(f"/en/metrics/{metric.pk}/save/", data)
    assert plain.status_code == 302 and plain["Location"].endswith("#models")
    # With a model picked, the same Run starts the check.
    data["reflection_model"] = "openai/test-gpt"
    owner_client.post(f"/en/metrics/{metric.pk}/save/", data, HTTP_HX_REQUEST="true")
    assert Check.objects.count() == 1


def test_a_metric_that_does_not_call_llm_runs_without_a_model(owner, owner_client, use_catalogue):
    from checks.models import Check
    from tests.metrics.test_playground import editor_data

    use_catalogue(closed_port_url())
    plain = metric_services.metric_create(owner=owner, name="exact", starter="exact_match")
    data = editor_data(plain.latest_version.source, action="run")
    owner_client.post(f"/en/metrics/{plain.pk}/save/", data, HTTP_HX_REQUEST="true")
    assert Check.objects.count() == 1
