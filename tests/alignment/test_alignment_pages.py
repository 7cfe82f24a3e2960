"""The alignment pages without a real run: when the evaluation offers it, what the start
page says, what Start makes (the dataset version, the draft, the check, the Alignment),
what Accept makes of a finished run's best prompt, and what is refused, to whom."""

from __future__ import annotations

import csv
import io

import pytest
from django.template import Context, Template
from django.urls import reverse

from alignment import plans
from alignment.models import Alignment
from contract import judge_prompt
from evaluations.models import Evaluation
from metrics import services as metric_services
from metrics.models import MetricVersion
from runs.models import Run
from submissions import rules
from submissions.models import Dataset
from tests.alignment import world
from tests.alignment.conftest import BETTER, MODEL, finished_run, hand_evaluation

pytestmark = pytest.mark.django_db


def start_url(evaluation) -> str:
    return reverse("alignment:start", args=[evaluation.pk])


def link(evaluation) -> str:
    template = Template("{% load alignment_links %}{% alignment_link evaluation %}")
    return template.render(Context({"evaluation": evaluation}))


def start(client, evaluation, capture, budget="150"):
    with capture(execute=False) as sent:
        response = client.post(start_url(evaluation), {"budget": budget})
    return response, sent


# -- whether it is offered ------------------------------------------------------------


def test_a_judge_with_enough_labels_is_offered(evaluation):
    assert plans.refusal(evaluation) is None
    assert 'id="align-judge"' in link(evaluation)
    assert start_url(evaluation) in link(evaluation)


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ("few_labels", "too_few_labelled"),
        ("helper_files", "helper_files"),
        ("no_llm", "no_llm_call"),
        ("f_string", "f_string"),
        ("no_human", "no_human"),
        ("running", "not_done"),
        ("from_draft", "no_recorded_output"),
    ],
)
def test_a_judge_that_cannot_be_aligned_is_not_offered(owner, judge_version, change, code):
    version = judge_version
    metric = version.metric
    if change == "helper_files":
        version, _ = metric_services.metric_save(
            metric, source=world.JUDGE, files={"rules.py": "X = 1\n"}
        )
    elif change == "no_llm":
        source = (
            "JUDGE_PROMPT = 'x'\ndef score(input, output, expected=None):\n    return 1.0, {}\n"
        )
        version, _ = metric_services.metric_save(metric, source=source)
    elif change == "f_string":
        source = world.JUDGE.replace('JUDGE_PROMPT = """', 'JUDGE_PROMPT = f"""')
        version, _ = metric_services.metric_save(metric, source=source)
    labelled = plans.MIN_LABELLED - 1 if change == "few_labels" else None
    evaluation = hand_evaluation(owner, version, labelled=labelled)
    if change == "no_human":
        evaluation.human = {}
    elif change == "running":
        evaluation.status = Evaluation.Status.RUNNING
    elif change == "from_draft":
        evaluation.recorded_column = ""
    evaluation.save()
    refused = plans.refusal(evaluation)
    assert refused is not None and refused.code == code
    assert link(evaluation).strip() == ""


def test_the_start_page_says_what_will_happen(owner_client, evaluation):
    response = owner_client.get(start_url(evaluation))
    assert response.status_code == 200
    page = response.content.decode()
    assert "<code>JUDGE_PROMPT</code> (line 5 of metric.py)" in page
    assert "You grade answers to questions.\nSay PASS if the answer is right" in page
    # 30 labelled rows, split 60/20/20 with seed 0.
    assert "30 rows of this evaluation have a person" in page
    for split, count in (("train", 18), ("validation", 6), ("test", 6)):
        row = page.split(f'id="align-split-{split}"')[1].split("</tr>")[0]
        assert f'<td class="num">{count}</td>' in row
    assert f'<code id="align-judge-model">{MODEL}</code>' in page
    assert f'<code id="align-reflection-model">{MODEL}</code>' in page
    assert 'name="budget" value="150"' in page
    assert 'id="align-start"' in page


