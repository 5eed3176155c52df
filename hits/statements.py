"""Written SQL statements of the crowd path, run anywhere, prepared on PostgreSQL.

On PostgreSQL each statement is parsed and planned once per connection (PREPARE, under a name
derived from its text) and then only EXECUTEd: planning the handout's, the task page's and the
submit's statements took 0.25-0.5 ms of the database's CPU each, running them 0.07-0.17 ms
(issue 14). A connection forgets its statements when it closes; Django's `connection_created`
signal starts each new one with none known, and a statement the server no longer knows (a
pooler that hands out another session) is prepared again once. `DB_PREPARED_STATEMENTS=0` runs
them unprepared (PgBouncer in transaction mode does not keep SQL-level prepared statements).
"""

import hashlib
import logging
import re
import weakref

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections, transaction
from django.db.backends.signals import connection_created

logger = logging.getLogger(__name__)

_PLACEHOLDER = re.compile(r"%\((\w+)\)s|%s|%%")
_UNKNOWN_STATEMENT = "26000"  # invalid_sql_statement_name: EXECUTE of a name not prepared


def numbered(sql: str, params) -> tuple[str, list]:
    """The statement with $1, $2, ... for its `%s` or `%(name)s` placeholders (a name used twice
    is one parameter), `%%` left as it is, and the parameters in that order."""
    if isinstance(params, dict):
        keys: list[str] = []

        def named(match: re.Match) -> str:
            if match.group(0) == "%%":
                return "%%"
            if match.group(1) not in keys:
                keys.append(match.group(1))
            return f"${keys.index(match.group(1)) + 1}"

        return _PLACEHOLDER.sub(named, sql), [params[key] for key in keys]
    count = 0

    def positional(match: re.Match) -> str:
        nonlocal count
        if match.group(0) == "%%":
            return "%%"
        count += 1
        return f"${count}"

    text = _PLACEHOLDER.sub(positional, sql)
    if count != len(params):
        raise ValueError(f"{count} placeholders for {len(params)} parameters")
    return text, list(params)


# The names prepared on each connection (a database wrapper per thread): forgotten with it.
_prepared: "weakref.WeakKeyDictionary[object, set[str]]" = weakref.WeakKeyDictionary()


def _forget_prepared(sender, connection, **kwargs) -> None:
    _prepared[connection] = set()


connection_created.connect(_forget_prepared, dispatch_uid="hits.statements.forget_prepared")


def _uses_prepared() -> bool:
    return connection.vendor == "postgresql" and settings.DB_PREPARED_STATEMENTS


def execute(cursor, sql: str, params) -> None:
    """Run one statement on `cursor`: prepared on PostgreSQL (see the module), as written
    elsewhere. The first run on a connection sends PREPARE and EXECUTE in one round trip."""
    if not _uses_prepared():
        cursor.execute(sql, params)
        return
    text, args = numbered(sql, params)
    name = "acu_" + hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
    known = _prepared.setdefault(connections[DEFAULT_DB_ALIAS], set())
    run = f"EXECUTE {name}({', '.join(['%s'] * len(args))})" if args else f"EXECUTE {name}"
    if name not in known:
        # Known from now on: PREPARE is not undone when the EXECUTE sent with it fails (or the
        # transaction around it rolls back), so the server keeps the statement either way.
        known.add(name)
        cursor.execute(f"PREPARE {name} AS {text}; {run}", args)
        return
    if connection.in_atomic_block:
        cursor.execute(run, args)
        return
    try:
        cursor.execute(run, args)
    except DatabaseError as exc:
        if getattr(exc.__cause__, "pgcode", None) != _UNKNOWN_STATEMENT:
            raise
        logger.warning("prepared statement %s was gone from the session: preparing it again", name)
        cursor.execute(f"PREPARE {name} AS {text}; {run}", args)


def fetch_one(sql: str, params) -> tuple | None:
    """Run one statement and return its first row. Outside a transaction it commits on its own
    (one round trip, no BEGIN/COMMIT); inside one it runs in a savepoint, so a refused write
    leaves the caller's transaction usable."""
    with connection.cursor() as cursor:
        if connection.in_atomic_block:
            with transaction.atomic():
                execute(cursor, sql, params)
        else:
            execute(cursor, sql, params)
        return cursor.fetchone()
