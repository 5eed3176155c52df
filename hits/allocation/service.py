"""The adaptive allocation decision, taken in the transaction that stores a submission.

When the last working place of an adaptive batch's HIT is submitted (no assignment still being
worked, no open place), the HIT's counted judgments (hits.selectors.counted_judgments: excluded
workers and unconfirmed provider work left out, as everywhere) give each of its ACUs a posterior
with the workers' current estimates (hits.models.WorkerEstimate, refitted after submissions by
scoring/runs/worker_estimates.py; the fallback of hits.allocation.policy for workers without one). If an ACU
is unsettled and the HIT holds fewer than the maximum places, one more place opens
(hits.places.open_one_more). The HIT row is locked first (select_for_update), so a parallel
handout or submission on the same HIT waits: no HIT is over-filled and no decision is lost.
Gold HITs keep their places (their answers are known). Without the lead's summary-level threshold,
a large enough batch sets it from its pilot (hits.allocation.policy.hit_policy): `pilot_threshold`
reads the pilot HITs' counted judgments with the current estimates, so it follows the refits; it
waits for PILOT_QUORUM of the pilot HITs, not all, so one pilot HIT that never gets its workers
does not hold the whole batch at fixed places.
"""

import logging
import math
from collections import Counter
from decimal import Decimal

import numpy as np
from django.db import transaction
from django.db.models import Count, F, Q, Sum
from django.utils import timezone

from annotation.models import ACU
from hits import places, versions
from hits.allocation.policy import (
    ADAPTIVE,
    ADAPTIVE_KINDS,
    AT_CHANCE,
    PAIRS,
    PILOT_QUANTILE,
    Policy,
    at_chance,
    at_least_fixed,
    hit_policy,
    hit_settled,
    open_pairs,
    pair_posteriors,
    pilot_max_sd,
    pilot_size,
    settled,
    wants_place,
)
from hits.collusion import CollusionFlag
from hits.models import HIT, Assignment, Batch, MachineJudgment, WorkerEstimate
from hits.money import batch_buckets, bucket_for, cents
from hits.provider_interface import Capability, ProviderError, get_provider
from hits.release import release_overdue
from hits.selectors import counted_judgments, covered_summaries

logger = logging.getLogger(__name__)

# The share of the pilot's HITs that must be complete before their threshold is used (pilot_threshold):
# 8 of a pilot of 10. The median of 8 HITs' precision is hardly noisier than of 10.
PILOT_QUORUM = 0.8


def policy_of(batch: Batch) -> Policy:
    return Policy(
        batch.allocation,
        batch.allocation_min,
        batch.allocation_max,
        batch.allocation_threshold,
        batch.allocation_max_sd,
    )


def batch_prior(batch: Batch) -> float:
    """The batch's P(present): its latest Dawid-Skene fit's, 0.5 before one."""
    return batch.allocation_prior if batch.allocation_prior is not None else 0.5


