"""Adaptive allocation of crowd work: how many places a HIT gets (issue 29). Pure numpy, no Django.

A batch's policy is `fixed` (every HIT gets the batch's assignments per HIT, as RoSE) or
`adaptive`: a HIT starts with `min_places` places and gets one more, up to `max_places`, while
any of its (summary, ACU) pairs is unsettled. A pair is settled when its posterior P(present)
is at least `threshold` or at most 1 - `threshold`. The posterior is the Dawid-Skene E step
(scoring/stats/dawid_skene.py) with each judging worker's current estimates (sensitivity,
specificity) and the batch's prior; a worker without an estimate yet (the batch was not fitted,
or the worker is new) counts as a symmetric worker of accuracy FALLBACK_ACCURACY, so before any
fit the posterior is a function of the majority margin (the fallback the issue asks for).

Two rules for "the HIT is settled": `per ACU` (max_sd None, the default: every pair settled at the
threshold) or `summary level` (max_sd set: the standard deviation of the HIT's ACU share, the
quantity a system score averages, sqrt(sum p(1 - p)) / ACUs over its pairs' posteriors p, is at
most max_sd; the threshold is then unused).

Stopping workers at chance (a batch's opt-in setting, `stop_after`): a worker with at least
`stop_after` judgments on the batch's gold ACUs whose upper credible bound (99%:
scoring.stats.gold_evidence.BOUND_LEVEL) of sensitivity +
specificity - 1 (Youden's J: 0 for a random answerer and for one who always gives the same answer)
on gold is below AT_CHANCE gets no more of the batch's work and their judgments leave the batch's
aggregation (hits/allocation/service.py). The bound is computed from gold alone
(scoring.stats.gold_evidence): agreement with the crowd never stops anyone (issue 42).

The app (hits/allocation/service.py, when a submission completes a HIT's places) and the
simulation (bench/allocation_bench.py) use these same functions, so what the benchmark measures
is the rule the app applies.

The pilot (issue 43): when the lead sets no summary-level threshold, an adaptive batch of at least
3 * PILOT_MIN HITs sets it from its own first HITs (`pilot_size` of them, by creation): they get the
batch's fixed places (assignments per HIT), and once most of them are bought (hits/allocation/service.py
PILOT_QUORUM: a pilot HIT nobody reaches does not hold the batch), `pilot_max_sd` of those HITs' posteriors
(quantile PILOT_QUANTILE) is the summary-level threshold of every later HIT (`hit_policy`); until then
every HIT gets the fixed places. A smaller batch keeps the per-ACU rule.
"""

from dataclasses import dataclass, replace

import numpy as np

FIXED = "fixed"
ADAPTIVE = "adaptive"
# Adaptive by ACU (issue 43, bench/RESULTS.md `pairs+judge`): a HIT starts at `min_places`; while any of
# the summary's pairs is open (`open_pairs`: not settled, or settled by its prior where its crowd does not
# lean the same way), one more place, a follow-up HIT asking a new worker only those pairs, up to
# `max_places` in all (hits/allocation/service.py decide_pairs).
PAIRS = "pairs"
KINDS = (FIXED, ADAPTIVE, PAIRS)
# The kinds whose places follow the crowd's answers: worker estimates, stops at chance, first places.
ADAPTIVE_KINDS = (ADAPTIVE, PAIRS)
FALLBACK_ACCURACY = 0.8
# Estimates are clipped to this range so that one unlucky fit never makes a worker's answer
# decide a pair alone (log-odds of at most about 4.6 per judgment).
ESTIMATE_RANGE = (0.01, 0.99)
# A worker whose sensitivity + specificity - 1 is below this on gold (its upper credible bound) is at chance
# (a spammer: about 0).
AT_CHANCE = 0.2
# The pilot (module docstring): a 25th of the batch's HITs, at least PILOT_MIN; the threshold is this
# quantile of the pilot HITs' sd of the ACU share, chosen on REALSumm documents 0-49 (bench/RESULTS.md).
PILOT_SHARE = 25
PILOT_MIN = 10
PILOT_QUANTILE = 0.5
# A `pairs` batch's defaults (a lab that enters nothing gets them): the setting bench/RESULTS.md measured,
# pairs+judge's (bench/allocation_bench.py PairSettings: 1 first place, the threshold chosen on documents 0-49).
PAIRS_MIN_PLACES = 1
PAIRS_THRESHOLD = 0.725


