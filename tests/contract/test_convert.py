"""The metric converter (contract.convert): DSPy GEPA and gepa metrics rewritten into the
contract, one rule at a time, on source snippets; then the converted code run in plain
Python against the original, called with the real dspy and gepa objects."""

from __future__ import annotations

import ast
import inspect
import textwrap

import pytest
from gepa.adapters.default_adapter import default_adapter

from contract.convert import NOTE_CODES, Conversion, ConvertError, convert, recognise
from contract.convert.notes import COMMENTS


def converted(source: str) -> Conversion:
    return convert(textwrap.dedent(source).lstrip("\n"))


def codes(conversion: Conversion) -> list[str]:
    return [note.code for note in conversion.notes]


def line_of(conversion: Conversion, text: str) -> int:
    """The 1-based line of the converted source that holds `text`."""
    lines = conversion.source.splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


def body(conversion: Conversion) -> str:
    """The converted source without the explanatory comment on the example's binding."""
    return "\n".join(
        line
        for line in conversion.source.splitlines()
        if not line.strip().startswith(("# DSPy's gold example", "# gepa's data"))
    )


AIME = """
import dspy


def metric_with_feedback(example, prediction, trace=None, pred_name=None, pred_trace=None):
    \"\"\"AIME: the answer is an integer.\"\"\"
    correct_answer = int(example['answer'])
    try:
        llm_answer = int(prediction.answer)
    except ValueError:
        feedback_text = f"The answer must be an integer; you said '{prediction.answer}'."
        if example.get('solution'):
            feedback_text += f" The solution:\\n{example.solution}"
        return dspy.Prediction(score=0, feedback=feedback_text)

    score = int(correct_answer == llm_answer)  # 1 or 0
    if trace is not None:
        return score >= 1
    return dspy.Prediction(
        score=score,
        feedback=f"The correct answer is '{correct_answer}'.",
    )
"""

AIME_CONVERTED = """
def score(input, output, expected=None):
    \"\"\"AIME: the answer is an integer.\"\"\"
    # DSPy's gold example held the case's input columns and its expected values.
    example = {**input, **(expected or {})}
    # A DSPy prediction's empty field was ""; the workbench gives None.
    output = "" if output is None else output
    correct_answer = int(example['answer'])
    try:
        llm_answer = int(output)
    except ValueError:
        feedback_text = f"The answer must be an integer; you said '{output}'."
        if example.get('solution'):
            feedback_text += f" The solution:\\n{example['solution']}"
        return 0, {"feedback": feedback_text}

    score = int(correct_answer == llm_answer)  # 1 or 0
    return score, {
        "feedback": f"The correct answer is '{correct_answer}'.",
    }
"""

CONTAINS_ANSWER = """
from gepa.adapters.default_adapter.default_adapter import EvaluationResult


class ContainsAnswerEvaluator:
    def __init__(self, failure_score: float = 0.0):
        self.failure_score = failure_score

    def __call__(self, data, response: str) -> EvaluationResult:
        is_correct = data["answer"] in response
        score = 1.0 if is_correct else self.failure_score
        if is_correct:
            feedback = f"Correct: the response includes '{data['answer']}'."
        else:
            feedback = f"Incorrect: the correct answer is '{data['answer']}'."
        return EvaluationResult(score=score, feedback=feedback, objective_scores=None)
"""


# Recognising the metric


def test_it_recognises_a_dspy_gepa_feedback_metric():
    found = recognise(textwrap.dedent(AIME))
    assert found is not None
    assert (found.framework, found.kind, found.name) == ("dspy", "function", "metric_with_feedback")
    assert (found.example, found.prediction) == ("example", "prediction")
    assert found.dropped == ("trace", "pred_name", "pred_trace")


@pytest.mark.parametrize(
    "signature",
    [
        "(gold, pred, trace=None)",
        "(example, pred)",
        "(example, pred, trace=None, pred_name=None, pred_trace=None, program_trace=None)",
        "(gold, pred, trace, pred_name, pred_trace)",
    ],
)
def test_it_recognises_the_dspy_signatures(signature):
    found = recognise(f"def my_metric{signature}:\n    return 1.0\n")
    assert found is not None and found.framework == "dspy" and found.name == "my_metric"


def test_it_recognises_a_gepa_evaluator_function_and_class():
    function = recognise("def evaluate(data, response):\n    return 1.0\n")
    assert function is not None and (function.framework, function.kind) == ("gepa", "function")
    cls = recognise(textwrap.dedent(CONTAINS_ANSWER))
    assert cls is not None
    assert (cls.framework, cls.kind, cls.name) == ("gepa", "class", "ContainsAnswerEvaluator")
    assert (cls.example, cls.prediction) == ("data", "response")


def test_it_recognises_nothing_in_a_module_without_a_metric_or_already_in_the_contract():
    assert recognise("def helper(text):\n    return text.strip()\n") is None
    assert recognise("def score(input, output, expected=None):\n    return 1.0, {}\n") is None


