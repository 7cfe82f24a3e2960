"""The submit wizard: drafts, uploaded datasets, the gate (rules), runs and their bundle.

May import checks (a draft's gate is a contract check), metrics (a draft may use a saved
version) and the core; never skynet_web (pyproject's import contracts).
"""
