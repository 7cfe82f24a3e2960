"""The run bundle: a zip of everything a run uses, to keep with its results.

metric.py            the exact metric the run uses
src/...              its helper modules, at their paths beside it (contract.files)
run.json             the run configuration
dataset.csv|.jsonl   the dataset, byte for byte as uploaded
check-report.json    the contract check that passed, as stored
projection.json      the run's projected cost and time, and the evaluation it comes from
prompt.txt           a prompt template's text, or
program.py           a program's source (and artifact.txt, its artifact text)
result.json          once the run found something: its result, and its best candidate as
best-prompt.txt      best-prompt.txt, best-instructions.txt (a DSPy program's) or
                     best-artifact.txt
dspy_metric.py       score() adapted to DSPy GEPA's metric call
skynet/              the helper package metric.py and dspy_metric.py import
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from checks.models import Check
from contract.files import path_problem
from runs.models import Run
from sandbox.runtime_path import RUNTIME_DIR
from submissions import rules, services
from submissions.models import Dataset, Draft

# The best candidate's file: a template, a DSPy program's instructions (each predictor's
# under its name when there are several), or a program's artifact text.
BEST_FILES = {"prompt": "best-prompt.txt", "dspy": "best-instructions.txt"}

# The helper package the bundle carries: what `from skynet import ...` in metric.py
# and the DSPy adapter need. The child's private modules stay out.
RUNTIME_FILES = (
    "__init__.py",
    "_model.py",
    "_reward.py",
    "_state.py",
    "dspy_adapter.py",
    "returns.py",
    "rewardspec.py",
    "safe.py",
    "signature.py",
    "wire.py",
)

DSPY_METRIC = '''"""score() from metric.py as a DSPy GEPA metric: metric(gold, pred, trace, pred_name, pred_trace).

    import dspy
    from dspy_metric import metric
    dspy.configure(lm=dspy.LM("openai/gpt-4.1-mini"))  # the task model; llm() asks it too
    optimizer = dspy.GEPA(metric=metric, reflection_lm=..., track_stats=True)

Inputs and expected values are the dataset's columns as this run marked them. llm() in
metric.py asks dspy's configured LM, or the model named by SKYNET_METRIC_MODEL; a return
value that breaks the contract, or llm() with no model, stops the run with the reason
rather than scoring 0. GEPA's second call on an example reuses the first verdict; it
names the predictor GEPA improves (pred_name), and gets that predictor's own text when
score's side info has "predictor_feedback" with that name (as program.named_predictors()
names it), else the general "feedback". See skynet/dspy_adapter.py.
"""

from metric import score
from skynet.dspy_adapter import as_dspy_metric

INPUT_FIELDS = {inputs}
OUTPUT_FIELDS = {outputs}

metric = as_dspy_metric(score, input_fields=INPUT_FIELDS, output_fields=OUTPUT_FIELDS)
'''


def _helper_files(check: Check) -> dict[str, str]:
    """The helper modules the check ran metric.py with, those whose path can be one
    (they were held to contract.files' limits when stored)."""
    stored = check.files or {}
    return {path: text for path, text in sorted(stored.items()) if path_problem(path) is None}


def _runtime_dir() -> Path:
    return Path(RUNTIME_DIR) / "skynet"


def build(
    *,
    config: dict,
    metric_source: str,
    dataset: Dataset,
    check: Check,
    result: dict | None = None,
) -> bytes:
    columns = config["dataset"]["columns"]
    inputs = [name for name, role in columns.items() if role == "input"]
    outputs = [name for name, role in columns.items() if role == "output"]
    artifact = config["artifact"]
    report = {
        "check": check.pk,
        "status": check.status,
        "fingerprint": config["check"]["fingerprint"],
        "created_at": check.created_at.isoformat() if check.created_at else None,
        "finished_at": check.finished_at.isoformat() if check.finished_at else None,
        "cases": check.cases,
        "result": check.result,
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("metric.py", metric_source)
        for path, text in _helper_files(check).items():
            archive.writestr(path, text)
        archive.writestr("run.json", json.dumps(config, ensure_ascii=False, indent=2) + "\n")
        archive.writestr(f"dataset.{dataset.format}", bytes(dataset.raw))
        archive.writestr(
            "check-report.json", json.dumps(report, ensure_ascii=False, indent=2) + "\n"
        )
        # A run submitted before projections were made has none.
        if config.get("projection") is not None:
            archive.writestr(
                "projection.json",
                json.dumps(config["projection"], ensure_ascii=False, indent=2) + "\n",
            )
        # A run that found something: its best candidate, scores, spend and lineage.
        if result is not None:
            archive.writestr("result.json", json.dumps(result, ensure_ascii=False, indent=2) + "\n")
            best = (result.get("best") or {}).get("text")
            if best is not None:
                name = BEST_FILES.get(artifact["kind"], "best-artifact.txt")
                archive.writestr(name, best)
        if artifact["kind"] == "prompt":
            archive.writestr("prompt.txt", artifact["content"])
        else:
            archive.writestr("program.py", artifact["program"] or "")
            if artifact["content"]:
                archive.writestr("artifact.txt", artifact["content"])
        archive.writestr(
            "dspy_metric.py", DSPY_METRIC.format(inputs=repr(inputs), outputs=repr(outputs))
        )
        for name in RUNTIME_FILES:
            archive.write(_runtime_dir() / name, f"skynet/{name}")
    return buffer.getvalue()


def for_run(run: Run) -> bytes:
    return build(
        config=run.config,
        metric_source=run.metric_source,
        dataset=run.dataset,
        check=run.contract_check,
        result=run.result,
    )


def for_draft(draft: Draft) -> bytes:
    """The bundle the draft's run would have; only for a draft whose check counts."""
    return build(
        config=services.run_config(draft),
        metric_source=rules.metric_source(draft) or "",
        dataset=draft.dataset,
        check=draft.contract_check,
    )
