"""Sessions read through the shared cache (config.cached_sessions, used when CACHE_URL is set):
no session query on a signed-in request, a sign-out seen by every process, and the database
read (no error) whenever Redis is unreachable."""

import os
import uuid

import pytest
from django.contrib.sessions.models import Session
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django_redis.cache import RedisCache

from config import cached_sessions

from .conftest import PASSWORD
from .fresh_settings import read_in_fresh_process

REDIS = os.environ.get("TEST_SESSION_REDIS", "redis://127.0.0.1:6379/12")
NOWHERE = "redis://127.0.0.1:9/0"  # nothing listens there


def _cache_settings(location: str, prefix: str) -> dict:
    return {
        "BACKEND": "django_redis.cache.RedisCache",  # as settings.py sets it
        "LOCATION": location,
        "KEY_PREFIX": prefix,  # this test's own keys: the Redis database may be shared
        "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 2, "SOCKET_TIMEOUT": 2},
    }


@pytest.fixture
def prefix():
    return f"t{uuid.uuid4().hex}"


@pytest.fixture
def redis_sessions(settings, prefix):
    settings.CACHES = {"default": _cache_settings(REDIS, prefix)}
    settings.SESSION_ENGINE = "config.cached_sessions"
    yield
    _delete_prefixed(prefix)


def _delete_prefixed(prefix):
    import redis

    client = redis.Redis.from_url(REDIS)
    keys = list(client.scan_iter(f"{prefix}:*"))
    if keys:
        client.delete(*keys)


@pytest.fixture
def redis_down(settings, prefix):
    settings.CACHES = {"default": _cache_settings(NOWHERE, prefix)}
    settings.SESSION_ENGINE = "config.cached_sessions"


def _other_process_cache(prefix) -> RedisCache:
    """A second client of the same Redis, as another gunicorn worker has."""
    return RedisCache(REDIS, {"KEY_PREFIX": prefix})


def _session_queries(captured) -> list[str]:
    return [q["sql"] for q in captured.captured_queries if Session._meta.db_table in q["sql"]]


def test_a_signed_in_request_reads_its_session_from_redis(redis_sessions, client, worker):
    assert client.login(username=worker.username, password=PASSWORD)
    with CaptureQueriesContext(connection) as captured:
        page = client.get(reverse("work"))
    assert page.status_code == 200 and worker.username in page.content.decode()
    assert _session_queries(captured) == []


def test_a_cache_miss_reads_the_database_and_fills_the_cache(redis_sessions, client, worker, prefix, settings):
    assert client.login(username=worker.username, password=PASSWORD)
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    other = _other_process_cache(prefix)
    other.delete(cached_sessions.SessionStore.cache_key_prefix + key)  # e.g. Redis restarted empty
    with CaptureQueriesContext(connection) as captured:
        assert client.get(reverse("work")).status_code == 200
    assert len(_session_queries(captured)) == 1
    assert other.get(cached_sessions.SessionStore.cache_key_prefix + key) is not None
    with CaptureQueriesContext(connection) as captured:
        assert client.get(reverse("work")).status_code == 200
    assert _session_queries(captured) == []


def test_a_sign_out_is_seen_by_every_process(redis_sessions, client, worker, prefix, settings):
    assert client.login(username=worker.username, password=PASSWORD)
    key = client.cookies[settings.SESSION_COOKIE_NAME].value

    def read_elsewhere():
        store = cached_sessions.SessionStore(key)
        store._cache = _other_process_cache(prefix)  # another web process's client
        return store.load()

    assert read_elsewhere().get("_auth_user_id") == str(worker.pk)
    assert client.post(reverse("logout")).status_code == 302
    assert read_elsewhere() == {}
    assert not Session.objects.filter(session_key=key).exists()


def test_the_cached_copy_lives_at_most_session_cache_seconds(redis_sessions, client, worker, prefix, settings):
    import redis

    settings.SESSION_CACHE_SECONDS = 120
    assert client.login(username=worker.username, password=PASSWORD)
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    cache = _other_process_cache(prefix)
    ttl = redis.Redis.from_url(REDIS).ttl(cache.make_key(cached_sessions.SessionStore.cache_key_prefix + key))
    assert 0 < ttl <= 120


