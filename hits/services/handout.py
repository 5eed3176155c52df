"""Handing out in-house work: the next HIT for a worker, and releasing abandoned ones.

Constant time whatever the size of the database: the HIT is picked from the partial index of
HITs with an open place (`HIT.open_places`, kept in the same transaction) with
`SELECT ... FOR UPDATE SKIP LOCKED`, so concurrent workers take different HITs without
waiting and no HIT gets more assignments than asked. Published batches of one provider share
the workers: a lead-set priority first, then in turns (`FAIR_ORDER`).
The (hit, worker) unique constraint means no worker ever gets the same HIT twice, and a partial
unique constraint allows one open in-house assignment per worker, whatever clicks race.
"""

import logging
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef, Q
from django.db.models.expressions import Combinable
from django.utils import timezone

from hits import places
from hits.models import HIT, OPEN_SHARE, Assignment, Batch, QualificationAttempt, Worker, WorkerEstimate
from hits.services.qualification import is_qualified

logger = logging.getLogger(__name__)


class NoWork(Exception):
    """Nothing to hand out; the message says why."""


def open_assignment(worker: Worker) -> Assignment | None:
    """The worker's unfinished, unexpired assignment, to resume instead of taking another."""
    return (
        Assignment.objects.filter(worker=worker, status=Assignment.Status.ASSIGNED, deadline__gt=timezone.now())
        .select_related("hit__batch")
        .order_by("created_at")
        .first()
    )


def _open_to(worker: Worker, batch: Batch | None, now) -> Q | Combinable:
    """HITs of published, unexpired batches of the worker's provider whose qualification they
    hold: conditions on the HIT's batch, which the pick joins anyway (no subquery to build)."""
    passed = QualificationAttempt.objects.filter(
        test_id=OuterRef("batch__qualification_test_id"), worker_id=worker.pk, passed=True
    )
    open_to = (
        Q(batch__status=Batch.Status.PUBLISHED, batch__provider=worker.provider, batch__expires_at__gt=now)
        & (Q(batch__qualification_test__isnull=True) | Exists(passed))
        & _not_stopped(worker)
    )
    return open_to & Q(batch_id=batch.pk) if batch is not None else open_to


def _not_stopped(worker: Worker) -> Q:
    """Leaves out batches that stopped the worker at chance (hits.services.allocation.stop_at_chance).
    A stop always excludes the worker, so a worker not excluded costs no condition at all."""
    if not worker.excluded:
        return Q()
    stopped = WorkerEstimate.objects.filter(
        batch_id=OuterRef("batch_id"), worker_id=worker.pk, stopped_at__isnull=False
    )
    return Q(~Exists(stopped))


# The fair order (the partial index `hit_fair_pick`): higher batch priority first (copied on the HIT); then the HIT with the largest share of its
# places open, then the lowest turn (its place in its batch's order, as a share of the batch),
# so batches of equal priority take turns in proportion to their size instead of the oldest
# batch going first.
FAIR_ORDER = ("-priority", "-open_share", "turn", "pk")


def _pick(worker: Worker, batch: Batch | None, now, *, skip_locked: bool = True) -> HIT | None:
    """The next HIT in the fair order, locked, with its batch's time allowed (`duration`, seconds)."""
    return (
        HIT.objects.select_for_update(skip_locked=skip_locked, of=("self",))
        .filter(_open_to(worker, batch, now), open_places__gt=0)
        .annotate(
            duration=F("batch__assignment_duration_seconds"),
            open_share=OPEN_SHARE,
        )
        .filter(~Exists(Assignment.objects.filter(hit_id=OuterRef("pk"), worker_id=worker.pk)))
        .order_by(*FAIR_ORDER)
        .first()
    )


def _candidate_hits(worker: Worker, batch: Batch | None):
    """HITs with a free place for the worker, emptiest first (Prolific sessions take several)."""
    now = timezone.now()
    hits = HIT.objects.filter(
        batch__status=Batch.Status.PUBLISHED,
        batch__provider=worker.provider,
        batch__expires_at__gt=now,
        open_places__gt=0,
    ).exclude(assignments__worker=worker)
    hits = hits.filter(_not_stopped(worker))
    if batch is not None:
        hits = hits.filter(batch=batch)
    return hits.order_by("-open_places", "pk")


