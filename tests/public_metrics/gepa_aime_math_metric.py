# ruff: noqa
# fmt: off
# gepa example (optimize_anything on AIME): `math_metric(example, prediction)` (returns (score, feedback)).
# Source:  https://github.com/gepa-ai/gepa
# Path:    examples/aime_math/utils.py
# Commit:  b265bf9ca77fd8e8d82039d9f74911b8780fe1ce (read at this commit; the file last changed in 831cb70e (2026-03-05))
# URL:     https://github.com/gepa-ai/gepa/blob/b265bf9ca77fd8e8d82039d9f74911b8780fe1ce/examples/aime_math/utils.py
# Licence: MIT License, Copyright (c) 2025 Lakshya A Agrawal (LICENSE at the repository root)
# Changes: kept `import dspy` and `math_metric`; left out `import random`, the `datasets` import, the
#          DSPy program (`MathSolverSignature`, `predictor`, `run_llm`), dataset loading and
#          `evaluate_on_dataset`. In examples/aime_math/main.py the evaluator given to
#          `optimize_anything` calls `math_metric(example, prediction)` with a dspy.Example and the
#          dspy.Prediction of a ChainOfThought (output field `answer`).
# Apart from the changes above, the code below is as published.

import dspy


def math_metric(example, prediction):
    """Compute score and detailed feedback for math problems."""
    correct_answer, written_solution = int(example.answer), getattr(example, "solution", "")
    solution_suffix = (
        f" Here's the full step-by-step solution:\n{written_solution}\n\nThink about what takeaways you can learn from this solution to improve your future answers and approach to similar problems"
        if written_solution
        else ""
    )

    try:
        llm_answer = int(prediction.answer)
    except (ValueError, TypeError):
        feedback_text = f"The final answer must be a valid integer and nothing else. You responded with '{prediction.answer}', which couldn't be parsed as a python integer. Please ensure your answer is a valid integer without any additional text or formatting. The correct answer is '{correct_answer}'.{solution_suffix}{' and ensure your final answer is a valid integer.' if written_solution else ''}"
        return 0.0, feedback_text

    score = float(correct_answer == llm_answer)
    status = "correct" if score == 1.0 else "incorrect"
    feedback_text = f"Your answer is {status}. The correct answer is '{correct_answer}'.{solution_suffix}"
    return score, feedback_text
