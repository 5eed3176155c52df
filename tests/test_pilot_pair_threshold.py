"""A `pairs` threshold learned from the batch's own gold round (issue 43: "the adaptive policy sets
its settling threshold from the batch's own first wave"; bench-only, opt-in: not the app's default)."""

import numpy as np
import pytest

from hits.allocation.gold_guard import first_majority
from hits.allocation.policy import PAIRS_THRESHOLD, PILOT_CEILING, PILOT_MIN_GOLD, pilot_pair_threshold

from .test_allocation import allocation_bench, judged_crowd


@pytest.mark.portable
def test_the_pilot_threshold_is_fixed_places_gold_accuracy_less_the_margin_within_its_bounds():
    # a good crowd: fixed places' majority right on 90 of 100 gold pairs, margin 0.05: 0.85
    assert pilot_pair_threshold(90, 100, 0.05) == pytest.approx(0.85)
    # a weak crowd (spammers: its majority often wrong) keeps the floor, the cheap default
    assert pilot_pair_threshold(70, 100, 0.05) == PAIRS_THRESHOLD
    assert pilot_pair_threshold(70, 100, 0.05, floor=0.6) == pytest.approx(0.65)
    # a perfect majority asks for no more than the ceiling
    assert pilot_pair_threshold(100, 100, 0.0) == PILOT_CEILING
    # too little gold decides nothing: the floor
    assert pilot_pair_threshold(PILOT_MIN_GOLD - 1, PILOT_MIN_GOLD - 1, 0.0) == PAIRS_THRESHOLD
    assert pilot_pair_threshold(0, 0, 0.05) == PAIRS_THRESHOLD


def test_the_bench_pilot_rule_reads_every_gold_answer_and_settles_at_its_threshold(realsumm_path, monkeypatch):
    """pairs+judge+pilot: each wave's threshold is pilot_pair_threshold of fixed places' majority on the
    gold pairs bought so far (a stopped worker's answers too), and it is the one the wave settles at."""
    spec, systems, docs, labels, crowd, judge, experts = judged_crowd(
        realsumm_path, monkeypatch, "no-spammers-hard.json"
    )
    pilot = allocation_bench.PairSettings(threshold_rule="pilot", margin=0.0)
    seen = []
    decide = allocation_bench.decide_pairs

    def spy(run, hits, sens, spec_, pairs, threshold, fixed):
        seen.append(threshold)
        return decide(run, hits, sens, spec_, pairs, threshold, fixed)

    monkeypatch.setattr(allocation_bench, "decide_pairs", spy)
    run = allocation_bench.run_policy(crowd, allocation_bench.PAIRS_POLICY, judge, pilot)
    items, _, said = run.rows(counted_only=False)
    gold = crowd.gold[crowd.hit_of[items]]
    label, counted = first_majority(items[gold], said[gold], allocation_bench.ASSIGNMENTS, crowd.truth.size)
    full = counted >= allocation_bench.ASSIGNMENTS
    accuracy = float(np.mean(label[full] == crowd.truth[full]))
    assert run.thresholds[-1] == pytest.approx(min(max(accuracy, PAIRS_THRESHOLD), PILOT_CEILING))
    assert run.thresholds[-1] > PAIRS_THRESHOLD  # this crowd's majority is better than the constant
    assert seen and seen[-1] == run.thresholds[-1]
    # the constant rule stays the default and settles at PAIRS_THRESHOLD
    default = allocation_bench.run_policy(crowd, allocation_bench.PAIRS_POLICY, judge)
    assert set(default.thresholds) == {PAIRS_THRESHOLD}
    assert run.places.sum() > default.places.sum()  # a higher threshold buys more
