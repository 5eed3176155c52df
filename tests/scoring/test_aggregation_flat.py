"""Vectorized grouping and summary scores (scoring/aggregation.py) against plain loops."""

from collections import defaultdict

import numpy as np
import pytest

from scoring.stats.aggregation import acu_labels, acu_scores_by_summary, group_codes
from tests.conftest import REALSUMM


def random_judgments(rng, n_summaries=30, n_workers=12, sparse_ids=False):
    rows = []
    for s in range(n_summaries):
        n_acus = rng.integers(1, 8)
        for w in rng.choice(n_workers, size=rng.integers(1, 5), replace=False):
            for a in range(n_acus):
                if rng.random() < 0.9:
                    rows.append((s, 1000 * s + a, w, rng.random() < 0.5))
    s, a, w, p = (np.array(col) for col in zip(*rows, strict=False))
    if sparse_ids:  # ids far apart force the sort path instead of the lookup table
        s, a, w = s * 10**9 + 7, a * 10**6, w * 10**12
    return s, a, w, p.astype(bool)


@pytest.mark.parametrize("sparse_ids", [False, True])
def test_group_codes_match_sorted_unique_tuples(sparse_ids):
    rng = np.random.default_rng(0)
    s, a, w, _ = random_judgments(rng, sparse_ids=sparse_ids)
    codes, (us, ua, uw) = group_codes(s, a, w)
    expected = sorted(set(zip(s.tolist(), a.tolist(), w.tolist(), strict=False)))
    assert list(zip(us.tolist(), ua.tolist(), uw.tolist(), strict=False)) == expected
    lookup = {key: i for i, key in enumerate(expected)}
    assert codes.tolist() == [lookup[key] for key in zip(s.tolist(), a.tolist(), w.tolist(), strict=False)]


def test_group_codes_with_widely_spread_second_keys():
    rng = np.random.default_rng(5)
    first, second = rng.integers(0, 50, 300), rng.integers(0, 10**6, 300) * 7
    codes, (u1, u2) = group_codes(first, second)
    expected = sorted(set(zip(first.tolist(), second.tolist(), strict=False)))
    assert list(zip(u1.tolist(), u2.tolist(), strict=False)) == expected
    assert [expected[c] for c in codes] == list(zip(first.tolist(), second.tolist(), strict=False))


def test_group_codes_of_sorted_and_string_keys():
    codes, (keys,) = group_codes(np.array([5, 5, 10**12, 10**13]))
    assert codes.tolist() == [0, 0, 1, 2] and keys.tolist() == [5, 10**12, 10**13]
    # Runs of equal sparse keys, a key coming back in a later run.
    runs = np.repeat(np.array([5, 3, 5, 1]) * 10**12, [4, 5, 3, 6])
    codes, (keys,) = group_codes(runs)
    assert keys.tolist() == [10**12, 3 * 10**12, 5 * 10**12]
    assert codes.tolist() == [2] * 4 + [1] * 5 + [2] * 3 + [0] * 6
    codes, (keys,) = group_codes(np.array(["b", "a", "b"]))
    assert codes.tolist() == [1, 0, 1] and keys.tolist() == ["a", "b"]


@pytest.mark.parametrize("sparse_ids", [False, True])
def test_labels_and_scores_match_loop(sparse_ids):
    rng = np.random.default_rng(1)
    s, a, w, p = random_judgments(rng, sparse_ids=sparse_ids)
    votes = defaultdict(list)
    for si, ai, pi in zip(s.tolist(), a.tolist(), p.tolist(), strict=False):
        votes[si, ai].append(pi)
    summaries, acus, label, present_votes, total = acu_labels(s, a, p)
    for key, lab, pv, tv in zip(
        zip(summaries.tolist(), acus.tolist(), strict=False), label, present_votes, total, strict=False
    ):
        assert lab == (2 * sum(votes[key]) > len(votes[key]))  # a tie is not present
        assert (pv, tv) == (sum(votes[key]), len(votes[key]))

    keys, scores = acu_scores_by_summary(s, a, p)
    per_summary = defaultdict(list)
    for (si, _), v in votes.items():
        per_summary[si].append(2 * sum(v) > len(v))
    assert keys.tolist() == sorted(per_summary)
    assert np.allclose(scores, [np.mean(per_summary[k]) for k in keys.tolist()], rtol=0, atol=1e-15)

    sizes = {k: 10 + k % 3 for k in per_summary}  # |A| larger than the judged ACUs
    _, scores = acu_scores_by_summary(s, a, p, acu_counts=np.array([sizes[x] for x in s.tolist()]))
    assert np.allclose(scores, [sum(per_summary[k]) / sizes[k] for k in keys.tolist()], rtol=0, atol=1e-15)


def test_realsumm_ground_truth():
    path = REALSUMM / "labels" / "abs_bart_out.label"
    if not path.exists():
        pytest.skip(f"REALSumm sample not found at {REALSUMM}")
    rows = [
        (doc, unit, int(value))
        for doc, line in enumerate(path.read_text().splitlines())
        for unit, value in enumerate(line.split("\t"))
    ]
    s, a, p = (np.array(col) for col in zip(*rows, strict=False))
    _, scores = acu_scores_by_summary(s, a, p)
    assert len(scores) == 100
    assert scores.mean() == pytest.approx(0.48349483849483854, rel=1e-15)


@pytest.mark.parametrize("sparse_ids", [False, True])
def test_latest_per_worker_keeps_each_workers_last_judgment_of_a_pair(sparse_ids):
    """A worker who judged a pair in two rounds: only the row with the largest id counts."""
    from hits.latest_labels import latest_per_worker

    rng = np.random.default_rng(3)
    s, a, w, p = random_judgments(rng, sparse_ids=sparse_ids)
    again = rng.random(len(s)) < 0.3  # a second round: some rows judged again, later ids
    s2, a2, w2 = (np.concatenate([x, x[again]]) for x in (s, a, w))
    ids = rng.permutation(len(s2)) * 7 + 11
    ids[len(s) :] = ids.max() + 1 + rng.permutation(int(again.sum()))  # the repeats are later
    keep = latest_per_worker(s2, a2, w2, ids)
    last = {}
    for i, key in enumerate(zip(s2.tolist(), a2.tolist(), w2.tolist(), strict=True)):
        if key not in last or ids[i] > ids[last[key]]:
            last[key] = i
    assert sorted(np.flatnonzero(keep).tolist()) == sorted(last.values())
    assert keep[len(s) :].all() and not keep[: len(s)][again].any()
    assert latest_per_worker(s, a, w, np.arange(len(s))).all()  # one row each: nothing dropped
    assert latest_per_worker(s[:0], a[:0], w[:0], s[:0]).size == 0
