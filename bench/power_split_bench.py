"""Power analysis split into parts: wall time of the single-process run against the same
analysis as parts shared by N worker processes, measured side by side in one run, and a check
that both give the same result for the seed.

The parts are those ``scoring.runs.statistics.plan_power`` queues as Celery tasks
(``power.power_plan`` for N processes, costliest first); a pool of N spawned processes, each
taking the next part when it is free, stands in for a Celery worker with ``--concurrency N``
and prefetch 1. The pool is started and warmed before the clock starts, as a worker is already
running. Each part process uses one BLAS thread (``--part-threads``), as a worker started
with OPENBLAS_NUM_THREADS=1; the single-process run uses whatever OPENBLAS_NUM_THREADS says
(run with OPENBLAS_NUM_THREADS=1 for a one-core reference).

The scores are synthetic (documents x systems, seeded). The defaults are RoSE's: 2,500
documents, 12 systems (66 pairs), sizes up to 10,000, 1,000 trials and 100,000 resamples
(about 150 s single-process on one core); pass smaller --trials / --resamples for a short run.
Besides the wall times it prints each part's CPU seconds and the finishing time those CPU
times give for N processes (robust to a machine shared with other work).

Run: OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/power_split_bench.py [--processes 2] [--trials 1000] [--resamples 100000]
"""

import argparse
import multiprocessing
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring.stats import power


def _warm(_):
    time.sleep(0.2)  # every process has started and imported numpy before the clock starts


def _part(job):
    scores, sizes, part, columns, trials, resamples, seed = job
    cpu = time.process_time()
    result = power.power_part(scores, sizes, part[0], columns, n_trials=trials, n_resamples=resamples, seed=seed)
    return part, result, time.process_time() - cpu


def _pool(processes: int, threads: int):
    """N spawned processes with ``threads`` BLAS threads each (the variable is read when numpy loads)."""
    before = os.environ.get("OPENBLAS_NUM_THREADS")
    os.environ["OPENBLAS_NUM_THREADS"] = str(threads)
    try:
        pool = multiprocessing.get_context("spawn").Pool(processes)
        pool.map(_warm, range(2 * processes), chunksize=1)
    finally:
        if before is None:
            del os.environ["OPENBLAS_NUM_THREADS"]
        else:
            os.environ["OPENBLAS_NUM_THREADS"] = before
    return pool


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=2500)
    parser.add_argument("--systems", type=int, default=12)
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=100_000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--part-threads", type=int, default=1, help="BLAS threads of each part process")
    parser.add_argument("--scores", help="a documents x systems score matrix (.npy) instead of the synthetic one")
    args = parser.parse_args()
    if args.scores:
        scores = np.load(args.scores)
        args.documents, args.systems = scores.shape
    else:
        rng = np.random.default_rng(1)
        means = np.linspace(0.30, 0.40, args.systems)
        scores = np.clip(rng.normal(means, 0.15, (args.documents, args.systems)), 0, 1)
    sizes = list(power.ROSE_SIZES)
    n_pairs = args.systems * (args.systems - 1) // 2
    print(
        f"{args.documents} documents x {args.systems} systems ({n_pairs} pairs), sizes {sizes}, "
        f"{args.trials} trials, {args.resamples} resamples, {args.processes} processes "
        f"with {args.part_threads} BLAS thread(s) each; "
        f"single run with OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start",
        flush=True,
    )

    pool = _pool(args.processes, args.part_threads)
    t, cpu = time.perf_counter(), time.process_time()
    single = power.power_analysis(scores, sizes=sizes, n_trials=args.trials, n_resamples=args.resamples, rng=args.seed)
    single_s, single_cpu = time.perf_counter() - t, time.process_time() - cpu

    t = time.perf_counter()  # the plan is part of the split run's time, as plan_power is
    plan = power.power_plan(scores, sizes, args.trials, args.resamples, args.processes, seed=args.seed)
    plan_s = time.perf_counter() - t
    jobs = [(scores, sizes, part, plan.columns(part), args.trials, args.resamples, args.seed) for part in plan.parts]
    results, part_cpu = {}, {}
    for part, result, seconds in pool.imap_unordered(_part, jobs, chunksize=1):
        results[part], part_cpu[part] = result, seconds
    split = power.combine_parts(scores, sizes, plan, results, n_trials=args.trials)
    split_s = time.perf_counter() - t
    pool.close()
    pool.join()

    same = all(
        np.array_equal(getattr(single, field), getattr(split, field))
        for field in ("power", "bucket_power", "resamples", "pairs", "differences")
    )
    print(f"plan: {len(plan.parts)} parts in {plan_s:.2f} s")
    print("  part   n       columns  estimated share  CPU s")
    for part, cost in zip(plan.parts, plan.costs, strict=True):
        columns = plan.columns(part)
        count = n_pairs * args.trials if columns is None else len(columns)
        print(
            f"  {part[1]:>4}   {sizes[part[0]]:<6} {count:>8} {cost / sum(plan.costs):>12.1%} {part_cpu[part]:>10.1f}"
        )
    cpu_span = power.makespan([part_cpu[part] for part in plan.parts], args.processes)
    print(
        f"CPU: single {single_cpu:.1f} s, parts {sum(part_cpu.values()):.1f} s in all, "
        f"{cpu_span:.1f} s on the busiest of {args.processes} processes (ratio {cpu_span / single_cpu:.2f})"
    )
    print(
        f"wall: single process {single_s:.1f} s; {args.processes} processes {split_s:.1f} s "
        f"(ratio {split_s / single_s:.2f}); same result: {same}; load average {os.getloadavg()[0]:.2f} at end"
    )


if __name__ == "__main__":
    main()
