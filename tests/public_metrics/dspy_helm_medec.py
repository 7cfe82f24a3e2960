# ruff: noqa
# fmt: off
# DSPy-HELM (Stanford MIMI): the MEDEC scenario's GEPA metric `medec.metric_with_feedback` (returns dspy.Prediction).
# Source:  https://github.com/StanfordMIMI/dspy-helm
# Path:    scenarios.py
# Commit:  d96b5cc892b262b43522f600e070c720343d2f5d (read at this commit; the file last changed in d96b5cc (2026-05-29))
# URL:     https://github.com/StanfordMIMI/dspy-helm/blob/d96b5cc892b262b43522f600e070c720343d2f5d/scenarios.py
# Licence: MIT License, Copyright (c) 2025 Stanford MIMI Lab (LICENSE at the repository root)
# Changes: kept `import dspy` (line 1) and the `medec` scenario class without `_download_csv` and
#          `load_data` (they download the MEDEC CSV with requests and split it with scikit-learn);
#          left out the module's other imports and scenario classes. main.py hands
#          `scenario.metric_with_feedback` (a staticmethod) to dspy.GEPA; the program is
#          dspy.ChainOfThought("inputs -> output").
# Apart from the changes above, the code below is as published.

import dspy

class medec:
    def __init__(self, test_size=0.1, seed=42):
        self.test_size = test_size
        self.seed = seed

    @staticmethod
    def make_prompt(row):
        return (
            "The following is a medical narrative about a patient. "
            "You are a skilled medical doctor reviewing the clinical text. "
            "The text is either correct or contains one error. "
            "The text has a sentence per line. Each line starts with the sentence ID, followed by a space character then the sentence to check. "
            "Check every sentence of the text. "
            "If the text is correct return the following output: CORRECT. "
            "If the text has a medical error, return the sentence ID of the sentence containing the error, followed by a space, and a corrected version of the sentence.\n\n"
            f"Clinical Note: {row['Sentences']}\n\n"
            "Answer:"
        )

    @staticmethod
    def metric(example, pred, trace=None):
        example["answer"] = example["output"]
        pred["answer"] = pred["output"]
        return dspy.evaluate.metrics.answer_exact_match(example, pred, trace)

    @staticmethod
    def metric_with_feedback(example, pred, trace=None, pred_name=None, pred_trace=None):
        score = medec.metric(example, pred, trace)
        expected_answer = example["output"]
        predicted_answer = pred["output"]
        
        if score == 1.0:
            if expected_answer == "CORRECT":
                feedback = "You correctly identified that the clinical text is error-free."
            else:
                feedback = f"You correctly identified the medical error and provided the correction: '{expected_answer}'."
        else:
            if expected_answer == "CORRECT":
                feedback = f"You incorrectly identified an error in the text. The text is actually correct. Your response: '{predicted_answer}' should have been 'CORRECT'."
            else:
                feedback = f"You failed to identify the medical error correctly. The correct response should be: '{expected_answer}'. Your response: '{predicted_answer}'."
        
        return dspy.Prediction(score=score, feedback=feedback)

    def _get_answer(self, row):
        if int(row.get("Error Flag", 0)) == 1 and row.get("Corrected Sentence", "").strip() != "NA" and row.get("Error Sentence ID", "-1").strip() != "-1":
            return f"{row['Error Sentence ID'].strip()} {row['Corrected Sentence'].strip()}"
        else:
            return "CORRECT"
