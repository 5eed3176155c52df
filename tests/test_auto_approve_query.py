"""Auto-approval reads only due work: the database picks the submitted assignments whose delay has
passed, by the same rule as `review.auto_approve_at` (the time the pages show)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from hits.models import Assignment, LedgerEntry
from hits.services import handout, review
from hits.services.submission import submit_assignment

from .crowd_data import all_answers, demo_dataset, published_batch
from .test_handout import make_workers

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

# Around the boundary: a second, a microsecond, exactly on it (whole second and not) and after it.
OFFSETS = [
    timedelta(seconds=-1),
    timedelta(microseconds=-1),
    timedelta(0),
    timedelta(microseconds=1),
    timedelta(seconds=1),
]


def _submitted(batches, per_batch: int) -> list[Assignment]:
    """per_batch submitted assignments in each batch, by workers of their own."""
    done = []
    for b, batch in enumerate(batches):
        for worker in make_workers(per_batch, prefix=f"b{b}w"):
            a = handout.next_assignment(worker, batch)
            submit_assignment(assignment_id=a.pk, worker_id=worker.pk, answers=all_answers(a))
            done.append(a)
    return done


@pytest.fixture
def around_the_boundary():
    """Submitted work in batches of three delays (none, 90 minutes, 72 hours), each one submitted
    at one of OFFSETS from the moment `now` makes it due; returns (now, assignments)."""
    dataset = demo_dataset()
    batches = [published_batch(dataset, auto_approve_hours=h) for h in (0, 1.5, 72)]
    assignments = _submitted(batches, len(OFFSETS) * 2)
    now = timezone.now().replace(microsecond=0) + timedelta(days=10)
    for i, a in enumerate(assignments):
        delay = timedelta(seconds=a.hit.batch.auto_approve_seconds)
        # Half of them on a whole second, half at .5 s, so both of SQLite's text forms meet.
        at = now - delay - OFFSETS[i % len(OFFSETS)] + (timedelta(microseconds=500_000) if i % 2 else timedelta(0))
        Assignment.objects.filter(pk=a.pk).update(submitted_at=at)
    return now, list(Assignment.objects.select_related("hit__batch").order_by("pk"))


def test_the_query_and_the_rule_agree_around_the_boundary(around_the_boundary):
    now, assignments = around_the_boundary
    for moment in (now, now + timedelta(microseconds=500_000), now - timedelta(microseconds=1)):
        by_rule = {a.pk for a in assignments if (at := review.auto_approve_at(a)) is not None and at <= moment}
        by_query = set(review.auto_approve_due_query(moment).values_list("pk", flat=True))
        assert by_query == by_rule
        assert 0 < len(by_rule) < len(assignments)  # the boundary splits them


def test_only_due_work_is_read_and_approved_once(around_the_boundary):
    now, assignments = around_the_boundary
    assignments = [a for a in assignments if a.status == Assignment.Status.SUBMITTED]  # not the imported expert labels
    due = {a.pk for a in assignments if review.auto_approve_at(a) <= now}
    with CaptureQueriesContext(connection) as queries:
        assert review.auto_approve_due(now=now) == len(due)
    # The first query reads the due ids only (the old code read every submitted assignment and its batch).
    first = queries.captured_queries[0]["sql"]
    assert "auto_approve_seconds" in first.split("WHERE", 1)[1]
    mine = Assignment.objects.filter(pk__in=[a.pk for a in assignments])
    assert set(mine.filter(status=Assignment.Status.APPROVED).values_list("pk", flat=True)) == due
    rewards = LedgerEntry.objects.filter(kind="reward")
    assert sorted(rewards.values_list("assignment_id", flat=True)) == sorted(due)
    # A second run (the next beat, or two workers running the task at once) pays nothing more.
    assert review.auto_approve_due(now=now) == 0 and rewards.count() == len(due)
    # A lead's rejection meanwhile is not undone; the rest come due later.
    waiting = sorted(a.pk for a in assignments if a.pk not in due)
    review.reject(assignment_id=waiting[0], feedback="Every fact marked present.")
    assert review.auto_approve_due(now=now + timedelta(days=4)) == len(waiting) - 1
    assert rewards.count() == len(assignments) - 1
    assert Assignment.objects.get(pk=waiting[0]).status == Assignment.Status.REJECTED
