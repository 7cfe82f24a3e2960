"""The minibatch size in the submit wizard (the models step, the run's configuration, its
projection) and the warning when a judge's noise makes GEPA's minibatch comparison a coin
toss, from a finished K-repeat evaluation made here directly in the database, in English
and Spanish; what the wizard says of a judge nothing measured, and of a metric that calls
no model (nothing)."""

from __future__ import annotations

import io
import json
import re
import zipfile

import pytest

from runs.models import Run
from submissions.models import Draft
from tests.submissions.test_submit_wizard import fill_to_models, models_data, url
from tests.submissions.test_wizard_projection import SUMMARY, evaluate, ready_for_review, section

pytestmark = pytest.mark.django_db

# A K-repeat evaluation's noise: each case scored 3 times, σ² = 0.036 on scores in [0, 1].
# At the default minibatch of 3, a step of 0.1 (a tenth of the range) is
# 0.1 / sqrt(2 * 0.036 / 3) = 0.645497 SDs: P = Φ(0.645497) = 0.740697, shown 74%.
# For P ≥ 0.9: m ≥ 2 * 0.036 * (1.281552 / 0.1)² = 11.825, so 12, where
# P = Φ(0.1 / sqrt(0.072 / 12)) = Φ(1.290994) = 0.901647, shown 90%.
NOISE = {
    "k": 3,
    "n": 2,
    "flip_share": {"value": 0.18, "low": 0.05, "high": 0.4},
    "variance": 0.036,
    "spread_mean": 0.15,
    "mean": {"value": 0.5, "low": 0.4, "high": 0.6},
    "examples": [0, 1],
}
SCORE = {"n": 2, "mean": 0.5, "median": 0.5, "min": 0.0, "max": 1.0, "bins": []}
NOISY = {**SUMMARY, "score": SCORE, "noise": NOISE}
# A metric that made no model call: it costs nothing and scores the same every time.
PLAIN = {**SUMMARY, "score": SCORE, "cost": {**SUMMARY["cost"], "metric_usd_total": 0.0}}

WARNING = (
    "Scored 3 times, this metric changed its verdict on 18% of cases. At a minibatch of 3, "
    "a candidate better by 0.1 wins the minibatch comparison only 74% of the time — close "
    "to a coin toss. A minibatch of 12 would make it 90%; temperature 0 for the metric "
    "model removes most of this noise."
)
WARNING_ES = (
    "Puntuada 3 veces, esta métrica cambió su veredicto en el 18 % de los casos. Con un "
    "minilote de 3, un candidato mejor por 0,1 gana la comparación del minilote solo el "
    "74 % de las veces: casi como lanzar una moneda. Un minilote de 12 lo llevaría al "
    "90 %; la temperatura 0 para el modelo de la métrica elimina la mayor parte de este "
    "ruido."
)


def models_page(client, draft, language="en") -> str:
    return client.get(f"/{language}/submit/{draft.pk}/models/").content.decode()


def gate_part(page: str) -> str:
    """The gate's block, or "" when the page has none."""
    if 'id="minibatch-gate"' not in page:
        return ""
    start = page.index(">", page.index('id="minibatch-gate"')) + 1
    return page[start : page.index("</div>", start)]


def text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.fixture
def at_models(owner_client, draft, saved_metric, session_models):
    """A draft with steps 1 to 4 done (saved_metric calls no model; no check yet)."""
    fill_to_models(owner_client, draft, saved_metric)
    response = owner_client.post(url(draft, "models"), models_data())
    assert response.status_code == 302, response.content.decode()
    draft.refresh_from_db()
    return draft


# -- the field ---------------------------------------------------------------------------


def test_the_models_step_saves_the_minibatch_size(owner_client, at_models):
    draft = at_models
    assert draft.minibatch == 3  # posted without it: the default
    page = models_page(owner_client, draft)
    assert "Minibatch size" in page and 'name="minibatch" value="3"' in page
    assert "Bigger: a steadier comparison" in page
    response = owner_client.post(url(draft, "models"), models_data(minibatch=5))
    assert response.status_code == 302, response.content.decode()
    draft.refresh_from_db()
    assert draft.minibatch == 5
    assert 'name="minibatch" value="5"' in models_page(owner_client, draft)


