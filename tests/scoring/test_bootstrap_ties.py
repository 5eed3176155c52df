"""Issue 12, defect 3: a difference that is exactly zero on every resample is never significant."""

import numpy as np
import pytest

from scoring.stats.bootstrap import paired_bootstrap


def test_identical_systems_are_not_significant_either_way():
    one_document = np.array([[0.6, 0.6, 0.6]])
    p = paired_bootstrap(one_document, n_resamples=1000, rng=0)
    off = ~np.eye(3, dtype=bool)
    assert (p[off] == 1.0).all()
    base = np.tile([1 / 9, 4 / 9, 7 / 9], 4)
    p = paired_bootstrap(np.column_stack([base, base.copy()]), n_resamples=500, rng=0)
    assert p[0, 1] == 1.0 and p[1, 0] == 1.0


def test_a_system_that_never_wins_has_p_one():
    a = np.array([0.5, 0.5, 0.5, 0.5])
    b = np.array([0.5, 0.5, 0.5, 0.75])  # B >= A on every document
    p = paired_bootstrap(np.column_stack([a, b]), n_resamples=2000, rng=1)
    assert p[0, 1] == 1.0  # "A better than B": never
    assert p[1, 0] == pytest.approx((3 / 4) ** 4, abs=0.03)  # resamples without document 4 are ties
