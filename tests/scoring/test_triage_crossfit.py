"""Triage's confidence chosen out of sample (issue 43): each fold's c is chosen on the other
folds' documents only, so the figures reported on a document never come from a c chosen on it."""

import numpy as np
import pytest

from scoring.stats import triage_crossfit

pytestmark = pytest.mark.portable


def _pairs(documents=40, systems=5, acus=6, seed=0):
    """Pairs whose machine probability is right with a margin, wrong on a few sure-looking ones."""
    rng = np.random.default_rng(seed)
    d, s, a = (g.ravel() for g in np.meshgrid(np.arange(documents), np.arange(systems), np.arange(acus), indexing="ij"))
    human = rng.random(d.size) < 0.5
    sure = rng.uniform(0.5, 1.0, d.size)
    probability = np.where(human, sure, 1 - sure)
    wrong = rng.random(d.size) < 0.03
    probability[wrong] = 1 - probability[wrong]
    return probability, human, d * 100 + s, d, s


def test_each_fold_chooses_c_on_the_other_documents_and_never_on_its_own():
    probability, human, summary, document, system = _pairs()
    out = triage_crossfit.crossfit(probability, human, summary, document, system, folds=4, resamples=50)
    all_documents = set(np.unique(document).tolist())
    for fold in out["folds"]:
        assert not set(fold["chosen_on"]) & set(fold["applied_to"])
        assert set(fold["chosen_on"]) | set(fold["applied_to"]) == all_documents
    # Spoil the labels of one fold's documents: the machine is wrong on every pair there, so no c
    # passes on them. That fold's c does not move (it was not chosen on them); the other folds',
    # which were chosen on them among others, become stricter (or none).
    first = out["folds"][0]
    assert first["c"] is not None and all(f["c"] is not None for f in out["folds"])
    spoiled = human.copy()
    mine = np.isin(document, first["applied_to"])
    spoiled[mine] = probability[mine] < 0.5
    again = triage_crossfit.crossfit(probability, spoiled, summary, document, system, folds=4, resamples=50)
    assert again["folds"][0]["c"] == first["c"]
    for before, after in zip(out["folds"][1:], again["folds"][1:], strict=True):
        assert after["c"] is None or after["c"] > before["c"]


def test_the_held_out_saving_is_each_fold_at_its_own_c():
    probability, human, summary, document, system = _pairs(seed=1)
    out = triage_crossfit.crossfit(probability, human, summary, document, system, folds=5, resamples=200)
    decided = np.zeros(human.size, dtype=bool)
    for fold in out["folds"]:
        mine = np.isin(document, fold["applied_to"])
        c = fold["c"]
        if c is not None:
            decided[mine] = (probability[mine] >= c) | (probability[mine] <= 1 - c)
    held = out["held_out"]
    value, low, high = held["saved_share"]
    assert value == pytest.approx(decided.mean())
    assert low <= value <= high and high - low > 0
    combined = np.where(decided, probability >= 0.5, human)
    assert held["agreement"][0] == pytest.approx(np.mean(combined == human))
    assert held["documents"] == 40 and held["pairs"] == human.size


def test_tau_only_with_enough_systems():
    few = triage_crossfit.crossfit(*_pairs(systems=10), resamples=20)
    assert few["held_out"]["system_kendall"] is None and few["held_out"]["systems"] == 10
    many = triage_crossfit.crossfit(*_pairs(documents=20, systems=20, acus=3), resamples=20)
    tau = many["held_out"]["system_kendall"]
    assert tau is not None and tau[1] <= tau[0] <= tau[2] <= 1


def test_one_document_cannot_be_cross_fitted():
    probability, human, summary, document, system = _pairs(documents=1)
    with pytest.raises(ValueError, match="at least two documents"):
        triage_crossfit.crossfit(probability, human, summary, document, system)


def test_the_suggested_confidence_is_the_rule_on_these_pairs_with_the_agreement_alone():
    """A run's suggestion (figures.triage_suggestion, the c app+judge and a pairs batch use): the
    smallest c keeping agreement >= 0.97 at every larger c, the system change not bounded."""
    probability, human, summary, document, system = _pairs(documents=10, seed=3)
    out = triage_crossfit.suggest(probability, human, summary, document, system)
    by_hand = None
    for c in sorted(triage_crossfit.TRIAGE_GRID, reverse=True):
        decided = (probability >= c) | (probability <= 1 - c)
        if np.mean(np.where(decided, probability >= 0.5, human) == human) < 0.97:
            break
        by_hand = c
    assert by_hand is not None and out["c"] == by_hand
    decided = (probability >= by_hand) | (probability <= 1 - by_hand)
    assert out["decided_share"] == pytest.approx(decided.mean()) and 0 < out["decided_share"] < 1
    assert (out["documents"], out["pairs"]) == (10, human.size)
    assert out["criteria"] == {"min_agreement": 0.97, "max_system_change": 1.0}
    # A machine sure and wrong on every pair: no c keeps the agreement, and nothing is decided.
    wrong = np.where(human, 0.001, 0.999)
    none = triage_crossfit.suggest(wrong, human, summary, document, system)
    assert none["c"] is None and none["decided_share"] == 0.0
