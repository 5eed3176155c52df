"""The gold guard of an adaptive batch (issue 43: adaptive allocation "never pays for fewer judgments
with lower agreement"). Pure numpy and scipy, no Django.

An adaptive batch's gold HITs are answered at the batch's fixed places (hits/services/batches.py
`first_places`: a gold HIT gets the assignments per HIT and no follow-up, no extra place). So on each
gold pair the batch holds what fixed allocation would have bought, in the order the answers arrived,
and the experts' label. Two labels are read off those answers, paired per pair:

- the batch's own rule, replayed (`replay_pairs` for a `pairs` batch, `replay_hits` for the HIT-level
  `adaptive` policy): the first answer(s) (the rule's first places), settled or not by the rule with
  the pair's prior and the workers' current estimates; if not, the next answer; and so on until the
  rule settles, the rule's maximum is reached or the gold answers run out (then the label with all of
  them). It gives the label the rule would have given with the judgments it would have bought: the
  posterior of the answers read above 0.5, as the round's scores label it (scoring/runs/pairs.py);
- fixed places' label: the majority of the first `fixed` answers (a tie is not present).

`compare` puts both against the gold label. The test is the exact one-sided McNemar test (a sign test
on the discordant pairs): of the m pairs where exactly one of the two is right, b where the rule is
and c where fixed places are; under "the rule is not less accurate" b is at least Binomial(m, 1/2), so
p = P(Binomial(m, 1/2) <= b). Its bound: the exact one-sided Clopper-Pearson upper bound q of the
share of the discordant pairs the rule wins, so the rule's accuracy minus fixed places' is at most
m / n * (2q - 1) at the look's level (n gold pairs compared). The bound is below 0 exactly when p is
below 1 minus that level: then the rule is worse on gold and the batch stops saving
(hits/allocation/guard.py). Fewer than MIN_PAIRS gold pairs decide nothing.

The batch is checked again at every refit, so the 5% (1 - LEVEL) is spent over its looks (`look_level`,
Bonferroni): the look at MIN_PAIRS to 2 * MIN_PAIRS gold pairs tests at 2.5%, up to 4 * MIN_PAIRS at
1.25%, and so on, halving each time the gold doubles; the looks at different sizes together fall back
wrongly at most 5% of the time (the repeated checks within one size, on evidence that only grows, add a
little). At 95% on every look, a simulated batch that was not worse at its end fell back after 13
discordant pairs (bench/allocation_bench.py, documents 0-49). Caveats: the pairs of one gold HIT share
workers and a summary, so they are not quite independent; the workers' estimates the replay reads are
fitted on these gold answers too (anchored to them), which flatters the rule a little (its label reads
them, fixed places' majority does not); the replay stops
at the fixed answers a gold pair has, so a rule that would buy more is not credited for it. A wrong
fall-back only costs money (fixed places), never agreement.
"""

from dataclasses import dataclass

import numpy as np
from scipy import stats

from hits.allocation.policy import Policy, open_pairs, pair_posteriors, settled

LEVEL = 0.95
# Below this many gold pairs compared (each with at least the fixed answers), nothing is decided.
MIN_PAIRS = 20


