"""Sessions read from the shared cache (Redis), kept in the database: used when CACHE_URL is set.

Every signed-in request reads its session; from Redis that is one GET instead of a query
(compiled by the ORM, planned and run by PostgreSQL). The database stays the record: a session
is written there first, and a cache miss reads it from there (and fills the cache).

Only with a cache every web process shares (CACHE_URL): with a per-process memory cache a
sign-out in one process would not be seen by the others, so settings keep the plain database
store (config.sessions) then.

Django's cached_db store catches a failed cache read, but a failed cache write after a miss,
a failed delete (sign-out) and `exists` (a new session key) raise, so with Redis down every
signed-in request would fail. Here every cache error falls back to the database (logged, as
config.ratelimit does). Cached entries live at most SESSION_CACHE_SECONDS: a sign-out while
Redis is down cannot remove the cached copy, and if Redis comes back with its data that copy
is believed for at most that long.
"""

import logging

from django.conf import settings
from django.contrib.sessions.backends.cached_db import SessionStore as CachedDBStore

from .sessions import valid_session_key

logger = logging.getLogger(__name__)


def _cache_failed(what: str, exc: Exception) -> None:
    logger.warning("session cache unavailable (%s): %s from the database only", exc.__class__.__name__, what)


class SessionStore(CachedDBStore):
    cache_key_prefix = "sess:"  # short: one key per signed-in visitor

    def _validate_session_key(self, key):
        return valid_session_key(key)

    def _cache_seconds(self, age: int) -> int:
        return max(0, min(age, settings.SESSION_CACHE_SECONDS))

    def load(self):
        if self.session_key is None:  # no (valid) cookie: nothing to read, and no key to make up
            return {}
        key = self.cache_key
        try:
            data = self._cache.get(key)
        except Exception as exc:  # noqa: BLE001 - redis.ConnectionError and friends
            _cache_failed("read", exc)
            return self._load_from_db(key, cache=False)
        if data is None:
            return self._load_from_db(key, cache=True)
        return data

    def _load_from_db(self, key: str, *, cache: bool) -> dict:
        s = self._get_session_from_db()
        if not s:
            return {}
        data = self.decode(s.session_data)
        if cache:
            try:
                self._cache.set(key, data, self._cache_seconds(self.get_expiry_age(expiry=s.expire_date)))
            except Exception as exc:  # noqa: BLE001
                _cache_failed("cache fill", exc)
        return data

    def exists(self, session_key):
        if not session_key:
            return False
        try:
            if (self.cache_key_prefix + session_key) in self._cache:
                return True
        except Exception as exc:  # noqa: BLE001
            _cache_failed("exists", exc)
        return super(CachedDBStore, self).exists(session_key)

    def save(self, must_create=False):
        super(CachedDBStore, self).save(must_create)  # the database first: the record
        try:
            self._cache.set(self.cache_key, self._session, self._cache_seconds(self.get_expiry_age()))
        except Exception as exc:  # noqa: BLE001
            _cache_failed("save", exc)

    def delete(self, session_key=None):
        super(CachedDBStore, self).delete(session_key)
        if session_key is None:
            if self.session_key is None:
                return
            session_key = self.session_key
        try:
            self._cache.delete(self.cache_key_prefix + session_key)
        except Exception as exc:  # noqa: BLE001
            logger.error(
                "session cache unavailable (%s): a deleted session stays cached for at most %s s",
                exc.__class__.__name__,
                settings.SESSION_CACHE_SECONDS,
            )
