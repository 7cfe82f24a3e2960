# ruff: noqa
# fmt: off
# DSPy real-world GEPA examples (hironow/dspy): `invoice_metric_with_feedback`, routed on pred_name (float or dspy.Prediction).
# Source:  https://github.com/hironow/dspy
# Path:    real_world/simple_gepa_structured_invoice.py
# Commit:  470786aa7b8cb9d9e5aafdf67943916f5b220d65 (read at this commit, the head of branch `real-world`; the file last changed in 8a370473 (2025-10-31))
# URL:     https://github.com/hironow/dspy/blob/470786aa7b8cb9d9e5aafdf67943916f5b220d65/real_world/simple_gepa_structured_invoice.py
# Licence: MIT License, Copyright (c) 2023 Stanford Future Data Systems (the LICENSE at the root of this
#          fork of stanfordnlp/dspy; real_world/ is the fork owner's addition, on branch `real-world`)
# Changes: kept the module docstring, `from __future__ import annotations`, `import re`, `from typing import Any`,
#          `import dspy`, the constants, the three helpers and the metric. Left out: `import argparse`,
#          loguru, the other `real_world.*` imports, the program (`InvoiceIE`: predictors `extract` and
#          `normalize`) and main(). The metric returns a float when pred_name and pred_trace are None
#          and dspy.Prediction(score, feedback) otherwise, with advice for `extract` or `normalize`.
#          `from real_world.metrics_utils import confusion_outcomes, safe_trace_log` is replaced by that
#          module's body (its `from typing import Any` and both functions, copied whole, marked by a
#          `# --- from real_world/metrics_utils.py ---` comment; same commit, same licence), since the
#          `real_world` package is not installed.
# Apart from the changes above, the code below is as published.

"""
Structured invoice IE with task-specific metric using trace/pred_name/pred_trace (v3+).

- Program: extract -> normalize over invoice text
- Metric (invoice_metric_with_feedback):
  - Uses trace/pred_name/pred_trace to tailor feedback per predictor
  - Validates schema (vendor/date/amount/currency), types, and formats
  - Encourages ISO date (YYYY-MM-DD) and ISO currency code (e.g., JPY)

Run (no external calls):
  uv run python real_world/simple_gepa_structured_invoice.py --dummy

GEPA compile requirements:
- metric(gold, pred, trace, pred_name, pred_trace)
- exactly one of: auto | max_full_evals | max_metric_calls
- reflection_lm or instruction_proposer
- trainset (and recommended valset)
"""

from __future__ import annotations

import re
from typing import Any

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
# --- from real_world/simple_gepa_structured_invoice.py ---


ISO_CURRENCIES = {"USD", "EUR", "JPY", "GBP", "CNY"}
ISO_DATE_PATTERN = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _is_iso_date(s: str) -> bool:
    return bool(ISO_DATE_PATTERN.match(s or ""))


def _to_float(v: Any) -> float | None:
    try:
        return float(v)
    except Exception:
        return None


def _safe_str(v: Any) -> str:
    return "" if v is None else str(v)


