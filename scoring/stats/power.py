"""Power analysis of the paired bootstrap test (RoSE Alg. 1; scoring.md, "Statistics").

For each sample size n and each of T trials, n documents are drawn with replacement and the
paired bootstrap test (B resamples) is run on them for every system pair; power = share of
trials with p < alpha. Pairs are oriented so that A is the system with the higher mean over all
documents (power = chance of detecting the true order) and averaged within quintile buckets of
their score difference.

What makes RoSE's defaults (B = 100,000, T = 1,000, n up to 10,000, 66 pairs) tractable:
- every (trial, pair) is one column of per-document differences, and all columns of a sample
  size are tested on the same bootstrap resamples (``bootstrap.bootstrap_test``), so one
  (resamples x n) count matrix times an (n x columns) matrix gives all resample means. Sharing
  the resample index draws across trials leaves each trial's test an exact bootstrap test of
  its own documents (the trials' documents are independent of the resamples), so the power
  estimate stays unbiased; only the tiny Monte Carlo noise of B resamples is shared.
- only the decision p < alpha matters, so a column stops as soon as its decision is settled
  beyond doubt (error probability <= ``error`` per decision, see ``bootstrap._settle``) and is
  dropped from later products. Columns with p near alpha still run all B resamples.
Nothing is approximated by a normal distribution: every p comes from actual resampling.
"""

import time
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from .bootstrap import all_pairs, bootstrap_test, complete

ROSE_SIZES = (10, 50, 100, 200, 300, 500, 700, 1000, 10000)


@dataclass
class PowerResult:
    sizes: np.ndarray  # sample sizes n
    pairs: np.ndarray  # (P x 2) system indices, the better system (higher mean) first
    differences: np.ndarray  # (P,) mean score difference over all documents, >= 0
    power: np.ndarray  # (len(sizes) x P) share of trials with p < alpha
    buckets: np.ndarray  # (P,) bucket of each pair, 0 = smallest differences
    bucket_power: np.ndarray  # (len(sizes) x n_buckets) mean power of the pairs in each bucket
    resamples: np.ndarray  # (len(sizes),) bootstrap resample-columns evaluated (cost diagnostic)


def difference_buckets(differences, n_buckets: int = 5) -> np.ndarray:
    """Bucket index per pair: equal-count groups by rank of the difference (quintiles for 5)."""
    order = np.argsort(differences, kind="stable")
    buckets = np.empty(len(differences), dtype=np.int64)
    buckets[order] = np.arange(len(differences)) * n_buckets // max(len(differences), 1)
    return buckets


