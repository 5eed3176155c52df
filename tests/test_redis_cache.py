"""The Redis cache backend (config/redis_cache.py): one client object per connection pool,
the pool of the right server for reads and writes, values as Django's backend stores them."""

import os
import pickle
import uuid

import pytest
import redis
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache

from config.redis_cache import RedisCache

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


def test_one_client_per_pool_serves_every_call(prefix):
    cache = RedisCache(FIRST, {"KEY_PREFIX": prefix})
    cache.set("a", {"x": 1}, 30)
    client = cache._cache.get_client(write=True)
    assert cache.get("a") == {"x": 1} and cache.add("n", 0, 30) and cache.incr("n") == 1
    assert cache._cache.get_client() is client and cache._cache.get_client(write=True) is client
    assert DjangoRedisCache(FIRST, {})._cache.get_client() is not DjangoRedisCache(FIRST, {})._cache.get_client()


def test_values_read_by_djangos_backend_and_back(prefix):
    ours, django = RedisCache(FIRST, {"KEY_PREFIX": prefix}), DjangoRedisCache(FIRST, {"KEY_PREFIX": prefix})
    ours.set("session", {"user": "7", "roles": ["worker"]}, 30)
    django.set("count", 41, 30)
    assert django.get("session") == {"user": "7", "roles": ["worker"]}
    assert ours.incr("count") == 42 and django.get("count") == 42
    ours.delete("session")
    assert django.get("session") is None


def test_writes_go_to_the_first_server_reads_to_the_others(prefix):
    cache = RedisCache([FIRST, SECOND], {"KEY_PREFIX": prefix})
    cache.set("k", "written", 30)
    assert redis.Redis.from_url(FIRST).exists(f"{prefix}:1:k") and not redis.Redis.from_url(SECOND).exists(
        f"{prefix}:1:k"
    )
    assert cache.get("k") is None  # read from the replica, which this test never filled
    redis.Redis.from_url(SECOND).set(f"{prefix}:1:k", pickle.dumps("replica"))
    assert cache.get("k") == "replica"
    write, read = cache._cache.get_client(write=True), cache._cache.get_client()
    assert write is not read and write.connection_pool is not read.connection_pool
    assert read.connection_pool.connection_kwargs["db"] == 13 and write.connection_pool.connection_kwargs["db"] == 12
