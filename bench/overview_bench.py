"""Server time of the lead's dashboard pages on a 22,000-summary round in a 10-dataset database,
against the trivial view (the login page GET) measured in the same run, before and after ANALYZE.

Builds its own PostgreSQL database (`bench/dashboard_data.py`: 9 REALSumm-size datasets and the
RoSE-scale one, bulk-loaded without ANALYZE so the planner's statistics are stale), computes the
stored runs of that dataset and of its round (pages show stored runs) and gives each 200 older
copies (the history that recomputes after bursts of submissions leave, which the agreement
trend reads), then requests each page (overview, systems, workers, live.json; dataset-wide and
`?round=`) through Django's test client as a lead, each request right after a login page GET,
and prints the median server time, the SQL queries and the ratio to the login page's median,
and beside them the CPU time of a request (this process's median and the ratio to the login
page's; its database backend's mean, from /proc in clock ticks), which time lost to other work on
the machine does not inflate; an empty dashboard page (metrics) is shown for reference. Then ANALYZE, and the same again.
The database is dropped at the end (`--keep` keeps it).

Run: .venv/bin/python bench/overview_bench.py [--repeat 7] [--history 200] [--stale-from empty|others]
     [--database-url URL] [--keep] [--tree PATH] [--reuse]

`--reuse` measures a database kept by an earlier `--keep` run (no build, no drop; ANALYZE first, so
only the "after ANALYZE" table): with `--tree`, the code of an older checkout on its own kept database.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import dashboard_data  # noqa: E402
import proc_cpu  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/acu_bench_dashboards"
TARGET = 10  # pages within 10x of the trivial view (issue 14)
FLOOR = "(metrics, empty)"


def _timed(client, url):
    """(server seconds, queries, bytes, CPU seconds of this process, CPU seconds of its database
    backend): the CPU figures do not count time lost to other work on the machine."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    backend = proc_cpu.backend_seconds()
    with CaptureQueriesContext(connection) as q:
        cpu, t0 = time.process_time(), time.perf_counter()
        response = client.get(url)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu
    backend = proc_cpu.backend_seconds() - backend
    assert response.status_code == 200, (url, response.status_code)
    real = [
        x for x in q.captured_queries if not x["sql"].upper().startswith(("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE"))
    ]
    return seconds, len(real), len(response.content), cpu, backend


def pages(dataset, batch) -> dict[str, str]:
    base = f"/datasets/{dataset.pk}/dashboard"
    urls = {}
    for scope, query in (("dataset", ""), ("round", f"?round={batch.pk}")):
        for name, path in (
            ("overview", "/"),
            ("systems", "/systems/"),
            ("workers", "/workers/"),
            ("live.json", "/live.json"),
        ):
            urls[f"{name} {scope}"] = base + path + query
    urls[FLOOR] = base + "/metrics/"  # a dashboard page with nothing to show: the floor, for reference
    return urls


def measure(label: str, lead, urls: dict[str, str], repeat: int) -> list[tuple[str, float, float]]:
    """Each page `repeat` times, each request right after a login page GET; prints a table and
    returns (page, median ms, ratio)."""
    from django.test import Client

    anonymous, client = Client(), Client()
    client.force_login(lead)
    anonymous.get("/accounts/login/")  # first requests load the middleware and templates
    for url in urls.values():
        client.get(url)
    trivial, trivial_cpu, trivial_db, rows = [], [], [], []
    for name, url in urls.items():
        times, cpus, dbs = [], [], []
        for _ in range(repeat):
            seconds, _, _, cpu, db = _timed(anonymous, "/accounts/login/")
            trivial.append(seconds)
            trivial_cpu.append(cpu)
            trivial_db.append(db)
            seconds, queries, size, cpu, db = _timed(client, url)
            times.append(seconds)
            cpus.append(cpu)
            dbs.append(db)
        rows.append((name, statistics.median(times), queries, size, statistics.median(cpus), statistics.mean(dbs)))
    login = statistics.median(trivial)
    login_cpu, login_db = statistics.median(trivial_cpu), statistics.mean(trivial_db)
    print(f"\n{label}: login page (trivial view) median {login * 1000:.2f} ms over {len(trivial)} requests")
    print(
        f"(CPU: median of this process's, {login_cpu * 1000:.2f} ms for the login page; database backend's mean,"
        f" {login_db * 1000:.2f} ms, in clock ticks of {proc_cpu.TICK * 1000:.0f} ms: not counting time lost to other work)"
    )
    print(
        f"{'page':<18} {'median ms':>10} {'queries':>8} {'KiB':>6} {'x login':>8} {'CPU ms (x)':>13} {'db CPU ms':>10}"
    )
    out = []
    for name, median, queries, size, cpu, db in rows:
        ratio = median / login
        mark = "" if ratio <= TARGET or name == FLOOR else f"  over {TARGET}x"
        print(
            f"{name:<18} {median * 1000:10.1f} {queries:8d} {size / 1024:6.0f} {ratio:8.1f}"
            f" {cpu * 1000:6.1f} ({cpu / login_cpu:4.1f}) {db * 1000:10.1f}{mark}"
        )
        if name != FLOOR:
            out.append((name, median * 1000, ratio))
    return out