def test_with_redis_down_sessions_work_from_the_database(redis_down, client, worker, caplog):
    """Sign in, pages, next task and sign out: no error, only logged warnings."""
    from .crowd_data import published_batch

    published_batch()
    assert client.login(username=worker.username, password=PASSWORD)
    page = client.get(reverse("work"))
    assert page.status_code == 200 and worker.username in page.content.decode()
    reply = client.post(reverse("work_next"))
    assert reply.status_code == 302 and "/task/" in reply["Location"]
    assert client.get(reply["Location"]).status_code == 200
    assert client.post(reverse("logout")).status_code == 302
    assert client.get(reverse("work")).status_code == 302  # signed out: to the login page
    assert not Session.objects.exists()
    assert "session cache unavailable" in caplog.text


def test_a_session_cached_before_redis_went_down_is_read_from_the_database(
    redis_sessions, client, worker, settings, prefix
):
    assert client.login(username=worker.username, password=PASSWORD)
    settings.CACHES = {"default": _cache_settings(NOWHERE, prefix)}
    with CaptureQueriesContext(connection) as captured:
        page = client.get(reverse("work"))
    assert page.status_code == 200 and worker.username in page.content.decode()
    assert len(_session_queries(captured)) == 1


@pytest.mark.parametrize("cookie", ["short", "x" * 20 + "\x00", "UPPERCASE0123456789", ""])
def test_a_cookie_that_is_not_a_key_is_no_session_and_no_lookup(db, redis_sessions, client, settings, cookie):
    client.cookies[settings.SESSION_COOKIE_NAME] = cookie
    with CaptureQueriesContext(connection) as captured:
        reply = client.get(reverse("work"))
    assert reply.status_code == 302 and _session_queries(captured) == []
    store = cached_sessions.SessionStore(cookie)
    assert store.load() == {} and store.session_key is None


def _engine(cache_url: str | None) -> str:
    return read_in_fresh_process(
        "settings.SESSION_ENGINE", drop={"CACHE_URL"}, **({"CACHE_URL": cache_url} if cache_url else {})
    )


@pytest.mark.slow
def test_sessions_go_through_the_cache_only_when_it_is_shared():
    assert _engine(REDIS) == "config.cached_sessions"
    assert _engine(None) == "config.sessions"  # the per-process memory cache: database sessions


def _statements(captured) -> list[str]:
    """The SQL statements besides the test's savepoints."""
    return [q["sql"] for q in captured.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))]


def test_the_next_task_request_reads_no_session_row_with_redis_sessions(redis_sessions, client, worker):
    """The user, their roles, the worker, the handout (the pick, the insert, the place count);
    the session comes from Redis. The task page: its three queries of content only (its header,
    for a page opened by its link, reads no account or role). No statement reads the session table."""
    from hits.views.worker import inhouse_worker

    from .crowd_data import published_batch

    published_batch()
    inhouse_worker(worker)  # the worker row exists after the first visit
    assert client.login(username=worker.username, password=PASSWORD)
    with CaptureQueriesContext(connection) as captured:
        reply = client.post(reverse("work_next"))
    assert reply.status_code == 302 and "/task/" in reply["Location"]
    assert len(_statements(captured)) == 6 and not _session_queries(captured), _statements(captured)
    with CaptureQueriesContext(connection) as captured:
        assert client.get(reply["Location"]).status_code == 200
    assert len(_statements(captured)) == 3 and not _session_queries(captured), _statements(captured)


@pytest.mark.django_db
def test_beat_deletes_the_expired_sessions_once_a_day():
    """Expired sessions stayed in the database for ever: nothing ran Django's clearsessions."""
    from datetime import timedelta

    from django.conf import settings
    from django.utils import timezone

    from hits.tasks import clear_expired_sessions

    (entry,) = [e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == clear_expired_sessions.name]
    assert entry["schedule"] == 86400.0
    now = timezone.now()
    Session.objects.create(session_key="e" * 32, session_data="", expire_date=now - timedelta(seconds=1))
    Session.objects.create(session_key="l" * 32, session_data="", expire_date=now + timedelta(days=1))
    clear_expired_sessions.apply().get()
    assert list(Session.objects.values_list("session_key", flat=True)) == ["l" * 32]
