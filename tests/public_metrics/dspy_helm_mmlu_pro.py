# ruff: noqa
# fmt: off
# DSPy-HELM (Stanford MIMI): the MMLU-Pro scenario's GEPA metric `mmlu_pro.metric_with_feedback` (returns dspy.Prediction).
# Source:  https://github.com/StanfordMIMI/dspy-helm
# Path:    scenarios.py
# Commit:  d96b5cc892b262b43522f600e070c720343d2f5d (read at this commit; the file last changed in d96b5cc (2026-05-29))
# URL:     https://github.com/StanfordMIMI/dspy-helm/blob/d96b5cc892b262b43522f600e070c720343d2f5d/scenarios.py
# Licence: MIT License, Copyright (c) 2025 Stanford MIMI Lab (LICENSE at the repository root)
# Changes: kept `import dspy` (line 1), `from typing import List, Dict, Optional, Tuple` (line 8),
#          `import re` (line 11) and the `mmlu_pro` scenario class without `load_data` (it loads
#          TIGER-Lab/MMLU-Pro with the datasets library); left out the module's other imports and
#          scenario classes. main.py hands `scenario.metric_with_feedback` (a staticmethod) to
#          dspy.GEPA; the program is dspy.ChainOfThought("inputs -> output").
# Apart from the changes above, the code below is as published.

import dspy
from typing import List, Dict, Optional, Tuple
import re

class mmlu_pro:
    LABELS = ["A","B","C","D","E","F","G","H","I","J"]

    def __init__(self, test_size=0.5, seed=42):
        self.subject =  "all"
        self.use_chain_of_thought = True
        self.revision = "3373e0b"
        self.test_size = test_size
        self.seed = seed

    @staticmethod
    def _helm_input_prefix() -> str:
        return "What is the correct answer to this question: "

    @staticmethod
    def _helm_input_suffix() -> str:
        return "\nChoices:\n"

    @staticmethod
    def _helm_global_suffix_cot() -> str:
        return (
            "Let’s think step by step. Based on your reasoning, what is the single, "
            "most likely answer choice? Format your response as follows: "
            "\"The correct answer is (insert answer here)\"."
        )

    @staticmethod
    def _helm_global_suffix_nocot() -> str:
        return 'Format your response as follows: "The correct answer is (insert answer here)".'

    @staticmethod
    def _final_uppercase_letter_instruction() -> str:
        return (
            'In your response, replace "insert answer here" with the single uppercase letter '
            "corresponding to your answer."
        )

    @classmethod
    def _choices_block(self, options: List[str]) -> str:
        assert len(options) == 10, f"Expected 10 options, got {len(options)}"
        return "\n".join([f"{label}. {opt}" for label, opt in zip(self.LABELS, options)])

    def make_prompt(self, row: Dict) -> str:
        question = row["question"]
        options = row["options"]

        prefix = self._helm_input_prefix()
        suffix = self._helm_input_suffix()
        global_suffix = (self._helm_global_suffix_cot() if self.use_chain_of_thought else self._helm_global_suffix_nocot())
        final_inst = self._final_uppercase_letter_instruction()

        prompt = (
            f"{prefix}{question} \n"
            f"{suffix}"
            f"{self._choices_block(options)} \n"
            f"{global_suffix} \n\n"
            f"{final_inst}"
        )
        return prompt

    @staticmethod
    def _extract_letter(text: str) -> Optional[str]:
        if not text:
            return None
        m = re.search(r"\b([A-J])\b", text.upper())
        if not m:
            m = re.search(r"\(([A-J])\)", text.upper())
        return m.group(1) if m else None

    @staticmethod
    def metric(example, pred, trace=None):
        example["answer"] = str(example["output"]).strip().upper()
        pred["answer"] = mmlu_pro._extract_letter(pred.get("output", "")) or ""
        return dspy.evaluate.metrics.answer_exact_match(example, pred, trace)

    @staticmethod
    def metric_with_feedback(example, pred, trace=None, pred_name=None, pred_trace=None):
        score = mmlu_pro.metric(example, pred, trace)
        expected_answer = str(example["output"]).strip().upper()
        predicted_answer = pred["output"]
        
        if score == 1.0:
            feedback = f"You correctly identified the answer as '{expected_answer}'. Your response properly follows the required format and contains the correct answer letter."
        else:
            feedback = f"You incorrectly identified the answer by outputting '{predicted_answer}'.\n\nThe correct answer is '{expected_answer}'. Review the question and options carefully to identify the right answer."
        
        return dspy.Prediction(score=score, feedback=feedback)
