"""One check child: load metric.py, call score() on one case, report to the parent.

Started by contract.runner with the child end of a socketpair as argv[1].
Frames sent, in order: "ready" (confinement layers, before any user code),
"loaded" (load / signature / reward_spec outcomes), any number of "llm"
requests, then "result". The process then ends with os._exit at once so no
thread the metric started can keep it alive. The parent owns the clock: this
side never times anything out.

When the job carries an "artifact", the run phase comes first, right after
"ready": the artifact runs on the case's input and what it returns becomes
score()'s `output` (see skynet._artifact for its frames: "run_started",
"run_finished", and the parent's "measured" reply). metric.py is then loaded
as usual, even after a failed run (so its load stages are still reported),
but score() is only called when the run returned.
"""

from __future__ import annotations

# Everything the child needs is imported before confinement, which may forbid
# opening files afterwards.
import inspect
import linecache
import os
import re
import socket
import sys
import time
import types

from skynet import (
    _artifact,
    _confine,
    _state,
    compiling,
    report,
    rewardspec,
    signature,
    tracebacks,
    wire,
)
from skynet._model import ModelError
from skynet.safe import safe_text, type_name

_exit = os._exit  # bound early: the metric may replace os._exit
EXIT_INTERNAL = 70
FILENAME = tracebacks.FILENAME


def _stage(
    problem: str | None = None, params: dict | None = None, problems: list | None = None
) -> dict:
    """A stage outcome; `problems` defaults to the one problem, as the parent reports it."""
    params = params or {}
    if problems is None:
        problems = [] if problem is None else [{"code": problem, "params": params}]
    status = "passed" if problem is None else "failed"
    return {"status": status, "problem": problem, "params": params, "problems": problems}


_SKIPPED = {"status": "skipped", "problem": None, "params": {}, "problems": []}


def _compile(source: str) -> tuple[types.CodeType | None, dict]:
    code, problem = compiling.compile_user_code(source, FILENAME)
    return code, (_stage() if problem is None else _stage("syntax_error", problem))


def load(source: str, lines: list[str]) -> tuple[types.ModuleType | None, dict]:
    """Compile and execute metric.py as module "metric"; (module, load stage)."""
    code, stage = _compile(source)
    if code is None:
        return None, stage
    module = types.ModuleType("metric")
    module.__file__ = FILENAME
    sys.modules["metric"] = module
    # Lets traceback.print_exc() inside the metric show its own source lines.
    linecache.cache[FILENAME] = (len(source), None, [line + "\n" for line in lines], FILENAME)
    try:
        exec(code, module.__dict__)
    except BaseException as exc:  # noqa: B036 - SystemExit & co. are the metric's errors too
        described = tracebacks.describe(exc, lines)
        params = {**described["exception"], "traceback": described["traceback"]}
        return None, _stage("import_error", params)
    score = module.__dict__.get("score")
    if score is None and "score" not in module.__dict__:
        return None, _stage("no_score_function")
    if not callable(score):
        return None, _stage("no_score_function", {"type": type_name(score)})
    return module, stage


def check_signature(score: object) -> tuple[dict, int | None]:
    try:
        shape = signature.shape_of(inspect.signature(score))  # type: ignore[arg-type]
    except BaseException:  # noqa: B036 - builtins without a signature, or a hostile __signature__
        bad = signature.not_inspectable()
        return _stage(bad["code"], bad["params"], problems=[bad]), None
    problems, call_args = signature.check(shape)
    if problems:
        first = problems[0]
        return _stage(first["code"], first["params"], problems=problems), None
    return _stage(), call_args


def check_reward_spec(module: types.ModuleType) -> tuple[dict, bool]:
    if "REWARD_SPEC" not in module.__dict__:
        return {**_SKIPPED, "params": {"reason": "not_defined"}}, False
    problems = rewardspec.validate(module.__dict__["REWARD_SPEC"])
    if problems:
        stage = _stage("invalid_reward_spec", {"count": len(problems)}, problems=problems)
        return stage, True
    return _stage(), True


def _flush_streams() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()  # type: ignore[union-attr]
        except BaseException:  # noqa: B036 - a closed or replaced stream is the metric's business
            pass


