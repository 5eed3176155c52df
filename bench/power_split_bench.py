"""Power analysis split into parts: wall time of the single-process run against the same parts
shared by N worker processes (a process pool standing in for Celery workers), and a check that
both give the same result for the seed.

The scores are synthetic (documents x systems, seeded); RoSE's defaults are 2,500 documents,
12 systems (66 pairs), sizes up to 10,000, 1,000 trials and 100,000 resamples: pass smaller
--trials / --resamples for a shorter run (the split's share of the work is the same).

Run: .venv/bin/python bench/power_split_bench.py [--processes 2] [--trials 100] [--resamples 10000]
"""

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring.stats import power

CELLS_PER_PART = 80_000_000  # scoring.statistics.POWER_PART_CELLS


def _part(job):
    scores, sizes, part, trials, resamples, seed = job
    return part, power.power_part(scores, sizes, part, n_trials=trials, n_resamples=resamples, seed=seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=2500)
    parser.add_argument("--systems", type=int, default=12)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    scores = np.clip(rng.normal(np.linspace(0.30, 0.40, args.systems), 0.15, (args.documents, args.systems)), 0, 1)
    sizes = list(power.ROSE_SIZES)
    n_pairs = args.systems * (args.systems - 1) // 2
    cells = CELLS_PER_PART * args.trials // 1000  # the same number of parts as with 1,000 trials
    plan = power.power_plan(sizes, args.trials, n_pairs, cells)

    t = time.perf_counter()
    single = power.power_analysis(scores, sizes=sizes, n_trials=args.trials, n_resamples=args.resamples, rng=args.seed)
    single_s = time.perf_counter() - t

    jobs = [
        (scores, sizes, p, args.trials, args.resamples, args.seed) for p in sorted(plan, key=lambda p: -sizes[p[0]])
    ]
    t = time.perf_counter()
    with ProcessPoolExecutor(args.processes) as pool:
        results = dict(pool.map(_part, jobs))
    split = power.combine_parts(scores, sizes, results, n_trials=args.trials)
    split_s = time.perf_counter() - t
    same = np.array_equal(single.power, split.power) and np.array_equal(single.bucket_power, split.bucket_power)
    print(
        f"{args.documents} documents x {args.systems} systems ({n_pairs} pairs), sizes {sizes}, "
        f"{args.trials} trials, {args.resamples} resamples, {len(plan)} parts"
    )
    print(
        f"single process: {single_s:.1f} s; {args.processes} processes: {split_s:.1f} s "
        f"(ratio {split_s / single_s:.2f}); same result: {same}"
    )


if __name__ == "__main__":
    main()
