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


def _measure(client, method, url, **kwargs):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as q:
        t = time.perf_counter()
        response = getattr(client, method)(url, **kwargs)
        seconds = time.perf_counter() - t
    real = [
        x for x in q.captured_queries if not x["sql"].upper().startswith(("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE"))
    ]
    return response, seconds, len(real)


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
    from hits.models import Assignment
    from hits.services.batches import create_batch, publish_batch
    from hits.services.people import create_user_with_role

    call_command("migrate", verbosity=0)
    call_command("import_dataset", args.data, name="realsumm", verbosity=0)
    dataset = Dataset.objects.get(name="realsumm")
    publish_batch(create_batch(dataset=dataset, assignments=3, systems=list(dataset.systems.all())))
    added = 0
    results = {}
    for others in args.others:
        if others > added:
            _add_others(dataset, others - added)
            added = others
        held = Assignment.objects.count()
        times = {"trivial": [], "next": [], "task": [], "submit": []}
        queries = {}
        anonymous, client = Client(), Client()  # one each: a new Client loads the middleware again
        anonymous.get("/accounts/login/")
        for i in range(args.cycles):
            user = create_user_with_role(
                username=f"bench-{others}-{i}", password="bench-password-123456", role="worker"
            )
            client.force_login(user)
            _, t, n = _measure(anonymous, "get", "/accounts/login/")
            times["trivial"].append(t)
            queries["trivial"] = n
            r, t, n = _measure(client, "post", "/work/next")
            times["next"].append(t)
            queries["next"] = n
            task_url = r["Location"]
            r, t, n = _measure(client, "get", task_url)
            times["task"].append(t)
            queries["task"] = n
            acus = [x.split('"')[1] for x in r.content.decode().split("data-acu=")[1:]]
            body = json.dumps({"answers": dict.fromkeys(acus, True), "active_seconds": 20})
            r, t, n = _measure(
                client, "post", task_url.rstrip("/") + "/submit", data=body, content_type="application/json"
            )
            assert r.status_code == 200 and r.json()["ok"], r.content
            times["submit"].append(t)
            queries["submit"] = n
        med = {k: statistics.median(v) * 1000 for k, v in times.items()}
        low = {k: statistics.quantiles(v, n=10)[0] * 1000 for k, v in times.items()}
        results[others] = (held, med, low, queries)
    print(
        f"code: {Path.cwd()}  ({args.cycles} serial cycles per size; server time: median, and in brackets the 10th"
        " percentile, the quietest tenth on a shared machine; queries without BEGIN/COMMIT)"
    )
    print(
        "assignments in db   trivial ms      next ms (x | p10 x, queries)   task ms (x | p10 x, queries)   submit ms (...)"
    )
    for held, med, low, q in results.values():
        cols = "   ".join(
            f"{med[k]:6.1f} ({med[k] / med['trivial']:4.1f}x | {low[k] / low['trivial']:4.1f}x, {q[k]:2d})"
            for k in ("next", "task", "submit")
        )
        print(f"{held:17,d}   {med['trivial']:5.2f} ({low['trivial']:4.2f})   {cols}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=60)
    parser.add_argument("--others", default="0,200000,2000000")
    parser.add_argument("--tree", default=None)
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/acu_h14_crowd")
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
    os.environ.pop("CELERY_BROKER_URL", None)  # in-process, no recompute queued: the request path alone
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "0"
    try:
        run(args)
    finally:
        from django.db import connections

        connections.close_all()
        recreate_database(args.database, drop_only=True)


if __name__ == "__main__":
    main()
