# ruff: noqa
# fmt: off
# A user's DSPy GEPA metric posted in stanfordnlp/dspy issue #8846: SQL graded by an LLM judge (returns dspy.Prediction). NEEDS A LANGUAGE MODEL.
# Source:  https://github.com/stanfordnlp/dspy/issues/8846 (issue thread, opened by ltbd78 on 2025-09-22; first
#          posted in the review of https://github.com/stanfordnlp/dspy/pull/8777, discussion_r2369197898)
# Path:    the description, its only code block
# Commit:  none (an issue thread); copied from the issue description as opened on 2025-09-22
# URL:     https://github.com/stanfordnlp/dspy/issues/8846
# Licence: none stated (text of a public GitHub issue, quoted as a test case; not from a repository)
# Changes: none. The code block copied whole, as pasted in the thread: it uses `logging`, `dspy` and the
#          user's own `Judge` class without importing or defining them (the thread does not show `Judge`:
#          `Judge("us-east-1", "default").compute(gold_sql, pred_sql, explain=True)` returns a score out of
#          9 and an explanation, from a model). call_original supplies `logging`, `dspy` and a
#          deterministic stand-in for `Judge`.
# Apart from the changes above, the code below is as published.

def metric_with_feedback(example, pred, trace=None, pred_name=None, pred_trace=None):
    where = "module-level" if pred_name is None else f"predictor-level({pred_name})"
    logging.warning(f"Feedback metric called at {where}")
    judge = Judge("us-east-1", "default")
    judge_score, judge_explanation = judge.compute(example.sql, pred.sql, explain=True)
    feedback = f"Out of a 9 point grading rubric, you scored {judge_score}. Feedback:\n{judge_explanation}"
    return dspy.Prediction(score=judge_score / 9, feedback=feedback)
