"""Power analysis (scoring/power.py) against a straightforward loop of RoSE Alg. 1."""

import numpy as np

from scoring.stats.power import difference_buckets, power_analysis


def straightforward_power(scores, sizes, n_trials, n_resamples, seed, alpha=0.05):
    """Alg. 1 as written: per size and trial, draw documents, bootstrap each pair separately."""
    rng = np.random.default_rng(seed)
    means = scores.mean(axis=0)
    m = scores.shape[1]
    pairs = [(a, b) if means[a] >= means[b] else (b, a) for a in range(m) for b in range(a + 1, m)]
    power = np.zeros((len(sizes), len(pairs)))
    for i, n in enumerate(sizes):
        for _ in range(n_trials):
            docs = rng.integers(0, len(scores), n)
            idx = rng.integers(0, n, (n_resamples, n))
            for j, (a, b) in enumerate(pairs):
                d = scores[docs, a] - scores[docs, b]
                p = np.mean(d[idx].mean(axis=1) < 0)
                power[i, j] += p < alpha
    return power / n_trials


def small_case():
    rng = np.random.default_rng(4)
    return rng.normal(size=(80, 5)) * 0.3 + np.array([0.0, 0.05, 0.1, 0.2, 0.35])


def test_agrees_with_straightforward_loop_within_monte_carlo_error():
    scores = small_case()
    sizes, trials, resamples = (10, 40), 400, 1000
    result = power_analysis(scores, sizes=sizes, n_trials=trials, n_resamples=resamples, rng=1)
    reference = straightforward_power(scores, sizes, trials, resamples, seed=2)
    # Both are means of `trials` independent decisions: compare within 4.5 standard errors.
    p = (result.power + reference) / 2
    tolerance = 4.5 * np.sqrt(np.maximum(p * (1 - p), 0.01) * 2 / trials)
    assert (np.abs(result.power - reference) <= tolerance).all()
    assert 0.1 < reference.mean() < 0.9  # informative: neither all nor nothing detected


def test_early_stopping_gives_the_same_power_as_the_full_run():
    scores = small_case()
    kwargs = {"sizes": (10, 25, 60), "n_trials": 150, "n_resamples": 5000, "rng": 9}
    early = power_analysis(scores, **kwargs)
    full = power_analysis(scores, early_stop=False, **kwargs)
    assert (early.power == full.power).all()
    assert early.resamples.sum() < full.resamples.sum() / 3


def test_pairs_orientation_and_buckets():
    scores = small_case()
    result = power_analysis(scores, sizes=(20,), n_trials=20, n_resamples=500, rng=0)
    means = scores.mean(axis=0)
    assert (means[result.pairs[:, 0]] >= means[result.pairs[:, 1]]).all()
    assert np.allclose(result.differences, means[result.pairs[:, 0]] - means[result.pairs[:, 1]])
    assert np.bincount(result.buckets).tolist() == [2, 2, 2, 2, 2]  # 10 pairs in quintiles
    assert (np.diff([result.differences[result.buckets == b].max() for b in range(5)]) > 0).all()
    for b in range(5):
        assert np.allclose(result.bucket_power[:, b], result.power[:, result.buckets == b].mean(axis=1))
    assert difference_buckets(np.array([3.0, 1.0, 2.0]), 3).tolist() == [2, 0, 1]


def test_partial_buckets_hold_only_the_pairs_given_power():
    """Two systems judged on disjoint documents share none: their pair has no difference and no
    power. It sat in the smallest-difference bucket, whose range became null (the systems page's
    power chart then failed formatting it) and whose pair count included a pair without power."""
    from scoring.results.charts import power_curve
    from scoring.runs.services import json_safe
    from scoring.stats.power import bucket_rows, power_analysis_partial

    rng = np.random.default_rng(0)
    scores = rng.random((60, 4)) + np.linspace(0, 0.3, 4)
    scores[:30, 0] = np.nan
    scores[30:, 1] = np.nan  # systems 0 and 1 share no document
    result = power_analysis_partial(scores, sizes=(10, 50), n_trials=20, n_resamples=200, rng=0, min_documents=10)
    analysed = ~np.isnan(result.power[0])
    assert analysed.sum() == 5 and result.pair_documents[~analysed].tolist() == [0]
    rows = json_safe(bucket_rows(result))
    assert sum(row["pairs"] for row in rows) == 5
    for row in rows:
        members = result.differences[analysed & (result.buckets == row["bucket"])]
        assert row["pairs"] == len(members)
        if len(members):
            assert (row["min_difference"], row["max_difference"]) == (members.min(), members.max())
            assert row["power"] == result.power[:, analysed & (result.buckets == row["bucket"])].mean(axis=1).tolist()
    chart = power_curve({"sizes": [10, 50], "buckets": rows})
    assert len(chart["data"]["datasets"]) == 1 + sum(1 for row in rows if row["pairs"])
