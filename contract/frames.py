"""The worker's reading of a metric child's frames: shapes checked, rules applied here.

Metric code runs in the child's process and can write to the channel, so nothing a child
says is taken as a verdict. "loaded" carries what loading did and raw data (score()'s
parameters, REWARD_SPEC as a skynet.values tree); "result" carries the returned value as
a tree. The stages, the return-value verdict, the feedback cap and the call's duration are
computed here, by the same rules the docs state. Anything malformed is a ProtocolError,
which the runner reports as a crash (reason "protocol"). Every text a child sends is
capped before it is stored.

A run child's "run_finished" is held to what the child itself promises, since the
program can write frames too: an output within skynet.values' output budget (past it,
the run failed with "output_too_large", as the child says), and a DSPy program's part
cut by skynet.dspy_part, the rules the child cuts it by.
"""

from __future__ import annotations

from contract import frameworks, values
from contract.artifacts import OUTPUT_REPR_LIMIT, RUN_PROBLEMS
from sandbox import libraries
from skynet import dspy_part, rewardspec, signature
from skynet.safe import MESSAGE_LIMIT, NAME_LIMIT, clip
from skynet.values import output_budget
from skynet.wire import ProtocolError

LOAD_PROBLEMS = ("syntax_error", "import_error", "no_score_function")
RAISED_PROBLEMS = ("exception", "model_error")
TRACEBACK_LIMIT = 40
TEXT_LIMIT = 200
_SKIPPED = {"status": "skipped", "problem": None, "params": {}, "problems": []}


def _require(condition: bool) -> None:
    if not condition:
        raise ProtocolError("bad_frame_shape")


def _clean(value: object, depth: int = 0) -> object:
    """A JSON value capped in size: strings, lists and nesting."""
    if isinstance(value, str):
        return clip(value, MESSAGE_LIMIT)
    if value is None or isinstance(value, bool | int | float):
        return value
    _require(depth < 4)
    if isinstance(value, list):
        return [_clean(item, depth + 1) for item in value[:50]]
    if isinstance(value, dict):
        return {
            clip(str(key), NAME_LIMIT): _clean(item, depth + 1)
            for key, item in list(value.items())[:50]
        }
    raise ProtocolError("bad_frame_shape")


def clean_traceback(value: object) -> list[dict]:
    _require(isinstance(value, list))
    frames = []
    for item in value[:TRACEBACK_LIMIT]:  # type: ignore[index]
        _require(isinstance(item, dict))
        line, function, text = item.get("line"), item.get("function"), item.get("text")
        _require(line is None or type(line) is int)
        _require(isinstance(function, str) and isinstance(text, str))
        frames.append(
            {"line": line, "function": clip(function, NAME_LIMIT), "text": clip(text, TEXT_LIMIT)}
        )
    return frames


def clean_exception(value: object) -> dict | None:
    if value is None:
        return None
    _require(isinstance(value, dict))
    assert isinstance(value, dict)
    omitted = value.get("omitted_frames", 0)
    _require(type(omitted) is int and omitted >= 0)
    _require(isinstance(value.get("type"), str) and isinstance(value.get("message"), str))
    return {
        "type": clip(value["type"], NAME_LIMIT),
        "message": clip(value["message"], MESSAGE_LIMIT),
        "omitted_frames": omitted,
    }


def check_ready(frame: dict) -> list[str]:
    layers = frame.get("layers")
    _require(isinstance(layers, list) and all(isinstance(x, str) for x in layers))
    return [clip(layer, NAME_LIMIT) for layer in layers[:20]]  # type: ignore[index]


def _stage(problem: str | None = None, params: dict | None = None, problems=None) -> dict:
    params = params or {}
    if problems is None:
        problems = [] if problem is None else [{"code": problem, "params": params}]
    status = "passed" if problem is None else "failed"
    return {"status": status, "problem": problem, "params": params, "problems": problems}


def _load_stage(load: object) -> dict:
    _require(isinstance(load, dict))
    assert isinstance(load, dict)
    if load.get("status") == "passed":
        return _stage()
    _require(load.get("status") == "failed" and load.get("problem") in LOAD_PROBLEMS)
    params = load.get("params")
    _require(isinstance(params, dict))
    assert isinstance(params, dict)
    cleaned = {key: _clean(item) for key, item in params.items() if key != "traceback"}
    if "traceback" in params:
        cleaned["traceback"] = clean_traceback(params["traceback"])
    if load["problem"] == "import_error":
        # A module the sandbox does not have: named, with the set it has (data, not prose).
        named = libraries.load_problem(cleaned)
        if named is not None:
            return _stage(named[0], {**cleaned, **named[1]})
    return _stage(load["problem"], cleaned)


def _signature_stage(described: object) -> tuple[dict, int | None]:
    _require(isinstance(described, dict))
    assert isinstance(described, dict)
    if described.get("not_inspectable") is True:
        bad = signature.not_inspectable()
        return _stage(bad["code"], bad["params"], problems=[bad]), None
    try:
        shape = signature.shape_from_data(described.get("shape"))
    except ValueError:
        raise ProtocolError("bad_frame_shape") from None
    problems, call_args = signature.check(shape)
    if problems:
        first = problems[0]
        return _stage(first["code"], first["params"], problems=problems), None
    found = frameworks.recognise(shape)
    if found is None:
        return _stage(), call_args
    seen = frameworks.problem(found)
    if found["fails"]:
        return _stage(seen["code"], seen["params"], problems=[seen]), None
    return {**_stage(), "warnings": [seen]}, call_args


