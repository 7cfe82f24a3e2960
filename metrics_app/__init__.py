"""History only: the migrations that created the tables `metrics`, `checks` and `skynet_web`
now own (their models keep these `metrics_app_*` table names). The app stays installed so
that a database at any earlier migration still migrates; no code imports it.
"""
