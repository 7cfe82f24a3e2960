# ruff: noqa
# fmt: off
# DSPy documentation, "Metrics": `validate_answer` (returns a bool).
# Source:  https://github.com/stanfordnlp/dspy
# Path:    docs/docs/learn/evaluation/metrics.md
# Commit:  4ed377ee9110e912d4f5e1be43b317b87455053c (read at this commit; the file last changed in 5ebf2f75b (2024-11-12))
# URL:     https://github.com/stanfordnlp/dspy/blob/4ed377ee9110e912d4f5e1be43b317b87455053c/docs/docs/learn/evaluation/metrics.md
# Licence: MIT License, Copyright (c) 2023 Stanford Future Data Systems (LICENSE at the repository root)
# Changes: none. The first code block of the "Simple metrics" section, copied whole.
# Apart from the changes above, the code below is as published.

def validate_answer(example, pred, trace=None):
    return example.answer.lower() == pred.answer.lower()