def _attribute(obj: object, name: str) -> object:
    try:
        return getattr(obj, name, "")
    except BaseException:  # noqa: B036 - a subclass's property may raise anything
        return ""


def call_score(score: object, args: tuple, lines: list[str]) -> dict:
    """Call score(*args); the result frame (validation done here, on the real object)."""
    started = time.perf_counter()
    try:
        value = score(*args)  # type: ignore[operator]
    except BaseException as exc:  # noqa: B036 - SystemExit, KeyboardInterrupt... are reported
        duration_ms = (time.perf_counter() - started) * 1000
        described = tracebacks.describe(exc, lines)
        if issubclass(type(exc), ModelError):
            problem = "model_error"
            params = {
                "code": safe_text(_attribute(exc, "code"), 200),
                "message": safe_text(_attribute(exc, "message"), 2048),
            }
        else:
            problem = "exception"
            params = {k: described["exception"][k] for k in ("type", "message")}
        return {
            "type": "result",
            "outcome": "raised",
            "duration_ms": duration_ms,
            "problem": problem,
            "params": params,
            **described,
        }
    duration_ms = (time.perf_counter() - started) * 1000
    return {
        "type": "result",
        "outcome": "returned",
        "duration_ms": duration_ms,
        "return": report.return_report(value),
    }


def _encode_result(frame: dict) -> bytes:
    try:
        return wire.encode(frame)
    except (wire.ProtocolError, ValueError, TypeError):
        pass
    # Unreachable with the caps in place; kept so a bug there degrades the
    # report instead of turning a real result into a crash.
    if "return" in frame:
        frame = {**frame, "return": report.shrink(frame["return"])}
    else:
        frame = {**frame, "traceback": []}
    return wire.encode(frame)


def run(sock: socket.socket) -> None:
    job = wire.recv(sock, limit=wire.MAX_JOB_FRAME)
    if job is None or job.get("type") != "job":
        raise wire.ProtocolError("bad_job")
    try:
        layers = [str(layer) for layer in _confine.apply(job.get("limits") or {})]
    except BaseException:  # noqa: B036 - never run user code unconfined
        wire.send(sock, {"type": "fatal", "reason": "confine_failed"})
        _exit(EXIT_INTERNAL)
    wire.send(sock, {"type": "ready", "layers": layers})

    source = job["source"]
    case = job["case"]
    # Python's own line breaks only: str.splitlines() would also split at form
    # feeds and U+2028, and traceback lines would point at the wrong text.
    lines = re.split(r"\r\n|\r|\n", source)
    _state.install(sock, job.get("observation"))
    output = case.get("output")
    ran = True
    artifact = job.get("artifact")
    if artifact is not None:
        ran, output = _artifact.run_artifact(sock, artifact, case.get("input"))

    module, load_stage = load(source, lines)
    stages = {"load": load_stage, "signature": dict(_SKIPPED), "reward_spec": dict(_SKIPPED)}
    call_args = None
    has_reward_spec = False
    if module is not None:
        stages["signature"], call_args = check_signature(module.__dict__["score"])
        if call_args is not None:
            stages["reward_spec"], has_reward_spec = check_reward_spec(module)
    _flush_streams()
    loaded = {
        "type": "loaded",
        "stages": stages,
        "call_args": call_args,
        "has_reward_spec": has_reward_spec,
    }
    # Sizes inside are bounded (capped messages, frames and problem lists). Under the
    # lock: a thread the program or the metric started may be in llm() right now.
    with _state.lock:
        wire.send(sock, loaded)
    if not ran or call_args is None or stages["reward_spec"]["status"] == "failed":
        return
    args = (case.get("input"), output, case.get("expected"))[:call_args]
    result = call_score(module.__dict__["score"], args, lines)  # type: ignore[union-attr]
    _flush_streams()
    frame = _encode_result(result)
    with _state.lock:
        sock.sendall(frame)


def main(argv: list[str]) -> None:
    sock = socket.socket(fileno=int(argv[1]))
    try:
        run(sock)
    except BaseException:  # noqa: B036 - our own failure: tell the parent, never pass silently
        try:
            wire.send(sock, {"type": "fatal", "reason": "internal"})
        except BaseException:  # noqa: B036
            pass
        _exit(EXIT_INTERNAL)
    _exit(0)


if __name__ == "__main__":
    main(sys.argv)
