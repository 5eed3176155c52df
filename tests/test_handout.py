"""Handing out in-house work: never over-filled, never twice to one worker, one open assignment
per worker whatever clicks race, expiry."""

from datetime import timedelta

import pytest
from django.utils import timezone

from hits.models import Assignment, Worker
from hits.services import handout
from hits.services.people import create_user_with_role

from .crowd_data import at_once, published_batch

pytestmark = pytest.mark.portable


def make_workers(n, prefix="w"):
    return [
        Worker.objects.get(
            user=create_user_with_role(username=f"{prefix}{i}", password="x-long-password", role="worker")
        )
        for i in range(n)
    ]


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_requests_fill_a_hit_exactly(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    batch = published_batch(assignments=3)
    hit = batch.hits.first()
    batch.hits.exclude(pk=hit.pk).delete()  # one HIT with three places
    workers = make_workers(20)

    def ask(worker):
        try:
            return handout.next_assignment(worker, batch).pk
        except handout.NoWork:
            return None

    taken, errors = at_once(*(lambda w=w: ask(w) for w in workers))
    results = [pk for pk in taken if pk is not None]
    assert errors == []
    assert len(results) == 3
    assert Assignment.objects.filter(hit=hit).count() == 3
    assert Assignment.objects.filter(hit=hit).values("worker").distinct().count() == 3


@pytest.mark.django_db
def test_worker_never_gets_the_same_hit_twice_and_resumes_open_work():
    batch = published_batch(assignments=2)
    (worker,) = make_workers(1)
    first = handout.next_assignment(worker)
    assert handout.next_assignment(worker) == first  # resume, not a second task
    seen = set()
    for _ in range(batch.hits.count()):
        a = handout.next_assignment(worker)
        assert a.hit_id not in seen
        seen.add(a.hit_id)
        a.status = Assignment.Status.SUBMITTED
        a.save()
    with pytest.raises(handout.NoWork, match="No task is waiting"):
        handout.next_assignment(worker)
    assert len(seen) == batch.hits.count()


@pytest.mark.django_db
def test_expired_assignment_is_released_and_offered_again():
    batch = published_batch(assignments=1)
    hit = batch.hits.first()
    batch.hits.exclude(pk=hit.pk).delete()
    first, second = make_workers(2)
    taken = handout.next_assignment(first)
    with pytest.raises(handout.NoWork):
        handout.next_assignment(second)
    assert handout.release_overdue(now=timezone.now() + timedelta(minutes=59)) == 0
    assert handout.release_overdue(now=timezone.now() + timedelta(minutes=61)) == 1
    taken.refresh_from_db()
    assert taken.status == Assignment.Status.EXPIRED
    assert handout.next_assignment(second).hit == hit
    with pytest.raises(handout.NoWork):  # the first worker does not get it back
        handout.next_assignment(first)


@pytest.mark.django_db
def test_blocked_worker_and_unpublished_batches_get_nothing():
    batch = published_batch()
    (worker,) = make_workers(1)
    worker.blocked_at = timezone.now()
    worker.save()
    with pytest.raises(handout.NoWork, match="blocked"):
        handout.next_assignment(worker)
    worker.blocked_at = None
    worker.save()
    batch.status = "stopped"
    batch.save()
    with pytest.raises(handout.NoWork):
        handout.next_assignment(worker)


@pytest.mark.django_db
def test_expiry_task_runs_as_a_celery_task():
    from hits.tasks import expire_abandoned_assignments

    batch = published_batch()
    (worker,) = make_workers(1)
    a = handout.next_assignment(worker, batch)
    Assignment.objects.filter(pk=a.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    assert expire_abandoned_assignments.apply().get() == 1


@pytest.mark.django_db(transaction=True)
def test_parallel_clicks_of_one_worker_end_with_one_assignment():
    """The partial unique constraint: every click but one fails to insert and resumes that one."""
    batch = published_batch(assignments=3)
    (worker,) = make_workers(1, prefix="clicker")
    results, errors = at_once(*[lambda: handout.next_assignment(worker, batch).pk] * 8)
    assert errors == []
    assert len(results) == 8 and len(set(results)) == 1
    (assignment,) = Assignment.objects.filter(worker=worker)
    assignment.hit.refresh_from_db()
    assert assignment.hit.open_places == assignment.hit.max_assignments - 1


@pytest.mark.django_db
def test_the_last_places_are_taken_in_order_and_counted():
    """Each handout takes one place of the emptiest HIT; a full batch hands out nothing more."""
    batch = published_batch(assignments=2)
    keep = list(batch.hits.order_by("pk")[:2])
    batch.hits.exclude(pk__in=[h.pk for h in keep]).delete()
    workers = make_workers(5, prefix="last")
    taken = [handout.next_assignment(w, batch) for w in workers[:4]]
    assert sorted(a.hit_id for a in taken) == sorted([keep[0].pk, keep[0].pk, keep[1].pk, keep[1].pk])
    assert [h.open_places for h in batch.hits.order_by("pk")] == [0, 0]
    with pytest.raises(handout.NoWork, match="No task is waiting"):
        handout.next_assignment(workers[4], batch)
