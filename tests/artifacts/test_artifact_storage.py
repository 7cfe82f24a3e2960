"""An artifact has one stored form (on a check, in a draft's fingerprint) and reads back
as the same value."""

from __future__ import annotations

import pytest

from contract.artifacts import Artifact, ArtifactError


@pytest.mark.parametrize(
    "artifact",
    [
        Artifact.prompt("Answer {question}"),
        Artifact.python("def run(artifact, input):\n    return artifact\n", "hello"),
    ],
)
def test_an_artifact_reads_back_as_it_was_stored(artifact):
    stored = artifact.to_dict()
    assert set(stored) == {"kind", "content", "source"}
    assert Artifact.from_dict(stored) == artifact
    assert Artifact.from_dict(stored).to_job() == artifact.to_job()


def test_a_prompt_stores_no_program_and_a_dspy_program_reads_back_as_one():
    assert Artifact.prompt("Hi").to_dict()["source"] == ""
    program = "import dspy\nprogram = dspy.Predict('q -> a')\n"
    stored = Artifact.dspy(program, output_fields=["a"]).to_dict()
    assert stored == {"kind": "dspy", "content": "", "source": program, "output_fields": ["a"]}
    back = Artifact.from_dict(stored)
    assert back == Artifact.dspy(program, output_fields=["a"])
    job = back.to_job()
    assert (job["kind"], job["output_fields"], job["instructions"]) == ("dspy", ["a"], {})


def test_an_unknown_stored_kind_is_refused_when_it_would_run():
    stored = Artifact.from_dict({"kind": "spreadsheet", "content": "x"})
    with pytest.raises(ArtifactError) as raised:
        stored.to_job()
    assert raised.value.code == "artifact_kind_unknown"
