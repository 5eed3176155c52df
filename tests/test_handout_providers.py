"""One handout for every provider (issue 41): a Prolific session and a panel session take their
places with the in-house handout's rules (the fair order, priority, eligibility, expiry), and
every way a place goes back (hits.release) keeps the HITs' open places and the round's version
right."""

import itertools
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from hits import versions
from hits.allocation.policy import ADAPTIVE
from hits.batch_fields import BatchSpec
from hits.models import HIT, Assignment, Batch, Worker
from hits.providers.panel import idle
from hits.providers.panel import sessions as panel_sessions
from hits.providers.prolific import sessions as prolific_sessions
from hits.providers.prolific.models import ProlificStudy
from hits.services import batches, handout, review
from hits.services.submission import submit_assignment

from .crowd_data import all_answers, demo_dataset

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

_ids = itertools.count(1)


def prolific_batch(dataset, *, k=3, systems=("abs_bart_out",), **options) -> Batch:
    """A Prolific batch as if published (its study exists at Prolific), without any HTTP."""
    batch = batches.create_batch(
        dataset=dataset,
        spec=BatchSpec(provider="prolific", provider_config={"hits_per_session": k}, **options),
        systems=list(dataset.systems.filter(name__in=systems)),
    )
    ProlificStudy.objects.create(
        batch=batch,
        kind="main",
        study_id=f"STUDY{batch.pk}",
        status="ACTIVE",
        completion_code="DONE42",
        hits_per_session=k,
        places=50,
    )
    Batch.objects.filter(pk=batch.pk).update(
        status=Batch.Status.PUBLISHED, published_at=timezone.now(), expires_at=timezone.now() + timedelta(days=7)
    )
    batch.refresh_from_db()
    return batch


def panel_batch(dataset, *, systems=("abs_bart_out",), **options) -> Batch:
    config = {
        "panel_name": "Connect",
        "id_parameter": "participantId",
        "tasks_per_session": 2,
        "completion_url": "https://panel.example/done?cc={code}",
    }
    batch = batches.create_batch(
        dataset=dataset,
        spec=BatchSpec(provider="panel", provider_config=config, **options),
        systems=list(dataset.systems.filter(name__in=systems)),
    )
    return batches.publish_batch(batch)


def fresh_workers(provider: str, n: int) -> list[Worker]:
    return [Worker.objects.create(provider=provider, external_id=f"ref{next(_ids)}") for _ in range(n)]


def in_house_order(batch: Batch, n: int) -> list[int]:
    """The HITs the in-house handout (`next_assignment`) gives n fresh workers of the batch's
    provider, one place each, in order; rolled back, so nothing of it stays."""
    with transaction.atomic():
        order = [handout.next_assignment(w, batch).hit_id for w in fresh_workers(batch.provider, n)]
        transaction.set_rollback(True)
    return order


def session_id() -> str:
    return f"{next(_ids):024x}"


def prolific_hits(batch: Batch, pid: str) -> list[int]:
    session = prolific_sessions.start_session(
        batch=batch, participant_id=pid, study_id=f"STUDY{batch.pk}", session_id=session_id()
    )
    return list(session.assignments().order_by("pk").values_list("hit_id", flat=True))


def panel_hit(batch: Batch, pid: str) -> int:
    assignment = panel_sessions.start_task(batch=batch, participant_id=pid)
    assert assignment is not None
    return assignment.hit_id


def places_are_right():
    """Every HIT's open places are its places minus its active assignments."""
    for hit in HIT.objects.all():
        active = hit.assignments.filter(status__in=Assignment.ACTIVE).count()
        assert hit.open_places == max(hit.max_assignments - active, 0), (hit.pk, hit.open_places, active)


