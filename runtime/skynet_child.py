"""A case child: one case of metric.py, or one run of the artifact, in its own process.

The warm sandbox (skynet_warm) forks one such process per case, already confined, with
the case's own socket; `run_case(sock, job)` is all it does. The child reports what it
saw as data and never judges it: the worker applies the contract.

A metric job ("job"):

    child  -> parent  {"type": "ready", "layers"}          confinement holds
    child  -> parent  {"type": "loaded", "load", "signature", "reward_spec"[, "dspy_lms"]}
    child  -> parent  {"type": "llm", ...}*                score()'s llm() calls, and its
                                                           DSPy LM's (skynet._dspy_metric)
    child  -> parent  {"type": "result", "outcome": "returned", "value", "repr"}
                      or {"outcome": "raised", "problem", "params", "exception", "traceback"}

A metric job may carry "files", the metric's helper modules ({path: text}): they are
importable beside metric.py, served from the job (skynet._helpers), never written.

A run job ("run", see skynet._artifact): the artifact runs on one input and its output
goes back as data; the worker measures it and hands it to a fresh metric child. The run
code and the metric never share a process, so nothing the run does can touch what the
metric measures.

The worker derives the load, signature and REWARD_SPEC stages from "loaded" itself and
reads a result only when its own rules say score() is called; the child applies the same
pure rules (skynet.signature, skynet.rewardspec) to know whether to call it, so no round
trip sits between loading and calling.

The process then ends with os._exit at once (skynet_warm), so no thread the code started
keeps it alive. The parent owns the clock: this side never times anything out.
"""

from __future__ import annotations

# Everything the child needs is imported before confinement, which may forbid
# opening files afterwards.
import os
import socket
import sys
import types

from skynet import (
    _artifact,
    _dspy_metric,
    _helpers,
    _memory,
    _state,
    compiling,
    rewardspec,
    signature,
    tracebacks,
    values,
    wire,
)
from skynet._model import ModelError
from skynet.safe import safe_repr, safe_text, type_name

_exit = os._exit  # bound early: the metric may replace os._exit
EXIT_INTERNAL = 70
FILENAME = tracebacks.FILENAME


def _failed(problem: str, params: dict | None = None) -> dict:
    return {"status": "failed", "problem": problem, "params": params or {}}


def missing_module(exc: BaseException, message: str) -> str | None:
    """The module an import did not find (dotted as it was asked for), or None: not for
    "cannot import name", whose module is there. `message` is the exception's, as the
    traceback describes it (type() rather than isinstance(): a subclass of the metric's
    could make any attribute a property)."""
    if not issubclass(type(exc), ImportError):
        return None
    if type(exc) is ModuleNotFoundError:
        name = exc.name
        if isinstance(name, str) and name:
            return name
    prefix = "No module named '"
    if message.startswith(prefix) and "'" in message[len(prefix) :]:
        return message[len(prefix) :].split("'", 1)[0] or None
    return None


def load(source: str, lines: list[str]) -> tuple[types.ModuleType | None, dict]:
    """Compile and execute metric.py as module "metric"; (module, what loading did)."""
    code, problem = compiling.compile_user_code(source, FILENAME)
    if code is None:
        return None, _failed("syntax_error", problem)
    module = types.ModuleType("metric")
    module.__file__ = FILENAME
    # Lets traceback.print_exc() inside the metric show its own source lines.
    module.__loader__ = compiling.SourceLoader(source)
    sys.modules["metric"] = module
    try:
        exec(code, module.__dict__)
    except BaseException as exc:  # noqa: B036 - SystemExit & co. are the metric's errors too
        described = tracebacks.describe(exc, lines)
        params = {**described["exception"], "traceback": described["traceback"]}
        missing = missing_module(exc, described["exception"].get("message") or "")
        needs = _memory.find(exc)
        if needs is not None:
            # numpy refused where the process's address space cannot hold it.
            missing = needs.name
            params["needed_mb"] = needs.needed_mb
            params["memory_mb"] = needs.limit_mb
        if missing:
            # The worker words it: a module outside the sandbox's set, named with the set.
            params["module"] = safe_text(missing, 200)
        return None, _failed("import_error", params)
    if "score" not in module.__dict__:
        return None, _failed("no_score_function")
    score = module.__dict__["score"]
    if not callable(score):
        return None, _failed("no_score_function", {"type": type_name(score)})
    return module, {"status": "passed"}


def describe_signature(score: object) -> dict:
    """{"shape": ...} of score's parameters, or {"not_inspectable": True}."""
    shape = signature.shape_of_function(score)
    if shape is not None:
        return {"shape": signature.shape_to_data(shape)}
    try:
        import inspect  # only for callables that are not plain functions

        shape = signature.shape_of(inspect.signature(score))  # type: ignore[arg-type]
    except BaseException:  # noqa: B036 - builtins without a signature, or a hostile __signature__
        return {"not_inspectable": True}
    return {"shape": signature.shape_to_data(shape)}


_flush_streams = _artifact.flush_streams


def _attribute(obj: object, name: str) -> object:
    try:
        return getattr(obj, name, "")
    except BaseException:  # noqa: B036 - a subclass's property may raise anything
        return ""


# How many of the last distinct lines the returning frame ran are reported.
RETURN_LINES = 32


