"""Document bootstrap: system confidence intervals and paired tests (scoring.md, "Statistics").

Score matrices are n documents x m systems and must be complete (no NaN): restrict them to the
documents every compared system has before calling. Resampling draws n document indices with
replacement per resample; a resample's means are ``counts @ scores / n`` with ``counts`` the
(resamples x n) matrix of how often each document was drawn, so all systems (or all system
pairs) share the same resamples and the work is one matrix product per chunk of resamples.
Every function that resamples takes ``rng``: a seed or a ``numpy.random.Generator``.

Ties (scoring.md, "Refinements"): a resample whose mean difference is not above 0 counts against
"A is better than B", so a difference that is exactly zero on every resample gives p = 1, never
p = 0. RoSE's scripts count only resamples strictly below 0; on data without exact ties the two
agree. Partial data (systems judged on different documents) goes through ``system_cis_partial``
and ``paired_bootstrap_partial``: NaN marks a document a system was not judged on. The paired
tests count both directions of a pair from one sum per resample (``paired_counts``), and on
partial data pairs with the same number of shared documents share one draw.
"""

from dataclasses import dataclass

import numpy as np
from scipy.special import betainccinv, betaincinv

MAX_CHUNK_CELLS = 1 << 21  # index cells per chunk: 16 MiB arrays, below glibc's mmap threshold
MAX_BLOCK_CELLS = 1 << 21  # cells of a difference block or of a product block (16 MiB)
COUNT_BLOCK_CELLS = 1 << 16  # index cells counted at a time, small enough to stay in cache
TIE = 1e-10  # |resample mean| <= TIE * max|d| is a tie: rounding must not decide it
GATHER_COLUMNS = 2  # up to this many columns, summing drawn values beats counts and a product


def complete(scores) -> np.ndarray:
    """``scores`` as a float matrix, refusing missing values (NaN would count as a tie)."""
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2 or np.isnan(scores).any():
        raise ValueError("expected a complete documents x systems matrix without NaN")
    return scores


