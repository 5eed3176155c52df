"""Per-worker leave-one-out agreement and gold accuracy (scoring/worker_quality.py) against loops."""

from collections import defaultdict

import numpy as np

from scoring.stats.worker_quality import align_gold, worker_quality
from tests.scoring.test_agreement import judgments


def test_matches_loop():
    rng = np.random.default_rng(3)
    s, a, w, p = judgments(rng, n_summaries=60, pool=9)
    pairs = sorted(set(zip(s.tolist(), a.tolist(), strict=False)))
    gold_pairs = [pairs[i] for i in rng.choice(len(pairs), size=40, replace=False)]
    gold_table = {pair: bool(rng.random() < 0.5) for pair in gold_pairs}
    gs, ga = (np.array(col) for col in zip(*gold_table, strict=False))
    gold = align_gold(s, a, gs, ga, np.array(list(gold_table.values())))

    by_pair = defaultdict(list)
    for si, ai, wi, pi in zip(s.tolist(), a.tolist(), w.tolist(), p.tolist(), strict=False):
        by_pair[si, ai].append((wi, pi))
    compared, agreed, gold_n, gold_ok = (defaultdict(int) for _ in range(4))
    for row, (si, ai, wi, pi) in enumerate(zip(s.tolist(), a.tolist(), w.tolist(), p.tolist(), strict=False)):
        others = [v for ow, v in by_pair[si, ai] if ow != wi]
        if others:
            compared[wi] += 1
            agreed[wi] += pi == (2 * sum(others) > len(others))  # tie among others: not present
        if (si, ai) in gold_table:
            assert gold[row] == gold_table[si, ai]
            gold_n[wi] += 1
            gold_ok[wi] += pi == gold_table[si, ai]
        else:
            assert np.isnan(gold[row])

    q = worker_quality(s, a, w, p, gold=gold)
    assert q.workers.tolist() == sorted(set(w.tolist()))
    for i, wi in enumerate(q.workers.tolist()):
        assert q.labels[i] == np.count_nonzero(w == wi)
        assert q.compared[i] == compared[wi]
        assert q.gold_items[i] == gold_n[wi]
        if compared[wi]:
            assert abs(q.agreement[i] - agreed[wi] / compared[wi]) < 1e-15
        else:
            assert np.isnan(q.agreement[i])
        if gold_n[wi]:
            assert abs(q.gold_accuracy[i] - gold_ok[wi] / gold_n[wi]) < 1e-15
        else:
            assert np.isnan(q.gold_accuracy[i])


def test_alone_and_ties():
    # (1, 10): labels 1, 0, 1, 1 by workers 0-3: the others' majority is present for everyone.
    # (1, 11): workers 0 and 1 both say 0: each agrees with the other alone.
    # (2, 20): worker 0 alone: not compared.
    # (2, 21): labels 0, 1, 0 by workers 0-2: for workers 0 and 2 the others tie, which counts as
    #          not present, so their 0 agrees; worker 1's others say 0, 0.
    s = np.array([1, 1, 1, 1, 1, 1, 2, 2, 2, 2])
    a = np.array([10, 10, 10, 10, 11, 11, 20, 21, 21, 21])
    w = np.array([0, 1, 2, 3, 0, 1, 0, 0, 1, 2])
    p = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 0], dtype=bool)
    q = worker_quality(s, a, w, p)
    assert q.labels.tolist() == [4, 3, 2, 1]
    assert q.compared.tolist() == [3, 3, 2, 1]
    assert q.agreement.tolist() == [1.0, 1 / 3, 1.0, 1.0]
    assert np.isnan(q.gold_accuracy).all() and q.gold_items.tolist() == [0, 0, 0, 0]
