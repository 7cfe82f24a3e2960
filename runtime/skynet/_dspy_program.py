"""A DSPy program in a run child: load it, describe it, run it on one input.

The program file defines `program`, an instance of a `dspy.Module`. The child runs
`program(**input)` with its predictors' instructions set as the job says, under a
`dspy.LM` whose engine sends each request to the task model over the child's socket
(skynet.llm, so the parent meters, budgets and times it as any run's model call), with
DSPy's caches off: nothing a program or its model said is kept for another case.

What returns to the parent is data only: the prediction's fields, and the trace of the
predictor calls (name, inputs, outputs), which the worker replays into its own copy of
the program's predictors for DSPy's GEPA. "describe" gives the predictors' names,
instructions and fields, so the worker can build that copy without running user code.
Both are cut to skynet.dspy_part's limits, which the worker applies again.
"""

from __future__ import annotations

import os

from skynet._model import llm
from skynet.dspy_part import DESC_LIMIT, NAME_LIMIT, TEXT_LIMIT, TRACE_LIMIT
from skynet.safe import safe_text, type_name


class ProgramProblem(Exception):
    """The file does not define a usable program: `code` and `params` say why."""

    def __init__(self, code: str, params: dict | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.params = params or {}


def _quiet_dspy():
    """dspy, with its caches off and nothing of it reaching for the network."""
    os.environ.setdefault("DSPY_CACHEDIR", "/tmp/.dspy_cache")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import dspy

    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    return dspy


def preload() -> None:
    """Import dspy once, in a warm sandbox, before it forks any case, and run a program
    through it once (with a canned answer, no model), so that what dspy builds on first
    use is built here and not again in every case."""
    dspy = _quiet_dspy()
    try:
        run(
            dspy.Predict("question -> answer"), {}, {"question": "?"}, TextEngine(lambda _: _CANNED)
        )
    except Exception:  # a warm-up only: a case that fails says why itself
        pass


class TextEngine:
    """A dspy engine (complete(Request) -> Response) over `ask`, a function from one
    text to the model's answer: the system message and the conversation go as one text."""

    def __init__(self, ask) -> None:
        self.ask = ask

    def complete(self, request):
        from dspy import lm15

        parts = []
        system = request.system
        if system is not None:
            parts.append(system if isinstance(system, str) else "".join(p.text for p in system))
        messages = list(request.messages)
        if len(messages) == 1 and messages[0].role == "user":
            parts.append(messages[0].text or "")
        else:
            for message in messages:
                parts.append(f"[{message.role}]\n{message.text or ''}")
        text = self.ask("\n\n".join(parts))
        return lm15.Response(
            id=None,
            model="skynet",
            message=lm15.Message.assistant([lm15.TextPart(text)]),
            finish_reason="stop",
            usage=lm15.Usage(),
        )

    def stream(self, request):
        from dspy import lm15

        return lm15.response_to_events(self.complete(request))

    def close(self) -> None:
        pass


def task_engine() -> TextEngine:
    """The engine of a program's dspy.LM in the sandbox: skynet.llm(), the task model."""
    return TextEngine(lambda text: llm(text))


# preload()'s engine: an answer in DSPy's chat format, without asking anyone.
_CANNED = "[[ ## answer ## ]]\n-\n\n[[ ## completed ## ]]"


def find_program(module_dict: dict):
    """The module's `program`, a dspy.Module instance; ProgramProblem otherwise."""
    dspy = _quiet_dspy()
    if "program" not in module_dict:
        raise ProgramProblem("no_program")
    program = module_dict["program"]
    if isinstance(program, type) and issubclass(program, dspy.Module):
        raise ProgramProblem("program_is_class", {"type": program.__name__})
    if not isinstance(program, dspy.Module):
        raise ProgramProblem("program_not_module", {"type": type_name(program)})
    if not list(program.named_predictors()):
        raise ProgramProblem("no_predictors")
    return program


def _field(name: str, info) -> dict:
    extra = getattr(info, "json_schema_extra", None) or {}
    return {
        "name": name,
        "desc": safe_text(extra.get("desc") or "", DESC_LIMIT),
        "prefix": safe_text(extra.get("prefix") or "", NAME_LIMIT),
    }


def describe(program) -> list[dict]:
    """Each predictor: its name, instructions and input and output fields, in order."""
    found = []
    for name, predictor in program.named_predictors():
        signature = predictor.signature
        found.append(
            {
                "name": safe_text(name, NAME_LIMIT),
                "instructions": safe_text(signature.instructions or "", TEXT_LIMIT),
                "inputs": [_field(k, v) for k, v in signature.input_fields.items()],
                "outputs": [_field(k, v) for k, v in signature.output_fields.items()],
            }
        )
    return found


def _text(value: object) -> str:
    return value if isinstance(value, str) else safe_text(repr(value), TEXT_LIMIT)


def _texts(values: dict) -> dict:
    return {str(k): _text(v)[:TEXT_LIMIT] for k, v in values.items()}


def run(program, instructions: dict, input: dict, engine=None) -> tuple[dict, list[dict]]:
    """program(**input) with `instructions` set per predictor name: (the prediction's
    fields, the trace as [{"predictor", "inputs", "outputs"}]). Its model is the task
    model (task_engine()), or `engine`."""
    dspy = _quiet_dspy()
    names = {}
    for name, predictor in program.named_predictors():
        names[id(predictor)] = name
        if name in instructions:
            predictor.signature = predictor.signature.with_instructions(instructions[name])
    lm = dspy.LM("skynet/task", engine=engine or task_engine(), cache=False, num_retries=0)
    trace: list = []
    with dspy.context(lm=lm, trace=trace):
        prediction = program(**input)
    if isinstance(prediction, dspy.Prediction):
        fields = dict(prediction.items())
    elif isinstance(prediction, dict):
        fields = dict(prediction)
    else:
        fields = {"output": prediction}
    steps = []
    for predictor, inputs, outputs in trace[:TRACE_LIMIT]:
        name = names.get(id(predictor))
        if name is None:
            continue
        given = dict(outputs.items()) if hasattr(outputs, "items") else {"output": outputs}
        steps.append({"predictor": name, "inputs": _texts(inputs), "outputs": _texts(given)})
    return fields, steps


def output_of(fields: dict, output_fields: list) -> object:
    """What the metric receives as `output`, as the bundled adapter gives it: the value
    of the one output field (the dataset's output columns the prediction has, else all of
    its fields), or {name: value} when there are several."""
    chosen = [name for name in output_fields if name in fields] or list(fields)
    if len(chosen) == 1:
        return fields[chosen[0]]
    return {name: fields[name] for name in chosen}
