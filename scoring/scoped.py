"""SQL over the rows of one dataset or one round whose plan does not depend on the statistics.

NOTE: after a bulk load and before ANALYZE (or while a round grows faster than autovacuum
re-analyzes its tables) PostgreSQL may estimate one row for a round's HITs and join 66,000
assignments to them by a nested loop without an index: 52 s for the workers table of a
22,000-summary round (issue 14). These queries walk batch -> HITs -> assignments
(-> judgments) through LATERAL subqueries fenced by OFFSET 0 (the planner neither merges them
into one join nor pushes other conditions into them), each holding only the foreign key of
the level above: every level is an index lookup of that key, so a query costs the rows in its
scope whatever the estimates, never a scan of the whole table. Other filters apply above the
fences. PostgreSQL only; callers keep an ORM path for other databases.
"""

from django.db import connection

from annotation.models import ACU, Document, Reference, Summary
from hits.models import HIT, Assignment, Batch, Judgment, LedgerEntry, Worker

COUNTED = list(Assignment.COUNTED)


def available() -> bool:
    return connection.vendor == "postgresql"


def _t(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _rounds(dataset_id: int, batch_id: int | None, kind: str | None = None) -> tuple[str, list]:
    """The WHERE clause on the batches `b` in scope, and its parameters."""
    where, params = ["b.dataset_id = %s"], [dataset_id]
    if batch_id is not None:
        where.append("b.id = %s")
        params.append(batch_id)
    if kind is not None:
        where.append("b.kind = %s")
        params.append(kind)
    return " AND ".join(where), params


def _assignments() -> str:
    """FROM batches `b`, their HITs `h` and the HITs' assignments `a`."""
    return (
        f"{_t(Batch)} b"
        f" CROSS JOIN LATERAL (SELECT id, summary_id, reward FROM {_t(HIT)} WHERE batch_id = b.id OFFSET 0) h"
        " CROSS JOIN LATERAL (SELECT id, worker_id, status, confirmed, active_seconds, gold_correct, gold_total"
        f" FROM {_t(Assignment)} WHERE hit_id = h.id OFFSET 0) a"
    )


def _fetch(sql: str, params: list) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def judgments_query(dataset_id: int, batch_id: int | None = None) -> tuple[str, list]:
    """(judgment id, summary, ACU, worker, present as 0/1) of the counted assignments
    (submitted or approved, confirmed), excluded workers included."""
    where, params = _rounds(dataset_id, batch_id)
    sql = (
        f"SELECT j.id, h.summary_id, j.acu_id, a.worker_id, j.present::int FROM {_assignments()}"
        f" CROSS JOIN LATERAL (SELECT id, acu_id, present FROM {_t(Judgment)} WHERE assignment_id = a.id OFFSET 0) j"
        f" WHERE {where} AND a.status = ANY(%s) AND a.confirmed"
    )
    return sql, [*params, COUNTED]


def assignment_stats(dataset_id: int, batch_id: int | None = None) -> list[tuple]:
    """Per worker over the counted assignments: (worker, assignments, sum of rewards, gold
    correct, gold total, [active seconds that are set and not 0])."""
    return _fetch(*assignment_stats_query(dataset_id, batch_id))


def assignment_stats_query(dataset_id: int, batch_id: int | None = None) -> tuple[str, list]:
    where, params = _rounds(dataset_id, batch_id)
    return (
        "SELECT a.worker_id, count(*), sum(h.reward), coalesce(sum(a.gold_correct), 0),"
        " coalesce(sum(a.gold_total), 0), array_agg(a.active_seconds) FILTER (WHERE a.active_seconds <> 0)"
        f" FROM {_assignments()} WHERE {where} AND a.status = ANY(%s) AND a.confirmed GROUP BY a.worker_id",
        [*params, COUNTED],
    )


def progress_counts(dataset_id: int, batch_id: int | None, since) -> list[tuple]:
    """Per crowd batch in scope: (assignments per HIT, HITs, counted, assigned, rejected,
    submitted since `since`, HITs with a counted assignment); one aggregate per HIT."""
    return _fetch(*progress_query(dataset_id, batch_id, since))


def progress_query(dataset_id: int, batch_id: int | None, since) -> tuple[str, list]:
    where, params = _rounds(dataset_id, batch_id, Batch.Kind.CROWD)
    per_hit = (
        "SELECT count(*) FILTER (WHERE status = ANY(%s)) AS done, count(*) FILTER (WHERE status = %s) AS assigned,"
        " count(*) FILTER (WHERE status = %s) AS rejected, count(*) FILTER (WHERE submitted_at >= %s) AS recent"
        f" FROM {_t(Assignment)} WHERE hit_id = h.id"
    )
    return (
        "SELECT b.assignments_per_hit, count(h.id), sum(a.done)::bigint, sum(a.assigned)::bigint,"
        " sum(a.rejected)::bigint, sum(a.recent)::bigint, count(*) FILTER (WHERE a.done > 0)"
        f" FROM {_t(Batch)} b"
        f" LEFT JOIN LATERAL (SELECT id FROM {_t(HIT)} WHERE batch_id = b.id OFFSET 0) h ON true"
        f" CROSS JOIN LATERAL ({per_hit}) a WHERE {where} GROUP BY b.id, b.assignments_per_hit",
        [COUNTED, Assignment.Status.ASSIGNED, Assignment.Status.REJECTED, since, *params],
    )


def spend(dataset_id: int, batch_id: int | None) -> list[tuple]:
    """(kind, sum of amounts) of the ledger entries of the batches in scope."""
    where, params = _rounds(dataset_id, batch_id)
    return _fetch(
        f"SELECT e.kind, sum(e.amount) FROM {_t(Batch)} b"
        f" CROSS JOIN LATERAL (SELECT kind, amount FROM {_t(LedgerEntry)} WHERE batch_id = b.id OFFSET 0) e"
        f" WHERE {where} GROUP BY e.kind",
        params,
    )


def excluded_workers(dataset_id: int) -> list[str]:
    """External ids of the excluded workers with an assignment in the dataset, sorted in Python
    (code points, not the database's collation); walks from the (few) excluded workers to
    their assignments."""
    return sorted(row[0] for row in _fetch(*excluded_workers_query(dataset_id)))


def excluded_workers_query(dataset_id: int) -> tuple[str, list]:
    return (
        f"SELECT DISTINCT w.external_id FROM {_t(Worker)} w WHERE w.excluded AND EXISTS (SELECT 1 FROM"
        f" (SELECT hit_id FROM {_t(Assignment)} WHERE worker_id = w.id OFFSET 0) a"
        f" CROSS JOIN LATERAL (SELECT batch_id FROM {_t(HIT)} WHERE id = a.hit_id OFFSET 0) h"
        f" CROSS JOIN LATERAL (SELECT dataset_id FROM {_t(Batch)} WHERE id = h.batch_id OFFSET 0) b"
        " WHERE b.dataset_id = %s)",
        [dataset_id],
    )


def summary_rows(dataset_id: int) -> list[tuple]:
    """(summary, system, document, words, reference words, ACUs of the reference) of every
    summary of the dataset, by summary id."""
    return _fetch(
        "SELECT s.id, s.system_id, d.id, s.word_count, r.word_count, n.acus"
        f" FROM {_t(Document)} d"
        f" LEFT JOIN LATERAL (SELECT id, word_count FROM {_t(Reference)} WHERE document_id = d.id OFFSET 0) r ON true"
        f" CROSS JOIN LATERAL (SELECT count(*) AS acus FROM {_t(ACU)} WHERE reference_id = r.id) n"
        f" CROSS JOIN LATERAL (SELECT id, system_id, word_count FROM {_t(Summary)} WHERE document_id = d.id"
        " OFFSET 0) s WHERE d.dataset_id = %s ORDER BY s.id",
        [dataset_id],
    )
