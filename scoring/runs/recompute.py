"""Coalesced recomputes: of a dataset's and a round's scores after the writes that change their
judgments (submissions, reviews, exclusions, releases, imports: `hits.versions.bump`), or a
lead's "Recompute now"; of an adaptive batch's worker estimates after its submissions. The one
coalescing scheme of the app's tasks.

The first ask sets `RecomputeRequest.queued` (with `queued_at`) of its (dataset, round, task) by
a conditional UPDATE and dispatches one task (`config.dispatch`: a few seconds later with a
broker; in the embedded mode on a background thread, or now when LONG_TASKS_IN_BACKGROUND is
off); every ask while it is queued finds the flag set and does nothing. The task clears the flag
before it reads (`claimed`), so work submitted during a computation queues exactly one more, and
the last run always sees every submission.

A queued flag expires: when its task message was lost (a worker killed while holding it, the
broker down), the next ask after `SCORING_RECOMPUTE_DELAY + SCORING_RECOMPUTE_GRACE` seconds
queues again, and the beat task `repair_stale_recomputes` does so even when nobody asks.
Enqueue failures are logged and undo the flag; they never reach the worker who submitted.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from config.dispatch import dispatch
from scoring.models import RecomputeRequest, ScoringRun

logger = logging.getLogger(__name__)

# Sent by name: the task module imports this one (no import cycle).
RECOMPUTE_TASK = "scoring.tasks.recompute_scores"
REFIT_TASK = "scoring.tasks.refit_allocation"
SCORES, REFIT = RecomputeRequest.Task.SCORES, RecomputeRequest.Task.REFIT


def _expiry() -> timedelta:
    return timedelta(seconds=settings.SCORING_RECOMPUTE_DELAY + settings.SCORING_RECOMPUTE_GRACE)


# (dataset, round, task) keys whose request row this process has seen: a burst of submissions
# then costs one conditional UPDATE each, not an INSERT attempt too.
_KNOWN_ROWS: set[tuple[int, int, str]] = set()


def _set_flag(key: tuple[int, int, str], now) -> bool:
    """The conditional UPDATE: set the flag unless it is set and not expired."""
    dataset_id, round_id, task = key
    free = Q(queued=False) | Q(queued_at__isnull=True) | Q(queued_at__lt=now - _expiry())
    return bool(
        RecomputeRequest.objects.filter(free, dataset_id=dataset_id, round_id=round_id, task=task).update(
            queued=True, queued_at=now
        )
    )


def _claim_flag(key: tuple[int, int, str]) -> bool:
    now = timezone.now()
    if _set_flag(key, now):
        _KNOWN_ROWS.add(key)
        return True
    if key in _KNOWN_ROWS:
        return False  # the row exists and is queued
    dataset_id, round_id, task = key
    try:
        with transaction.atomic():
            RecomputeRequest.objects.create(
                dataset_id=dataset_id, round_id=round_id, task=task, queued=True, queued_at=now
            )
    except IntegrityError:
        _KNOWN_ROWS.add(key)
        return False  # the row exists and is queued (not yet expired)
    _KNOWN_ROWS.add(key)
    return True


def _release(key: tuple[int, int, str]) -> None:
    dataset_id, round_id, task = key
    RecomputeRequest.objects.filter(dataset_id=dataset_id, round_id=round_id, task=task).update(queued=False)


def claimed(dataset_id: int, round_id: int | None, task: str = SCORES) -> None:
    """A task starts: its flag is free again (before it reads), so a later ask queues one more."""
    _release((dataset_id, round_id or 0, task))


def _request(task: str, dataset_id: int, round_id: int, args: list, countdown) -> bool:
    key = (dataset_id, round_id, task)
    if not _claim_flag(key):
        return False
    what = "recompute" if task == SCORES else "refit"

    def failed():
        logger.warning("could not queue the %s of dataset %s round %s; it will be retried", what, dataset_id, round_id)
        _release(key)

    try:
        dispatch(
            RECOMPUTE_TASK if task == SCORES else REFIT_TASK,
            *args,
            countdown=countdown() if callable(countdown) else countdown,
            background=True,
            on_failure=failed,
        )
    except Exception:
        logger.exception("the %s of dataset %s round %s failed; it will be retried", what, dataset_id, round_id)
        _release(key)
        return False
    logger.info("dispatched the %s of dataset %s round %s", what, dataset_id, round_id)
    return True


def request_recompute(dataset_id: int, batch_id: int | None = None) -> bool:
    """Ask for a recompute of a dataset's (or one round's) scores; True when this call dispatched it."""
    return _request(
        SCORES, dataset_id, batch_id or 0, [dataset_id, batch_id], lambda: recompute_countdown(dataset_id, batch_id)
    )


def recompute_queued(dataset_id: int, batch_id: int | None = None) -> bool:
    """A recompute of this scope's scores is queued and has not started."""
    return RecomputeRequest.objects.filter(
        dataset_id=dataset_id, round_id=batch_id or 0, task=SCORES, queued=True
    ).exists()


# A scores run "running" longer than this is taken for one whose process died mid-run.
RUN_LOST_AFTER = timedelta(hours=1)


def recompute_pending(dataset_id: int, batch_id: int | None = None) -> bool:
    """A recompute of this scope's scores is on its way: queued (a flag not expired: an expired
    one's task was lost, until the beat or the next ask queues it again) or running (a scores run
    of the scope started within RUN_LOST_AFTER and not finished). What the pages' "being
    recomputed" rests on."""
    now = timezone.now()
    queued = RecomputeRequest.objects.filter(
        dataset_id=dataset_id, round_id=batch_id or 0, task=SCORES, queued=True, queued_at__gte=now - _expiry()
    )
    running = ScoringRun.objects.filter(
        dataset_id=dataset_id,
        batch_id=batch_id,
        kind=ScoringRun.Kind.SCORES,
        status=ScoringRun.Status.RUNNING,
        started_at__gte=now - RUN_LOST_AFTER,
    )
    return queued.exists() or running.exists()


def request_refit(dataset_id: int, batch_id: int, interval: int) -> bool:
    """Ask for a refit of an adaptive batch's worker estimates, `interval` seconds later with a
    broker (gathering the submissions of that time); True when this call dispatched it."""
    return _request(REFIT, dataset_id, batch_id, [batch_id], interval)


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
            "dataset_id", "round_id", "task"
        )
    )
    repaired = 0
    for dataset_id, round_id, task in stuck:
        logger.warning("%s of dataset %s round %s was queued but never ran: queuing again", task, dataset_id, round_id)
        if task == REFIT:
            repaired += request_refit(dataset_id, round_id, 0)
        else:
            repaired += request_recompute(dataset_id, round_id or None)
    return repaired


def on_judgments_changed(
    sender, dataset_id: int, batch_id: int | None = None, rating: bool | None = None, **kwargs
) -> None:
    """A write that changed counted judgments committed (`hits.signals.judgments_changed`): ask
    for the recompute of the dataset's scores and, with a round, of the round's (coalesced; a
    task that finds its scope's run current stores none). The pages only read the stored runs.
    A rating batch's ratings (`rating` True) change no ACU score: nothing to recompute."""
    if rating:
        return
    request_recompute(dataset_id)
    if batch_id:
        request_recompute(dataset_id, batch_id)
