"""The packages a DSPy program imports, staged for the sandbox (sandbox.site):
only what a program loads, readable by the sandbox's user alone, bound at SITE_MOUNT; and
a sandbox without them fails a DSPy program's run closed, saying why."""

from __future__ import annotations

import dataclasses
import os
import stat

import sandbox
from contract.artifacts import Artifact
from contract.cases import Case
from contract.evaluation import evaluate
from contract.runner import OnDemand
from sandbox import site
from tests import quiz

METRIC = "def score(input, output, expected):\n    return 1.0, {'feedback': 'ok'}\n"


def test_only_what_a_dspy_program_loads_is_staged_and_only_for_the_sandbox():
    config = sandbox.SandboxConfig()
    staged = site.site_packages(sandbox.stage_gid(config))
    assert staged is not None and os.path.isdir(os.path.join(staged, "dspy"))
    names = set(os.listdir(staged))
    assert {"dspy", "pydantic", "gepa"} <= names
    # Not the worker's other packages, nor the runtime (the sandbox has its own copy).
    assert not names & {"django", "celery", "skynet", "playwright", "litellm"}
    mode = stat.S_IMODE(os.stat(os.path.dirname(staged)).st_mode)
    assert mode in (0o700, 0o750) and not mode & stat.S_IRWXO
    # Made once per process.
    assert site.site_packages(sandbox.stage_gid(config)) == staged


def _run_once(config) -> dict:
    job = Artifact.dspy(quiz.DSPY_PROGRAM, output_fields=["capital"]).to_job()
    got = []
    evaluate(
        METRIC,
        [Case(input={"country": "Peru"}, output=None, expected={"capital": "Lima"})],
        on_scored=got.append,
        sandboxes=OnDemand(config),
        timeout_s=20,
        artifact=job,
    )
    (scored,) = got
    return scored.row.run


def test_without_the_staged_packages_a_dspy_program_fails_closed_saying_so():
    run = _run_once(sandbox.SandboxConfig())
    assert (run["status"], run["problem"]) == ("error", "dspy_unavailable")
    assert run["params"]["type"] == "ModuleNotFoundError"


def test_with_them_the_program_loads_in_the_sandbox():
    config = sandbox.SandboxConfig()
    config = dataclasses.replace(
        config, site_packages=site.site_packages(sandbox.stage_gid(config))
    )
    run = _run_once(config)
    # No task model here: the program loaded and ran, and its model call was refused.
    assert run["problem"] == "run_model_error", run
