"""Benchmark a full recompute of a RoSE-scale dataset on PostgreSQL, end to end.

Imports the synthetic RoSE-scale data of import_bench.py (2,500 documents, 22,000 summaries,
about 20,000 ACUs, 3 annotators per summary: about 530,000 judgments) unless it is already
there, then times `scoring.services.compute_scores` (read from PostgreSQL, aggregation,
scores, both alphas, bootstrap CIs with 10,000 resamples, paired tests), and, side by side in
the same run, the judgment read through COPY against the same read through the ORM.

Run: .venv/bin/python bench/recompute_bench.py [--repeat 3]
"""

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from import_bench import DATASET_NAME, DEFAULT_DB, OUT, ensure_database, generate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", DEFAULT_DB))
    args = parser.parse_args()

    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    ensure_database(args.database_url)
    import django

    django.setup()
    import numpy as np
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Dataset
    from hits.services.dataset_import import import_dataset
    from scoring import data
    from scoring.services import compute_scores

    call_command("migrate", verbosity=0)
    dataset = Dataset.objects.filter(name=DATASET_NAME).first()
    if dataset is None:
        path = OUT / "rose_bench_2500.jsonl"
        generate(path, 2500)
        print("importing the RoSE-scale dataset once ...")
        import_dataset(path, name=DATASET_NAME, fmt="rose")
        dataset = Dataset.objects.get(name=DATASET_NAME)

    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        run = compute_scores(dataset, trigger="bench")
        times.append(time.perf_counter() - t0)
    counts = run.outputs["counts"]
    print(
        f"database: {connection.vendor}; {counts['summaries']:,} summaries, {counts['judgments']:,} judgments, "
        f"{counts['systems']} systems, {counts['workers']} workers"
    )
    print(
        f"full recompute (read, aggregate, scores, alphas, CIs 10,000 resamples, paired tests): "
        f"best {min(times):.2f} s, median {np.median(times):.2f} s over {len(times)} runs (target < 5 s)"
    )
    print(
        f"alpha: ACU level {run.outputs['alpha']['acu_level']:.4f}, summary level {run.outputs['alpha']['summary_level']:.4f}"
    )

    t0 = time.perf_counter()
    data.load_judgments(dataset)
    copy_s = time.perf_counter() - t0
    vendor = connection.vendor
    connection.vendor = "other"  # the ORM path, same query
    try:
        t0 = time.perf_counter()
        data.load_judgments(dataset)
        orm_s = time.perf_counter() - t0
    finally:
        connection.vendor = vendor
    print(f"judgment read: COPY {copy_s:.2f} s, ORM {orm_s:.2f} s; COPY takes {copy_s / orm_s:.2f}x the ORM's time")


if __name__ == "__main__":
    main()
