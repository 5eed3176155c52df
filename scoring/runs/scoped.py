"""Read-only SQL of scoring kept beside an ORM path: the judgment read whose plan does not
depend on the statistics, the agreement trend of the dashboards (and `latest_run`).

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

import json

from django.db import connection

from hits import versions
from hits.models import HIT, Assignment, Batch, Judgment
from scoring.models import ScoringRun
from scoring.results import page_data

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


def alpha_trend(dataset_id: int, batch_id: int | None, kind: str, status: str, limit: int) -> list[dict]:
    """The newest `limit` runs of a scope, oldest first, as {run, at, acu_level, summary_level,
    judgments}: built as one JSON text in the query (numbers from the alpha column, or the
    outputs of a run stored before it), parsed at once. Kept beside the ORM path
    (`scoring.results.dashboard.alpha_trend`) as a read-only projection: with the ORM's
    (200 rows, three JSON casts) the overview page took 30-34 ms of CPU against 17.5 ms
    (1.8-1.9x, issue 25's bar 1.5x), side by side on the bench database."""
    scope = "batch_id = %s" if batch_id else "batch_id IS NULL"
    sql = (
        "SELECT coalesce(json_agg(json_build_object('run', id, 'at', started_at,"
        " 'acu_level', (a ->> 'acu_level')::float8, 'summary_level', (a ->> 'summary_level')::float8,"
        " 'judgments', (inputs ->> 'judgments')::bigint) ORDER BY started_at, id), '[]')::text"
        " FROM (SELECT id, started_at, inputs, coalesce(alpha, outputs -> 'alpha') AS a"
        f" FROM {_t(ScoringRun)} WHERE dataset_id = %s AND {scope} AND kind = %s AND status = %s"
        " ORDER BY started_at DESC, id DESC LIMIT %s) r"
    )
    params = [dataset_id, *([batch_id] if batch_id else []), kind, status, limit]
    return json.loads(_fetch(sql, params)[0][0])


def latest_run(dataset_id: int, batch_id: int | None, kind: str, parts: tuple[str, ...]) -> ScoringRun | None:
    """The latest finished run of a scope (a Dawid-Skene scores run left out) with only the
    named parts of its outputs: written SQL, as the ORM spends several times the query's own
    time compiling this one on every page. "alpha" is read from its column; the parts of a
    page from that page's stored text (`scoring.results.page_data`) when the run has it, its charts
    then in `run.page_charts`; the scope's version of the judgments now in `run.current_version`."""
    columns = ", ".join(
        f"r.{connection.ops.quote_name(f.column)}"
        for f in ScoringRun._meta.concrete_fields
        if f.name not in ("outputs", "digest", *page_data.PAGES)
    )
    scope = "batch_id = %s" if batch_id else "batch_id IS NULL"
    rest = [p for p in parts if p != "alpha"]
    page = page_data.page_for(parts)
    # NOTE: jsonb_each reads (detoasts) the whole value: only when parts besides alpha are asked for
    # and no stored page holds them (COALESCE evaluates its second argument only for an empty page).
    # The digest column (the outputs without "summaries") when it has every part asked for.
    source = "r.outputs" if "summaries" in rest else "coalesce(r.digest, r.outputs)"
    rest_sql = (
        f"(SELECT jsonb_object_agg(key, value) FROM jsonb_each({source}) WHERE key = ANY(%s))::text"
        if rest
        else "NULL::text"
    )
    page_sql = f"r.{connection.ops.quote_name(page)} <> ''" if page else "false"
    if page:
        rest_sql = f"coalesce(nullif(r.{connection.ops.quote_name(page)}, ''), {rest_sql})"
    alpha_sql = "coalesce(r.alpha, r.outputs -> 'alpha')::text" if "alpha" in parts else "NULL::text"
    dawid_skene = ' AND NOT parameters @> \'{"aggregation": "dawid-skene"}\'' if kind == ScoringRun.Kind.SCORES else ""
    # The scope's current version of the judgments (hits.versions) in the same statement: the page's
    # staleness check then costs no query of its own.
    version_sql, version_params = versions.current_query(dataset_id, batch_id)
    sql = (
        f"SELECT {columns}, {alpha_sql} AS part_alpha, {rest_sql} AS part_rest, {page_sql} AS part_page,"
        f" ({version_sql})::bigint AS part_version"
        f" FROM {_t(ScoringRun)} r WHERE r.id = (SELECT id FROM {_t(ScoringRun)}"
        f" WHERE dataset_id = %s AND {scope} AND kind = %s AND status = %s{dawid_skene}"
        " ORDER BY started_at DESC, id DESC LIMIT 1)"
    )
    params = [
        *([rest] if rest else []),
        *version_params,
        dataset_id,
        *([batch_id] if batch_id else []),
        kind,
        ScoringRun.Status.DONE,
    ]
    run = next(iter(ScoringRun.objects.raw(sql, params)), None)
    if run is None:
        return None
    read = json.loads(run.part_rest) if rest and run.part_rest else {}
    if run.part_page:
        run.page_charts = read.pop(page_data.CHARTS, {})
    run.current_version = run.part_version
    if "alpha" in parts and run.part_alpha is not None:
        read["alpha"] = json.loads(run.part_alpha)
    run.outputs = {p: read[p] for p in parts if read.get(p) is not None}
    return run
