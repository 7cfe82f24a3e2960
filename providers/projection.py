"""What an optimization run will cost and how long it will take, projected from what an
evaluation measured per case.

Pure arithmetic, no Django: the wizard's review step shows it and the run's bundle keeps
it. Every number it gives is a range (low, high) built from measured values and the
assumptions below, which are constants so that a reader can see them and a test can pin
them. A part that nothing measured is not guessed: its line says why ("not measured",
with a reason code the web side words).

The model of a GEPA run (gepa's ReflectiveMutationProposer; DSPy GEPA runs the same loop
through gepa, with the same minibatch default):

1. The seed candidate is scored on the whole valset: V metric calls.
2. Each iteration scores the current candidate on a minibatch of m train cases (m calls:
   the run's minibatch size, gepa's reflection_minibatch_size),
   makes ONE reflection call that reads the current instruction and those m cases (each
   case's input, output and feedback), and scores the proposed candidate on the same
   minibatch (m calls).
3. A proposal that does better on the minibatch is scored on the whole valset (V calls).
4. The budget is checked between iterations, so the last one may go past it.

So an iteration spends 2m calls when its proposal is rejected and 2m + V when it is
accepted. The two bounds take the two extremes:

- low: every proposal is accepted, so each iteration costs 2m + V calls and the budget
  buys the fewest iterations (reflection calls); prompts as long as the mean case and
  the mean feedback, at CHARS_PER_TOKEN[0], the shorter reflection output.
- high: no proposal is accepted, so each iteration costs 2m calls and the budget buys
  the most reflection calls; prompts as long as the longest case and the longest
  feedback, at CHARS_PER_TOKEN[1], the longer output, and an instruction that has grown
  to the size of a reflection output (later iterations rewrite what earlier ones wrote).

Left out, each making the real run cheaper rather than dearer (the low bound may then
still be above it): minibatches whose cases all score perfectly (gepa skips reflecting
on them), DSPy GEPA's merge proposals (they score candidates without a reflection call),
and gepa's evaluation cache.

Each metric call runs the artifact on a case (the task model's cost) and the metric on
its output (the metric model's cost): a call costs what the evaluation measured per case
on average. Time is the calls one after another (concurrency 1: how many a run makes at
once is the optimization service's choice, not known here), at the evaluation's mean
time per case; the reflection calls' own time is not measured and not included.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

from providers.catalogue import Model

# The engines this model describes (the wizard's resolved engine; Auto is never one).
ENGINES = ("gepa", "dspy_gepa")

REFLECTION_MINIBATCH = 3
"""Cases per reflection minibatch: gepa's and DSPy GEPA's reflection_minibatch_size default,
and a draft's until its owner picks another (MINIBATCH_LIMITS)."""

MINIBATCH_LIMITS = (1, 50)
"""The minibatch sizes a run may have: the wizard's, the API's and the engines' bounds."""

PROMPT_TEMPLATE_CHARS = 1000
"""Characters of the reflection prompt around the instruction and the cases: gepa's
default instruction-proposal prompt is about 920, rounded up for the chat framing."""

EXAMPLE_OVERHEAD_CHARS = 80
"""Characters each case adds to the reflection prompt besides its values: the headings
gepa writes around it ("# Example 1", "## Inputs", "## Generated Outputs", "## Feedback")."""

CHARS_PER_TOKEN = (4.0, 3.0)
"""Characters per token for the (low, high) bound: about 4 for English prose, nearer 3
for code, JSON and most other languages, which cost more tokens per character."""

REFLECTION_OUTPUT_TOKENS = (400, 2000)
"""Tokens one reflection call writes (low, high): a new instruction, from a short one to
a long one with the reasoning before it. A reasoning model's hidden thinking tokens come
on top and are not counted."""