def invoice_metric_with_feedback(
    gold: dspy.Example,
    pred: dspy.Prediction,
    trace=None,
    pred_name: str | None = None,
    pred_trace=None,
):
    """
    Task-specific metric for structured invoice extraction/normalization.

    - Validates vendor (non-empty), date (ISO YYYY-MM-DD), amount (float), currency (ISO code)
    - Uses pred_name/pred_trace to tailor feedback:
      * extract: missing/incorrect fields, parsing guidance
      * normalize: canonicalization advice (date/currency/amount formats)
    - Uses trace to mention upstream context when helpful

    Returns:
      - float when pred_name/pred_trace are None (Evaluate)
      - dspy.Prediction(score, feedback) for GEPA (per-predictor feedback)
    """
    # Gold reference
    gold_vendor = _safe_str(getattr(gold, "vendor", "")).strip()
    gold_date = _safe_str(getattr(gold, "date", "")).strip()
    gold_currency = _safe_str(getattr(gold, "currency", "")).strip().upper()
    gold_amount = _to_float(getattr(gold, "amount", None))
    gold_text = _safe_str(getattr(gold, "text", ""))

    # Predicted
    pred_vendor = _safe_str(getattr(pred, "vendor", "")).strip()
    pred_date = _safe_str(getattr(pred, "date", "")).strip()
    pred_currency = _safe_str(getattr(pred, "currency", "")).strip().upper()
    pred_amount = _to_float(getattr(pred, "amount", None))

    errors: list[str] = []
    score = 1.0

    # Vendor
    if not pred_vendor:
        errors.append("Missing vendor")
        score -= 0.25
    elif gold_vendor and pred_vendor.lower() != gold_vendor.lower():
        # simple strict comparison in this toy example
        errors.append(f"Vendor mismatch (got '{pred_vendor}', expected '{gold_vendor}')")
        score -= 0.15

    # Date
    if not pred_date:
        errors.append("Missing date")
        score -= 0.25
    elif not _is_iso_date(pred_date):
        errors.append(f"Date not ISO (YYYY-MM-DD): '{pred_date}'")
        score -= 0.15
    elif gold_date and pred_date != gold_date:
        errors.append(f"Date mismatch (got '{pred_date}', expected '{gold_date}')")
        score -= 0.10

    # Amount
    if pred_amount is None:
        errors.append(f"Amount not numeric: '{getattr(pred, 'amount', None)}'")
        score -= 0.20
    elif gold_amount is not None:
        if abs(pred_amount - gold_amount) > 0.01:
            errors.append(f"Amount mismatch (got {pred_amount}, expected {gold_amount})")
            score -= 0.10

    # Currency
    if not pred_currency:
        errors.append("Missing currency")
        score -= 0.25
    elif pred_currency not in ISO_CURRENCIES:
        errors.append(f"Currency not ISO code: '{pred_currency}'")
        score -= 0.15
    elif gold_currency and pred_currency != gold_currency:
        errors.append(f"Currency mismatch (got '{pred_currency}', expected '{gold_currency}')")
        score -= 0.10

    score = max(0.0, min(1.0, round(score, 3)))

    # Binary framing reused for trace and feedback
    vendor_ok = bool(pred_vendor) and (not gold_vendor or pred_vendor.lower() == gold_vendor.lower())
    date_ok = bool(pred_date) and _is_iso_date(pred_date) and (not gold_date or pred_date == gold_date)
    amount_ok = (pred_amount is not None) and (gold_amount is None or abs(pred_amount - gold_amount) <= 0.01)
    currency_ok = (
        bool(pred_currency)
        and (pred_currency in ISO_CURRENCIES)
        and (not gold_currency or pred_currency == gold_currency)
    )
    gold_pos = any([bool(gold_vendor), bool(gold_date), gold_amount is not None, bool(gold_currency)])
    guess_pos = vendor_ok and date_ok and amount_ok and currency_ok
    pred_claim = bool(pred_vendor or pred_date or (pred_amount is not None) or pred_currency)
    conf = confusion_outcomes(gold_pos, guess_pos, pred_claim)

    # Trace essentials for reflection/debug
    safe_trace_log(
        trace,
        {
            "errors": len(errors),
            "score": score,
            "fields": {
                "vendor": bool(pred_vendor),
                "date": bool(pred_date),
                "amount_numeric": pred_amount is not None,
                "currency_iso": pred_currency in ISO_CURRENCIES,
            },
            "confusion": conf,
        },
    )

    # Evaluate mode: return scalar only
    if pred_name is None and pred_trace is None:
        return score

    # GEPA mode: build tailored feedback using pred_name/pred_trace
    fb: list[str] = []

    # TP/FN/FP/TN framing (all-fields-valid = TP)
    if conf["TP"]:
        fb.append("All fields are valid against the schema.")
    elif conf["FN"]:
        fb.append("Some fields are missing or invalid; fix schema violations.")
    elif conf["FP"]:
        fb.append("Unnecessary extraction when no gold fields are present; avoid hallucinated fields.")
    else:  # TN
        fb.append("Correct: no fields required.")

    # Summarize failures
    if errors:
        fb.append("; ".join(errors))

    # Add predictor-specific suggestions
    try:
        if isinstance(pred_trace, list) and len(pred_trace) > 0:
            _pred, p_inputs, p_outputs = pred_trace[0]
        else:
            p_inputs, p_outputs = {}, pred
    except Exception:
        p_inputs, p_outputs = {}, pred

    if pred_name == "extract":
        fb.append(
            "Extractor: Ensure all fields are captured with correct types. "
            "Use patterns like 'YYYY-MM-DD' for dates and parse numeric amounts."
        )
        # Point to any missing keys from predictor output
        out_keys = (
            set(getattr(p_outputs, "keys", lambda: p_outputs.keys())())
            if hasattr(p_outputs, "keys")
            else set(p_outputs.__dict__.keys() if hasattr(p_outputs, "__dict__") else [])
        )
        needed = {"vendor", "date", "amount", "currency"}
        missing = sorted(needed - out_keys)
        if missing:
            fb.append(f"Missing keys in extract output: {missing}")

        # Source hint using module input text
        if gold_text:
            fb.append("When parsing, look for 'Vendor:', 'Date:', 'Amount:', 'Currency:' labels in the text.")

    elif pred_name == "normalize":
        fb.append(
            "Normalizer: Convert date to ISO 'YYYY-MM-DD', currency symbol to ISO code (e.g., '¥' -> 'JPY'), "
            "and ensure amount is numeric."
        )
        # Highlight specific normalizations with from -> to suggestions (bounded, concrete)
        src_date = None
        src_curr = None
        src_amt = None
        if isinstance(p_inputs, dict):
            src_date = _safe_str(p_inputs.get("date", ""))
            src_curr = _safe_str(p_inputs.get("currency", ""))
            src_amt = p_inputs.get("amount", None)

        # Date normalization
        if not _is_iso_date(pred_date):
            if gold_date:
                fb.append(f"Date normalization: convert '{src_date or pred_date}' to '{gold_date}' (ISO).")
            elif src_date or pred_date:
                fb.append(f"Date normalization: convert '{src_date or pred_date}' to 'YYYY-MM-DD' (ISO).")

        # Currency normalization
        if pred_currency not in ISO_CURRENCIES:
            target_cur = gold_currency or "ISO code like 'JPY'"
            fb.append(f"Currency normalization: convert '{(src_curr or pred_currency) or ''}' to '{target_cur}'.")

        # Amount normalization
        if pred_amount is None:
            normalized_hint = None
            if isinstance(src_amt, str) and src_amt:
                # Strip non-numeric hints (keep digits, dot, minus)
                stripped = re.sub(r"[^0-9.\-]", "", src_amt)
                parsed = _to_float(stripped)
                if parsed is not None:
                    normalized_hint = parsed
            if normalized_hint is None and gold_amount is not None:
                normalized_hint = gold_amount
            if normalized_hint is not None:
                fb.append(f"Amount normalization: convert '{_safe_str(src_amt)}' to {normalized_hint} (numeric).")
            else:
                fb.append("Amount normalization: ensure a numeric float (e.g., '7,890' -> 7890.0).")

    else:
        fb.append("Program: Maintain schema validity across steps.")

    feedback = " ".join(s for s in fb if s).strip()
    return dspy.Prediction(score=score, feedback=feedback)
