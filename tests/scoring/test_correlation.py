"""Metric correlations, their bootstrap CIs and tests (scoring/correlation.py) against scipy and loops."""

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from scoring.stats.bootstrap import resample_indices
from scoring.stats.correlation import (
    bootstrap_correlations,
    correlation_ci,
    kendall,
    modified_kendall,
    pairs_by_difference,
    pearson,
    permutation_test,
    spearman,
    summary_level,
    system_level,
)

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}
OURS = {"pearson": pearson, "spearman": spearman, "kendall": kendall}


def matrices(rng, n=30, m=7, discrete=False):
    X = rng.random((n, m))
    Y = X + rng.normal(0, 0.3, (n, m))
    if discrete:  # ACU-like fractions: plenty of ties
        X, Y = np.round(X * 6) / 6, np.round(np.clip(Y, 0, 1) * 5) / 5
    return X, Y


def exact_means(M):
    """Column means computed in rational arithmetic: equal means become equal floats."""
    return np.array([float(sum(Fraction(v).limit_denominator(1000) for v in col) / len(col)) for col in M.T])


def scipy_corr(method, x, y):
    if np.all(x == x[0]) or np.all(y == y[0]):
        return np.nan
    return SCIPY[method](x, y).statistic


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
@pytest.mark.parametrize("discrete", [False, True])
def test_batched_corr_matches_scipy(method, discrete):
    X, Y = matrices(np.random.default_rng(0), discrete=discrete)
    X[3] = 0.5  # a constant row: NaN
    got = OURS[method](X, Y)
    expected = [scipy_corr(method, x, y) for x, y in zip(X, Y, strict=False)]
    assert np.allclose(got, expected, atol=1e-12, equal_nan=True)
    assert np.isnan(got[3])


def test_long_vectors_use_scipy_kendall():
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 20, 1000).astype(float), rng.integers(0, 20, 1000).astype(float)
    assert kendall(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_summary_and_system_level_match_loops(method):
    X, Y = matrices(np.random.default_rng(2), discrete=True)
    X[0] = 1.0  # NaN correlation counts as 0
    per_doc = [scipy_corr(method, x, y) for x, y in zip(X, Y, strict=False)]
    assert summary_level(X, Y, method) == pytest.approx(np.mean(np.nan_to_num(per_doc)), abs=1e-12)
    # Equal rational means must tie although their float means may differ in the last bit.
    expected = scipy_corr(method, exact_means(X), exact_means(Y))
    assert system_level(X, Y, method) == pytest.approx(expected, abs=1e-12)


def test_kendall_bootstrap_identical_to_plain_per_resample_computation():
    X, Y = matrices(np.random.default_rng(3), n=50, m=12)
    samples = bootstrap_correlations(X, Y, "system", "kendall", n_resamples=3000, rng=42)
    plain_ours, plain_scipy = [], []
    for idx in resample_indices(len(X), 3000, 42):
        for row in idx:
            x, y = X[row].mean(axis=0), Y[row].mean(axis=0)
            plain_ours.append(kendall(x, y))
            plain_scipy.append(stats.kendalltau(x, y).statistic)
    assert np.array_equal(samples, np.array(plain_ours))
    assert np.allclose(samples, plain_scipy, atol=1e-14, rtol=0)
    value, low, high = correlation_ci(X, Y, "system", "kendall", n_resamples=3000, rng=42)
    assert value == pytest.approx(stats.kendalltau(X.mean(0), Y.mean(0)).statistic, abs=1e-15)
    assert (low, high) == tuple(np.percentile(plain_ours, [2.5, 97.5]))


@pytest.mark.parametrize("granularity", ["summary", "system"])
@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_other_bootstraps_match_plain_loop(granularity, method):
    X, Y = matrices(np.random.default_rng(4), n=25, m=6)
    samples = bootstrap_correlations(X, Y, granularity, method, n_resamples=700, rng=8)
    plain = [
        (summary_level if granularity == "summary" else system_level)(X[row], Y[row], method)
        for idx in resample_indices(len(X), 700, 8)
        for row in idx
    ]
    assert np.allclose(samples, plain, atol=1e-12)


@pytest.mark.parametrize("granularity", ["summary", "system"])
@pytest.mark.parametrize("method", ["pearson", "kendall"])
def test_permutation_test_matches_loop(granularity, method):
    rng = np.random.default_rng(5)
    H, A = matrices(rng, n=20, m=6)
    B = 10 * (H + rng.normal(0, 0.35, H.shape)) + 3  # another scale: standardized before swapping
    delta, p = permutation_test(H, A, B, granularity, method, n_permutations=500, rng=17)

    corr = summary_level if granularity == "summary" else system_level
    Az, Bz = (A - A.mean()) / A.std(), (B - B.mean()) / B.std()
    observed = corr(H, A, method) - corr(H, B, method)
    assert delta == pytest.approx(observed, abs=1e-12)
    swaps = np.random.default_rng(17).random((500, len(H))) < 0.5
    exceed = 0
    for swap in swaps:
        A2, B2 = np.where(swap[:, None], Bz, Az), np.where(swap[:, None], Az, Bz)
        exceed += corr(H, A2, method) - corr(H, B2, method) >= observed - 1e-12  # a tie counts against
    assert p == exceed / 500
    assert 0 < p < 1


def test_modified_kendall_matches_loop():
    human = np.array([0.30, 0.35, 0.35, 0.50, 0.41])
    metric = np.array([0.20, 0.25, 0.10, 0.40, 0.40])
    pairs = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)]

    def loop(pairs):
        """tau-b over the pairs (Deutsch et al. 2022): ties on one side in that side's term."""
        c = d = t = u = 0
        for i, j in pairs:
            h, m = np.sign(human[i] - human[j]), np.sign(metric[i] - metric[j])
            c, d = c + (h * m > 0), d + (h * m < 0)
            t, u = t + (h == 0 and m != 0), u + (h != 0 and m == 0)
        return (c - d) / np.sqrt((c + d + t) * (c + d + u))

    all_pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    assert modified_kendall(human, metric) == pytest.approx(loop(all_pairs))
    assert modified_kendall(human, metric, pairs) == pytest.approx(loop(pairs))
    # Without ties it is Kendall's tau-a = tau-b.
    x, y = np.random.default_rng(6).random((2, 9))
    assert modified_kendall(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)
    assert pairs_by_difference(human, 0.1).tolist() == [[0, 3], [0, 4], [1, 3], [2, 3]]


