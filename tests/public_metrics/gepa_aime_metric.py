# ruff: noqa
# fmt: off
# DSPy GEPA tutorial for AIME: the plain metric (returns an int, 0 or 1).
# Source:  https://github.com/stanfordnlp/dspy
# Path:    docs/docs/tutorials/gepa_aime/index.ipynb
# Commit:  4ed377ee9110e912d4f5e1be43b317b87455053c (read at this commit; the file last changed in 6ae6736d8 (2025-09-06))
# URL:     https://github.com/stanfordnlp/dspy/blob/4ed377ee9110e912d4f5e1be43b317b87455053c/docs/docs/tutorials/gepa_aime/index.ipynb
# Licence: MIT License, Copyright (c) 2023 Stanford Future Data Systems (LICENSE at the repository root)
# Changes: none. Code cell 11 of the notebook (the plain `metric` used with dspy.Evaluate), copied whole;
#          it needs no import.
# Apart from the changes above, the code below is as published.

def metric(example, prediction, trace=None, pred_name=None, pred_trace=None):
    correct_answer = int(example['answer'])
    try:
        llm_answer = int(prediction.answer)
    except ValueError as e:
        return 0
    return int(correct_answer == llm_answer)
