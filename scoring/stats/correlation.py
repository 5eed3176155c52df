"""Correlations of automatic metrics with human scores (scoring.md, "Correlations" and "Statistics").

``X`` (humans) and ``Y`` (a metric) are complete n documents x m systems matrices (RoSE
appendix C). Summary level: mean over documents of corr(X[i, :], Y[i, :]), a NaN (constant row)
counting as 0 (but when every row is NaN the reported correlation is NaN: undefined, not 0);
system level: corr of the column means. corr is Pearson, Spearman or Kendall
tau-b, all vectorized along the last axis so that thousands of resamples are one call.
Kendall and Spearman treat two values of a vector as tied when they differ by at most 1e-12
times the vector's largest magnitude, so that rounding noise in means (which differ by
summation order) cannot break a tie between equal rational scores (system means of ACU fractions
can be equal); scipy would split such ties arbitrarily. Pearson calls a vector constant (NaN)
within the same tolerance: scipy's r of equal means that differ in the last bit is rounding noise.
"""

import numpy as np
from scipy.stats import kendalltau, rankdata

from .bootstrap import all_pairs, complete, percentile_interval, resample_counts, resample_indices

REL_TIE = 1e-12
CORR_TIE = 1e-12  # two correlations (differences) closer than this are a tie
PAIRWISE_MAX = 256


