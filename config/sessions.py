"""Database sessions whose keys must look like keys Django makes (letters and digits).

Django's own check only asks for 8 characters or more, so a cookie holding a NUL or other
bytes PostgreSQL refuses went to the database and the request failed with a server error;
such a cookie is now simply no session (the visitor is signed out). With a shared cache
(CACHE_URL) settings use config.cached_sessions, the same store read through Redis."""

import re

from django.contrib.sessions.backends.db import SessionStore as DatabaseStore

_KEY = re.compile(r"[a-z0-9]{8,40}")


def valid_session_key(key) -> bool:
    return bool(key) and isinstance(key, str) and _KEY.fullmatch(key) is not None


class SessionStore(DatabaseStore):
    def _validate_session_key(self, key):
        return valid_session_key(key)
