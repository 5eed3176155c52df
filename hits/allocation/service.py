"""The adaptive allocation decision, taken in the transaction that stores a submission.

When the last working place of an adaptive batch's HIT is submitted (no assignment still being
worked, no open place), the HIT's counted judgments (hits.selectors.counted_judgments: excluded
workers and unconfirmed provider work left out, as everywhere) give each of its ACUs a posterior
with the workers' current estimates (hits.models.WorkerEstimate, refitted after submissions by
scoring/runs/worker_estimates.py; the fallback of hits.allocation.policy for workers without one). If an ACU
is unsettled and the HIT holds fewer than the maximum places, one more place opens
(hits.places.open_one_more). The HIT row is locked first (select_for_update), so a parallel
handout or submission on the same HIT waits: no HIT is over-filled and no decision is lost.
Gold HITs keep their places (their answers are known).
"""

import logging
from decimal import Decimal

import numpy as np
from django.db import transaction
from django.db.models import Count, F, Q, Sum
from django.utils import timezone

from hits import exclusion, places
from hits.allocation.policy import (
    ADAPTIVE,
    AT_CHANCE,
    Policy,
    at_chance,
    hit_settled,
    pair_posteriors,
    settled,
    wants_place,
)
from hits.models import HIT, Assignment, Batch, Worker, WorkerEstimate
from hits.money import cents
from hits.provider_interface import Capability, ProviderError, get_provider
from hits.release import release_overdue
from hits.selectors import counted_judgments

logger = logging.getLogger(__name__)


def policy_of(batch: Batch) -> Policy:
    return Policy(
        batch.allocation,
        batch.allocation_min,
        batch.allocation_max,
        batch.allocation_threshold,
        batch.allocation_max_sd,
    )


def hit_posteriors(hit: HIT, batch: Batch) -> np.ndarray:
    """P(present) of each ACU of the HIT that has counted judgments."""
    rows = list(counted_judgments(hit=hit).values_list("acu_id", "assignment__worker_id", "present"))
    if not rows:
        return np.array([])
    acus, workers, said = (np.array(x) for x in zip(*rows, strict=True))
    estimates = {
        w: (s, p)
        for w, s, p in WorkerEstimate.objects.filter(
            batch_id=batch.pk, worker_id__in=set(workers.tolist())
        ).values_list("worker_id", "sensitivity", "specificity")
    }
    nan = (float("nan"), float("nan"))
    sens = np.array([estimates.get(int(w), nan)[0] for w in workers], dtype=float)
    spec = np.array([estimates.get(int(w), nan)[1] for w in workers], dtype=float)
    _, items = np.unique(acus, return_inverse=True)
    prior = batch.allocation_prior if batch.allocation_prior is not None else 0.5
    return pair_posteriors(items, said.astype(bool), sens, spec, prior)


def decide(hit_id: int) -> bool:
    """After a submission on this HIT (in its transaction): open one more place if the policy
    asks for it. True when a place opened."""
    hit = HIT.objects.select_for_update(of=("self",)).select_related("batch").get(pk=hit_id)
    batch = hit.batch
    if batch.allocation != ADAPTIVE or hit.gold_answers:
        return False
    pending = Q(status=Assignment.Status.ASSIGNED) | Q(status__in=Assignment.COUNTED, confirmed=False)
    if hit.open_places or hit.assignments.filter(pending).exists():
        return False  # places still being worked (or answers the provider has not confirmed): they come first
    posterior = hit_posteriors(hit, batch)
    policy = policy_of(batch)
    all_settled = hit_settled(policy, posterior)
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


