"""History only: the migrations, labelled `metrics_app`, that created the first tables,
which the metrics, checks, jobs and skynet_web apps now own (their models keep the
`metrics_app_*` table names). Installed so that a database at any earlier migration still
migrates; no code imports it.
"""
