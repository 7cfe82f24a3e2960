"""The check result: plain dataclasses with a JSON-safe dict form.

Only codes and parameters, never prose. `passed` is None while a check is in
progress and for a static check, which cannot decide the run-time stages.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, fields, is_dataclass

from contract.codes import STAGES


@dataclass
class StageResult:
    id: str
    status: str = "pending"
    problem: str | None = None
    params: dict = field(default_factory=dict)
    # Every problem found, each {"code", "params"}; `problem` is the summary.
    problems: list[dict] = field(default_factory=list)
    # What a passed stage still has to say, each {"code", "params"} (a signature that
    # looks like another framework's, where the call would happen to work).
    warnings: list[dict] = field(default_factory=list)


@dataclass
class CaseResult:
    index: int
    status: str = "pending"
    score: float | None = None
    feedback: str | None = None
    feedback_length: int | None = None
    scores: dict[str, float] = field(default_factory=dict)
    scores_omitted: int = 0
    # The side info's "predictor_feedback" of a valid return: each DSPy predictor's own
    # feedback by the predictor's name (skynet.report caps it), and how many were left out.
    predictor_feedback: dict[str, str] = field(default_factory=dict)
    predictor_feedback_omitted: int = 0
    problem: str | None = None
    params: dict = field(default_factory=dict)
    repr: str | None = None
    # Where score returned the value: {"line", "text"} of the return statement that ran
    # (contract.returnline); None when it raised, or the line cannot be told.
    returned_at: dict | None = None
    # Wall time of the score() call on the worker's clock (from "loaded" to "result",
    # llm round trips included); parent_duration_ms is the same, kept for stored results.
    duration_ms: float | None = None
    parent_duration_ms: float | None = None
    traceback: list[dict] = field(default_factory=list)
    exception: dict | None = None
    stdout: str = ""
    stderr: str = ""
    # Bytes of printed output not kept (past 64 KB, the kept text ending at a line
    # break or a space), and every byte printed; 0 printed in results stored before.
    stdout_truncated: int = 0
    stderr_truncated: int = 0
    stdout_printed: int = 0
    stderr_printed: int = 0
    observation: dict = field(default_factory=dict)
    call_args: int | None = None
    # What this case's llm() calls used ({model_calls, input_tokens, output_tokens,
    # cost_usd, model_ms}); None when it made none or no handler counts. With an
    # artifact, only the metric's calls (the run's are in run["usage"]).
    usage: dict | None = None
    # With an artifact: how its run on this case went, as the parent saw it:
    # {status (ok|error|timeout), duration_ms (parent's clock), usage (the task
    # model's, same form as `usage`), output_repr (capped at 2048 characters),
    # problem, params, exception, traceback (program.py's lines)}. None without one.
    run: dict | None = None


@dataclass
class Hint:
    code: str
    case: int | None
    params: dict = field(default_factory=dict)


@dataclass
class CheckResult:
    passed: bool | None = None
    failed_stage: str | None = None
    stages: list[StageResult] = field(default_factory=lambda: [StageResult(s) for s in STAGES])
    cases: list[CaseResult] = field(default_factory=list)
    hints: list[Hint] = field(default_factory=list)
    layers: list[str] = field(default_factory=list)
    timeout_s: float | None = None
    # "bwrap", or "unconfined" when an operator turned the namespaces off.
    sandbox_mode: str | None = None
    # What a failed metric.py looks like and whether Convert would change it
    # (contract.looks_like): {"kind", "convertible"}, or None.
    looks_like: dict | None = None

    def stage(self, stage_id: str) -> StageResult:
        for stage in self.stages:
            if stage.id == stage_id:
                return stage
        raise KeyError(stage_id)

    def to_dict(self) -> dict:
        """What dataclasses.asdict(self) gives, made without its deep copy of every
        string and number: the worker makes one for every check it ends."""
        return _plain(self)

    @classmethod
    def from_dict(cls, data: dict) -> CheckResult:
        return cls(
            passed=data.get("passed"),
            failed_stage=data.get("failed_stage"),
            stages=[_build(StageResult, s) for s in data.get("stages", [])],
            cases=[_build(CaseResult, c) for c in data.get("cases", [])],
            hints=[_build(Hint, h) for h in data.get("hints", [])],
            layers=list(data.get("layers", [])),
            timeout_s=data.get("timeout_s"),
            sandbox_mode=data.get("sandbox_mode"),
            looks_like=data.get("looks_like"),
        )

    def snapshot(self) -> CheckResult:
        """An independent copy, safe to hand to a progress callback."""
        return copy.deepcopy(self)


_ATOMS = frozenset({str, int, float, bool, type(None)})
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _plain(value: object) -> object:
    """dataclasses.asdict's conversion of `value` (dataclasses to dicts, containers
    rebuilt, anything else deep-copied), with immutable atoms kept as they are, as a
    deep copy would keep them."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {_plain(k): _plain(v) for k, v in value.items()}  # type: ignore[attr-defined]
    if kind is list:
        return [_plain(v) for v in value]  # type: ignore[attr-defined]
    names = _FIELD_NAMES.get(kind)
    if names is None and is_dataclass(value) and not isinstance(value, type):
        names = _FIELD_NAMES[kind] = tuple(f.name for f in fields(value))
    if names is not None:
        return {name: _plain(getattr(value, name)) for name in names}
    return _as_asdict_does(value)


def _as_asdict_does(value: object) -> object:
    """Anything else, exactly as asdict converts it (a value inside a throwaway
    dataclass, taken back out)."""
    return asdict(_Holder(value))["value"]


@dataclass
class _Holder:
    value: object


def _build(cls: type, data: dict) -> object:
    # Unknown keys are ignored so results stored by a newer version still load.
    names = {f.name for f in fields(cls)}
    return cls(**{k: copy.deepcopy(v) for k, v in data.items() if k in names})
