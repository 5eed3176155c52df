"""Adaptive allocation of crowd work: how many places a HIT gets (issue 29). Pure numpy, no Django.

A batch's policy is `fixed` (every HIT gets the batch's assignments per HIT, as RoSE) or
`adaptive`: a HIT starts with `min_places` places and gets one more, up to `max_places`, while
any of its (summary, ACU) pairs is unsettled. A pair is settled when its posterior P(present)
is at least `threshold` or at most 1 - `threshold`. The posterior is the Dawid-Skene E step
(scoring/stats/dawid_skene.py) with each judging worker's current estimates (sensitivity,
specificity) and the batch's prior; a worker without an estimate yet (the batch was not fitted,
or the worker is new) counts as a symmetric worker of accuracy FALLBACK_ACCURACY, so before any
fit the posterior is a function of the majority margin (the fallback the issue asks for).

The app (hits/services/allocation.py, when a submission completes a HIT's places) and the
simulation (bench/allocation_bench.py) use these same functions, so what the benchmark measures
is the rule the app applies.
"""

from dataclasses import dataclass

import numpy as np

FIXED = "fixed"
ADAPTIVE = "adaptive"
KINDS = (FIXED, ADAPTIVE)
FALLBACK_ACCURACY = 0.8
# Estimates are clipped to this range so that one unlucky fit never makes a worker's answer
# decide a pair alone (log-odds of at most about 4.6 per judgment).
ESTIMATE_RANGE = (0.01, 0.99)


@dataclass(frozen=True)
class Policy:
    kind: str = FIXED
    min_places: int = 2
    max_places: int = 5
    threshold: float = 0.9

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"allocation must be one of {', '.join(KINDS)}")
        if not 1 <= self.min_places <= self.max_places:
            raise ValueError("the minimum places must be at least 1 and at most the maximum")
        if not 0.5 < self.threshold < 1:
            raise ValueError("the threshold must lie between 0.5 and 1 (e.g. 0.9)")


def pair_posteriors(items, said, sensitivity, specificity, prior: float = 0.5, n_items: int | None = None):
    """P(present) per item from one row per judgment (item code, said present, the judging
    worker's sensitivity and specificity; NaN: no estimate, FALLBACK_ACCURACY is used)."""
    items = np.asarray(items, dtype=np.int64)
    said = np.asarray(said, dtype=bool)
    low, high = ESTIMATE_RANGE
    sens = np.clip(np.nan_to_num(np.asarray(sensitivity, dtype=float), nan=FALLBACK_ACCURACY), low, high)
    spec = np.clip(np.nan_to_num(np.asarray(specificity, dtype=float), nan=FALLBACK_ACCURACY), low, high)
    weights = np.where(said, np.log(sens) - np.log1p(-spec), np.log1p(-sens) - np.log(spec))
    prior = min(max(float(prior), low), high)
    n = int(items.max()) + 1 if n_items is None and items.size else (n_items or 0)
    log_odds = np.log(prior) - np.log1p(-prior) + np.bincount(items, weights=weights, minlength=n)
    return 1.0 / (1.0 + np.exp(-np.clip(log_odds, -700, 700)))


def settled(posterior, threshold: float):
    """Whether each pair is settled: its posterior at least `threshold` or at most 1 - `threshold`."""
    p = np.asarray(posterior, dtype=float)
    return np.maximum(p, 1.0 - p) >= threshold


def wants_place(policy: Policy, places: int, all_settled: bool) -> bool:
    """Whether a HIT holding `places` places (active assignments plus open ones) should get one
    more: never under `fixed`, never past the maximum; below the minimum always; otherwise while
    any of its pairs is unsettled."""
    if policy.kind != ADAPTIVE or places >= policy.max_places:
        return False
    return places < policy.min_places or not all_settled