def test_a_score_with_a_framework_signature_is_the_one_converted():
    conversion = converted(
        """
        def metric(example, pred):
            return 0.0

        def score(example, pred, trace=None):
            return float(example.answer == pred.answer), {"feedback": "compared"}
        """
    )
    assert "def metric(example, pred):" in conversion.source
    assert "def score(input, output, expected=None):" in conversion.source
    assert conversion.notes == []


def test_it_ignores_a_protocol_that_only_describes_an_evaluator():
    source = """
    from typing import Protocol


    class Evaluator(Protocol):
        def __call__(self, data, response): ...


    def evaluate(data, response):
        return 1.0
    """
    found = recognise(textwrap.dedent(source))
    assert found is not None and found.name == "evaluate"


# The signature and the example


def test_it_converts_the_aime_tutorial_metric_keeping_comments_and_layout():
    conversion = converted(AIME)
    assert conversion.source == AIME_CONVERTED.lstrip("\n")
    assert (conversion.framework, conversion.changed, conversion.notes) == ("dspy", True, [])


def test_the_example_binding_comes_after_the_docstring():
    conversion = converted(AIME)
    tree = ast.parse(conversion.source)
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef) and ast.get_docstring(function)
    assert ast.unparse(function.body[1]) == "example = {**input, **(expected or {})}"


def test_example_fields_become_keys_and_dict_reads_stay():
    conversion = converted(
        """
        def metric(example, pred):
            a = example.answer
            b = example["question"]
            c = example.get("context", "")
            d = list(example.keys())
            e = getattr(example, "hint", None)
            f = hasattr(example, "hint")
            g = example.toDict()
            return 1.0, {"feedback": f"{a}{b}{c}{d}{e}{f}{g}{pred}"}
        """
    )
    source = conversion.source
    assert 'a = example["answer"]' in source
    assert 'b = example["question"]' in source
    assert 'c = example.get("context", "")' in source
    assert "d = list(example.keys())" in source
    assert 'e = example.get("hint", None)' in source
    assert 'f = "hint" in example' in source
    assert "g = dict(example)" in source


def test_an_example_method_without_a_dict_equivalent_is_noted():
    conversion = converted(
        """
        def metric(example, pred):
            question = example.inputs().question
            return float(pred.answer == example.answer), {"feedback": question}
        """
    )
    assert codes(conversion) == ["example_method_used"]
    note = conversion.notes[0]
    assert note.params == {"name": "example", "method": "inputs"}
    assert note.line == line_of(conversion, "question = example.inputs()")
    comment = conversion.source.splitlines()[note.line - 2].strip()
    assert comment == (
        "# convert: example is now a dict of the case's columns, which has no .inputs(); "
        "rewrite this"
    )


def test_an_example_handed_to_a_helper_is_noted_but_unpacking_it_is_not():
    conversion = converted(
        """
        from helpers import Sample, judge

        def metric(example, pred):
            sample = Sample(**example)
            verdict = judge(example, pred.answer)
            return verdict, {"feedback": str(sample)}
        """
    )
    assert codes(conversion) == ["example_passed_on"]
    assert conversion.notes[0].line == line_of(conversion, "verdict = judge(example, output)")


def test_an_f_string_key_takes_the_other_quote():
    conversion = converted(
        """
        def metric(example, pred):
            return 0.0, {"feedback": f"Expected {example.answer}, got {pred.answer}."}
        """
    )
    assert "f\"Expected {example['answer']}, got {output}.\"" in conversion.source


def test_options_with_defaults_are_kept_after_expected():
    conversion = converted(
        """
        def answer_match(example, pred, trace=None, frac=1.0):
            return float(pred.answer == example.answer) >= frac, {"feedback": "compared"}
        """
    )
    assert conversion.source.startswith("def score(input, output, expected=None, frac=1.0):\n")


def test_a_signature_on_several_lines_becomes_one_line():
    conversion = converted(
        """
        def metric(
            gold: dspy.Example,
            pred: dspy.Prediction,
            trace=None,
        ) -> float:
            return float(gold.answer == pred.answer), {"feedback": "compared"}
        """
    )
    assert conversion.source.splitlines()[0] == "def score(input, output, expected=None):"


# The prediction


def test_one_prediction_field_read_becomes_output():
    conversion = converted(
        """
        def metric(example, pred, trace=None):
            guess = pred.answer.strip().lower()
            if pred["answer"] == example.answer:
                return 1.0, {"feedback": "Correct."}
            return 0.0, {"feedback": f"Expected {example.answer}, got {guess}."}
        """
    )
    assert "guess = output.strip().lower()" in conversion.source
    assert 'if output == example["answer"]:' in conversion.source
    assert conversion.notes == []