def test_start_makes_the_rows_the_draft_and_the_check(
    owner, owner_client, judge_version, django_capture_on_commit_callbacks
):
    evaluation = hand_evaluation(owner, judge_version, rows=26, labelled=22)
    response, sent = start(owner_client, evaluation, django_capture_on_commit_callbacks, "40")
    alignment = Alignment.objects.get(owner=owner)
    draft = alignment.draft
    assert response.status_code == 302
    assert response["Location"] == reverse("submissions:step", args=[draft.pk, "check"])
    # The labelled rows only, as a new version of the dataset, the columns the judge reads
    # and the person's.
    dataset = Dataset.objects.get(pk=alignment.dataset_id)
    assert dataset.parent_id == evaluation.dataset_id and dataset.format == "csv"
    assert dataset.columns == ["question", "answer", "verdict", "why"]
    rows = list(csv.DictReader(io.StringIO(bytes(dataset.raw).decode())))
    assert [r["answer"] for r in rows] == [world.answer(i) for i in range(22)]
    assert [r["verdict"] for r in rows] == [world.verdict(i) for i in range(22)]
    # The draft: the prompt as a Python program's artifact, the agreement metric inline.
    assert (draft.artifact_kind, draft.artifact_content) == ("python", world.JUDGE_PROMPT)
    assert "def run(artifact, input):" in draft.program_source
    assert (
        draft.metric_mode == "inline"
        and "def score(input, output, expected=None):" in draft.inline_source
    )
    assert draft.roles == {
        "question": "input",
        "answer": "input",
        "verdict": "output",
        "why": "output",
    }
    assert (draft.train_percent, draft.validation_percent, draft.test_percent, draft.seed) == (
        60,
        20,
        20,
        0,
    )
    assert (draft.task_model, draft.reflection_model, draft.engine, draft.budget) == (
        MODEL,
        MODEL,
        "gepa",
        40,
    )
    assert draft.dataset_facts["counts"] == {"train": 13, "validation": 5, "test": 4}
    # Every step done; the check started on what the draft holds.
    state = rules.DraftState(draft)
    assert set(state.problems) == {"check"} and state.check_state == "queued"
    assert len(sent) == 1  # the check's task message, sent once committed
    assert (alignment.seed_version, alignment.constant, alignment.evaluation) == (
        judge_version,
        "JUDGE_PROMPT",
        evaluation,
    )
    assert alignment.settings["roles"] == world.ROLES and alignment.settings["human"][
        "classes"
    ] == ["fail", "pass"]


def test_a_judge_that_cannot_be_aligned_says_why_and_starts_nothing(
    owner, owner_client, judge_version, django_capture_on_commit_callbacks
):
    evaluation = hand_evaluation(owner, judge_version, labelled=5)
    page = owner_client.get(start_url(evaluation)).content.decode()
    assert "Only 5 rows have a person&#x27;s judgement: aligning a judge needs at least 20." in page
    assert 'id="align-start"' not in page
    response, sent = start(owner_client, evaluation, django_capture_on_commit_callbacks)
    assert response.status_code == 422 and not sent
    assert not Alignment.objects.exists()


def test_a_budget_outside_the_wizards_limits_is_refused(
    owner_client, evaluation, django_capture_on_commit_callbacks
):
    for budget in ("0", "1000001", "many"):
        response, _sent = start(
            owner_client, evaluation, django_capture_on_commit_callbacks, budget
        )
        assert response.status_code == 400
        assert 'class="errorlist"' in response.content.decode()
    assert not Alignment.objects.exists()


def test_an_outsider_gets_404_on_every_page(
    client, outsider, evaluation, owner_client, django_capture_on_commit_callbacks
):
    start(owner_client, evaluation, django_capture_on_commit_callbacks)
    run = finished_run(Alignment.objects.get())
    client.force_login(outsider)
    assert client.get(start_url(evaluation)).status_code == 404
    assert client.post(start_url(evaluation), {"budget": "10"}).status_code == 404
    assert client.post(reverse("alignment:accept", args=[run.pk])).status_code == 404
    assert Alignment.objects.count() == 1 and not Alignment.objects.get().accepted_at