# A `pairs` threshold learned from the batch's own gold round (issue 43; bench-only so far,
# bench/allocation_bench.py --pair-threshold-rule pilot, not the app's default): never below PAIRS_THRESHOLD,
# at most PILOT_CEILING; below PILOT_MIN_GOLD gold pairs with their fixed answers it is the floor.
PILOT_CEILING = 0.95
PILOT_MIN_GOLD = 20


def pilot_pair_threshold(
    fixed_correct: int, gold_pairs: int, margin: float, floor: float = PAIRS_THRESHOLD, ceiling: float = PILOT_CEILING
) -> float:
    """The settling threshold a `pairs` batch takes from its gold round: the accuracy fixed places'
    majority reached there (`fixed_correct` of `gold_pairs` gold pairs with all their fixed answers,
    hits.allocation.gold_guard.first_majority) less `margin`, clipped to [floor, ceiling]. A weak crowd
    (fixed places' majority often wrong, e.g. spammers) keeps the floor, the cheap default; a crowd whose
    majority is good asks each pair to be settled about as surely as fixed places would have it."""
    if gold_pairs < PILOT_MIN_GOLD:
        return floor
    return float(min(max(fixed_correct / gold_pairs - margin, floor), ceiling))


@dataclass(frozen=True)
class Policy:
    kind: str = FIXED
    min_places: int = 2
    max_places: int = 5
    threshold: float = 0.9
    max_sd: float | None = None  # None: per-ACU rule; a number: summary-level rule (module docstring)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"allocation must be one of {', '.join(KINDS)}")
        if not 1 <= self.min_places <= self.max_places:
            raise ValueError("the minimum places must be at least 1 and at most the maximum")
        if not 0.5 < self.threshold < 1:
            raise ValueError("the threshold must lie between 0.5 and 1 (e.g. 0.9)")
        if self.max_sd is not None and not 0 < self.max_sd < 0.5:
            raise ValueError(
                "the largest standard deviation of a HIT's ACU share must lie between 0 and 0.5 (e.g. 0.1)"
            )


def kind_defaults(kind: str) -> tuple[int, float]:
    """(first places, settling threshold) of a batch of this kind whose lead enters none: a `pairs`
    batch's measured setting (PAIRS_MIN_PLACES, PAIRS_THRESHOLD), every other kind's `Policy` defaults."""
    if kind == PAIRS:
        return PAIRS_MIN_PLACES, PAIRS_THRESHOLD
    return Policy.min_places, Policy.threshold


def pair_posteriors(items, said, sensitivity, specificity, prior=0.5, n_items: int | None = None):
    """P(present) per item from one row per judgment (item code, said present, the judging
    worker's sensitivity and specificity; NaN: no estimate, FALLBACK_ACCURACY is used). `prior`:
    the batch's P(present), or one per item (a machine judge's calibrated probability: issue 43), or
    rows of those (one row of posteriors each, e.g. with the neutral 0.5: the crowd's own, open_pairs)."""
    items = np.asarray(items, dtype=np.int64)
    said = np.asarray(said, dtype=bool)
    low, high = ESTIMATE_RANGE
    sens = np.clip(np.nan_to_num(np.asarray(sensitivity, dtype=float), nan=FALLBACK_ACCURACY), low, high)
    spec = np.clip(np.nan_to_num(np.asarray(specificity, dtype=float), nan=FALLBACK_ACCURACY), low, high)
    weights = np.where(said, np.log(sens) - np.log1p(-spec), np.log1p(-sens) - np.log(spec))
    prior = np.clip(np.asarray(prior, dtype=float), low, high)
    n = int(items.max()) + 1 if n_items is None and items.size else (n_items or 0)
    log_odds = np.log(prior) - np.log1p(-prior) + np.bincount(items, weights=weights, minlength=n)
    return 1.0 / (1.0 + np.exp(-np.clip(log_odds, -700, 700)))


