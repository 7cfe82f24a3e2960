# ruff: noqa
# fmt: off
# DSPy real-world GEPA examples (hironow/dspy): `qa_metric_task_specific` (float, or dspy.Prediction when GEPA asks for feedback).
# Source:  https://github.com/hironow/dspy
# Path:    real_world/simple_gepa_task_metric.py
# Commit:  470786aa7b8cb9d9e5aafdf67943916f5b220d65 (read at this commit, the head of branch `real-world`; the file last changed in 8a370473 (2025-10-31))
# URL:     https://github.com/hironow/dspy/blob/470786aa7b8cb9d9e5aafdf67943916f5b220d65/real_world/simple_gepa_task_metric.py
# Licence: MIT License, Copyright (c) 2023 Stanford Future Data Systems (the LICENSE at the root of this
#          fork of stanfordnlp/dspy; real_world/ is the fork owner's addition, on branch `real-world`)
# Changes: kept the module docstring, `from __future__ import annotations`, `import dspy`, `_normalize_color`
#          and the metric (with its nested `_edit_distance`). Left out: `import argparse`, loguru, the other
#          `real_world.*` imports, the program (`SimpleQA`: predictors `rewrite` and `predict`) and main().
#          The answers are Japanese colour words (青 / 黄色 and their synonyms).
#          `from real_world.metrics_utils import confusion_outcomes, safe_trace_log` is replaced by that
#          module's body (its `from typing import Any` and both functions, copied whole, marked by a
#          `# --- from real_world/metrics_utils.py ---` comment; same commit, same licence), since the
#          `real_world` package is not installed.
# Apart from the changes above, the code below is as published.

"""
Task-specific metric GEPA example (v3+), still simple but a bit more practical.

- Reuses a tiny DSPy program (Predict-based QA)
- Implements a task-specific metric with feedback:
  - synonym-aware correctness
  - brevity preference (single short word)
  - near-miss partial credit via edit distance (<=1)
  - multi-objective weighted score: score = 0.8*correctness + 0.2*brevity
- Runs GEPA with a small train/val split
- Works locally with --dummy (no external calls) using JSONAdapter for stable parsing

Usage:
  uv run python real_world/simple_gepa_task_metric.py --dummy

Notes:
- The metric accepts (gold, pred, trace, pred_name, pred_trace) and returns
  either a float or dspy.Prediction(score=..., feedback=...).

GEPA compile requirements:
- metric(gold, pred, trace, pred_name, pred_trace)
- exactly one of: auto | max_full_evals | max_metric_calls
- reflection_lm or instruction_proposer
- trainset (and recommended valset)
"""

from __future__ import annotations

import dspy

# --- from real_world/metrics_utils.py ---
from typing import Any


def confusion_outcomes(gold_pos: bool, guess_pos: bool, pred_claim: bool) -> dict[str, int]:
    """Return a dict with TP, FP, TN, FN given binary events.

    - gold_pos: whether the gold label/target is present/positive
    - guess_pos: whether the prediction correctly affirms the positive case
    - pred_claim: whether the prediction claims a non-empty/affirmative output
    """
    TP = int(gold_pos and guess_pos)
    FN = int(gold_pos and not guess_pos)
    FP = int((not gold_pos) and pred_claim)
    TN = int((not gold_pos) and (not pred_claim))
    return {"TP": TP, "FP": FP, "TN": TN, "FN": FN}


def safe_trace_log(trace: Any, data: dict[str, Any]) -> None:
    """Safely log a small payload to trace if available."""
    if trace is None or not hasattr(trace, "log"):
        return
    try:
        trace.log(data)
    except Exception:
        # Swallow logging errors to avoid interfering with metric evaluation
        pass
# --- from real_world/simple_gepa_task_metric.py ---


def _normalize_color(s: str) -> str:
    s = (s or "").strip().lower()
    # Very small synonym map for demo
    blue = {"青", "あお", "ブルー", "blue"}
    yellow = {"黄色", "きいろ", "イエロー", "yellow", "黄"}
    if s in blue:
        return "青"
    if s in yellow:
        return "黄色"
    return s


