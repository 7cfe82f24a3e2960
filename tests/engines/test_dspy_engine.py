"""DSPy GEPA through the core: the user's DSPy program and metric in the sandbox (the
program with dspy loaded, its model calls over the case's socket), dspy.GEPA over the
stand-in in this process, the models over real HTTP (tests.quiz's DSPy world)."""

from __future__ import annotations

import json

from contract.runner import OnDemand
from engines.dspy_engine import MAX_LANES, run_dspy_gepa
from engines.engine import RunSpec
from tests import quiz
from tests.engines.test_gepa_engine import Recorder, split


def run(
    tmp_path,
    config,
    run_models,
    source,
    *,
    program=quiz.DSPY_PROGRAM,
    budget=60,
    cancel=None,
    task_for=None,
    **kw,
):
    train, val = split(quiz.rows())
    spec = RunSpec(
        source=source,
        kind="dspy",
        seed_text="",
        program_source=program,
        trainset=train,
        valset=val,
        max_metric_calls=budget,
        run_dir=str(tmp_path / "run"),
        output_fields=("capital",),
        **kw,
    )
    sink = Recorder()
    outcome, _ = run_dspy_gepa(
        spec,
        sandboxes=OnDemand(config),
        run_sandboxes=OnDemand(config, preload="dspy"),
        budget=run_models.budget,
        reflection=run_models.reflection,
        watch=run_models.watch,
        sink=sink,
        metric_for=run_models.metric_for,
        task_for=task_for or run_models.task_for,
        forget=run_models.forget,
        cancel=cancel,
        every_s=0.0,
    )
    return outcome, sink


def test_specific_feedback_improves_the_program(tmp_path, dspy_config, models, provider):
    run_models = models()
    outcome, sink = run(tmp_path, dspy_config, run_models, quiz.SPECIFIC)
    assert (outcome.ended, outcome.reason) == ("finished", "perfect_score")
    last = sink.snapshots[-1]
    assert last["seed_score"] == 0.0
    assert last["best"]["score"] == 1.0
    best = sink.candidate_rows[last["best"]["idx"]]
    assert quiz.INSTRUCTION in best["text"]
    # dspy's log lines went to the run's folder, not to the worker's log.
    assert "Iteration" in (tmp_path / "run" / "run_log.txt").read_text()


def test_cancel_stops_it_at_once(tmp_path, dspy_config, models, provider):
    from contract.cancel import Cancel

    run_models = models()
    cancel = Cancel()
    calls = []
    task_for = run_models.task_for

    def counting(index):
        handler = task_for(index)

        def answer(request):
            calls.append(index)
            if len(calls) == 5:
                cancel.set()
            return handler(request)

        return answer

    outcome, sink = run(
        tmp_path, dspy_config, run_models, quiz.SPECIFIC, cancel=cancel, task_for=counting
    )
    assert (outcome.ended, outcome.reason) == ("cancelled", "cancelled")
    # The cases in flight (one per lane) end; nothing starts after.
    assert len(calls) <= 5 + MAX_LANES


JUDGE = """
from skynet import llm

def score(input, output, expected):
    verdict = llm("JUDGE: is this answer exactly the city " + expected["capital"] + "?",
                  input={"answer": str(output)})
    if verdict.strip() == "yes":
        return 1.0, {"feedback": "Correct: the city name alone."}
    return 0.0, {"feedback": "The output must be the city name only, with no other words."}
"""


def test_a_judge_metric_runs_once_per_case_and_steers_it(tmp_path, dspy_config, models, provider):
    def judge(request):
        system = request.system or ""
        if system.startswith("JUDGE:"):
            city = system.split("exactly the city ", 1)[1].split("?", 1)[0]
            return "yes" if request.user == json.dumps({"answer": city}) else "no"
        return quiz.respond_any(request)

    provider.respond = judge
    run_models = models()
    outcome, sink = run(tmp_path, dspy_config, run_models, JUDGE)
    assert (outcome.ended, outcome.reason) == ("finished", "perfect_score")
    last = sink.snapshots[-1]
    assert (last["seed_score"], last["best"]["score"]) == (0.0, 1.0)
    spend = last["spend"]
    # One describe case, then every case: one program run, one judged score; GEPA's
    # reflection-time second metric call reused the verdict rather than judging again.
    assert spend["metric_calls"] == spend["task_calls"] == last["cases_run"] - 1
    judged = [r for r in provider.requests if (r.system or "").startswith("JUDGE:")]
    assert len(judged) == spend["metric_calls"]


