"""Aligning a judge from end to end, in this process as the workers run it: a real
evaluation of the judge with people's labels, Start, the draft's contract check, the
submit, a real GEPA run with loopback fake models (tests.alignment.world), Accept, and the
comparison evaluation on the held-out rows, every case in the sandbox."""

from __future__ import annotations

import pytest
from django.urls import reverse

from alignment.models import Alignment
from checks import execution as check_execution
from contract import judge_prompt
from evaluations.execution import execute_evaluation
from evaluations.models import Evaluation
from runs import execution as run_execution
from runs.models import Run
from submissions import rules
from tests.alignment import world

pytestmark = pytest.mark.django_db


def cut(source: str, prompt) -> str:
    """The source with the prompt's string literal cut out."""
    lines = source.splitlines(keepends=True)
    start = sum(map(len, lines[: prompt.line - 1])) + prompt.column
    end = sum(map(len, lines[: prompt.end_line - 1])) + prompt.end_column
    return source[:start] + source[end:]


def test_a_judge_aligned_with_people_agrees_with_them_better_on_rows_it_never_saw(
    owner,
    owner_client,
    judged_evaluation,
    judge_version,
    judge_models,
    django_capture_on_commit_callbacks,
    settings,
    tmp_path,
):
    settings.RUNS_DIR = tmp_path / "runs"
    evaluation = judged_evaluation
    seed_figures = evaluation.summary["human"]["first"]
    assert seed_figures["n"] == world.ROWS and seed_figures["accuracy"]["value"] < 1.0

    # The results page offers it in its "agree with people" section.
    page = owner_client.get(reverse("evaluations:detail", args=[evaluation.pk])).content.decode()
    people = page.split('id="people"')[1].split("</section>")[0]
    assert reverse("alignment:start", args=[evaluation.pk]) in people

    # Start: the draft, and its check, run here as the checks worker would.
    with django_capture_on_commit_callbacks(execute=False):
        response = owner_client.post(
            reverse("alignment:start", args=[evaluation.pk]), {"budget": "150"}
        )
    assert response.status_code == 302
    alignment = Alignment.objects.get(owner=owner)
    draft = alignment.draft
    check_execution.execute_check(draft.contract_check_id)
    draft.contract_check.refresh_from_db()
    assert draft.contract_check.status == "passed", draft.contract_check.result
    assert owner_client.get(response["Location"]).status_code == 200
    assert rules.problems(draft) == {}  # every step done: the review step may submit it

    # Submitted as any run, and run to its end.
    with django_capture_on_commit_callbacks(execute=False):
        response = owner_client.post(reverse("runs:submit", args=[draft.pk]))
    assert response.status_code == 302, response.content.decode()[-2000:]
    run = Run.objects.get(draft=draft)
    run_execution.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == "finished", (run.failure_params, run.progress)
    best = run.result["best"]["text"]
    assert world.RULE in best and run.result["best"]["val_mean"] > run.result["seed"]["val_mean"]
    # The judge ran once a case with each candidate (task model), the reflection model
    # proposed the rule, and the agreement metric called no model.
    spend = run.progress["spend"]
    assert spend["task_calls"] == run.progress["metric_calls"] > 0
    assert spend["reflection_calls"] >= 1 and spend["metric_calls"] == 0

    # Accept: the new version differs from the seed in the constant alone.
    page = owner_client.get(reverse("runs:detail", args=[run.pk])).content.decode()
    assert 'id="align-accept"' in page
    with django_capture_on_commit_callbacks(execute=False):
        response = owner_client.post(reverse("alignment:accept", args=[run.pk]))
    alignment.refresh_from_db()
    new = alignment.accepted_version
    assert response["Location"] == reverse("evaluations:detail", args=[alignment.comparison_id])
    seed_prompt = judge_prompt.find_constant(judge_version.source, "JUDGE_PROMPT")
    new_prompt = judge_prompt.find_constant(new.source, "JUDGE_PROMPT")
    assert new.source != judge_version.source and new_prompt.value == best
    assert cut(new.source, new_prompt) == cut(judge_version.source, seed_prompt)

    # The comparison on the held-out rows: the new version agrees with people better.
    execute_evaluation(alignment.comparison_id)
    comparison = Evaluation.objects.get(pk=alignment.comparison_id)
    assert comparison.status == "done" and comparison.total == 6
    human = comparison.summary["human"]
    assert human["first"]["n"] == human["second"]["n"] == 6
    assert human["second"]["accuracy"]["value"] == 1.0
    assert human["first"]["accuracy"]["value"] < human["second"]["accuracy"]["value"]
    page = owner_client.get(reverse("evaluations:detail", args=[comparison.pk])).content.decode()
    people = page.split('id="people"')[1].split("</section>")[0]
    assert f"version {judge_version.number}" in people and f"version {new.number}" in people
