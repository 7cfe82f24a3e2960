"""The run page's log says why an iteration proposed nothing: gepa (and DSPy GEPA, through
the same proposer) skips reflecting when the sampled minibatch already scored perfectly.
Runs of the quiz in this process, as the runs worker's task runs them, and logs written
by hand."""

from __future__ import annotations

import re
import textwrap
from html import unescape

import pytest
from django.utils import translation

from runs import execution
from runs.models import RunEvent
from tests import quiz
from tests.runs.run_data import hand_run, make_quiz_run, quiz_models
from wording import format_count

pytestmark = pytest.mark.django_db

# As quiz.SPECIFIC, but India's capital (a validation case) scores 0.5 even when right: a
# candidate with the instruction is perfect on every training case and never on the
# validation cases, so the run goes on to its budget with nothing left to learn.
INDIA_HALF = textwrap.dedent(
    """
    def score(input, output, expected):
        if str(output).strip() == expected["capital"]:
            if input["country"] == "India":
                return 0.5, {"feedback": "Right, but New Delhi is only half the story."}
            return 1.0, {"feedback": "Correct: the city name alone."}
        return 0.0, {"feedback": "The output must be the city name only, with no other words."}
    """
).lstrip()


@pytest.fixture(autouse=True)
def _runs_dir(settings, tmp_path):
    settings.RUNS_DIR = tmp_path / "runs"


def log_text(html: str) -> str:
    start = html.index('id="run-log"')
    block = html[start : html.index("</section>", start)]
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", block)).split())


def log_items(html: str) -> list[str]:
    start = html.index('id="run-log"')
    block = html[start : html.index("</section>", start)]
    return [
        " ".join(unescape(re.sub(r"<[^>]+>", " ", item)).split())
        for item in re.findall(r"<li class=\"event-.*?</li>", block, re.S)
    ]


@pytest.mark.parametrize("program", [None, quiz.DSPY_PROGRAM], ids=["gepa", "dspy_gepa"])
def test_iterations_whose_minibatch_scored_perfectly_say_so_in_the_log(
    owner_client, owner, session_models, program
):
    run = make_quiz_run(owner, source=INDIA_HALF, budget=45, program=program)
    with quiz_models(session_models):
        execution.execute_run(run.pk)
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == ("finished", "metric_calls"), run.failure_params
    # One reflection call found the instruction; every later minibatch was perfect.
    assert run.progress["spend"]["reflection_calls"] == 1
    skipped = list(RunEvent.objects.filter(run=run, kind="reflection_skipped").order_by("id"))
    assert len(skipped) >= 3
    for event in skipped:
        assert event.data["code"] == "perfect_minibatch" and event.data["candidate"] == 1
        assert len(event.data["cases"]) == 3
        assert set(event.data["cases"]) <= set(range(6))  # positions in the training split
    page = owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    first, last = skipped[0].iteration, skipped[-1].iteration
    # The whole series, as one line with its count, not a "picked" line per iteration.
    assert (
        f"Iterations {first} to {last}: {len(skipped)} minibatches in a row scored perfectly "
        "on the candidate picked (1): nothing to improve, so no reflection calls."
    ) in log_text(page)
    assert "was picked to improve on" not in " ".join(log_items(page)[:2])


def test_a_short_series_names_each_minibatchs_cases(owner_client, owner):
    run = hand_run(owner)
    for iteration, cases in ((4, [2, 6, 8]), (5, [0, 1, 3])):
        RunEvent.objects.create(
            run=run, iteration=iteration, kind="parent_selected", data={"parent": 1, "score": 0.75}
        )
        RunEvent.objects.create(
            run=run,
            iteration=iteration,
            kind="reflection_skipped",
            data={"code": "perfect_minibatch", "candidate": 1, "cases": cases},
        )
    RunEvent.objects.create(
        run=run,
        iteration=6,
        kind="reflection_skipped",
        data={"code": "no_traces", "candidate": 2, "cases": [4]},
    )
    items = log_items(owner_client.get(f"/en/runs/{run.pk}/").content.decode())
    assert items[0].endswith(
        "Nothing was proposed from candidate 2 on the minibatch of training cases 5 "
        "(no_traces), so no reflection call."
    )
    assert items[1].endswith(
        "iteration 5 The minibatch of training cases 1, 2, 4 scored perfectly on candidate 1: "
        "nothing to improve, so no reflection call."
    )
    assert items[2].endswith("Candidate 1 (mean 0.75) was picked to improve on.")
    assert "training cases 3, 7, 9 scored perfectly" in items[3]


@pytest.mark.parametrize("language", ["en", "es", "hi"])
def test_a_long_series_reads_as_one_line_with_its_count(owner_client, owner, language):
    run = hand_run(owner)
    RunEvent.objects.bulk_create(
        event
        for iteration in range(1001, 1051)
        for event in (
            RunEvent(
                run=run, iteration=iteration, kind="parent_selected", data={"parent": 2, "score": 1}
            ),
            RunEvent(
                run=run,
                iteration=iteration,
                kind="reflection_skipped",
                data={"code": "perfect_minibatch", "candidate": 2, "cases": [0, 1, 2]},
            ),
        )
    )
    items = log_items(owner_client.get(f"/{language}/runs/{run.pk}/").content.decode())
    with translation.override(language):
        first, last = (" ".join(format_count(n).split()) for n in (1001, 1050))
    assert {"en": "1,001", "es": "1 001", "hi": "1,001"}[language] == first
    # One line for the fifty iterations, the numbers grouped as the reader's language does;
    # the events before them follow.
    assert f"{first} " in items[0] and f" {last}" in items[0] and " 50 " in items[0]
    assert "was picked to improve on" not in items[0] and len(items) > 1
    if language == "en":
        assert items[0].endswith(
            "Iterations 1,001 to 1,050: 50 minibatches in a row scored perfectly on the "
            "candidate picked (2): nothing to improve, so no reflection calls."
        )