def qa_metric_task_specific(
    gold: dspy.Example, pred: dspy.Prediction, trace=None, pred_name: str | None = None, pred_trace=None
):
    """
    Task-specific metric:
    - Correctness: allow tiny synonym set (青/ブルー, 黄色/イエロー...). Near-miss (edit distance<=1) gets partial credit.
    - Brevity: prefer a single short word (<=5 chars). Single but long gets partial credit.
    - Final score: 0.8*correctness + 0.2*brevity. GEPA receives textual feedback explaining both components.

    Modes:
    - Evaluate mode (called without `pred_name/pred_trace`): return a scalar in [0,1].
    - GEPA mode (called with `pred_name/pred_trace`): return `dspy.Prediction(score, feedback)`; you may use
      `pred_name`/`pred_trace` to tailor guidance for `rewrite` or `predict` if desired.
    """
    gold_ans_raw = str(getattr(gold, "answer", "")).strip()
    pred_ans_raw = str(getattr(pred, "answer", "")).strip()

    gold_norm = _normalize_color(gold_ans_raw)
    pred_norm = _normalize_color(pred_ans_raw)

    # --- Correctness (with near-miss partial credit) ---
    def _edit_distance(a: str, b: str) -> int:
        # Simple DP Levenshtein for short strings
        n, m = len(a), len(b)
        if n == 0:
            return m
        if m == 0:
            return n
        dp = [[0] * (m + 1) for _ in range(n + 1)]
        for i in range(n + 1):
            dp[i][0] = i
        for j in range(m + 1):
            dp[0][j] = j
        for i in range(1, n + 1):
            for j in range(1, m + 1):
                cost = 0 if a[i - 1] == b[j - 1] else 1
                dp[i][j] = min(
                    dp[i - 1][j] + 1,  # delete
                    dp[i][j - 1] + 1,  # insert
                    dp[i - 1][j - 1] + cost,  # replace
                )
        return dp[n][m]

    if gold_norm and pred_norm == gold_norm:
        s_correct = 1.0
    elif gold_norm and pred_norm:
        s_correct = 0.6 if _edit_distance(gold_norm, pred_norm) <= 1 else 0.0
    else:
        s_correct = 0.0

    # --- Brevity (format preference) ---
    single_word = (" " not in pred_ans_raw) and len(pred_ans_raw) > 0
    short_enough = len(pred_ans_raw) <= 5
    if single_word and short_enough:
        s_brevity = 1.0
    elif single_word:
        s_brevity = 0.6
    else:
        s_brevity = 0.0

    score = round(0.8 * s_correct + 0.2 * s_brevity, 3)

    # Binary framing reused for trace and feedback
    gold_pos = bool(gold_norm)
    guess_pos = bool(gold_norm) and (pred_norm == gold_norm)
    pred_claim = bool(pred_ans_raw)
    conf = confusion_outcomes(gold_pos, guess_pos, pred_claim)

    # Lightweight trace for reflection
    safe_trace_log(
        trace,
        {
            "gold": gold_norm,
            "pred": pred_norm,
            "s_correct": s_correct,
            "s_brevity": s_brevity,
            "score": score,
            "confusion": conf,
        },
    )

    if pred_name is None and pred_trace is None:
        return score

    # --- Feedback (TP/FN/FP/TN branches) ---
    fb_parts: list[str] = []
    if conf["TP"]:
        fb_parts.append("Correct: exact or synonym match.")
    elif conf["FN"]:
        if s_correct >= 0.6:
            fb_parts.append(
                f"Near-miss (typo). Correct answer is '{gold_norm}'. Prefer exact spelling or canonical synonyms."
            )
        else:
            fb_parts.append(f"Incorrect. Correct answer is '{gold_norm}'.")
    elif conf["FP"]:
        fb_parts.append("Unnecessary answer when none is expected; avoid hallucination.")
    else:  # TN
        fb_parts.append("Correct: no answer needed.")

    # Brevity hints remain applicable across branches
    if s_brevity == 1.0:
        fb_parts.append("Brevity: good (single short word).")
    elif s_brevity >= 0.6:
        fb_parts.append("Brevity: single word but long; prefer a shorter noun (<=5 chars).")
    else:
        fb_parts.append("Brevity: too verbose; answer should be one noun.")

    if pred_name:
        fb_parts.append(f"Target predictor: {pred_name}.")

    feedback = " ".join(fb_parts)
    return dspy.Prediction(score=score, feedback=feedback)
