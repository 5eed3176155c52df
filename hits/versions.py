"""Versions of the counted judgments per dataset and round: bump on change, read in O(1).

`bump` runs in the caller's transaction (a submission, a rejection, an exclusion, a provider
confirmation, an import), so a committed change and its new version are seen together. A
scoring run records `current(dataset, round)`; it is stale when that number moved on. After the
commit, `signals.judgments_changed` asks for the recompute of the dataset's and the round's
scores (scoring listens): the writes ask, pages only read.
"""

import random
from functools import partial

from django.db import transaction
from django.db.models import F, QuerySet, Sum

from hits import signals
from hits.models import Assignment, Batch, RoundVersion

STRIPES = 16


def bump(dataset_id: int, batch_id: int | None, *, rating: bool | None = None) -> None:
    """The dataset's judgments (and, with a batch, that round's) changed: one statement on
    one random stripe of each (concurrent submissions rarely wait for each other). `rating`:
    whether the batch is a rating batch, where the caller knows (None: the listeners look). A
    rating batch's ratings are no judgments: they leave the versions (and so the ACU scores runs)
    as they are, and only the listeners hear of them (its rating round follows them)."""
    if rating:
        transaction.on_commit(partial(_changed, dataset_id, batch_id, rating), robust=True)
        return
    rounds = [0] if not batch_id else [0, batch_id]
    stripe = random.randrange(STRIPES)
    mine = RoundVersion.objects.filter(dataset_id=dataset_id, round_id__in=rounds, stripe=stripe)
    if mine.update(version=F("version") + 1) < len(rounds):  # first bump of this round: create its stripes
        create_stripes(dataset_id, batch_id)
        mine.update(version=F("version") + 1)  # again: a row bumped twice is still a new version
    # robust: a recompute that cannot be asked for is logged (the beat repairs it), never the
    # failure of the write that committed
    transaction.on_commit(partial(_changed, dataset_id, batch_id, rating), robust=True)


def _changed(dataset_id: int, batch_id: int | None, rating: bool | None) -> None:
    signals.judgments_changed.send(sender=RoundVersion, dataset_id=dataset_id, batch_id=batch_id, rating=rating)


def create_stripes(dataset_id: int, batch_id: int | None) -> None:
    """The stripes of the dataset (and the round), where missing. Publishing creates a batch's, so
    its first submissions, however many at once, only update rows: concurrent first inserts of
    the same stripes in several transactions can deadlock (seen with 50 parallel first submissions)."""
    rounds = [0] if not batch_id else [0, batch_id]
    RoundVersion.objects.bulk_create(
        [RoundVersion(dataset_id=dataset_id, round_id=r, stripe=k) for r in rounds for k in range(STRIPES)],
        ignore_conflicts=True,
    )


def bump_for_assignments(assignments) -> None:
    """Bump every round (and its dataset) that holds one of these assignments."""
    pairs = set(Batch.objects.filter(pk__in=assignments.values("hit__batch_id")).values_list("dataset_id", "pk"))
    for dataset_id, batch_id in sorted(pairs):
        bump(dataset_id, batch_id)


def bump_for_worker(worker_id: int) -> None:
    """A worker's exclusion changed: every round they worked in."""
    bump_for_assignments(Assignment.objects.filter(worker_id=worker_id))


def version_of(dataset_id: int, batch_id: int | None = None) -> QuerySet:
    """The stripes' sum of a scope as a one-value queryset (a subquery for a caller that reads it
    within another statement, as `scoring.runs.selectors.latest_run` does)."""
    return (
        RoundVersion.objects.filter(dataset_id=dataset_id, round_id=batch_id or 0)
        .order_by()
        .values("dataset_id")
        .annotate(total=Sum("version"))
        .values("total")
    )


def current(dataset_id: int, batch_id: int | None = None) -> int:
    """The sum of the stripes: one index range of at most STRIPES rows."""
    stripes = RoundVersion.objects.filter(dataset_id=dataset_id, round_id=batch_id or 0)
    return stripes.aggregate(total=Sum("version"))["total"] or 0