# Why a line is not measured (the web side words each code).
NO_EVALUATION = "no_evaluation"  # no finished evaluation measured the draft
NO_CASES = "no_cases"  # the evaluation finished without scoring a case
MODEL_CHANGED = "model_changed"  # the evaluation measured another model than the draft's
NO_ARTIFACT_RUN = "no_artifact_run"  # the outputs were recorded ones: the task model never ran
NO_TIMING = "no_timing"
NO_FEEDBACK_LENGTHS = "no_feedback_lengths"
NO_CASE_SIZES = "no_case_sizes"
NO_REFLECTION_MODEL = "no_reflection_model"  # the draft has none
PRICE_UNKNOWN = "price_unknown"  # the draft's reflection model is not in the catalogue
NOTHING_MEASURED = "nothing_measured"  # the total, when none of its parts is measured

# Notes about the projection as a whole.
BUDGET_BELOW_VALSET = "budget_below_valset"  # scoring the seed spends it all: no iteration
PROMPT_OVER_CONTEXT = "prompt_over_context"  # the high bound's prompt would not fit

COST_PARTS = ("task_usd", "metric_usd", "reflection_usd")


@dataclass(frozen=True)
class Measured:
    """What an evaluation measured per case; None: not measured.

    `case_chars_*`: characters of a case's input and output as JSON, the part of a
    reflection prompt each case adds besides its feedback. `task_model` and
    `metric_model`: the models whose costs these are (the metric model resolved: the
    reflection model when none was chosen)."""

    cases: int
    task_usd_per_case: float | None
    metric_usd_per_case: float | None
    total_ms_mean: float | None
    run_ms_mean: float | None
    feedback_length_mean: float | None
    feedback_length_max: float | None
    case_chars_mean: float | None
    case_chars_max: float | None
    task_model: str
    metric_model: str

    @classmethod
    def from_summary(
        cls,
        summary: Mapping,
        *,
        case_chars_mean: float | None,
        case_chars_max: float | None,
        task_model: str,
        metric_model: str,
    ) -> Measured:
        """From an Evaluation.summary (the shared schema's "cases", "cost", "time").

        An evaluation that scored each output more than once (K repeats, or a second
        version compared) spent K metric calls a case, and its cases took their time
        one scoring after another: a run's metric calls are one each, so the metric's
        cost and time are divided by the scorings (the artifact's run happened once)."""
        cost = summary.get("cost") or {}
        time = summary.get("time") or {}
        scorings = scorings_of(summary)
        metric_usd = cost.get("metric_usd_per_case")
        total_ms, run_ms = time.get("total_ms_mean"), time.get("run_ms_mean")
        if total_ms is not None and scorings > 1:
            ran = run_ms or 0.0
            total_ms = ran + max(0.0, total_ms - ran) / scorings
        return cls(
            cases=int(summary.get("cases") or 0),
            task_usd_per_case=cost.get("task_usd_per_case"),
            metric_usd_per_case=metric_usd / scorings if metric_usd is not None else None,
            total_ms_mean=total_ms,
            run_ms_mean=time.get("run_ms_mean"),
            feedback_length_mean=cost.get("feedback_length_mean"),
            feedback_length_max=cost.get("feedback_length_max"),
            case_chars_mean=case_chars_mean,
            case_chars_max=case_chars_max,
            task_model=task_model,
            metric_model=metric_model,
        )


def scorings_of(summary: Mapping) -> int:
    """How many times the evaluation behind `summary` scored each case's output: its K
    repeats, 2 for one scored twice or compared with a second version, else 1."""
    noise = summary.get("noise") or {}
    if isinstance(noise.get("k"), int) and noise["k"] > 1:
        return noise["k"]
    if summary.get("flaky") is not None or summary.get("agreement") is not None:
        return 2
    return 1


@dataclass(frozen=True)
class Range:
    low: float
    high: float

    def __mul__(self, factor: float) -> Range:
        return Range(self.low * factor, self.high * factor)

    def __add__(self, other: Range) -> Range:
        return Range(self.low + other.low, self.high + other.high)


