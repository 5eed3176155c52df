"""The lead's figures (progress, spend) on 2 million assignments: the selector every page reads
(`hits.selectors.figures`) with the batches' running counts that PostgreSQL triggers keep
(`hits.tallies`) against the same selector counting the rows (its path on other databases),
side by side in one run.

Builds its own PostgreSQL database (`acu_bench_tallies`; `--database-url` to change): one dataset
of `--batches` crowd batches (default 8) of HITs with 3 places each, `--assignments` assignments
(default 2,000,000) over 3,000 workers: 72% approved, 14% submitted (over the last 3 hours), 7%
rejected, 6.9% expired, 0.1% assigned (as many as workers at work; a fifth of them past their
deadline), a reward in the ledger per approved assignment; bulk-inserted by INSERT ... SELECT (no
ORM objects; the triggers count them as they would a COPY), then compacted and ANALYZEd.

Timed (median and worst of `--repeat` calls, after one warm-up, in this process):
- the dashboard of the whole dataset (`figures.scope_figures` of its batches: progress and spend),
- one batch's page figures (`figures.scope_figures([batch])`, a quarter million assignments),
- the batch list (`figures.batch_figures` of every batch),
each with the running counts and counting the rows.

Run: .venv/bin/python bench/tally_bench.py [--assignments 2000000] [--batches 8] [--repeat 7]
     [--database-url URL] [--keep] [--reuse]
`--keep` keeps the database; `--reuse` measures a kept one (no build).
"""

import argparse
import os
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/acu_bench_tallies"
PER_HIT = 3


