"""The wizard's rules, read-only: when each step is complete, which engine runs, and
whether the contract check still counts.

A draft is complete step by step (`problems`): each step's saved values are checked
again whenever they are read, so a later step can never rest on an earlier one that
stopped being valid (a metric version deleted, a dataset replaced).

The contract check gates the submit: a check counts for a draft only when it passed
and its fingerprint, the hash of everything it ran (artifact, dataset, column roles,
splits, metric, models), is the draft's current one. Any change makes it stale.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import asdict, dataclass
from functools import cached_property

from django.conf import settings

from contract import parsing
from contract.artifacts import Artifact, ArtifactError
from contract.static import static_check
from dataset_files import DatasetError
from submissions.datasets import current_facts, dataset_settings, sample_of
from submissions.models import STEPS, ArtifactKind, Draft, Engine

# The engine Auto picks for each artifact kind (docs: Engines, Auto).
AUTO_ENGINE = {
    ArtifactKind.PROMPT: Engine.GEPA,
    ArtifactKind.PYTHON: Engine.GEPA,
    ArtifactKind.DSPY: Engine.DSPY_GEPA,
}
# Which engine can optimize which kind (docs: Engines, "Works with").
ENGINE_KINDS = {
    Engine.GEPA: (ArtifactKind.PROMPT, ArtifactKind.PYTHON),
    Engine.DSPY_GEPA: (ArtifactKind.DSPY,),
    Engine.AUTO: tuple(ArtifactKind),
}


@dataclass(frozen=True)
class Problem:
    """Why a step is not complete: a code and its parameters (wording.wizard words it)."""

    step: str
    code: str
    params: dict


def artifact_of(
    kind: str, content: str, source: str, output_fields: tuple[str, ...] = ()
) -> Artifact:
    if kind == ArtifactKind.PROMPT:
        return Artifact.prompt(content)
    if kind == ArtifactKind.DSPY:
        return Artifact.dspy(source, output_fields=output_fields)
    return Artifact.python(source, content)


def draft_artifact(draft: Draft) -> Artifact:
    """What a check of the draft runs before the metric."""
    outputs = tuple(sorted(c for c, role in (draft.roles or {}).items() if role == "output"))
    return artifact_of(draft.artifact_kind, draft.artifact_content, draft.program_source, outputs)


def metric_source(draft: Draft) -> str | None:
    if draft.metric_mode == Draft.MetricMode.INLINE:
        return draft.inline_source or None
    return draft.metric_version.source if draft.metric_version else None


def metric_files(draft: Draft) -> dict[str, str]:
    """The helper modules beside the draft's metric.py: its saved version's ({} inline)."""
    version = draft.saved_version
    return version.helper_files if version is not None else {}


def _metric_with_files(draft: Draft) -> object:
    files = metric_files(draft)
    return [metric_source(draft) or "", files] if files else metric_source(draft) or ""


def score_timeout_s(draft: Draft) -> int:
    """The time limit of one score call: the saved metric's own, else the default."""
    if draft.saved_version:
        return draft.saved_version.metric.timeout_s
    return settings.CHECK_TIMEOUT_DEFAULT


def resolved_engine(draft: Draft) -> str:
    if draft.engine == Engine.AUTO:
        return AUTO_ENGINE[ArtifactKind(draft.artifact_kind)]
    return draft.engine


# -- completeness -----------------------------------------------------------------


def artifact_problem(kind: str, content: str, source: str) -> Problem | None:
    if kind == ArtifactKind.PROMPT and not content.strip():
        return Problem("artifact", "template_empty", {})
    if kind != ArtifactKind.PROMPT and not source.strip():
        return Problem(
            "artifact", "dspy_program_empty" if kind == ArtifactKind.DSPY else "program_empty", {}
        )
    try:
        job = artifact_of(kind, content, source).to_job()
    except ArtifactError as exc:
        return Problem("artifact", exc.code, exc.params)
    if kind == ArtifactKind.DSPY and not _defines(job["source"], "program"):
        return Problem("artifact", "no_program", {})
    if kind == ArtifactKind.PYTHON and not _defines(job["source"], "run"):
        return Problem("artifact", "no_run_function", {})
    return None


