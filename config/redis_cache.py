"""Django's Redis cache with one client object per connection pool.

`django.core.cache.backends.redis` builds a new `redis.Redis` (its response callbacks and
option dicts) for every get, set and delete; the session read of every signed-in request paid
for that construction (3.5% of a web worker's CPU in `bench/load_bench.py`). A client only
wraps its pool and is safe to share between threads, so one per pool serves every call; the
pool still hands out the connections (and starts anew in a forked process).
"""

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class _SharedClients(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients: dict[object, object] = {}  # pool -> its client

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)  # the parent's choice of server (reads: a replica)
        client = self._clients.get(pool)
        if client is None:
            client = self._clients[pool] = self._client(connection_pool=pool)
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = _SharedClients
