"""A run child: run the user's artifact on one input, in a process of its own.

Frames, in order (all on the channel, under _state.lock so that llm() calls from the
program's own threads never interleave with them):

    child  -> parent  {"type": "program_loaded"}           the program is ready to run
    parent -> child   {"type": "input", "input"}           the parent's clock starts here
    child  -> parent  {"type": "llm", ...}                 the program's llm() calls
    child  -> parent  {"type": "run_finished", ...}        run() returned or raised

The input arrives only once the program is loaded, so nothing done at import time can
answer it outside the clock. The parent times the run from sending the input to the
"run_finished" frame, counts the task model's cost from the handler it serves llm() with,
and hands the output (as skynet.values data) to a fresh metric child: the run code never
shares a process with the metric, so it cannot reach what the metric measures.

"run_finished" is {"outcome": "returned", "output", "output_repr"} or {"outcome":
"raised", "problem", "params", "exception", "traceback"} with problem one of
RUN_PROBLEMS; a program that failed to load sends it instead of "program_loaded". A
"python" artifact is program source loaded as module "program" from "program.py"
(tracebacks keep its own line numbers) and called as run(content, input); a "prompt"
artifact is a template filled with the input fields and sent to the task model with llm().
"""

from __future__ import annotations

import sys
import types

from skynet import _confine, _state, compiling, dspy_part, template, tracebacks, values, wire
from skynet._model import ModelError, llm
from skynet.safe import safe_repr, safe_text, type_name

PROGRAM_FILENAME = "program.py"
KINDS = ("python", "prompt", "dspy")
RUN_PROBLEMS = (
    "run_error",
    "run_model_error",
    "program_syntax_error",
    "program_import_error",
    "no_run_function",
    # What run returned cannot be handed to the metric (see skynet.values.output_budget).
    "output_too_large",
    # A DSPy program's file must define `program`, a dspy.Module with predictors.
    "no_program",
    "program_is_class",
    "program_not_module",
    "no_predictors",
    "dspy_unavailable",
    *template.CODES,
)

# Bound at import: the program may monkeypatch the modules they come from.
_encode = wire.encode
_receive = _state.receive
_lock = _state.lock


def _attribute(obj: object, name: str) -> object:
    try:
        return getattr(obj, name, "")
    except BaseException:  # noqa: B036 - a subclass's property may raise anything
        return ""


def _model_error(exc: BaseException) -> BaseException | None:
    """The task model's error behind `exc`: itself, or one it was raised from (dspy wraps
    an engine's errors in its own)."""
    seen = 0
    while exc is not None and seen < 8:
        if issubclass(type(exc), ModelError):
            return exc
        exc = _attribute(exc, "__cause__") or _attribute(exc, "__context__") or None
        seen += 1
    return None


def _raised(exc: BaseException, lines: list[str], problem: str = "run_error") -> dict:
    """The run_finished frame of a failed run (or of a program that failed to load)."""
    described = tracebacks.describe(exc, lines, PROGRAM_FILENAME)
    model_error = _model_error(exc) if problem == "run_error" else None
    if isinstance(exc, template.TemplateError):
        problem, params = exc.code, dict(exc.params)
    elif model_error is not None:
        problem = "run_model_error"
        params = {
            "code": safe_text(_attribute(model_error, "code"), 200),
            "message": safe_text(_attribute(model_error, "message"), 2048),
        }
    else:
        params = {k: described["exception"][k] for k in ("type", "message")}
    return {
        "type": "run_finished",
        "outcome": "raised",
        "problem": problem,
        "params": params,
        **described,
    }


def _failed(problem: str, params: dict) -> dict:
    return {
        "type": "run_finished",
        "outcome": "raised",
        "problem": problem,
        "params": params,
        "exception": None,
        "traceback": [],
    }


def _send(sock: object, frame: dict) -> None:
    try:
        data = _encode(frame)
    except (wire.ProtocolError, ValueError, TypeError):
        data = _encode({**frame, "traceback": [], "params": {}})
    with _lock:
        sock.sendall(data)  # type: ignore[attr-defined]


def _load_module(source: str, lines: list[str]) -> tuple[dict | None, dict | None]:
    """(the program module's namespace, None) or (None, the run_finished frame saying why
    not)."""
    code, problem = compiling.compile_user_code(source, PROGRAM_FILENAME)
    if code is None:
        return None, _failed("program_syntax_error", problem)
    module = types.ModuleType("program")
    module.__file__ = PROGRAM_FILENAME
    module.__loader__ = compiling.SourceLoader(source)
    sys.modules["program"] = module
    try:
        exec(code, module.__dict__)
    except BaseException as exc:  # noqa: B036 - SystemExit & co. are the program's errors too
        return None, _raised(exc, lines, "program_import_error")
    return module.__dict__, None


