# ruff: noqa
# fmt: off
# DSPy-HELM (Stanford MIMI): the GSM8K scenario's GEPA metric `gsm8k.metric_with_feedback` (returns dspy.Prediction).
# Source:  https://github.com/StanfordMIMI/dspy-helm
# Path:    scenarios.py
# Commit:  d96b5cc892b262b43522f600e070c720343d2f5d (read at this commit; the file last changed in d96b5cc (2026-05-29))
# URL:     https://github.com/StanfordMIMI/dspy-helm/blob/d96b5cc892b262b43522f600e070c720343d2f5d/scenarios.py
# Licence: MIT License, Copyright (c) 2025 Stanford MIMI Lab (LICENSE at the repository root)
# Changes: kept `import dspy` (line 1), `import re` (line 11) and the `gsm8k` scenario class without its
#          data loading: left out `_load_split` and `load_data` (they download GSM8K with requests and
#          build a datasets.Dataset), and the module's other imports and scenario classes. main.py
#          hands `scenario.metric_with_feedback` (a staticmethod) to dspy.GEPA; the program is
#          dspy.ChainOfThought("inputs -> output").
# Apart from the changes above, the code below is as published.

import dspy
import re

class gsm8k:
    def __init__(self, test_size=0.1, seed=42):
        self.base_url = "https://raw.githubusercontent.com/openai/grade-school-math/master/grade_school_math/data"
        self.test_size = test_size
        self.seed = seed

    @staticmethod
    def make_prompt(row):
        return f"Q: {row['question'].strip()}\nA:"

    @staticmethod
    def _extract_final_number(text: str) -> str:
        if text is None:
            return ""
        match = re.search(r"The answer is\s*([-+]?\d+)", text)
        if match:
            return match.group(1)
        numbers = re.findall(r"[-+]?\d+", text)
        return numbers[-1] if numbers else ""

    @staticmethod
    def metric(example, pred, trace=None):
        example["answer"] = str(example["output"]).strip()
        pred["answer"] = gsm8k._extract_final_number(pred.get("output", ""))
        return dspy.evaluate.metrics.answer_exact_match(example, pred, trace)

    @staticmethod
    def metric_with_feedback(example, pred, trace=None, pred_name=None, pred_trace=None):
        score = gsm8k.metric(example, pred, trace)
        expected_answer = str(example["output"]).strip()
        predicted_answer = gsm8k._extract_final_number(pred.get("output", ""))
        full_solution = example["solution"]
        
        if score == 1.0:
            feedback = f"You correctly solved the math problem. The answer is '{expected_answer}'."
        else:
            feedback = f"You incorrectly calculated the answer as '{predicted_answer}'. The correct answer is '{expected_answer}'.\n\nFull solution: {full_solution}\n\nReview your math problem solving steps carefully and follow the proper reasoning approach."

        return dspy.Prediction(score=score, feedback=feedback)
