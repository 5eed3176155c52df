"""Versions of the counted judgments per dataset and round: bump on change, read in O(1).

`bump` runs in the caller's transaction (a submission, a rejection, an exclusion, a provider
confirmation, an import), so a committed change and its new version are seen together. A
scoring run records `current(dataset, round)`; it is stale when that number moved on.
"""
from django.db import IntegrityError, transaction
from django.db.models import F

from hits.models import Assignment, Batch, RoundVersion


def bump(dataset_id: int, batch_id: int | None) -> None:
    """The dataset's judgments (and, with a batch, that round's) changed."""
    rounds = [0] if not batch_id else [0, batch_id]
    updated = RoundVersion.objects.filter(dataset_id=dataset_id, round_id__in=rounds).update(version=F("version") + 1)
    if updated < len(rounds):  # first change of this dataset or round: create the missing rows
        have = set(RoundVersion.objects.filter(dataset_id=dataset_id, round_id__in=rounds).values_list("round_id", flat=True))
        for round_id in set(rounds) - have:
            try:
                with transaction.atomic():
                    RoundVersion.objects.create(dataset_id=dataset_id, round_id=round_id, version=1)
            except IntegrityError:  # created concurrently: bump it instead
                RoundVersion.objects.filter(dataset_id=dataset_id, round_id=round_id).update(version=F("version") + 1)


def bump_batch(batch: Batch) -> None:
    bump(batch.dataset_id, batch.pk)


def bump_for_assignments(assignments) -> None:
    """Bump every round (and its dataset) that holds one of these assignments."""
    pairs = set(
        Batch.objects.filter(pk__in=assignments.values("hit__batch_id")).values_list("dataset_id", "pk")
    )
    for dataset_id, batch_id in sorted(pairs):
        bump(dataset_id, batch_id)


def bump_for_worker(worker_id: int) -> None:
    """A worker's exclusion changed: every round they worked in."""
    bump_for_assignments(Assignment.objects.filter(worker_id=worker_id))


def current(dataset_id: int, batch_id: int | None = None) -> int:
    return (
        RoundVersion.objects.filter(dataset_id=dataset_id, round_id=batch_id or 0).values_list("version", flat=True).first()
        or 0
    )