def _load_program(source: str, lines: list[str]) -> tuple[object | None, dict | None]:
    """(run function, None) or (None, the run_finished frame saying why not)."""
    namespace, finished = _load_module(source, lines)
    if namespace is None:
        return None, finished
    run = namespace.get("run")
    if not callable(run):
        params = {} if "run" not in namespace else {"type": type_name(run)}
        return None, _failed("no_run_function", params)
    return run, None


def _load_dspy(source: str, lines: list[str], artifact: dict):
    """(run function, None) or (None, the run_finished frame saying why not), for a DSPy
    program: run(content, input) calls program(**input) with the job's instructions.
    With "describe" the run returns nothing and says what the predictors are."""
    if _confine.site and _confine.site not in sys.path:
        sys.path.append(_confine.site)
    try:
        from skynet import _dspy_program
    except ImportError as exc:
        return None, _failed("dspy_unavailable", {"type": type_name(exc), "message": str(exc)})
    try:
        _dspy_program.preload()
    except BaseException as exc:  # noqa: B036 - no dspy here: say so, never run without it
        return None, _failed("dspy_unavailable", {"type": type_name(exc), "message": str(exc)})
    namespace, finished = _load_module(source, lines)
    if namespace is None:
        return None, finished
    try:
        program = _dspy_program.find_program(namespace)
        predictors = _dspy_program.describe(program)
    except _dspy_program.ProgramProblem as exc:
        return None, _failed(exc.code, exc.params)
    except BaseException as exc:  # noqa: B036 - a property of the user's module raised
        return None, _raised(exc, lines, "program_import_error")
    instructions = artifact.get("instructions") or {}
    found: dict = {}

    def run(_content: str, input: object) -> object:
        if artifact.get("describe"):
            found["dspy"] = dspy_part.fit({"predictors": predictors})
            return {}
        fields, trace = _dspy_program.run(
            program, instructions, input if isinstance(input, dict) else {}
        )
        found["dspy"] = dspy_part.fit(
            {
                "names": [described["name"] for described in predictors],
                "fields": _dspy_program._texts(fields),
                "trace": trace,
            }
        )
        return _dspy_program.output_of(fields, artifact.get("output_fields") or [])

    run.found = found  # type: ignore[attr-defined]
    return run, None


def _prompt_run(content: str, input: object) -> str:
    """The built-in run of a "prompt" artifact: fill the template, ask the task model."""
    return llm(template.fill(content, input if isinstance(input, dict) else {}))


def flush_streams() -> None:
    """Flush what user code printed, so the parent reads it before this process ends."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()  # type: ignore[union-attr]
        except BaseException:  # noqa: B036 - a closed or replaced stream is the program's business
            pass


def run_job(sock: object, job: dict) -> None:
    """The whole run child after confinement: load, wait for the input, run, report."""
    _state.install(sock, None)
    artifact = job.get("artifact") or {}
    kind = artifact.get("kind")
    content = artifact.get("content") or ""
    lines: list[str] = []
    run = None
    finished: dict | None = None
    if kind == "python":
        source = artifact.get("source") or ""
        lines = compiling.split_lines(source)
        run, finished = _load_program(source, lines)
    elif kind == "dspy":
        source = artifact.get("source") or ""
        lines = compiling.split_lines(source)
        run, finished = _load_dspy(source, lines, artifact)
    elif kind == "prompt":
        try:
            template.parse(content)
            run = _prompt_run
        except template.TemplateError as exc:
            finished = _failed(exc.code, dict(exc.params))
    else:
        finished = _failed("run_error", {"type": "ValueError", "message": "unknown kind"})

    if finished is None:
        _send(sock, {"type": "program_loaded"})
        with _lock:
            given = _receive("input")
        if given is None:
            return
        try:
            output = run(content, given.get("input"))  # type: ignore[misc]
        except BaseException as exc:  # noqa: B036 - SystemExit, KeyboardInterrupt... are reported
            finished = _raised(exc, lines)
        else:
            budget = values.output_budget()
            node = values.encode(output, budget)
            if budget.exhausted:
                finished = _failed("output_too_large", {"type": type_name(output)})
            else:
                finished = {
                    "type": "run_finished",
                    "outcome": "returned",
                    "output": node,
                    "output_repr": safe_repr(output),
                }
                found = getattr(run, "found", None)
                if found and "dspy" in found:
                    finished["dspy"] = found["dspy"]
    flush_streams()
    _send(sock, finished)