def _returned_from(code: types.CodeType, frame: types.FrameType) -> dict | None:
    """{"first_line", "lines"}: the line the finished frame of score stopped at, then the
    lines of the instructions before it, newest first, distinct, at most RETURN_LINES.
    The worker matches them against score's return statements (contract.returnline):
    after a `finally` or a `with`, the last instruction is the clean-up's, not the
    return's, so the line alone can miss."""
    lasti = frame.f_lasti
    if lasti < 0:
        return None
    positions = list(code.co_positions())
    found: list[int] = []
    for index in range(min(lasti // 2, len(positions) - 1), -1, -1):
        line = positions[index][0]
        if line is not None and line not in found:
            found.append(line)
            if len(found) >= RETURN_LINES:
                break
    return {"first_line": code.co_firstlineno, "lines": found}


def _call_watched(score: object, args: tuple) -> tuple[object, dict | None]:
    """score(*args), and where in score the value was returned from (or None).

    When score is a function of metric.py, a profile function catches the first event,
    score's own call, keeps its frame and removes itself: score then runs with no hook
    at all (no slower), and its finished frame still knows the last instruction it ran.
    """
    code = getattr(score, "__code__", None) if type(score) is types.FunctionType else None
    if code is None or code.co_filename != FILENAME:
        return score(*args), None  # type: ignore[operator]
    kept: list[types.FrameType] = []

    def first_event(frame: types.FrameType, event: str, arg: object) -> None:
        sys.setprofile(None)
        if frame.f_code is code:
            kept.append(frame)

    sys.setprofile(first_event)
    try:
        value = score(*args)  # type: ignore[operator]
    finally:
        sys.setprofile(None)
    try:
        where = _returned_from(code, kept[0]) if kept else None
    except BaseException:  # noqa: B036 - a line number is a nicety, never a failure
        where = None
    return value, where


def _model_error(exc: BaseException) -> BaseException | None:
    """The metric model's failure behind `exc`: itself when it is a ModelError (llm()),
    or the ModelError a dspy error was raised from (a DSPy judge's call: dspy wraps what
    its LM's engine raised, skynet._dspy_metric). None for any other error."""
    seen = 0
    while exc is not None and seen < 8:
        kind = type(exc)
        if issubclass(kind, ModelError):
            return exc
        module = _attribute(kind, "__module__")
        if not (isinstance(module, str) and module.startswith("dspy.")):
            return None
        exc = _attribute(exc, "__cause__") or None  # type: ignore[assignment]
        seen += 1
    return None


def call_score(score: object, args: tuple, lines: list[str]) -> dict:
    """Call score(*args); the result frame: the returned value as data, or the error."""
    try:
        value, returned_from = _call_watched(score, args)
    except BaseException as exc:  # noqa: B036 - SystemExit, KeyboardInterrupt... are reported
        described = tracebacks.describe(exc, lines)
        model_error = _model_error(exc)
        if model_error is not None:
            problem = "model_error"
            params = {
                "code": safe_text(_attribute(model_error, "code"), 200),
                "message": safe_text(_attribute(model_error, "message"), 2048),
            }
        else:
            problem = "exception"
            params = {k: described["exception"][k] for k in ("type", "message")}
        return {
            "type": "result",
            "outcome": "raised",
            "problem": problem,
            "params": params,
            **described,
        }
    return {
        "type": "result",
        "outcome": "returned",
        "value": values.encode(value, values.return_budget()),
        "repr": safe_repr(value),
        "returned_from": returned_from,
    }


def _send(sock: socket.socket, frame: dict) -> None:
    # Under the lock: a thread the metric started may be in llm() right now.
    data = wire.encode(frame)
    with _state.lock:
        sock.sendall(data)


def call_args(loaded: dict, module: types.ModuleType) -> int | None:
    """2 or 3 when score() is to be called, by the same rules the worker applies."""
    described = loaded["signature"] or {}
    if "shape" not in described:
        return None
    problems, count = signature.check(signature.shape_from_data(described["shape"]))
    if problems:
        return None
    if "REWARD_SPEC" in module.__dict__ and rewardspec.validate(module.__dict__["REWARD_SPEC"]):
        return None
    return count


def run_metric(sock: socket.socket, job: dict) -> None:
    source = job["source"]
    case = job["case"]
    lines = compiling.split_lines(source)
    _state.install(sock, job.get("observation"))
    output = values.decode(job["output"]) if "output" in job else case.get("output")

    # The metric's helper modules (contract.files), importable beside it, read-only.
    _helpers.install(job.get("files"))
    # dspy, once imported, has the metric model as its LM (skynet._dspy_metric).
    _dspy_metric.watch()
    module, loaded = load(source, lines)
    frame: dict = {"type": "loaded", "load": loaded, "signature": None, "reward_spec": None}
    if module is not None:
        frame["signature"] = describe_signature(module.__dict__["score"])
        own = _dspy_metric.own_lms(module.__dict__)
        if own:
            frame["dspy_lms"] = own
        if "REWARD_SPEC" in module.__dict__:
            spec = module.__dict__["REWARD_SPEC"]
            frame["reward_spec"] = values.encode(spec, values.return_budget())
    _flush_streams()
    _send(sock, frame)
    count = None if module is None or not job.get("call", True) else call_args(frame, module)
    if count is None:
        return
    args = (case.get("input"), output, case.get("expected"))[:count]
    result = call_score(module.__dict__["score"], args, lines)
    _flush_streams()
    _send(sock, result)


def run_case(sock: socket.socket, job: dict) -> None:
    """One case in a confined, forked process: a metric job or a run job."""
    if job.get("type") == "run":
        _artifact.run_job(sock, job)
    else:
        run_metric(sock, job)