@pytest.mark.parametrize("method", ["pearson", "kendall"])
def test_system_level_permutation_counts_an_undefined_correlation_as_zero(method):
    """A metric constant across systems (or a single system) has no system-level correlation; RoSE
    and the bootstrap count it as 0. The permutation test compared every permutation with a NaN
    observed difference, never reached it and gave p = 0: "significant" with nothing to test."""
    rng = np.random.default_rng(3)
    H, A = matrices(rng, n=40, m=6)
    constant = np.full(H.shape, 0.5)
    delta, p = permutation_test(H, A, constant, "system", method, n_permutations=400, rng=1)
    assert delta == pytest.approx(system_level(H, A, method), abs=1e-12)  # corr(H, constant) counts as 0

    Az, Cz = (A - A.mean()) / A.std(), constant - constant.mean()
    swaps = np.random.default_rng(1).random((400, len(H))) < 0.5
    exceed = 0
    for swap in swaps:
        A2, C2 = np.where(swap[:, None], Cz, Az), np.where(swap[:, None], Az, Cz)
        moved = np.nan_to_num([system_level(H, A2, method), system_level(H, C2, method)], nan=0.0)
        exceed += moved[0] - moved[1] >= delta - 1e-12
    assert p == exceed / 400

    one = H[:, :1]  # one system: nothing to correlate, nothing significant
    delta, p = permutation_test(one, A[:, :1], 2 * A[:, :1] + 1, "system", method, n_permutations=200, rng=1)
    assert (delta, p) == (0.0, 1.0)


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_summary_level_of_a_constant_metric_is_undefined_not_zero(method):
    """A metric giving every summary the same score has no correlation with the humans: the table
    must read it as undefined (NaN, shown "–"), not publish 0.000 [0.000, 0.000]. One document with
    a defined correlation keeps RoSE's NaN-as-0 average over the others."""
    from scoring.stats.correlation import correlation_ci_partial

    X, _ = matrices(np.random.default_rng(5), n=12, m=5)
    constant = np.full_like(X, 0.5)
    assert all(np.isnan(v) for v in correlation_ci(X, constant, "summary", method, n_resamples=50, rng=0))
    partial = X.copy()
    partial[0, :2] = np.nan
    value, low, high, n = correlation_ci_partial(partial, constant, "summary", method, n_resamples=50, rng=0)
    assert np.isnan(value) and np.isnan(low) and np.isnan(high) and n == 12
    one = constant.copy()
    one[3] = X[3]  # one document with a defined correlation (1 with the humans)
    value, low, high = correlation_ci(X, one, "summary", method, n_resamples=50, rng=0)
    assert value == pytest.approx(1 / 12) and low <= value <= high