def _resumable(worker: Worker, now) -> Assignment | None:
    """The worker's open in-house assignment to resume; one past its deadline is expired
    here (the beat task may not have run yet) so its place reopens."""
    current = (
        Assignment.objects.filter(worker_id=worker.pk, status=Assignment.Status.ASSIGNED, external_id="")
        .select_related("hit__batch")
        .order_by("created_at")
        .first()
    )
    if current is not None and current.deadline and current.deadline <= now:
        Assignment.objects.filter(pk=current.pk, status=Assignment.Status.ASSIGNED).update(
            status=Assignment.Status.EXPIRED
        )
        places.refresh(hit_ids=[current.hit_id])
        return _resumable(worker, now)
    return current


def _take(worker: Worker, batch: Batch | None, now) -> Assignment | None:
    """Pick a HIT and hold one of its places, atomically; None when none is open. Raises
    IntegrityError when the worker holds an open in-house assignment already.

    The pick, the insert and the place count in one transaction."""
    with transaction.atomic():
        # HITs other handouts hold this instant are skipped; only when every open HIT is
        # held (the last places of a batch) wait for them, then the place count is re-read.
        hit = _pick(worker, batch, now) or _pick(worker, batch, now, skip_locked=False)
        if hit is None:
            return None
        allowed = timedelta(seconds=hit.duration)  # type: ignore[attr-defined]  # annotated by _pick
        assignment = Assignment.objects.create(hit=hit, worker=worker, deadline=now + allowed)
        places.take_one(hit.pk)
        return assignment


def next_assignment(worker: Worker, batch: Batch | None = None) -> Assignment:
    """Resume the worker's open assignment or give them a new one; raises NoWork.

    Three statements in one transaction when a place is handed out: the pick, the insert and
    the place count. The database says whether the worker holds an open assignment already
    (at most one open in-house assignment per worker, a partial unique constraint), so
    parallel clicks of one worker end with one assignment, the others resuming it."""
    if worker.blocked:
        raise NoWork("Your account is blocked from new tasks.")
    batch_id = batch.pk if batch is not None else None
    for _ in range(3):
        now = timezone.now()
        try:
            assignment = _take(worker, batch, now)
        except IntegrityError:  # an open assignment (maybe a parallel click's): resume it
            assignment = _resumable(worker, now)
            if assignment is None:
                continue  # it was overdue and has just been expired: try again
            return assignment
        if assignment is None:
            assignment = _resumable(worker, now)  # nothing new, but their own work is open
        if assignment is not None:
            return assignment
        # No open place: places held past their deadline reopen here (no beat needed), then
        # the pick runs again.
        if not release_overdue(now=now, provider=worker.provider, batch_id=batch_id, limit=RELEASE_LIMIT):
            break
    unqualified = Batch.objects.filter(
        status=Batch.Status.PUBLISHED, provider=worker.provider, qualification_test__isnull=False
    )
    if any(not is_qualified(worker, b) for b in unqualified):
        raise NoWork("No task is open to you right now. Pass the qualification test to get more.")
    raise NoWork("No task is waiting right now. Come back later.")


# At most this many HITs' overdue assignments are released by one handout (a bounded write;
# the next handout releases more).
RELEASE_LIMIT = 50


def release_overdue(
    *, now=None, provider: str | None = None, batch_id: int | None = None, limit: int | None = None
) -> int:
    """Release assignments whose time ran out without a submission (status expired); their
    places reopen. Returns how many were released.

    The beat task calls it for everything; the handout calls it for the batches it hands out
    (`provider`, `batch_id`, at most `limit` HITs) when it finds no open place, so the
    embedded mode (no beat) releases them too. The HITs are locked first with SKIP LOCKED:
    a HIT a handout holds this instant is left for the next call, so this never waits for a
    handout, and no handout adds an assignment to a HIT while its places are recounted."""
    now = now or timezone.now()
    due = Assignment.objects.filter(status=Assignment.Status.ASSIGNED, deadline__lte=now)
    if provider is not None:
        due = due.filter(hit__batch__provider=provider)
    if batch_id is not None:
        due = due.filter(hit__batch_id=batch_id)
    with transaction.atomic():
        hit_ids = due.order_by().values_list("hit_id", flat=True).distinct()
        if limit is not None:
            hit_ids = hit_ids[:limit]
        held = list(
            HIT.objects.select_for_update(skip_locked=True).filter(pk__in=list(hit_ids)).values_list("pk", flat=True)
        )
        if not held:
            return 0
        released = due.filter(hit_id__in=held).update(status=Assignment.Status.EXPIRED)
        places.refresh(hit_ids=held)
    if released:
        logger.info(
            "released %d overdue assignment(s) on %d HIT(s) (provider %s, batch %s)",
            released,
            len(held),
            provider or "any",
            batch_id or "any",
        )
    return released


def expire_abandoned(now=None) -> int:
    """Release every assignment whose time ran out without a submission (the beat task)."""
    return release_overdue(now=now)
