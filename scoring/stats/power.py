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
  beyond doubt (error probability <= ``error`` per decision, see ``bootstrap.settled_columns``) and is
  dropped from later products. Columns with p near alpha still run all B resamples.
Nothing is approximated by a normal distribution: every p comes from actual resampling.
"""

import time
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from scipy.special import ndtr

from .bootstrap import all_pairs, bootstrap_test, chunk_schedule, complete, settled_columns, significance_limit

ROSE_SIZES = (10, 50, 100, 200, 300, 500, 700, 1000, 10000)
# Fewer documents than this behind a system pair: no power is computed for it (resampling 3
# documents thousands of times tells nothing about 1,000: it gave power 1.0). One rule for the
# dashboards (scoring.runs.statistics) and the protocol comparison (scoring.stats.protocols).
MIN_DOCUMENTS = 10


@dataclass
class PowerResult:
    sizes: np.ndarray  # sample sizes n
    pairs: np.ndarray  # (P x 2) system indices, the better system (higher mean) first
    differences: np.ndarray  # (P,) mean score difference over all documents, >= 0
    power: np.ndarray  # (len(sizes) x P) share of trials with p < alpha
    buckets: np.ndarray  # (P,) bucket of each pair, 0 = smallest differences (-1: a pair given no power)
    bucket_power: np.ndarray  # (len(sizes) x n_buckets) mean power of the pairs in each bucket
    resamples: np.ndarray  # (len(sizes),) bootstrap resample-columns evaluated (cost diagnostic)
    pair_documents: np.ndarray | None = None  # (P,) documents each pair shares (partial coverage)


def bucket_rows(result: PowerResult) -> list[dict]:
    """Each bucket of pair differences as the pages and reports show it: its pairs, the range of
    their differences (None for an empty bucket) and its mean power per sample size."""
    rows = []
    for b in range(result.bucket_power.shape[1]):
        members = result.differences[result.buckets == b]
        rows.append(
            {
                "bucket": b,
                "pairs": int(len(members)),
                "min_difference": float(members.min()) if len(members) else None,
                "max_difference": float(members.max()) if len(members) else None,
                "power": result.bucket_power[:, b].tolist(),
            }
        )
    return rows


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


def power_analysis_partial(
    scores,
    sizes=ROSE_SIZES,
    n_trials: int = 1000,
    n_resamples: int = 100_000,
    alpha: float = 0.05,
    n_buckets: int = 5,
    rng=None,
    min_documents: int = 30,
    early_stop: bool = True,
    error: float = 1e-6,
    progress=None,
) -> PowerResult:
    """Power for every system pair of ``scores`` (n_docs x m, NaN where a system was not judged) on
    the documents *that pair* shares: each pair's trials draw from its own shared documents, and its
    difference is the mean difference over them. A pair sharing fewer than ``min_documents``
    documents is not analysed (its power is NaN): resampling a handful of documents thousands of
    times tells nothing about a larger sample (3 documents gave power 1.0). ``pair_documents`` holds
    each pair's n; ``bucket_power`` averages the analysed pairs of each bucket (NaN when none).
    ``progress(done, total)``, if given, is called after each pair."""
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2:
        raise ValueError("expected a documents x systems matrix")
    judged = ~np.isnan(scores)
    pairs = all_pairs(scores.shape[1])
    n_pairs = len(pairs)
    rng = np.random.default_rng(rng)
    children = rng.spawn(max(n_pairs, 1))
    power = np.full((len(sizes), n_pairs), np.nan)
    differences = np.full(n_pairs, np.nan)
    shared_n = np.zeros(n_pairs, dtype=np.int64)
    resamples = np.zeros(len(sizes), dtype=np.int64)
    for p, (a, b) in enumerate(pairs.tolist()):
        shared = judged[:, a] & judged[:, b]
        shared_n[p] = int(shared.sum())
        if not shared_n[p]:
            continue
        sub = scores[shared][:, [a, b]]
        means = sub.mean(axis=0)
        if means[0] < means[1]:  # the better system of the pair first, as power_analysis orients it
            pairs[p] = (b, a)
        differences[p] = abs(float(means[0] - means[1]))
        if shared_n[p] < min_documents:
            continue
        result = power_analysis(
            sub, sizes, n_trials, n_resamples, alpha, 1, children[p], early_stop=early_stop, error=error
        )
        power[:, p] = result.power[:, 0]
        resamples += result.resamples
        if progress is not None:
            progress(p + 1, n_pairs)
    # Quintiles of the analysed pairs' differences; a pair without power is in no bucket (-1), so a
    # bucket's pairs, its range of differences and its mean power describe the same pairs.
    analysed = shared_n >= max(min_documents, 1)
    buckets = np.full(n_pairs, -1, dtype=np.int64)
    buckets[analysed] = difference_buckets(differences[analysed], n_buckets)
    bucket_power = np.full((len(sizes), n_buckets), np.nan)
    for bucket in range(n_buckets):
        members = buckets == bucket
        if members.any():
            bucket_power[:, bucket] = power[:, members].mean(axis=1)
    return PowerResult(np.asarray(sizes), pairs, differences, power, buckets, bucket_power, resamples, shared_n)


# ---- the same analysis split into parts, for several worker processes ------------------------
# Every column (trial x pair) of a sample size is tested on the bootstrap resamples of that size,
# drawn from the size's own child of the seed (the children ``power_analysis`` spawns in order),
# and a column's test does not depend on the other columns tested with it, so any partition of
# the columns gives, combined, the single run's result for the same seed.
#
# What a part costs (measured at RoSE's defaults with bench/power_split_bench.py): its columns'
# products, and one pass of drawing and counting resample indices for as long as its
# longest-running column runs. Most columns settle within a few chunks; the few whose p is close
# to alpha run all B resamples. Split by ranges of trials, every part of n = 10,000 holds some of
# those and pays a whole pass (~10% of the size). So a size is split by estimated running time
# instead: the columns that will run long go together into its first part, and the others'
# parts stop after a few chunks.

PART_DOC_OVERHEAD = 200  # a size's columns cost ~columns x (n + 200): fixed per-column work ~ 200 documents
PART_TAIL = 0.09  # one pass over the resamples costs ~0.09 x n x resamples of those units (10% at n = 10,000)
CHUNK_DOC_OVERHEAD = 300  # within a size, a chunk costs a column ~(resamples + 300) x n (gathering d ~ 300)


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


def _trial_docs(n_docs: int, n: int, n_trials: int, seed: int, index: int) -> np.ndarray:
    """(n x n_trials) documents of every trial of size ``index``, as ``power_analysis`` draws them."""
    return _size_rngs(seed, index)[0].integers(0, n_docs, size=(n, n_trials), dtype=np.int32)


def _settle_curve(n: int, n_resamples: int, alpha: float, error: float):
    """(p grid, resamples after which ``bootstrap_test`` settles a column whose share of
    resamples not above 0 is exactly p after every chunk), by its own rule (``settled_columns``)."""
    schedule = chunk_schedule(n, n_resamples)
    delta, limit = error / (2 * len(schedule)), significance_limit(alpha, n_resamples)
    grid = np.unique(np.concatenate([np.linspace(0, 1, 501), alpha + np.linspace(-0.01, 0.01, 201)]).clip(0, 1))
    runs = np.full(len(grid), n_resamples)
    active, done = np.arange(len(grid)), 0
    for size in schedule:
        done += size
        settled, _ = settled_columns(np.round(grid[active] * done).astype(np.int64), done, n_resamples, limit, delta)
        runs[active[settled]] = done
        active = active[~settled]
        if active.size == 0:
            break
    return grid, runs


def settle_estimate(diffs, docs, n_resamples: int, alpha: float = 0.05, error: float = 1e-6) -> np.ndarray:
    """Estimated resamples each column (trial t, pair p at t * P + p) runs before its decision
    settles, for planning only: its p taken as Phi(-z) of the trial's documents."""
    n, n_trials = docs.shape
    n_docs = diffs.shape[0]
    counts = np.empty((n_trials, n_docs))
    step = max(1, (1 << 20) // n)  # trials counted at a time
    for t in range(0, n_trials, step):
        block = docs[:, t : t + step] + np.arange(min(step, n_trials - t), dtype=np.int32) * n_docs
        counts[t : t + step] = np.bincount(block.ravel(), minlength=block.shape[1] * n_docs).reshape(-1, n_docs)
    mean = counts @ diffs / n
    se = np.sqrt(np.maximum(counts @ diffs**2 / n - mean**2, 0.0) / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, mean / se, np.where(mean > 0, np.inf, -np.inf))
    return np.interp(ndtr(-z).ravel(), *_settle_curve(n, n_resamples, alpha, error))


@dataclass
class PowerPlan:
    """Parts (size index, part number) costliest first, with their estimated costs; ``labels[i]``
    gives the part number of every column of size i (sizes kept whole have none)."""

    parts: list[tuple[int, int]]
    costs: list[float]
    labels: dict[int, np.ndarray]

    def columns(self, part) -> np.ndarray | None:
        """The part's columns, ascending (None: every column of its size)."""
        index, number = part
        return np.flatnonzero(self.labels[index] == number) if index in self.labels else None


def _size_parts(n: int, need: np.ndarray, n_resamples: int, k: int) -> tuple[np.ndarray | None, list[float]]:
    """Split one size's columns into at most ``k`` parts of about equal estimated cost, the
    longest-running columns first: (part number per column or None for one part, cost per part)."""
    schedule = np.array(chunk_schedule(n, n_resamples))
    ends = np.cumsum(schedule)
    chunks = np.minimum(np.searchsorted(ends, need), len(schedule) - 1)  # last chunk each column runs
    weight = np.cumsum(schedule + CHUNK_DOC_OVERHEAD)[chunks]
    bulk = len(need) * (n + PART_DOC_OVERHEAD) / weight.sum()  # estimated cost per unit of weight
    order = np.argsort(-weight, kind="stable")
    cum = np.concatenate([[0.0], np.cumsum(weight[order]) * bulk])
    tails = PART_TAIL * n * ends[chunks[order]]  # a part starting at rank r runs ends[...] resamples

    def cut(target):  # bounds of greedy cuts of cost <= target, None if that needs more than k parts
        bounds = [0]
        while bounds[-1] < len(order) and len(bounds) <= k:
            a = bounds[-1]
            bounds.append(max(a + 1, int(np.searchsorted(cum, cum[a] + target - tails[a], side="right")) - 1))
        return bounds if bounds[-1] == len(order) else None

    low, high = 0.0, (cum[-1] + tails[0]) * (1 + 1e-9) + 1  # one part
    for _ in range(50):  # the smallest target that needs at most k parts
        mid = (low + high) / 2
        low, high = (low, mid) if cut(mid) else (mid, high)
    bounds = cut(high)
    assert bounds is not None
    costs = [float(cum[b] - cum[a] + tails[a]) for a, b in pairwise(bounds)]
    if len(costs) == 1:
        return None, costs
    labels = np.empty(len(need), dtype=np.uint8)
    for j, (a, b) in enumerate(pairwise(bounds)):
        labels[order[a:b]] = j
    return labels, costs


def makespan(costs, workers: int) -> float:
    """Finishing time when ``workers`` processes take the parts in the given order, each
    taking the next part as soon as it is free (what Celery does with prefetch 1)."""
    loads = [0.0] * max(1, workers)
    for cost in costs:
        loads[loads.index(min(loads))] += cost
    return max(loads)


def power_plan(
    scores,
    sizes,
    n_trials: int = 1000,
    n_resamples: int = 100_000,
    workers: int = 2,
    *,
    seed: int = 0,
    alpha: float = 0.05,
    error: float = 1e-6,
    max_parts: int = 255,
) -> PowerPlan:
    """The parts of ``power_analysis(scores, sizes, ..., rng=seed)`` for ``workers`` processes.

    A size costs about columns x (n + PART_DOC_OVERHEAD) plus one pass over its resamples
    (PART_TAIL). Starting from one part per size, the size whose extra split shortens the
    estimated finishing time (``makespan`` of the parts costliest first) the most is split once
    more, until no split helps; only sizes worth at least half a process's share are split,
    so only their columns' running times are estimated (``settle_estimate``). At RoSE's
    defaults and 2 processes that splits n = 10,000 in two: its long-running columns and
    about 40% of its work in one part, the rest in the other.
    """
    _, _, pairs, diffs = _oriented(scores)
    n_columns = n_trials * len(pairs)
    whole = [n_columns * (int(n) + PART_DOC_OVERHEAD) + PART_TAIL * int(n) * n_resamples for n in sizes]
    cache: dict = {(i, 1): (None, [cost]) for i, cost in enumerate(whole)}

    def split(i, k):
        if (i, k) not in cache:
            n = int(sizes[i])
            if (i, 0) not in cache:
                docs = _trial_docs(len(diffs), n, n_trials, seed, i)
                cache[i, 0] = settle_estimate(diffs, docs, n_resamples, alpha, error)
            cache[i, k] = _size_parts(n, cache[i, 0], n_resamples, k)
        return cache[i, k]

    def parts(splits):
        return sorted(
            ((cost, i, j) for i, k in enumerate(splits) for j, cost in enumerate(split(i, k)[1])),
            key=lambda part: (-part[0], part[1], part[2]),
        )

    def span(splits):
        return makespan([cost for cost, _, _ in parts(splits)], workers)

    splittable = [i for i, cost in enumerate(whole) if 2 * workers * cost >= sum(whole)]
    splits = [1] * len(sizes)
    best = span(splits)
    while True:
        tries = [
            (span(splits[:i] + [splits[i] + 1] + splits[i + 1 :]), i)
            for i in splittable
            if len(split(i, splits[i])[1]) == splits[i] < min(max_parts, n_columns)
        ]
        if not tries or min(tries)[0] >= best:
            break
        best, i = min(tries)
        splits[i] += 1
    labels = {i: split(i, k)[0] for i, k in enumerate(splits) if k > 1}
    final = parts(splits)
    return PowerPlan([(i, j) for _, i, j in final], [cost for cost, _, _ in final], labels)


def power_part(
    scores,
    sizes,
    index: int,
    columns=None,
    *,
    n_trials: int = 1000,
    n_resamples: int = 100_000,
    alpha: float = 0.05,
    seed: int = 0,
    early_stop: bool = True,
    error: float = 1e-6,
):
    """(significant per column, resample-columns used) for ``columns`` (ascending; None: all)
    of size ``index``, exactly as ``power_analysis`` decides them."""
    scores, _, pairs, diffs = _oriented(scores)
    n_docs, n_pairs, n = scores.shape[0], len(pairs), int(sizes[index])
    docs = _trial_docs(n_docs, n, n_trials, seed, index)
    ids = np.arange(n_trials * n_pairs) if columns is None else np.asarray(columns, dtype=np.int64)
    boot_rng = _size_rngs(seed, index)[1]

    def pick(cols):
        c = ids[cols]
        return diffs[docs[:, c // n_pairs], c % n_pairs]

    test = bootstrap_test(pick, len(ids), n, n_resamples, alpha, boot_rng, early_stop, error)
    return test.significant, int(test.used.sum())


def combine_parts(scores, sizes, plan: PowerPlan, results: dict, *, n_trials: int = 1000, n_buckets: int = 5):
    """The PowerResult of all parts of ``plan``: ``results[(index, number)] = (significant, used)``."""
    _, means, pairs, _ = _oriented(scores)
    n_pairs = len(pairs)
    power = np.zeros((len(sizes), n_pairs))
    resamples = np.zeros(len(sizes), dtype=np.int64)
    for i in range(len(sizes)):
        significant = np.zeros(n_trials * n_pairs, dtype=bool)
        seen = np.zeros(n_trials * n_pairs, dtype=np.int64)
        for part in (part for part in plan.parts if part[0] == i and part in results):
            sig, used = results[part]
            columns = plan.columns(part)
            significant[slice(None) if columns is None else columns] = np.asarray(sig, dtype=bool)
            seen[slice(None) if columns is None else columns] += 1
            resamples[i] += used
        if not (seen == 1).all():
            raise ValueError(f"size {sizes[i]}: {(seen == 1).sum()} of {n_trials * n_pairs} columns computed")
        power[i] = significant.reshape(n_trials, n_pairs).mean(axis=0)
    differences = means[pairs[:, 0]] - means[pairs[:, 1]]
    buckets = difference_buckets(differences, n_buckets)
    bucket_power = np.stack([power[:, buckets == b].mean(axis=1) for b in range(n_buckets)], axis=1)
    return PowerResult(np.asarray(sizes), pairs, differences, power, buckets, bucket_power, resamples)
