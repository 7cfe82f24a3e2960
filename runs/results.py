"""A run's result as the bundle's result.json holds it and the run page reads it: the
best candidate (by its mean score on the validation split; the earlier one on a tie), the
seed, their scores on each validation case, the lineage of every accepted candidate, and
what the run used."""

from __future__ import annotations

from runs.models import Run

RESULT_FORMAT = 1


def best_of(candidates: list) -> object | None:
    """The candidate with the highest mean validation score; the earliest on a tie."""
    if not candidates:
        return None
    return max(candidates, key=lambda c: (c.average, -c.idx))


def result_of(run: Run, candidates: list) -> dict | None:
    """The result of `run` from its candidates (RunCandidate rows); None before the seed
    was scored."""
    if not candidates:
        return None
    ordered = sorted(candidates, key=lambda c: c.idx)
    seed = ordered[0]
    best = best_of(ordered)
    progress = run.progress or {}
    return {
        "format": RESULT_FORMAT,
        "run": run.pk,
        "component": "artifact",
        "best": {
            "candidate": best.idx,
            "text": best.text,
            "val_mean": best.average,
            "val_scores": best.val_scores,
        },
        "seed": {"text": seed.text, "val_mean": seed.average, "val_scores": seed.val_scores},
        "improvement": best.average - seed.average,
        "lineage": [
            {
                "candidate": c.idx,
                "parents": c.parents,
                "val_mean": c.average,
                "found_at_metric_call": c.discovered_at,
                "problems": c.problems,
            }
            for c in ordered
        ],
        "metric_calls": progress.get("metric_calls", 0),
        "max_metric_calls": progress.get("max_metric_calls", 0),
        "iterations": progress.get("iteration", 0),
        "spend": progress.get("spend") or {},
    }
