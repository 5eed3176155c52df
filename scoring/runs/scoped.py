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
from hits.models import HIT, Assignment, Batch, JudgeRun, Judgment, Tally, Worker

COUNTED = list(Assignment.COUNTED)


def available() -> bool:
    return connection.vendor == "postgresql"


def _t(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _rounds(
    dataset_id: int, batch_id: int | None, kind: str | None = None, batch_ids: list[int] | None = None
) -> tuple[str, list]:
    """The WHERE clause on the batches `b` in scope (one round, or some), and its parameters."""
    where, params = ["b.dataset_id = %s"], [dataset_id]
    if batch_id is not None:
        where.append("b.id = %s")
        params.append(batch_id)
    if batch_ids is not None:
        where.append("b.id = ANY(%s)")
        params.append(batch_ids)
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


def judgments_query(
    dataset_id: int, batch_id: int | None = None, batch_ids: list[int] | None = None
) -> tuple[str, list]:
    """(judgment id, summary, ACU, worker, present as 0/1) of the counted assignments
    (submitted or approved, confirmed), excluded workers included; with `batch_ids`, of those
    rounds, each row led by its round's id."""
    where, params = _rounds(dataset_id, batch_id, batch_ids=batch_ids)
    lead = "b.id, " if batch_ids is not None else ""
    sql = (
        f"SELECT {lead}j.id, h.summary_id, j.acu_id, a.worker_id, j.present::int FROM {_assignments()}"
        f" CROSS JOIN LATERAL (SELECT id, acu_id, present FROM {_t(Judgment)} WHERE assignment_id = a.id OFFSET 0) j"
        f" WHERE {where} AND a.status = ANY(%s) AND a.confirmed"
    )
    return sql, [*params, COUNTED]


def assignment_stats(dataset_id: int, batch_id: int | None = None) -> list[tuple]:
    """Per worker over the counted assignments: (worker, assignments, sum of rewards, gold
    correct, gold total, [active seconds that are set and not 0])."""
    return _fetch(*assignment_stats_query(dataset_id, batch_id))


def assignment_stats_query(
    dataset_id: int, batch_id: int | None = None, batch_ids: list[int] | None = None
) -> tuple[str, list]:
    """With `batch_ids`: per round of those and worker, each row led by the round's id."""
    where, params = _rounds(dataset_id, batch_id, batch_ids=batch_ids)
    lead = "b.id, " if batch_ids is not None else ""
    return (
        f"SELECT {lead}a.worker_id, count(*), sum(h.reward), coalesce(sum(a.gold_correct), 0),"
        " coalesce(sum(a.gold_total), 0), array_agg(a.active_seconds) FILTER (WHERE a.active_seconds <> 0)"
        f" FROM {_assignments()} WHERE {where} AND a.status = ANY(%s) AND a.confirmed GROUP BY {lead}a.worker_id",
        [*params, COUNTED],
    )


def assignment_stats_by_round(dataset_id: int, batch_ids: list[int]) -> list[tuple]:
    """(round, worker, assignments, sum of rewards, gold correct, gold total, [active seconds])."""
    return _fetch(*assignment_stats_query(dataset_id, batch_ids=batch_ids))


def batch_tallies(dataset_id: int, batch_id: int | None, since_minute: int) -> list[tuple]:
    """Per batch in scope and tally key: (batch, kind, assignments per HIT, budget, what, count,
    amount), summed over the batch's tally rows (hits.tallies); per-minute submissions only
    from `since_minute` on. A batch without tallies gives one row with what None."""
    where, params = _rounds(dataset_id, batch_id)
    return _fetch(
        "SELECT b.id, b.kind, b.assignments_per_hit, b.budget, t.what, sum(t.n)::bigint, sum(t.amount)"
        f" FROM {_t(Batch)} b LEFT JOIN LATERAL (SELECT what, n, amount FROM {_t(Tally)}"
        " WHERE batch_id = b.id AND (minute = 0 OR minute >= %s) OFFSET 0) t ON true"
        f" WHERE {where} GROUP BY b.id, b.kind, b.assignments_per_hit, b.budget, t.what",
        [since_minute, *params],
    )


def round_choices(dataset_id: int, machine: str) -> list[dict]:
    """{pk, name} of the dataset's batches but its machine rounds, oldest first."""
    return [
        {"pk": pk, "name": name}
        for pk, name in _fetch(
            f"SELECT id, name FROM {_t(Batch)} WHERE dataset_id = %s AND kind <> %s ORDER BY created_at, id",
            [dataset_id, machine],
        )
    ]


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


def judge_runs(dataset_id: int) -> tuple[list[JudgeRun], int]:
    """(the newest finished run of each judge and model of the dataset, newest first; the
    number of its queued or running runs) in one written query (the ORM spent more compiling
    the two than running them): DISTINCT ON keeps the newest finished run of each judge and
    model, the window counts the busy runs before it does."""
    done = JudgeRun.Status.DONE
    statuses = [done, JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING]
    sql = (
        f"SELECT DISTINCT ON (judge, model, status = %s) *, count(*) FILTER (WHERE status <> %s) OVER () AS busy"
        f" FROM {_t(JudgeRun)} WHERE batch_id = ANY(ARRAY(SELECT id FROM {_t(Batch)} WHERE dataset_id = %s))"
        " AND status = ANY(%s) ORDER BY judge, model, status = %s DESC, created_at DESC, id DESC"
    )
    runs = list(JudgeRun.objects.raw(sql, [done, done, dataset_id, statuses, done]))
    latest = sorted((r for r in runs if r.status == done), key=lambda r: (r.created_at, r.pk), reverse=True)
    return latest, runs[0].busy if runs else 0
