"""skynet.reward(): one score from accuracy, measured speed and measured cost.

Each part is in [0, 1]; the value is the weighted sum with weights scaled to
sum 1. Parts:

- accuracy, no accuracy.reference: accuracy clamped to [0, 1];
- accuracy with accuracy.reference: accuracy is an error (lower is better),
  part = min(1, reference / error), an error of 0 scores 1;
- speed: min(1, speed.reference / duration_ms), 0 ms scores 1;
- cost: min(1, cost.reference / cost_usd), a cost of 0 scores 1.

A part whose measurement is missing (None) scores 0 and the feedback gets a
note naming it. With a weight of 0 the missing part cannot change the value,
so no note is added.
"""

from __future__ import annotations

import math
import numbers

from skynet import _state, rewardspec

_MEASUREMENTS = {"speed": "duration_ms", "cost": "cost_usd"}


def _ratio(reference: float, measured: float) -> float:
    return 1.0 if measured <= 0 else min(1.0, reference / measured)


def _accuracy_part(accuracy: float, reference: float | None) -> float:
    if reference is None:
        return min(1.0, max(0.0, accuracy))
    if accuracy < 0:
        raise ValueError("accuracy_error_negative")
    return _ratio(reference, accuracy)


def reward(spec: object, accuracy: float, feedback: str) -> tuple[float, dict]:
    """(value, {"feedback": ..., "scores": {"accuracy", "speed", "cost"}}).

    Raises ValueError for an invalid spec (message "<code>: <path>") or a
    non-finite or negative-error accuracy, TypeError for a non-str feedback.
    """
    parsed = rewardspec.parse(spec)
    if type(accuracy) is bool or not isinstance(accuracy, numbers.Real):
        raise ValueError("accuracy_not_number")
    accuracy = float(accuracy)
    if not math.isfinite(accuracy):
        raise ValueError("accuracy_not_finite")
    if not isinstance(feedback, str):
        raise TypeError("feedback_not_string")

    observed = _state.observation()
    parts = {"accuracy": _accuracy_part(accuracy, parsed.accuracy_reference)}
    notes = []
    references = {"speed": parsed.speed_reference, "cost": parsed.cost_reference}
    for part, key in _MEASUREMENTS.items():
        measured = observed.get(key)
        if measured is None:
            parts[part] = 0.0
            if parsed.weights[part] > 0:
                notes.append(f" [{part} not measured: scored 0]")
        else:
            parts[part] = _ratio(references[part], float(measured))
    value = sum(parsed.weights[part] * parts[part] for part in rewardspec.PARTS)
    # Scaled weights can sum to 1 + 1 ulp; keep the value inside [0, 1].
    value = min(1.0, max(0.0, value))
    return value, {"feedback": feedback + "".join(notes), "scores": parts}
