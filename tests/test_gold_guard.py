"""The gold guard's numerical part (hits/allocation/gold_guard.py, issue 43): the batch's rule replayed on
its gold answers in the order they arrived, against fixed places' majority, both against the experts."""

import numpy as np
import pytest
from scipy import stats

from hits.allocation.gold_guard import (
    MIN_PAIRS,
    arrival_rank,
    compare,
    first_majority,
    look_level,
    replay_hits,
    replay_pairs,
)
from hits.allocation.policy import ADAPTIVE, Policy

pytestmark = pytest.mark.portable

NAN = float("nan")


def crowd_rows(answers: list[list[bool]]):
    """Rows in arrival order, round by round (each item's first answer, then each item's second, ...)."""
    items, said = [], []
    for k in range(max(len(a) for a in answers)):
        for i, a in enumerate(answers):
            if k < len(a):
                items.append(i)
                said.append(a[k])
    return np.array(items), np.array(said)


def pairs_check(answers, gold, prior, threshold=0.725, first=1, most=5):
    items, said = crowd_rows(answers)
    nan = np.full(items.size, NAN)  # no estimates: the fallback 0.8 / 0.8 workers
    n = len(answers)
    label, bought = replay_pairs(items, said, nan, nan, prior, threshold, first, most, n)
    fixed_label, counted = first_majority(items, said, 3, n)
    return compare(label, fixed_label, gold, bought, counted, 3), label, bought


# A judge prior of 0.95 on a pair the experts call absent, whose first worker says "present" and the next
# two "absent": the rule settles on the first answer (0.95 and one "present": 0.987, the crowd 0.8 agrees),
# wrongly; fixed-3's majority is right.
MISLED = [True, False, False]
# All three right: both right.
AGREED_ABSENT = [False, False, False]


def test_a_rule_worse_on_gold_than_fixed_places_triggers():
    answers = [MISLED] * 12 + [AGREED_ABSENT] * 18
    gold = [False] * 30
    check, label, bought = pairs_check(answers, gold, prior=0.95)
    assert label[:12].all() and not label[12:].any()
    # one answer settles the misled pairs; the prior's 0.95 against an "absent" (0.83, its crowd 0.2) asks on
    assert bought.tolist() == [1] * 12 + [3] * 18
    assert (check.pairs, check.rule_only, check.fixed_only) == (30, 0, 12)
    assert check.rule_accuracy == pytest.approx(18 / 30) and check.fixed_accuracy == 1.0
    assert (check.rule_judgments, check.fixed_judgments) == (12 + 54, 90)
    assert check.p_value == pytest.approx(0.5**12)
    # the bound: Clopper-Pearson upper bound of the share the rule wins (0 of 12) at the first look's
    # level (97.5%: 30 gold pairs), 1 - 0.025 ** (1 / 12)
    assert check.level == 0.975
    share = 1 - 0.025 ** (1 / 12)
    assert check.upper == pytest.approx(12 / 30 * (2 * share - 1))
    assert check.upper < 0 and check.worse
    assert "60.0%" in check.sentence() and "100.0%" in check.sentence() and "p = 0.000244" in check.sentence()


def test_a_rule_as_good_as_fixed_places_on_gold_does_not_trigger():
    # as many pairs where the prior saves a right label fixed places get wrong (present, its first worker
    # right, the next two wrong) as pairs where it misleads: the rule is no worse, only cheaper
    answers = [MISLED] * 12 + [[True, False, False]] * 12 + [AGREED_ABSENT] * 16
    gold = [False] * 12 + [True] * 12 + [False] * 16
    check, _, _ = pairs_check(answers, gold, prior=0.95)
    assert (check.rule_only, check.fixed_only) == (12, 12)
    assert check.rule_accuracy == check.fixed_accuracy
    assert check.p_value == pytest.approx(stats.binom.cdf(12, 24, 0.5))
    assert check.upper > 0 and not check.worse
    # and a neutral prior with every answer right: no discordant pair at all
    check, _, _ = pairs_check([AGREED_ABSENT] * 30, [False] * 30, prior=0.5)
    assert (check.rule_only, check.fixed_only, check.p_value) == (0, 0, 1.0) and not check.worse


def test_too_little_gold_does_not_trigger():
    # 6 pairs all lost by the rule: the sign test alone would say p = 1/64, but 6 gold pairs decide nothing
    check, _, _ = pairs_check([MISLED] * 6, [False] * 6, prior=0.95)
    assert check.fixed_only == 6 and check.p_value < 0.05 and check.upper < 0
    assert check.pairs < MIN_PAIRS and not check.worse
    # 4 lost of 30 (p = 1/16): not enough either
    check, _, _ = pairs_check([MISLED] * 4 + [AGREED_ABSENT] * 26, [False] * 30, prior=0.95)
    assert check.p_value == pytest.approx(1 / 16) and not check.worse


def test_the_five_percent_is_spent_over_looks_at_doubling_gold():
    assert [look_level(n) for n in (20, 39, 40, 79, 80, 160, 1000)] == pytest.approx(
        [0.975, 0.975, 0.9875, 0.9875, 0.99375, 0.996875, 1 - 0.05 / 2**6]
    )
    assert sum(1 - look_level(MIN_PAIRS * 2**j) for j in range(30)) < 0.05
    # 5 pairs lost of 30 (p = 1/32): below 5%, not below the first look's 2.5%, so no fall-back
    check, _, _ = pairs_check([MISLED] * 5 + [AGREED_ABSENT] * 25, [False] * 30, prior=0.95)
    assert check.p_value == pytest.approx(1 / 32) and not check.worse
    # 6 of 30 (1/64): it falls back
    check, _, _ = pairs_check([MISLED] * 6 + [AGREED_ABSENT] * 24, [False] * 30, prior=0.95)
    assert check.worse


