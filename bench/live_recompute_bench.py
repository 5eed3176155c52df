"""A dataset's recompute while one of its rounds is being worked, with many assignments of
finished rounds in the same dataset: the code of two checkouts side by side in one run.

Creates its own PostgreSQL database (dropped at the end): REALSumm imported, `--others`
assignments of finished rounds of the same dataset (written as `bench/load_bench.py` writes
them, then VACUUM ANALYZE), and a live in-house round of 2,500 HITs x 3 that two simulated
workers have worked through. Then, alternating between the checkouts `--repeat` times, a fresh
process of each runs `scoring.runs.services.compute_scores` of the whole dataset `--runs` times,
each right after one more submission in the live round (a new worker, through the services),
as the recompute queued after submissions does. It prints, per checkout, the first run of a
process (which reads every round) and the median of the runs after it: wall seconds, Python
CPU seconds and the CPU seconds of the process's PostgreSQL backend (/proc).

Run: .venv/bin/python bench/live_recompute_bench.py [--others 660000] [--tree ../acu-old] [--runs 5] [--repeat 2]
(`--tree` is the other checkout, e.g. an older commit; without it only this one is measured.)
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from load_bench import PYTHON, SETUP, recreate_database  # noqa: E402

LIVE = r"""
from annotation.models import Dataset
from hits.models import Batch
from hits.services.simulate import simulate_crowd
dataset = Dataset.objects.get(name="realsumm")
live = Batch.objects.filter(dataset=dataset, kind="crowd", status="published").order_by("pk").first()
report = simulate_crowd(live, workers=2, accuracy=0.85, seed=1, prefix="live")
print("LIVE" + str(live.pk) + " " + str(report.submitted))
"""

MEASURE = r"""
import json, sys, time
from annotation.models import Dataset
from hits.models import Batch
from hits.services import handout
from hits.services.people import create_user_with_role
from hits.services.submission import submit_assignment
from hits.services.people import inhouse_worker
from scoring.runs import services

dataset = Dataset.objects.get(name="realsumm")
live = Batch.objects.get(pk=LIVE_ID)
sys.path.insert(0, BENCH_DIR)
from proc_cpu import backend_seconds as backend

runs = []
for i in range(N_RUNS):
    worker = inhouse_worker(create_user_with_role(username=f"WORKER_TAG-{time.time_ns()}-{i}", password="bench-password-123456", role="worker"))
    assignment = handout.next_assignment(worker, live)
    acus = assignment.hit.summary.document.reference.acus.values_list("pk", flat=True)
    submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers={str(a): True for a in acus})
    wall, cpu, db = time.perf_counter(), time.process_time(), backend()
    services.compute_scores(dataset, trigger="bench")
    runs.append([time.perf_counter() - wall, time.process_time() - cpu, backend() - db])
print("RUNS" + json.dumps(runs))
"""


def env_for(database: str) -> dict:
    return dict(
        os.environ,
        DATABASE_URL=database,
        SECRET_KEY="bench-only",
        DEBUG="0",
        LOG_LEVEL="WARNING",
        CELERY_TASK_ALWAYS_EAGER="1",
        PYTHONHASHSEED="0",
    )


def shell(tree: str, database: str, code: str, marker: str, timeout=3600) -> str:
    out = subprocess.run(
        [PYTHON, "manage.py", "shell"],
        cwd=tree,
        env=env_for(database),
        input=code,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if out.returncode or marker not in out.stdout:
        sys.exit(f"manage.py shell in {tree} failed:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
    return out.stdout.split(marker, 1)[1].strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--others", type=int, default=660_000, help="assignments of finished rounds to add")
    parser.add_argument("--tree", default=None, help="the other checkout, measured beside this one")
    parser.add_argument("--runs", type=int, default=5, help="recomputes per process")
    parser.add_argument("--repeat", type=int, default=2, help="processes per checkout, alternating")
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/acu_h14_live")
    parser.add_argument(
        "--data", default=str(Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared")) / "data" / "realsumm")
    )
    args = parser.parse_args()
    trees = [str(Path(args.tree).resolve())] if args.tree else []
    trees.append(str(ROOT))
    recreate_database(args.database)
    try:
        env = env_for(args.database)
        for argv in (["migrate", "-v", "0"], ["import_dataset", args.data, "--name", "realsumm"]):
            subprocess.run([PYTHON, "manage.py", *argv], cwd=ROOT, env=env, check=True, capture_output=True)
        setup = SETUP.replace("WORKERS", "1").replace("OTHER", str(args.others)).replace("BATCHES", "1")
        shell(str(ROOT), args.database, setup, "SETUP")
        live_id, submitted = shell(str(ROOT), args.database, LIVE, "LIVE").split()
        print(
            f"REALSumm, {args.others:,} assignments of finished rounds of the same dataset, a live round"
            f" ({live_id}) of 2,500 HITs x 3 with {int(submitted):,} submissions; {args.runs} recomputes per process,"
            " each after one more submission"
        )
        figures: dict[str, list[list[float]]] = {tree: [] for tree in trees}
        for turn in range(args.repeat):
            for tree in trees:
                code = (
                    MEASURE.replace("LIVE_ID", live_id)
                    .replace("BENCH_DIR", repr(str(ROOT / "bench")))
                    .replace("N_RUNS", str(args.runs))
                    .replace("WORKER_TAG", f"bench{turn}{len(figures[tree])}")
                )
                figures[tree].append(json.loads(shell(tree, args.database, code, "RUNS")))
        print(
            "checkout                      first run: wall / Python CPU / db CPU   later runs (median): wall / Python / db"
        )
        for tree, processes in figures.items():
            first = [p[0] for p in processes]
            later = [r for p in processes for r in p[1:]]
            med = [statistics.median(r[k] for r in later) for k in range(3)] if later else [float("nan")] * 3
            head = [statistics.median(r[k] for r in first) for k in range(3)]
            name = re.sub(r"^.*/", "", tree)
            print(
                f"{name:<28}  {head[0]:6.2f} s / {head[1]:5.2f} s / {head[2]:5.2f} s"
                f"          {med[0]:6.2f} s / {med[1]:5.2f} s / {med[2]:5.2f} s"
            )
    finally:
        recreate_database(args.database, drop_only=True)


if __name__ == "__main__":
    main()
