"""Metrics: a user's metric.py and its immutable versions, the starters, the playground's
editor and cases, the version list and diffs.

Starts checks through `checks` and may import docs_site (a docs example opens in the
playground) and the core; never submissions or skynet_web (pyproject's import contracts).
"""