def test_a_prolific_session_takes_places_in_the_in_house_order():
    """Two Prolific batches of different priority and size; the larger one adaptive with gold
    HITs (3 first places, the others 2), so the fair order (share of places open, then turn)
    is not "most places open first", the order the sessions used to follow."""
    dataset = demo_dataset()
    large = prolific_batch(
        dataset,
        systems=("abs_bart_out", "abs_t5_out_large"),
        assignments=3,
        allocation=ADAPTIVE,
        allocation_min=2,
        allocation_max=3,
        gold_share=0.3,
    )
    small = batches.set_priority(prolific_batch(dataset, assignments=2), "3")
    assert large.hits.count() > small.hits.count() and large.hits.filter(gold_answers__isnull=False).exists()
    gold_first = list(large.hits.order_by("-open_places", "pk").values_list("pk", flat=True)[:6])
    assert in_house_order(large, 6) != gold_first  # the test tells the two orders apart

    for batch in (large, small, large):  # each session in its batch, in the in-house handout's order
        expected = in_house_order(batch, 6)
        assert prolific_hits(batch, f"P{next(_ids)}") + prolific_hits(batch, f"P{next(_ids)}") == expected
    places_are_right()


def test_a_panel_session_takes_places_in_the_in_house_order():
    dataset = demo_dataset()
    large = panel_batch(dataset, systems=("abs_bart_out", "abs_t5_out_large"), assignments=2)
    small = batches.set_priority(panel_batch(dataset, assignments=3), "2")
    for batch in (small, large, small, large):
        expected = in_house_order(batch, 4)
        assert [panel_hit(batch, f"N{next(_ids)}") for _ in range(4)] == expected
    places_are_right()


@pytest.mark.parametrize("provider", ["prolific", "panel"])
def test_an_overdue_place_is_released_and_handed_out_again_as_in_house(provider):
    """Every place held past its deadline: the next participant gets the released places, the
    ones the in-house handout would give, without waiting for the beat task."""
    dataset = demo_dataset()
    batch = (
        prolific_batch(dataset, k=2, assignments=1) if provider == "prolific" else panel_batch(dataset, assignments=1)
    )
    holders = fresh_workers(provider, batch.hits.count())
    held = [handout.take_place(w, batch, hold=handout.Hold(external_id="OTHER")) for w in holders]
    assert all(held) and not batch.hits.filter(open_places__gt=0).exists()
    Assignment.objects.filter(pk__in=[a.pk for a in held]).update(deadline=timezone.now() - timedelta(minutes=1))

    if provider == "prolific":
        expected = in_house_order(batch, 2)
        got = prolific_hits(batch, "LATE1")
    else:
        expected = in_house_order(batch, 1)
        got = [panel_hit(batch, "LATE1")]
    assert got == expected
    assert Assignment.objects.filter(pk__in=[a.pk for a in held], status=Assignment.Status.EXPIRED).count() >= len(got)
    places_are_right()


