"""Gold-anchored worker model (issue 42): Dawid-Skene clamped on gold, gold credible intervals,
the bound on J the stop reads, and the collusion flag, against values computed by hand."""

import math

import numpy as np
import pytest

from scoring.stats.dawid_skene import dawid_skene
from scoring.stats.gold_evidence import beta_interval, collusion, gold_evidence, youden_upper

pytestmark = pytest.mark.portable


def test_beta_interval_by_hand():
    # Beta(1, 1): uniform, quantiles 0.025 and 0.975; Beta(2, 1) (1 right of 1): CDF x^2, so sqrt of them.
    no_data, one_right = beta_interval([0, 1], [0, 1])
    assert no_data == pytest.approx([0.025, 0.975], abs=1e-9)
    assert one_right == pytest.approx([math.sqrt(0.025), math.sqrt(0.975)], abs=1e-9)


def test_youden_upper_without_gold_is_the_triangular_quantile():
    # S, P uniform: J = S + P - 1 is triangular on [-1, 1]; P(J <= u) = 1 - (1 - u)^2 / 2 = 0.95.
    assert youden_upper(0, 0, 0, 0)[0] == pytest.approx(1 - math.sqrt(0.1), abs=2e-3)


def test_youden_upper_matches_sampling():
    rng = np.random.default_rng(0)
    counts = [(30, 60, 28, 50), (55, 60, 45, 50), (3, 10, 0, 12)]
    got = youden_upper(*np.array(counts).T)
    for (k1, n1, k2, n2), upper in zip(counts, got, strict=True):
        j = rng.beta(1 + k1, 1 + n1 - k1, 400_000) + rng.beta(1 + k2, 1 + n2 - k2, 400_000) - 1
        assert upper == pytest.approx(np.quantile(j, 0.95), abs=3e-3)


def test_gold_evidence_counts_only_gold_items():
    # Items 1 (gold present), 2 (gold absent), 3 (not gold). Worker 7: right on 1, wrong on 2;
    # worker 8: right on both; worker 9 judged only item 3.
    ev = gold_evidence([1, 2, 3, 1, 2, 3, 3], [7, 7, 7, 8, 8, 8, 9], [1, 1, 0, 1, 0, 1, 1], [2, 1], [False, True])
    assert ev.workers.tolist() == [7, 8, 9]
    assert ev.positives.tolist() == [1, 1, 0] and ev.said_present.tolist() == [1, 1, 0]
    assert ev.negatives.tolist() == [1, 1, 0] and ev.said_absent.tolist() == [0, 1, 0]
    assert ev.gold_judged.tolist() == [2, 2, 0]
    assert ev.sensitivity.tolist() == pytest.approx([2 / 3, 2 / 3, 1 / 2])
    assert ev.specificity.tolist() == pytest.approx([1 / 3, 2 / 3, 1 / 2])
    assert ev.specificity_interval[0] == pytest.approx([1 - math.sqrt(0.975), 1 - math.sqrt(0.025)], abs=1e-9)
    assert ev.chance_upper[2] == pytest.approx(1 - math.sqrt(0.02), abs=2e-3)  # at BOUND_LEVEL 0.99


def test_gold_clamp_keeps_colluders_from_rating_themselves():
    """Two accounts answering a function of the item agree with each other everywhere; the honest
    worker answers the truth. Without gold, Dawid-Skene trusts the pair. With the gold items
    clamped the fit moves towards the honest worker but the pair still outvotes them on the other
    items, which is why the stop and the flag read gold alone: there the honest worker is near
    perfect and the pair near chance."""
    rng = np.random.default_rng(1)
    n = 400
    truth = rng.random(n) < 0.4
    fake = rng.random(n) < 0.5  # the colluders' shared answer
    items = np.tile(np.arange(n), 3)
    workers = np.repeat([1, 2, 3], n)
    said = np.concatenate([fake, fake, truth])
    free = dawid_skene(items, workers, said)
    assert free.sensitivity[2] + free.specificity[2] - 1 < 0.2  # the honest worker looks at chance
    gold = np.arange(0, n, 5)  # a fifth of the items are gold
    anchored = dawid_skene(items, workers, said, gold=(gold, truth[gold]))
    assert anchored.posterior[gold].tolist() == truth[gold].astype(float).tolist()
    youden_free = free.sensitivity + free.specificity - 1
    youden_anchored = anchored.sensitivity + anchored.specificity - 1
    assert youden_anchored[2] > youden_free[2] + 0.1 and (youden_anchored[:2] < youden_free[:2] - 0.1).all()
    ev = gold_evidence(items, workers, said, gold, truth[gold])
    assert (ev.chance_upper[:2] < 0.2).all() and ev.chance_upper[2] > 0.8
    flags = collusion(items, workers, said, ev)
    assert [(f.first, f.second) for f in flags] == [(1, 2)]
    assert flags[0].common == n and flags[0].agreed == n and flags[0].explained < 0.7


def test_gold_clamp_with_one_label_per_item_still_fits():
    # Without gold one label per item identifies nothing (labels kept, no estimates); with gold it does.
    items, workers, said = [1, 2, 3, 4], [5, 5, 6, 6], [True, False, True, True]
    assert np.isnan(dawid_skene(items, workers, said).sensitivity).all()
    fit = dawid_skene(items, workers, said, gold=([1, 2, 3, 4], [True, False, False, True]))
    assert fit.posterior.tolist() == [1.0, 0.0, 0.0, 1.0]
    assert fit.specificity[0] > 0.9 and fit.specificity[1] < 0.1


def test_honest_pairs_are_not_flagged_even_when_both_are_accurate():
    rng = np.random.default_rng(2)
    n = 600
    truth = rng.random(n) < 0.3
    gold = np.arange(0, n, 10)
    rows = []
    for w, (sens, spec) in enumerate([(0.95, 0.95), (0.97, 0.93), (0.9, 0.5), (0.92, 0.55)]):
        u = rng.random(n)
        rows.append((np.arange(n), np.full(n, w), np.where(truth, u < sens, u >= spec)))
    items, workers, said = (np.concatenate(x) for x in zip(*rows, strict=True))
    ev = gold_evidence(items, workers, said, gold, truth[gold])
    assert collusion(items, workers, said, ev) == []
    assert (ev.chance_upper[:2] > 0.5).all()


def test_workers_without_gold_are_not_flagged_on_moderate_agreement():
    # 60 common items, 57 agreements (95%), no gold: the widest intervals explain up to 0.951.
    said = np.r_[np.ones(60, bool), np.ones(57, bool), np.zeros(3, bool)]
    items, workers = np.r_[np.arange(60), np.arange(60)], np.repeat([1, 2], 60)
    ev = gold_evidence(items, workers, said, [], [])
    assert collusion(items, workers, said, ev) == []