def build(assignments: int, batches: int, log=print) -> None:
    from django.db import connection

    hits_per_batch = -(-assignments // (batches * PER_HIT))
    t0 = time.perf_counter()
    with connection.cursor() as c:
        c.execute(
            "INSERT INTO annotation_dataset (name, description, source_format, length_alpha, guidelines,"
            " created_at) VALUES ('bench-tallies', '', 'rose', 2.0, '', now()) RETURNING id"
        )
        dataset = c.fetchone()[0]
        c.execute("INSERT INTO annotation_system (dataset_id, name) VALUES (%s, 's') RETURNING id", [dataset])
        system = c.fetchone()[0]
        c.execute(
            "INSERT INTO annotation_document (dataset_id, external_id, position, source)"
            " SELECT %s, 'd' || g, g, '' FROM generate_series(1, %s) g",
            [dataset, hits_per_batch],
        )
        c.execute(
            "INSERT INTO annotation_summary (document_id, system_id, text, word_count)"
            " SELECT id, %s, '', 1 FROM annotation_document WHERE dataset_id = %s",
            [system, dataset],
        )
        c.execute(
            "INSERT INTO hits_batch (dataset_id, name, kind, provider, status, assignments_per_hit,"
            " lifetime_seconds, assignment_duration_seconds, auto_approve_seconds, gold_share,"
            " target_hourly_rate, budget, title, description, created_at, provider_config, last_error,"
            " allocation, allocation_min, allocation_max, allocation_threshold, priority)"
            " SELECT %s, 'b' || g, 'crowd', 'inhouse', 'published', 3, 604800, 3600, 259200, 0, 12,"
            " 500000, 't', 'd', now(), '{}', '', 'fixed', 2, 5, 0.9, 0 FROM generate_series(1, %s) g",
            [dataset, batches],
        )
        c.execute(
            "INSERT INTO hits_hit (batch_id, summary_id, max_assignments, acu_count, reward, external_id,"
            " open_places, settled, extra_places, turn, priority)"
            " SELECT b.id, s.id, 3, 10, 0.30, '', 0, false, 0, 0, 0 FROM hits_batch b"
            " CROSS JOIN annotation_summary s JOIN annotation_document d ON d.id = s.document_id"
            " WHERE b.dataset_id = %s AND d.dataset_id = %s",
            [dataset, dataset],
        )
        c.execute(
            "INSERT INTO hits_worker (provider, external_id, created_at, block_reason, excluded)"
            " SELECT 'inhouse', 'w' || g, now(), '', false FROM generate_series(1, 3000) g"
        )
        c.execute("SELECT min(id) FROM hits_worker")
        first_worker = c.fetchone()[0]
        # Status by a hash of (HIT, slot): 72% approved, 14% submitted, 7% rejected, 6.9% expired, 0.1% assigned.
        c.execute(
            "INSERT INTO hits_assignment (hit_id, worker_id, status, created_at, deadline, submitted_at,"
            " comment, feedback, external_id, confirmed, flag)"
            " SELECT h.id, %s + (h.id * 7 + k * 1009) %% 3000, st,"
            " now() - interval '4 hours', now() + (CASE WHEN h.id %% 5 = 0 THEN -1 ELSE 1 END) * interval '30 minutes',"
            " CASE WHEN st IN ('submitted', 'approved', 'rejected') THEN now() - (r %% 180) * interval '1 minute' END,"
            " '', '', 'e' || h.id || '-' || k, true, ''"
            " FROM hits_hit h CROSS JOIN generate_series(0, 2) k"
            " CROSS JOIN LATERAL (SELECT abs(hashint4((h.id * 3 + k)::int)) %% 1000 AS r) x"
            " CROSS JOIN LATERAL (SELECT CASE WHEN r < 720 THEN 'approved' WHEN r < 860 THEN 'submitted'"
            " WHEN r < 930 THEN 'rejected' WHEN r < 999 THEN 'expired' ELSE 'assigned' END AS st) y"
            " JOIN hits_batch b ON b.id = h.batch_id WHERE b.dataset_id = %s",
            [first_worker, dataset],
        )
        c.execute(
            "INSERT INTO hits_ledgerentry (batch_id, worker_id, assignment_id, kind, amount, key, note, created_at)"
            " SELECT h.batch_id, a.worker_id, a.id, 'reward', 0.30, 'r' || a.id, '', now() FROM hits_assignment a"
            " JOIN hits_hit h ON h.id = a.hit_id WHERE a.status = 'approved'"
        )
        c.execute(
            "UPDATE hits_hit h SET open_places = 3 - a.n FROM (SELECT hit_id, count(*) AS n FROM hits_assignment"
            " WHERE status IN ('assigned', 'submitted', 'approved') GROUP BY hit_id) a WHERE a.hit_id = h.id"
        )
        c.execute("SELECT count(*) FROM hits_assignment")
        n = c.fetchone()[0]
    log(f"built {n:,} assignments in {batches} batches in {time.perf_counter() - t0:.0f} s")


def compact() -> None:
    """The running counts folded as the beat does, and fresh planner statistics."""
    from django.db import connection

    from hits import tallies

    tallies.compact()
    with connection.cursor() as c:
        c.execute("ANALYZE")


@contextmanager
def counting_rows():
    """The selector's path on databases without the running counts."""
    from hits import tallies

    available = tallies.available
    tallies.available = lambda: False
    try:
        yield
    finally:
        tallies.available = available


def without_tallies(fn):
    def call():
        with counting_rows():
            return fn()

    return call


def timed(fn, repeat: int) -> tuple[float, float]:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000, max(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignments", type=int, default=2_000_000)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--database-url", default=DEFAULT_DB)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--reuse", action="store_true")
    args = parser.parse_args()

    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import dashboard_data

    if not args.reuse:
        dashboard_data.recreate_database(args.database_url)
    import django

    django.setup()
    from django.core.management import call_command

    from hits.models import Batch
    from hits.selectors import figures

    try:
        if not args.reuse:
            call_command("migrate", verbosity=0)
            build(args.assignments, args.batches)
        compact()
        batches = list(Batch.objects.filter(kind=Batch.Kind.CROWD).order_by("pk"))
        ids = [b.pk for b in batches]
        scopes = [
            ("dashboard, whole dataset", lambda: figures.scope_figures(Batch.objects.filter(pk__in=ids))),
            ("batch page, one batch", lambda: figures.scope_figures(Batch.objects.filter(pk=ids[0]))),
            ("batch list, every batch", lambda: figures.batch_figures(Batch.objects.filter(pk__in=ids))),
        ]
        with_counts = figures.batch_figures(batches)
        with counting_rows():
            counted = figures.batch_figures(batches)
        if with_counts != counted:
            raise SystemExit("the running counts and the rows disagree")
        assignments = sum(sum(f["by_status"].values()) for f in counted.values())
        print(f"{assignments:,} assignments in {len(batches)} batches; median / worst of {args.repeat} calls, ms")
        print(f"{'scope':<28} {'running counts':>16} {'counting rows':>16} {'ratio':>7}")
        for name, read in scopes:
            (t_med, t_max), (o_med, o_max) = timed(read, args.repeat), timed(without_tallies(read), args.repeat)
            print(f"{name:<28} {t_med:>7.0f} / {t_max:<6.0f} {o_med:>7.0f} / {o_max:<6.0f} {o_med / t_med:>7.1f}")
    finally:
        if not args.keep:
            dashboard_data.drop_database(args.database_url)


if __name__ == "__main__":
    main()
