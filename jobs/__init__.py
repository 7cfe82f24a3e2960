"""The machinery every job shares: checks, evaluations and runs alike.

What a worker's row holds (models.WorkerRow), sending a task (queue), the heartbeats that
tell a busy worker from a dead one, the sweeps every worker runs (each app registers its
own), the per-user allowances (limits), the live panels' share of waiting requests
(longpoll) and their announcements (notify), the worker's warm sandboxes (sandbox_pool),
the model catalogue and its gateways (model_choices, gateways), and the worker's start-up
(worker). It knows nothing of what a check, an evaluation or a run is.
"""