def pearson(x, y):
    """Pearson r along the last axis; NaN where either side is constant, to the tie tolerance of
    Kendall and Spearman (equal rational means that differ in the last bit are constant: their r
    would be rounding noise, 0.707 for three equal system means)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    constant = _constant(x) | _constant(y)
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(axis=-1) / np.sqrt((xc * xc).sum(axis=-1) * (yc * yc).sum(axis=-1))
    return np.where(constant, np.nan, np.clip(r, -1.0, 1.0))


def _tolerance(x):
    """Tie tolerance per vector (last axis): REL_TIE times its largest magnitude."""
    return REL_TIE * np.abs(x).max(axis=-1, keepdims=True)


def _constant(x):
    """Whether each vector (last axis) spans no more than its tie tolerance (an empty one is)."""
    if x.shape[-1] == 0:
        return np.ones(x.shape[:-1], dtype=bool)
    return np.ptp(x, axis=-1) <= _tolerance(x)[..., 0]


def _snap(x):
    """x with each value within the tie tolerance of its sorted predecessor set to it."""
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, axis=-1)
    s = np.take_along_axis(x, order, axis=-1)
    close = np.diff(s, axis=-1) <= _tolerance(x)
    position = np.broadcast_to(np.arange(s.shape[-1]), s.shape)
    starts = np.where(np.concatenate([np.zeros_like(close[..., :1]), close], axis=-1), 0, position)
    snapped = np.take_along_axis(s, np.maximum.accumulate(starts, axis=-1), axis=-1)
    out = np.empty_like(x)
    np.put_along_axis(out, order, snapped, axis=-1)
    return out


def spearman(x, y):
    """Spearman rho (Pearson of average ranks, near-ties tied) along the last axis."""
    return pearson(rankdata(_snap(x), axis=-1), rankdata(_snap(y), axis=-1))


def _sign(d, tol):
    return (d > tol).view(np.int8) - (d < -tol).view(np.int8)


def pair_signs(x, pairs=None):
    """sign(x[..., j] - x[..., i]) for the pairs (i, j), 0 within the tie tolerance."""
    x = np.asarray(x, dtype=float)
    pairs = all_pairs(x.shape[-1]) if pairs is None else np.asarray(pairs)
    return _sign(x[..., pairs[:, 1]] - x[..., pairs[:, 0]], _tolerance(x))


def kendall(x, y):
    """Kendall tau-b along the last axis from pairwise sign products (m is small).

    Long vectors (more than ``PAIRWISE_MAX`` values, e.g. all summaries) go row by row through
    scipy's O(m log m) tau-b instead, which ties exactly equal values only.
    """
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    lead, m = x.shape[:-1], x.shape[-1]
    if m > PAIRWISE_MAX:
        flat = [kendalltau(a, b).statistic for a, b in zip(x.reshape(-1, m), y.reshape(-1, m), strict=False)]
        return np.asarray(flat, dtype=float).reshape(lead)
    # Values as rows (m x vectors): each step compares value i with all later values at once,
    # on contiguous rows that stay in cache.
    xt, yt = x.reshape(-1, m).T.copy(), y.reshape(-1, m).T.copy()
    tx, ty = _tolerance(xt.T)[:, 0], _tolerance(yt.T)[:, 0]
    num = np.zeros(xt.shape[1], dtype=np.int64)
    nx, ny = num.copy(), num.copy()
    for i in range(m - 1):
        sx, sy = _sign(xt[i + 1 :] - xt[i], tx), _sign(yt[i + 1 :] - yt[i], ty)
        num += np.sum(sx * sy, axis=0, dtype=np.int64)
        nx += np.count_nonzero(sx, axis=0)
        ny += np.count_nonzero(sy, axis=0)
    den = np.sqrt(nx.astype(float) * ny)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan).reshape(lead)


METHODS = {"pearson": pearson, "spearman": spearman, "kendall": kendall}


def row_correlations(X, Y, method):
    r = METHODS[method](X, Y)
    return np.nan_to_num(r, nan=0.0)  # RoSE: a NaN correlation counts as 0


def summary_level(X, Y, method: str = "pearson") -> float:
    """Mean over documents of corr(X[i, :], Y[i, :]); NaN rows count as 0."""
    return float(row_correlations(X, Y, method).mean())


def system_level(X, Y, method: str = "pearson") -> float:
    """corr(mean over documents of X, mean over documents of Y) across the m systems."""
    return float(METHODS[method](np.mean(X, axis=0), np.mean(Y, axis=0)))


def correlate(X, Y, granularity: str = "system", method: str = "pearson") -> float:
    """``summary_level`` or ``system_level`` by name."""
    return {"summary": summary_level, "system": system_level}[granularity](X, Y, method)


def bootstrap_correlations(X, Y, granularity="system", method="kendall", n_resamples=1000, rng=None):
    """The correlation on each document resample (resamples from ``bootstrap.resample_indices``).

    System level: per resample, system means = counts @ X / n, then one batched corr call.
    Summary level: per-document correlations do not change under resampling, so a resample's
    value is counts @ r / n.
    """
    X, Y = complete(X), complete(Y)
    n = X.shape[0]
    rows = row_correlations(X, Y, method) if granularity == "summary" else None
    out = []
    for idx in resample_indices(n, n_resamples, rng):
        counts = resample_counts(idx, n)
        if rows is not None:
            out.append(counts @ rows / n)
        else:
            out.append(METHODS[method](counts @ X / n, counts @ Y / n))
    return np.concatenate(out)


def undefined_everywhere(X, Y, method: str) -> bool:
    """Whether no document has a defined correlation (humans or metric constant across the systems
    of every document): RoSE's NaN-as-0 rule would then publish a summary-level 0 with a [0, 0]
    interval for a correlation that is not there; the tables show it as undefined instead."""
    return bool(np.isnan(METHODS[method](np.asarray(X, dtype=float), np.asarray(Y, dtype=float))).all())


def correlation_ci(X, Y, granularity="system", method="kendall", n_resamples=1000, confidence=0.95, rng=None):
    """``(value, low, high)``: the correlation and its percentile bootstrap CI over documents.

    Summary level with no document whose correlation is defined: NaN (undefined), not RoSE's 0.
    System level: a resample whose system means are constant on one side (few documents, discrete
    scores) has no correlation; the interval is the percentiles of the resamples where it is
    defined, as ``correlation_ci_partial``'s (NaN when none is)."""
    if granularity == "summary" and undefined_everywhere(complete(X), complete(Y), method):
        return float("nan"), float("nan"), float("nan")
    samples = bootstrap_correlations(X, Y, granularity, method, n_resamples, rng)
    samples = samples[~np.isnan(samples)]
    if not len(samples):
        return correlate(X, Y, granularity, method), float("nan"), float("nan")
    low, high = percentile_interval(samples, confidence)
    return correlate(X, Y, granularity, method), float(low), float(high)


# ---- partial coverage: humans judged some systems on some documents ---------------------------
# X holds NaN where the humans did not judge a system on a document; Y (the metric) is read only
# where X is judged. Summary level: per document, corr over the systems judged there (documents
# with fewer than two are left out); system level: each system's human and metric means over the
# documents that system was judged on. Both report the documents behind them.


