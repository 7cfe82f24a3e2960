"""The contract check: does a user's metric.py honour the score() contract?

Django-free. The engine (contract.engine) reports codes and parameters only;
words are rendered later by a translation layer. The `skynet` runtime package
(runtime/, installed by requirements.txt) is shared with the child processes.
"""
