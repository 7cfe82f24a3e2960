"""The playground and its checks: metrics and their versions, the starters, the editor's
views, and the contract check's whole life in the web app (limits, services, the Celery
tasks, the worker's warm-sandbox pool and heartbeats, sweeps), feedback reviews and the
`check_metric` command.

May import the core (contract, providers, dataset_files) and docs_site (the docs' examples
open in the playground); never submissions or skynet_web (see pyproject's import contracts).
"""
