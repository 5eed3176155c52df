"""Holm's (1979) step-down adjustment and its use over the family of system pairs (the pure core):
a hand-worked example, an independent brute force (the smallest level at which the step-down
procedure rejects), statsmodels when installed, and the edges (NaN, ties, one pair, the cap)."""

import numpy as np
import pytest

from scoring.stats.bootstrap import paired_bootstrap
from scoring.stats.multiple_testing import holm, pairwise_holm

pytestmark = pytest.mark.portable


def step_down_rejects(p, alpha):
    """Holm's procedure as the paper states it, at level ``alpha``: walk the p-values from the
    smallest, reject while p(r) <= alpha / (K - r + 1), stop at the first that is not."""
    defined = [(v, i) for i, v in enumerate(p) if not np.isnan(v)]
    k = len(defined)
    rejected = set()
    for r, (v, i) in enumerate(sorted(defined)):
        if v <= alpha / (k - r) * (1 + 1e-12):
            rejected.add(i)
        else:
            break
    return rejected


def brute_force_holm(p):
    """Each adjusted p as the smallest level in [0, 1] at which the step-down procedure rejects
    that hypothesis (1 if none does): levels tried are every (K - r + 1) p(r) and 1."""
    defined = sorted(v for v in p if not np.isnan(v))
    k = len(defined)
    levels = sorted({min(1.0, (k - r) * v) for r, v in enumerate(defined)} | {1.0})
    out = []
    for i, v in enumerate(p):
        if np.isnan(v):
            out.append(np.nan)
            continue
        out.append(next((a for a in levels if i in step_down_rejects(p, a)), 1.0))
    return np.array(out)


def test_a_hand_worked_family():
    # Sorted: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> 0.06 (monotone).
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_capped_at_one_and_never_below_the_raw_p():
    assert holm([0.6, 0.7]) == pytest.approx([1.0, 1.0])
    assert holm([0.3, 0.6]) == pytest.approx([0.6, 0.6])
    rng = np.random.default_rng(3)
    p = rng.random(40) ** 3
    adjusted = holm(p)
    assert (adjusted >= p).all() and (adjusted <= 1).all()
    order = np.argsort(p)
    assert (np.diff(adjusted[order]) >= 0).all()  # monotone in p


def test_undefined_p_values_are_no_members_of_the_family_and_stay_undefined():
    adjusted = holm([0.01, np.nan, 0.04])
    assert np.isnan(adjusted[1])
    assert adjusted[[0, 2]] == pytest.approx([0.02, 0.04])  # K = 2, not 3
    assert np.isnan(holm([np.nan, np.nan])).all() and holm([]).shape == (0,)


def test_ties_get_the_same_adjusted_value_whatever_their_order():
    assert holm([0.02, 0.02, 0.5]) == pytest.approx([0.06, 0.06, 0.5])
    assert holm([0.5, 0.02, 0.02]) == pytest.approx([0.5, 0.06, 0.06])


def test_a_single_p_value_is_its_own_adjustment():
    assert holm([0.03]) == pytest.approx([0.03])


def test_bad_input_is_refused_with_a_message():
    with pytest.raises(ValueError, match="one-dimensional"):
        holm([[0.1, 0.2]])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.1, 1.2])
    with pytest.raises(ValueError, match="square"):
        pairwise_holm([0.1, 0.2])


@pytest.mark.parametrize("seed", range(25))
def test_agrees_with_the_step_down_procedure_brute_force(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 12))
    p = np.round(rng.random(k) ** 2, 2)  # rounding makes ties
    p[rng.random(k) < 0.2] = np.nan
    np.testing.assert_allclose(holm(p), brute_force_holm(p), rtol=1e-12, atol=1e-12)


def test_agrees_with_statsmodels():
    from statsmodels.stats import multitest  # a test requirement (requirements-dev.txt)

    rng = np.random.default_rng(7)
    for _ in range(20):
        p = np.round(rng.random(int(rng.integers(1, 30))) ** 3, 3)
        expected = multitest.multipletests(p, method="holm")[1]
        np.testing.assert_allclose(holm(p), expected, rtol=1e-12, atol=1e-12)


