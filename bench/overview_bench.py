"""Server time of the lead's dashboard pages for a RoSE-scale round (22,000 summaries).

Uses the dataset that recompute_bench.py imports (run that first), computes the scores once
(pages show stored runs), then requests each page through Django's test client as a lead
and prints the best and median server time and the number of SQL queries.

Run: .venv/bin/python bench/overview_bench.py [--repeat 5]
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

from import_bench import DATASET_NAME, DEFAULT_DB  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("DATABASE_URL", DEFAULT_DB)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver")
    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotation.models import Dataset
    from hits.services.people import create_user_with_role
    from scoring.services import compute_scores, is_stale, latest_run

    dataset = Dataset.objects.filter(name=DATASET_NAME).first()
    if dataset is None:
        sys.exit("Run bench/recompute_bench.py first (it imports the RoSE-scale dataset).")
    batch = dataset.batches.get()
    if is_stale(latest_run(dataset, batch), dataset, batch):
        compute_scores(dataset, batch, trigger="bench")
    lead = create_user_with_role(username="bench-lead", password="bench-lead-password", role="lead")
    client = Client()
    client.force_login(lead)
    pages = {
        "overview": f"/datasets/{dataset.pk}/dashboard/?round={batch.pk}",
        "live.json": f"/datasets/{dataset.pk}/dashboard/live.json?round={batch.pk}",
        "systems": f"/datasets/{dataset.pk}/dashboard/systems/?round={batch.pk}",
        "workers": f"/datasets/{dataset.pk}/dashboard/workers/?round={batch.pk}",
    }
    print(f"round {batch.pk}: {batch.hits.count():,} summaries (HITs) of {dataset.name}")
    for name, url in pages.items():
        times = []
        for _ in range(args.repeat):
            with CaptureQueriesContext(connection) as queries:
                t0 = time.perf_counter()
                response = client.get(url)
                times.append(time.perf_counter() - t0)
            assert response.status_code == 200, (name, response.status_code)
        print(
            f"{name:<10} best {min(times) * 1000:6.0f} ms, median {statistics.median(times) * 1000:6.0f} ms, "
            f"{len(queries)} queries, {len(response.content) / 1024:.0f} KiB (target for the overview: < 500 ms)"
        )


if __name__ == "__main__":
    main()
