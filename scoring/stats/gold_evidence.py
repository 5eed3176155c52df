"""What gold says about each worker, and which pairs of workers agree beyond it (issue 42).

Gold items are (summary, ACU) pairs whose answer is known (the batch's gold HITs). A worker's
sensitivity P(says present | present) and specificity P(says absent | absent) on gold are
binomial proportions; with a uniform prior their posteriors are Beta(1 + right, 1 + wrong), of
which `gold_evidence` reports the mean and the equal-tailed credible interval, with the number of
gold judgments behind each. `chance_upper` is the one-sided upper credible bound of Youden's
J = sensitivity + specificity - 1 (0 for a random answerer and for one who always gives the same
answer, 1 for a perfect one): below 0.2, gold shows at that level that the worker is near chance.
Its distribution is that of the sum of the two independent Beta posteriors, whose CDF
P(J <= x) = E_P[F_S(x + 1 - P)] is taken on a quantile grid of P and solved by bisection.

`collusion` flags pairs of workers who agree with each other, on the items both judged, far
more often than their gold accuracy can explain. Two workers answering independently of each
other given the truth agree on an item with probability at most the larger of
s1 s2 + (1 - s1)(1 - s2) (on present items) and p1 p2 + (1 - p1)(1 - p2) (on absent ones); the
most of that over the corners of their credible intervals (the expression is bilinear, so
its maximum over the box is at a corner) is the agreement gold explains at best. A pair is flagged
when its observed agreement is above that by at least `margin` and the binomial probability of so
many agreements under it is below `alpha` divided by the number of pairs tested (Bonferroni). No
crowd label enters either rule: workers without gold have the widest intervals and are neither
stopped nor flagged short of near-total agreement on many items.
Pure numpy/scipy; no Django.
"""

from dataclasses import dataclass

import numpy as np
from scipy.special import betainc
from scipy.stats import beta, binom

from .aggregation import codes_1d

LEVEL = 0.95  # credible level of the intervals
# Credible level of the upper bound on J the stop reads. A batch looks at every worker again at
# each refit, so a per-look 95% would stop more workers above chance than 5% over a batch; chosen
# on REALSumm documents 0-49 with the crowds of bench/crowds (bench/RESULTS.md).
BOUND_LEVEL = 0.99
GRID = 512  # quantile points of the specificity posterior in the CDF of J


@dataclass
class GoldEvidence:
    workers: np.ndarray  # worker keys (sorted): every worker of the rows, with or without gold
    positives: np.ndarray  # gold-present items each judged
    said_present: np.ndarray  # ... of which they said present
    negatives: np.ndarray  # gold-absent items each judged
    said_absent: np.ndarray  # ... of which they said absent
    sensitivity: np.ndarray  # posterior mean on gold
    sensitivity_interval: np.ndarray  # (workers, 2): equal-tailed credible interval
    specificity: np.ndarray
    specificity_interval: np.ndarray
    chance_upper: np.ndarray  # one-sided upper credible bound (BOUND_LEVEL) of sensitivity + specificity - 1

    @property
    def gold_judged(self) -> np.ndarray:
        return self.positives + self.negatives


def beta_interval(right, total, level: float = LEVEL) -> np.ndarray:
    """Equal-tailed credible interval (n, 2) of a proportion from `right` of `total` under a
    uniform prior: the quantiles (1 - level) / 2 and (1 + level) / 2 of Beta(1 + right, 1 + wrong)."""
    right, total = np.asarray(right, dtype=float), np.asarray(total, dtype=float)
    a, b = 1 + right, 1 + total - right
    return np.stack([beta.ppf((1 - level) / 2, a, b), beta.ppf((1 + level) / 2, a, b)], axis=-1)


def youden_upper(said_present, positives, said_absent, negatives, level: float = LEVEL) -> np.ndarray:
    """One-sided upper credible bound (at `level`) of sensitivity + specificity - 1 per worker,
    from their gold counts under uniform priors (module docstring)."""
    k1, n1 = np.atleast_1d(np.asarray(said_present, dtype=float)), np.atleast_1d(np.asarray(positives, dtype=float))
    k2, n2 = np.atleast_1d(np.asarray(said_absent, dtype=float)), np.atleast_1d(np.asarray(negatives, dtype=float))
    grid = (np.arange(GRID) + 0.5) / GRID
    spec = beta.ppf(grid[None, :], (1 + k2)[:, None], (1 + n2 - k2)[:, None])  # quantiles of P
    a, b = (1 + k1)[:, None], (1 + n1 - k1)[:, None]
    low: np.ndarray = np.full(k1.size, -1.0)
    high: np.ndarray = np.full(k1.size, 1.0)
    for _ in range(24):  # bisection (to 1e-7) on x: P(S + P - 1 <= x) against level, every worker at once
        mid = (low + high) / 2
        cdf = betainc(a, b, np.clip(mid[:, None] + 1 - spec, 0, 1)).mean(axis=1)  # the CDF of S
        below = cdf < level
        low, high = np.where(below, mid, low), np.where(below, high, mid)
    return (low + high) / 2


