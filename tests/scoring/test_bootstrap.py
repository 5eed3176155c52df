"""Bootstrap CIs, paired tests and the early-stopping test (scoring/bootstrap.py) against loops."""

import numpy as np
import pytest

from scoring.stats.bootstrap import (
    bootstrap_test,
    chunk_schedule,
    paired_bootstrap,
    resample_indices,
    significance_limit,
    system_cis,
)


def plain_means(scores, n_resamples, seed):
    """Column means per resample, one resample at a time, on the same index stream."""
    rows = [scores[row].mean(axis=0) for idx in resample_indices(len(scores), n_resamples, seed) for row in idx]
    return np.array(rows)


def test_schedule_covers_all_resamples():
    for n, b in [(10, 100_000), (10_000, 100_000), (500, 3), (1, 7)]:
        sizes = chunk_schedule(n, b)
        assert sum(sizes) == b and all(s > 0 for s in sizes)


def test_system_cis_match_loop():
    rng = np.random.default_rng(0)
    scores = rng.random((40, 5))
    means, low, high = system_cis(scores, n_resamples=2000, rng=11)
    reference = plain_means(scores, 2000, 11)
    assert np.allclose(means, scores.mean(axis=0), atol=1e-15)
    assert np.allclose(low, np.percentile(reference, 2.5, axis=0), atol=1e-12)
    assert np.allclose(high, np.percentile(reference, 97.5, axis=0), atol=1e-12)
    assert (low < means).all() and (means < high).all()


def test_paired_bootstrap_matches_loop():
    rng = np.random.default_rng(1)
    scores = rng.random((30, 4)) + np.linspace(0, 0.15, 4)
    p = paired_bootstrap(scores, n_resamples=3000, rng=5)
    reference = plain_means(scores, 3000, 5)
    for a in range(4):
        assert np.isnan(p[a, a])
        for b in range(4):
            if a != b:
                # mean(A - B) over a resample equals mean(A) - mean(B); no ties with random data
                assert p[a, b] == np.mean(reference[:, a] - reference[:, b] < 0)


def test_ties_count_against_significance():
    # Two systems with equal scores on every document: every resample is a tie, p = 1 both ways.
    # A third system whose differences to the first are +1/9 and -1/9: many exact ties, which
    # count against "A is better" in both directions.
    base = np.tile([1 / 9, 4 / 9, 7 / 9], 4)
    other = base + np.tile([1 / 9, -1 / 9, 0], 4)
    p = paired_bootstrap(np.column_stack([base, base.copy(), other]), n_resamples=4000, rng=3)
    assert p[0, 1] == 1 and p[1, 0] == 1
    reference = plain_means(np.column_stack([base, other]), 4000, 3)
    diff = reference[:, 0] - reference[:, 1]
    ties = np.abs(diff) < 1e-12
    assert ties.any()
    assert p[0, 2] == np.mean((diff < 0) | ties)
    assert p[2, 0] == np.mean((diff > 0) | ties)


def test_limit():
    for alpha, b in [(0.05, 100_000), (0.05, 1000), (0.05, 7), (0.01, 333), (0.1, 10)]:
        k = significance_limit(alpha, b)
        assert (k - 1) / b < alpha <= k / b


def near_threshold_columns(rng, n, k):
    """Differences whose bootstrap p is spread over about 0 to 0.2, many near 0.05."""
    z = rng.uniform(0.8, 2.8, k)
    noise = rng.normal(size=(n, k))
    noise = (noise - noise.mean(axis=0)) / noise.std(axis=0)
    return noise + z / np.sqrt(n)


@pytest.mark.parametrize("seed", range(3))
def test_early_stopping_decision_equals_full_run(seed):
    rng = np.random.default_rng(seed)
    n, k, b = 40, 2000, 20_000
    d = near_threshold_columns(rng, n, k)
    early = bootstrap_test(lambda c: d[:, c], k, n, b, rng=100 + seed)
    full = bootstrap_test(lambda c: d[:, c], k, n, b, rng=100 + seed, early_stop=False)
    assert (full.used == b).all()
    p = full.below / b
    assert np.count_nonzero(np.abs(p - 0.05) < 0.002) >= 20  # the hard cases are there
    assert (early.significant == (p < 0.05)).all()
    assert (full.significant == (p < 0.05)).all()
    assert np.median(early.used) < b / 4  # and most columns stopped early
    # The full run's counts are those of a plain loop on the same resamples.
    idx = np.concatenate(list(resample_indices(n, b, 100 + seed)))
    for col in rng.choice(k, size=5, replace=False):
        assert full.below[col] == np.count_nonzero(d[idx, col].mean(axis=1) < 0)


def test_missing_scores_are_refused():
    scores = np.random.default_rng(0).random((10, 3))
    scores[4, 1] = np.nan
    with pytest.raises(ValueError):
        system_cis(scores, 100, rng=0)
    with pytest.raises(ValueError):
        paired_bootstrap(scores, 100, rng=0)
