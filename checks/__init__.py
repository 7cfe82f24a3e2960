"""The contract check's whole life in the web app: the Check and FeedbackReview rows, the
services that start checks and reviews, the execution the worker runs (imported only by
the tasks), their sweeps, selectors, presenters, the check panel, the model pickers of
every form that starts one, and the `check_metric` and `convert_metric` commands.

Built on jobs (the machinery every job shares) and the core; imports nothing of the web
side above it (pyproject's import contracts).
"""