def test_several_prediction_fields_read_a_dict_and_say_so_when_the_example_lacks_them():
    conversion = converted(
        """
        def metric(example, pred, trace=None):
            why = pred.reasoning
            ok = pred.answer == example.answer
            return float(ok), {"feedback": why}
        """
    )
    assert 'why = output["reasoning"]' in conversion.source
    assert 'ok = output["answer"] == example["answer"]' in conversion.source
    assert codes(conversion) == ["prediction_fields"]
    assert conversion.notes[0].params == {"fields": ["reasoning", "answer"]}
    assert conversion.notes[0].line == line_of(conversion, "why = ")


def test_several_prediction_fields_the_example_also_has_need_no_note():
    conversion = converted(
        """
        def metric(example, pred):
            right = pred.urgency == example.urgency and pred.sentiment == example.sentiment
            return float(right), {"feedback": "compared urgency and sentiment"}
        """
    )
    assert 'output["urgency"] == example["urgency"]' in conversion.source
    assert conversion.notes == []


def test_the_whole_prediction_used_is_noted():
    conversion = converted(
        """
        from helpers import judge

        def metric(example, pred):
            return judge(pred), {"feedback": "judged"}
        """
    )
    assert codes(conversion) == ["prediction_used"]
    assert "return judge(output), " in conversion.source


def test_a_function_with_its_own_output_keeps_the_prediction_under_its_name():
    conversion = converted(
        """
        def metric(example, pred):
            output = pred.answer.strip()
            if output == example.answer:
                return 1.0, "Correct."
            return 0.0, f"Expected {example.answer}, got {pred.answer}."
        """
    )
    source = body(conversion)
    assert '    pred = "" if output is None else output\n    output = pred.strip()' in source
    assert "got {pred}." in source
    namespace: dict = {}
    exec(conversion.source, namespace)
    assert namespace["score"]({}, " no ", {"answer": "yes"}) == (
        0.0,
        {"feedback": "Expected yes, got  no ."},
    )


def test_an_empty_output_reads_as_the_empty_field_it_was():
    """int(pred.answer) under `except ValueError` met "" for an empty field; converted,
    an empty cell (None) must reach int() as "" too, or it raises TypeError instead."""
    conversion = converted(
        """
        def metric(example, pred, trace=None):
            try:
                value = int(pred.answer)
            except ValueError:
                return 0.0, "Not a number."
            return float(value == int(example.answer)), "Compared."
        """
    )
    namespace: dict = {}
    exec(conversion.source, namespace)
    assert namespace["score"]({}, None, {"answer": "3"}) == (0.0, {"feedback": "Not a number."})
    assert namespace["score"]({}, "3", {"answer": "3"}) == (1.0, {"feedback": "Compared."})
    gepa = converted(
        """
        def evaluate(data, response):
            return float(data["answer"] in response), "Looked for the answer."
        """
    )
    namespace = {}
    exec(gepa.source, namespace)
    assert namespace["score"]({}, None, {"answer": "x"})[0] == 0.0


def test_a_gepa_response_is_a_string_renamed_to_output():
    conversion = converted(
        """
        def evaluate(data, response):
            if data["answer"].lower() in response.lower():
                return 1.0, "Correct."
            return 0.0, f"The answer is {data['answer']}."
        """
    )
    assert 'if data["answer"].lower() in output.lower():' in conversion.source
    assert conversion.framework == "gepa"


# trace, pred_name, pred_trace, program_trace


def test_branches_on_the_trace_are_decided_with_the_trace_none():
    conversion = converted(
        """
        def metric(gold, pred, trace=None):
            score = float(gold.answer == pred.answer)
            if trace is None:  # evaluation
                feedback = "Compared the answers."
            else:
                return score >= 1.0
            if trace is not None:
                print("bootstrapping")
            label = "eval" if trace is None else "train"
            return score, f"{feedback} ({label})"
        """
    )
    assert body(conversion) == textwrap.dedent(
        """\
        def score(input, output, expected=None):
            gold = {**input, **(expected or {})}
            # A DSPy prediction's empty field was ""; the workbench gives None.
            output = "" if output is None else output
            score = float(gold["answer"] == output)
            # evaluation
            feedback = "Compared the answers."
            label = "eval"
            return score, {"feedback": f"{feedback} ({label})"}"""
    )
    assert conversion.notes == []


def test_pred_name_branches_are_decided_and_the_per_predictor_code_after_them_goes():
    conversion = converted(
        """
        import dspy

        def metric(example, pred, trace=None, pred_name=None, pred_trace=None):
            total = float(example.answer == pred.answer)
            if pred_name is None and pred_trace is None:
                return dspy.Prediction(score=total, feedback="Program-level feedback.")
            elif pred_name == "generate":
                feedback = "About generate."
            return dspy.Prediction(score=total, feedback=feedback)
        """
    )
    assert body(conversion) == textwrap.dedent(
        """\
        def score(input, output, expected=None):
            example = {**input, **(expected or {})}
            # A DSPy prediction's empty field was ""; the workbench gives None.
            output = "" if output is None else output
            total = float(example["answer"] == output)
            return total, {"feedback": "Program-level feedback."}"""
    )


