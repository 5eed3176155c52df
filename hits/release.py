"""Giving a held place back: the one way, whatever the reason and the provider.

A place is held by an assignment in an active state (assigned, submitted, approved). It goes
back when the assignment's time runs out (`release_overdue`), an idle panel or Prolific session
gives its tasks back, a Prolific submission is returned or times out, the lead rejects the work
or blocks the worker, or a stop takes the worker (an adaptive stop) or the batch (a lead's stop)
off the work. Every one of them calls `release`, which keeps the two counters right in the
same transaction: `HIT.open_places` (hits/places.py) of the HITs it touched, and the version of
every round whose counted judgments it changed (hits/versions.py). No caller keeps them by hand.

An adapter module (models, places and versions only): the provider packages call it too.
"""

import logging

from django.db import transaction
from django.utils import timezone

from hits import places, versions
from hits.models import HIT, Assignment

logger = logging.getLogger(__name__)


def release(assignments, *, skip_locked: bool = False, **changes) -> int:
    """Take these assignments out of their places (by default they expire; `changes` are the
    fields to write instead or as well, e.g. status=REJECTED with the feedback). Returns how
    many were released.

    One transaction (a savepoint of the caller's): the HITs are locked first, in id order (a
    handout on the same HIT waits, so no place is handed out while it is recounted; with
    `skip_locked`, HITs another transaction holds this instant are left for a later call), the
    assignments change, their HITs' open places are recounted, and each round (with its
    dataset) that held counted work among them gets a new version."""
    changes.setdefault("status", Assignment.Status.EXPIRED)
    with transaction.atomic():
        hit_ids = sorted(set(assignments.order_by().values_list("hit_id", flat=True)))
        if not hit_ids:
            return 0
        held = list(
            HIT.objects.select_for_update(skip_locked=skip_locked)
            .filter(pk__in=hit_ids)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        if not held:
            return 0
        mine = assignments.filter(hit_id__in=held)
        rounds = sorted(
            set(
                mine.filter(status__in=Assignment.COUNTED)
                .order_by()
                .values_list("hit__batch__dataset_id", "hit__batch_id")
            )
        )
        released = mine.update(**changes)
        places.refresh(hit_ids=held)
        for dataset_id, batch_id in rounds:
            versions.bump(dataset_id, batch_id)
    return released


def release_overdue(
    *, now=None, provider: str | None = None, batch_id: int | None = None, limit: int | None = None
) -> int:
    """Release assignments whose time ran out without a submission (they expire); their places
    reopen. Returns how many were released.

    The beat task calls it for everything; the handout calls it for the batches it hands out
    (`provider`, `batch_id`, at most `limit` HITs) when it finds no open place, so the embedded
    mode (no beat) releases them too. HITs a handout holds this instant are skipped (left for
    the next call): this never waits for a handout."""
    now = now or timezone.now()
    due = Assignment.objects.filter(status=Assignment.Status.ASSIGNED, deadline__lte=now)
    if provider is not None:
        due = due.filter(hit__batch__provider=provider)
    if batch_id is not None:
        due = due.filter(hit__batch_id=batch_id)
    if limit is not None:
        hit_ids = list(due.order_by().values_list("hit_id", flat=True).distinct()[:limit])
        due = due.filter(hit_id__in=hit_ids)
    released = release(due, skip_locked=True)
    if released:
        logger.info(
            "released %d overdue assignment(s) (provider %s, batch %s)", released, provider or "any", batch_id or "any"
        )
    return released
