"""Foreign keys of a bulk COPY checked once per key for the whole set of new rows, as
pg_restore does, instead of one deferred trigger lookup per row at the commit.

`checked_as_a_set(model)` wraps ONE statement that inserts into the model's table (the COPY of
an import's judgments): inside it the transaction runs with `session_replication_role =
replica`, so PostgreSQL queues no per-row foreign-key trigger; afterwards the role is restored
and every foreign key of the table is verified for the new rows (an id range of the table's
sequence) with one anti-join each. An orphan raises DatasetImportError, which rolls back the
whole import. Where that cannot be done safely the block runs with the normal per-row checks:
the database role may not set the parameter (neither a superuser nor, on PostgreSQL 15+,
granted SET on it), or the table has triggers that replica mode would skip (user triggers,
deferrable unique constraints) or a foreign key over several columns.
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connection
from psycopg2.extensions import TRANSACTION_STATUS_INERROR

from .errors import DatasetImportError

logger = logging.getLogger(__name__)
PARAMETER = "session_replication_role"
_logged: set[str] = set()


@dataclass(frozen=True)
class ForeignKey:
    name: str
    column: str
    target_table: str
    target_column: str


def can_set_replication_role() -> bool:
    """Whether this connection's role may set session_replication_role: a superuser, or on
    PostgreSQL 15+ a role granted SET on the parameter."""
    with connection.cursor() as cursor:
        if connection.pg_version >= 150000:
            cursor.execute("SELECT has_parameter_privilege(%s, 'SET')", [PARAMETER])
        else:
            cursor.execute("SELECT current_setting('is_superuser') = 'on'")
        return bool(cursor.fetchone()[0])


def skipped_triggers(table: str) -> list[str]:
    """The enabled triggers on `table` that replica mode would skip and that are not the
    checks of its own foreign keys (which the anti-joins replace): user triggers, those of
    deferrable unique constraints. (Triggers of keys that point AT the table fire only on
    UPDATE and DELETE, which an insert never runs; they are not listed.)"""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT t.tgname FROM pg_trigger t LEFT JOIN pg_constraint c ON c.oid = t.tgconstraint
            WHERE t.tgrelid = %s::regclass AND t.tgenabled <> 'D'
              AND NOT (c.contype IS NOT DISTINCT FROM 'f' AND (c.conrelid = t.tgrelid OR c.confrelid = t.tgrelid))
            ORDER BY t.tgname
            """,
            [table],
        )
        return [name for (name,) in cursor.fetchall()]


def foreign_keys(table: str) -> list[ForeignKey] | None:
    """Every foreign key constraint of `table` as the database holds it (not as the models
    declare it), or None if one spans several columns."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.conname, array_length(c.conkey, 1),
                   (SELECT attname FROM pg_attribute WHERE attrelid = c.conrelid AND attnum = c.conkey[1]),
                   c.confrelid::regclass::text,
                   (SELECT attname FROM pg_attribute WHERE attrelid = c.confrelid AND attnum = c.confkey[1])
            FROM pg_constraint c WHERE c.conrelid = %s::regclass AND c.contype = 'f' ORDER BY c.conname
            """,
            [table],
        )
        rows = cursor.fetchall()
    if any(width != 1 for _, width, _, _, _ in rows):
        return None
    return [ForeignKey(name, column, target, target_column) for name, _, column, target, target_column in rows]


def _fall_back(reason: str) -> None:
    if reason not in _logged:  # once per process and reason: every import would say the same
        _logged.add(reason)
        logger.warning("foreign keys checked per row (the slower path): %s", reason)


def _plan(table: str) -> list[ForeignKey] | None:
    """The keys to verify after the COPY, or None for the per-row path (logged once)."""
    if not connection.in_atomic_block:  # SET LOCAL needs a transaction, a refusal its rollback
        _fall_back("the insert runs outside a transaction")
        return None
    if not can_set_replication_role():
        _fall_back(f"the database role may not set {PARAMETER}")
        return None
    triggers = skipped_triggers(table)
    if triggers:
        _fall_back(f"{table} has triggers replica mode would skip: {', '.join(triggers)}")
        return None
    keys = foreign_keys(table)
    if keys is None:
        _fall_back(f"{table} has a foreign key over several columns")
        return None
    return keys


def orphans(table: str, pk: str, key: ForeignKey, first: int, last: int) -> tuple[int, int | None]:
    """How many distinct values of `key` among the rows of `table` whose primary key `pk` is
    first..last name no row of its target table, and the smallest of them."""
    q = connection.ops.quote_name
    with connection.cursor() as cursor:
        # The distinct values first: a few thousand lookups, whatever plan the (stale) statistics
        # of the just-filled table suggest.
        cursor.execute(
            f"""
            SELECT count(*), min(v) FROM (
                SELECT DISTINCT {q(key.column)} AS v FROM {q(table)}
                WHERE {q(pk)} BETWEEN %s AND %s AND {q(key.column)} IS NOT NULL
            ) new
            WHERE NOT EXISTS (SELECT 1 FROM {key.target_table} t WHERE t.{q(key.target_column)} = new.v)
            """,
            [first, last],
        )
        count, smallest = cursor.fetchone()
    return count, smallest


def _sequence(table: str, pk: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [connection.ops.quote_name(table), pk])
        return cursor.fetchone()[0]


def _in_failed_transaction() -> bool:
    return connection.connection.info.transaction_status == TRANSACTION_STATUS_INERROR


@contextmanager
def checked_as_a_set(model) -> Iterator[None]:
    """Run the one insert into the model's table in the block with its foreign keys checked
    once per key over all the new rows (see the module's docstring); nothing else may write
    inside the block, since no trigger fires there. The primary key must come from the
    table's sequence (the rows get no ids of their own).

    NOTE: the anti-joins take no lock on the rows they find; the per-row checks take a KEY
    SHARE lock so that no other transaction deletes them before the commit. An import's
    judgments refer only to rows its own transaction wrote, which no other transaction sees."""
    if connection.vendor != "postgresql":
        yield
        return
    table, pk = model._meta.db_table, model._meta.pk.column
    keys = _plan(table)
    if keys is None:
        yield
        return
    sequence = _sequence(table, pk)
    with connection.cursor() as cursor:
        # Every row the block inserts takes an id after this one (other sessions' rows in the
        # range are checked too, harmlessly: theirs are committed and valid, or invisible).
        cursor.execute("SELECT nextval(%s::regclass), current_setting(%s)", [sequence, PARAMETER])
        first, role = cursor.fetchone()
        cursor.execute("SELECT set_config(%s, 'replica', true)", [PARAMETER])  # SET LOCAL
    try:
        yield
    except BaseException:
        # A failed COPY aborts the transaction, whose rollback undoes the SET LOCAL; an error
        # before it leaves the transaction usable, and it must not go on without triggers.
        if not _in_failed_transaction():
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config(%s, %s, true)", [PARAMETER, role])
        raise
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, %s, true), currval(%s::regclass)", [PARAMETER, role, sequence])
        last = cursor.fetchone()[1]
    for key in keys:
        count, smallest = orphans(table, pk, key, first, last)
        if count:
            raise DatasetImportError(
                f"{count} {key.column} value(s) of the new {table} rows name no row of {key.target_table} "
                f"(the smallest: {smallest}); nothing was imported"
            )
