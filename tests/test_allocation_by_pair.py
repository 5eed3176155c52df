"""Adaptive allocation by pair with the judge as a prior (issue 43): the posterior a stop reads
takes the judge's calibrated probability as each pair's prior, and a HIT's next place asks only
about the pairs still open."""

import numpy as np
import pytest
from scipy.special import expit, logit

from hits.allocation.policy import open_pairs, pair_posteriors, with_crowd
from scoring.stats import learned

from .test_allocation import allocation_bench, judged_crowd


@pytest.mark.portable
def test_a_per_pair_prior_enters_the_posterior_as_prior_odds():
    # pair 0: prior 0.5 (odds 1), two "present" at 0.8 / 0.8: odds 1 * 4 * 4 = 16, P = 16/17;
    # pair 1: prior 0.8 (odds 4), one "absent" at 0.8 / 0.8: odds 4 * 1/4 = 1, P = 1/2.
    p = pair_posteriors([0, 0, 1], [True, True, False], [0.8] * 3, [0.8] * 3, prior=[0.5, 0.8])
    assert p.tolist() == pytest.approx([16 / 17, 0.5])
    # one batch prior stays as it was: the same as that prior given to every pair
    one = pair_posteriors([0, 0, 1], [True, True, False], [0.8] * 3, [0.8] * 3, prior=0.3)
    each = pair_posteriors([0, 0, 1], [True, True, False], [0.8] * 3, [0.8] * 3, prior=[0.3, 0.3])
    assert one.tolist() == pytest.approx(each.tolist())
    # a judge alone, with no judgment yet, is its prior (clipped to the estimates' range)
    assert pair_posteriors([], [], [], [], prior=[0.7, 0.999], n_items=2).tolist() == pytest.approx([0.7, 0.99])


@pytest.mark.portable
def test_open_pairs_are_the_unsettled_and_the_judged_too_few_times():
    posterior = np.array([0.95, 0.6, 0.05, 0.99])
    judged = np.array([1, 3, 2, 0])
    assert open_pairs(posterior, judged, 0.9).tolist() == [False, True, False, True]
    assert open_pairs(posterior, judged, 0.9, min_judged=2).tolist() == [True, True, False, True]
    assert open_pairs(posterior, judged, 0.96, min_judged=0).tolist() == [True, True, True, False]  # 0.95 < 0.96


@pytest.mark.portable
def test_a_judge_prior_never_settles_a_pair_against_or_without_its_crowd():
    # fallback workers (0.8 / 0.8): "present" multiplies the odds by 4, "absent" by 1/4.
    items, said = [0, 1, 2, 2, 3, 4], [False, True, True, False, False, True]
    prior = [0.95, 0.95, 0.9, 0.2, 0.3]
    nan = [float("nan")] * len(items)
    posterior = pair_posteriors(items, said, nan, nan, prior=prior)
    crowd = pair_posteriors(items, said, nan, nan, prior=0.5)
    # pair 0: odds 19 / 4, P = 19/23 = 0.826, settled present at 0.75, but its one worker said absent (0.2);
    # pair 1: 19 * 4 = 76, P = 76/77, its worker said present (0.8); pair 2: a tie (crowd 0.5) over odds 9,
    # P = 0.9; pair 3: 1/4 * 1/4 = 1/16, P = 1/17, absent as its worker; pair 4: 3/7 * 4 = 12/7, P = 12/19.
    assert posterior.tolist() == pytest.approx([19 / 23, 76 / 77, 0.9, 1 / 17, 12 / 19])
    assert crowd.tolist() == pytest.approx([0.2, 0.8, 0.5, 0.2, 0.8])
    judged = [1, 1, 2, 1, 1]
    # the posterior alone settles pairs 0 and 2 by the judge's prior, against or without the crowd
    assert open_pairs(posterior, judged, 0.75).tolist() == [False, False, False, False, True]
    # with the crowd's own evidence they stay open: another worker is asked
    assert open_pairs(posterior, judged, 0.75, crowd=crowd).tolist() == [True, False, True, False, True]
    assert with_crowd(posterior, crowd).tolist() == [False, True, False, True, True]


@pytest.mark.portable
def test_platt_scaling_undoes_an_over_confident_judge():
    # calibrated(0.8) under (0.5, 0): logit 0.8 = ln 4, halved: ln 2, P = 2/3.
    assert learned.calibrated([0.5, 0.8], (0.5, 0.0)).tolist() == pytest.approx([0.5, 2 / 3])
    # A judge whose log-odds are twice the true ones, shifted by 0.4: the fit halves them back.
    rng = np.random.default_rng(0)
    z = rng.normal(0, 1.5, 40_000)
    y = rng.random(z.size) < expit(z)
    slope, intercept = learned.calibration(expit(2 * z + 0.4), y)
    assert slope == pytest.approx(0.5, abs=0.03) and intercept == pytest.approx(-0.2, abs=0.05)
    fixed = learned.calibrated(expit(2 * z + 0.4), (slope, intercept))
    assert np.abs(logit(fixed) - z).mean() < 0.05  # the true log-odds back, within the fit's error
    assert learned.calibration([0.2, 0.9], [True, True])[0] == 0.0  # one class: a constant


def test_by_pair_later_places_show_only_open_pairs_and_gold_is_never_left_out(realsumm_path, monkeypatch):
    spec, systems, docs, labels, crowd, judge, _ = judged_crowd(realsumm_path, monkeypatch, "no-spammers-hard.json")
    run = allocation_bench.run_policy(crowd, allocation_bench.PAIRS_POLICY, judge)
    assert run.prior is not None and run.prior.min() > 0 and run.prior.max() < 1
    places = run.taken.sum(axis=1)
    assert (places[crowd.gold] == 3).all()  # gold HITs: every pair at the batch's 3 places
    gold_pairs = crowd.gold[crowd.hit_of]
    assert (run.shown.sum(axis=0)[gold_pairs] == 3).all()
    # Triaged pairs are never shown; some later places show fewer pairs than the HIT's first did.
    assert not run.shown[:, ~run.asked].any()
    fewer = 0
    for h in np.flatnonzero(~crowd.gold & (places > 1)):
        counts = run.shown[np.flatnonzero(run.taken[h]), crowd.starts[h] : crowd.starts[h] + crowd.sizes[h]].sum(axis=1)
        assert (counts[1:] <= counts[0]).all()  # a HIT's later places never ask more than its first
        fewer += int((counts[1:] < counts[0]).any())
    assert fewer > 0  # and some ask only the pairs still open
    # No pair is judged more often than the batch's most places.
    assert run.shown.sum(axis=0).max() <= allocation_bench.APP.max_places
    results = allocation_bench.run(
        spec, systems, docs, labels, seeds=1, policies=("fixed-3", "pairs+judge"), judge=judge
    )
    summary = allocation_bench.means(results)
    assert summary["pairs+judge"]["judgments"] < summary["fixed-3"]["judgments"]
