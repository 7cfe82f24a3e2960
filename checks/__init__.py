"""The contract check's whole life in the web app: the Check and FeedbackReview rows, the
users' allowances (limits), the services that start checks and reviews, the execution the
worker runs (imported only by tasks), the sweeps (maintenance), the worker's warm-sandbox
pool and heartbeats, selectors, presenters, the check panel's templates and the
`check_metric` command.

May import the core (contract, providers, dataset_files) and nothing of the web side above
it: metrics, submissions, docs_site and skynet_web (pyproject's import contracts).
"""
