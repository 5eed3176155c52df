"""Krippendorff's alpha from value counts (scoring/agreement.py) against the krippendorff package."""

from collections import defaultdict

import krippendorff
import numpy as np
import pytest

from scoring.stats.agreement import (
    acu_level_alpha,
    alpha_interval,
    alpha_nominal,
    summary_level_alpha,
    summary_worker_scores,
)


def sparse_reliability(rng, workers, units, fill, make_value):
    """A workers x units matrix with NaN for missing labels, and the same labels as flat arrays."""
    mask = rng.random((workers, units)) < fill
    matrix = np.where(mask, make_value((workers, units)), np.nan)
    w, u = np.nonzero(mask)
    return matrix, u, w, matrix[w, u]


@pytest.mark.parametrize("seed", range(8))
def test_nominal_matches_krippendorff(seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, 60)
    noisy = lambda shape: np.where(rng.random(shape) < 0.8, truth, 1 - truth).astype(float)  # noqa: E731
    matrix, units, _, values = sparse_reliability(rng, 25, 60, 0.12, noisy)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    # Unit ids need not be dense or sorted; values may be bool.
    assert alpha_nominal(units * 97 + 5, values.astype(bool)) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_nominal_many_categories_matches_krippendorff(seed):
    rng = np.random.default_rng(100 + seed)
    matrix, units, _, values = sparse_reliability(rng, 10, 40, 0.3, lambda s: rng.integers(0, 40, s).astype(float))
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert alpha_nominal(units, values) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_interval_matches_krippendorff(seed):
    rng = np.random.default_rng(200 + seed)
    truth = rng.random(50)
    fractions = lambda shape: np.round(np.clip(truth + rng.normal(0, 0.15, shape), 0, 1) * 9) / 9  # noqa: E731
    matrix, units, _, values = sparse_reliability(rng, 30, 50, 0.1, fractions)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
    assert alpha_interval(units, values) == pytest.approx(expected, abs=1e-9)


def test_units_with_one_value_are_dropped():
    units, values = np.array([0, 0, 1, 1, 2]), np.array([1, 1, 0, 1, 0])
    with_single = alpha_nominal(units, values)
    assert with_single == pytest.approx(alpha_nominal(units[:4], values[:4]), abs=1e-15)
    assert with_single == pytest.approx(
        krippendorff.alpha(reliability_data=[[1, 0, 0], [1, 1, np.nan]], level_of_measurement="nominal"), abs=1e-12
    )
    assert np.isnan(alpha_nominal([0, 1], [1, 0]))  # nothing pairable
    assert np.isnan(alpha_interval([0, 0, 1, 1], [0.5] * 4))  # one value only


def judgments(rng, n_summaries=40, pool=15):
    rows = []
    for s in range(n_summaries):
        acus = np.arange(rng.integers(2, 9)) + 100 * s
        truth = rng.random(len(acus)) < rng.random()
        for w in rng.choice(pool, size=rng.integers(1, 5), replace=False):
            flip = rng.random() * 0.3
            for a, t in zip(acus, truth, strict=False):
                if rng.random() < 0.9:
                    rows.append((s + 1000, a, w, bool(t) != (rng.random() < flip)))
    return tuple(np.array(col) for col in zip(*rows, strict=False))


def test_acu_level_helper_matches_krippendorff():
    rng = np.random.default_rng(7)
    s, a, w, p = judgments(rng)
    units = sorted(set(zip(s.tolist(), a.tolist(), strict=False)))
    col = {u: i for i, u in enumerate(units)}
    matrix = np.full((w.max() + 1, len(units)), np.nan)
    matrix[w, [col[u] for u in zip(s.tolist(), a.tolist(), strict=False)]] = p
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert acu_level_alpha(s, a, w, p) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("given_counts", [False, True])
def test_summary_level_helper_matches_krippendorff(given_counts):
    rng = np.random.default_rng(8)
    s, a, w, p = judgments(rng)
    judged = defaultdict(set)
    present = defaultdict(int)
    for si, ai, wi, pi in zip(s.tolist(), a.tolist(), w.tolist(), p.tolist(), strict=False):
        judged[si].add(ai)
        present[si, wi] += pi
    sizes = {si: len(judged[si]) + (si % 3 if given_counts else 0) for si in judged}
    counts = np.array([sizes[si] for si in s.tolist()]) if given_counts else None

    summaries = sorted(judged)
    matrix = np.full((w.max() + 1, len(summaries)), np.nan)
    for (si, wi), k in present.items():
        matrix[wi, summaries.index(si)] = k / sizes[si]
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
    assert summary_level_alpha(s, a, w, p, acu_counts=counts) == pytest.approx(expected, abs=1e-9)

    keys, workers, scores = summary_worker_scores(s, a, w, p, acu_counts=counts)
    assert len(scores) == len(present)
    for si, wi, v in zip(keys.tolist(), workers.tolist(), scores.tolist(), strict=False):
        assert v == pytest.approx(present[si, wi] / sizes[si], abs=1e-15)