@dataclass(frozen=True)
class Line:
    """One line of the projection: a range, or the reason it is not measured."""

    range: Range | None = None
    reason: str = ""

    @classmethod
    def unmeasured(cls, reason: str) -> Line:
        return cls(None, reason)


@dataclass(frozen=True)
class Projection:
    engine: str
    budget_calls: int
    valset_size: int
    minibatch: int
    calls: Range
    iterations: Range
    prompt_tokens: Range | None
    output_tokens: Range
    task_usd: Line
    metric_usd: Line
    reflection_usd: Line
    time_s: Line
    # The sum of the cost lines that are measured; `total_missing` names the others.
    total_usd: Line
    total_missing: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    assumptions: dict = field(default_factory=dict)
    # What it was projected from (None: nothing measured).
    measured: Measured | None = None

    def to_dict(self) -> dict:
        """JSON-safe: ranges as {"low", "high"}, unmeasured lines as {"reason"}."""
        data = asdict(self)
        for name in ("task_usd", "metric_usd", "reflection_usd", "time_s", "total_usd"):
            line = data[name]
            data[name] = line["range"] if line["range"] is not None else {"reason": line["reason"]}
        data["total_missing"] = list(self.total_missing)
        data["notes"] = list(self.notes)
        return data


def assumptions(minibatch: int = REFLECTION_MINIBATCH) -> dict:
    """The constants a projection was made with, kept with it (the minibatch: the run's)."""
    return {
        "reflection_minibatch": minibatch,
        "prompt_template_chars": PROMPT_TEMPLATE_CHARS,
        "example_overhead_chars": EXAMPLE_OVERHEAD_CHARS,
        "chars_per_token": list(CHARS_PER_TOKEN),
        "reflection_output_tokens": list(REFLECTION_OUTPUT_TOKENS),
        "concurrency": 1,
    }


def plan(budget_calls: int, valset_size: int, minibatch: int = REFLECTION_MINIBATCH):
    """(calls, iterations) of a run, as ranges: see the module's docstring.

    Iterations run while fewer than the budget's calls are spent, so each extreme buys
    ceil(left / calls per iteration) of them and may end past the budget."""
    if budget_calls <= valset_size:
        return Range(valset_size, valset_size), Range(0, 0)
    left = budget_calls - valset_size
    accepted = math.ceil(left / (2 * minibatch + valset_size))
    rejected = math.ceil(left / (2 * minibatch))
    calls_accepted = valset_size + accepted * (2 * minibatch + valset_size)
    calls_rejected = valset_size + rejected * 2 * minibatch
    calls = Range(min(calls_accepted, calls_rejected), max(calls_accepted, calls_rejected))
    return calls, Range(accepted, rejected)


def reflection_prompt_tokens(measured: Measured, instruction_chars: int, minibatch: int) -> Range:
    """Tokens of one reflection prompt: the template, the instruction being rewritten and
    the minibatch's cases, each with its feedback."""
    low_chars = (
        PROMPT_TEMPLATE_CHARS
        + instruction_chars
        + minibatch
        * (measured.case_chars_mean + measured.feedback_length_mean + EXAMPLE_OVERHEAD_CHARS)
    )
    high_chars = PROMPT_TEMPLATE_CHARS + minibatch * (
        measured.case_chars_max + measured.feedback_length_max + EXAMPLE_OVERHEAD_CHARS
    )
    # The instruction a late iteration rewrites is an earlier reflection's output.
    high_instruction = max(instruction_chars / CHARS_PER_TOKEN[1], REFLECTION_OUTPUT_TOKENS[1])
    return Range(low_chars / CHARS_PER_TOKEN[0], high_chars / CHARS_PER_TOKEN[1] + high_instruction)


def _unmeasured_evaluation(measured: Measured | None) -> str:
    if measured is None:
        return NO_EVALUATION
    if measured.cases == 0:
        return NO_CASES
    return ""