def _defines(source: str, name: str) -> bool:
    """Whether the program binds `name` at module level (a def, an assignment, an import)."""
    tree = parsing.parse(source)
    for node in tree.body:
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.name == name
        ):
            return True
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
        if isinstance(node, ast.Import | ast.ImportFrom):
            if any((alias.asname or alias.name) == name for alias in node.names):
                return True
        if isinstance(node, ast.If | ast.Try | ast.With):
            return True  # bound conditionally: the run itself will tell
    return False


def dataset_problem(facts: dict | None) -> Problem | None:
    if facts is None:
        return Problem("dataset", "no_dataset", {})
    if facts["problem"] is not None:
        return Problem("dataset", facts["problem"]["code"], facts["problem"]["params"])
    return None


def metric_problem(mode: str, source: str | None) -> Problem | None:
    if not source or not source.strip():
        return Problem("metric", "no_metric" if mode == "saved" else "metric_empty", {})
    result = static_check(source)
    failed = next((s for s in result.stages if s.status == "failed"), None)
    if failed is not None:
        return Problem("metric", "metric_static", {"stage": asdict(failed)})
    return None


def models_problem(draft: Draft) -> Problem | None:
    if not draft.task_model:
        return Problem("models", "no_task_model", {})
    if not draft.reflection_model:
        return Problem("models", "no_reflection_model", {})
    if draft.artifact_kind not in ENGINE_KINDS.get(draft.engine, ()):
        return Problem("models", "engine_kind", {"engine": draft.engine})
    return None


def predictor_feedback_problem(result: dict) -> Problem | None:
    """DSPy GEPA gives each predictor the side info's "predictor_feedback" under its name:
    a name the program has no predictor of would never be read. The problem of a check
    whose cases gave one, naming the program's predictors (each case's run says them);
    None when every name is one, or when the check's runs did not say (stored before)."""
    unknown: dict[str, None] = {}
    predictors: dict[str, None] = {}
    for case in result.get("cases") or []:
        given = case.get("predictor_feedback") or {}
        names = ((case.get("run") or {}).get("dspy") or {}).get("names")
        if not given or not isinstance(names, list):
            continue
        predictors.update(dict.fromkeys(names))
        unknown.update(dict.fromkeys(name for name in given if name not in names))
    if not unknown:
        return None
    return Problem(
        "check",
        "predictor_feedback_unknown",
        {"names": ", ".join(unknown), "predictors": ", ".join(predictors)},
    )