def test_a_literal_comparison_and_a_partly_known_test_are_decided():
    conversion = converted(
        """
        def metric(example, pred, trace=None, pred_name=None):
            ok = example.answer == pred.answer
            if pred_name == "judge" or trace:
                return 0.0, "predictor"
            if ok and pred_name is None:
                return 1.0, "Correct."
            return 0.0, "Wrong."
        """
    )
    source = conversion.source
    assert "predictor" not in source
    assert "    if ok:\n        return 1.0" in source
    assert conversion.notes == []


def test_any_other_use_of_a_trace_binds_it_to_none_with_a_note():
    conversion = converted(
        """
        from helpers import report

        def metric(example, pred, trace=None, pred_name=None, pred_trace=None):
            steps = len(trace or [])
            report(pred_trace)
            return 1.0 / (1 + steps), {"feedback": f"{steps} steps"}
        """
    )
    assert codes(conversion) == ["trace_used", "pred_trace_used"]
    assert [note.line for note in conversion.notes] == [
        line_of(conversion, "trace = None"),
        line_of(conversion, "pred_trace = None"),
    ]
    assert "pred_name = None" not in conversion.source  # never read: never bound
    comment = conversion.source.splitlines()[conversion.notes[0].line - 2].strip()
    assert comment.startswith("# convert: trace is always None in the workbench")


# Returns


@pytest.mark.parametrize(
    ("imports", "made"),
    [
        ("import dspy", "dspy.Prediction(score=s, feedback=f)"),
        ("from dspy import Prediction", "Prediction(score=s, feedback=f)"),
        ("from dspy import Prediction as P", "P(score=s, feedback=f)"),
        (
            "from dspy.teleprompt.gepa.gepa_utils import ScoreWithFeedback",
            "ScoreWithFeedback(score=s, feedback=f)",
        ),
        ("import dspy", "dspy.teleprompt.gepa.gepa_utils.ScoreWithFeedback(score=s, feedback=f)"),
    ],
)
def test_dspy_predictions_become_the_pair_and_their_import_goes(imports, made):
    conversion = converted(
        f"""
        {imports}


        def metric(example, pred, trace=None):
            s = float(example.answer == pred.answer)
            f = "compared"
            return {made}
        """
    )
    assert conversion.source.endswith('    return s, {"feedback": f}\n')
    assert conversion.source.startswith("def score(")  # the import went, and its blank lines
    assert conversion.notes == []


def test_objective_scores_become_named_scores():
    conversion = converted(
        """
        import dspy

        def metric(example, pred):
            return dspy.Prediction(score=1.0, feedback="ok", objective_scores={"format": 1.0})
        """
    )
    assert 'return 1.0, {"feedback": "ok", "scores": {"format": 1.0}}' in conversion.source


@pytest.mark.parametrize(
    ("made", "pair"),
    [
        ("EvaluationResult(score=s, feedback=f)", 's, {"feedback": f}'),
        ("EvaluationResult(score=s, feedback=f, objective_scores=None)", 's, {"feedback": f}'),
        ("EvaluationResult(s, f)", 's, {"feedback": f}'),
        ("EvaluationResult(s, f, {'exact': s})", 's, {"feedback": f, "scores": {\'exact\': s}}'),
        (
            "EvaluationResult(s, feedback=f, objective_scores=named)",
            's, {"feedback": f, "scores": named}',
        ),
    ],
)
def test_gepa_evaluation_results_become_the_pair(made, pair):
    conversion = converted(
        f"""
        from gepa.adapters.default_adapter.default_adapter import EvaluationResult

        def evaluate(data, response):
            s = float(data["answer"] in response)
            f = "looked for the answer"
            named = {{"exact": s}}
            return {made}
        """
    )
    assert f"    return {pair}\n" in conversion.source
    assert "EvaluationResult" not in conversion.source


def test_a_dict_return_becomes_the_pair_keeping_its_other_keys():
    conversion = converted(
        """
        def metric(example, pred):
            return {"score": 0.5, "feedback": "Half right.", "scores": {"a": 1.0}}
        """
    )
    assert 'return 0.5, {"feedback": "Half right.", "scores": {"a": 1.0}}' in conversion.source


def test_a_score_and_string_tuple_becomes_the_pair():
    conversion = converted(
        """
        def evaluate(data, response):
            feedback = "Checked " + data["answer"]
            if response:
                return 1.0, feedback
            return (0.0, f"Empty; expected {data['answer']}.")
        """
    )
    assert 'return 1.0, {"feedback": feedback}' in conversion.source
    assert 'return (0.0, {"feedback": f"Empty; expected {data[\'answer\']}."})' in (
        conversion.source
    )