HOSTILE = """
import dspy
from skynet import _dspy_program

program = dspy.Predict("country -> capital")
_dspy_program.describe = lambda program: [{"name": "x", "instructions": "",
    "inputs": [{"name": "__class__", "desc": ""}], "outputs": [{"name": "a", "desc": ""}]}]
"""


def test_a_program_that_forges_its_description_is_refused(tmp_path, dspy_config, models, provider):
    outcome, sink = run(tmp_path, dspy_config, models(), quiz.SPECIFIC, program=HOSTILE)
    assert (outcome.ended, outcome.reason) == ("failed", "program_failed")
    assert outcome.params["problem"] == "no_predictors"


def test_the_metric_dspy_gets_reuses_the_verdict_with_named_scores_and_no_empty_feedback():
    """What dspy.GEPA's metric returns, for either of its calls on a prediction: the
    case's verdict, its named scores as objective_scores, and None for empty feedback
    (dspy then writes its own), never the metric run again."""
    import dspy

    from engines.adapter import CaseTrace
    from engines.dspy_engine import DspyCases

    cases = DspyCases(adapter=None, spec=None, items=[], lanes=None)
    named = CaseTrace({"country": "Peru"}, "Lima", "Right.", 1.0, "valid", scores={"exact": 1.0})
    silent = CaseTrace({"country": "Chile"}, "x", "", 0.0, "valid")
    first, second = dspy.Prediction(capital="Lima"), dspy.Prediction(capital="x")
    cases.remember(first, named)
    cases.remember(second, silent)
    gold = dspy.Example(country="Peru").with_inputs("country")
    for call in ({}, {"trace": [], "pred_name": "self", "pred_trace": []}):
        got = cases.metric(gold, first, **call)
        assert (got.score, got.feedback, got.objective_scores) == (1.0, "Right.", {"exact": 1.0})
    quiet = cases.metric(gold, second)
    assert (quiet.score, quiet.feedback) == (0.0, None)
    # A prediction this run never made is not scored as if it had been.
    unknown = cases.metric(gold, dspy.Prediction(capital="Lima"))
    assert unknown.score == 0.0 and "not scored" in unknown.feedback


def test_the_metric_gives_the_call_naming_a_predictor_that_predictors_own_feedback():
    """GEPA's reflection-time call names the predictor it improves: its text from the
    side info's "predictor_feedback" when there is one, else the case's feedback."""
    import dspy

    from engines.adapter import CaseTrace
    from engines.dspy_engine import DspyCases

    cases = DspyCases(adapter=None, spec=None, items=[], lanes=None)
    trace = CaseTrace(
        {"country": "Peru"},
        "x",
        "General: the city only.",
        0.0,
        "valid",
        scores={"exact": 0.0},
        predictor_feedback={"first": "First: name the country.", "second.predict": "Second."},
    )
    pred = dspy.Prediction(capital="x")
    cases.remember(pred, trace)
    gold = dspy.Example(country="Peru").with_inputs("country")
    general = cases.metric(gold, pred)
    assert (general.score, general.feedback) == (0.0, "General: the city only.")
    first = cases.metric(gold, pred, [], "first", [])
    assert (first.score, first.feedback, first.objective_scores) == (
        0.0,
        "First: name the country.",
        {"exact": 0.0},
    )
    second = cases.metric(gold, pred, trace=[], pred_name="second.predict", pred_trace=[])
    assert second.feedback == "Second."
    assert cases.metric(gold, pred, [], "third", []).feedback == "General: the city only."


