"""Worker estimates of adaptive batches: Dawid-Skene refitted on a batch's counted judgments.

The allocation decision (hits/allocation/service.py) reads the estimates of a HIT's workers and
the batch's prior when a submission completes the HIT's places; this module keeps them current.
After a submission to an adaptive batch (the `submission_stored` signal) a refit is dispatched
(scoring.tasks.refit_on_submission, coalesced by scoring.runs.recompute as the score recomputes
are: at most one queued per batch, REFIT_INTERVAL seconds later with a broker); a refit reads every counted judgment of the batch
(gold HITs included: they tell workers apart too), so the latest one always sees them all. With
the batch's opt-in stop_after, the refit then stops the workers at chance
(hits.allocation.service.stop_at_chance); a stopped worker is excluded, so later refits no longer
see their judgments and their last estimates stay.
"""

import logging

import numpy as np
from django.db import transaction

from hits.allocation.policy import ADAPTIVE
from hits.allocation.service import stop_at_chance
from hits.models import Batch, WorkerEstimate
from hits.selectors import counted_judgments
from scoring.stats.dawid_skene import dawid_skene

logger = logging.getLogger(__name__)

REFIT_INTERVAL = 10  # seconds a queued refit waits, gathering the submissions of that time


def refit_estimates(batch_id: int) -> int:
    """Fit Dawid-Skene to the batch's counted judgments and store every worker's estimates and
    the batch's prior; returns the number of workers estimated."""
    batch = Batch.objects.filter(pk=batch_id, allocation=ADAPTIVE).first()
    if batch is None:
        return 0
    rows = list(
        counted_judgments(batch=batch).values_list(
            "assignment__hit__summary_id", "acu_id", "assignment__worker_id", "present"
        )
    )
    if not rows:
        return 0
    summaries, acus, workers, said = (np.array(x) for x in zip(*rows, strict=True))
    items = summaries.astype(np.int64) * (int(acus.max()) + 1) + acus
    fit = dawid_skene(items, workers, said.astype(bool))
    if np.isnan(fit.sensitivity).all():
        return 0  # no pair has two labels yet: nothing to tell workers apart
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
                    sensitivity=float(s),
                    specificity=float(p),
                    labels=int(n),
                    judged=int(k),
                )
                for w, s, p, n, k in zip(fit.workers, fit.sensitivity, fit.specificity, labels, judged, strict=True)
            ],
            update_conflicts=True,
            unique_fields=["batch", "worker"],
            update_fields=["sensitivity", "specificity", "labels", "judged", "updated_at"],
        )
        Batch.objects.filter(pk=batch.pk).update(allocation_prior=fit.prior)
        stop_at_chance(batch)  # the batch's opt-in: workers at chance get no more of its work
    logger.info(
        "allocation batch=%s: refitted %d workers on %d judgments (prior %.3f, %d EM iterations)",
        batch.pk,
        len(fit.workers),
        len(rows),
        fit.prior,
        fit.iterations,
    )
    return len(fit.workers)