def row_correlations_partial(X, Y, method: str = "pearson", nan_as_zero: bool = True) -> np.ndarray:
    """Per document: corr(X[i, judged], Y[i, judged]) over its judged systems (a NaN correlation
    counts as 0, as RoSE's, unless ``nan_as_zero`` is False), NaN for a document with fewer than
    two judged systems."""
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    judged = ~np.isnan(X)
    out = np.full(len(X), np.nan)
    if not len(X):
        return out
    patterns, inverse = np.unique(judged, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    for k, pattern in enumerate(patterns):
        if pattern.sum() < 2:
            continue
        rows = inverse == k
        r = METHODS[method](X[rows][:, pattern], Y[rows][:, pattern])
        out[rows] = np.nan_to_num(r, nan=0.0) if nan_as_zero else r
    return out


def _system_means_partial(weights, X, Y):
    """(human, metric) system means under per-document ``weights`` (c x n), each system over the
    documents it was judged on; NaN for a system with no weight."""
    judged = ~np.isnan(X)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = weights @ judged
        return weights @ np.where(judged, X, 0.0) / total, weights @ np.where(judged, Y, 0.0) / total


def correlation_ci_partial(
    X, Y, granularity="system", method="kendall", n_resamples=1000, confidence=0.95, rng=None
) -> tuple[float, float, float, int]:
    """``(value, low, high, n)`` on partially judged ``X``: the correlation, its percentile bootstrap
    CI over documents, and the number of documents behind it. NaN when it is undefined (fewer than
    two documents with two judged systems, or fewer than two judged systems)."""
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    if granularity == "summary":
        rows = row_correlations_partial(X, Y, method)
        rows = rows[~np.isnan(rows)]
        n = len(rows)
        if n and np.isnan(row_correlations_partial(X, Y, method, nan_as_zero=False)).all():
            return float("nan"), float("nan"), float("nan"), n
        if n == 0:
            return float("nan"), float("nan"), float("nan"), 0
        samples = np.concatenate([resample_counts(idx, n) @ rows / n for idx in resample_indices(n, n_resamples, rng)])
        low, high = percentile_interval(samples, confidence)
        return float(rows.mean()), float(low), float(high), n
    n = int((~np.isnan(X)).any(axis=1).sum())
    keep = ~np.isnan(X).all(axis=0)
    X, Y = X[:, keep], Y[:, keep]
    if n == 0 or X.shape[1] < 2:
        return float("nan"), float("nan"), float("nan"), n
    hx, hy = _system_means_partial(np.ones((1, len(X))), X, Y)
    value = float(METHODS[method](hx[0], hy[0]))
    samples = []
    for idx in resample_indices(len(X), n_resamples, rng):
        sx, sy = _system_means_partial(resample_counts(idx, len(X)), X, Y)
        lost = np.isnan(sx).any(axis=1)  # a resample that drew no document of some system
        samples.append(np.where(lost, np.nan, METHODS[method](np.nan_to_num(sx), np.nan_to_num(sy))))
    samples = np.concatenate(samples)
    samples = samples[~np.isnan(samples)]
    if not len(samples):
        return value, float("nan"), float("nan"), n
    low, high = percentile_interval(samples, confidence)
    return value, float(low), float(high), n


def _zscore(M):
    sd = M.std()
    return (M - M.mean()) / (sd if sd > 0 else 1.0)


def permutation_test(H, A, B, granularity="system", method="kendall", n_permutations=1000, rng=None, standardize=True):
    """Is metric A more correlated with humans ``H`` than metric B? Returns ``(delta, p)``.

    delta = corr(H, A) - corr(H, B). Each permutation swaps, for each document independently
    with probability 0.5, the two metrics' scores (RoSE's ``permutation_system`` /
    ``permutation_summ``); p = share of permutations whose delta reaches the observed one: a
    permutation equal to it counts against significance (scoring.md, "Refinements"; RoSE counts
    only strictly larger ones). With ``standardize`` each metric is z-scored over all its scores
    first (Deutsch et al. 2021), so that swapping does not mix scales; that leaves the observed
    correlations unchanged. RoSE's scripts do not standardize (``standardize=False``). This is
    one direction only: ``metric_comparison.compare_metrics`` puts the better metric first. A NaN
    correlation (a metric constant across systems, a single system) counts as 0, as in RoSE's
    ``_cal_*`` and ``metric_comparison.bootstrap_p``.
    """
    H, A, B = complete(H), complete(A), complete(B)
    if standardize:
        A, B = _zscore(A), _zscore(B)
    n = H.shape[0]

    def corr(X, Y):  # a NaN correlation (a constant side, one system) counts as 0, as RoSE's
        return np.nan_to_num(METHODS[method](X, Y), nan=0.0)

    if granularity == "summary":
        observed = summary_level(H, A, method) - summary_level(H, B, method)
    else:
        observed = float(corr(H.mean(axis=0), A.mean(axis=0)) - corr(H.mean(axis=0), B.mean(axis=0)))
    rng = np.random.default_rng(rng)
    if granularity == "summary":
        gap = row_correlations(H, A, method) - row_correlations(H, B, method)  # swapping document i flips its sign
    else:
        human, mean_a, mean_b, shift = H.mean(axis=0), A.mean(axis=0), B.mean(axis=0), (B - A) / n
    exceed, chunk = 0, max(1, (1 << 22) // n)
    for start in range(0, n_permutations, chunk):
        swap = rng.random((min(chunk, n_permutations - start), n)) < 0.5
        if granularity == "summary":
            deltas = np.where(swap, -gap, gap).sum(axis=1) / n
        else:
            moved = swap.astype(float) @ shift  # how much each system's mean moves from A to B
            deltas = corr(human, mean_a + moved) - corr(human, mean_b - moved)
        exceed += np.count_nonzero(deltas >= observed - CORR_TIE)
    return observed, exceed / n_permutations


def _tau_b_over_pairs(hs, ms, axis=-1):
    """(C - D) / sqrt((C + D + T) (C + D + U)) from pairwise signs of humans and metric:
    T pairs tied in the humans only, U in the metric only, pairs tied on both sides left out."""
    concordant = np.sum((hs * ms) > 0, axis=axis)
    discordant = np.sum((hs * ms) < 0, axis=axis)
    tie_h = np.sum((hs == 0) & (ms != 0), axis=axis)
    tie_m = np.sum((hs != 0) & (ms == 0), axis=axis)
    return concordant, discordant, tie_h, tie_m


def modified_kendall(human, metric, pairs=None) -> float:
    """Kendall's tau over a set of system pairs (Deutsch et al. 2022, "Re-Examining System-Level
    Correlations"), ties handled as their tau-b: (C - D) / sqrt((C + D + T)(C + D + U)) with C, D
    the concordant and discordant pairs, T the pairs tied in the humans only and U those tied in
    the metric only; a pair tied on both sides counts nowhere. On all pairs this is scipy's
    tau-b. (RoSE's ``modified_kendall_tau_system`` counts a tied pair as discordant; we do not.)

    ``human`` and ``metric`` are per-system scores; ``pairs`` (k x 2 system indices) defaults
    to all pairs (``pairs_by_difference`` gives Deutsch et al.'s delta-restricted sets). NaN when
    no pair is ordered on either side.
    """
    pairs = all_pairs(len(human)) if pairs is None else np.asarray(pairs).reshape(-1, 2)
    if not len(pairs):
        return float("nan")
    c, d, t, u = _tau_b_over_pairs(pair_signs(human, pairs).astype(int), pair_signs(metric, pairs).astype(int))
    den = np.sqrt(float(c + d + t) * float(c + d + u))
    return float((c - d) / den) if den > 0 else float("nan")


def modified_kendall_summary(H, M, pairs=None) -> float:
    """Summary-level modified Kendall tau, RoSE's ``modified_kendall_tau_summary``: for each
    document i, (C - D) / (sqrt((C + D + T)(C + D + U)) + 1e-10) over the system pairs (tau-b as
    in ``modified_kendall``, exact equality as ties, as RoSE compares values with ==), then the
    mean over documents. ``H`` and ``M`` are documents x systems; ``pairs`` defaults to all.
    """
    H, M = complete(H), complete(M)
    pairs = all_pairs(H.shape[1]) if pairs is None else np.asarray(pairs).reshape(-1, 2)
    hs = np.sign(H[:, pairs[:, 0]] - H[:, pairs[:, 1]]).astype(int)
    ms = np.sign(M[:, pairs[:, 0]] - M[:, pairs[:, 1]]).astype(int)
    c, d, t, u = _tau_b_over_pairs(hs, ms, axis=1)
    per_document = (c - d) / (np.sqrt((c + d + t).astype(float) * (c + d + u)) + 1e-10)
    return float(per_document.mean())


def pairs_by_difference(human, low: float = 0.0, high: float = np.inf) -> np.ndarray:
    """System pairs whose |human score difference| lies in [low, high) (Deutsch et al. 2022)."""
    human = np.asarray(human, dtype=float)
    pairs = all_pairs(len(human))
    gap = np.abs(human[pairs[:, 0]] - human[pairs[:, 1]])
    return pairs[(gap >= low) & (gap < high)]