@pytest.mark.parametrize(
    ("returned", "pair"),
    [
        ("total", 'total, {"feedback": ""}'),
        ("float(ok)", 'float(ok), {"feedback": ""}'),
        ("pred.answer == example.answer", 'float(output == example["answer"]), {"feedback": ""}'),
        ("not ok", 'float(not ok), {"feedback": ""}'),
        ("True", '1.0, {"feedback": ""}'),
        ("int(ok)", 'int(ok), {"feedback": ""}'),
        ("0", '0, {"feedback": ""}'),
        ("1.0 if ok else 0.0", '(1.0 if ok else 0.0), {"feedback": ""}'),
    ],
)
def test_a_bare_score_gets_empty_feedback_and_a_note_asking_for_some(returned, pair):
    conversion = converted(
        f"""
        def metric(example, pred):
            ok = pred.answer == example.answer
            total = float(ok)
            return {returned}
        """
    )
    assert f"    return {pair}\n" in conversion.source
    assert codes(conversion) == ["feedback_needed"]
    note = conversion.notes[0]
    assert note.line == line_of(conversion, "    return ")
    assert conversion.source.splitlines()[note.line - 2].strip() == (
        "# convert: this returns only a score: write feedback that says what is wrong and "
        "what a correct output looks like"
    )


def test_a_name_bound_to_a_prediction_holds_the_pair_instead():
    conversion = converted(
        """
        import dspy

        def metric(example, pred):
            if pred.answer == example.answer:
                result = dspy.Prediction(score=1.0, feedback="Correct.")
            else:
                result = dspy.Prediction(score=0.0, feedback="Wrong.")
            return result
        """
    )
    assert 'result = 1.0, {"feedback": "Correct."}' in conversion.source
    assert 'result = 0.0, {"feedback": "Wrong."}' in conversion.source
    assert "    return result\n" in conversion.source
    assert conversion.notes == []


def test_a_helper_that_builds_the_feedback_is_followed():
    conversion = converted(
        """
        from dspy.teleprompt.gepa.gepa_utils import ScoreWithFeedback


        def feedback_for(expected, got) -> ScoreWithFeedback:
            if expected == got:
                return ScoreWithFeedback(score=1.0, feedback="Correct.")
            return ScoreWithFeedback(score=0.0, feedback=f"Expected {expected}.")


        def metric(example, pred, trace=None, pred_name=None, pred_trace=None):
            return feedback_for(example.answer, pred.answer)
        """
    )
    source = conversion.source
    assert "def feedback_for(expected, got):\n" in source
    assert 'return 1.0, {"feedback": "Correct."}' in source
    assert 'return feedback_for(example["answer"], output)' in source
    assert "ScoreWithFeedback" not in source
    assert conversion.notes == []


def test_a_return_it_cannot_understand_is_left_with_a_note():
    conversion = converted(
        """
        from helpers import compute

        def metric(example, pred):
            return compute(example.answer, pred.answer)
        """
    )
    assert codes(conversion) == ["return_not_understood"]
    assert '    return compute(example["answer"], output)\n' in conversion.source
    comment = conversion.source.splitlines()[conversion.notes[0].line - 2].strip()
    assert comment.startswith("# convert: this return was left as it was")


def test_a_return_already_a_pair_is_left_alone_and_nested_returns_too():
    conversion = converted(
        """
        def metric(example, pred):
            def clean(text):
                return text.strip()
            return 1.0, {"feedback": clean(pred.answer)}
        """
    )
    assert "        return text.strip()\n" in conversion.source
    assert conversion.notes == []


# Imports


def test_dspy_still_used_keeps_its_import_with_a_note_where_it_is_used():
    conversion = converted(
        """
        import dspy

        judge = dspy.Predict("question, answer -> verdict: bool")


        def metric(example, pred, trace=None):
            verdict = judge(question=example.question, answer=pred.answer).verdict
            return dspy.Prediction(score=float(verdict), feedback="Judged.")
        """
    )
    source = conversion.source
    assert source.startswith("import dspy\n")
    assert codes(conversion) == ["dspy_still_used"]
    assert conversion.notes[0].line == line_of(conversion, "judge = dspy.Predict")
    assert 'return float(verdict), {"feedback": "Judged."}' in source


def test_only_the_unused_names_of_an_import_go():
    conversion = converted(
        """
        import os, dspy
        from dspy import Example, Prediction


        def metric(example, pred):
            return Prediction(score=1.0, feedback=os.sep + str(Example))
        """
    )
    assert conversion.source.startswith("import os\nfrom dspy import Example\n")
    assert codes(conversion) == ["dspy_still_used"]


