"""Alignment fixtures: alice owns a judge metric (tests.alignment.world) and evaluations of
it with a person's label on each row; bob is the outsider."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polib
import pytest
from django.urls import reverse
from django.utils import translation

from alignment.models import Alignment
from checks.models import Check
from evaluations.execution import execute_evaluation
from evaluations.models import Evaluation, EvaluationCase
from evaluations.selection import default_selection
from metrics import services as metric_services
from runs.models import Run
from submissions.services import dataset_create, run_config
from tests.alignment import world

MODEL = "openai/test-gpt"
# The prompt the fake reflection model proposes: the seed's with the people's rule.
BETTER = f"{world.JUDGE_PROMPT}\n{world.RULE}"
HUMAN = {
    "label_column": "verdict",
    "note_column": "why",
    "classes": ["fail", "pass"],
    "threshold": 0.5,
}


@pytest.fixture(autouse=True)
def english():
    """Paths in English, whatever page an earlier test read in another language."""
    with translation.override("en"):
        yield


@pytest.fixture
def judge_version(owner):
    """Version 1 of alice's judge, its models set (the session catalogue's)."""
    metric = metric_services.metric_create(
        owner=owner, name="sourced answers", starter="exact_match"
    )
    version, _ = metric_services.metric_save(
        metric, source=world.JUDGE, reflection_model=MODEL, metric_model=MODEL
    )
    return version


def upload(owner, rows: int = world.ROWS, labelled: int | None = None):
    return dataset_create(
        owner=owner,
        filename="answers.csv",
        data=world.csv_bytes(rows, labelled=labelled),
    )


def hand_evaluation(
    owner, version, *, rows: int = world.ROWS, labelled: int | None = None
) -> Evaluation:
    """A finished evaluation of `version` written by hand (no sandbox): every row scored
    1.0 (the seed judge passes all), the first `labelled` rows with the person's label."""
    labelled = rows if labelled is None else labelled
    dataset = upload(owner, rows, labelled)
    evaluation = Evaluation.objects.create(
        owner=owner,
        dataset=dataset,
        source=version.source,
        metric_version=version,
        status=Evaluation.Status.DONE,
        roles=dict(world.ROLES),
        recorded_column="answer",
        human=dict(HUMAN),
        selection=default_selection(),
        total=rows,
        done=rows,
    )
    for i in range(rows):
        human = None
        if i < labelled:
            human = {"label": world.verdict(i)}
            if world.note(i):
                human["note"] = world.note(i)
        EvaluationCase.objects.create(
            evaluation=evaluation,
            index=i,
            row=i,
            file_row=i + 2,
            status="valid",
            score=1.0,
            feedback="PASS: the answer is right.",
            human=human,
        )
    return evaluation


@pytest.fixture
def evaluation(owner, judge_version):
    return hand_evaluation(owner, judge_version)


def finished_run(alignment: Alignment, text: str = BETTER) -> Run:
    """The alignment's draft submitted and finished, as a worker leaves it (by hand)."""
    draft = alignment.draft
    check = draft.contract_check
    Check.objects.filter(pk=check.pk).update(status="passed", result={})
    check.refresh_from_db()
    return Run.objects.create(
        owner=alignment.owner,
        draft=draft,
        name=draft.name,
        config=run_config(draft),
        metric_source=draft.inline_source,
        dataset=draft.dataset,
        contract_check=check,
        status=Run.Status.FINISHED,
        result={"best": {"text": text, "val_mean": 1.0}, "seed": {"val_mean": 0.5}},
    )


def evaluate_form(dataset, version) -> dict:
    """The playground's evaluation form: every row, the person's columns by role."""
    data = {
        "dataset": dataset.pk,
        "version": version.pk,
        "recorded_column": "answer",
        "split": "all",
        "count": "every",
        "sample": "200",
        "sample_seed": "0",
        "split_mode": "ratio",
        "train_percent": "70",
        "validation_percent": "15",
        "test_percent": "15",
        "seed": "0",
        "split_column": "",
        "second": "",
        "second_version": "",
    }
    for index, column in enumerate(dataset.columns):
        data[f"role_{index}"] = world.ROLES[column]
        data[f"type_{index}"] = "text"
    return data


@pytest.fixture
def judge_models(session_models):
    """The session provider answers as the world's judge and reflection models."""
    session_models.respond = world.respond
    yield session_models
    session_models.respond = None


@pytest.fixture
def judged_evaluation(
    owner, owner_client, judge_version, judge_models, django_capture_on_commit_callbacks
):
    """The judge evaluated for real on the labelled dataset, in this process."""
    dataset = upload(owner)
    url = reverse("evaluations:start", args=[judge_version.metric_id])
    with django_capture_on_commit_callbacks(execute=False):
        response = owner_client.post(url, evaluate_form(dataset, judge_version))
    assert response.status_code == 302, response.content.decode()[-2000:]
    evaluation = Evaluation.objects.filter(owner=owner).order_by("-pk").first()
    execute_evaluation(evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.DONE, evaluation.failure_params
    return evaluation


# -- translations -------------------------------------------------------------------


@pytest.fixture
def pending_translations(settings, tmp_path):
    """The catalogues, with this work's translations not yet merged into them: a JSON file
    of {msgid: {"es", "hi"}} named by SKYNET_PENDING_TRANSLATIONS (for a run before the
    .po files are refreshed) compiled into a locale folder that fills what they lack.
    Without it, the catalogues alone (the merged state) are what the tests read."""
    path = os.environ.get("SKYNET_PENDING_TRANSLATIONS")
    if not path:
        yield {}
        return
    pending = json.loads(Path(path).read_text())
    for language in ("es", "hi"):
        catalogue = polib.POFile()
        catalogue.metadata = {
            "Content-Type": "text/plain; charset=UTF-8",
            "Plural-Forms": "nplurals=2; plural=(n != 1);",
        }
        for key, values in pending.items():
            text = values[language]
            if "||" in key:
                singular, plural = key.split("||", 1)
                entry = polib.POEntry(
                    msgid=singular, msgid_plural=plural, msgstr_plural={0: text[0], 1: text[1]}
                )
            else:
                entry = polib.POEntry(msgid=key, msgstr=text)
            catalogue.append(entry)
        folder = tmp_path / "locale" / language / "LC_MESSAGES"
        folder.mkdir(parents=True)
        catalogue.save_as_mofile(str(folder / "django.mo"))
    # Last: the project's own catalogues win where both have a msgid.
    settings.LOCALE_PATHS = [*settings.LOCALE_PATHS, str(tmp_path / "locale")]
    yield pending