def reuse(repeat: int) -> None:
    """Measure the pages on a database kept by an earlier run (its code's schema), after ANALYZE."""
    from django.contrib.auth import get_user_model

    from annotation.models import Dataset

    dataset = Dataset.objects.get(name=dashboard_data.ROSE_SCALE)
    batch = dataset.batches.get()
    lead = get_user_model().objects.get(username="bench-lead")
    print(f"code: {Path(sys.modules['scoring'].__file__).parent.parent}; reused database, ANALYZE first")
    print(f"ANALYZE took {dashboard_data.analyze():.1f} s")
    measure("after ANALYZE", lead, pages(dataset, batch), repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--database-url", default=DEFAULT_DB)
    parser.add_argument("--history", type=int, default=200, help="older runs per scope (the trend reads 200)")
    parser.add_argument(
        "--stale-from", choices=dashboard_data.STALE_FROM, default="empty", help="whose statistics are stale"
    )
    parser.add_argument("--keep", action="store_true", help="keep the database (default: drop it)")
    parser.add_argument("--tree", default=None, help="run the code of another checkout (figures side by side)")
    parser.add_argument(
        "--reuse", action="store_true", help="measure a database an earlier --keep run built (kept; after ANALYZE only)"
    )
    parser.add_argument(
        "--data",
        default=str(Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared")) / "data" / "realsumm.rose.jsonl"),
    )
    args = parser.parse_args()
    if args.tree:  # its code first on the path, and as the working directory (Celery adds that one)
        sys.path.insert(0, str(Path(args.tree).resolve()))
        os.chdir(args.tree)
    os.environ["DATABASE_URL"] = args.database_url
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"  # a stale page would compute in the request (and show here)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver")
    if not args.reuse:
        dashboard_data.recreate_database(args.database_url)
    import django

    django.setup()
    if args.reuse:
        reuse(args.repeat)
        return
    from django.core.management import call_command

    from hits.services.people import create_user_with_role
    from scoring.runs.services import compute_scores

    try:
        call_command("migrate", verbosity=0)
        bench = dashboard_data.build(Path(args.data), stale_from=args.stale_from)
        t0 = time.perf_counter()
        for batch in (None, bench.batch):
            dashboard_data.add_history(compute_scores(bench.dataset, batch, trigger="bench"), args.history)
        print(
            f"stored runs of the dataset and of its round in {time.perf_counter() - t0:.1f} s (stale statistics),"
            f" each with {args.history} older copies"
        )
        print("database: " + ", ".join(f"{k} {v:,}" for k, v in dashboard_data.database_counts().items()))
        print(f"round {bench.batch.pk}: {bench.batch.hits.count():,} summaries (HITs) of {bench.dataset.name}")
        lead = create_user_with_role(username="bench-lead", password="bench-lead-password", role="lead")
        urls = pages(bench.dataset, bench.batch)
        print(f"code: {Path(sys.modules['scoring'].__file__).parent.parent}")
        stale = "the empty tables" if args.stale_from == "empty" else "the 9 other datasets"
        before = measure(f"before ANALYZE (statistics of {stale})", lead, urls, args.repeat)
        print(f"\nANALYZE took {dashboard_data.analyze():.1f} s")
        after = measure("after ANALYZE", lead, urls, args.repeat)
        print(f"\n{'page':<18} {'before ms (x)':>16} {'after ms (x)':>16}")
        for (name, b_ms, b_x), (_, a_ms, a_x) in zip(before, after, strict=True):
            print(f"{name:<18} {b_ms:9.1f} ({b_x:4.1f}) {a_ms:9.1f} ({a_x:4.1f})")
        worst = max(x for _, _, x in before + after)
        print(
            f"worst ratio {worst:.1f}x the login page (target <= {TARGET}x): {'met' if worst <= TARGET else 'NOT met'}"
        )
    finally:
        if args.keep:
            dashboard_data.set_autovacuum(True)
        else:
            dashboard_data.drop_database(args.database_url)


if __name__ == "__main__":
    main()