def open_pairs(posterior, judged, threshold: float, min_judged: int = 1, crowd=None):
    """Which pairs a HIT's next place asks about (adaptive by pair, issue 43): those judged fewer
    than `min_judged` times, those whose posterior is not settled at `threshold`, and, given `crowd`
    (each pair's posterior from its judgments alone: the same estimates over the neutral prior 0.5),
    those whose crowd does not lean the way their posterior is settled (`with_crowd`): a pair's
    prior (a judge's) never settles it against, or without, its crowd."""
    judged = np.asarray(judged)
    still = (judged < min_judged) | ~settled(posterior, threshold)
    return still if crowd is None else still | ~with_crowd(posterior, crowd)


def with_crowd(posterior, crowd):
    """Whether each pair's crowd leans the way its posterior does: both above 0.5 or both below
    (a crowd at exactly 0.5, a tie or no judgment, leans no way)."""
    p, c = np.asarray(posterior, dtype=float), np.asarray(crowd, dtype=float)
    return ((p > 0.5) & (c > 0.5)) | ((p < 0.5) & (c < 0.5))


def settled(posterior, threshold: float):
    """Whether each pair is settled: its posterior at least `threshold` or at most 1 - `threshold`."""
    p = np.asarray(posterior, dtype=float)
    return np.maximum(p, 1.0 - p) >= threshold


def share_sd(posterior, starts=None):
    """The standard deviation of a HIT's ACU share, sqrt(sum p(1 - p)) / ACUs, from its pairs'
    posteriors; with `starts` (each HIT's first pair in `posterior`), one per HIT."""
    p = np.asarray(posterior, dtype=float)
    if starts is None:
        return float(np.sqrt(np.sum(p * (1 - p))) / p.size) if p.size else float("inf")
    sizes = np.diff(np.append(starts, p.size))
    return np.sqrt(np.add.reduceat(p * (1 - p), starts)) / sizes


def hit_settled(policy: Policy, posterior) -> bool:
    """Whether a HIT whose pairs have these posteriors is settled under the policy's rule (a HIT
    with no counted judgment is not)."""
    p = np.asarray(posterior, dtype=float)
    if not p.size:
        return False
    if policy.max_sd is not None:
        return share_sd(p) <= policy.max_sd
    return bool(settled(p, policy.threshold).all())


def at_chance(chance_upper, gold_judged, after: int):
    """Which workers to stop: at least `after` judgments on gold ACUs and the upper credible bound
    of sensitivity + specificity - 1 on gold below AT_CHANCE (NaN: no gold fit, never)."""
    upper = np.asarray(chance_upper, dtype=float)
    with np.errstate(invalid="ignore"):
        return (np.asarray(gold_judged) >= after) & (upper < AT_CHANCE)


# A `pairs` batch's triage "when the gold round shows spammers" (issue 43, bench/RESULTS.md "The triage only where
# the gold round shows spammers"): held back until every gold HIT has its fixed places, then on only if at least
# TRIAGE_SPAMMER_SHARE of the workers with at least `after` gold judgments (the batch's stop_after, else
# TRIAGE_GOLD_AFTER) are at chance on gold (`at_chance`); K = 0.05 chosen on documents 0-49.
TRIAGE_ALWAYS = "always"
TRIAGE_SPAMMERS = "spammers"
TRIAGE_WHEN = (TRIAGE_ALWAYS, TRIAGE_SPAMMERS)
TRIAGE_SPAMMER_SHARE = 0.05
TRIAGE_GOLD_AFTER = 20


