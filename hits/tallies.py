"""Running counts per batch kept by PostgreSQL: HITs, assignments by status, submissions per
minute, ledger entries and sums by kind (the `Tally` rows the dashboards read).

Statement-level triggers with transition tables append, per statement that inserts, updates or
deletes HITs, assignments or ledger entries, one row per (batch, what, minute) whose count
changed, so every code path is counted (ORM saves, bulk updates, COPY imports, cascades) and a
dashboard sums a few rows per batch instead of counting the batch's assignments. Writers only
insert: concurrent submissions never wait on a shared counter row. `compact` (a beat task)
folds each key's rows into one, drops per-minute rows older than `KEEP_MINUTES` and rows of
deleted batches. `rebuild` recounts from the rows themselves (the migration, and an operator
who bypassed the triggers, e.g. with `session_replication_role = replica`).

Other databases have no triggers: callers count the rows (scoring.results.dashboard keeps that path).
"""

import logging

from django.db import connection, transaction

from config import tally_sql
from hits.models import HIT, Assignment, Batch, LedgerEntry, Tally

log = logging.getLogger(__name__)

KEEP_MINUTES = 120  # per-minute submission counts kept (the dashboards read the last hour)
SUBMISSIONS = "submissions"
LEDGER = "ledger:"


def available() -> bool:
    return connection.vendor == "postgresql"


