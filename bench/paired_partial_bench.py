"""The paired tests of every system pair while coverage differs by pair (a round still being
judged): ``scoring.stats.bootstrap.paired_bootstrap_partial`` against the code it replaced,
copied below as the reference, side by side in one run.

Data: REALSumm's expert ACU scores (100 documents x 25 systems, `labels/*.label` under
`$SHARED_DIR/data/realsumm`, or --data), with each (document, system) cell judged or not:
- ``complete``: every system on every document (one group of 300 pairs);
- ``ten-partial``: 15 systems on every document, 10 on their own random 50-100 documents;
- ``all-partial``: every system on its own random 50-100 documents (almost every pair its own
  document set).
Resamples: ``family_resamples`` for the 300 pairs over the run's 10,000 (24,000), as a scores run
draws them. Per layout, CPU seconds of the process (``time.process_time``) of the reference and of
the current code, alternating, best of --repeat, and their ratio; then how the p-values agree:
identical on complete data (and ``paired_bootstrap`` identical to its reference), otherwise the
largest |p_new - p_old| over the 600 ordered pairs and the share of pairs whose difference is
beyond 2 standard errors of the difference of two independent bootstrap estimates,
sqrt(2 p (1 - p) / B) (about 5% expected; the draws differ, so single p-values do), and how many
pairs the Holm-adjusted matrix reads significant at 0.05 under each.

--complete-shape also times ``paired_bootstrap`` against its reference at scoring_bench.py's shape
(500 random documents x 12 systems, 100,000 resamples).

--ideas also times the alternatives weighed (scoring.md, "Statistics"): ``per-group`` each
document set its own draw as before but one sum for both directions (the reference's p-values
exactly), ``shared-uniform`` one draw of uniforms for all pairs scaled to each pair's count
(floor(u n)).

BLAS threads count in CPU seconds (a small product on two OpenBLAS threads costs ten times the
CPU of one); the Celery worker that recomputes runs with one:
    OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/paired_partial_bench.py --ideas
    .venv/bin/python bench/paired_partial_bench.py
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.stats import bootstrap  # noqa: E402
from scoring.stats.bootstrap import (  # noqa: E402
    TIE,
    _column_groups,
    _shared_size_classes,
    all_pairs,
    bootstrap_test,
    chunk_schedule,
    complete,
    paired_bootstrap,
    paired_bootstrap_partial,
    paired_counts,
)
from scoring.stats.multiple_testing import family_resamples, pairwise_holm  # noqa: E402

LAYOUTS = ("complete", "ten-partial", "all-partial")


def reference_paired_bootstrap(scores, n_resamples: int = 100_000, rng=None) -> np.ndarray:
    """``paired_bootstrap`` before this change: the columns d and -d, one product each."""
    scores = complete(scores)
    n, m = scores.shape
    pairs = all_pairs(m)
    d = scores[:, pairs[:, 0]] - scores[:, pairs[:, 1]]
    both = np.hstack([d, -d])
    test = bootstrap_test(lambda cols: both[:, cols], both.shape[1], n, n_resamples, rng=rng, early_stop=False)
    p = np.full((m, m), np.nan)
    k = len(pairs)
    p[pairs[:, 0], pairs[:, 1]] = test.below[:k] / n_resamples
    p[pairs[:, 1], pairs[:, 0]] = test.below[k:] / n_resamples
    return p


def reference_partial(scores, n_resamples: int = 100_000, rng=None):
    """``paired_bootstrap_partial`` before this change: one draw and one test per document set."""
    scores = np.asarray(scores, dtype=float)
    rng = np.random.default_rng(rng)
    m = scores.shape[1]
    judged = ~np.isnan(scores)
    pairs = all_pairs(m)
    shared = judged[:, pairs[:, 0]] & judged[:, pairs[:, 1]]
    p = np.full((m, m), np.nan)
    for cols in _column_groups(shared.T).values():
        rows = shared[:, cols[0]]
        if not rows.any():
            continue
        a, b = pairs[cols, 0], pairs[cols, 1]
        d = np.ascontiguousarray(scores[rows][:, a] - scores[rows][:, b])
        both = np.hstack([d, -d])
        test = bootstrap_test(
            lambda c, both=both: both[:, c], both.shape[1], int(rows.sum()), n_resamples, rng=rng, early_stop=False
        )
        k = len(cols)
        p[a, b] = test.below[:k] / n_resamples
        p[b, a] = test.below[k:] / n_resamples
    return p


def per_group(scores, n_resamples: int, rng=None):
    """Idea: the reference's draws (one per document set), one sum for both directions."""
    scores = np.asarray(scores, dtype=float)
    rng = np.random.default_rng(rng)
    m = scores.shape[1]
    judged = ~np.isnan(scores)
    pairs = all_pairs(m)
    shared = judged[:, pairs[:, 0]] & judged[:, pairs[:, 1]]
    p = np.full((m, m), np.nan)
    for cols in _column_groups(shared.T).values():
        rows = shared[:, cols[0]]
        a, b = pairs[cols, 0], pairs[cols, 1]
        ab, ba = paired_counts(scores[rows][:, a] - scores[rows][:, b], n_resamples, rng)
        p[a, b], p[b, a] = ab / n_resamples, ba / n_resamples
    return p