def gold_evidence(
    item_ids, worker_ids, present, gold_items, gold_present, level: float = LEVEL, bound_level: float = BOUND_LEVEL
) -> GoldEvidence:
    """Each worker's gold counts, posterior means, credible intervals (at `level`) and upper bound
    on J (at `bound_level`), from one row per judgment (item, worker, said present) and the gold
    items' keys and answers."""
    items = np.asarray(item_ids)
    said = np.asarray(present, dtype=bool)
    workers, keys = codes_1d(np.asarray(worker_ids))
    gold_items, gold_present = np.asarray(gold_items), np.asarray(gold_present, dtype=bool)
    order = np.argsort(gold_items, kind="stable")
    gold_items, gold_present = gold_items[order], gold_present[order]
    at = np.clip(np.searchsorted(gold_items, items), 0, max(gold_items.size - 1, 0))
    on_gold = gold_items[at] == items if gold_items.size else np.zeros(items.size, dtype=bool)
    truth = np.where(on_gold, gold_present[at] if gold_items.size else False, False)
    n = len(keys)

    def count(mask):
        return np.bincount(workers[mask], minlength=n).astype(int)

    positives, negatives = count(on_gold & truth), count(on_gold & ~truth)
    said_present, said_absent = count(on_gold & truth & said), count(on_gold & ~truth & ~said)
    return GoldEvidence(
        workers=keys,
        positives=positives,
        said_present=said_present,
        negatives=negatives,
        said_absent=said_absent,
        sensitivity=(1 + said_present) / (2 + positives),
        sensitivity_interval=beta_interval(said_present, positives, level),
        specificity=(1 + said_absent) / (2 + negatives),
        specificity_interval=beta_interval(said_absent, negatives, level),
        chance_upper=youden_upper(said_present, positives, said_absent, negatives, bound_level),
    )


def _most_agreement(a_low, a_high, b_low, b_high) -> np.ndarray:
    """max over x in [a_low, a_high], y in [b_low, b_high] of x y + (1 - x)(1 - y): at a corner."""
    corners = [x * y + (1 - x) * (1 - y) for x in (a_low, a_high) for y in (b_low, b_high)]
    return np.max(corners, axis=0)


@dataclass
class CollusionFlag:
    first: object  # worker keys, first < second
    second: object
    common: int  # items both judged
    agreed: int  # ... on which they gave the same answer
    explained: float  # the most agreement their gold accuracy explains (module docstring)
    p_value: float  # P(at least `agreed` of `common` | explained)


def collusion(
    item_ids,
    worker_ids,
    present,
    evidence: GoldEvidence,
    *,
    min_common: int = 20,
    margin: float = 0.15,
    alpha: float = 0.01,
) -> list[CollusionFlag]:
    """Pairs of workers agreeing beyond what their gold accuracy explains (module docstring),
    from one row per judgment (a worker judges an item once) and `gold_evidence` of the same rows."""
    items, _ = codes_1d(np.asarray(item_ids))
    workers = np.searchsorted(evidence.workers, np.asarray(worker_ids))
    said = np.asarray(present, dtype=bool)
    order = np.lexsort((workers, items))
    items, workers, said = items[order], workers[order], said[order]
    starts = np.flatnonzero(np.r_[True, items[1:] != items[:-1]])
    sizes = np.diff(np.r_[starts, items.size])
    firsts, seconds, agree = [], [], []
    for k in range(2, int(sizes.max(initial=0)) + 1):  # items judged by k workers: their k(k-1)/2 pairs
        rows = starts[sizes == k][:, None] + np.arange(k)[None, :]
        i, j = np.triu_indices(k, 1)
        firsts.append(workers[rows[:, i]].ravel())
        seconds.append(workers[rows[:, j]].ravel())
        agree.append((said[rows[:, i]] == said[rows[:, j]]).ravel())
    if not firsts:
        return []
    n = len(evidence.workers)
    codes = np.concatenate(firsts) * n + np.concatenate(seconds)
    pair_codes, inverse = np.unique(codes, return_inverse=True)
    common = np.bincount(inverse)
    agreed = np.bincount(inverse, weights=np.concatenate(agree).astype(float)).astype(int)
    tested = common >= min_common
    a, b = pair_codes // n, pair_codes % n
    sens, spec = evidence.sensitivity_interval, evidence.specificity_interval
    explained = np.maximum(
        _most_agreement(sens[a, 0], sens[a, 1], sens[b, 0], sens[b, 1]),
        _most_agreement(spec[a, 0], spec[a, 1], spec[b, 0], spec[b, 1]),
    )
    p_value = binom.sf(agreed - 1, common, explained)
    flagged = tested & (agreed / np.maximum(common, 1) >= explained + margin)
    flagged &= p_value < alpha / max(int(tested.sum()), 1)
    keys = evidence.workers
    return [
        CollusionFlag(keys[a[x]], keys[b[x]], int(common[x]), int(agreed[x]), float(explained[x]), float(p_value[x]))
        for x in np.flatnonzero(flagged)
    ]
