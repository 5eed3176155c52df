"""Settings: the embedded default needs nothing configured; the suite uses PostgreSQL and Redis."""

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection

from .fresh_settings import PROJECT, read_in_fresh_process


@pytest.mark.slow
def test_embedded_default_is_sqlite_with_in_process_tasks():
    out = read_in_fresh_process(
        "json.dumps([settings.DATABASES['default']['ENGINE'], settings.CELERY_TASK_ALWAYS_EAGER,"
        " bool(settings.SECRET_KEY), settings.DEBUG])",
        drop={"DATABASE_URL", "CELERY_BROKER_URL", "SECRET_KEY", "DEBUG"},
    )
    engine, eager, has_key, debug = json.loads(out)
    assert engine == "django.db.backends.sqlite3"
    assert eager is True and has_key is True and debug is False


@pytest.mark.django_db
def test_suite_runs_on_postgresql():
    assert connection.vendor == "postgresql"


@pytest.mark.slow
@pytest.mark.django_db
def test_postgresql_connections_run_without_jit_unless_asked():
    """JIT compiled scoring's reads for longer than they ran (issue 14): off on every connection."""
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone()[0] == "off"
    options = "repr(settings.DATABASES['default'].get('OPTIONS', {}).get('options', ''))"
    assert read_in_fresh_process(options) == "'-c jit=off'"
    assert read_in_fresh_process(options, DB_JIT="1") == "''"
    with_url = settings.DATABASES["default"]
    url = f"postgres://{with_url['USER']}@{with_url['HOST']}:{with_url['PORT']}/x?options=-c%20work_mem%3D64MB"
    assert read_in_fresh_process(options, DATABASE_URL=url) == "'-c work_mem=64MB -c jit=off'"


def test_celery_broker_is_the_real_redis():
    from config.celery import app

    assert settings.CELERY_BROKER_URL.startswith("redis://")
    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=2)
        assert conn.connected
    # Every task time limit stays below the broker's visibility timeout, the judge runs' own too
    # (a learned judge with its cross-encoder trains longer than the other tasks may run).
    from scoring.machine.judges.learned import LearnedJudge
    from scoring.tasks import run_judge

    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    assert visibility > settings.CELERY_TASK_TIME_LIMIT
    assert visibility > run_judge.time_limit == settings.JUDGE_TASK_TIME_LIMIT > settings.CELERY_TASK_TIME_LIMIT
    assert run_judge.soft_time_limit < run_judge.time_limit
    assert LearnedJudge().time_budget == settings.JUDGE_TASK_TIME_LIMIT - 120 < run_judge.soft_time_limit


@pytest.mark.parametrize(
    "variable, value, accepted",
    [
        ("DEBUG", "ture", "true"),
        ("DB_CONN_MAX_AGE", "sixty", "whole number"),
        ("LOG_LEVEL", "LOUD", "DEBUG, INFO"),
        # A task limit past the visibility timeout: the task would be handed to a second worker.
        ("CELERY_TASK_TIME_LIMIT", "7200", "CELERY_VISIBILITY_TIMEOUT=3600"),
        ("JUDGE_TASK_TIME_LIMIT", "5400", "CELERY_VISIBILITY_TIMEOUT=3600"),
        ("CELERY_VISIBILITY_TIMEOUT", "1200", "CELERY_TASK_TIME_LIMIT=1800"),
    ],
)
@pytest.mark.slow
def test_an_unreadable_setting_stops_start_up_with_a_message(variable, value, accepted):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", variable: value}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=PROJECT, env=env, capture_output=True, text=True
    )
    assert result.returncode != 0
    message = result.stderr.strip()
    assert "Traceback" not in message
    assert variable in message and accepted in message and value in message


def test_readable_settings_are_taken(monkeypatch):
    from config.env import env_bool, env_int

    monkeypatch.setenv("X_FLAG", " Yes ")
    monkeypatch.setenv("X_COUNT", "12")
    monkeypatch.setenv("X_OFF", "0")
    assert env_bool("X_FLAG") is True and env_bool("X_OFF", True) is False and env_int("X_COUNT", 3) == 12


def test_the_api_settings_are_not_overwritten():
    assert settings.REST_FRAMEWORK["DEFAULT_PERMISSION_CLASSES"] == [
        "config.api_permissions.IsLead",  # first: an anonymous caller gets 401 before its query is read
        "config.api_query.KnownQueryParameters",
    ]
    assert (
        "rest_framework.authentication.TokenAuthentication" in settings.REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"]
    )


@pytest.mark.slow
@pytest.mark.parametrize("deployed", [{"DOMAIN": "acu.example.org"}, {"TRUSTED_PROXIES": "10.0.0.5"}])
def test_a_deployed_site_without_a_secret_key_does_not_start(deployed):
    """Without SECRET_KEY each process made its own key: gunicorn's three workers signed sessions
    with three keys, and a lead who signed in was signed out on most of the next requests."""
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    env.update(deployed, DJANGO_SETTINGS_MODULE="config.settings")
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=PROJECT, env=env, capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and "SECRET_KEY is not set" in result.stderr
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=PROJECT,
        env={**env, "SECRET_KEY": "x" * 50},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_the_celery_worker_and_beat_log_by_the_settings():
    """LOG_LEVEL=WARNING left the worker logging every task at INFO, and its lines went through a
    handler of Celery's instead of settings.LOGGING's (no token redaction): Celery's logging set-up
    (as the worker and beat run it, with --loglevel INFO) now leaves the root logger as Django set it."""
    out = read_in_fresh_process(
        "(__import__('config.celery').celery.app.log.setup(loglevel='INFO'), "
        "[logging.getLevelName(logging.getLogger().level), "
        "[type(f).__name__ for h in logging.getLogger().handlers for f in h.filters]])[1]",
        LOG_LEVEL="WARNING",
    )
    assert out == "['WARNING', ['RedactTokensFilter']]"
