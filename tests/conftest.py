"""Shared fixtures: the real PostgreSQL database (or the SQLite lane), named personas for each
role, data paths.

Two lanes (scripts/test.sh): the whole suite on PostgreSQL, then the tests marked `portable` on a
SQLite file (ALLOW_SQLITE_TESTS=1 and a sqlite DATABASE_URL), the embedded default of
scripts/run.sh. On SQLite the tests without the marker are deselected and those marked
`postgres_only` are skipped."""

import os
from pathlib import Path

import pytest
from django.db import connection

PROJECT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SHARED_DIR", PROJECT.parent / "shared"))
REALSUMM = SHARED / "data" / "realsumm"
REALSUMM_ROSE = SHARED / "data" / "realsumm.rose.jsonl"
DEMO_ROSE = PROJECT / "annotation" / "demo" / "realsumm-demo.rose.jsonl"

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
# between browser steps are still plain synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def _on_sqlite() -> bool:
    from django.conf import settings

    return settings.DATABASES["default"]["ENGINE"].endswith("sqlite3")


def pytest_collection_modifyitems(config, items):
    """The SQLite lane runs the portable tests; PostgreSQL-only ones inside them are skipped."""
    if not _on_sqlite():
        return
    kept = [item for item in items if item.get_closest_marker("portable")]
    config.hook.pytest_deselected(items=[item for item in items if item not in kept])
    items[:] = kept
    for item in kept:
        marker = item.get_closest_marker("postgres_only")
        if marker:
            item.add_marker(pytest.mark.skip(reason="PostgreSQL only: " + (marker.args[0] if marker.args else "")))


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """On SQLite the test database is a file beside the given one, not Django's in-memory
    default: WAL and the locking between connections are then the real ones. Each pytest-xdist
    process has its own file (pytest-django's suffix leaves SQLite alone)."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    if _on_sqlite() and not database.get("TEST", {}).get("NAME"):
        given = Path(database["NAME"])
        process = os.environ.get("PYTEST_XDIST_WORKER")
        name = f"test_{given.stem}_{process}{given.suffix}" if process else f"test_{given.name}"
        database.setdefault("TEST", {})["NAME"] = str(given.with_name(name))


@pytest.fixture(autouse=True, scope="session")
def _require_postgres(django_db_setup, django_db_blocker):
    """The suite runs against the real PostgreSQL; SQLite only if explicitly allowed."""
    with django_db_blocker.unblock():
        if connection.vendor != "postgresql" and not os.environ.get("ALLOW_SQLITE_TESTS"):
            pytest.exit("Tests need PostgreSQL: set DATABASE_URL (scripts/test.sh does).", returncode=2)


PASSWORD = "a-long-test-password"


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Rate-limit counters and pages' cached run data do not leak
    between tests (SQLite gives a rolled-back run's id again)."""
    from django.core.cache import caches

    for alias in caches:
        caches[alias].clear()
    yield


@pytest.fixture
def still_ratelimit_clock(monkeypatch):
    """The rate limits count in fixed windows that start on the clock: django-ratelimit's of a
    minute, config.ratelimit.count's (sessions per address) of PANEL_/PROLIFIC_ADDRESS_WINDOW, an
    hour. A test's few slow requests on a busy machine could straddle a window's end and start
    counting again, so both clocks stand still."""
    import time
    from types import SimpleNamespace

    from django_ratelimit import core

    from config import ratelimit

    now = time.time()
    monkeypatch.setattr(core, "time", SimpleNamespace(time=lambda: now))
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: now))


@pytest.fixture
def make_user(db):
    from hits.services.people import create_user_with_role

    def make(username: str, role: str):
        return create_user_with_role(username=username, password=PASSWORD, role=role)

    return make


@pytest.fixture
def lead(make_user):
    return make_user("lena-lead", "lead")


@pytest.fixture
def author(make_user):
    return make_user("arthur-author", "author")


@pytest.fixture
def worker(make_user):
    return make_user("wanda-worker", "worker")


@pytest.fixture
def outsider(db):
    """A signed-in user without any role."""
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("otto-outsider", password=PASSWORD)


@pytest.fixture
def realsumm_path():
    if not REALSUMM.is_dir():
        pytest.fail(f"REALSumm sample not found at {REALSUMM} (set SHARED_DIR)")
    return REALSUMM


@pytest.fixture(scope="module")
def _realsumm_for_the_module(django_db_setup, django_db_blocker):
    """REALSumm imported once per test module (1.3-2 s each time) inside a transaction rolled
    back after the module's last test. Each test runs in a savepoint inside it (pytest-django's
    `db`), so whatever a test changes is gone for the next. Not for transactional tests."""
    from django.db import transaction

    from hits.services.dataset_import import import_dataset

    if not REALSUMM.is_dir():
        pytest.fail(f"REALSumm sample not found at {REALSUMM} (set SHARED_DIR)")
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        import_dataset(REALSUMM, name="realsumm", fmt="pyramid")
    yield
    with django_db_blocker.unblock():
        transaction.set_rollback(True)
        outer.__exit__(None, None, None)


@pytest.fixture
def realsumm(_realsumm_for_the_module, db):
    """The REALSumm sample imported in pyramid format as dataset "realsumm" (shared in a module)."""
    from annotation.models import Dataset

    return Dataset.objects.get(name="realsumm")


@pytest.fixture
def eager_celery(settings):
    """Run Celery tasks in process for one test (the suite otherwise uses the real broker), in
    the request: a test that wants the embedded server's background threads sets
    LONG_TASKS_IN_BACKGROUND itself (a thread started after a commit never starts inside a test's
    transaction).

    Settings come from Django under the CELERY_ namespace, so the prefixed key is the one to set."""
    from config.celery import app

    settings.LONG_TASKS_IN_BACKGROUND = False

    previous = app.conf.task_always_eager
    app.conf.CELERY_TASK_ALWAYS_EAGER = True
    yield
    app.conf.CELERY_TASK_ALWAYS_EAGER = previous
