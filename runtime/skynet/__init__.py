"""Helpers for metric.py: `import skynet`.

- reward(REWARD_SPEC, accuracy, feedback): combine accuracy with the measured
  speed and cost into (score, side_info);
- observation(): the current case's measurements (read-only);
- service_cost(): the measured cost in USD, or None;
- llm(instructions, input=None): ask the metric model; raises ModelError.
"""

from __future__ import annotations

from skynet._model import ModelError, llm
from skynet._reward import reward
from skynet._state import OBSERVATION_KEYS, observation

# Tracebacks and reports name it as users write it.
ModelError.__module__ = "skynet"


def service_cost() -> float | None:
    """The case's measured cost in US dollars, or None when not measured."""
    return observation()["cost_usd"]


__all__ = ["OBSERVATION_KEYS", "ModelError", "llm", "observation", "reward", "service_cost"]
