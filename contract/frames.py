"""Shape checks for the frames a child sends, before the engine trusts them.

The child is our code, but metric code runs in the same process and can write
to the channel, so every field the engine reads is checked here; anything off
is a ProtocolError, which the runner reports as a crash (reason "protocol").
"""

from __future__ import annotations

import math

from skynet.wire import ProtocolError

_STAGE_STATUSES = ("passed", "failed", "skipped")


def _require(condition: bool) -> None:
    if not condition:
        raise ProtocolError("bad_frame_shape")


def _optional(value: object, kind: type | tuple[type, ...]) -> bool:
    return value is None or isinstance(value, kind)


def _number(value: object) -> bool:
    return type(value) in (int, float) and math.isfinite(value)  # type: ignore[arg-type]


def _frames_list(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(f, dict)
        and _optional(f.get("line"), int)
        and isinstance(f.get("function"), str)
        and isinstance(f.get("text"), str)
        for f in value
    )


def check_ready(frame: dict) -> list[str]:
    layers = frame.get("layers")
    _require(isinstance(layers, list) and all(isinstance(x, str) for x in layers))
    return layers  # type: ignore[return-value]


def check_loaded(frame: dict) -> dict:
    stages = frame.get("stages")
    _require(isinstance(stages, dict))
    for name in ("load", "signature", "reward_spec"):
        stage = stages.get(name)
        _require(isinstance(stage, dict) and stage.get("status") in _STAGE_STATUSES)
        _require(_optional(stage.get("problem"), str))
        _require(isinstance(stage.get("params"), dict))
        _require(isinstance(stage.get("problems"), list))
        _require(_frames_list(stage["params"].get("traceback", [])))
    _require(frame.get("call_args") in (None, 2, 3))
    _require(isinstance(frame.get("has_reward_spec"), bool))
    return frame


def _check_return(report: object) -> None:
    _require(isinstance(report, dict))
    assert isinstance(report, dict)
    _require(_optional(report.get("problem"), str))
    _require(isinstance(report.get("params"), dict))
    _require(report.get("score") is None or _number(report.get("score")))
    _require(isinstance(report.get("bool_score"), bool))
    _require(_optional(report.get("feedback"), str))
    _require(_optional(report.get("feedback_length"), int))
    scores = report.get("scores")
    _require(isinstance(scores, dict) and all(_number(v) for v in scores.values()))
    _require(isinstance(report.get("scores_omitted"), int))
    _require(_optional(report.get("repr"), str))
    # A valid verdict always carries its score and feedback.
    if report.get("problem") is None:
        _require(report.get("score") is not None and report.get("feedback") is not None)


def check_result(frame: dict) -> dict:
    _require(_number(frame.get("duration_ms")))
    outcome = frame.get("outcome")
    if outcome == "returned":
        _check_return(frame.get("return"))
    elif outcome == "raised":
        _require(frame.get("problem") in ("exception", "model_error"))
        _require(isinstance(frame.get("params"), dict))
        _require(_optional(frame.get("exception"), dict))
        _require(_frames_list(frame.get("traceback", [])))
    else:
        _require(False)
    return frame