def _q(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _deltas(rows: str, sign: int) -> dict[str, str]:
    """SELECTs of (batch, what, minute, n, amount) deltas of a transition table, per source table."""
    minute = "floor(extract(epoch FROM submitted_at) / 60)::bigint"
    return {
        "assignment": (
            f"SELECT hit_id, status::text AS what, 0::bigint AS minute, {sign} AS n, 0::numeric AS amount FROM {rows}"
            f" UNION ALL SELECT hit_id, '{SUBMISSIONS}', {minute}, {sign}, 0 FROM {rows}"
            " WHERE submitted_at IS NOT NULL"
        ),
        "hit": f"SELECT batch_id, 'hits'::text AS what, 0::bigint AS minute, {sign} AS n, 0::numeric AS amount FROM {rows}",
        "ledger": (
            f"SELECT batch_id, '{LEDGER}' || kind AS what, 0::bigint AS minute, {sign} AS n,"
            f" {sign} * amount AS amount FROM {rows}"
        ),
    }


def _append(source: str, parts: list[str]) -> str:
    """INSERT of the summed deltas (assignments find their batch through their HIT)."""
    union = " UNION ALL ".join(parts)
    if source == "assignment":
        select = (
            f"SELECT h.batch_id, d.what, d.minute, sum(d.n), sum(d.amount) FROM ({union}) d"
            f" JOIN {_q(HIT)} h ON h.id = d.hit_id"
        )
        group = "h.batch_id, d.what, d.minute"
    else:
        select = f"SELECT d.batch_id, d.what, d.minute, sum(d.n), sum(d.amount) FROM ({union}) d"
        group = "d.batch_id, d.what, d.minute"
    return (
        f"INSERT INTO {_q(Tally)} (batch_id, what, minute, n, amount) {select}"
        f" GROUP BY {group} HAVING sum(d.n) <> 0 OR sum(d.amount) <> 0;"
    )


def _function(source: str) -> str:
    new, old = _deltas("new_rows", 1)[source], _deltas("old_rows", -1)[source]
    return tally_sql.function_sql(
        f"hits_tally_{source}", _append(source, [new]), _append(source, [new, old]), _append(source, [old])
    )


# What each source's triggers watch (a HIT never changes batch: its updates, e.g. every
# handout's open-places change, need no trigger).
ALL = ("insert", "update", "delete")
SOURCES = {"assignment": (Assignment, ALL), "hit": (HIT, ("insert", "delete")), "ledger": (LedgerEntry, ALL)}


def install_sql() -> list[str]:
    out = []
    for source, (model, operations) in SOURCES.items():
        out += [_function(source), *tally_sql.triggers_sql(f"hits_tally_{source}", _q(model), operations)]
    return out


def uninstall_sql() -> list[str]:
    return [
        sql for source, (model, _) in SOURCES.items() for sql in tally_sql.drop_sql(f"hits_tally_{source}", _q(model))
    ]


def install(cursor) -> None:
    for sql in install_sql():
        cursor.execute(sql)


def uninstall(cursor) -> None:
    for sql in uninstall_sql():
        cursor.execute(sql)


def _recount_sql(where: str) -> str:
    """INSERT of the exact counts of the batches matching `where` (on `b`), from their rows."""
    minute = "floor(extract(epoch FROM a.submitted_at) / 60)::bigint"
    recent = f"floor(extract(epoch FROM now()) / 60)::bigint - {KEEP_MINUTES}"
    return (
        f"INSERT INTO {_q(Tally)} (batch_id, what, minute, n, amount)"
        f" SELECT h.batch_id, 'hits', 0, count(*), 0 FROM {_q(HIT)} h JOIN {_q(Batch)} b"
        f" ON b.id = h.batch_id WHERE {where} GROUP BY h.batch_id"
        f" UNION ALL SELECT h.batch_id, a.status, 0, count(*), 0 FROM {_q(Assignment)} a"
        f" JOIN {_q(HIT)} h ON h.id = a.hit_id JOIN {_q(Batch)} b ON b.id = h.batch_id"
        f" WHERE {where} GROUP BY h.batch_id, a.status"
        f" UNION ALL SELECT h.batch_id, '{SUBMISSIONS}', {minute}, count(*), 0 FROM {_q(Assignment)} a"
        f" JOIN {_q(HIT)} h ON h.id = a.hit_id JOIN {_q(Batch)} b ON b.id = h.batch_id"
        f" WHERE {where} AND a.submitted_at IS NOT NULL AND {minute} >= {recent} GROUP BY h.batch_id, {minute}"
        f" UNION ALL SELECT e.batch_id, '{LEDGER}' || e.kind, 0, count(*), sum(e.amount) FROM {_q(LedgerEntry)} e"
        f" JOIN {_q(Batch)} b ON b.id = e.batch_id WHERE {where} GROUP BY e.batch_id, e.kind"
    )


def rebuild(batch_ids: list[int] | None = None) -> int:
    """Recount the tallies of some batches (all: None) from their rows; returns the rows written.
    Holds the counted tables against writes for the duration (an operator's repair, not a hot path)."""
    if not available():
        return 0
    where, params = ("b.id = ANY(%s)", [list(batch_ids)]) if batch_ids is not None else ("true", [])
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {_q(HIT)}, {_q(Assignment)}, {_q(LedgerEntry)} IN SHARE MODE")
        if batch_ids is None:
            cursor.execute(f"DELETE FROM {_q(Tally)}")
        else:
            cursor.execute(f"DELETE FROM {_q(Tally)} WHERE batch_id = ANY(%s)", [list(batch_ids)])
        cursor.execute(_recount_sql(where), params * 4)
        written = cursor.rowcount
    log.info("tallies rebuilt for %s: %d rows", "every batch" if batch_ids is None else f"batches {batch_ids}", written)
    return written


def compact() -> int:
    """Fold each key's rows into one; drop old per-minute rows and rows of deleted batches.
    Returns the rows removed. Only deletes and inserts: writers meanwhile append as usual."""
    if not available():
        return 0
    tally, batches = _q(Tally), _q(Batch)
    old = f"floor(extract(epoch FROM now()) / 60)::bigint - {KEEP_MINUTES}"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {tally} t WHERE (t.what = %s AND t.minute < {old})"
            f" OR NOT EXISTS (SELECT 1 FROM {batches} b WHERE b.id = t.batch_id)",
            [SUBMISSIONS],
        )
        dropped = cursor.rowcount
        folded = tally_sql.fold(cursor, tally, ["batch_id", "what", "minute"], ["n", "amount"])
    if dropped or folded:
        log.info("tallies compacted: %d rows folded, %d dropped", folded, dropped)
    return dropped + folded
