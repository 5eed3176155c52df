"""Pure parts of the draft report and the budget: matching, the Lite2.x criterion, mixed scores,
the choice of human sentences and out-of-fold predictions."""

import numpy as np
import pytest

from scoring.drafts import quality as draft_quality
from scoring.drafts.unit_budget import curve, features, regressor


def test_one_to_one_matching_takes_the_best_assignment_and_drops_weak_pairs():
    sim = np.array([[0.9, 0.8, 0.0], [0.85, 0.1, 0.0], [0.0, 0.0, 0.3]])
    # greedy would pair (0, 0) and leave draft 1 with 0.1; the assignment pairs 0-1 and 1-0
    assert sorted(draft_quality.match_one_to_one(sim, 0.5)) == [(0, 1), (1, 0)]
    assert draft_quality.match_one_to_one(np.zeros((0, 3)), 0.5) == []
    out = draft_quality.precision_recall_f1(2, drafts=3, human=4)
    assert out["precision"] == pytest.approx(2 / 3) and out["recall"] == 0.5
    assert out["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert draft_quality.precision_recall_f1(0, 0, 0)["f1"] == 0.0


def test_symmetric_similarity_needs_both_directions():
    s = draft_quality.symmetric_similarity(np.array([1.0, 1.0, 0.0]), np.array([1.0, 0.2, 0.0]))
    assert s == pytest.approx([1.0, 2 * 0.2 / 1.2, 0.0])


def test_sentence_errors_by_hand():
    # 2 sentences, 2 systems; sentence 0: human units p=[1,0] and [0,0]; drafts p=[1,1]
    human_p = np.array([[1.0, 0.0], [0.0, 0.0], [0.5, 0.5]])
    hs, hc = draft_quality.sentence_sums(human_p, np.array([0, 0, 1]), 2)
    ds, dc = draft_quality.sentence_sums(np.array([[1.0, 1.0]]), np.array([0]), 2)
    assert hc.tolist() == [2, 1] and dc.tolist() == [1, 0]
    errors = draft_quality.sentence_errors(hs, hc, ds, dc)
    # sentence 0: |0.5-1| and |0-1| -> 0.75; sentence 1 has no draft: |0.5-0| twice -> 0.5
    assert errors == pytest.approx([0.75, 0.5])


def test_mixed_scores_take_human_units_where_chosen():
    doc = np.array([0, 0, 1])
    hs, hc = np.array([[2.0, 0.0], [1.0, 1.0], [0.0, 1.0]]), np.array([2.0, 1.0, 1.0])
    ds, dc = np.array([[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]), np.array([1.0, 1.0, 2.0])
    every = curve.mixed_scores(doc, hs, hc, ds, dc, np.ones(3, bool), 2)
    assert every == pytest.approx(np.array([[1.0, 1 / 3], [0.0, 1.0]]))
    some = curve.mixed_scores(doc, hs, hc, ds, dc, np.array([True, False, False]), 2)
    assert some == pytest.approx(np.array([[2 / 3, 0.0], [0.5, 0.5]]))


def test_choose_human_takes_the_top_share_reproducibly():
    mask = regressor.choose_human(np.array([0.1, 0.9, 0.5, 0.9]), 0.5)
    assert mask.tolist() == [False, True, False, True]
    assert regressor.choose_human(np.array([0.2, 0.2, 0.2]), 1 / 3).tolist() == [True, False, False]
    assert not regressor.choose_human(np.array([0.3, 0.1]), 0).any()


def test_out_of_fold_predictions_never_see_their_own_document():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] * 2 + rng.normal(scale=0.1, size=60)
    groups = np.repeat(np.arange(10), 6)
    base = regressor.out_of_fold(X, y, groups)
    changed = y.copy()
    changed[groups == 3] += 100.0  # labels of document 3 only
    again = regressor.out_of_fold(X, changed, groups)
    assert again[groups == 3] == pytest.approx(base[groups == 3])  # its own predictions cannot move
    assert np.corrcoef(base, y)[0, 1] > 0.8  # and the model does learn


def test_budget_point_against_random_and_oracle():
    rng = np.random.default_rng(1)
    n_docs, n_sys, per_doc = 8, 5, 3
    doc = np.repeat(np.arange(n_docs), per_doc)
    hs = rng.uniform(size=(len(doc), n_sys)) * 2
    hc = np.full(len(doc), 2.0)
    ds = rng.uniform(size=(len(doc), n_sys))
    dc = np.ones(len(doc))
    human = curve.mixed_scores(doc, hs, hc, ds, dc, np.ones(len(doc), bool), n_docs)
    errors = draft_quality.sentence_errors(hs, hc, ds, dc)
    point = curve.budget_point(human, 1.0, errors, (doc, hs, hc, ds, dc), random_draws=3, oracle=errors)
    assert point["regressor"]["system_pearson"] == pytest.approx(1.0)  # all human: identical scores
    assert point["random"]["summary_pearson"] == pytest.approx(1.0)
    assert point["human_sentences"] == len(doc)


def test_sentence_features():
    row = features.sentence_features(
        "Pepe and Falcao , 34 , were sold by Porto for £ 23million .",
        ["Pepe was sold.", "Falcao was sold by Porto."],
        [0.5, 1.0],
    )
    values = dict(zip(features.FEATURES, row, strict=False))
    assert values["words"] == 14 and values["coordinations"] == 1 and values["numbers"] == 2
    assert values["capitalised"] == 2 and values["drafts"] == 2 and values["draft_words"] == 4
    assert values["draft_score_mean"] == 0.75 and values["draft_score_sd"] == 0.25
    assert 0 < values["coverage"] < 1
    assert features.agreement(["Pepe was sold."], ["Pepe was sold."]) == 1.0


def test_spread_criterion_ignores_a_constant_offset():
    hs, hc = np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]]), np.array([1.0, 1.0])
    ds, dc = np.array([[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]), np.array([1.0, 1.0])
    assert draft_quality.sentence_errors(hs, hc, ds, dc, "abs") == pytest.approx([0.5, 0.5])
    spread = draft_quality.sentence_errors(hs, hc, ds, dc, "spread")
    assert spread[1] == 0.0 and spread[0] == pytest.approx(np.std([0.5, -0.5, 0.5]))
    with pytest.raises(ValueError):
        draft_quality.sentence_errors(hs, hc, ds, dc, "median")
