"""Auto's choice: the engine the docs' table names for each artifact kind, and why, on the
review step and on the run page."""

from __future__ import annotations

import pytest
from django.utils import translation

from submissions import rules
from submissions.models import ArtifactKind, Draft, Engine
from submissions.presenters import config_rows
from tests.runs.run_data import make_quiz_run

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("kind", "engine", "words"),
    [
        (
            "prompt",
            "gepa",
            "Auto chose GEPA: it optimizes prompt templates and Python programs, and this artifact is a prompt template.",
        ),
        (
            "python",
            "gepa",
            "Auto chose GEPA: it optimizes prompt templates and Python programs, and this artifact is a Python program.",
        ),
        (
            "dspy",
            "dspy_gepa",
            "Auto chose DSPy GEPA: it optimizes DSPy programs, and this artifact is one.",
        ),
    ],
)
def test_auto_picks_the_docs_engine_for_each_kind_and_says_why(owner, kind, engine, words):
    draft = Draft(owner=owner, artifact_kind=kind, engine=Engine.AUTO)
    assert rules.resolved_engine(draft) == engine
    config = {
        "artifact": {"kind": kind},
        "engine": {"chosen": "auto", "resolved": engine},
        "dataset": {"columns": {}, "splits": {"counts": {}}},
    }
    with translation.override("en"):
        assert config_rows(config)["engine_reason"] == words
        chosen = {**config, "engine": {"chosen": engine, "resolved": engine}}
        assert config_rows(chosen)["engine_reason"] == ""  # a choice of the user's needs no reason


def test_the_run_page_says_which_engine_auto_chose_and_why(owner, owner_client):
    run = make_quiz_run(owner)
    run.config["engine"] = {"chosen": "auto", "resolved": "gepa"}
    run.save()
    page = owner_client.get(f"/en/runs/{run.pk}/").content.decode()
    assert "Auto chose GEPA: it optimizes prompt templates and Python programs" in page
    assert set(ArtifactKind.values) == {"prompt", "python", "dspy"}
