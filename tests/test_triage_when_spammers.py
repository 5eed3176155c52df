"""pairs+judge's triage only where the gold round shows workers at chance (issue 43; bench-only, opt-in:
`--pair-triage-when spammers`, bench/pairs_policy.py)."""

import importlib
from types import SimpleNamespace

import numpy as np
import pytest

from .test_allocation import allocation_bench, judged_crowd

pairs_policy = importlib.import_module("pairs_policy")  # bench/, on the path test_allocation sets


@pytest.mark.portable
def test_the_share_counts_the_workers_stopped_before_whose_rows_the_refit_leaves_out():
    stopped = np.array([True, True, False, False, False, False])
    # a refit's evidence is of counted rows: workers 0 and 1 (stopped earlier) are not in it
    evidence = SimpleNamespace(workers=np.array([2, 3, 4, 5]), gold_judged=np.array([25, 20, 19, 0]))
    assert pairs_policy.stopped_share(stopped, evidence, 20) == pytest.approx(2 / 4)  # 0, 1 of 0, 1, 2, 3
    assert pairs_policy.stopped_share(np.zeros(6, dtype=bool), evidence, 20) == 0.0
    few = SimpleNamespace(workers=np.array([2, 3]), gold_judged=np.array([5, 5]))
    assert pairs_policy.stopped_share(np.zeros(6, dtype=bool), few, 20) is None  # no one judged enough gold
    assert pairs_policy.stopped_share(stopped, None, 20) is None


@pytest.mark.parametrize(("crowd_file", "on"), [("present.json", True), ("no-spammers-hard.json", False)])
def test_the_triage_is_decided_once_the_gold_is_bought_from_the_stop(realsumm_path, monkeypatch, crowd_file, on):
    spec, systems, docs, labels, crowd, judge, experts = judged_crowd(realsumm_path, monkeypatch, crowd_file)
    when = allocation_bench.PairSettings(triage_when="spammers", spammer_share=0.05)
    run = allocation_bench.run_policy(crowd, allocation_bench.PAIRS_POLICY, judge, when)
    always = allocation_bench.run_policy(crowd, allocation_bench.PAIRS_POLICY, judge)
    assert run.triage["on"] is on
    assert (run.triage["stopped_share"] >= 0.05) is on
    gold_hits = np.flatnonzero(crowd.gold)
    assert run.triage["wave"] >= 1 and (run.places[gold_hits] == allocation_bench.ASSIGNMENTS).all()
    would = run.held  # the pairs the triage decides (always: never asked)
    assert would.any() and np.array_equal(would, ~always.asked)
    if on:  # decided pairs of HITs handed out after the decision leave the crowd, as with triage always
        assert (~run.asked).any() and (~run.asked <= would).all()
        assert run.machine is not None
    else:  # every pair to the crowd, the judge only a prior: more bought than with triage
        assert run.asked.all() and run.machine is None
        assert run.places.sum() > always.places.sum()
