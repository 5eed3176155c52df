"""Coalesced recomputes after submissions, exclusions and stale pages.

A submission (after its transaction committed) asks for a recompute of its dataset; a stale
round page asks for one of that round. The first ask sets `RecomputeRequest.queued` (with
`queued_at`) by a conditional UPDATE and enqueues one task a few seconds later; every ask
while it is queued finds the flag set and does nothing. The task clears the flag before it
reads, so work submitted during a computation queues exactly one more, and the last run
always sees every submission.

A queued flag expires: when its task message was lost (a worker killed while holding it, the
broker down), the next ask after `SCORING_RECOMPUTE_DELAY + SCORING_RECOMPUTE_GRACE` seconds
queues again, and the beat task `repair_stale_recomputes` does so even when nobody asks.
Enqueue failures are logged and undo the flag; they never reach the worker who submitted.

Without a broker (the embedded default) nothing is enqueued: pages compute in process
(`dashboard.scores_run`, through `config.dispatch`).
"""

import logging
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from config.dispatch import runs_in_process
from scoring.models import RecomputeRequest, ScoringRun

logger = logging.getLogger(__name__)

# Sent by name: the task module imports this one (no import cycle).
RECOMPUTE_TASK = "scoring.tasks.recompute_scores"


def _expiry() -> timedelta:
    return timedelta(seconds=settings.SCORING_RECOMPUTE_DELAY + settings.SCORING_RECOMPUTE_GRACE)


# (dataset, round) pairs whose request row this process has seen: a burst of submissions then
# costs one conditional UPDATE each, not an INSERT attempt too.
_KNOWN_ROWS: set[tuple[int, int]] = set()


def _set_flag(dataset_id: int, round_id: int, now) -> bool:
    """The conditional UPDATE: set the flag unless it is set and not expired."""
    free = Q(queued=False) | Q(queued_at__isnull=True) | Q(queued_at__lt=now - _expiry())
    return bool(
        RecomputeRequest.objects.filter(free, dataset_id=dataset_id, round_id=round_id).update(
            queued=True, queued_at=now
        )
    )


def _claim_flag(dataset_id: int, round_id: int) -> bool:
    now = timezone.now()
    if _set_flag(dataset_id, round_id, now):
        _KNOWN_ROWS.add((dataset_id, round_id))
        return True
    if (dataset_id, round_id) in _KNOWN_ROWS:
        return False  # the row exists and is queued
    try:
        with transaction.atomic():
            RecomputeRequest.objects.create(dataset_id=dataset_id, round_id=round_id, queued=True, queued_at=now)
    except IntegrityError:
        _KNOWN_ROWS.add((dataset_id, round_id))
        return False  # the row exists and is queued (not yet expired)
    _KNOWN_ROWS.add((dataset_id, round_id))
    return True


def request_recompute(dataset_id: int, batch_id: int | None = None) -> bool:
    """Ask for a recompute of a dataset (or one round); True when this call enqueued the task."""
    if runs_in_process():
        return False  # no broker: computed on demand by the pages
    round_id = batch_id or 0
    if not _claim_flag(dataset_id, round_id):
        return False
    try:
        countdown = recompute_countdown(dataset_id, batch_id)
        current_app.send_task(RECOMPUTE_TASK, args=[dataset_id, batch_id], countdown=countdown)
    except Exception:
        logger.exception(
            "could not queue the recompute of dataset %s round %s; it will be retried", dataset_id, round_id
        )
        RecomputeRequest.objects.filter(dataset_id=dataset_id, round_id=round_id).update(queued=False)
        return False
    logger.info("queued a recompute of dataset %s round %s in %s s", dataset_id, round_id, countdown)
    return True


def recompute_countdown(dataset_id: int, batch_id: int | None = None) -> int:
    """Seconds until a queued recompute runs: SCORING_RECOMPUTE_DELAY, or longer when the last
    run of this scope took long, so that under a steady stream of submissions recomputes take
    at most SCORING_RECOMPUTE_MAX_SHARE percent of a worker's time (a run of d seconds is
    queued d x 100 / share seconds after the previous one was). Never past half the flag's
    grace beyond the delay, so a queued flag does not expire before its task runs."""
    delay, share = settings.SCORING_RECOMPUTE_DELAY, settings.SCORING_RECOMPUTE_MAX_SHARE
    if share >= 100:
        return delay
    last = (
        ScoringRun.objects.filter(
            dataset_id=dataset_id, batch_id=batch_id, kind=ScoringRun.Kind.SCORES, status=ScoringRun.Status.DONE
        )
        .order_by("-started_at", "-id")
        .values_list("seconds", flat=True)
        .first()
    )
    if not last:
        return delay
    return int(min(max(delay, last * 100 / share), delay + settings.SCORING_RECOMPUTE_GRACE // 2))


def repair_stuck(now=None) -> int:
    """Re-queue requests whose flag expired (their task was lost); returns how many."""
    now = now or timezone.now()
    stuck = list(
        RecomputeRequest.objects.filter(queued=True, queued_at__lt=now - _expiry()).values_list(
            "dataset_id", "round_id"
        )
    )
    repaired = 0
    for dataset_id, round_id in stuck:
        logger.warning("recompute of dataset %s round %s was queued but never ran: queuing again", dataset_id, round_id)
        repaired += request_recompute(dataset_id, round_id or None)
    return repaired


def on_submission(sender, batch_id: int, dataset_id: int | None = None, **kwargs) -> None:
    from hits.models import Batch

    if dataset_id is None:
        dataset_id = Batch.objects.filter(pk=batch_id).values_list("dataset_id", flat=True).first()
    if dataset_id is not None:
        request_recompute(dataset_id)
