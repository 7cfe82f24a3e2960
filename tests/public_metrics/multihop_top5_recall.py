# ruff: noqa
# fmt: off
# DSPy tutorial, multi-hop search: `top5_recall` (a float; a bool when a trace is passed).
# Source:  https://github.com/stanfordnlp/dspy
# Path:    docs/docs/tutorials/multihop_search/index.ipynb
# Commit:  4ed377ee9110e912d4f5e1be43b317b87455053c (read at this commit; the file last changed in becb4c9e8 (2026-01-02))
# URL:     https://github.com/stanfordnlp/dspy/blob/4ed377ee9110e912d4f5e1be43b317b87455053c/docs/docs/tutorials/multihop_search/index.ipynb
# Licence: MIT License, Copyright (c) 2023 Stanford Future Data Systems (LICENSE at the repository root)
# Changes: code cell 18 without its last line, `evaluate = dspy.Evaluate(devset=devset, ...)`, which
#          builds the evaluator over the tutorial's dataset. The metric needs no import.
# Apart from the changes above, the code below is as published.

def top5_recall(example, pred, trace=None):
    gold_titles = example.titles
    recall = sum(x in pred.titles[:5] for x in gold_titles) / len(gold_titles)

    # If we're "bootstrapping" for optimization, return True if and only if the recall is perfect.
    if trace is not None:
        return recall >= 1.0
    
    # If we're just doing inference, just measure the recall.
    return recall