def _task_line(measured: Measured | None, task_model: str, calls: Range) -> Line:
    reason = _unmeasured_evaluation(measured)
    if reason:
        return Line.unmeasured(reason)
    if measured.task_model != task_model:
        return Line.unmeasured(MODEL_CHANGED)
    if measured.run_ms_mean is None or measured.task_usd_per_case is None:
        return Line.unmeasured(NO_ARTIFACT_RUN)
    return Line(calls * measured.task_usd_per_case)


def _metric_line(measured: Measured | None, metric_model: str, calls: Range) -> Line:
    reason = _unmeasured_evaluation(measured)
    if reason:
        return Line.unmeasured(reason)
    if measured.metric_model != metric_model:
        return Line.unmeasured(MODEL_CHANGED)
    if measured.metric_usd_per_case is None:
        return Line.unmeasured(NO_CASES)
    return Line(calls * measured.metric_usd_per_case)


def _time_line(measured: Measured | None, calls: Range) -> Line:
    reason = _unmeasured_evaluation(measured)
    if reason:
        return Line.unmeasured(reason)
    if measured.total_ms_mean is None:
        return Line.unmeasured(NO_TIMING)
    return Line(calls * (measured.total_ms_mean / 1000))


def _reflection_line(
    measured: Measured | None,
    reflection: Model | None,
    reflection_id: str,
    prompt: Range | None,
    iterations: Range,
) -> Line:
    reason = _unmeasured_evaluation(measured)
    if reason:
        return Line.unmeasured(reason)
    if reflection is None:
        return Line.unmeasured(PRICE_UNKNOWN if reflection_id else NO_REFLECTION_MODEL)
    if measured.feedback_length_mean is None or measured.feedback_length_max is None:
        return Line.unmeasured(NO_FEEDBACK_LENGTHS)
    if prompt is None:
        return Line.unmeasured(NO_CASE_SIZES)
    low_output, high_output = REFLECTION_OUTPUT_TOKENS
    per_call = Range(
        reflection.cost_usd(prompt.low, low_output), reflection.cost_usd(prompt.high, high_output)
    )
    return Line(Range(per_call.low * iterations.low, per_call.high * iterations.high))


def project(
    measured: Measured | None,
    *,
    budget_calls: int,
    valset_size: int,
    engine: str,
    task_model: str,
    metric_model: str,
    reflection: Model | None,
    reflection_id: str = "",
    instruction_chars: int = 0,
    minibatch: int = REFLECTION_MINIBATCH,
) -> Projection:
    """Project a run of `engine` with `budget_calls` metric calls and reflection
    minibatches of `minibatch` cases from `measured` (None: no evaluation measured
    anything).

    `task_model` and `metric_model` are the run's (the metric model resolved): a cost the
    evaluation measured on another model does not count for it. `reflection` is the run's
    reflection model from the catalogue, None when it has none (`reflection_id` empty)
    or the catalogue does not know it. `instruction_chars`: the artifact text the first
    reflection rewrites."""
    if engine not in ENGINES:
        raise ValueError(f"no projection for the engine {engine!r}")
    calls, iterations = plan(budget_calls, valset_size, minibatch)
    prompt = None
    if measured is not None and None not in (
        measured.case_chars_mean,
        measured.case_chars_max,
        measured.feedback_length_mean,
        measured.feedback_length_max,
    ):
        prompt = reflection_prompt_tokens(measured, instruction_chars, minibatch)
    lines = {
        "task_usd": _task_line(measured, task_model, calls),
        "metric_usd": _metric_line(measured, metric_model, calls),
        "reflection_usd": _reflection_line(measured, reflection, reflection_id, prompt, iterations),
    }
    measured_parts = [line.range for line in lines.values() if line.range is not None]
    missing = tuple(name for name, line in lines.items() if line.range is None)
    if measured_parts:
        total = Line(sum(measured_parts[1:], measured_parts[0]))
    else:
        total = Line.unmeasured(_unmeasured_evaluation(measured) or NOTHING_MEASURED)
    notes = []
    if budget_calls <= valset_size:
        notes.append(BUDGET_BELOW_VALSET)
    if (
        prompt is not None
        and reflection is not None
        and prompt.high + REFLECTION_OUTPUT_TOKENS[1] > reflection.context_window
    ):
        notes.append(PROMPT_OVER_CONTEXT)
    return Projection(
        engine=engine,
        budget_calls=budget_calls,
        valset_size=valset_size,
        minibatch=minibatch,
        calls=calls,
        iterations=iterations,
        prompt_tokens=prompt,
        output_tokens=Range(*REFLECTION_OUTPUT_TOKENS),
        time_s=_time_line(measured, calls),
        total_usd=total,
        total_missing=missing if measured_parts else (),
        notes=tuple(notes),
        assumptions=assumptions(minibatch),
        measured=measured,
        **lines,
    )