def stop_at_chance(batch: Batch) -> list[int]:
    """The batch's opt-in stop (batch.stop_after): every worker whose current estimates are at
    chance after at least stop_after judgments on ACUs judged twice, not stopped yet and not
    lifted by the lead, is stopped: no more of this batch's work (hits.services.handout) and
    excluded, as the lead's Exclude (their judgments leave the aggregation and the scores, so
    every round they worked in gets a new version). A task they are working on is not taken
    away (as at a lead's stop: it may still be submitted, and a provider pays for it); places
    past their deadline go back now (hits.release). Pay is not touched: approving or rejecting
    stays the lead's review. Returns the workers stopped."""
    if batch.allocation != ADAPTIVE or not batch.stop_after:
        return []
    rows = list(
        WorkerEstimate.objects.filter(
            batch_id=batch.pk, stopped_at__isnull=True, stop_lifted_at__isnull=True, judged__gte=batch.stop_after
        ).values_list("pk", "worker_id", "sensitivity", "specificity", "judged")
    )
    if not rows:
        return []
    pks, workers, sens, spec, judged = (np.array(x) for x in zip(*rows, strict=True))
    chance = at_chance(sens, spec, judged, batch.stop_after)
    stopped = []
    now = timezone.now()
    with transaction.atomic():
        for pk, worker, s, p, n in zip(
            pks[chance], workers[chance], sens[chance], spec[chance], judged[chance], strict=True
        ):
            reason = (
                f"at chance: sensitivity {s:.2f} + specificity {p:.2f} - 1 = {s + p - 1:.2f}, below {AT_CHANCE:g}, "
                f"after {n} judgments on ACUs judged twice (the batch stops workers at chance after {batch.stop_after})"
            )
            was_excluded = Worker.objects.filter(pk=int(worker), excluded=True).exists()
            WorkerEstimate.objects.filter(pk=int(pk)).update(
                stopped_at=now, stop_reason=reason, excluded_before=was_excluded
            )
            exclusion.set_excluded(int(worker), True)
            logger.info("allocation batch=%s: stopped worker=%s, %s", batch.pk, int(worker), reason)
            stopped.append(int(worker))
    if stopped:
        release_overdue(batch_id=batch.pk)
    return stopped


def lift_stop(batch: Batch, worker_id: int, *, by=None) -> bool:
    """The lead lifts a stop: the worker gets the batch's work again and counts again (not
    excluded, unless another batch still stops them or the lead had excluded them before); never
    stopped again in this batch. True when a stop was lifted."""
    with transaction.atomic():
        stop = (
            WorkerEstimate.objects.select_for_update()
            .filter(batch_id=batch.pk, worker_id=worker_id, stopped_at__isnull=False)
            .first()
        )
        if stop is None:
            return False
        WorkerEstimate.objects.filter(pk=stop.pk).update(stopped_at=None, stop_lifted_at=timezone.now())
        still = WorkerEstimate.objects.filter(worker_id=worker_id, stopped_at__isnull=False).exists()
        if not still and not stop.excluded_before:
            exclusion.set_excluded(worker_id, False)
    logger.info("allocation batch=%s: the stop of worker=%s lifted by %s", batch.pk, worker_id, by or "the lead")
    return True


def stopped_workers(batch: Batch):
    """The batch's stopped workers and lifted stops, for the batch page (newest first)."""
    return (
        WorkerEstimate.objects.filter(batch_id=batch.pk)
        .filter(Q(stopped_at__isnull=False) | Q(stop_lifted_at__isnull=False))
        .select_related("worker")
        .order_by(F("stopped_at").desc(nulls_last=True), "-stop_lifted_at")
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


def figures(batch: Batch) -> dict | None:
    """An adaptive batch's places opened (and those beyond the minimum), its settled HITs and the
    money saved against fixed allocation with the batch's assignments per HIT (rewards and the
    provider's fees; negative: spent more). None for a fixed batch."""
    if batch.allocation != ADAPTIVE:
        return None
    provider = get_provider(batch.provider)
    fixed = batch.assignments_per_hit
    saved = Decimal("0.00")
    hits = places = extra = settled = 0
    groups = batch.hits.values("reward", "max_assignments").annotate(
        n=Count("pk"), extra=Sum("extra_places"), settled=Count("pk", filter=Q(settled=True))
    )
    for row in groups.order_by():
        reward, n_places, n = row["reward"], row["max_assignments"], row["n"]
        saved += (fixed - n_places) * n * reward
        saved += n * (fixed * provider.fee(reward, fixed) - n_places * provider.fee(reward, n_places))
        hits, places, extra, settled = hits + n, places + n * n_places, extra + row["extra"], settled + row["settled"]
    return {
        "hits": hits,
        "places": places,
        "extra_places": extra,
        "fixed_places": hits * fixed,
        "settled_hits": settled,
        "saved": cents(saved),
        "spent_more": cents(-saved) if saved < 0 else None,
    }
