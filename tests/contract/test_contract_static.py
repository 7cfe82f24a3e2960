"""contract.static.static_check: editor diagnostics from the AST, executing nothing."""

from __future__ import annotations

import textwrap

from contract.static import static_check


def stages(source):
    result = static_check(textwrap.dedent(source).lstrip("\n"))
    return result, {s.id: s for s in result.stages}


def test_good_metric_passes_static_stages_and_leaves_run_stages_pending():
    result, by_id = stages(
        """
        def score(input, output, expected=None):
            return 1.0, {"feedback": "ok"}
        """
    )
    assert [s.status for s in result.stages] == [
        "passed",
        "passed",
        "skipped",
        "pending",
        "pending",
    ]
    assert by_id["reward_spec"].params == {"reason": "not_defined"}
    assert result.passed is None


def test_nothing_is_executed():
    result, by_id = stages(
        """
        raise SystemExit("this must never run")
        import os; os._exit(1)
        def score(input, output):
            return 1, {"feedback": "x"}
        """
    )
    assert by_id["load"].status == "passed"


def test_syntax_error_with_position_and_parser_message():
    result, by_id = stages("def score(input, output):\n    return (1,\n")
    load = by_id["load"]
    assert (load.status, load.problem) == ("failed", "syntax_error")
    assert load.params["line"] == 2 and load.params["msg"]
    assert result.passed is False and result.failed_stage == "load"
    assert by_id["signature"].status == "skipped"


def test_size_and_encoding_problems():
    assert static_check(b"x" * (256 * 1024 + 1)).stages[0].problem == "file_too_large"
    assert static_check(b"x = '\xff'").stages[0].params == {"byte": 5, "line": 1, "column": 6}


def test_missing_score_function():
    _, by_id = stages("def scorer(input, output): pass\n")
    assert by_id["load"].problem == "no_score_function"


def test_dynamic_definition_is_not_guessed():
    _, by_id = stages("globals()['score'] = lambda i, o: (1, {})\n")
    assert by_id["load"].status == "skipped"
    assert by_id["load"].params == {"reason": "not_static"}


def test_bad_signature_points_at_the_parameter():
    result, by_id = stages(
        """
        def score(input, output, expected, extra, *, flag):
            return 1, {}
        """
    )
    sig = by_id["signature"]
    assert sig.problem == "bad_signature"
    assert [p["params"]["reason"] for p in sig.problems] == [
        "too_many_required",
        "required_keyword_only",
    ]
    assert sig.problems[0]["params"]["names"] == ["extra"]
    assert (sig.problems[0]["params"]["line"], sig.problems[0]["params"]["column"]) == (1, 36)
    assert result.failed_stage == "signature"


def test_decorated_or_assigned_score_is_skipped():
    _, by_id = stages("import functools\n@functools.cache\ndef score(i):\n    pass\n")
    assert by_id["signature"].params == {"reason": "not_static"}
    _, by_id = stages("score = lambda i: i\n")
    assert by_id["signature"].status == "skipped"


def test_last_module_level_definition_wins():
    _, by_id = stages(
        """
        def score(input):
            pass
        if True:
            def score(input, output):
                return 1, {}
        """
    )
    assert by_id["signature"].status == "passed"


def test_reward_spec_literal_problems_carry_their_location():
    result, by_id = stages(
        """
        REWARD_SPEC = {
            "weights": {"accuracy": 1, "speed": -1, "cost": 0},
            "speed": {"reference": 1000},
            "cost": {"reference": 0},
        }
        def score(input, output):
            return 1, {}
        """
    )
    spec = by_id["reward_spec"]
    assert spec.problem == "invalid_reward_spec" and spec.params == {"count": 2}
    located = [(p["code"], p["params"]["line"], p["params"]["column"]) for p in spec.problems]
    assert located == [("weight_negative", 2, 41), ("reference_not_positive", 4, 27)]
    assert result.failed_stage == "reward_spec"


def test_reward_spec_built_from_expressions_is_skipped():
    _, by_id = stages(
        """
        W = 1
        REWARD_SPEC = {"weights": {"accuracy": W}}
        def score(input, output):
            return 1, {}
        """
    )
    assert by_id["reward_spec"].params == {"reason": "not_static"}


def test_column_counts_characters_not_bytes():
    _, by_id = stages('"ñññ"; REWARD_SPEC = {"weights": 3}\ndef score(a, b): pass\n')
    problem = by_id["reward_spec"].problems[0]
    assert (problem["code"], problem["params"]["column"]) == ("section_not_dict", 34)
