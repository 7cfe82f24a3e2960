# ruff: noqa
# fmt: off
# GEPA paper artifact, AIME benchmark: `metric_with_feedback(example, prediction, trace=None)` (returns dspy.Prediction, int score).
# Source:  https://github.com/gepa-ai/gepa-artifact
# Path:    gepa_artifact/benchmarks/AIME/__init__.py
# Commit:  0a4d0e3fea13474f7b7b452b9fa26bc9884b8c7e (read at this commit; the file last changed in a924c20 (2025-08-04))
# URL:     https://github.com/gepa-ai/gepa-artifact/blob/0a4d0e3fea13474f7b7b452b9fa26bc9884b8c7e/gepa_artifact/benchmarks/AIME/__init__.py
# Licence: MIT License, Copyright (c) 2025 Lakshya A Agrawal (LICENSE at the repository root)
# Changes: kept `import dspy`, `metric` and `metric_with_feedback`; left out the package's relative
#          imports (`AIMEBench`, `program_cot`, `BenchmarkMeta`) and the `benchmark` list that registers
#          the two metrics (metric_with_feedback is the GEPA one). The program is a ChainOfThought
#          with output field `answer`.
# Apart from the changes above, the code below is as published.

import dspy

def metric(example, prediction, trace=None):
    correct_answer = int(example['answer'])
    try:
        llm_answer = int(prediction.answer)
    except ValueError as e:
        return 0
    return int(correct_answer == llm_answer)

def metric_with_feedback(example, prediction, trace=None):
    correct_answer = int(example['answer'])
    written_solution = example.get('solution', '')
    try:
        llm_answer = int(prediction.answer)
    except ValueError as e:
        feedback_text = f"The final answer must be a valid integer and nothing else. You responded with '{prediction.answer}', which couldn't be parsed as a python integer. Please ensure your answer is a valid integer without any additional text or formatting."
        feedback_text += f" The correct answer is '{correct_answer}'."
        if written_solution:
            feedback_text += f" Here's the full step-by-step solution:\n{written_solution}\n\nThink about what takeaways you can learn from this solution to improve your future answers and approach to similar problems and ensure your final answer is a valid integer."
        return dspy.Prediction(score=0, feedback=feedback_text)

    score = int(correct_answer == llm_answer)

    feedback_text = ""
    if score == 1:
        feedback_text = f"Your answer is correct. The correct answer is '{correct_answer}'."
    else:
        feedback_text = f"Your answer is incorrect. The correct answer is '{correct_answer}'."
    
    if written_solution:
        feedback_text += f" Here's the full step-by-step solution:\n{written_solution}\n\nThink about what takeaways you can learn from this solution to improve your future answers and approach to similar problems."

    return dspy.Prediction(score=score, feedback=feedback_text)
