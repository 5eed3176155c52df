"""Server time and SQL queries of the crowd path (next task, task page, submit) against the
trivial view, serially through Django's test client, with and without many assignments of
other batches in the database.

Creates its own PostgreSQL database (dropped at the end), imports REALSumm, publishes an
in-house batch (2,500 HITs x 3) and then, per size, adds finished batches holding that many
assignments and times `--cycles` work cycles of fresh workers.

Run: .venv/bin/python bench/crowd_path_bench.py [--cycles 60] [--others 0,200000,2000000] [--tree PATH]
(`--tree` runs the code of another checkout, e.g. an older commit, for side-by-side figures.)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import proc_cpu  # noqa: E402


def _measure(client, method, url, **kwargs):
    """(response, server seconds, queries, CPU seconds of this process and its database backend)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    backend = proc_cpu.backend_seconds()
    with CaptureQueriesContext(connection) as q:
        cpu, t = time.process_time(), time.perf_counter()
        response = getattr(client, method)(url, **kwargs)
        seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    cpu += proc_cpu.backend_seconds() - backend
    real = [
        x for x in q.captured_queries if not x["sql"].upper().startswith(("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE"))
    ]
    return response, seconds, len(real), cpu


def _add_others(dataset, assignments: int) -> None:
    from django.db import connection

    from hits.models import Batch, Worker

    n_workers = 50
    per_batch = n_workers * dataset.documents.count() * dataset.systems.count()
    ids = [
        b.pk
        for b in Batch.objects.bulk_create(
            [
                Batch(dataset=dataset, name=f"other {i}", status="complete", assignments_per_hit=n_workers)
                for i in range(max(1, assignments // per_batch))
            ]
        )
    ]
    ws = [
        w.pk
        for w in Worker.objects.bulk_create(
            [Worker(provider="inhouse", external_id=f"other-{time.time_ns()}-{i}") for i in range(n_workers)]
        )
    ]
    with connection.cursor() as c:
        cols = {col.name for col in connection.introspection.get_table_description(c, "hits_hit")}
        extra = ("open_places", "0") if "open_places" in cols else ("", "")
        c.execute(
            "INSERT INTO hits_hit (batch_id, summary_id, max_assignments, acu_count, reward, external_id"
            + (", " + extra[0] if extra[0] else "")
            + ") SELECT b, s.id, %s, 0, 0.15, ''"
            + (", 0" if extra[0] else "")
            + " FROM unnest(%s::bigint[]) b, annotation_summary s"
            " WHERE s.document_id IN (SELECT id FROM annotation_document WHERE dataset_id = %s)",
            [n_workers, ids, dataset.pk],
        )
        c.execute(
            "INSERT INTO hits_assignment (hit_id, worker_id, status, created_at, submitted_at, comment, feedback,"
            " external_id, confirmed, flag) SELECT h.id, w, 'submitted', now(), now(), '', '', '', true, ''"
            " FROM hits_hit h, unnest(%s::bigint[]) w WHERE h.batch_id = ANY(%s)",
            [ws, ids],
        )
        c.execute("ANALYZE hits_hit")
        c.execute("ANALYZE hits_assignment")


def run(args) -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from annotation.models import Dataset
    from hits.batch_fields import BatchSpec  # here: the tree's code (--tree) is importable only now
    from hits.models import Assignment
    from hits.services.batches import create_batch, publish_batch
    from hits.services.people import create_user_with_role

    call_command("migrate", verbosity=0)
    call_command("import_dataset", args.data, name="realsumm", verbosity=0)
    dataset = Dataset.objects.get(name="realsumm")
    publish_batch(create_batch(dataset=dataset, spec=BatchSpec(assignments=3), systems=list(dataset.systems.all())))
    added = 0
    results = {}
    for others in args.others:
        if others > added:
            _add_others(dataset, others - added)
            added = others
        held = Assignment.objects.count()
        times = {"trivial": [], "next": [], "task": [], "submit": []}
        cpu = dict.fromkeys(times, 0.0)
        queries = {}
        anonymous, client = Client(), Client()  # one each: a new Client loads the middleware again
        anonymous.get("/accounts/login/")
        for i in range(args.cycles):
            user = create_user_with_role(
                username=f"bench-{others}-{i}", password="bench-password-123456", role="worker"
            )
            client.force_login(user)
            _, t, n, c = _measure(anonymous, "get", "/accounts/login/")
            times["trivial"].append(t)
            cpu["trivial"] += c
            queries["trivial"] = n
            r, t, n, c = _measure(client, "post", "/work/next")
            times["next"].append(t)
            cpu["next"] += c
            queries["next"] = n
            task_url = r["Location"]
            r, t, n, c = _measure(client, "get", task_url)
            times["task"].append(t)
            cpu["task"] += c
            queries["task"] = n
            acus = [x.split('"')[1] for x in r.content.decode().split("data-acu=")[1:]]
            body = json.dumps({"answers": dict.fromkeys(acus, True), "active_seconds": 20})
            r, t, n, c = _measure(
                client, "post", task_url.rstrip("/") + "/submit", data=body, content_type="application/json"
            )
            cpu["submit"] += c
            assert r.status_code == 200 and r.json()["ok"], r.content
            times["submit"].append(t)
            queries["submit"] = n
        med = {k: statistics.median(v) * 1000 for k, v in times.items()}
        low = {k: statistics.quantiles(v, n=10)[0] * 1000 for k, v in times.items()}
        per = {k: v / args.cycles * 1000 for k, v in cpu.items()}
        results[others] = (held, med, low, queries, per)
    print(
        f"code: {Path.cwd()}  ({args.cycles} serial cycles per size; server time: median, and in brackets the 10th"
        " percentile, the quietest tenth on a shared machine; queries without BEGIN/COMMIT)"
    )
    print(
        "assignments in db   trivial ms      next ms (x | p10 x, queries)   task ms (x | p10 x, queries)   submit ms (...)"
    )
    for held, med, low, q, _ in results.values():
        cols = "   ".join(
            f"{med[k]:6.1f} ({med[k] / med['trivial']:4.1f}x | {low[k] / low['trivial']:4.1f}x, {q[k]:2d})"
            for k in ("next", "task", "submit")
        )
        print(f"{held:17,d}   {med['trivial']:5.2f} ({low['trivial']:4.2f})   {cols}")
    print(
        "CPU per request, ms (this process and its PostgreSQL backend, mean; x = ratio to the trivial view's;"
        " clock ticks of 10 ms summed over the cycles)"
    )
    print("assignments in db   trivial   next (x)        task (x)        submit (x)")
    for held, _, _, _, per in results.values():
        cols = "   ".join(f"{per[k]:5.2f} ({per[k] / per['trivial']:4.1f}x)" for k in ("next", "task", "submit"))
        print(f"{held:17,d}   {per['trivial']:5.2f}     {cols}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=60)
    parser.add_argument("--others", default="0,200000,2000000")
    parser.add_argument("--tree", default=None)
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/acu_h14_crowd")
    parser.add_argument(
        "--redis", default="redis://127.0.0.1:6379/7", help="the broker; the cache is the next database (both emptied)"
    )
    parser.add_argument(
        "--data", default=str(Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared")) / "data" / "realsumm")
    )
    args = parser.parse_args()
    if args.tree and Path(args.tree).resolve() != Path.cwd().resolve():
        env = dict(os.environ, PYTHONPATH=str(Path(args.tree).resolve()))
        argv = [sys.executable, str(Path(__file__).resolve()), *list(sys.argv[1:])]
        sys.exit(subprocess.call(argv, cwd=args.tree, env=env))
    sys.path.insert(0, str(Path.cwd()))
    args.others = [int(x) for x in args.others.split(",")]
    sys.path.insert(0, str(ROOT / "bench"))
    from load_bench import recreate_database

    recreate_database(args.database)
    os.environ.update(
        DATABASE_URL=args.database,
        DJANGO_SETTINGS_MODULE="config.settings",
        ALLOWED_HOSTS="testserver",
        SECRET_KEY="bench-only",
        LOG_LEVEL="WARNING",
    )
    # As deployed: the recompute a submission asks for is queued on Redis (no worker takes it
    # here; the queue is emptied at the end), so its cost is the request's, not a computation.
    os.environ["CELERY_BROKER_URL"] = args.redis
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "0"
    # As docker-compose.yml: rate-limit counters and sessions through Redis (the next database),
    # the limits on but above what one serial client reaches.
    os.environ["CACHE_URL"] = args.redis.rsplit("/", 1)[0] + "/" + str(int(args.redis.rsplit("/", 1)[1]) + 1)
    os.environ["RATE_LIMIT_WORK_PER_ACCOUNT"] = os.environ["RATE_LIMIT_WORK_PER_ADDRESS"] = "1000000"
    try:
        run(args)
    finally:
        from django.db import connections

        connections.close_all()
        recreate_database(args.database, drop_only=True)
        import redis

        for url in (args.redis, os.environ["CACHE_URL"]):
            redis.Redis.from_url(url).flushdb()


if __name__ == "__main__":
    main()