def chunk_schedule(n: int, n_resamples: int, first: int = 512, cells: int = MAX_CHUNK_CELLS) -> list[int]:
    """Resamples per chunk: ``first``, doubling, capped at ``cells`` indices per chunk."""
    cap = max(1, min(1 << 15, cells // max(n, 1)))
    sizes, size, done = [], min(first, cap), 0
    while done < n_resamples:
        sizes.append(min(size, n_resamples - done))
        done += sizes[-1]
        size = min(2 * size, cap)
    return sizes


def resample_indices(n: int, n_resamples: int, rng=None, cells: int = MAX_CHUNK_CELLS):
    """Yield (c x n) arrays of document indices drawn with replacement, chunk by chunk.

    All resampling here goes through this generator, so a plain loop over the same ``rng``
    sees exactly the resamples the vectorized code used.
    """
    rng = np.random.default_rng(rng)
    for size in chunk_schedule(n, n_resamples, cells=cells):
        yield rng.integers(0, n, size=(size, n))


def resample_counts(indices: np.ndarray, n: int) -> np.ndarray:
    """(c x n) float matrix: how often each of the n documents is drawn in each resample."""
    c = indices.shape[0]
    out = np.empty((c, n))
    rows = max(1, COUNT_BLOCK_CELLS // max(n, 1))  # cache-sized blocks: one pass over memory
    offsets = (np.arange(rows) * n)[:, None]
    for start in range(0, c, rows):
        block = indices[start : start + rows] + offsets[: min(rows, c - start)]
        out[start : start + len(block)] = np.bincount(block.ravel(), minlength=block.size).reshape(-1, n)
    return out


def resample_means(scores, n_resamples: int, rng=None) -> np.ndarray:
    """(n_resamples x m): column means of ``scores`` (n x m) over each document resample."""
    scores = complete(scores)
    n = scores.shape[0]
    out = np.empty((n_resamples, scores.shape[1]))
    pos = 0
    for idx in resample_indices(n, n_resamples, rng):
        out[pos : pos + len(idx)] = resample_counts(idx, n) @ scores / n
        pos += len(idx)
    return out


def percentile_interval(samples, confidence: float = 0.95, axis: int = 0):
    """(low, high): the (1-c)/2 and (1+c)/2 percentiles, 2.5th/97.5th for c = 0.95."""
    tail = 50.0 * (1.0 - confidence)
    low, high = np.percentile(samples, [tail, 100.0 - tail], axis=axis)
    return low, high


def system_cis(scores, n_resamples: int = 10_000, confidence: float = 0.95, rng=None):
    """System scores (column means) with bootstrap CIs: ``(means, low, high)``, each of length m."""
    scores = complete(scores)
    low, high = percentile_interval(resample_means(scores, n_resamples, rng), confidence)
    return scores.mean(axis=0), low, high


def all_pairs(m: int) -> np.ndarray:
    """(m(m-1)/2 x 2) array of system index pairs i < j."""
    return np.column_stack(np.triu_indices(m, 1))


@dataclass
class BootstrapTest:
    """Per column: the decision p < alpha, resamples whose mean is not above 0 (below 0 or a
    tie; the name is kept from RoSE's count), resamples evaluated."""

    significant: np.ndarray
    below: np.ndarray
    used: np.ndarray


def significance_limit(alpha: float, n_resamples: int) -> int:
    """Smallest count of resamples not above 0 with count / n_resamples >= alpha (not significant)."""
    k = max(0, int(np.floor(alpha * n_resamples)) - 1)
    while k / n_resamples < alpha:
        k += 1
    return k


def settled_columns(below, done: int, total: int, limit: int, delta: float):
    """Which columns' full-run decisions are settled after ``done`` of ``total`` resamples.

    The remaining ``total - done`` resamples are Bernoulli(p) draws. p is bounded by a one-sided
    Clopper-Pearson bound at level delta, and the remaining count by Bernstein's inequality at
    level delta for the extreme p, so a settled decision differs from the full run's with
    probability at most 2 * delta.
    """
    rest = total - done
    ell = np.log(1.0 / delta)
    b = below.astype(float)
    upper = np.where(below < done, betainccinv(b + 1, np.maximum(done - b, 1), delta), 1.0)
    lower = np.where(below > 0, betaincinv(np.maximum(b, 1), done - b + 1, delta), 0.0)

    def spread(p):
        return ell / 3 + np.sqrt(ell**2 / 9 + 2 * ell * rest * p * (1 - p))

    significant = (b + rest < limit) | (b + rest * upper + spread(upper) < limit)
    not_significant = (b >= limit) | (b + rest * lower - spread(lower) >= limit)
    if rest == 0:
        significant, not_significant = b < limit, b >= limit
    return significant | not_significant, significant


def bootstrap_test(
    columns,
    n_columns: int,
    n: int,
    n_resamples: int = 100_000,
    alpha: float = 0.05,
    rng=None,
    early_stop: bool = True,
    error: float = 1e-6,
    cells: int = MAX_CHUNK_CELLS,
) -> BootstrapTest:
    """Paired bootstrap decisions p < alpha for many columns of per-document differences A - B.

    ``columns(cols)`` returns the (n x len(cols)) differences of the requested columns; every
    column is tested on the same resamples (``resample_indices``), p = share of resamples whose
    mean difference is not above 0 (scoring.md, "Statistics"; a tie counts against A). With ``early_stop`` a column stops
    once its decision is settled (``settled_columns``): after each chunk, with ``delta = error / (2 *
    chunks)``, so each early decision equals the full run's (same rng) except with probability
    at most ``error``. Settled columns are dropped from later products.
    """
    schedule = chunk_schedule(n, n_resamples, cells=cells)
    delta = error / (2 * len(schedule))
    limit = significance_limit(alpha, n_resamples)
    below = np.zeros(n_columns, dtype=np.int64)
    used = np.zeros(n_columns, dtype=np.int64)
    significant = np.zeros(n_columns, dtype=bool)
    active = np.arange(n_columns)
    done = 0
    for idx in resample_indices(n, n_resamples, rng, cells):
        counts = resample_counts(idx, n)
        block = max(1, MAX_BLOCK_CELLS // max(n, len(idx)))
        for start in range(0, active.size, block):
            cols = active[start : start + block]
            d = columns(cols)
            tol = TIE * n * np.abs(d).max(axis=0)
            below[cols] += np.count_nonzero(counts @ d <= tol, axis=0)
        done += len(idx)
        used[active] = done
        if early_stop or done == n_resamples:
            settled, sig = settled_columns(below[active], done, n_resamples, limit, delta)
            significant[active[settled]] = sig[settled]
            active = active[~settled]
            if active.size == 0:
                break
    return BootstrapTest(significant, below, used)


def _resample_sums(idx: np.ndarray, d: np.ndarray):
    """Yield (columns, sums): per column of ``d`` (n x k) and resample of ``idx``, the sum of the
    drawn documents' values, columns by rows (len(columns) x resamples: the counts that follow
    run along rows). Up to ``GATHER_COLUMNS`` columns sum the drawn values; more count the
    draws once and take one product per block of columns."""
    n, k = d.shape
    if k <= GATHER_COLUMNS:
        yield slice(None), np.stack([np.take(column, idx).sum(axis=1) for column in d.T])
        return
    counts = resample_counts(idx, n)
    block = max(1, MAX_BLOCK_CELLS // max(n, len(idx)))
    for start in range(0, k, block):
        yield slice(start, start + block), d[:, start : start + block].T @ counts.T


def paired_counts(d, n_resamples: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """``(a_not_better, b_not_better)`` per column of per-document differences A - B (n x k).

    Every column is resampled on the same ``resample_indices`` draw, all ``n_resamples`` of it.
    ``a_not_better`` counts the resamples whose sum of A - B is not above the column's tie
    tolerance (``TIE * n * max|d|``), ``b_not_better`` those whose sum of B - A is not: one sum
    serves both, as sum(B - A) <= tol exactly when sum(A - B) >= -tol. So a tie counts against
    both directions, as ``bootstrap_test`` on the columns d and -d counts it.
    """
    d = np.ascontiguousarray(d, dtype=float)
    n, k = d.shape
    tol = (TIE * n * np.abs(d).max(axis=0))[:, None]
    a_not_better = np.zeros(k, dtype=np.int64)
    b_not_better = np.zeros(k, dtype=np.int64)
    for idx in resample_indices(n, n_resamples, rng):
        for cols, sums in _resample_sums(idx, d):
            a_not_better[cols] += np.count_nonzero(sums <= tol[cols], axis=1)
            b_not_better[cols] += np.count_nonzero(sums >= -tol[cols], axis=1)
    return a_not_better, b_not_better


def paired_bootstrap(scores, n_resamples: int = 100_000, rng=None) -> np.ndarray:
    """(m x m) p-values of the paired bootstrap test over documents for every ordered pair.

    ``p[a, b]`` = share of resamples where the mean of A - B is not above 0 (small p: A is
    better; a tie counts against A, so identical systems get p = 1 both ways), computed on all
    ``n_resamples`` (no early stopping, ``paired_counts``); the diagonal is NaN.
    """
    scores = complete(scores)
    n, m = scores.shape
    pairs = all_pairs(m)
    p = np.full((m, m), np.nan)
    if len(pairs) == 0:
        return p
    d = scores[:, pairs[:, 0]] - scores[:, pairs[:, 1]]
    a_not_better, b_not_better = paired_counts(d, n_resamples, np.random.default_rng(rng))
    p[pairs[:, 0], pairs[:, 1]] = a_not_better / n_resamples
    p[pairs[:, 1], pairs[:, 0]] = b_not_better / n_resamples
    return p


def _column_groups(masks) -> dict:
    """Columns grouped by identical boolean row masks, in order of first appearance."""
    groups: dict[bytes, list[int]] = {}
    for j, mask in enumerate(masks):
        groups.setdefault(np.packbits(mask).tobytes(), []).append(j)  # masks have equal length
    return groups


def system_cis_partial(scores, n_resamples: int = 10_000, confidence: float = 0.95, rng=None):
    """Per system: mean, CI and n over the documents *that system* was judged on.

    ``scores`` is documents x systems with NaN where a system was not judged. Systems judged on
    the same documents share resamples (one ``system_cis`` per group, in order of the first
    system of each group, on one generator), so complete data gives exactly ``system_cis``'s
    numbers. Each interval is a percentile interval of the resampled mean of the documents the
    score itself is computed on, so it brackets that score. Returns ``(means, low, high, n)``;
    a system without documents gets NaN.
    """
    scores = np.asarray(scores, dtype=float)
    rng = np.random.default_rng(rng)
    m = scores.shape[1]
    judged = ~np.isnan(scores)
    means, low, high = np.full(m, np.nan), np.full(m, np.nan), np.full(m, np.nan)
    n = judged.sum(axis=0)
    for cols in _column_groups(judged.T).values():
        rows = judged[:, cols[0]]
        if not rows.any():
            continue
        sub = scores if len(cols) == m and rows.all() else np.ascontiguousarray(scores[rows][:, cols])
        means[cols], low[cols], high[cols] = system_cis(sub, n_resamples, confidence, rng)
    return means, low, high, n


def _shared_size_classes(scores, pairs, shared) -> dict:
    """Pairs by their number of shared documents, in order of first appearance: per count, the
    pairs' differences on their own shared documents, column by column (count x pairs), and
    the pairs' systems (a, b). Pairs sharing the same documents stay adjacent (one group)."""
    classes: dict[int, tuple[list, list, list]] = {}
    for cols in _column_groups(shared.T).values():
        rows = shared[:, cols[0]]
        size = int(rows.sum())
        if size == 0:
            continue
        a, b = pairs[cols, 0], pairs[cols, 1]
        sub = scores[rows]
        diffs, first, second = classes.setdefault(size, ([], [], []))
        diffs.append(sub[:, a] - sub[:, b])
        first.append(a)
        second.append(b)
    return {size: (np.hstack(d), np.concatenate(a), np.concatenate(b)) for size, (d, a, b) in classes.items()}


def paired_bootstrap_partial(scores, n_resamples: int = 100_000, rng=None):
    """``(p, n)``: paired bootstrap p-values of every ordered pair on the documents both
    systems were judged on, and that number of documents (m x m each).

    ``scores`` is documents x systems with NaN where a system was not judged. Each pair is
    resampled over exactly its own shared documents, with ``paired_bootstrap``'s test. Pairs
    that share the same *number* of documents share one draw of resample indices (position j
    of a resample picks each pair's j-th shared document): one draw per document count, in
    order of first appearance, on one generator (``paired_counts``). Each pair's p-value is
    still a bootstrap p-value over its own documents; only the dependence between pairs'
    p-values changes, as when every pair shares the same documents (complete data), which
    gives exactly ``paired_bootstrap``'s p-values. A pair without a shared document gets NaN.
    """
    scores = np.asarray(scores, dtype=float)
    rng = np.random.default_rng(rng)
    m = scores.shape[1]
    judged = ~np.isnan(scores)
    pairs = all_pairs(m)
    shared = judged[:, pairs[:, 0]] & judged[:, pairs[:, 1]]
    p = np.full((m, m), np.nan)
    n = np.zeros((m, m), dtype=np.int64)
    n[pairs[:, 0], pairs[:, 1]] = n[pairs[:, 1], pairs[:, 0]] = shared.sum(axis=0)
    np.fill_diagonal(n, judged.sum(axis=0))
    for d, a, b in _shared_size_classes(scores, pairs, shared).values():
        a_not_better, b_not_better = paired_counts(d, n_resamples, rng)
        p[a, b] = a_not_better / n_resamples
        p[b, a] = b_not_better / n_resamples
    return p, n