def _reward_spec_stage(node: object) -> dict:
    problems = rewardspec.validate(values.decode(node))
    if problems:
        return _stage("invalid_reward_spec", {"count": len(problems)}, problems=problems)
    return _stage()


def _dspy_lms(value: object) -> list[str]:
    """The models of the DSPy LMs metric.py set itself (skynet._dspy_metric.own_lms),
    which the metric model answers instead: a warning's names, so anything that is not a
    short list of names is dropped, not a crash."""
    if not isinstance(value, list):
        return []
    names = [clip(name, NAME_LIMIT) for name in value[:5] if isinstance(name, str) and name]
    return list(dict.fromkeys(names))


def judge_loaded(frame: dict) -> dict:
    """{"stages": {load, signature, reward_spec}, "call_args", "has_reward_spec"}, from
    what the child reported, by the worker's own rules."""
    stages = {"load": _load_stage(frame.get("load")), "signature": dict(_SKIPPED)}
    stages["reward_spec"] = dict(_SKIPPED)
    call_args = None
    has_reward_spec = False
    if stages["load"]["status"] == "passed":
        replaced = _dspy_lms(frame.get("dspy_lms"))
        if replaced:
            stages["load"]["warnings"] = [
                {
                    "code": "dspy_lm_replaced",
                    "params": {"models": ", ".join(replaced), "count": len(replaced)},
                }
            ]
        stages["signature"], call_args = _signature_stage(frame.get("signature"))
        if call_args is not None:
            node = frame.get("reward_spec")
            if node is None:
                stages["reward_spec"] = {**_SKIPPED, "params": {"reason": "not_defined"}}
            else:
                _require(isinstance(node, dict))
                has_reward_spec = True
                stages["reward_spec"] = _reward_spec_stage(node)
    return {"stages": stages, "call_args": call_args, "has_reward_spec": has_reward_spec}


def _returned_from(value: object) -> dict | None:
    """The child's {"first_line", "lines"} of where score returned, kept only when it is
    that shape (a line number is a nicety: anything else is dropped, not a crash)."""
    if not isinstance(value, dict):
        return None
    first, lines = value.get("first_line"), value.get("lines")
    if type(first) is not int or not isinstance(lines, list):
        return None
    return {"first_line": first, "lines": [n for n in lines[:32] if type(n) is int]}


def judge_result(frame: dict, duration_ms: float) -> dict:
    """The result of a score() call: the verdict on the value the child described, or the
    error it raised. `duration_ms` is the worker's clock; the child's is never asked."""
    outcome = frame.get("outcome")
    if outcome == "returned":
        _require(isinstance(frame.get("value"), dict))
        report = values.return_report(frame["value"], frame.get("repr"))
        return {
            "outcome": "returned",
            "duration_ms": duration_ms,
            "return": report,
            "returned_from": _returned_from(frame.get("returned_from")),
        }
    _require(outcome == "raised" and frame.get("problem") in RAISED_PROBLEMS)
    params = frame.get("params")
    _require(isinstance(params, dict))
    return {
        "outcome": "raised",
        "duration_ms": duration_ms,
        "problem": frame["problem"],
        "params": _clean(params),
        "exception": clean_exception(frame.get("exception")),
        "traceback": clean_traceback(frame.get("traceback", [])),
    }


def _too_large(output: dict) -> dict:
    """The run_finished frame the child sends for an output past its budget."""
    name = output.get("type", output.get("t"))
    return {
        "outcome": "raised",
        "problem": "output_too_large",
        "params": {"type": clip(name if isinstance(name, str) else "object", NAME_LIMIT)},
        "exception": None,
        "traceback": [],
    }


def check_run_finished(frame: dict) -> dict:
    """A run child's "run_finished" frame with its texts capped and its output and DSPy
    part held to the child's own limits; ProtocolError when malformed."""
    outcome = frame.get("outcome")
    if outcome == "returned":
        _require(isinstance(frame.get("output"), dict))
        _require(isinstance(frame.get("output_repr"), str))
        if not values.fits(frame["output"], output_budget()):
            return _too_large(frame["output"])
        checked = {
            "outcome": "returned",
            "output": frame["output"],
            "output_repr": frame["output_repr"][:OUTPUT_REPR_LIMIT],
        }
        if "dspy" in frame:  # a DSPy program's fields and trace, or its predictors
            try:
                checked["dspy"] = dspy_part.fit(frame["dspy"])
            except dspy_part.Malformed:
                raise ProtocolError("bad_frame_shape") from None
        return checked
    _require(outcome == "raised" and frame.get("problem") in RUN_PROBLEMS)
    _require(isinstance(frame.get("params"), dict))
    return {
        "outcome": "raised",
        "problem": frame["problem"],
        "params": _clean(frame["params"]),
        "exception": clean_exception(frame.get("exception")),
        "traceback": clean_traceback(frame.get("traceback", [])),
    }
