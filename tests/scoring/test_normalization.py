"""Grid search of the length-normalization alpha (scoring/normalization.py) against a loop."""

import numpy as np
import pytest
from scipy import stats

from scoring.stats.aggregation import normalized_acu_score
from scoring.stats.normalization import DEFAULT_GRID, choose_alpha, length_correlations


def summaries(rng, n=400):
    reference = rng.integers(40, 80, n)
    words = (reference * rng.uniform(0.4, 2.5, n)).round()
    # Longer summaries cover more ACUs: the raw score is length-biased.
    score = np.clip(0.2 + 0.25 * words / reference + rng.normal(0, 0.1, n), 0, 1)
    return score, words, reference


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_matches_loop(method):
    score, words, reference = summaries(np.random.default_rng(0))
    corr = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}[method]
    expected = [corr(normalized_acu_score(score, words, reference, a), words).statistic for a in DEFAULT_GRID]
    alpha, got = choose_alpha(score, words, reference, method=method)
    assert np.allclose(got, expected, atol=1e-12)
    assert alpha == DEFAULT_GRID[int(np.argmin(np.abs(expected)))]


def test_picks_the_smallest_absolute_correlation():
    score, words, reference = summaries(np.random.default_rng(1))
    grid = (0.05, 0.5, 1.0, 2.0, 100.0)
    corr = length_correlations(score, words, reference, grid)
    assert corr[0] < 0 < corr[-1]  # strong penalty over-corrects, no penalty keeps the bias
    alpha, _ = choose_alpha(score, words, reference, grid)
    assert alpha == grid[int(np.argmin(np.abs(corr)))] and alpha not in (0.05, 100.0)


def test_constant_lengths_are_an_error():
    with pytest.raises(ValueError):
        choose_alpha(np.array([0.2, 0.4]), np.array([10, 10]), np.array([20, 20]))


def test_no_summary_longer_than_its_reference_picks_no_alpha():
    """Alpha only penalizes summaries longer than their reference. Without one, every alpha gives
    the same scores and the same correlation; the grid's first value was reported as the least
    correlated one, "at the edge of the grid: the best value may lie beyond it"."""
    rng = np.random.default_rng(0)
    score, words, reference = rng.random(200), rng.integers(10, 40, 200), np.full(200, 50)
    words[:3] = 60  # longer than the reference, but scored 0: nothing to penalize either
    score[:3] = 0.0
    with pytest.raises(ValueError, match="longer than its reference"):
        choose_alpha(score, words, reference)
    score[0] = 0.5  # one longer summary with a score: alpha matters again
    alpha, corr = choose_alpha(score, words, reference)
    assert len(set(np.round(corr, 12))) > 1 and alpha in DEFAULT_GRID
