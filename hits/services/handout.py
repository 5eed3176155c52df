"""Handing out in-house work: the next HIT for a worker, and releasing abandoned ones.

Like Turkle: the HIT row is locked while its places are counted and an assignment is
created, so no HIT gets more assignments than asked even under concurrency, and the
(hit, worker) unique constraint means no worker ever gets the same HIT twice.
"""
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from hits.models import HIT, Assignment, Batch, Worker
from hits.services.qualification import is_qualified

CANDIDATES_PER_TRY = 20


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


def _candidate_hits(worker: Worker, batch: Batch | None):
    now = timezone.now()
    hits = HIT.objects.filter(
        batch__status=Batch.Status.PUBLISHED,
        batch__provider=worker.provider,
        batch__expires_at__gt=now,
    ).exclude(assignments__worker=worker)
    if batch is not None:
        hits = hits.filter(batch=batch)
    return (
        hits.annotate(taken=Count("assignments", filter=Q(assignments__status__in=Assignment.ACTIVE)))
        .filter(taken__lt=F("max_assignments"))
        .order_by("taken", "pk")  # fill HITs evenly, oldest first
    )


def next_assignment(worker: Worker, batch: Batch | None = None) -> Assignment:
    """Resume the worker's open assignment or give them a new one; raises NoWork."""
    if worker.blocked:
        raise NoWork("Your account is blocked from new tasks.")
    current = open_assignment(worker)
    if current is not None:
        return current
    for _ in range(5):  # candidates can fill up under us; look again a few times
        candidates = list(_candidate_hits(worker, batch).values_list("pk", "batch_id")[:CANDIDATES_PER_TRY])
        if not candidates:
            break
        for hit_id, batch_id in candidates:
            assignment = _try_take(worker, hit_id)
            if assignment is not None:
                return assignment
    unqualified = Batch.objects.filter(
        status=Batch.Status.PUBLISHED, provider=worker.provider, qualification_test__isnull=False
    )
    if any(not is_qualified(worker, b) for b in unqualified):
        raise NoWork("No task is open to you right now. Pass the qualification test to get more.")
    raise NoWork("No task is waiting right now. Come back later.")


def _try_take(worker: Worker, hit_id: int) -> Assignment | None:
    try:
        with transaction.atomic():
            hit = HIT.objects.select_for_update(of=("self",)).select_related("batch").get(pk=hit_id)
            if not is_qualified(worker, hit.batch):
                return None
            taken = hit.assignments.filter(status__in=Assignment.ACTIVE).count()
            if taken >= hit.max_assignments:
                return None
            return Assignment.objects.create(
                hit=hit,
                worker=worker,
                deadline=timezone.now() + timedelta(seconds=hit.batch.assignment_duration_seconds),
            )
    except IntegrityError:  # this worker already had the HIT (e.g. an expired assignment)
        return None


def expire_abandoned(now=None) -> int:
    """Release assignments whose time ran out without a submission; their places reopen."""
    now = now or timezone.now()
    return Assignment.objects.filter(status=Assignment.Status.ASSIGNED, deadline__lte=now).update(
        status=Assignment.Status.EXPIRED
    )
