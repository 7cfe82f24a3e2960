"""The submit wizard: drafts, uploaded datasets, the gate (rules), runs and their bundle.

May import metrics_app (a draft's check is a contract check), docs_site and the core;
never skynet_web (see pyproject's import contracts).
"""