def test_imports_of_other_packages_stay_even_unused():
    conversion = converted(
        """
        import json
        import dspy


        def metric(example, pred):
            return dspy.Prediction(score=1.0, feedback="ok")
        """
    )
    assert conversion.source.startswith("import json\n\n\ndef score(")


# Where it cannot decide, and the module as a whole


def test_a_module_without_a_metric_is_left_as_it_is():
    source = "def helper(text):\n    return text.strip()\n"
    conversion = convert(source)
    assert (conversion.source, conversion.framework, conversion.changed) == (source, None, False)
    assert [(n.code, n.line) for n in conversion.notes] == [("no_metric_function", 0)]


def test_a_metric_already_in_the_contract_is_left_as_it_is():
    source = 'def score(input, output, expected=None):\n    return 1.0, {"feedback": "ok"}\n'
    conversion = convert(source)
    assert (conversion.source, conversion.changed, conversion.notes) == (source, False, [])


def test_several_candidates_with_nothing_to_choose_between_them_are_left_alone():
    source = "def m1(example, pred):\n    return 1.0\n\n\ndef m2(example, pred):\n    return 0.0\n"
    conversion = convert(source)
    assert conversion.source == source and not conversion.changed
    assert conversion.notes[0].code == "several_metric_functions"
    assert conversion.notes[0].params == {"names": ["m1", "m2"]}


def test_the_feedback_metric_is_chosen_over_a_plain_one_and_the_other_is_noted():
    conversion = converted(
        """
        import dspy

        def metric(example, pred, trace=None):
            return float(example.answer == pred.answer)

        def metric_with_feedback(example, pred, trace=None, pred_name=None, pred_trace=None):
            return dspy.Prediction(score=metric(example, pred), feedback="fb")
        """
    )
    assert "def score(input, output, expected=None):" in conversion.source
    assert "def metric(example, pred, trace=None):" in conversion.source
    # metric() still takes a dspy.Example and a prediction: they are rebuilt as those.
    assert codes(conversion) == ["other_metric_functions"]
    assert conversion.notes[0].params == {"name": "metric", "chosen": "metric_with_feedback"}
    assert "    example = dspy.Example({**input, **(expected or {})})\n" in conversion.source
    assert (
        "    pred = dspy.Prediction(**output) if isinstance(output, dict) "
        "else dspy.Prediction(answer=output)\n"
    ) in conversion.source
    score = _run(conversion.source)
    assert score({"q": "x"}, "4", {"answer": "4"}) == (1.0, {"feedback": "fb"})
    assert score({"q": "x"}, "5", {"answer": "4"}) == (0.0, {"feedback": "fb"})


def test_the_metric_handed_to_the_optimizer_is_the_one_chosen():
    conversion = converted(
        """
        def first(example, pred):
            return 1.0

        def second(example, pred):
            return 0.0

        optimizer = GEPA(metric=second)
        """
    )
    assert "def first(example, pred):" in conversion.source
    assert "def score(input, output, expected=None):" in conversion.source
    # `second` is still handed over by its old name, which an alias keeps working.
    assert "second = score\n" in conversion.source


def test_a_module_with_another_score_is_not_converted():
    source = "from mylib import score\n\n\ndef metric(example, pred):\n    return 1.0\n"
    conversion = convert(source)
    assert conversion.source == source
    assert [(n.code, n.line) for n in conversion.notes] == [("score_name_taken", 1)]


def test_the_old_name_keeps_working_and_calls_with_the_old_arguments_are_noted():
    conversion = converted(
        """
        def my_metric(example, pred):
            return float(example.answer == pred.answer), {"feedback": "compared"}

        metrics = {"exact": my_metric}
        print(my_metric(None, None))
        """
    )
    assert "\n\n\n# The metric's old name, which this module still uses.\nmy_metric = score\n" in (
        conversion.source
    )
    assert codes(conversion) == ["old_name_called"]
    assert conversion.notes[0].line == line_of(conversion, "print(my_metric(")


def test_a_gepa_evaluator_class_is_kept_and_a_module_level_score_calls_an_instance():
    conversion = converted(CONTAINS_ANSWER)
    source = conversion.source
    assert "from gepa" not in source
    assert "    def __call__(self, input, output, expected=None):\n" in source
    # gepa's data as its default adapter reads a dataset, built by a helper before the class.
    assert "        data = _gepa_data(input, expected)\n" in source
    assert source.index("def _gepa_data(input, expected):") < source.index("class ContainsAnswer")
    assert '        return score, {"feedback": feedback}\n' in source
    assert source.endswith(
        "_evaluator = ContainsAnswerEvaluator()\n\n\n"
        "def score(input, output, expected=None):\n"
        "    return _evaluator(input, output, expected)\n"
    )
    assert conversion.notes == []