@pytest.mark.parametrize("provider", ["prolific", "panel"])
def test_a_session_skips_batches_the_worker_is_stopped_in_and_expired_batches(provider):
    dataset = demo_dataset()
    batch = prolific_batch(dataset, k=2) if provider == "prolific" else panel_batch(dataset)
    Batch.objects.filter(pk=batch.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    batch.refresh_from_db()
    worker = fresh_workers(provider, 1)[0]
    assert handout.take_place(worker, batch) is None  # the same rule the in-house handout follows
    refused = prolific_sessions.SessionRefused if provider == "prolific" else panel_sessions.SessionRefused
    with pytest.raises(refused):
        if provider == "prolific":
            prolific_hits(batch, "EXPIRED1")
        else:
            panel_hit(batch, "EXPIRED1")


def test_every_release_keeps_places_and_the_round_version_right():
    """Expiry, an idle panel session, a returned Prolific submission, a rejection and a block all
    give places back through hits.release: the open places are recounted and the round gets a
    new version exactly when counted work left it."""
    dataset = demo_dataset()
    inhouse = batches.publish_batch(
        batches.create_batch(
            dataset=dataset, spec=BatchSpec(assignments=2), systems=list(dataset.systems.filter(name="abs_bart_out"))
        )
    )
    w1, w2 = fresh_workers("inhouse", 2)
    first = handout.next_assignment(w1, inhouse)
    submit_assignment(assignment_id=first.pk, worker_id=w1.pk, answers=all_answers(first))
    before = versions.current(dataset.pk, inhouse.pk)
    review.reject(assignment_id=first.pk, feedback="Every box ticked.")
    assert versions.current(dataset.pk, inhouse.pk) > before  # counted work left the round
    places_are_right()

    held = handout.next_assignment(w2, inhouse)
    before = versions.current(dataset.pk, inhouse.pk)
    review.block_worker(worker_id=w2.pk, reason="test")
    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.EXPIRED
    assert versions.current(dataset.pk, inhouse.pk) == before  # nothing counted changed
    places_are_right()

    panel = panel_batch(dataset, assignments=1)
    task = panel_sessions.start_task(batch=panel, participant_id="IDLE1")
    assert task is not None and HIT.objects.get(pk=task.hit_id).open_places == 0
    assert idle.release_idle(now=timezone.now() + timedelta(days=1)) == 1
    assert HIT.objects.get(pk=task.hit_id).open_places == 1
    places_are_right()

    study = prolific_batch(dataset, k=2, assignments=1)
    session = prolific_sessions.start_session(
        batch=study, participant_id="RET1", study_id=f"STUDY{study.pk}", session_id=session_id()
    )
    one = session.assignments().order_by("pk").first()
    submit_assignment(assignment_id=one.pk, worker_id=session.worker_id, answers=all_answers(one))
    before = versions.current(dataset.pk, study.pk)
    assert prolific_sessions.release(session, include_submitted=True) == 2
    assert versions.current(dataset.pk, study.pk) > before
    places_are_right()


@pytest.mark.postgres_only("row locks: SQLite serializes writers instead")
@pytest.mark.django_db(transaction=True)
def test_a_session_whose_last_place_is_held_retries_outside_its_transaction(monkeypatch):
    """A session's second place is held by another transaction this instant: the session does
    not wait while holding its first place (no deadlock), nor sleep inside its transaction; it
    rolls back, pauses outside it (config.db_retry.retried) and then takes both places."""
    import threading

    from config import db_retry

    batch = prolific_batch(demo_dataset(), k=2, assignments=1)
    first, second = list(batch.hits.order_by("turn").values_list("pk", flat=True)[:2])
    batch.hits.exclude(pk__in=[first, second]).delete()
    locked, done = threading.Event(), threading.Event()

    def hold():
        try:
            with transaction.atomic():
                HIT.objects.select_for_update().get(pk=second)
                locked.set()
                done.wait(30)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert locked.wait(30)
    pauses = []

    def pause(seconds):
        pauses.append(connection.in_atomic_block)
        done.set()
        holder.join()

    monkeypatch.setattr(db_retry.time, "sleep", pause)
    try:
        got = prolific_hits(batch, "BUSY1")
    finally:
        done.set()
        holder.join()
    assert pauses == [False]  # one pause, outside any transaction
    assert got == [first, second]
    places_are_right()


@pytest.mark.django_db(transaction=True)  # no test transaction around it
def test_retried_runs_work_again_outside_a_transaction_and_once_inside(monkeypatch):
    from config import db_retry

    pauses = []
    monkeypatch.setattr(db_retry.time, "sleep", pauses.append)
    calls = []

    def flaky():
        calls.append(connection.in_atomic_block)
        if len(calls) < 3:
            raise handout.Busy
        return "done"

    assert db_retry.retried(flaky, on=(handout.Busy,)) == "done"
    assert calls == [False] * 3 and pauses == [0.05, 0.1]  # twice paused, doubling
    calls.clear()
    with transaction.atomic(), pytest.raises(handout.Busy):  # inside one: run once, no retry
        db_retry.retried(flaky, on=(handout.Busy,))
    assert calls == [True] and pauses == [0.05, 0.1]


def test_a_lead_stop_keeps_work_in_progress_and_releases_what_is_overdue():
    dataset = demo_dataset()
    batch = batches.publish_batch(
        batches.create_batch(
            dataset=dataset, spec=BatchSpec(assignments=1), systems=list(dataset.systems.filter(name="abs_bart_out"))
        )
    )
    late_worker, busy_worker = fresh_workers("inhouse", 2)
    late = handout.next_assignment(late_worker, batch)
    busy = handout.next_assignment(busy_worker, batch)
    Assignment.objects.filter(pk=late.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    batches.stop_batch(batch)
    assert Assignment.objects.get(pk=late.pk).status == Assignment.Status.EXPIRED
    assert Assignment.objects.get(pk=busy.pk).status == Assignment.Status.ASSIGNED  # may still be submitted
    submit_assignment(assignment_id=busy.pk, worker_id=busy_worker.pk, answers=all_answers(busy))
    assert Assignment.objects.get(pk=busy.pk).status == Assignment.Status.SUBMITTED
    places_are_right()