def test_the_bound_is_below_zero_exactly_when_the_exact_test_rejects():
    for b in range(0, 12):
        for c in range(0, 16):
            n = max(MIN_PAIRS, b + c + 3)
            rule = [True] * b + [False] * c + [True] * (n - b - c)
            fixed = [False] * b + [True] * c + [True] * (n - b - c)
            check = compare(rule, fixed, [True] * n, [1] * n, [3] * n, 3)
            assert (check.upper < 0) == (check.p_value < 1 - check.level) == check.worse, (b, c)


def test_the_replay_asks_more_while_the_rule_leaves_a_pair_open_and_stops_when_answers_run_out():
    # neutral prior, fallback workers, threshold 0.9: one answer (0.8) is open, two agreeing (16/17) settle,
    # two disagreeing (0.5) read the third; a pair whose answers run out takes its posterior there
    answers = [[True, True, False], [True, False, False], [False, True, True], [True]]
    items, said = crowd_rows(answers)
    nan = np.full(items.size, NAN)
    label, bought = replay_pairs(items, said, nan, nan, 0.5, 0.9, 1, 5, 4)
    assert bought.tolist() == [2, 3, 3, 1]
    assert label.tolist() == [True, False, True, True]
    # the rule's first places: never fewer than it starts with
    _, bought = replay_pairs(items, said, nan, nan, 0.5, 0.9, 3, 5, 4)
    assert bought.tolist() == [3, 3, 3, 1]
    # a pair settled by a prior its crowd contradicts stays open (open_pairs with the crowd)
    label, bought = replay_pairs(*crowd_rows([[False, False, False]]), [NAN] * 3, [NAN] * 3, 0.99, 0.725, 1, 5, 1)
    assert bought.tolist() == [3] and label.tolist() == [True]


def test_arrival_order_and_fixed_places_majority():
    assert arrival_rank([2, 0, 2, 1, 0, 2]).tolist() == [0, 0, 1, 0, 1, 2]
    # the first three answers only; a tie (fewer answers) is not present
    label, counted = first_majority([0, 0, 0, 0, 1, 1], [False, True, True, False, True, False], 3, 2)
    assert label.tolist() == [True, False] and counted.tolist() == [3, 2]


def test_the_hit_level_rule_is_replayed_per_hit_with_its_estimates():
    # two HITs of 4 ACUs; workers 0.95 / 0.95: one answer brings each HIT's share sd to
    # sqrt(4 * 0.95 * 0.05) / 4 = 0.109, settled at max_sd 0.2, so each HIT stops after its first answer
    policy = Policy(ADAPTIVE, 1, 5, 0.9, 0.2)
    hit_of_item = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    first = [True, True, False, False, True, False, True, False]
    items = np.tile(np.arange(8), 3)
    said = np.concatenate([first, np.logical_not(first), np.logical_not(first)])
    sure = np.full(items.size, 0.95)
    label, bought = replay_hits(hit_of_item, items, said, sure, sure, 0.5, policy, 8)
    assert bought.tolist() == [1] * 8 and label.tolist() == first
    fixed_label, counted = first_majority(items, said, 3, 8)
    check = compare(label, fixed_label, np.logical_not(first), bought, counted, 3)
    assert (check.rule_correct, check.fixed_correct, check.fixed_only) == (0, 8, 8)
    assert not check.worse  # 8 pairs: too little gold
    # the per-ACU rule at 0.9 with fallback workers: one answer (0.8) never settles, two agreeing do
    label, bought = replay_hits(
        hit_of_item,
        items,
        said,
        np.full(items.size, NAN),
        np.full(items.size, NAN),
        0.5,
        Policy(ADAPTIVE, 1, 5, 0.9),
        8,
    )
    assert bought.tolist() == [3] * 8 and label.tolist() == np.logical_not(first).tolist()


def test_the_hit_level_rule_replayed_labels_a_split_by_its_posterior_as_the_rounds_scores_do():
    # one HIT of 2 ACUs at 2 places: a reliable worker (0.95 / 0.95) says both present, a shaky one
    # (0.6 / 0.6) the first absent. The majority's tie would be absent; the posterior (odds 19 * 2/3) is
    # present, the label the round publishes (scoring/runs/pairs.py)
    items, said = np.array([0, 1, 0, 1]), np.array([True, True, False, True])
    estimates = np.array([0.95, 0.95, 0.6, 0.6])
    label, bought = replay_hits(np.array([0, 0]), items, said, estimates, estimates, 0.5, Policy(ADAPTIVE, 2, 2), 2)
    assert label.tolist() == [True, True] and bought.tolist() == [2, 2]
    fixed_label, _ = first_majority(items, said, 2, 2)
    assert fixed_label.tolist() == [False, True]
    # the batch's prior counts too: at 0.05 (odds 1/19) the same answers leave the first ACU absent
    label, _ = replay_hits(np.array([0, 0]), items, said, estimates, estimates, 0.05, Policy(ADAPTIVE, 2, 2), 2)
    assert label.tolist() == [False, True]
