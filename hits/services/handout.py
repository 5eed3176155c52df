"""Handing out in-house work: the next HIT for a worker, and releasing abandoned ones.

Constant time whatever the size of the database: the worker's row is locked (so parallel
clicks of one worker get one assignment), and the HIT is picked from the partial index of
HITs with an open place (`HIT.open_places`, kept in the same transaction) with
`SELECT ... FOR UPDATE SKIP LOCKED`, so concurrent workers take different HITs without
waiting and no HIT gets more assignments than asked. No query reads rows of other batches;
the (hit, worker) unique constraint means no worker ever gets the same HIT twice.
"""
from datetime import timedelta

from django.db import transaction
from django.db.models import Exists, OuterRef, Q, Subquery
from django.utils import timezone

from hits import places
from hits.models import HIT, Assignment, Batch, QualificationAttempt, Worker
from hits.services.qualification import is_qualified


class NoWork(Exception):
    """Nothing to hand out; the message says why."""


def _open_assignments(worker_id: int, now):
    return Assignment.objects.filter(worker_id=worker_id, status=Assignment.Status.ASSIGNED, deadline__gt=now)


def open_assignment(worker: Worker) -> Assignment | None:
    """The worker's unfinished, unexpired assignment, to resume instead of taking another."""
    return _open_assignments(worker.pk, timezone.now()).select_related("hit__batch").order_by("created_at").first()


def _open_batches(worker: Worker, batch: Batch | None, now):
    """Published, unexpired batches of the worker's provider whose qualification they hold."""
    batches = Batch.objects.filter(status=Batch.Status.PUBLISHED, provider=worker.provider, expires_at__gt=now).filter(
        Q(qualification_test__isnull=True)
        | Exists(QualificationAttempt.objects.filter(test_id=OuterRef("qualification_test_id"), worker_id=worker.pk, passed=True))
    )
    return batches.filter(pk=batch.pk) if batch is not None else batches


def _pick(worker: Worker, batch: Batch | None, now, *, skip_locked: bool = True) -> HIT | None:
    """The HIT with the most open places (oldest batch, then oldest HIT first), locked."""
    return (
        HIT.objects.select_for_update(skip_locked=skip_locked, of=("self",))
        .select_related("batch")
        .filter(open_places__gt=0, batch_id__in=Subquery(_open_batches(worker, batch, now).values("pk")))
        .filter(~Exists(Assignment.objects.filter(hit_id=OuterRef("pk"), worker_id=worker.pk)))
        .order_by("batch_id", "-open_places", "pk")
        .first()
    )


def _candidate_hits(worker: Worker, batch: Batch | None):
    """HITs with a free place for the worker, emptiest first (Prolific sessions take several)."""
    now = timezone.now()
    hits = HIT.objects.filter(
        batch__status=Batch.Status.PUBLISHED, batch__provider=worker.provider, batch__expires_at__gt=now, open_places__gt=0
    ).exclude(assignments__worker=worker)
    if batch is not None:
        hits = hits.filter(batch=batch)
    return hits.order_by("-open_places", "pk")


def next_assignment(worker: Worker, batch: Batch | None = None) -> Assignment:
    """Resume the worker's open assignment or give them a new one; raises NoWork."""
    now = timezone.now()
    with transaction.atomic():
        row = (
            Worker.objects.select_for_update(of=("self",))
            .filter(pk=worker.pk)
            .annotate(open_id=Subquery(_open_assignments(worker.pk, now).order_by("created_at").values("pk")[:1]))
            .values("blocked_at", "open_id")
            .first()
        )
        if row is None or row["blocked_at"] is not None:
            raise NoWork("Your account is blocked from new tasks.")
        if row["open_id"] is not None:
            return Assignment.objects.select_related("hit__batch").get(pk=row["open_id"])
        # HITs other handouts hold this instant are skipped; only when every open HIT is held
        # (the last places of a batch) wait for them, then the place count is read again.
        hit = _pick(worker, batch, now) or _pick(worker, batch, now, skip_locked=False)
        if hit is not None:
            assignment = Assignment.objects.create(
                hit=hit, worker=worker, deadline=now + timedelta(seconds=hit.batch.assignment_duration_seconds)
            )
            places.take_one(hit.pk)
            return assignment
    unqualified = Batch.objects.filter(
        status=Batch.Status.PUBLISHED, provider=worker.provider, qualification_test__isnull=False
    )
    if any(not is_qualified(worker, b) for b in unqualified):
        raise NoWork("No task is open to you right now. Pass the qualification test to get more.")
    raise NoWork("No task is waiting right now. Come back later.")


def expire_abandoned(now=None) -> int:
    """Release assignments whose time ran out without a submission; their places reopen."""
    now = now or timezone.now()
    with transaction.atomic():
        due = Assignment.objects.filter(status=Assignment.Status.ASSIGNED, deadline__lte=now)
        hit_ids = set(due.values_list("hit_id", flat=True))
        expired = due.update(status=Assignment.Status.EXPIRED)
        if hit_ids:
            places.refresh(hit_ids=hit_ids)
    return expired