def share_at_chance(chance_upper, gold_judged, after: int) -> tuple[float | None, int, int]:
    """(share, at chance, judged): of the workers with at least `after` gold judgments (`judged` of
    them), how many are at chance on gold (`at_chance`) and their share (None: no worker has that many)."""
    judged = int((np.asarray(gold_judged) >= after).sum())
    spammers = int(at_chance(chance_upper, gold_judged, after).sum())
    return (spammers / judged if judged else None), spammers, judged


def triage_on(share: float | None, threshold: float = TRIAGE_SPAMMER_SHARE) -> bool:
    """Whether the held-back triage turns on: at least `threshold` of the gold-judged workers at chance
    (None, no worker judged enough gold: off, every pair to the crowd)."""
    return share is not None and share >= threshold


def wants_place(policy: Policy, places: int, all_settled: bool) -> bool:
    """Whether a HIT holding `places` places (active assignments plus open ones) should get one
    more: never under `fixed`, never past the maximum; below the minimum always; otherwise while
    any of its pairs is unsettled."""
    if policy.kind != ADAPTIVE or places >= policy.max_places:
        return False
    return places < policy.min_places or not all_settled


def pilot_max_sd(posterior, starts, sizes=None, quantile: float = 0.5) -> float | None:
    """The summary-level settling threshold a batch sets from its own pilot (issue 43): its first
    wave bought at the batch's fixed places (fixed-3), refitted, gives each pilot HIT's standard
    deviation of its ACU share (`share_sd`, over `sizes` ACUs each: by default the pairs from its
    start to the next); the threshold is their median, the precision fixed places bought on a
    typical HIT of this crowd. Later HITs stop once they are at least as precise, so a crowd that
    answers well settles at the minimum and a noisy one buys more. None: no pilot HIT."""
    p = np.asarray(posterior, dtype=float)
    starts = np.asarray(starts, dtype=np.int64)
    if not starts.size:
        return None
    variance = np.add.reduceat(p * (1 - p), starts)
    counts = np.diff(np.append(starts, p.size)) if sizes is None else np.asarray(sizes, dtype=float)
    value = float(np.quantile(np.sqrt(variance) / counts, quantile))
    return min(max(value, 1e-6), 0.499)


def pilot_size(hits: int) -> int:
    """How many of an adaptive batch's first HITs (by creation) are its pilot: a PILOT_SHARE-th of
    its `hits`, at least PILOT_MIN; 0 (no pilot) when it has fewer than 3 * PILOT_MIN HITs."""
    if hits < 3 * PILOT_MIN:
        return 0
    return max(PILOT_MIN, -(-hits // PILOT_SHARE))


def at_least_fixed(policy: Policy, fixed: int) -> Policy:
    """The policy after its batch's gold guard fired (hits/allocation/gold_guard.py): a HIT starts with
    at least the `fixed` places (at most the maximum) and settles after them, as fixed allocation does."""
    return replace(policy, min_places=max(policy.min_places, min(fixed, policy.max_places)))


def hit_policy(policy: Policy, assignments: int, pilot_sd: float | None, piloting: bool) -> Policy:
    """The rule one non-gold HIT of a batch is decided by. A fixed batch, or one whose lead set the
    summary-level threshold, keeps its policy. `piloting` (a pilot HIT, or any HIT before the pilot
    is bought): the batch's fixed places, `assignments` (at most the maximum), no more. Otherwise the
    summary-level rule at the pilot's threshold `pilot_sd` (None: no pilot, the policy as it is)."""
    if policy.kind != ADAPTIVE or policy.max_sd is not None:
        return policy
    if piloting:
        fixed = max(1, min(assignments, policy.max_places))
        return Policy(ADAPTIVE, fixed, fixed, policy.threshold)
    return policy if pilot_sd is None else replace(policy, max_sd=pilot_sd)