def test_what_the_run_keeps_of_a_case_is_its_verdict_not_its_prediction_or_trace():
    """dspy holds a batch's predictions, and the program traces replayed from them, while
    it needs them; the verdicts kept for its metric calls keep neither alive after."""
    import gc
    import weakref

    import dspy

    from engines.adapter import CaseTrace
    from engines.dspy_engine import DspyCases

    class Part(dict):  # a program's part a weak reference can follow
        pass

    cases = DspyCases(adapter=None, spec=None, items=[], lanes=None)
    step = {"predictor": "self", "inputs": {"country": "Peru"}, "outputs": {"capital": "Lima"}}
    part = Part(fields={"capital": "Lima"}, trace=[step])
    prediction = dspy.Prediction(capital="Lima")
    cases.remember(
        prediction, CaseTrace({"country": "Peru"}, "Lima", "Right.", 1.0, "valid", dspy=part)
    )
    gold = dspy.Example(country="Peru").with_inputs("country")
    assert cases.metric(gold, prediction).score == 1.0
    gone = [weakref.ref(prediction), weakref.ref(part)]
    del prediction, part
    gc.collect()
    assert [ref() for ref in gone] == [None, None]


# Two predictors, told apart by their instructions and their fields: DSPy GEPA builds a
# predictor's reflective examples from the trace steps whose signature equals its own.
TWO_STEPS = """
import dspy

class Capital(dspy.Module):
    def __init__(self):
        super().__init__()
        self.first = dspy.Predict(
            dspy.Signature("country -> region", "FIRST-STEP: name the region of the country.")
        )
        self.second = dspy.Predict(
            dspy.Signature("country, region -> capital", "SECOND-STEP: name the capital.")
        )

    def forward(self, country):
        region = self.first(country=country).region
        return self.second(country=country, region=region)

program = Capital()
"""

PER_PREDICTOR = """
def score(input, output, expected):
    right = str(output).strip() == expected["capital"]
    return (1.0 if right else 0.0), {
        "feedback": "GENERAL-TEXT: the whole program's answer.",
        "predictor_feedback": {
            "first": "A-TEXT: the region step is fine as it is.",
            "second": "B-TEXT: the output must be the city name only, with no other words.",
        },
    }
"""


def test_a_real_dspy_gepa_run_gives_each_predictors_reflection_its_own_feedback(
    tmp_path, dspy_config, models, provider
):
    """The program's predictor names are dspy's own (named_predictors()); the reflection
    request that improves each one holds its own text of "predictor_feedback", not the
    other predictor's nor the general feedback."""
    reflections: list[str] = []

    def respond(request):
        text = request.user
        if quiz.DSPY_REFLECTION_MARK in text:
            reflections.append(text)
            return quiz.dspy_reflection_answer(text)
        if "starting with the field `[[ ## region ## ]]`" in text:
            return f"[[ ## region ## ]]\nSomewhere\n\n{quiz.DSPY_MARK}"
        return quiz.respond_any(request)

    provider.respond = respond
    outcome, sink = run(tmp_path, dspy_config, models(), PER_PREDICTOR, program=TWO_STEPS)
    # Only the second step's own text names the fix, and only its reflection read it.
    assert (outcome.ended, outcome.reason) == ("finished", "perfect_score")
    assert sink.snapshots[-1]["best"]["score"] == 1.0

    def current(text: str) -> str:
        mark = "[[ ## current_instruction ## ]]"
        start = text.rindex(mark) + len(mark)
        return text[start : text.index("[[ ## examples_with_feedback ## ]]", start)]

    first = [text for text in reflections if "FIRST-STEP" in current(text)]
    second = [text for text in reflections if "SECOND-STEP" in current(text)]
    assert first and second and len(first) + len(second) == len(reflections)
    for text in first:
        assert "A-TEXT" in text and "B-TEXT" not in text and "GENERAL-TEXT" not in text
    for text in second:
        assert "B-TEXT" in text and "A-TEXT" not in text and "GENERAL-TEXT" not in text
    best = sink.candidate_rows[sink.snapshots[-1]["best"]["idx"]]
    assert quiz.INSTRUCTION in best["text"] and "[second]" in best["text"]
