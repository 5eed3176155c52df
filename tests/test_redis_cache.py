"""The shared cache in production form (CACHE_URL set: django-redis): a value one web
process writes, another reads; with several addresses in CACHE_URL, writes go to the first
and reads to the others (replicas)."""

import json
import os
import pickle
import uuid

import pytest
import redis
from django_redis.cache import RedisCache

from .fresh_settings import read_in_fresh_process

FIRST = os.environ.get("TEST_SESSION_REDIS", "redis://127.0.0.1:6379/12")
SECOND = FIRST.rsplit("/", 1)[0] + "/13"


@pytest.fixture
def prefix():
    key = f"t{uuid.uuid4().hex}"
    yield key
    for url in (FIRST, SECOND):
        client = redis.Redis.from_url(url)
        keys = list(client.scan_iter(f"{key}:*"))
        if keys:
            client.delete(*keys)


def _production_cache(cache_url: str, prefix: str) -> RedisCache:
    """A cache as a web process started with CACHE_URL builds it (one per process)."""
    made = json.loads(read_in_fresh_process("json.dumps(settings.CACHES['default'])", CACHE_URL=cache_url))
    assert made["BACKEND"] == "django_redis.cache.RedisCache"
    return RedisCache(made["LOCATION"], {**made, "KEY_PREFIX": prefix})


def test_values_written_by_one_process_are_read_by_another(prefix):
    one = _production_cache(FIRST, prefix)
    other = RedisCache(FIRST, {"KEY_PREFIX": prefix})  # another process's client
    one.set("session", {"user": "7", "roles": ["worker"]}, 30)
    other.set("count", 41, 30)
    assert other.get("session") == {"user": "7", "roles": ["worker"]}
    assert one.incr("count") == 42 and other.get("count") == 42
    one.delete("session")
    assert other.get("session") is None


def test_writes_go_to_the_first_server_reads_to_the_others(prefix):
    cache = _production_cache(f"{FIRST},{SECOND}", prefix)
    cache.set("k", "written", 30)
    assert redis.Redis.from_url(FIRST).exists(f"{prefix}:1:k") and not redis.Redis.from_url(SECOND).exists(
        f"{prefix}:1:k"
    )
    assert cache.get("k") is None  # read from the replica, which this test never filled
    redis.Redis.from_url(SECOND).set(f"{prefix}:1:k", pickle.dumps("replica"))
    assert cache.get("k") == "replica"
