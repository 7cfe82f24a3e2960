"""`skynet align` and `skynet accept-prompt` against the live server and the real worker:
an evaluation of a judge written by hand (tests.alignment's, no sandbox) aligned into a
draft whose check step is printed; a run finished by hand accepted, its comparison
evaluation run in the worker and waited for, each version's agreement printed; and the
server's refusals in its words, in English and Spanish, exit 2."""

# The alignment tests' fixtures, imported by name: pytest finds them here.
# ruff: noqa: F401, F811

from __future__ import annotations

import pytest

from alignment.models import Alignment
from evaluations.models import Evaluation
from metrics.models import MetricVersion
from tests.alignment.conftest import (
    BETTER,
    evaluation,
    finished_run,
    hand_evaluation,
    judge_models,
    judge_version,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def test_align_makes_the_draft_and_says_where_its_check_is(
    cli, owner, evaluation, celery_worker_process
):
    done = cli("align", str(evaluation.pk), "--budget", "60")
    assert done.returncode == 0, done.stderr
    alignment = Alignment.objects.get(owner=owner)
    draft = alignment.draft
    assert draft.budget == 60 and alignment.evaluation_id == evaluation.pk
    page = f"{cli.url}/en/submit/{draft.pk}/check/"
    assert done.stdout.splitlines() == [
        f"Improving the judge of evaluation {evaluation.pk}: draft {draft.pk}.",
        f"  It starts from version {alignment.seed_version.number} of metric "
        f"{alignment.seed_version.metric_id}, whose prompt is JUDGE_PROMPT.",
        f"  labelled rows: 18 train, 6 validation, 6 test (dataset {alignment.dataset_id})",
        f"  Contract check {draft.contract_check_id} started.",
        "  Next: once the check passes, submit from the review step:",
        f"  {page}",
    ]


def test_a_refusal_is_the_servers_in_the_language_asked_for(
    cli, owner, judge_version, celery_worker_process
):
    few = hand_evaluation(owner, judge_version, labelled=3)
    done = cli("align", str(few.pk))
    assert done.returncode == 2 and done.stdout == ""
    assert (
        "Only 3 rows have a person's judgement: aligning a judge needs at least 20." in done.stderr
    )
    spanish = cli("align", str(few.pk), "--language", "es")
    assert spanish.returncode == 2
    assert "Solo 3 filas tienen el juicio de una persona" in spanish.stderr, spanish.stderr
    code, refused = cli.json("align", str(few.pk))
    assert code == 2 and refused["error"]["code"] == "too_few_labelled"
    # A budget the wizard would not take is the server's to refuse, naming the field.
    enough = hand_evaluation(owner, judge_version)
    code, refused = cli.json("align", str(enough.pk), "--budget", "0")
    assert code == 2 and refused["error"]["field"] == "budget", refused
    assert not Alignment.objects.exists()


def test_an_accepted_prompt_is_compared_and_its_agreement_printed(
    cli, owner, evaluation, judge_version, judge_models, celery_worker_process
):
    code, started = cli.json("align", str(evaluation.pk))
    assert code == 0, started
    run = finished_run(Alignment.objects.get(pk=started["alignment"]["id"]))

    done = cli("accept-prompt", str(run.pk), "--wait")
    assert done.returncode == 0, (done.stdout, done.stderr)
    alignment = Alignment.objects.get()
    new = alignment.accepted_version
    assert BETTER in new.source and new.number == judge_version.number + 1
    comparison = Evaluation.objects.get(pk=alignment.comparison_id)
    assert comparison.status == Evaluation.Status.DONE
    lines = done.stdout.splitlines()
    seed_number = judge_version.number
    assert lines[:3] == [
        f"Saved the run's best prompt as version {new.number} of metric {judge_version.metric_id}.",
        f"  Evaluation {comparison.pk} compares it with version {seed_number}, the one it "
        "started from, on the held-out rows:",
        f"  {cli.url}/en/evaluations/{comparison.pk}/",
    ]
    # Each version's agreement with people on the held-out rows, as the summary has it.
    human = comparison.summary["human"]
    seed, accepted = human["first"]["accuracy"]["value"], human["second"]["accuracy"]["value"]
    assert accepted > seed
    said = "\n".join(lines)
    people = "\n    agreement with people over 6 rows:"
    assert f"  version {seed_number}, the one it started from{people}" in said
    assert f"  version {new.number}, the accepted prompt{people}" in said
    accuracies = [line.split()[1] for line in lines if line.startswith("      accuracy ")]
    assert accuracies == [f"{seed:.4g}", f"{accepted:.4g}"], said

    # Accepted once: again is the server's refusal, and no third version.
    again = cli("accept-prompt", str(run.pk))
    assert again.returncode == 2
    assert "This run's best prompt was accepted already." in again.stderr
    assert MetricVersion.objects.filter(metric=judge_version.metric).count() == new.number
