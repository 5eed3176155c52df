"""Handing out in-house work: never over-filled, never twice to one worker, expiry."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from hits.models import Assignment, Worker
from hits.services import handout
from hits.services.people import create_user_with_role

from .crowd_data import published_batch

pytestmark = pytest.mark.portable


@pytest.fixture(autouse=True, params=["one statement", "orm"])
def take_path(request, monkeypatch):
    """Every test here runs on both ways of taking a place: PostgreSQL's single statement
    and the ORM transaction other databases (the SQLite demo) use."""
    if request.param == "orm":
        monkeypatch.setattr(handout, "_take_in_one_statement", handout._take_with_orm)
    return request.param


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
    barrier = threading.Barrier(20)
    results, errors = [], []

    def ask(worker):
        try:
            barrier.wait()
            results.append(handout.next_assignment(worker, batch).pk)
        except handout.NoWork:
            pass
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))
        finally:
            connection.close()  # each thread has its own connection

    threads = [threading.Thread(target=ask, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
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
    assert handout.expire_abandoned(now=timezone.now() + timedelta(minutes=59)) == 0
    assert handout.expire_abandoned(now=timezone.now() + timedelta(minutes=61)) == 1
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