def test_an_existing_evaluator_instance_is_used_and_one_needing_arguments_is_noted():
    uses_instance = converted(
        """
        class Judge:
            def __init__(self, threshold):
                self.threshold = threshold

            def __call__(self, data, response):
                return float(len(response) > self.threshold), "length"

        judge = Judge(threshold=3)
        """
    )
    assert uses_instance.source.endswith("    return judge(input, output, expected)\n")
    assert "_evaluator" not in uses_instance.source
    needs_arguments = converted(
        """
        class Judge:
            def __init__(self, threshold):
                self.threshold = threshold

            def __call__(self, data, response):
                return float(len(response) > self.threshold), "length"
        """
    )
    assert codes(needs_arguments) == ["evaluator_needs_arguments"]
    assert needs_arguments.notes[0].line == line_of(needs_arguments, "_evaluator = Judge()")


def test_comments_and_formatting_elsewhere_are_kept_byte_for_byte():
    head = textwrap.dedent(
        """\
        # A metric from our notebook.
        import re  # for the numbers

        NUMBER   = re.compile( r"-?\\d+" )   # odd spacing, kept


        def helper(text):
            # the last number in the text
            found = NUMBER.findall(text)
            return found[-1] if found else None
        """
    )
    metric = textwrap.dedent(
        """

        def metric(example, pred):
            # compare the last numbers
            return float(helper(pred.answer) == example.answer)  # exact
        """
    )
    conversion = convert(head + metric)
    assert conversion.source.startswith(head)
    assert "    # compare the last numbers\n" in conversion.source
    assert conversion.source.rstrip().endswith('{"feedback": ""}  # exact')


def test_windows_line_endings_are_kept():
    source = "import dspy\r\n\r\ndef metric(example, pred):\r\n    return dspy.Prediction(score=1.0, feedback='ok')\r\n"
    conversion = convert(source)
    assert (
        conversion.source
        == "def score(input, output, expected=None):\r\n    return 1.0, {\"feedback\": 'ok'}\r\n"
    )


# Idempotence


@pytest.mark.parametrize(
    "source",
    [
        AIME,
        CONTAINS_ANSWER,
        "def metric(example, pred, trace=None):\n    return len(trace or []), 'x'\n",
        "import dspy\n\n\ndef metric(example, pred):\n    return dspy.Prediction(**pred)\n",
        "def m1(example, pred):\n    return 1.0\n\n\ndef m2(example, pred):\n    return 0.0\n",
        "def helper(x):\n    return x\n",
    ],
)
def test_converting_twice_changes_nothing_the_second_time(source):
    once = convert(textwrap.dedent(source))
    twice = convert(once.source)
    assert twice.source == once.source
    assert twice.changed is False


def test_the_second_pass_points_at_the_comments_the_first_one_left():
    once = converted(
        """
        def metric(example, pred, trace=None):
            return len(trace or [])
        """
    )
    twice = convert(once.source)
    assert [(n.code, n.line) for n in twice.notes] == [
        ("convert_comment", note.line) for note in once.notes
    ]
    assert twice.notes[0].params["text"].startswith("trace is always None")


# Errors and the notes themselves


def test_a_syntax_error_raises_a_convert_error_with_python_s_line():
    with pytest.raises(ConvertError) as raised:
        convert("import dspy\n\ndef metric(example, pred:\n    return 1\n")
    assert raised.value.code == "syntax_error"
    assert raised.value.line == 3
    assert raised.value.params["reason"] == "syntax"
    assert raised.value.params["line"] == 3


def test_a_null_byte_raises_a_convert_error_naming_its_place():
    with pytest.raises(ConvertError) as raised:
        convert("x = 1\ny = 2\x00\n")
    assert (raised.value.code, raised.value.line) == ("syntax_error", 2)
    assert raised.value.params == {"reason": "null_bytes", "line": 2, "column": 6}


def test_every_code_that_leaves_a_comment_is_a_known_code():
    assert set(COMMENTS) <= set(NOTE_CODES)
    assert len(NOTE_CODES) == len(set(NOTE_CODES))


def test_every_converted_source_is_valid_python():
    for source in (AIME, CONTAINS_ANSWER):
        ast.parse(convert(textwrap.dedent(source)).source)


# The converted code scores as the original did


@pytest.fixture(scope="module")
def dspy():
    return pytest.importorskip("dspy")


def run(source: str, name: str, *args):
    namespace: dict = {}
    exec(compile(textwrap.dedent(source).lstrip("\n"), "metric.py", "exec"), namespace)
    return namespace[name](*args)


def as_pair(result) -> tuple:
    """What the original returned, as the pair the contract expects of the conversion."""
    import dspy  # imported by the tests that need it: it takes a second or two

    if isinstance(result, dspy.Prediction):
        scores = result.get("objective_scores")
        side = {"feedback": result.feedback, **({"scores": scores} if scores else {})}
        return result.score, side
    if isinstance(result, default_adapter.EvaluationResult):
        side = {"feedback": result.feedback}
        return result.score, side | (
            {"scores": result.objective_scores} if result.objective_scores else {}
        )
    if isinstance(result, tuple):
        return result[0], {"feedback": result[1]}
    return result, {"feedback": ""}


