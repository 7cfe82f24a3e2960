"""Not yet built."""

from __future__ import annotations


def add(commands, common) -> None:
    return None