def shared_uniform(scores, n_resamples: int, rng=None):
    """Idea: one draw of uniforms for every pair, scaled to each document count (floor(u n))."""
    scores = np.asarray(scores, dtype=float)
    rng = np.random.default_rng(rng)
    m = scores.shape[1]
    judged = ~np.isnan(scores)
    pairs = all_pairs(m)
    classes = _shared_size_classes(scores, pairs, judged[:, pairs[:, 0]] & judged[:, pairs[:, 1]])
    tally = {
        size: (np.zeros(d.shape[1], np.int64), np.zeros(d.shape[1], np.int64)) for size, (d, _, _) in classes.items()
    }
    top = max(classes)
    for size in chunk_schedule(top, n_resamples):
        u = rng.random((size, top))
        for n, (d, _, _) in classes.items():
            tol = (TIE * n * np.abs(d).max(axis=0))[:, None]
            for cols, sums in bootstrap._resample_sums((u[:, :n] * n).astype(np.intp), d):
                tally[n][0][cols] += np.count_nonzero(sums <= tol[cols], axis=1)
                tally[n][1][cols] += np.count_nonzero(sums >= -tol[cols], axis=1)
    p = np.full((m, m), np.nan)
    for n, (_, a, b) in classes.items():
        p[a, b], p[b, a] = tally[n][0] / n_resamples, tally[n][1] / n_resamples
    return p


def realsumm_scores(folder: Path) -> np.ndarray:
    """(documents x systems) ACU scores: the share of a reference's units each summary has."""
    files = sorted(folder.glob("labels/*.label"))
    columns = []
    for path in files:
        rows = [line.split("\t") for line in path.read_text().splitlines()]
        columns.append([np.mean([int(x) for x in row]) for row in rows])
    return np.array(columns).T


def layout(scores: np.ndarray, name: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = scores.copy()
    n, m = out.shape
    partial = {"complete": [], "ten-partial": range(m - 10, m), "all-partial": range(m)}[name]
    for j in partial:
        out[rng.choice(n, n - int(rng.integers(50, n + 1)), replace=False), j] = np.nan
    return out


def cpu_best(fn, repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def agreement(p_old, p_new, resamples: int) -> str:
    off = ~np.isnan(p_old)
    if np.array_equal(p_old[off], p_new[off]):
        return "p-values identical"
    gap = np.abs(p_new - p_old)[off]
    mean = (p_old[off] + p_new[off]) / 2
    se = np.sqrt(2 * np.maximum(mean * (1 - mean), 1 / resamples) / resamples)
    holm_old = np.count_nonzero(pairwise_holm(p_old)[0] < 0.05)
    holm_new = np.count_nonzero(pairwise_holm(p_new)[0] < 0.05)
    return (
        f"max |p_new - p_old| {gap.max():.4f}, beyond 2 s.e. {np.mean(gap > 2 * se):.1%} of {off.sum()}, "
        f"Holm significant at 0.05: {holm_old} old, {holm_new} new"
    )


def main():
    shared = Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(shared / "data" / "realsumm"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7, help="coverage of the partial layouts")
    parser.add_argument("--ideas", action="store_true", help="also time the alternatives weighed")
    parser.add_argument("--complete-shape", action="store_true", help="also paired_bootstrap at 500 x 12, 100,000")
    args = parser.parse_args()
    scores = realsumm_scores(Path(args.data))
    if scores.size == 0:
        parser.error(f"no labels/*.label under {args.data} (pass --data or set SHARED_DIR)")
    m = scores.shape[1]
    resamples = family_resamples(m * (m - 1) // 2, 10_000)
    print(
        f"REALSumm {scores.shape[0]} documents x {m} systems, {resamples:,} resamples, "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}, best of {args.repeat} (CPU s)"
    )
    for name in LAYOUTS:
        data = layout(scores, name, args.seed)
        judged = ~np.isnan(data)
        pairs = all_pairs(m)
        shared_docs = judged[:, pairs[:, 0]] & judged[:, pairs[:, 1]]
        groups = len(_column_groups(shared_docs.T))
        counts = len(_shared_size_classes(data, pairs, shared_docs))
        old_s, p_old = cpu_best(lambda data=data: reference_partial(data, resamples, 1), args.repeat)
        new_s, (p_new, _) = cpu_best(lambda data=data: paired_bootstrap_partial(data, resamples, 1), args.repeat)
        print(
            f"{name:<12} {groups:>3} document sets, {counts:>2} document counts: reference {old_s:6.2f} s, "
            f"now {new_s:6.2f} s, ratio {old_s / new_s:5.1f}x; {agreement(p_old, p_new, resamples)}",
            flush=True,
        )
        if name == "complete":
            same = np.array_equal(p_new, paired_bootstrap(data, resamples, 1), equal_nan=True)
            same_ref = np.array_equal(p_old, reference_paired_bootstrap(data, resamples, 1), equal_nan=True)
            print(f"{'':<12} complete data: partial == paired_bootstrap {same}, reference too {same_ref}")
        if args.ideas and name != "complete":
            for idea, fn in (("per-group", per_group), ("shared-uniform", shared_uniform)):
                sec, p_idea = cpu_best(lambda data=data, fn=fn: fn(data, resamples, 1), args.repeat)
                print(
                    f"{'':<12} idea {idea:<14} {sec:6.2f} s, ratio {old_s / sec:5.1f}x; {agreement(p_old, p_idea, resamples)}"
                )

    if args.complete_shape:
        complete_shape(args.repeat)


def complete_shape(repeat: int):
    scores = np.random.default_rng(0).random((500, 12))
    old_s, p_old = cpu_best(lambda: reference_paired_bootstrap(scores, 100_000, 2), repeat)
    new_s, p_new = cpu_best(lambda: paired_bootstrap(scores, 100_000, 2), repeat)
    print(
        f"paired_bootstrap, 500 documents x 12 systems, 100,000 resamples: reference {old_s:6.2f} s, now "
        f"{new_s:6.2f} s, ratio {old_s / new_s:5.1f}x; {agreement(p_old, p_new, 100_000)}"
    )


if __name__ == "__main__":
    main()
