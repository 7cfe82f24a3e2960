"""gunicorn for the production recipe (README.md, "Production"): behind nginx
(deploy/nginx.conf), which reads every request whole before it gets here.

    .venv/bin/gunicorn -c deploy/gunicorn.conf.py skynet_web.wsgi
"""

# Only nginx may connect: a gthread worker gives a thread to each request it reads, so a
# client that sends a byte at a time would hold one; nginx buffers those clients instead.
bind = "127.0.0.1:8000"
worker_class = "gthread"
workers = 4
# Threads, because a live panel's request waits up to 20 s for its row to change; keep
# SKYNET_LONG_POLLS_PER_PROCESS below this so the rest serve pages.
threads = 16
# Longer than nginx keeps an idle upstream connection, so gunicorn never closes one nginx
# is about to reuse.
keepalive = 30


def post_worker_init(worker):
    """REMOTE_ADDR is the client's, not nginx's, so the per-address limits (sign-ups,
    unknown API tokens) count each client apart rather than all as 127.0.0.1. nginx sets
    X-Forwarded-For to the one address it saw (it replaces any the client sent), and only
    a connection from this machine may name it."""
    app = worker.wsgi

    def client_address(environ, start_response):
        forwarded = environ.get("HTTP_X_FORWARDED_FOR", "").strip()
        if forwarded and environ.get("REMOTE_ADDR") == "127.0.0.1" and "," not in forwarded:
            environ["REMOTE_ADDR"] = forwarded
        return app(environ, start_response)

    worker.wsgi = client_address


# gunicorn's own logs (errors, and the access log nginx's duplicates) go through the
# project's filter: a request line with `?token=skn_...` is written masked.
accesslog = "-"
_REDACT = {"filters": ["redact"], "formatter": "generic"}
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact": {"()": "skynet_web.redaction.RedactSecrets"}},
    "formatters": {
        "generic": {
            "format": "%(asctime)s [%(process)d] [%(levelname)s] %(message)s",
            "datefmt": "[%Y-%m-%d %H:%M:%S %z]",
        }
    },
    "handlers": {
        "error_console": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
            **_REDACT,
        },
        "console": {"class": "logging.StreamHandler", "stream": "ext://sys.stdout", **_REDACT},
    },
    "root": {"level": "INFO", "handlers": ["console"]},
    "loggers": {
        # Not propagated: Django's root handler would write each line a second time.
        "gunicorn.error": {"level": "INFO", "handlers": ["error_console"], "propagate": False},
        "gunicorn.access": {"level": "INFO", "handlers": ["console"], "propagate": False},
    },
}
