"""Coalesced recomputes after submissions.

A submission (after its transaction committed) asks for a recompute of its dataset. The
first ask sets `RecomputeRequest.queued` with a conditional UPDATE and enqueues one task a
few seconds later; every ask while it is queued finds the flag set and does nothing. The
task clears the flag before it reads, so work submitted during a computation queues exactly
one more. A burst of 500 submissions thus costs a handful of recomputes, and the last one
always sees every submission.

Without a broker (the embedded default) nothing is enqueued: the flag marks the dataset
stale and pages compute on demand (`services.current_scores`).
"""
from django.conf import settings
from django.db import IntegrityError, transaction

from .models import RecomputeRequest


def request_recompute(dataset_id: int) -> bool:
    """Ask for a recompute; returns True when this call enqueued the task."""
    if RecomputeRequest.objects.filter(dataset_id=dataset_id, queued=False).update(queued=True) == 0:
        try:
            with transaction.atomic():
                RecomputeRequest.objects.create(dataset_id=dataset_id, queued=True)
        except IntegrityError:
            return False  # the row exists and is already queued
    from .tasks import recompute_scores

    if recompute_scores.app.conf.task_always_eager:
        return False  # no broker: computed on demand by the pages
    recompute_scores.apply_async(args=[dataset_id], countdown=settings.SCORING_RECOMPUTE_DELAY)
    return True


def claim(dataset_id: int) -> None:
    """Called by the task before it reads: later submissions will queue a new task."""
    RecomputeRequest.objects.filter(dataset_id=dataset_id).update(queued=False)


def on_submission(sender, batch_id: int, **kwargs) -> None:
    from hits.models import Batch

    dataset_id = Batch.objects.filter(pk=batch_id).values_list("dataset_id", flat=True).first()
    if dataset_id is not None:
        request_recompute(dataset_id)
