"""The learned judge's pure core: pair features against values computed by hand, the bit-parallel
LCS against the textbook dynamic programme, the model's document-wise cross-validation and its
stored JSON form, the "not for ranking" rule."""

import json
import math

import numpy as np
import pytest

from hits.triage import ranking_verdict
from scoring.machine.features import FEATURE_NAMES, Featurizer, analyse, idf_table, lcs_length
from scoring.machine.judges import get_judge
from scoring.stats import learned

pytestmark = pytest.mark.portable


def features(featurizer, acu, summary) -> dict:
    return dict(zip(FEATURE_NAMES, featurizer.row(acu, summary), strict=True))


def test_features_of_one_pair_by_hand():
    # ACU tokens: police arrested 2 men in paris (6); stems polic arrest 2 men in pari;
    # content stems {polic, arrest, 2, men, pari} ("in" is a stop word).
    # Summary tokens: two men were arrested by the police in paris on friday (11);
    # content stems {two, men, arrest, polic, pari, fridai}.
    idf = {"polic": 1.0, "arrest": 2.0, "2": 3.0, "men": 1.0, "pari": 3.0}
    f = Featurizer(idf, n_texts=10)
    acu, summary = "Police arrested 2 men in Paris", "Two men were arrested by the police in paris on Friday."
    got = features(f, acu, summary)
    assert got["lexical"] == 4 / 5  # "2" is missing
    assert got["lexical"] == get_judge("lexical").judge([(acu, summary)])[0]  # the lexical judge's own score
    assert got["idf_recall"] == pytest.approx((1 + 2 + 1 + 3) / 10)
    assert got["idf_missing"] == 3.0 and got["max_idf_missing"] == 3.0
    assert got["log_idf_missing"] == pytest.approx(math.log(4))
    assert got["prefix_recall"] == pytest.approx(0.7)  # no summary stem starts with "2"
    assert got["window_recall"] == pytest.approx(0.7)  # window of 12 tokens: the whole summary
    assert got["recall"] == pytest.approx(5 / 6)  # police arrested men in paris of 6 distinct tokens
    # Stem bigrams of the ACU: polic-arrest, arrest-2, 2-men, men-in, in-pari; only in-pari is in the summary.
    assert got["bigram_recall"] == pytest.approx(1 / 5)
    # Longest common stem subsequence: polic in pari (or men in pari): 3 of 6.
    assert got["lcs_ratio"] == pytest.approx(3 / 6)
    assert got["has_number"] == 1.0 and got["number_recall"] == 0.0  # "2" written "two" in the summary
    assert got["has_name"] == 1.0 and got["name_recall"] == 1.0  # Police, Paris, found case-insensitively
    assert got["acu_length"] == pytest.approx(math.log(7)) and got["summary_length"] == pytest.approx(math.log(12))


def test_unseen_stems_one_token_acus_and_acus_without_numbers_or_names():
    f = Featurizer({"cat": 1.0}, n_texts=3)
    got = features(f, "cats sleep", "the cat sat")
    # "sleep" is in no text: df 0, idf log(1 + 3) + 1.
    unseen = math.log(4) + 1
    assert got["idf_recall"] == pytest.approx(1 / (1 + unseen)) and got["max_idf_missing"] == pytest.approx(unseen)
    assert got["has_number"] == 0.0 and got["number_recall"] == 1.0  # nothing to miss
    assert got["has_name"] == 0.0 and got["name_recall"] == 1.0
    assert features(f, "cats", "a cat")["bigram_recall"] == 1.0  # one token: its presence
    assert features(f, "dogs", "a cat")["bigram_recall"] == 0.0
    # Prefixes catch what the stemmer keeps apart: explosion / exploded stem to explos / explod.
    assert analyse("explosion").content == {"explos"} and analyse("exploded").content == {"explod"}
    g = Featurizer({}, n_texts=1)
    assert features(g, "the explosion", "it exploded")["lexical"] == 0.0
    assert features(g, "the explosion", "it exploded")["prefix_recall"] == 1.0  # "explo"
    # A window of max(4, 2 x 2) tokens: the ACU's words 6 tokens apart are not in one window.
    far = features(g, "red boat", "red one two three four five boat")
    assert far["idf_recall"] == 1.0 and far["window_recall"] == pytest.approx(0.5)
    assert features(g, "red boat", "red one boat")["window_recall"] == 1.0