@pytest.mark.parametrize(
    "value, said",
    [
        ("0", "Ensure this value is greater than or equal to 1."),
        ("51", "Ensure this value is less than or equal to 50."),
        ("many", "Enter a whole number."),
    ],
)
def test_a_minibatch_size_out_of_bounds_is_refused_in_words(owner_client, at_models, value, said):
    draft = at_models
    response = owner_client.post(url(draft, "models"), models_data(minibatch=value))
    assert response.status_code == 400
    assert said in response.content.decode()
    assert Draft.objects.get(pk=draft.pk).minibatch == 3


def test_the_run_its_projection_and_its_bundle_take_the_drafts_size(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    ready_for_review(owner_client, draft, saved_metric, django_capture_on_commit_callbacks)
    Draft.objects.filter(pk=draft.pk).update(minibatch=5)
    evaluate(draft, summary=PLAIN)
    # Budget 300, 2 validation rows, minibatches of 5: 298 calls left after the seed's.
    # Every proposal kept: 5 + 5 + 2 = 12 an iteration, ceil(298 / 12) = 25, 2 + 300 = 302.
    # None kept: 10 an iteration, ceil(298 / 10) = 30, 2 + 300 = 302.
    part = section(owner_client.get(url(draft, "review")).content.decode())
    assert "Metric calls: 302. Reflection calls: 25 to 30." in part
    assert "Each candidate is compared on a minibatch of 5 cases." in part
    owner_client.post(f"/en/submit/{draft.pk}/submit/")
    run = Run.objects.get()
    assert run.config["minibatch"] == 5
    response = owner_client.get(f"/en/runs/{run.pk}/bundle.zip")
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    stored = json.loads(archive.read("projection.json"))
    assert stored["minibatch"] == 5 and stored["assumptions"]["reflection_minibatch"] == 5
    assert stored["iterations"] == {"low": 25, "high": 30}
    assert json.loads(archive.read("run.json"))["minibatch"] == 5


# -- the warning -------------------------------------------------------------------------


def test_a_noisy_judge_is_a_coin_toss_beside_the_minibatch_size(owner_client, at_models):
    evaluate(at_models, summary=NOISY)
    part = gate_part(models_page(owner_client, at_models))
    assert text(part) == WARNING
    assert "?second=repeat" not in part


def test_the_warning_reads_in_spanish(owner_client, at_models):
    evaluate(at_models, summary=NOISY)
    part = gate_part(models_page(owner_client, at_models, "es"))
    assert text(part) == WARNING_ES


def test_at_the_suggested_size_it_says_the_chance_without_a_warning(owner_client, at_models):
    evaluate(at_models, summary=NOISY)
    Draft.objects.filter(pk=at_models.pk).update(minibatch=12)
    part = gate_part(models_page(owner_client, at_models))
    assert 'class="warning"' not in part and "coin toss" not in part
    assert text(part) == (
        "At a minibatch of 12, a candidate better by 0.1 wins the minibatch comparison 90% "
        "of the time."
    )


def test_the_warning_follows_the_size_as_posted(owner_client, at_models):
    evaluate(at_models, summary=NOISY)
    response = owner_client.post(url(at_models, "models"), models_data(minibatch=4, budget=0))
    assert response.status_code == 400  # kept as typed, with the budget's error
    # At 4: Φ(0.1 / sqrt(0.072 / 4)) = Φ(0.745356) = 0.771972: no coin toss any more.
    part = gate_part(response.content.decode())
    assert "coin toss" not in part and "At a minibatch of 4" in part and "77%" in part


def test_a_wide_scale_is_judged_on_a_tenth_of_its_range(owner_client, at_models):
    # Scores 0 to 10 and σ² = 3.6: the 0-to-1 case scaled by 10, so the same chances.
    noise = {**NOISE, "variance": 3.6}
    score = {**SCORE, "max": 10.0}
    evaluate(at_models, summary={**NOISY, "noise": noise, "score": score})
    said = text(gate_part(models_page(owner_client, at_models)))
    assert "a candidate better by 1 wins the minibatch comparison only 74% of the time" in said
    assert "A minibatch of 12 would make it 90%" in said


def test_without_noise_a_metric_that_calls_no_model_gets_no_warning(owner_client, at_models):
    evaluate(at_models, summary=PLAIN)
    page = models_page(owner_client, at_models)
    assert gate_part(page) == "" and "coin toss" not in page


def test_a_judge_nothing_measured_is_asked_to_measure_its_noise(owner_client, at_models):
    evaluate(at_models, summary=SUMMARY)  # its metric paid for model calls: a judge
    part = gate_part(models_page(owner_client, at_models))
    assert "This metric calls a model" in part and "coin toss" not in part
    assert f'href="/en/submit/{at_models.pk}/evaluate/?second=repeat&amp;repeats=3"' in part


def test_a_noise_measured_on_another_metric_says_nothing_of_this_one(owner_client, at_models):
    evaluate(at_models, summary=NOISY, source="def score(i, o): return 1.0\n")
    evaluate(at_models, summary=SUMMARY, finished_ago=5)
    part = gate_part(models_page(owner_client, at_models))
    assert "coin toss" not in part and "This metric calls a model" in part


def test_an_older_noise_measure_still_counts_after_a_plain_evaluation(owner_client, at_models):
    evaluate(at_models, summary=NOISY, finished_ago=10)
    evaluate(at_models, summary=SUMMARY)
    assert text(gate_part(models_page(owner_client, at_models))) == WARNING


def test_the_review_and_the_bundle_say_it_too(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    ready_for_review(owner_client, draft, saved_metric, django_capture_on_commit_callbacks)
    evaluation = evaluate(draft, summary=NOISY)
    part = section(owner_client.get(url(draft, "review")).content.decode())
    assert WARNING in text(part)
    spanish = section(owner_client.get(f"/es/submit/{draft.pk}/review/").content.decode())
    assert WARNING_ES in text(spanish)
    response = owner_client.get(f"/en/submit/{draft.pk}/bundle.zip")
    stored = json.loads(zipfile.ZipFile(io.BytesIO(response.getvalue())).read("projection.json"))
    gate = stored["minibatch_gate"]
    assert gate["measured"] is True and gate["evaluation"] == evaluation.pk
    assert (gate["k"], gate["flip_share"], gate["minibatch"]) == (3, 0.18, 3)
    assert gate["right_call"] == pytest.approx(0.740697, abs=1e-6)
    assert gate["coin_toss"] is True and gate["minibatch_for"] == 12
    assert gate["right_call_for"] == pytest.approx(0.901647, abs=1e-6)
    assert gate["step"] == pytest.approx(0.1)


def test_a_review_without_any_evaluation_has_no_gate(
    owner_client, draft, saved_metric, session_models, django_capture_on_commit_callbacks
):
    ready_for_review(owner_client, draft, saved_metric, django_capture_on_commit_callbacks)
    page = owner_client.get(url(draft, "review")).content.decode()
    assert gate_part(page) == ""
    response = owner_client.get(f"/en/submit/{draft.pk}/bundle.zip")
    stored = json.loads(zipfile.ZipFile(io.BytesIO(response.getvalue())).read("projection.json"))
    assert stored["minibatch_gate"] is None


def test_a_noise_without_its_variance_counts_as_unmeasured(owner_client, at_models):
    evaluate(at_models, summary={**NOISY, "noise": {**NOISE, "variance": None}})
    part = gate_part(models_page(owner_client, at_models))
    assert "coin toss" not in part and "This metric calls a model" in part
