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

    by_worker = defaultdict(set)
    for si, ai, wi in zip(s.tolist(), a.tolist(), w.tolist(), strict=True):
        by_worker[si, wi].add(ai)
    # A worker has a score of a summary only when they judged every ACU judged in it.
    whole = {key: k for key, k in present.items() if by_worker[key] == judged[key[0]]}
    assert 0 < len(whole) < len(present)

    summaries = sorted(judged)
    matrix = np.full((w.max() + 1, len(summaries)), np.nan)
    for (si, wi), k in whole.items():
        matrix[wi, summaries.index(si)] = k / sizes[si]
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
    assert summary_level_alpha(s, a, w, p, acu_counts=counts) == pytest.approx(expected, abs=1e-9)

    keys, workers, scores = summary_worker_scores(s, a, w, p, acu_counts=counts)
    assert len(scores) == len(whole)
    for si, wi, v in zip(keys.tolist(), workers.tolist(), scores.tolist(), strict=False):
        assert v == pytest.approx(present[si, wi] / sizes[si], abs=1e-15)


def test_summary_level_leaves_out_a_worker_who_judged_only_some_acus():
    """A `pairs` round's follow-up HIT asks a new worker only a summary's open ACUs. Two workers
    judged every ACU and agree; a third judged one ACU of each summary, agreeing with them. Read as
    a score (present / |A|), the third worker's 1/|A| or 0 looked like a disagreement (alpha 0.46)."""
    rows = []
    for summary, share in enumerate([0.0, 0.25, 0.5, 0.75, 1.0, 0.5]):
        labels = np.arange(4) < round(4 * share)  # 4 ACUs, the first `share` of them present
        for worker in (1, 2):
            rows += [(summary, acu, worker, bool(labels[acu])) for acu in range(4)]
        rows.append((summary, 0, 3, bool(labels[0])))  # the follow-up: ACU 0 only
    s, a, w, p = (np.array(col) for col in zip(*rows, strict=True))
    assert summary_level_alpha(s, a, w, p, acu_counts=np.full(len(s), 4)) == pytest.approx(1.0, abs=1e-12)
    keys, workers, scores = summary_worker_scores(s, a, w, p, acu_counts=np.full(len(s), 4))
    assert set(workers.tolist()) == {1, 2} and len(scores) == 12


def test_interval_with_many_distinct_values_matches_krippendorff():
    # Summary scores k/|A| for |A| up to 30: hundreds of distinct values (the package's dense
    # units x values x values array is 150 x V x V here; the app's sums never build it).
    rng = np.random.default_rng(300)
    sizes = rng.integers(5, 31, 150)
    truth = rng.random(150)
    matrix = np.full((4, 150), np.nan)
    for w in range(4):
        noisy = np.clip(truth + rng.normal(0, 0.2, 150), 0, 1)
        matrix[w] = np.where(rng.random(150) < 0.8, np.round(noisy * sizes) / sizes, np.nan)
    w, u = np.nonzero(~np.isnan(matrix))
    assert len(np.unique(matrix[w, u])) > 100
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
    assert alpha_interval(u, matrix[w, u]) == pytest.approx(expected, abs=1e-9)


def _alpha_by_definition(units, values, distance) -> float:
    """Krippendorff's alpha straight from the coincidence matrix, unit by unit (Krippendorff 2011)."""
    by_unit = defaultdict(list)
    for unit, value in zip(units, values, strict=True):
        by_unit[unit].append(value)
    o = defaultdict(float)
    for labels in by_unit.values():
        if len(labels) < 2:
            continue
        for i, c in enumerate(labels):
            for j, k in enumerate(labels):
                if i != j:
                    o[c, k] += 1 / (len(labels) - 1)
    n_c = defaultdict(float)
    for (c, _), weight in o.items():
        n_c[c] += weight
    n = sum(n_c.values())
    observed = sum(weight * distance(c, k) for (c, k), weight in o.items())
    expected = sum(n_c[c] * n_c[k] * distance(c, k) for c in n_c for k in n_c) / (n - 1)
    return 1 - observed / expected


def test_rose_scale_summary_alpha_matches_the_definition():
    # 22,000 summaries x 3 workers with ~300 distinct scores: the package would need
    # 22,000 x 300 x 300 doubles (16 GB) per temporary array; the sums are exact and linear.
    rng = np.random.default_rng(301)
    n_units = 22_000
    sizes = rng.integers(2, 31, n_units)
    truth = rng.random(n_units)
    units = np.repeat(np.arange(n_units), 3)
    noisy = np.clip(np.repeat(truth, 3) + rng.normal(0, 0.15, units.size), 0, 1)
    values = np.round(noisy * np.repeat(sizes, 3)) / np.repeat(sizes, 3)
    keep = rng.random(units.size) < 0.9
    units, values = units[keep], values[keep]
    assert len(np.unique(values)) > 250
    expected = _alpha_by_definition(units.tolist(), values.tolist(), lambda c, k: (c - k) ** 2)
    assert alpha_interval(units, values) == pytest.approx(expected, abs=1e-9)
    nominal = _alpha_by_definition(units.tolist(), (values > 0.5).tolist(), lambda c, k: float(c != k))
    assert alpha_nominal(units, values > 0.5) == pytest.approx(nominal, abs=1e-9)
