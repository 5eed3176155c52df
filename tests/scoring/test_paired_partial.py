"""Paired tests on partial data (bootstrap.paired_bootstrap_partial) against a brute force per pair.

The scores are multiples of 1/8, so every resample sum is exact and "not above 0" needs no
tolerance: the brute force reads the test's definition off each pair's own shared documents.
"""

import numpy as np
import pytest

from scoring.stats import bootstrap
from scoring.stats.bootstrap import paired_bootstrap, paired_bootstrap_partial, resample_indices

RESAMPLES = 700  # two chunks of resample_indices (512 + 188)


def coverage_matrix(seed=0):
    """24 documents x 7 systems in eighths. Systems 0-2 on every document (1 a copy of 0), 3 on
    documents 0-15, 4 on 8-23, 5 on 0-3 and 20-23, 6 on 16-19: document sets of 24, 16 (two
    different sets), 8 (two), 4 (several) documents, and pairs sharing none (3-6, 5-6)."""
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 9, (24, 7)) / 8
    scores[:, 1] = scores[:, 0]
    keep = {3: range(0, 16), 4: range(8, 24), 5: [0, 1, 2, 3, 20, 21, 22, 23], 6: range(16, 20)}
    for system, docs in keep.items():
        scores[np.setdiff1d(np.arange(24), list(docs)), system] = np.nan
    return scores


def brute_force(scores, n_resamples, seed):
    """(p, ties) pair by pair: one draw of indices per shared-document count, in the order the
    counts first appear over the pairs (a < b); index j picks the pair's j-th shared document."""
    m = scores.shape[1]
    judged = ~np.isnan(scores)
    pairs = [(a, b) for a in range(m) for b in range(a + 1, m)]
    docs = {pair: np.flatnonzero(judged[:, pair[0]] & judged[:, pair[1]]) for pair in pairs}
    rng = np.random.default_rng(seed)
    draws = {}
    for pair in pairs:
        size = len(docs[pair])
        if size and size not in draws:
            draws[size] = np.concatenate(list(resample_indices(size, n_resamples, rng)))
    p, ties = np.full((m, m), np.nan), np.full((m, m), np.nan)
    for a, b in pairs:
        if len(docs[a, b]) == 0:
            continue
        diff = scores[docs[a, b], a] - scores[docs[a, b], b]
        means = np.array([diff[row].mean() for row in draws[len(docs[a, b])]])
        p[a, b] = np.mean(means <= 0)  # A - B not above 0: a tie counts against A
        p[b, a] = np.mean(means >= 0)  # B - A not above 0
        ties[a, b] = ties[b, a] = np.mean(means == 0)
    return p, ties


@pytest.mark.parametrize(
    "gather, block",
    [(bootstrap.GATHER_COLUMNS, bootstrap.MAX_BLOCK_CELLS), (0, bootstrap.MAX_BLOCK_CELLS), (0, 1), (100, 1)],
    ids=["shipped", "products", "one-column-products", "gathers"],
)
def test_every_pair_is_resampled_over_its_own_shared_documents(monkeypatch, gather, block):
    monkeypatch.setattr(bootstrap, "GATHER_COLUMNS", gather)
    monkeypatch.setattr(bootstrap, "MAX_BLOCK_CELLS", block)
    scores = coverage_matrix()
    p, n = paired_bootstrap_partial(scores, n_resamples=RESAMPLES, rng=11)
    expected, _ = brute_force(scores, RESAMPLES, 11)
    assert np.array_equal(p, expected, equal_nan=True)
    assert n[3, 4] == 8 and n[0, 3] == n[0, 4] == 16 and n[4, 5] == 4 and n[3, 6] == 0
    assert np.isnan(p[3, 6]) and np.isnan(p[6, 5])


def test_both_directions_count_ties_against_the_claim():
    scores = coverage_matrix(seed=3)
    p, _ = paired_bootstrap_partial(scores, n_resamples=RESAMPLES, rng=5)
    _, ties = brute_force(scores, RESAMPLES, 5)
    defined = ~np.isnan(ties)
    # p(A better) + p(B better) = 1 + share of tied resamples, in every pair.
    assert np.allclose((p + p.T)[defined], 1 + ties[defined], rtol=0, atol=1e-12)
    assert (ties[defined] > 0).sum() >= 10  # ties are there, beyond the identical pair
    assert p[0, 1] == p[1, 0] == 1.0  # identical systems: every resample a tie


def test_complete_data_gives_paired_bootstraps_p_values():
    scores = np.random.default_rng(8).random((40, 6))
    p, n = paired_bootstrap_partial(scores, n_resamples=1500, rng=2)
    assert np.array_equal(p, paired_bootstrap(scores, n_resamples=1500, rng=2), equal_nan=True)
    assert (n == 40).all()


def test_the_same_seed_gives_the_same_p_values():
    scores = coverage_matrix(seed=4)
    first, _ = paired_bootstrap_partial(scores, n_resamples=RESAMPLES, rng=9)
    again, _ = paired_bootstrap_partial(scores, n_resamples=RESAMPLES, rng=np.random.default_rng(9))
    assert np.array_equal(first, again, equal_nan=True)