def power_analysis(
    scores,
    sizes=ROSE_SIZES,
    n_trials: int = 1000,
    n_resamples: int = 100_000,
    alpha: float = 0.05,
    n_buckets: int = 5,
    rng=None,
    early_stop: bool = True,
    error: float = 1e-6,
    progress=None,
) -> PowerResult:
    """Power of the paired bootstrap test for every system pair of ``scores`` (n_docs x m).

    ``rng`` is a seed or a ``numpy.random.Generator``; ``progress(n, seconds)``, if given, is
    called after each sample size.
    """
    scores = complete(scores)
    n_docs, m = scores.shape
    means = scores.mean(axis=0)
    pairs = all_pairs(m)
    flip = means[pairs[:, 0]] < means[pairs[:, 1]]
    pairs[flip] = pairs[flip, ::-1]
    diffs = scores[:, pairs[:, 0]] - scores[:, pairs[:, 1]]  # n_docs x P
    n_pairs = len(pairs)
    rng = np.random.default_rng(rng)
    power = np.zeros((len(sizes), n_pairs))
    resamples = np.zeros(len(sizes), dtype=np.int64)
    for i, n in enumerate(sizes):
        start = time.perf_counter()
        trial_rng, boot_rng = rng.spawn(2)
        docs = trial_rng.integers(0, n_docs, size=(n, n_trials), dtype=np.int32)  # column t: trial t

        def columns(cols):  # column c is (trial c // P, pair c % P)
            return diffs[docs[:, cols // n_pairs], cols % n_pairs]  # noqa: B023 - called within the same iteration

        test = bootstrap_test(columns, n_trials * n_pairs, n, n_resamples, alpha, boot_rng, early_stop, error)
        power[i] = test.significant.reshape(n_trials, n_pairs).mean(axis=0)
        resamples[i] = test.used.sum()
        if progress is not None:
            progress(n, time.perf_counter() - start)
    differences = means[pairs[:, 0]] - means[pairs[:, 1]]
    buckets = difference_buckets(differences, n_buckets)
    bucket_power = np.stack([power[:, buckets == b].mean(axis=1) for b in range(n_buckets)], axis=1)
    return PowerResult(np.asarray(sizes), pairs, differences, power, buckets, bucket_power, resamples)


# ---- the same analysis split into parts, for several worker processes ------------------------
# A part is (size index, first column, end column) of that size's (trial x pair) columns. Every
# column is tested on the bootstrap resamples of its sample size, drawn from the size's own
# child of the seed (the children ``power_analysis`` spawns in order), and a column's test does
# not depend on the other columns tested with it, so the parts combined give the single run's
# result for the same seed.


def _oriented(scores):
    scores = complete(scores)
    means = scores.mean(axis=0)
    pairs = all_pairs(scores.shape[1])
    flip = means[pairs[:, 0]] < means[pairs[:, 1]]
    pairs[flip] = pairs[flip, ::-1]
    return scores, means, pairs, scores[:, pairs[:, 0]] - scores[:, pairs[:, 1]]


def _size_rngs(seed: int, index: int):
    """The (trial, bootstrap) generators ``power_analysis(rng=seed)`` uses for size ``index``."""
    children = np.random.SeedSequence(seed).spawn(2 * index + 2)[2 * index :]
    return np.random.default_rng(children[0]), np.random.default_rng(children[1])


def power_plan(sizes, n_trials: int, n_pairs: int, columns_per_part: int = 2_000_000_000) -> list[tuple[int, int, int]]:
    """Parts of roughly equal cost (documents x columns), at most ``columns_per_part`` cells each."""
    plan = []
    for i, n in enumerate(sizes):
        total = n_trials * n_pairs
        k = max(1, min(total, -(-int(n) * total // columns_per_part)))
        bounds = [total * j // k for j in range(k + 1)]
        plan += [(i, a, b) for a, b in pairwise(bounds) if b > a]
    return plan


def power_part(
    scores,
    sizes,
    part: tuple[int, int, int],
    *,
    n_trials: int = 1000,
    n_resamples: int = 100_000,
    alpha: float = 0.05,
    seed: int = 0,
    early_stop: bool = True,
    error: float = 1e-6,
):
    """(significant per column of the part, resample-columns used) for one part of the plan."""
    index, first, end = part
    scores, _, pairs, diffs = _oriented(scores)
    n_docs, n_pairs, n = scores.shape[0], len(pairs), int(sizes[index])
    trial_rng, boot_rng = _size_rngs(seed, index)
    docs = trial_rng.integers(0, n_docs, size=(n, n_trials), dtype=np.int32)

    def columns(cols):
        cols = cols + first
        return diffs[docs[:, cols // n_pairs], cols % n_pairs]

    test = bootstrap_test(columns, end - first, n, n_resamples, alpha, boot_rng, early_stop, error)
    return test.significant, int(test.used.sum())


def combine_parts(scores, sizes, results: dict, *, n_trials: int = 1000, n_buckets: int = 5) -> PowerResult:
    """The PowerResult of all parts: ``results[(index, first, end)] = (significant, used)``."""
    _, means, pairs, _ = _oriented(scores)
    n_pairs = len(pairs)
    power = np.zeros((len(sizes), n_pairs))
    resamples = np.zeros(len(sizes), dtype=np.int64)
    for i in range(len(sizes)):
        mine = sorted((first, end, value) for (index, first, end), value in results.items() if index == i)
        significant = np.concatenate([np.asarray(sig, dtype=bool) for _, _, (sig, _) in mine])
        if significant.size != n_trials * n_pairs:
            raise ValueError(f"size {sizes[i]}: {significant.size} of {n_trials * n_pairs} columns computed")
        power[i] = significant.reshape(n_trials, n_pairs).mean(axis=0)
        resamples[i] = sum(used for _, _, (_, used) in mine)
    differences = means[pairs[:, 0]] - means[pairs[:, 1]]
    buckets = difference_buckets(differences, n_buckets)
    bucket_power = np.stack([power[:, buckets == b].mean(axis=1) for b in range(n_buckets)], axis=1)
    return PowerResult(np.asarray(sizes), pairs, differences, power, buckets, bucket_power, resamples)
