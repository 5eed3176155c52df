"""Grid search for the length-normalization strength alpha (scoring.md, "Summary scores").

RoSE picks, per dataset, the alpha whose normalized ACU scores are least correlated with
summary length over all summaries. "Least correlated" is read as the smallest *absolute*
correlation: a strongly negative correlation (over-penalized long summaries) is as much a length
bias as a positive one. The default correlation is Pearson (the design doc names no
coefficient); Spearman or Kendall can be chosen. Ties in |r| go to the first alpha of the grid.
A best alpha at either end of the grid is reported (``grid_edge``): the least correlated value
may then lie beyond the grid.
"""

import numpy as np

from .aggregation import length_penalty
from .correlation import METHODS

DEFAULT_GRID = (0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0)


def length_correlations(scores, summary_words, reference_words, grid=DEFAULT_GRID, method="pearson"):
    """corr(normalized score, summary length) over all summaries, for each alpha of the grid."""
    scores = np.asarray(scores, dtype=float)
    words = np.asarray(summary_words, dtype=float)
    grid = np.asarray(grid, dtype=float)
    # One (len(grid) x summaries) matrix of normalized scores, correlated row by row.
    normalized = length_penalty(words, np.asarray(reference_words, dtype=float), grid[:, None]) * scores
    return METHODS[method](normalized, np.broadcast_to(words, normalized.shape))


def choose_alpha(scores, summary_words, reference_words, grid=DEFAULT_GRID, method="pearson"):
    """``(alpha, correlations)``: the grid alpha minimizing |corr(normalized score, length)|.

    A ValueError when alpha changes no score (no summary with a nonzero score is longer than its
    reference: every alpha would tie) or the correlation is undefined."""
    corr = length_correlations(scores, summary_words, reference_words, grid, method)
    if np.all(np.isnan(corr)):
        raise ValueError("normalized scores or lengths are constant: the correlation is undefined")
    longer = np.asarray(summary_words, dtype=float) > np.asarray(reference_words, dtype=float)
    if not np.any(longer & (np.asarray(scores, dtype=float) != 0)):
        raise ValueError("no summary with a nonzero score is longer than its reference: alpha changes no score")
    best = int(np.nanargmin(np.abs(corr)))
    return float(np.asarray(grid, dtype=float)[best]), corr


def grid_edge(alpha, grid=DEFAULT_GRID) -> str | None:
    """ "low" or "high" when ``alpha`` is the grid's smallest or largest value (the best alpha
    may lie beyond the grid), else None."""
    grid = np.asarray(grid, dtype=float)
    if alpha is None or len(grid) < 2:
        return None
    if alpha <= grid.min():
        return "low"
    if alpha >= grid.max():
        return "high"
    return None