@dataclass(frozen=True)
class GoldCheck:
    """The rule against fixed places on the batch's gold pairs (module docstring)."""

    pairs: int
    fixed: int  # the fixed places compared against
    rule_correct: int
    fixed_correct: int
    rule_only: int  # discordant: the rule right, fixed places wrong
    fixed_only: int  # discordant: fixed places right, the rule wrong
    rule_judgments: int
    fixed_judgments: int
    p_value: float
    upper: float  # upper bound (at `level`) of the rule's accuracy minus fixed places'
    level: float  # this look's level (look_level)
    worse: bool

    @property
    def rule_accuracy(self) -> float:
        return self.rule_correct / self.pairs if self.pairs else float("nan")

    @property
    def fixed_accuracy(self) -> float:
        return self.fixed_correct / self.pairs if self.pairs else float("nan")

    def sentence(self) -> str:
        """The decision as the lead reads it on the batch page."""
        return (
            f"On {self.pairs} gold pairs the batch's rule, replayed on the gold answers as they arrived, agreed "
            f"with the experts on {self.rule_accuracy:.1%} of them with {self.rule_judgments} judgments; "
            f"{self.fixed} places each agreed on {self.fixed_accuracy:.1%} with {self.fixed_judgments}. "
            f"The rule's accuracy minus fixed places' is at most {100 * self.upper:+.1f} points "
            f"(one-sided {self.level:.2%} bound, this look's share of 95%, exact McNemar test on {self.rule_only + self.fixed_only} pairs where "
            f"they differ: {self.rule_only} won by the rule, {self.fixed_only} by fixed places, p = {self.p_value:.3g})."
        )

    def as_dict(self) -> dict:
        return {
            "pairs": self.pairs,
            "fixed": self.fixed,
            "rule_accuracy": round(self.rule_accuracy, 4),
            "fixed_accuracy": round(self.fixed_accuracy, 4),
            "rule_only": self.rule_only,
            "fixed_only": self.fixed_only,
            "rule_judgments": self.rule_judgments,
            "fixed_judgments": self.fixed_judgments,
            "p_value": self.p_value,
            "upper": round(self.upper, 4),
            "level": self.level,
        }


def look_level(pairs: int) -> float:
    """The level of a look at this many gold pairs (module docstring): 1 - 0.05 / 2 ** j at the j-th
    doubling of MIN_PAIRS (j = 1 from MIN_PAIRS pairs), so the looks' errors sum to at most 1 - LEVEL."""
    look = 1 + max(0, int(np.floor(np.log2(max(pairs, 1) / MIN_PAIRS))))
    return 1 - (1 - LEVEL) / 2**look


def arrival_rank(items) -> np.ndarray:
    """Each row's place among its item's rows (0: the item's first answer), rows in arrival order."""
    items = np.asarray(items, dtype=np.int64)
    order = np.argsort(items, kind="stable")
    sorted_items = items[order]
    starts = np.flatnonzero(np.r_[True, sorted_items[1:] != sorted_items[:-1]]) if items.size else np.zeros(0, int)
    sizes = np.diff(np.append(starts, items.size))
    rank = np.empty(items.size, dtype=np.int64)
    rank[order] = np.arange(items.size) - np.repeat(starts, sizes)
    return rank