# -- accepting ------------------------------------------------------------------------


def test_accept_saves_the_prompt_and_compares_on_the_held_out_rows(
    owner, owner_client, evaluation, judge_version, django_capture_on_commit_callbacks
):
    start(owner_client, evaluation, django_capture_on_commit_callbacks)
    alignment = Alignment.objects.get()
    run = finished_run(alignment)
    page = owner_client.get(reverse("runs:detail", args=[run.pk])).content.decode()
    assert "Save the best prompt as a new version of sourced answers" in page
    with django_capture_on_commit_callbacks(execute=False) as sent:
        response = owner_client.post(reverse("alignment:accept", args=[run.pk]))
    alignment.refresh_from_db()
    new = alignment.accepted_version
    comparison = alignment.comparison
    assert response.status_code == 302
    assert response["Location"] == reverse("evaluations:detail", args=[comparison.pk])
    assert len(sent) == 1  # the comparison's task message
    assert new.metric_id == judge_version.metric_id and new.number == judge_version.number + 1
    seed_prompt = judge_prompt.find_constant(judge_version.source, "JUDGE_PROMPT")
    new_prompt = judge_prompt.find_constant(new.source, "JUDGE_PROMPT")
    assert new_prompt.value == BETTER

    def cut(source, prompt):
        lines = source.splitlines(keepends=True)
        start_at = sum(map(len, lines[: prompt.line - 1])) + prompt.column
        end_at = sum(map(len, lines[: prompt.end_line - 1])) + prompt.end_column
        return source[:start_at] + source[end_at:]

    assert cut(new.source, new_prompt) == cut(judge_version.source, seed_prompt)
    # The held-out rows of the labelled rows, the seed version and the new one compared,
    # the person's columns read as the source evaluation read them.
    assert (comparison.metric_version, comparison.second, comparison.second_version) == (
        judge_version,
        "compare",
        new,
    )
    assert comparison.dataset_id == alignment.dataset_id and comparison.total == 6
    assert comparison.selection["split"] == "test" and comparison.selection["ratios"] == [
        60,
        20,
        20,
    ]
    assert comparison.human == evaluation.human and comparison.roles == world.ROLES
    assert comparison.recorded_column == "answer"
    # Its page links the comparison; a second accept is refused, nothing more saved.
    page = owner_client.get(reverse("runs:detail", args=[run.pk])).content.decode()
    assert 'id="align-accept"' not in page and f"/evaluations/{comparison.pk}/" in page
    response = owner_client.post(reverse("alignment:accept", args=[run.pk]), follow=True)
    assert "This run&#x27;s best prompt was accepted already." in response.content.decode()
    assert MetricVersion.objects.filter(metric=judge_version.metric).latest("number") == new
    assert Evaluation.objects.filter(second="compare").count() == 1


def test_accept_is_refused_before_the_run_finished_or_when_it_found_nothing_new(
    owner_client, evaluation, django_capture_on_commit_callbacks
):
    start(owner_client, evaluation, django_capture_on_commit_callbacks)
    alignment = Alignment.objects.get()
    run = finished_run(alignment, text=world.JUDGE_PROMPT)
    versions = MetricVersion.objects.count()
    url = reverse("alignment:accept", args=[run.pk])
    response = owner_client.post(url, follow=True)
    assert "The run&#x27;s best prompt is the one it started from" in response.content.decode()
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING, result=None)
    response = owner_client.post(url, follow=True)
    assert "The run has not finished with a best prompt yet." in response.content.decode()
    assert MetricVersion.objects.count() == versions and Alignment.objects.get().accepted_at is None


def test_a_run_that_is_no_alignments_has_no_accept(owner, owner_client):
    from tests.runs.run_data import make_quiz_run

    run = make_quiz_run(owner)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FINISHED, result={"best": {"text": "x"}})
    assert owner_client.post(reverse("alignment:accept", args=[run.pk])).status_code == 404
    page = owner_client.get(reverse("runs:detail", args=[run.pk])).content.decode()
    assert 'id="run-alignment"' not in page
