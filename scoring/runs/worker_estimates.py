"""Worker estimates of adaptive batches: Dawid-Skene refitted on a batch's counted judgments.

The allocation decision (hits/allocation/service.py) reads the estimates of a HIT's workers and
the batch's prior when a submission completes the HIT's places; this module keeps them current.
After a submission to an adaptive batch (the `submission_stored` signal) a refit is dispatched
(scoring.tasks.refit_on_submission, coalesced by scoring.runs.recompute as the score recomputes
are: at most one queued per batch, REFIT_INTERVAL seconds later with a broker); a refit reads every
counted judgment of the batch (gold HITs included, their ACUs clamped to the gold answers:
scoring.stats.dawid_skene), so the latest one always sees them all. It also stores what gold alone
says of each worker (counts, credible intervals, the bound on sensitivity + specificity - 1:
scoring.stats.gold_evidence), flags pairs agreeing far beyond their gold accuracy
(hits.allocation.service.flag_collusion) and, with the batch's opt-in stop_after, stops the workers
whom gold shows at chance (hits.allocation.service.stop_at_chance); a stopped worker's judgments
leave the batch, so later refits no longer see them and their last estimates stay. Last, the gold guard
(hits.allocation.guard.guard_on_gold): a batch whose rule, replayed on its gold answers, is worse than
fixed places stops saving. And a `pairs` batch's triage held back until its gold round is bought is decided
(hits.services.triage_when.decide_triage: the stop's gold evidence says whether spammers are there).
"""

import logging

import numpy as np
from django.db import transaction

from hits.allocation.guard import guard_on_gold
from hits.allocation.policy import ADAPTIVE_KINDS
from hits.allocation.service import flag_collusion, stop_at_chance
from hits.models import Batch, WorkerEstimate
from hits.selectors import counted_judgments
from hits.services.triage_when import decide_triage, gold_round, pending
from scoring.stats.dawid_skene import dawid_skene
from scoring.stats.gold_evidence import BOUND_LEVEL, GoldEvidence, collusion, gold_evidence

logger = logging.getLogger(__name__)

REFIT_INTERVAL = 10  # seconds a queued refit waits, gathering the submissions of that time


def batch_gold(batch: Batch, acu_base: int) -> tuple[np.ndarray, np.ndarray]:
    """(item codes, answers) of the batch's gold ACUs, items coded as `refit_estimates` codes them."""
    keys, answers = [], []
    for summary, gold in batch.hits.filter(gold_answers__isnull=False).values_list("summary_id", "gold_answers"):
        for acu, present in (gold or {}).items():
            keys.append(int(summary) * acu_base + int(acu))
            answers.append(bool(present))
    return np.array(keys, dtype=np.int64), np.array(answers, dtype=bool)


def refit_estimates(batch_id: int) -> int:
    """Fit Dawid-Skene anchored to the batch's gold to its counted judgments, store every worker's
    estimates, gold evidence and the batch's prior, flag pairs agreeing beyond their gold accuracy
    and apply the batch's stop; returns the number of workers estimated."""
    batch = Batch.objects.filter(pk=batch_id, allocation__in=ADAPTIVE_KINDS).first()
    if batch is None:
        return 0
    # the held-back triage is decided on evidence that holds every gold answer: the gold round bought before the read
    decide = pending(batch) and gold_round(batch).bought
    rows = list(
        counted_judgments(batch=batch).values_list(
            "assignment__hit__summary_id", "acu_id", "assignment__worker_id", "present"
        )
    )
    if not rows:
        return 0
    summaries, acus, workers, said = (np.array(x) for x in zip(*rows, strict=True))
    said = said.astype(bool)
    acu_base = int(acus.max()) + 1
    items = summaries.astype(np.int64) * acu_base + acus
    gold = batch_gold(batch, acu_base)
    fit = dawid_skene(items, workers, said, gold=gold)
    if np.isnan(fit.sensitivity).all():
        return 0  # no pair has two labels and no gold yet: nothing tells workers apart
    evidence = gold_evidence(items, workers, said, *gold)
    index = np.searchsorted(fit.workers, workers)
    labels = np.bincount(index, minlength=len(fit.workers))
    _, item_codes, per_item = np.unique(items, return_inverse=True, return_counts=True)
    judged = np.bincount(index[per_item[item_codes] >= 2], minlength=len(fit.workers))
    with transaction.atomic():
        WorkerEstimate.objects.bulk_create(
            [
                WorkerEstimate(
                    batch_id=batch.pk,
                    worker_id=int(w),
                    sensitivity=float(fit.sensitivity[i]),
                    specificity=float(fit.specificity[i]),
                    labels=int(labels[i]),
                    judged=int(judged[i]),
                    gold_judged=int(evidence.gold_judged[i]),
                    chance_upper=float(evidence.chance_upper[i]),
                    gold=_gold_of(evidence, i),
                )
                for i, w in enumerate(fit.workers)  # the same workers, sorted, in both
            ],
            update_conflicts=True,
            unique_fields=["batch", "worker"],
            update_fields=[
                "sensitivity",
                "specificity",
                "labels",
                "judged",
                "gold_judged",
                "chance_upper",
                "gold",
                "updated_at",
            ],
        )
        Batch.objects.filter(pk=batch.pk).update(allocation_prior=fit.prior)
        flag_collusion(batch, collusion(items, workers, said, evidence))
        stop_at_chance(batch)  # the batch's opt-in: workers whom gold shows at chance get no more of its work
        guard_on_gold(batch)  # the batch's rule worse than fixed places on gold: it stops saving
        if decide:  # a `pairs` batch's triage held back until its gold round (hits.services.triage_when)
            decide_triage(batch.pk)
    logger.info(
        "allocation batch=%s: refitted %d workers on %d judgments, %d on gold (prior %.3f, %d EM iterations)",
        batch.pk,
        len(fit.workers),
        len(rows),
        int(evidence.gold_judged.sum()),
        fit.prior,
        fit.iterations,
    )
    return len(fit.workers)


def _gold_of(evidence: GoldEvidence, i: int) -> dict:
    """One worker's gold counts and credible intervals, stored as the evidence the lead reads."""
    return {
        "positives": int(evidence.positives[i]),
        "said_present": int(evidence.said_present[i]),
        "negatives": int(evidence.negatives[i]),
        "said_absent": int(evidence.said_absent[i]),
        "sensitivity": [round(float(x), 4) for x in evidence.sensitivity_interval[i]],
        "specificity": [round(float(x), 4) for x in evidence.specificity_interval[i]],
        "bound_level": BOUND_LEVEL,
    }
