"""The keys a TOML file of ours may hold (run.toml, skynet.toml): one that is not known
stops the command, naming the nearest known key, so a typo (`metric_call = 40`) can never
pass for a default."""

from __future__ import annotations

import difflib

from skynet_client.exits import USAGE, Stop
from skynet_client.words import _


def unknown_keys(data: dict, known: dict[str, tuple[str, ...]], what: str) -> None:
    """Stop at the first key of `data` that `known` does not list, naming the nearest."""
    for table, names in known.items():
        values = data if not table else data.get(table)
        if not isinstance(values, dict):
            continue
        for key in values:
            if key in names:
                continue
            where = f"[{table}] {key}" if table else key
            near = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
            if near:
                said = _("{file} has an unknown key {key}. Did you mean {near}?")
            else:
                said = _("{file} has an unknown key {key}. Known: {known}.")
            raise Stop(
                USAGE,
                said.format(
                    file=what, key=where, near=near[0] if near else "", known=", ".join(names)
                ),
            )
