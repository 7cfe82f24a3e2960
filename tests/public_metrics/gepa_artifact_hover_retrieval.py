# ruff: noqa
# fmt: off
# GEPA paper artifact, HoVer benchmark: `discrete_retrieval_eval_with_feedback` (returns dspy.Prediction, bool score).
# Source:  https://github.com/gepa-ai/gepa-artifact
# Path:    gepa_artifact/benchmarks/hover/hover_utils.py
# Commit:  0a4d0e3fea13474f7b7b452b9fa26bc9884b8c7e (read at this commit; the file last changed in a924c20 (2025-08-04))
# URL:     https://github.com/gepa-ai/gepa-artifact/blob/0a4d0e3fea13474f7b7b452b9fa26bc9884b8c7e/gepa_artifact/benchmarks/hover/hover_utils.py
# Licence: MIT License, Copyright (c) 2025 Lakshya A Agrawal (LICENSE at the repository root)
# Changes: none. The whole module, copied as published. hover/__init__.py passes
#          `discrete_retrieval_eval_with_feedback` as the benchmark's metric_with_feedback (GEPA) and
#          `discrete_retrieval_eval` as its metric; the program (HoverMultiHop) returns
#          dspy.Prediction(retrieved_docs=[...]) with "title | text" strings.
# Apart from the changes above, the code below is as published.

import dspy


def count_unique_docs(example):
    return len(set([fact["key"] for fact in example["supporting_facts"]]))


def discrete_retrieval_eval(example, pred, trace=None):
    gold_titles = set(
        map(
            dspy.evaluate.normalize_text,
            [doc["key"] for doc in example["supporting_facts"]],
        )
    )
    found_titles = set(
        map(
            dspy.evaluate.normalize_text,
            [c.split(" | ")[0] for c in pred.retrieved_docs],
        )
    )
    return gold_titles.issubset(found_titles)

def discrete_retrieval_eval_with_feedback(example, pred, trace=None):
    gold_titles = set(
        map(
            dspy.evaluate.normalize_text,
            [doc["key"] for doc in example["supporting_facts"]],
        )
    )
    found_titles = set(
        map(
            dspy.evaluate.normalize_text,
            [c.split(" | ")[0] for c in pred.retrieved_docs],
        )
    )

    score = gold_titles.issubset(found_titles)

    gold_titles_found_in_pred = gold_titles.intersection(found_titles)
    gold_titles_not_found_in_pred = gold_titles.difference(found_titles)

    feedback_text = f"Your queries correctly retrieved the following relevant evidence documents: {gold_titles_found_in_pred}, but missed the following relevant evidence documents: {gold_titles_not_found_in_pred}."

    return dspy.Prediction(
        score=score,
        feedback=feedback_text,
    )