class DraftState:
    """What the wizard derives from a draft, each part at most once: the dataset facts,
    the fingerprint, the check's state and each step's first problem. Build one per
    request (again after a write) and read everything from it."""

    def __init__(self, draft: Draft) -> None:
        self.draft = draft

    @cached_property
    def facts(self) -> dict | None:
        return current_facts(self.draft)

    @cached_property
    def problems(self) -> dict[str, Problem]:
        """The first problem of each step that is not complete (the check step included)."""
        draft = self.draft
        found: dict[str, Problem] = {}
        checks = (
            (
                "artifact",
                lambda: artifact_problem(
                    draft.artifact_kind, draft.artifact_content, draft.program_source
                ),
            ),
            ("dataset", lambda: dataset_problem(self.facts)),
            ("metric", lambda: metric_problem(draft.metric_mode, metric_source(draft))),
            ("models", lambda: models_problem(draft)),
        )
        for step, check in checks:
            problem = check()
            if problem is not None:
                found[step] = problem
        if not found and self.check_state != "passed":
            found["check"] = Problem("check", "check_required", {})
        elif not found and resolved_engine(draft) == Engine.DSPY_GEPA:
            assert draft.contract_check is not None  # it passed
            problem = predictor_feedback_problem(draft.contract_check.result or {})
            if problem is not None:
                found["check"] = problem
        return found

    @property
    def dataset_saved(self) -> bool:
        """Whether the user saved the dataset step for the current file and settings (an
        upload alone guesses the column roles; the step is done once they were saved)."""
        return bool((self.facts or {}).get("saved"))

    @property
    def first_open_step(self) -> str:
        return next((step for step in STEPS if step in self.problems), STEPS[-1])

    @cached_property
    def fingerprint(self) -> str:
        """The hash of everything a check of this draft runs; "" while a step is incomplete."""
        draft = self.draft
        try:
            config = {
                "artifact": draft_artifact(draft).to_dict(),
                "dataset": draft.dataset.sha256 if draft.dataset else None,
                "settings": (self.facts or {}).get("key"),
                "sample": sample_of(self.facts) if draft.dataset else None,
                "metric": metric_source(draft),
                "models": [draft.task_model, draft.reflection_model, draft.metric_model],
            }
            files = metric_files(draft)
            if files:  # only then: a draft's fingerprint without files stays as it was
                config["files"] = files
        except DatasetError:
            return ""
        text = json.dumps(config, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    @cached_property
    def parts(self) -> dict:
        """What a check of this draft runs, part by part, as it is stored with the check
        (Check.draft_parts), so a stale check can say what changed: `changes`."""
        draft = self.draft
        facts = self.facts or {}
        settings = dataset_settings(draft) if draft.dataset_id else {}
        roles = settings.get("roles") or {}
        try:
            artifact = _digest(draft_artifact(draft).to_dict())
        except ArtifactError:
            artifact = ""
        return {
            "artifact": artifact,
            "dataset": draft.dataset.sha256 if draft.dataset else "",
            "roles": roles,
            # Only the types of the columns the metric gets count (datasets._facts_key).
            "types": {
                c: t
                for c, t in (settings.get("types") or {}).items()
                if roles.get(c) in ("input", "output")
            },
            "splits": _digest(
                [settings.get(k) for k in ("mode", "ratios", "seed", "column")] if settings else []
            ),
            "sample": _digest(facts.get("sample")),
            # With its helper files, when it has any (a digest without them stays as it was).
            "metric": _digest(_metric_with_files(draft)),
            "task_model": draft.task_model,
            "reflection_model": draft.reflection_model,
            "metric_model": draft.metric_model,
        }

    @cached_property
    def changes(self) -> list[tuple[str, dict]]:
        """What changed since the draft's check ran, as (code, params) in the wizard's
        order: [] when nothing did, or when the check kept no parts (made before they
        were kept; it is then only known to be stale)."""
        check = self.draft.contract_check
        before = (check.draft_parts if check is not None else None) or {}
        if not before or self.check_state != "stale":
            return []
        now = self.parts
        found: list[tuple[str, dict]] = []
        for part in ("artifact", "dataset"):
            if before.get(part) != now[part]:
                found.append((part, {}))
        dataset_same = before.get("dataset") == now["dataset"]
        for part, code in (("roles", "role"), ("types", "type")):
            old, new = before.get(part) or {}, now[part]
            for column in sorted(set(old) | set(new)):
                if dataset_same and old.get(column) != new.get(column):
                    found.append((code, {"column": column}))
        for part in ("splits", "metric", "task_model", "reflection_model", "metric_model"):
            if before.get(part) != now[part]:
                found.append((part, {}))
        if not found and before.get("sample") != now["sample"]:
            found.append(("sample", {}))
        return found

    @cached_property
    def check_state(self) -> str:
        """ "none", "stale" (run for something that has changed since), or the check's
        status (queued, running, passed, failed) when it is the draft's current one."""
        check = self.draft.contract_check
        if check is None:
            return "none"
        if self.draft.check_fingerprint != self.fingerprint:
            return "stale"
        return check.status


def _digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


# One-off reads, for a caller that needs one part once.


def problems(draft: Draft) -> dict[str, Problem]:
    return DraftState(draft).problems


def first_open_step(draft: Draft) -> str:
    return DraftState(draft).first_open_step


def fingerprint(draft: Draft) -> str:
    return DraftState(draft).fingerprint


def check_state(draft: Draft) -> str:
    return DraftState(draft).check_state
