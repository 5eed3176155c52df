"""Which of two automatic metrics agrees better with the humans, with both significance tests.

Follows the RoSE authors' ``stat_test.py`` (Yale-LILY/ROSE): the direction of every test is set
by the observed difference, the better metric (larger correlation with the humans) first, as
``bootstrap_system`` / ``bootstrap_summ`` and ``permutation_system`` / ``permutation_summ`` do,
and the result names it. Two departures, both from shared/design/scoring.md ("Refinements"):
a resample or permutation whose difference equals the observed one (bootstrap: a difference
not above 0; permutation: one reaching the observed difference) counts against significance,
where RoSE counts only strict inequalities; and the permutation test z-scores each metric over
all its scores first (Deutsch et al. 2021) so that swapping never mixes scales (RoSE does not;
``standardize=False`` gives its test). A NaN correlation counts as 0, as RoSE's ``_cal_*``.

Bootstrap (RoSE's ``bootstrap_system``): resample documents with replacement; system level:
recompute both system-level correlations on the resample; summary level (``bootstrap_summ``):
resample the per-document correlation differences. p = share of resamples where the better
metric's correlation is not above the other's. Pure numpy and scipy; no Django.
"""

from dataclasses import dataclass

import numpy as np

from .bootstrap import complete, resample_counts, resample_indices
from .correlation import CORR_TIE, METHODS, correlate, permutation_test, row_correlations

LEVELS = ("summary", "system")


@dataclass
class MetricComparison:
    better: int  # 0: the first metric passed (X) is better, 1: the second (Y)
    corr_x: float
    corr_y: float
    delta: float  # corr(better) - corr(worse) >= 0
    p_permutation: float
    p_bootstrap: float
    granularity: str
    method: str
    documents: int


def bootstrap_p(H, better, worse, granularity="system", method="kendall", n_resamples=1000, rng=None) -> float:
    """Share of document resamples where ``better``'s correlation with ``H`` is not above
    ``worse``'s (RoSE's ``bootstrap_system`` / ``bootstrap_summ``, a tie counting against)."""
    H, better, worse = complete(H), complete(better), complete(worse)
    n = H.shape[0]
    corr = METHODS[method]
    gap = row_correlations(H, better, method) - row_correlations(H, worse, method) if granularity == "summary" else None
    not_above = 0
    for idx in resample_indices(n, n_resamples, rng):
        counts = resample_counts(idx, n)
        if gap is not None:
            deltas = counts @ gap / n
        else:
            h, x, y = counts @ H / n, counts @ better / n, counts @ worse / n
            deltas = np.nan_to_num(corr(h, x), nan=0.0) - np.nan_to_num(corr(h, y), nan=0.0)
        not_above += int(np.count_nonzero(deltas <= CORR_TIE))
    return not_above / n_resamples


def compare_metrics(
    H, X, Y, granularity="system", method="kendall", n_permutations=1000, n_resamples=1000, rng=None, standardize=True
) -> MetricComparison:
    """Compare metrics ``X`` and ``Y`` (documents x systems, like the humans ``H``).

    The better one (larger observed correlation; ``X`` on an exact tie) goes first in both
    tests. ``rng`` (a seed or a Generator) draws the permutations first, then the resamples.
    """
    if granularity not in LEVELS:
        raise ValueError(f"granularity must be one of {LEVELS}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}")
    H, X, Y = complete(H), complete(X), complete(Y)
    rng = np.random.default_rng(rng)
    corr_x = float(np.nan_to_num(correlate(H, X, granularity, method), nan=0.0))
    corr_y = float(np.nan_to_num(correlate(H, Y, granularity, method), nan=0.0))
    better = 1 if corr_y > corr_x + CORR_TIE else 0
    first, second = (Y, X) if better else (X, Y)
    _, p_perm = permutation_test(H, first, second, granularity, method, n_permutations, rng, standardize)
    p_boot = bootstrap_p(H, first, second, granularity, method, n_resamples, rng)
    delta = abs(corr_y - corr_x) if abs(corr_y - corr_x) > CORR_TIE else 0.0
    return MetricComparison(
        better, corr_x, corr_y, delta, float(p_perm), float(p_boot), granularity, method, H.shape[0]
    )
