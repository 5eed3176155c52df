"""Family-wise error control for the paired tests of every system pair (scoring.md, "Statistics").

``holm`` is Holm's (1979) step-down adjustment of a family of p-values; ``pairwise_holm`` applies
it to the matrix of one-sided paired bootstrap p-values (``bootstrap.paired_bootstrap``) over the
family of system pairs. An undefined p-value (NaN: a pair without a shared document) is no
member of the family and stays undefined.
"""

import math

import numpy as np

# The family-wise level the adjusted matrix is read at, and how far below it the bound of a pair with
# no resample on the other side is kept (`family_resamples`).
FAMILY_LEVEL = 0.05
RESOLUTION_MARGIN = 2


def holm(pvalues) -> np.ndarray:
    """Holm-adjusted p-values, in the order given.

    With the K defined p-values sorted p(1) <= ... <= p(K), the adjusted value of p(i) is
    ``min(1, max_{j <= i} (K - j + 1) p(j))``: the smallest family-wise level at which Holm's
    step-down procedure rejects that hypothesis. Monotone in p, never below p, capped at 1; tied
    p-values get the same adjusted value; NaN stays NaN and does not count in K.
    """
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1:
        raise ValueError("expected a one-dimensional array of p-values")
    defined = ~np.isnan(p)
    if ((p[defined] < 0) | (p[defined] > 1)).any():
        raise ValueError("p-values must lie in [0, 1]")
    out = np.full(p.shape, np.nan)
    values = p[defined]
    k = len(values)
    if k == 0:
        return out
    order = np.argsort(values, kind="stable")
    steps = (k - np.arange(k)) * values[order]
    adjusted = np.empty(k)
    adjusted[order] = np.minimum(np.maximum.accumulate(steps), 1.0)
    out[defined] = adjusted
    return out


def pairwise_holm(p) -> tuple[np.ndarray, int]:
    """``(adjusted, family)``: Holm-adjusted p-values of an (m x m) matrix of one-sided paired
    p-values and the number of pairs adjusted over.

    ``p[a, b]`` tests "a is better than b" (NaN on the diagonal and for a pair without a test).
    The family is the unordered pairs with both directions defined; each pair's p-value is the
    two-sided ``min(1, 2 min(p[a, b], p[b, a]))`` (the direction is read after seeing the data),
    and those are Holm-adjusted together. ``adjusted[a, b]`` is the adjusted p of the claim "a is
    better than b": the pair's adjusted p in the direction the data favour (the smaller one-sided
    p), and ``max(that, min(1, 2 p[a, b]))`` in general, so the other direction reads 1 when the
    one-sided p-values of a pair sum to 1 or more, as the paired bootstrap's do. NaN stays NaN.
    """
    p = np.asarray(p, dtype=float)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError("expected a square matrix of p-values")
    m = p.shape[0]
    a, b = np.triu_indices(m, k=1)
    defined = ~np.isnan(p[a, b]) & ~np.isnan(p[b, a])
    a, b = a[defined], b[defined]
    two_sided = np.minimum(1.0, 2 * np.minimum(p[a, b], p[b, a]))
    adjusted_pairs = holm(two_sided)
    out = np.full((m, m), np.nan)
    out[a, b] = np.maximum(adjusted_pairs, np.minimum(1.0, 2 * p[a, b]))
    out[b, a] = np.maximum(adjusted_pairs, np.minimum(1.0, 2 * p[b, a]))
    return out, len(a)


def family_resamples(pairs: int, resamples: int, level: float = FAMILY_LEVEL, margin: float = RESOLUTION_MARGIN) -> int:
    """Resamples for the paired tests of ``pairs`` system pairs: at least ``resamples``, and enough
    that a pair with no resample on the other side (two-sided p below 2 / resamples) has a
    Holm-adjusted p of at most ``level / margin`` (below 2 x pairs / resamples). Fewer leave the
    adjusted matrix unable to show any pair significant: 10,000 resamples give REALSumm's 300
    pairs a bound of 0.06; this gives them 24,000 (a bound of 0.025)."""
    if pairs < 1:
        return int(resamples)
    return max(int(resamples), math.ceil(round(2 * pairs * margin / level, 6)))
