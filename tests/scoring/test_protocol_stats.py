"""scoring.stats.protocols against hand-computed values and the krippendorff package."""

import krippendorff
import numpy as np
import pytest

from scoring.stats import protocols as stats
from scoring.stats.correlation import correlation_ci


def _reliability(units, raters, values):
    unit_keys, unit_codes = np.unique(units, return_inverse=True)
    rater_keys, rater_codes = np.unique(raters, return_inverse=True)
    data = np.full((len(rater_keys), len(unit_keys)), np.nan)
    data[rater_codes, unit_codes] = values
    return data


def test_alpha_by_hand():
    # Two raters, three summaries: (1, 2), (3, 3), (5, 4). Interval: D_o from the per-unit squared
    # differences, D_e from all pairs of the six values.
    units, values = [0, 0, 1, 1, 2, 2], [1, 2, 3, 3, 5, 4]
    x = np.array(values, dtype=float)
    observed = 2 * ((1 - 2) ** 2 + 0 + (5 - 4) ** 2) / 6  # sum over units of 2 d^2 / (m_u - 1), over n
    expected = sum((a - b) ** 2 for a in x for b in x) / (6 * 5)
    assert stats.alphas(units, values)["interval"] == pytest.approx(1 - observed / expected)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alphas_match_the_krippendorff_package(seed):
    rng = np.random.default_rng(seed)
    n_units, n_raters = 40, 5
    truth = rng.integers(1, 6, n_units)
    units, raters, values = [], [], []
    for u in range(n_units):
        for r in rng.choice(n_raters, size=rng.integers(1, 4), replace=False):  # 1 to 3 raters, some units unpairable
            units.append(u)
            raters.append(r)
            values.append(int(np.clip(truth[u] + rng.integers(-1, 2), 1, 5)))
    data = _reliability(units, raters, values)
    got = stats.alphas(units, values)
    assert got["interval"] == pytest.approx(krippendorff.alpha(data, level_of_measurement="interval"), abs=1e-12)
    assert got["ordinal"] == pytest.approx(krippendorff.alpha(data, level_of_measurement="ordinal"), abs=1e-12)
    assert got["ratings"] == len(values)


def test_alpha_undefined_is_none():
    assert stats.alphas([0, 1], [3, 4]) == {"interval": None, "ordinal": None, "ratings": 2}  # no unit rated twice
    assert stats.alphas([0, 0, 1, 1], [3, 3, 3, 3])["interval"] is None  # one value overall


def test_correlations_are_the_dashboards_on_complete_documents():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(30, 6)), rng.normal(size=(30, 6))
    a[4, 2] = np.nan  # a document without one summary's rating is left out of the pair
    got = stats.correlation_entry(a, b, "system", "pearson", 300, rng=np.random.default_rng(9))
    keep = np.arange(30) != 4
    assert (got["value"], got["low"], got["high"]) == pytest.approx(
        correlation_ci(a[keep], b[keep], "system", "pearson", 300, rng=np.random.default_rng(9))
    )
    assert got["documents"] == 29
    pairs = stats.correlation_matrix({"x": a, "y": b, "z": a + b}, "summary", n_resamples=50, rng=0)
    assert [(p["a"], p["b"]) for p in pairs] == [("x", "y"), ("x", "z"), ("y", "z")]


def test_case_study_by_hand():
    # Three raters, four documents, three systems. Rater "p" gives Ref-free = own Prior; the others
    # rate Ref-free by a document signal. Hand: corr(p's Ref-free, p's Prior) = 1 on every document.
    signal = np.array([[1, 3, 5], [5, 3, 1], [2, 4, 3], [4, 2, 5]], dtype=float)
    taste = np.array([[5, 1, 3], [1, 5, 3], [3, 1, 5], [2, 5, 1]], dtype=float)
    docs, systems = np.indices(signal.shape)
    d, s = docs.ravel(), systems.ravel()

    def ratings(per_rater):
        parts = [(d, s, np.full(d.size, name), m.ravel()) for name, m in per_rater.items()]
        return stats.Ratings(*(np.concatenate(x) for x in zip(*parts, strict=True)))

    prior = ratings({"p": taste, "q": taste[::-1], "r": signal})
    ref_free = ratings({"p": taste, "q": signal, "r": signal})
    got = stats.case_study(prior, ref_free, signal.shape, min_examples=4)
    rows = {row["rater"]: row for row in got["raters"]}
    assert rows["p"]["own_prior"] == pytest.approx(1.0)
    expected_others = np.mean([np.corrcoef(taste[i], signal[i])[0, 1] for i in range(4)])
    assert rows["p"]["others"] == pytest.approx(expected_others)
    # q rates Ref-free by the signal; the others' mean Ref-free is (taste + signal) / 2
    others_q = np.mean([np.corrcoef(signal[i], (taste[i] + signal[i]) / 2)[0, 1] for i in range(4)])
    own_q = np.mean([np.corrcoef(signal[i], taste[::-1][i])[0, 1] for i in range(4)])
    assert (rows["q"]["others"], rows["q"]["own_prior"]) == pytest.approx((others_q, own_q))
    assert got["mean"]["own_prior"] == pytest.approx(np.mean([r["own_prior"] for r in got["raters"]]))
    assert stats.case_study(prior, ref_free, signal.shape, min_examples=5)["raters"] == []


def test_mix_recovers_known_weights():
    rng = np.random.default_rng(5)
    length, acu = rng.normal(20, 5, (200, 8)), rng.uniform(0, 1, (200, 8))
    z = lambda x: (x - x.mean()) / x.std()  # noqa: E731
    scores = 3 + 0.6 * z(length) + 0.2 * z(acu) + rng.normal(0, 0.3, length.shape)
    got = stats.mix(scores, length, acu, n_resamples=300, rng=1)
    assert got["length"]["low"] <= 0.6 <= got["length"]["high"]
    assert got["acu"]["low"] <= 0.2 <= got["acu"]["high"]
    assert got["length"]["high"] - got["length"]["low"] < 0.1


def test_power_needs_the_dashboards_minimum_of_documents():
    """The dashboards give no power to a pair sharing fewer than 10 documents (3 documents
    resampled to 200 gave power near 1); the protocols' power computed it from any 2."""
    from scoring.stats.power import MIN_DOCUMENTS

    rng = np.random.default_rng(2)
    scores = np.round(rng.uniform(1, 5, (MIN_DOCUMENTS - 1, 4)) * 3) / 3
    few = stats.power(scores, sizes=(10, 200), n_trials=20, n_resamples=200, rng=0)
    assert (few["mean"], few["buckets"]) == ([], [])
    assert (few["documents"], few["min_documents"]) == (MIN_DOCUMENTS - 1, MIN_DOCUMENTS)

    enough = np.vstack([scores, scores[:1]])  # one more document: the analysis runs
    result = stats.power(enough, sizes=(10, 200), n_trials=20, n_resamples=200, rng=0)
    assert len(result["mean"]) == 2 and result["documents"] == MIN_DOCUMENTS
