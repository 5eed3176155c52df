"""Triage aware of systems (issue 43): the judge decides a pair outright only where its expert documents
say it may for that system (hits.allocation.system_triage), values computed by hand."""

from math import log, sqrt

import numpy as np
import pytest

from hits.allocation import system_triage

from .test_allocation import allocation_bench, judged_crowd


@pytest.mark.portable
def test_wilson_lower_bound_by_hand():
    # 8 of 10 at z = 2: (0.8 + 4/20 - 2 sqrt(0.16/10 + 4/400)) / (1 + 4/10) = (1 - 2 sqrt(0.026)) / 1.4
    # 7 of 7 at z = 1.645: p = 1 leaves 1 / (1 + z²/7); 0 of 5 and 0 of 0 are 0.
    bounds = system_triage.wilson_lower([8, 7, 0, 0], [10, 7, 5, 0], z=2.0)
    assert bounds[0] == pytest.approx((1 - 2 * sqrt(0.026)) / 1.4)  # 0.4839
    assert system_triage.wilson_lower(7, 7).item() == pytest.approx(1 / (1 + 1.645**2 / 7))  # 0.7212
    assert bounds[2:].tolist() == [0.0, 0.0]


@pytest.mark.portable
def test_system_offsets_are_the_shrunk_gap_of_the_smoothed_log_odds():
    # system 0: 3 pairs, 2 present, the judge says 0.5 each: logit(2.5/4) - logit(2/4) = ln(5/3), shrunk
    # by 3 / (3 + 3); system 1: 1 pair, absent, 0.5: logit(0.5/2) - logit(1/2) = -ln 3, shrunk by 1/4;
    # system 2: no labelled pair, no offset.
    offsets = system_triage.system_offsets([0.5] * 4, [1, 1, 0, 0], [0, 0, 0, 1], strength=3, n_systems=3)
    assert offsets.tolist() == pytest.approx([0.5 * log(5 / 3), -0.25 * log(3), 0.0])
    moved = system_triage.recalibrated([0.5, 0.5, 0.5], [0, 1, 2], offsets)
    root = sqrt(5 / 3)  # expit(ln(5/3) / 2)
    assert moved.tolist() == pytest.approx([root / (1 + root), 1 / (1 + 3**0.25), 0.5])


@pytest.mark.portable
def test_offsets_to_choose_c_on_are_fitted_without_the_pairs_document():
    # document 0: one present pair; document 1: one present and one absent, all of system 0 at 0.5.
    # Document 0's pair gets document 1's offset: logit(1.5/3) - logit(1.5/3) = 0, it stays 0.5;
    # document 1's pairs get document 0's: logit(1.5/2) - logit(1/2) = ln 3, shrunk by 1/2: expit(ln 3 / 2).
    p = system_triage.crossfit_recalibrated([0.5] * 3, [1, 1, 0], [0, 0, 0], [0, 1, 1], strength=1, n_systems=1)
    assert p.tolist() == pytest.approx([0.5, sqrt(3) / (1 + sqrt(3)), sqrt(3) / (1 + sqrt(3))])


@pytest.mark.portable
def test_a_system_is_triaged_only_where_its_expert_pairs_bound_the_judges_accuracy():
    # system 0: 10 pairs decided at 0.9, 8 right (bound 0.484 at z = 2), one undecided wrong pair not counted;
    # system 1: 10 decided, all right (bound 1 / 1.4 = 0.714); system 2: nothing decided at 0.9.
    probability = [0.95] * 10 + [0.6] + [0.02] * 10 + [0.7, 0.2]
    truth = [1] * 8 + [0, 0] + [0] + [0] * 10 + [1, 0]
    system = [0] * 11 + [1] * 10 + [2, 2]
    gate = system_triage.triaging_systems(probability, truth, system, 0.9, needed=0.7, n_systems=3, z=2.0)
    assert gate.tolist() == [False, True, False]
    gate = system_triage.triaging_systems(probability, truth, system, 0.9, needed=0.45, n_systems=3, z=2.0)
    assert gate.tolist() == [True, True, False]
    # no c (the triage decides nothing): no system triaged
    assert not system_triage.triaging_systems(probability, truth, system, None, 0.0, 3).any()


@pytest.mark.portable
def test_the_cap_keeps_each_systems_most_confident_pairs_up_to_its_share():
    # 10 pairs: system 0 has 6 (4 decided), system 1 has 4 (1 decided): 5 of 10 decided, share 0.5.
    probability = np.array([0.99, 0.05, 0.92, 0.97, 0.6, 0.5, 0.01, 0.4, 0.5, 0.55])
    decided = np.array([1, 1, 1, 1, 0, 0, 1, 0, 0, 0], dtype=bool)
    system = np.array([0] * 6 + [1] * 4)
    # factor 1: system 0 at most floor(0.5 * 6) = 3, its most confident (0.99, 0.05, 0.97); system 1 floor(2) = 2.
    assert np.flatnonzero(system_triage.capped(probability, decided, system, 1.0, 2)).tolist() == [0, 1, 3, 6]
    # factor 0.5: floor(1.5) = 1 and floor(1) = 1.
    assert np.flatnonzero(system_triage.capped(probability, decided, system, 0.5, 2)).tolist() == [0, 6]
    assert not system_triage.capped(probability, np.zeros(10, dtype=bool), system, 1.0, 2).any()


def test_the_bench_triages_by_system_as_the_rule_says(realsumm_path, monkeypatch):
    spec, systems, docs, labels, crowd, judge, _ = judged_crowd(realsumm_path, monkeypatch, "no-spammers-hard.json")

    def triaged(rule: str, setting: float) -> np.ndarray:
        run = allocation_bench.Run(crowd)
        figures = allocation_bench.triage(run, judge, rule, setting)
        assert figures["c"] is not None
        return ~run.asked

    plain = triaged("none", 0.0)
    assert plain.any()
    assert not triaged("gate", 1.0).any()  # no bound lies above an accuracy of 1: every pair to the crowd
    gated = triaged("gate", 0.5)
    assert (gated <= plain).all()  # the gate only takes systems out
    capped = triaged("cap", 1.0)
    assert (capped <= plain).all()
    others = ~crowd.gold[crowd.hit_of]
    share = plain[others].mean()
    per_system = np.bincount(judge.system[capped], minlength=6) / np.bincount(judge.system[others], minlength=6)
    assert per_system.max() <= share + 1e-9  # no system above the triage's share of all the pairs
