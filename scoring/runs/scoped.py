"""Read-only SQL of scoring kept beside an ORM path: the judgment read whose plan does not
depend on the statistics (the only one; the agreement trend and `latest_run` are ORM reads).

NOTE: after a bulk load and before ANALYZE (or while a round grows faster than autovacuum
re-analyzes its tables) PostgreSQL may estimate one row for a round's HITs and join its
assignments and judgments by a nested loop comparing every pair. Measured side by side in a
10-dataset database with stale statistics (issue 25): the ORM's read of a 22,000-summary
round's 530,000 judgments ran more than 360 s (cancelled) against 3.0 s for `judgments_query`;
the whole dataset's 4.1 s against 2.2 s. `judgments_query` walks batch -> HITs -> assignments
-> judgments through LATERAL subqueries fenced by OFFSET 0 (the planner neither merges them
into one join nor pushes other conditions into them), each holding only the foreign key of
the level above: every level is an index lookup of that key, so the query costs the rows in
its scope whatever the estimates. Other filters apply above the fences. PostgreSQL only; the
portable path is `scoring.runs.data.judgment_rows_orm`, held to the same rows on PostgreSQL
by tests/test_scoped_reads.py (marked portable: it runs the portable path on SQLite too).
"""

from django.db import connection

from hits.models import HIT, Assignment, Batch, Judgment

COUNTED = list(Assignment.COUNTED)


def available() -> bool:
    return connection.vendor == "postgresql"


def _t(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _rounds(dataset_id: int, batch_id: int | None) -> tuple[str, list]:
    """The WHERE clause on the batches `b` in scope (the dataset's, or one round), and its parameters."""
    if batch_id is None:
        return "b.dataset_id = %s", [dataset_id]
    return "b.dataset_id = %s AND b.id = %s", [dataset_id, batch_id]


def _assignments() -> str:
    """FROM batches `b`, their HITs `h` and the HITs' assignments `a`."""
    return (
        f"{_t(Batch)} b"
        f" CROSS JOIN LATERAL (SELECT id, summary_id FROM {_t(HIT)} WHERE batch_id = b.id OFFSET 0) h"
        " CROSS JOIN LATERAL (SELECT id, worker_id, status, confirmed"
        f" FROM {_t(Assignment)} WHERE hit_id = h.id OFFSET 0) a"
    )


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