def test_pairwise_a_hand_worked_matrix():
    """Three systems. Two-sided p of each pair: (0,1) 0.02, (0,2) 0.004, (1,2) 0.6; Holm over
    3 pairs: 0.004 x 3 = 0.012, 0.02 x 2 = 0.04, 0.6 x 1 = 0.6. The direction the data do
    not favour reads 1."""
    nan = np.nan
    p = np.array([[nan, 0.01, 0.002], [0.99, nan, 0.3], [0.998, 0.7, nan]])
    adjusted, family = pairwise_holm(p)
    assert family == 3
    expected = np.array([[nan, 0.04, 0.012], [1.0, nan, 0.6], [1.0, 1.0, nan]])
    np.testing.assert_allclose(adjusted, expected, rtol=1e-12)


def test_pairwise_a_pair_without_a_test_is_left_out_of_the_family():
    nan = np.nan
    p = np.full((3, 3), nan)
    p[0, 1], p[1, 0] = 0.01, 0.99
    p[0, 2], p[2, 0] = 0.02, 0.98
    adjusted, family = pairwise_holm(p)  # (1, 2) share no document
    assert family == 2
    assert adjusted[0, 1] == pytest.approx(0.04) and adjusted[0, 2] == pytest.approx(0.04)  # 0.02 x 2, 0.04 x 1
    assert np.isnan(adjusted[1, 2]) and np.isnan(adjusted[2, 1]) and np.isnan(np.diag(adjusted)).all()


def test_pairwise_one_pair_is_the_two_sided_p():
    adjusted, family = pairwise_holm([[np.nan, 0.02], [0.98, np.nan]])
    assert family == 1 and adjusted[0, 1] == pytest.approx(0.04) and adjusted[1, 0] == 1.0


def test_pairwise_on_the_paired_bootstrap_agrees_with_the_brute_force_over_pairs():
    """Five systems, 10 pairs, on real paired bootstrap p-values (identical systems included:
    p = 1 both ways): each pair's favoured cell is the brute-force Holm of the two-sided p."""
    rng = np.random.default_rng(11)
    scores = rng.normal(np.linspace(0.3, 0.5, 5), 0.15, (40, 5))
    scores[:, 4] = scores[:, 3]
    p = paired_bootstrap(scores, n_resamples=2000, rng=0)
    adjusted, family = pairwise_holm(p)
    a, b = np.triu_indices(5, k=1)
    two_sided = np.minimum(1, 2 * np.minimum(p[a, b], p[b, a]))
    expected = brute_force_holm(two_sided)
    favoured = np.where(p[a, b] <= p[b, a], adjusted[a, b], adjusted[b, a])
    assert family == 10
    np.testing.assert_allclose(favoured, expected, rtol=1e-12)
    assert adjusted[3, 4] == adjusted[4, 3] == 1.0
    off = ~np.eye(5, dtype=bool)
    assert (adjusted[off] >= np.minimum(1, 2 * p[off]) - 1e-12).all() and (adjusted[off] <= 1).all()


def test_the_paired_tests_draw_enough_resamples_for_the_holm_family_to_resolve():
    """10,000 resamples leave REALSumm's 300 pairs no adjusted p below 0.06 (2 x 300 / 10,000):
    no cell could read significant. The tests draw enough that the bound is half the level."""
    from scoring.stats.multiple_testing import FAMILY_LEVEL, family_resamples

    assert family_resamples(300, 10_000) == 24_000
    assert 2 * 300 / family_resamples(300, 10_000) <= FAMILY_LEVEL / 2
    assert family_resamples(6, 10_000) == 10_000  # a small family: the run's own resamples
    assert family_resamples(300, 50_000) == 50_000  # never fewer than asked for
    assert family_resamples(0, 200) == 200
    for pairs in (1, 3, 45, 190, 300, 1225):
        drawn = family_resamples(pairs, 0)
        assert 2 * pairs / drawn <= FAMILY_LEVEL / 2 < 2 * pairs / (drawn - 1)
