"""The models layer: which models exist and what they cost (catalogue), how to call them
(clients), the parent's answer to skynet.llm() with per-check limits (gateway, budget),
and the "review my feedback" call (review). Django-free: settings come in as arguments.
"""
