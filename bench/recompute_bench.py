"""A full recompute of a RoSE-scale dataset and of its round in a 10-dataset database, before
and after ANALYZE.

Builds its own PostgreSQL database (`bench/dashboard_data.py`: 9 REALSumm-size datasets, then
the RoSE-scale one with 2,500 documents, 22,000 summaries and about 530,000 judgments, loaded
without ANALYZE so the planner's statistics are stale), then times
`scoring.runs.services.compute_scores` (read from PostgreSQL, aggregation, scores, both alphas,
bootstrap CIs, paired tests, the workers table) of the whole dataset and of its round
(`?round=`), and the reads alone (judgments, summaries, per-worker assignment figures). Then
ANALYZE, and the same again; last, side by side, the judgment read through COPY against the
same read through the ORM. The database is dropped at the end (`--keep` keeps it).

Run: .venv/bin/python bench/recompute_bench.py [--repeat 2] [--resamples 10000] [--database-url URL] [--keep]
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

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/acu_bench_recompute"


def _forget_rounds() -> None:
    """A full recompute reads every round: forget the rounds this process kept (code that
    keeps none, an older checkout's, has nothing to forget)."""
    try:
        from scoring.runs import round_cache
    except ImportError:
        return
    round_cache.clear()


def _seconds(fn, repeat: int, keep_rounds: bool = False) -> list[float]:
    times = []
    for _ in range(repeat):
        if not keep_rounds:
            _forget_rounds()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def measure(label: str, bench, repeat: int, resamples: int) -> dict[str, float]:
    from scoring.runs import data, workers
    from scoring.runs.services import compute_scores

    print(f"\n{label}")
    out = {}
    for scope, batch in (("dataset", None), ("round", bench.batch)):
        reads = {
            "judgments": lambda b=batch: data.load_judgments(bench.dataset, b, include_excluded=True),
            "summaries": lambda: data.load_summaries(bench.dataset),
            "worker figures": lambda b=batch: workers._assignment_stats(bench.dataset, b),
        }
        read_s = {name: min(_seconds(fn, repeat)) for name, fn in reads.items()}
        times = _seconds(
            lambda b=batch: compute_scores(bench.dataset, b, n_resamples=resamples, trigger="bench"), repeat
        )
        out[scope] = min(times)
        print(
            f"  full recompute, {scope:<7}: best {min(times):6.2f} s, median {statistics.median(times):6.2f} s"
            f" over {repeat}; reads (best): " + ", ".join(f"{name} {s:.2f} s" for name, s in read_s.items())
        )
    kept = _seconds(
        lambda: compute_scores(bench.dataset, None, n_resamples=resamples, trigger="bench"), repeat, keep_rounds=True
    )
    print(f"  dataset recompute, no round changed since the last (rounds kept in the process): best {min(kept):6.2f} s")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (the default of runs)")
    parser.add_argument("--database-url", default=DEFAULT_DB)
    parser.add_argument(
        "--stale-from", choices=dashboard_data.STALE_FROM, default="empty", help="whose statistics are stale"
    )
    parser.add_argument("--keep", action="store_true", help="keep the database (default: drop it)")
    parser.add_argument("--tree", default=None, help="run the code of another checkout (figures side by side)")
    parser.add_argument(
        "--data",
        default=str(Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared")) / "data" / "realsumm.rose.jsonl"),
    )
    args = parser.parse_args()
    if args.tree:  # its code first on the path, and as the working directory (Celery adds that one)
        sys.path.insert(0, str(Path(args.tree).resolve()))
        os.chdir(args.tree)
    os.environ["DATABASE_URL"] = args.database_url
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    dashboard_data.recreate_database(args.database_url)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from scoring.runs import data

    try:
        call_command("migrate", verbosity=0)
        bench = dashboard_data.build(Path(args.data), stale_from=args.stale_from)
        print(f"code: {Path(sys.modules['scoring'].__file__).parent.parent}")
        print("database: " + ", ".join(f"{k} {v:,}" for k, v in dashboard_data.database_counts().items()))
        print(f"round {bench.batch.pk}: {bench.batch.hits.count():,} summaries (HITs) of {bench.dataset.name}")
        before = measure(
            f"before ANALYZE (statistics of {'the empty tables' if args.stale_from == 'empty' else 'the 9 others'})",
            bench,
            args.repeat,
            args.resamples,
        )
        print(f"\nANALYZE took {dashboard_data.analyze():.1f} s")
        after = measure("after ANALYZE", bench, args.repeat, args.resamples)
        print("\nfull recompute (best)   before ANALYZE   after ANALYZE")
        for scope in before:
            print(f"  {scope:<20} {before[scope]:12.2f} s {after[scope]:13.2f} s")

        _forget_rounds()
        t0 = time.perf_counter()
        data.load_judgments(bench.dataset)
        copy_s = time.perf_counter() - t0
        vendor = connection.vendor
        connection.vendor = "other"  # the ORM path, same rows
        try:
            t0 = time.perf_counter()
            data.load_judgments(bench.dataset)
            orm_s = time.perf_counter() - t0
        finally:
            connection.vendor = vendor
        print(
            f"judgment read of the dataset: COPY {copy_s:.2f} s, ORM {orm_s:.2f} s;"
            f" COPY takes {copy_s / orm_s:.2f}x the ORM's time"
        )
    finally:
        if args.keep:
            dashboard_data.set_autovacuum(True)
        else:
            dashboard_data.drop_database(args.database_url)


if __name__ == "__main__":
    main()