def first_majority(items, said, fixed: int, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """Fixed places' label of each item (rows in arrival order): the majority of its first `fixed`
    answers, a tie not present; and how many answers that read."""
    items, said = np.asarray(items, dtype=np.int64), np.asarray(said, dtype=bool)
    keep = arrival_rank(items) < fixed
    counted = np.bincount(items[keep], minlength=n_items)
    present = np.bincount(items[keep], weights=said[keep], minlength=n_items)
    return 2 * present > counted, counted


def replay_pairs(items, said, sensitivity, specificity, prior, threshold: float, first: int, most: int, n_items: int):
    """A `pairs` batch's rule replayed per item (rows in arrival order; module docstring): after its
    first `first` answers, and one more at a time up to `most`, an item stops once it is not open
    (hits.allocation.policy.open_pairs with its crowd) or its answers run out. Returns (label: the
    posterior above 0.5 where it stopped, judgments it bought)."""
    items, said = np.asarray(items, dtype=np.int64), np.asarray(said, dtype=bool)
    sens, spec = np.asarray(sensitivity, dtype=float), np.asarray(specificity, dtype=float)
    prior = np.stack([np.broadcast_to(np.asarray(prior, dtype=float), n_items), np.full(n_items, 0.5)])
    rank, available = arrival_rank(items), np.bincount(items, minlength=n_items)
    label, bought = np.zeros(n_items, dtype=bool), np.zeros(n_items, dtype=np.int64)
    for k in range(max(1, first), max(1, first, most) + 1):
        keep = rank < k
        posterior, crowd = pair_posteriors(items[keep], said[keep], sens[keep], spec[keep], prior, n_items=n_items)
        judged = np.minimum(available, k)
        done = (bought == 0) & (~open_pairs(posterior, judged, threshold, crowd=crowd) | (available <= k) | (k >= most))
        label[done], bought[done] = posterior[done] > 0.5, judged[done]
    return label, bought


def replay_hits(hit_of_item, items, said, sensitivity, specificity, prior, policy: Policy, n_items: int):
    """The HIT-level `adaptive` rule replayed per HIT (each answer of a HIT's assignment covers its
    items; rows in arrival order): after `policy.min_places` answers, and one more at a time up to
    `policy.max_places`, a HIT stops once it is settled (hits.allocation.policy.hit_settled: every
    item at the threshold, or the sd of its ACU share at most max_sd) or its answers run out. Returns
    per item (label: the posterior of the answers read above 0.5, as the round's labels are; judgments)."""
    items, said = np.asarray(items, dtype=np.int64), np.asarray(said, dtype=bool)
    hit_of_item = np.asarray(hit_of_item, dtype=np.int64)
    sens, spec = np.asarray(sensitivity, dtype=float), np.asarray(specificity, dtype=float)
    hits = int(hit_of_item.max()) + 1 if hit_of_item.size else 0
    rank = arrival_rank(items)
    available = np.bincount(items, minlength=n_items)
    hit_available = np.full(hits, np.iinfo(np.int64).max)
    np.minimum.at(hit_available, hit_of_item, available)
    sizes = np.bincount(hit_of_item, minlength=hits)
    stop = np.zeros(hits, dtype=np.int64)
    for k in range(policy.min_places, policy.max_places + 1):
        keep = rank < k
        p = pair_posteriors(items[keep], said[keep], sens[keep], spec[keep], prior, n_items=n_items)
        if policy.max_sd is not None:
            ok = np.sqrt(np.bincount(hit_of_item, weights=p * (1 - p), minlength=hits)) / np.maximum(sizes, 1)
            hit_ok = ok <= policy.max_sd
        else:
            hit_ok = np.bincount(hit_of_item, weights=~settled(p, policy.threshold), minlength=hits) == 0
        done = (stop == 0) & (hit_ok | (hit_available <= k) | (k >= policy.max_places))
        stop[done] = np.minimum(hit_available[done], k)
    bought = stop[hit_of_item]
    keep = rank < bought[items]
    return pair_posteriors(items[keep], said[keep], sens[keep], spec[keep], prior, n_items=n_items) > 0.5, bought


def compare(rule_label, fixed_label, gold, rule_judgments, fixed_judgments, fixed: int) -> GoldCheck:
    """The rule's labels against fixed places', paired per gold pair (module docstring)."""
    gold = np.asarray(gold, dtype=bool)
    rule_right = np.asarray(rule_label, dtype=bool) == gold
    fixed_right = np.asarray(fixed_label, dtype=bool) == gold
    n = int(gold.size)
    b, c = int((rule_right & ~fixed_right).sum()), int((~rule_right & fixed_right).sum())
    m = b + c
    p = float(stats.binom.cdf(b, m, 0.5)) if m else 1.0
    level = look_level(n)
    share_upper = 1.0 if c == 0 else float(stats.beta.ppf(level, b + 1, c))
    upper = m / n * (2 * share_upper - 1) if n else 1.0
    return GoldCheck(
        pairs=n,
        fixed=fixed,
        rule_correct=int(rule_right.sum()),
        fixed_correct=int(fixed_right.sum()),
        rule_only=b,
        fixed_only=c,
        rule_judgments=int(np.sum(rule_judgments)),
        fixed_judgments=int(np.sum(fixed_judgments)),
        p_value=p,
        upper=float(upper),
        level=level,
        worse=n >= MIN_PAIRS and p < 1 - level,
    )