# -- the minibatch gate ---------------------------------------------------------------

STEP_SHARE = 0.1
"""The improvement the gate is judged on: a tenth of the score's range."""

COIN_TOSS = 0.75
"""Below this chance of accepting a truly better candidate, the gate is called a coin toss."""

RIGHT_CALL_TARGET = 0.9
"""The chance of a right call the suggested minibatch size reaches."""


def score_step(score: Mapping | None) -> float:
    """The step a candidate is better by that the gate is judged on: STEP_SHARE of the
    score's range, the range being an evaluation summary's score max - min when wider
    than 1 (a metric scoring 0 to 10), else 1 (scores in [0, 1], or too few to tell)."""
    score = score or {}
    low, high = score.get("min"), score.get("max")
    width = 1.0
    if isinstance(low, int | float) and isinstance(high, int | float) and high - low > 1:
        width = float(high - low)
    return STEP_SHARE * width


def right_call(variance: float, minibatch: int, step: float) -> float:
    """P = Φ(step / sqrt(2σ²/m)): see minibatch_gate. 1 for a metric without noise."""
    if variance <= 0:
        return 1.0
    # scipy only here: the worker imports this module and never needs it.
    from scipy.stats import norm

    return float(norm.cdf(step / math.sqrt(2 * variance / minibatch)))


def minibatch_gate(variance: float, minibatch: int, *, step: float = STEP_SHARE) -> dict:
    """How often GEPA's minibatch comparison makes the right call, given the judge's noise.

    GEPA accepts a proposed candidate only if it scores higher than its parent on the same
    minibatch of m train cases. A metric that calls a model (a judge) gives a case a
    different score each time it scores it, so that comparison is partly chance. The
    model: each of the two candidates' scores on a case carries the judge's own noise,
    of variance σ² (`variance`: what a K-repeat evaluation measured, the mean over cases
    of each case's variance across its K scores), independent of the other's and of the
    other cases'. Each candidate's minibatch mean then carries noise of variance σ²/m, and
    the difference of the two means noise of SD sqrt(2σ²/m). A candidate truly better by
    `step` on every case wins the comparison when that noise does not take more than
    `step` away:

        P = Φ(step / sqrt(2σ²/m))

    with Φ the standard normal CDF (the normal law of the mean of m noises: exact for
    normal noise, close enough for other noise from m of a few on). Scores that tie (a
    0/1 judge) make it worse than this: gepa keeps the parent on a tie.

    Returns {"right_call": P at `minibatch`, "coin_toss": P < COIN_TOSS, "minibatch_for":
    the smallest minibatch size up to MINIBATCH_LIMITS' largest with P ≥ RIGHT_CALL_TARGET,
    None when none is}."""
    if minibatch < 1:
        raise ValueError("a minibatch has at least one case")
    chance = right_call(variance, minibatch, step)
    low, high = MINIBATCH_LIMITS
    needed = next(
        (m for m in range(low, high + 1) if right_call(variance, m, step) >= RIGHT_CALL_TARGET),
        None,
    )
    return {"right_call": chance, "coin_toss": chance < COIN_TOSS, "minibatch_for": needed}