def test_idf_table_counts_each_text_once():
    idf, n = idf_table(["a cat sat", "the cat ran", "cat cat cat"])
    assert n == 3
    assert idf["cat"] == pytest.approx(math.log(4 / 4) + 1)
    assert idf["sat"] == pytest.approx(math.log(4 / 2) + 1)
    assert "a" not in idf and "the" not in idf


def _lcs_table(a, b) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    return table[-1][-1]


def test_bit_parallel_lcs_matches_the_dynamic_programme():
    rng = np.random.default_rng(0)
    for _ in range(300):
        a = rng.choice(list("abcde"), size=rng.integers(0, 12)).tolist()
        b = rng.choice(list("abcdef"), size=rng.integers(0, 30)).tolist()
        assert lcs_length(a, b) == _lcs_table(a, b)
    assert lcs_length(["x", "y"], []) == 0


def test_cross_validation_is_by_document_and_the_stored_model_predicts_like_scikit_learn():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(3)
    documents = np.repeat(np.arange(12), 20)
    X = rng.normal(size=(240, 3))
    y = rng.random(240) < 1 / (1 + np.exp(-(2 * X[:, 0] - X[:, 1])))
    seen = []
    cv = learned.cross_validated(X, y, documents, folds=4, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]
    for fold, model in enumerate(cv["fold_fits"]):
        test = cv["folds"] == fold
        assert set(documents[test]).isdisjoint(documents[~test])  # no document on both sides
        refit = learned.fit(X[~test], y[~test])
        np.testing.assert_allclose(cv["oof"][test], learned.predict(refit, X[test]))
        np.testing.assert_allclose(model["coef"], refit["coef"])
    reference = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000)).fit(X, y)
    np.testing.assert_allclose(learned.predict(cv["fit"], X), reference.predict_proba(X)[:, 1], atol=1e-6)
    stored = json.loads(json.dumps(learned.stored_model(cv["fit"], ["a", "b", "c"], "1", {"pairs": 240})))
    assert learned.check(stored, ["a", "b", "c"], "1") is stored
    np.testing.assert_allclose(learned.predict(stored, X), learned.predict(cv["fit"], X))
    with pytest.raises(learned.ModelError, match="features v1"):
        learned.check(stored, ["a", "b"], "1")
    with pytest.raises(learned.ModelError, match="format version"):
        learned.check({**stored, "version": 99}, ["a", "b", "c"], "1")
    with pytest.raises(learned.ModelError, match="no learned model"):
        learned.check({}, ["a", "b", "c"], "1")
    with pytest.raises(ValueError, match="at least two documents"):
        learned.cross_validated(X[:20], y[:20], documents[:20])


def test_not_for_ranking_when_the_system_level_ci_includes_zero():
    def figures(kendall):
        return {"correlations": {"system": {"kendall": kendall}}}

    assert ranking_verdict(figures([0.75, 0.63, 0.81]))["for_ranking"] is True
    refused = ranking_verdict(figures([0.15, -0.08, 0.4]))
    assert refused["for_ranking"] is False and "includes 0" in refused["reason"]
    assert ranking_verdict(figures([-0.5, -0.7, -0.2]))["for_ranking"] is False
    assert ranking_verdict(figures([0.3, 0.0, 0.6]))["for_ranking"] is False  # a bound at 0 includes it
    assert ranking_verdict({"correlations": None})["for_ranking"] is None
    assert ranking_verdict({})["for_ranking"] is None