FEEDBACK_METRIC = """
import dspy
from dspy import Prediction


def metric(gold, pred, trace=None, pred_name=None, pred_trace=None):
    expected = gold.answer.strip().lower()
    got = pred.answer.strip().lower()
    if trace is not None:
        return got == expected
    if got == expected:
        return Prediction(score=1.0, feedback=f"Correct: {gold.answer}.")
    close = expected in got
    score = 0.5 if close else 0.0
    fb = f"Expected {gold.answer!r} for {gold.question!r}, got {pred.answer!r}."
    if pred_name is None:
        return dspy.Prediction(score=score, feedback=fb, objective_scores={"close": float(close)})
    return dspy.Prediction(score=score, feedback="per predictor")
"""

SEVERAL_FIELDS = """
import dspy


def metric(example, pred, trace=None):
    right = pred.label == example.label
    sure = pred.confidence >= 0.5
    feedback = "Right label." if right else f"The label is {example.label}, not {pred.label}."
    return dspy.Prediction(score=(1.0 if right else 0.0) * (1.0 if sure else 0.5), feedback=feedback)
"""

BARE_SCORE = """
def validate_answer(example, pred, trace=None):
    return example.answer.lower() == pred.answer.lower()
"""


@pytest.mark.parametrize(
    ("question", "answer", "output"),
    [
        ("Capital of France?", "Paris", "paris"),
        ("Capital of France?", "Paris", "It is Paris"),
        ("2 + 2?", "4", "five"),
    ],
)
@pytest.mark.parametrize("source", [FEEDBACK_METRIC, BARE_SCORE])
def test_a_converted_dspy_metric_scores_as_the_original(dspy, source, question, answer, output):
    name = "metric" if "def metric" in source else "validate_answer"
    gold = dspy.Example(question=question, answer=answer).with_inputs("question")
    original = as_pair(run(source, name, gold, dspy.Prediction(answer=output)))
    score = run(
        convert(textwrap.dedent(source)).source,
        "score",
        {"question": question},
        output,
        {"answer": answer},
    )
    assert score == original
    assert type(score[0]) in (int, float)


@pytest.mark.parametrize(
    ("label", "confidence", "output_label"),
    [("bug", 0.9, "bug"), ("bug", 0.2, "bug"), ("bug", 0.9, "other")],
)
def test_a_converted_metric_reading_several_fields_scores_as_the_original(
    dspy, label, confidence, output_label
):
    gold = dspy.Example(text="it crashes", label=label).with_inputs("text")
    prediction = dspy.Prediction(label=output_label, confidence=confidence)
    original = as_pair(run(SEVERAL_FIELDS, "metric", gold, prediction))
    conversion = convert(textwrap.dedent(SEVERAL_FIELDS))
    output = {"label": output_label, "confidence": confidence}
    assert (
        run(conversion.source, "score", {"text": "it crashes"}, output, {"label": label})
        == original
    )


@pytest.mark.parametrize(
    ("data", "response"),
    [
        ({"input": "Q", "answer": "42", "additional_context": {}}, "The answer is 42."),
        ({"input": "Q", "answer": "42", "additional_context": {"hint": "six times seven"}}, "41"),
        ({"input": "Q", "answer": "42", "additional_context": {}}, ""),
    ],
)
def test_a_converted_gepa_evaluator_scores_as_the_original(data, response):
    original = as_pair(default_adapter.ContainsAnswerEvaluator()(data, response))
    # The evaluator as gepa ships it, converted.
    source = (
        "from gepa.adapters.default_adapter.default_adapter import EvaluationResult\n\n\n"
        + inspect.getsource(default_adapter.ContainsAnswerEvaluator)
    )
    conversion = convert(source)
    assert conversion.notes == []
    expected = {"answer": data["answer"], "additional_context": data["additional_context"]}
    assert run(conversion.source, "score", {"input": data["input"]}, response, expected) == original


def test_a_converted_gepa_function_with_named_scores_scores_as_the_original():
    source = """
    from gepa.adapters.default_adapter.default_adapter import EvaluationResult

    def evaluate(data, response):
        found = data["answer"] in response
        return EvaluationResult(float(found), "found" if found else "missing", {"found": float(found)})
    """
    data = {"input": "Q", "answer": "x"}
    for response in ("x marks", "nothing"):
        original = as_pair(run(source, "evaluate", data, response))
        converted_pair = run(
            convert(textwrap.dedent(source)).source,
            "score",
            {"input": "Q"},
            response,
            {"answer": "x"},
        )
        assert converted_pair == original


def _run(source: str):
    space: dict = {}
    exec(compile(source, "metric.py", "exec"), space)
    return space["score"]