def worker_estimates(batch: Batch, workers: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's worker's current (sensitivity, specificity) in the batch (rows: `workers`, one
    worker id per row); NaN without an estimate (the policy's default then)."""
    found = {
        w: (s, p)
        for w, s, p in WorkerEstimate.objects.filter(batch_id=batch.pk, worker_id__in=set(workers)).values_list(
            "worker_id", "sensitivity", "specificity"
        )
    }
    nan = (float("nan"), float("nan"))
    return (
        np.array([found.get(int(w), nan)[0] for w in workers], dtype=float),
        np.array([found.get(int(w), nan)[1] for w in workers], dtype=float),
    )


def posteriors(
    rows, batch: Batch, priors: dict[tuple[int, int], float] | None = None, crowd: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """From (HIT, ACU, worker, said) rows: P(present) of each (HIT, ACU) judged, in HIT then ACU
    order, and each HIT's first index in it. The prior of a pair is the batch's (its last fit; 0.5
    before), or its own in `priors` (keyed as the rows, e.g. (summary, ACU): a judge run's
    calibrated probability, `pair_priors`). With `crowd`, two rows: those posteriors, and the
    crowd's own (the same judgments over the neutral prior 0.5: hits.allocation.policy.open_pairs)."""
    if not rows:
        return np.zeros((2, 0) if crowd else 0), np.zeros(0, dtype=np.int64)
    hits, acus, workers, said = (np.array(x) for x in zip(*rows, strict=True))
    sens, spec = worker_estimates(batch, workers.tolist())
    keys, items = np.unique(np.stack([hits, acus], axis=1), axis=0, return_inverse=True)
    prior: float | np.ndarray = batch_prior(batch)
    if priors:
        prior = np.array([priors.get((int(h), int(a)), batch_prior(batch)) for h, a in keys], dtype=float)
    if crowd:
        prior = np.stack([np.broadcast_to(prior, len(keys)), np.full(len(keys), 0.5)])
    starts = np.flatnonzero(np.r_[True, keys[1:, 0] != keys[:-1, 0]])
    return pair_posteriors(items.ravel(), said.astype(bool), sens, spec, prior), starts


def hit_posteriors(hit: HIT, batch: Batch) -> np.ndarray:
    """P(present) of each ACU of the HIT that has counted judgments."""
    fields = ("assignment__hit_id", "acu_id", "assignment__worker_id", "present")
    return posteriors(list(counted_judgments(hit=hit).values_list(*fields)), batch)[0]


def pilot_threshold(batch: Batch, pilot: list[int], fixed: int) -> float | None:
    """The summary-level threshold the batch's pilot HITs set (hits.allocation.policy.pilot_max_sd
    of their posteriors now) from those that are complete (their fixed places held, all worked and
    confirmed), once at least PILOT_QUORUM of the pilot is: a pilot HIT that no worker reaches (none
    eligible left) does not keep the rest of the batch at its fixed places for good, and the later
    ones join the median as they complete. None before (every HIT keeps the fixed places)."""
    pending = Q(assignments__status=Assignment.Status.ASSIGNED) | Q(
        assignments__status__in=Assignment.COUNTED, assignments__confirmed=False
    )
    behind = HIT.objects.filter(pk__in=pilot).filter(Q(open_places__gt=0) | Q(max_assignments__lt=fixed) | pending)
    complete = set(pilot) - set(behind.values_list("pk", flat=True))
    if not pilot or len(complete) < math.ceil(PILOT_QUORUM * len(pilot)):
        return None
    fields = ("assignment__hit_id", "acu_id", "assignment__worker_id", "present")
    rows = list(counted_judgments(batch=batch).filter(assignment__hit_id__in=complete).values_list(*fields))
    return pilot_max_sd(*posteriors(rows, batch), quantile=PILOT_QUANTILE)


def pilot_of(batch: Batch, policy: Policy) -> tuple[list[int], Policy] | None:
    """The batch's pilot HITs (its first pilot_size HITs by creation, gold left out) and the fixed
    places they get; None when it has no pilot (fixed, the lead's own summary-level threshold, or
    fewer than 3 * PILOT_MIN HITs)."""
    if policy.kind != ADAPTIVE or policy.max_sd is not None:
        return None
    size = pilot_size(batch.hits.count())
    if not size:
        return None
    first = list(batch.hits.order_by("pk").values_list("pk", "gold_answers")[:size])
    return [pk for pk, gold in first if not gold], hit_policy(policy, batch.assignments_per_hit, None, piloting=True)


def policy_for(hit: HIT, batch: Batch) -> Policy:
    """The rule this non-gold HIT is decided by: the batch's, or its pilot's (hit_policy); once the
    batch's gold guard fired (hits/allocation/guard.py), at least the fixed places first."""
    policy = policy_of(batch)
    found = pilot_of(batch, policy)
    if found is not None and hit.pk in found[0]:
        return found[1]
    rule = later_rule(batch, policy, found)
    return at_least_fixed(rule, batch.assignments_per_hit) if batch.gold_guard_at else rule


def later_rule(batch: Batch, policy: Policy, found: tuple[list[int], Policy] | None) -> Policy:
    """The rule of the batch's non-gold HITs outside its pilot (`found`: pilot_of): the batch's
    policy, at the pilot's threshold once it is set, the fixed places until then."""
    if found is None:
        return policy
    pilot, fixed = found
    threshold = pilot_threshold(batch, pilot, fixed.max_places)
    return hit_policy(policy, batch.assignments_per_hit, threshold, piloting=threshold is None)


def decide(hit_id: int) -> bool:
    """After a submission on this HIT (in its transaction): open one more place if the policy
    asks for it. True when a place opened."""
    hit = HIT.objects.select_for_update(of=("self",)).select_related("batch").get(pk=hit_id)
    batch = hit.batch
    if batch.allocation == PAIRS and not hit.gold_answers:
        return decide_pairs(hit, batch)
    if batch.allocation != ADAPTIVE or hit.gold_answers:
        return False
    pending = Q(status=Assignment.Status.ASSIGNED) | Q(status__in=Assignment.COUNTED, confirmed=False)
    if hit.open_places or hit.assignments.filter(pending).exists():
        return False  # places still being worked (or answers the provider has not confirmed): they come first
    posterior = hit_posteriors(hit, batch)
    policy = policy_for(hit, batch)
    all_settled = hit_settled(policy, posterior) and hit.max_assignments >= policy.min_places
    if all_settled != hit.settled:
        HIT.objects.filter(pk=hit.pk).update(settled=all_settled)
    if not wants_place(policy, hit.max_assignments, all_settled):
        return False
    opened = places.open_one_more(hit.pk, policy.max_places)
    if opened and get_provider(batch.provider).supports(Capability.MORE_PLACES):
        transaction.on_commit(lambda: push_places(hit.pk))  # the provider hears of it once it is ours
    if opened:
        logger.info(
            "allocation batch=%s hit=%s: %d of %d ACUs unsettled at %.3g, opened place %d of at most %d",
            batch.pk,
            hit.pk,
            int((~settled(posterior, policy.threshold)).sum()),
            posterior.size,
            policy.threshold,
            hit.max_assignments + 1,
            policy.max_places,
        )
    return opened


def pair_priors(batch: Batch, summary_id: int | None = None, *, gold: bool = False) -> dict[tuple[int, int], float]:
    """{(summary id, ACU id): the prior of the pair} of one summary (None: of the batch's; `gold`: of its
    gold HITs'): the calibrated probability of the batch's judge run (`allocation_judge_run`, a `pairs`
    batch's choice); {} without one (every pair has the batch's prior)."""
    if batch.allocation_judge_run_id is None:
        return {}
    rows = MachineJudgment.objects.filter(run_id=batch.allocation_judge_run_id, probability__isnull=False)
    if summary_id is not None:
        rows = rows.filter(summary_id=summary_id)
    else:
        hits = batch.hits.filter(gold_answers__isnull=False) if gold else batch.hits
        rows = rows.filter(summary_id__in=hits.values("summary_id"))
    return {(s, a): float(p) for s, a, p in rows.values_list("summary_id", "acu_id", "probability") if p is not None}


def pair_labels(batch: Batch, rows) -> dict[tuple[int, int], bool]:
    """A `pairs` batch's labels (issue 43): from its counted (summary, ACU, worker, said) rows, each
    judged pair's label is its posterior (the workers' estimates over the pair's prior, as the
    allocation reads it) above 0.5; exactly 0.5 is not present, as a tied majority."""
    posterior, _ = posteriors(rows, batch, pair_priors(batch))
    keys = sorted({(int(s), int(a)) for s, a, _, _ in rows})
    return {key: p > 0.5 for key, p in zip(keys, posterior.tolist(), strict=True)}


def summary_posteriors(batch: Batch, summary_id: int, acu_ids: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For a `pairs` batch: P(present) of each of `acu_ids` with this summary from the counted
    judgments of every HIT of the batch on it, with the pairs' priors (`pair_priors`), how many
    judgments each has, and the crowd's own P(present) (the same judgments over the prior 0.5). A
    pair nobody judged has its prior, and 0.5 from its crowd."""
    fields = ("assignment__hit__summary_id", "acu_id", "assignment__worker_id", "present")
    rows = list(counted_judgments(batch=batch).filter(assignment__hit__summary_id=summary_id).values_list(*fields))
    priors = pair_priors(batch, summary_id)
    (posterior, crowd), _ = posteriors(rows, batch, priors, crowd=True)
    judged_acus = sorted({row[1] for row in rows})
    found = dict(zip(judged_acus, posterior.tolist(), strict=True))
    alone = dict(zip(judged_acus, crowd.tolist(), strict=True))
    counts = Counter(row[1] for row in rows)
    prior = batch_prior(batch)
    return (
        np.array([found.get(a, priors.get((summary_id, a), prior)) for a in acu_ids], dtype=float),
        np.array([counts.get(a, 0) for a in acu_ids], dtype=np.int64),
        np.array([alone.get(a, 0.5) for a in acu_ids], dtype=float),
    )


def decide_pairs(hit: HIT, batch: Batch) -> bool:
    """A `pairs` batch (adaptive by ACU, issue 43): once no place of the summary's HITs in the batch
    is being worked, its pairs' posteriors (`summary_posteriors`) say which of the first HIT's ACUs
    are open (hits.allocation.policy.open_pairs at the batch's threshold); while any is and the
    summary holds fewer than the maximum places, one follow-up HIT of one place asks a new worker
    only those (hits.places.open_follow_up, paid by the bucket of that many ACUs; the handout never
    gives a worker a summary twice in a batch). The first HIT is locked, so the summary's
    decisions follow one another. True when a place opened."""
    first = HIT.objects.select_for_update(of=("self",)).get(batch_id=batch.pk, summary_id=hit.summary_id, follow_up=0)
    mine = HIT.objects.filter(batch_id=batch.pk, summary_id=hit.summary_id)
    pending = Q(assignments__status=Assignment.Status.ASSIGNED) | Q(
        assignments__status__in=Assignment.COUNTED, assignments__confirmed=False
    )
    if mine.filter(Q(open_places__gt=0) | pending).exists():
        return False  # places still being worked (or answers not confirmed): they come first
    asked = list(first.task_acus().values_list("pk", flat=True))
    posterior, judged, crowd = summary_posteriors(batch, first.summary_id, asked)
    # once the gold guard fired (hits/allocation/guard.py), a pair settles only after the fixed places
    least = min(batch.assignments_per_hit, batch.allocation_max) if batch.gold_guard_at else 1
    still = open_pairs(posterior, judged, batch.allocation_threshold, min_judged=least, crowd=crowd)
    still_open = [a for a, o in zip(asked, still, strict=True) if o]
    if bool(still_open) == first.settled:
        HIT.objects.filter(pk=first.pk).update(settled=not still_open)
    held = mine.aggregate(n=Sum("max_assignments"))["n"] or 0
    if not still_open or held >= batch.allocation_max:
        return False
    buckets = batch_buckets(batch)
    follow_up = places.open_follow_up(first, still_open, bucket_for(buckets, len(still_open)).reward)
    logger.info(
        "allocation batch=%s summary=%s: %d of %d ACUs open at %.3g, follow-up HIT %s (place %d of at most %d)",
        batch.pk,
        first.summary_id,
        len(still_open),
        len(asked),
        batch.allocation_threshold,
        follow_up.pk,
        held + 1,
        batch.allocation_max,
    )
    return True


def stop_at_chance(batch: Batch) -> list[int]:
    """The batch's opt-in stop (batch.stop_after): every worker whom gold shows near chance
    (hits.allocation.policy.at_chance on the stored gold evidence, after at least stop_after
    judgments on gold ACUs), not stopped yet and not lifted by the lead, is stopped in this batch:
    no more of its work (hits.services.handout) and their judgments leave this batch's aggregation
    (hits.selectors.counted), so the round and its dataset get a new version. Other batches and
    the worker-wide exclusion are untouched (the lead's decision). A task they are working on is
    not taken away (as at a lead's stop); places past their deadline go back now (hits.release).
    Pay is not touched. Returns the workers stopped."""
    if batch.allocation not in ADAPTIVE_KINDS or not batch.stop_after:
        return []
    rows = list(
        WorkerEstimate.objects.filter(
            batch_id=batch.pk,
            stopped_at__isnull=True,
            stop_lifted_at__isnull=True,
        ).values_list("pk", "worker_id", "chance_upper", "gold_judged", "gold")
    )
    chance = at_chance([r[2] for r in rows], [r[3] for r in rows], batch.stop_after)
    stopped = []
    now = timezone.now()
    with transaction.atomic():
        for (pk, worker, upper, n, gold), stop in zip(rows, chance, strict=True):
            if not stop or upper is None:  # (at_chance never stops a worker without a gold fit)
                continue
            reason = stop_evidence(upper, n, gold, batch.stop_after)
            WorkerEstimate.objects.filter(pk=pk).update(stopped_at=now, stop_reason=reason)
            logger.info("allocation batch=%s: stopped worker=%s, %s", batch.pk, worker, reason)
            stopped.append(int(worker))
        if stopped:
            versions.bump(batch.dataset_id, batch.pk)
    if stopped:
        release_overdue(batch_id=batch.pk)
    return stopped


def stop_evidence(upper: float, gold_judged: int, gold: dict, after: int) -> str:
    """The stop's evidence as the lead reads it."""
    sens, spec = gold.get("sensitivity", [0, 1]), gold.get("specificity", [0, 1])
    return (
        f"near chance on gold: {gold.get('said_present', 0)} of {gold.get('positives', 0)} present gold ACUs said "
        f"present (sensitivity 95% interval {sens[0]:.2f}-{sens[1]:.2f}), {gold.get('said_absent', 0)} of "
        f"{gold.get('negatives', 0)} absent ones said absent (specificity {spec[0]:.2f}-{spec[1]:.2f}); "
        f"sensitivity + specificity - 1 is below {upper:.2f} with {gold.get('bound_level', 0.95):.0%} credibility, "
        f"under {AT_CHANCE:g} "
        f"(the batch stops workers at chance after {after} judgments on gold; {gold_judged} so far)"
    )


def lift_stop(batch: Batch, worker_id: int, *, by=None) -> bool:
    """The lead lifts a stop: the worker gets the batch's work again and their judgments count in
    it again; never stopped again in this batch. True when a stop was lifted."""
    with transaction.atomic():
        lifted = WorkerEstimate.objects.filter(batch_id=batch.pk, worker_id=worker_id, stopped_at__isnull=False).update(
            stopped_at=None, stop_lifted_at=timezone.now()
        )
        if lifted:
            versions.bump(batch.dataset_id, batch.pk)
    return _lifted(batch, lifted, f"the stop of worker={worker_id}", by)


def stopped_workers(batch: Batch):
    """The batch's stopped workers and lifted stops, for the batch page (newest first)."""
    return (
        WorkerEstimate.objects.filter(batch_id=batch.pk)
        .filter(Q(stopped_at__isnull=False) | Q(stop_lifted_at__isnull=False))
        .select_related("worker")
        .order_by(F("stopped_at").desc(nulls_last=True), "-stop_lifted_at")
    )


def flag_collusion(batch: Batch, flags) -> int:
    """Store the pairs scoring.stats.gold_evidence.collusion flagged (worker ids first < second):
    a new pair is flagged, a flagged one's evidence updated, a lifted one left lifted. Returns
    how many pairs are newly flagged."""
    existing = {
        (f.first_id, f.second_id): f for f in CollusionFlag.objects.filter(batch_id=batch.pk).only("pk", "lifted_at")
    }
    new = 0
    for flag in flags:
        key = (int(flag.first), int(flag.second))
        fields = {"common": flag.common, "agreed": flag.agreed, "explained": flag.explained, "p_value": flag.p_value}
        if key not in existing:
            _, created = CollusionFlag.objects.get_or_create(
                batch_id=batch.pk, first_id=key[0], second_id=key[1], defaults=fields
            )
            new += created
            if created:
                logger.info("allocation batch=%s: workers %s and %s flagged as possible collusion", batch.pk, *key)
        elif existing[key].lifted_at is None:
            CollusionFlag.objects.filter(pk=existing[key].pk).update(**fields)
    return new


def lift_flag(batch: Batch, flag_id: int, *, by=None) -> bool:
    """The lead lifts a collusion flag (not flagged again in this batch). True when one was lifted."""
    lifted = CollusionFlag.objects.filter(batch_id=batch.pk, pk=flag_id, lifted_at__isnull=True).update(
        lifted_at=timezone.now()
    )
    return _lifted(batch, lifted, f"collusion flag {flag_id}", by)


def _lifted(batch: Batch, lifted: int, what: str, by) -> bool:
    """A lead's lift, logged when it lifted something; True then."""
    if lifted:
        logger.info("allocation batch=%s: %s lifted by %s", batch.pk, what, by or "the lead")
    return bool(lifted)


def collusion_flags(batch: Batch):
    """The batch's collusion flags, for the batch page (open ones first)."""
    return (
        CollusionFlag.objects.filter(batch_id=batch.pk)
        .select_related("first", "second")
        .order_by(F("lifted_at").desc(nulls_first=True), "-flagged_at")
    )


def push_places(hit_id: int) -> bool:
    """Tell the provider about a published HIT's opened places (after the commit that opened
    them); a failure is logged and left for the next sync (push_pending). True when it is told."""
    hit = HIT.objects.select_related("batch").get(pk=hit_id)
    if (hit.provider_places or 0) >= hit.max_assignments:
        return True
    provider = get_provider(hit.batch.provider)
    try:
        provider.open_places(hit, hit.max_assignments)
    except ProviderError as exc:
        logger.warning("allocation batch=%s hit=%s: %s; the next sync retries", hit.batch_id, hit.pk, exc)
        Batch.objects.filter(pk=hit.batch_id).update(last_error=f"{provider.label}: opening a place: {exc}")
        return False
    return True


def push_pending(batch: Batch) -> int:
    """Push every opened place the provider has not heard of (the sync's retry); returns how
    many HITs are still behind."""
    if batch.allocation != ADAPTIVE or not get_provider(batch.provider).supports(Capability.MORE_PLACES):
        return 0
    if batch.status not in (Batch.Status.PUBLISHED, Batch.Status.STOPPED):
        return 0  # publishing tells the provider every place there is
    behind = batch.hits.filter(Q(provider_places__isnull=True) | Q(provider_places__lt=F("max_assignments")))
    return sum(not push_places(pk) for pk in behind.values_list("pk", flat=True))


def pilot_state(batch: Batch) -> dict | None:
    """For the batch page: the pilot's HITs, how many are complete, how many must be, and the
    threshold they set (None: not yet); None without a pilot."""
    found = pilot_of(batch, policy_of(batch))
    if found is None:
        return None
    pilot, fixed = found
    return {
        "hits": len(pilot),
        "needed": math.ceil(PILOT_QUORUM * len(pilot)),
        "places": fixed.max_places,
        "threshold": pilot_threshold(batch, pilot, fixed.max_places),
    }


def _fixed_untriaged(batch: Batch, provider, fixed: int) -> tuple[int, Decimal]:
    """The places and money fixed allocation would spend on every summary a triage batch covers
    (hits.selectors.covered_summaries: those the judge decided wholly too), each HIT with all its ACUs."""
    buckets = batch_buckets(batch)
    counts = (
        ACU.objects.filter(reference__document__summaries__in=covered_summaries(batch))
        .values_list("reference__document__summaries")
        .annotate(n=Count("pk"))
        .order_by()
    )
    cost = Decimal("0.00")
    for _, n in counts:
        reward = bucket_for(buckets, n).reward
        cost += fixed * (reward + provider.fee(reward, fixed))
    return len(counts) * fixed, cost


def figures(batch: Batch) -> dict | None:
    """An adaptive batch's places opened (and those the allocation added: beyond the minimum, a
    `pairs` batch's follow-up places), its settled HITs among those that can settle (not gold: a
    gold HIT keeps its places), and the money saved against fixed allocation with the batch's
    assignments per HIT on every summary (rewards and the provider's fees; negative: spent more;
    with triage, against every summary the batch covers with all its ACUs, so the triage's saving
    counts), and its pilot (pilot_state). None for a fixed batch."""
    if batch.allocation not in ADAPTIVE_KINDS:
        return None
    provider = get_provider(batch.provider)
    fixed = batch.assignments_per_hit
    spent = baseline = Decimal("0.00")
    hits = gold = places = extra = settled = 0
    groups = batch.hits.values("reward", "max_assignments", "follow_up").annotate(
        n=Count("pk"),
        extra=Sum("extra_places"),
        settled=Count("pk", filter=Q(settled=True)),
        gold=Count("pk", filter=Q(gold_answers__isnull=False)),
    )
    for row in groups.order_by():
        reward, n_places, n = row["reward"], row["max_assignments"], row["n"]
        spent += n * n_places * (reward + provider.fee(reward, n_places))
        places += n * n_places
        if row["follow_up"]:
            extra += n * n_places
            continue
        baseline += n * fixed * (reward + provider.fee(reward, fixed))
        hits, gold, extra, settled = hits + n, gold + row["gold"], extra + row["extra"], settled + row["settled"]
    fixed_places = hits * fixed
    if batch.triage_run_id is not None:
        fixed_places, baseline = _fixed_untriaged(batch, provider, fixed)
    saved = baseline - spent
    return {
        "hits": hits,
        "gold_hits": gold,
        "settling_hits": hits - gold,
        "places": places,
        "extra_places": extra,
        "fixed_places": fixed_places,
        "settled_hits": settled,
        "saved": cents(saved),
        "spent_more": cents(-saved) if saved < 0 else None,
        "pilot": pilot_state(batch),
    }
