"""Expiry that always runs: the handout itself releases places held past their deadline, so the
embedded mode (no beat) behaves like production, and the pages say what really happened."""

from datetime import timedelta

import pytest
from django.utils import timezone

from hits.models import HIT, Assignment, Batch
from hits.selectors import figures
from hits.services import handout
from hits.services.submission import SubmissionRefused, submit_assignment

from .crowd_data import all_answers, demo_dataset, published_batch
from .test_handout import make_workers

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def one_place_batch(dataset=None, **options) -> tuple[Batch, HIT]:
    batch = published_batch(dataset, assignments=1, assignment_minutes=1, **options)
    hit = batch.hits.order_by("pk").first()
    batch.hits.exclude(pk=hit.pk).delete()
    return batch, hit


def overdue(assignment: Assignment, seconds: int = 120) -> None:
    Assignment.objects.filter(pk=assignment.pk).update(deadline=timezone.now() - timedelta(seconds=seconds))


def test_a_place_held_past_its_deadline_goes_to_the_next_worker_without_a_beat():
    batch, hit = one_place_batch()
    late, next_worker = make_workers(2, prefix="exp")
    taken = handout.next_assignment(late)
    with pytest.raises(handout.NoWork, match="No task is waiting"):
        handout.next_assignment(next_worker)  # still within its minute: nothing to take

    overdue(taken)
    progress = figures.batch_progress(batch)
    assert (progress["in_progress"], progress["overdue"], progress["left"]) == (0, 1, 1)

    given = handout.next_assignment(next_worker)  # no expire task has run
    assert given.hit_id == hit.pk and given.worker == next_worker
    taken.refresh_from_db()
    hit.refresh_from_db()
    assert taken.status == Assignment.Status.EXPIRED
    assert hit.open_places == 0
    progress = figures.batch_progress(batch)
    assert (progress["in_progress"], progress["overdue"], progress["left"]) == (1, 0, 0)


def test_the_late_worker_is_told_the_truth_and_the_place_reopens_at_once():
    batch, hit = one_place_batch()
    late, next_worker = make_workers(2, prefix="told")
    taken = handout.next_assignment(late)
    overdue(taken)
    with pytest.raises(SubmissionRefused) as refused:
        submit_assignment(assignment_id=taken.pk, worker_id=late.pk, answers=all_answers(taken))
    deadline = timezone.localtime(Assignment.objects.get(pk=taken.pk).deadline)
    assert str(refused.value) == (
        f"The time for this task ran out at {deadline:%H:%M %Z}, so these answers were not stored and the task "
        "went back to the other workers."
    )
    assert refused.value.final  # no retry can succeed: the page stops offering Submit
    taken.refresh_from_db()
    hit.refresh_from_db()
    assert taken.status == Assignment.Status.EXPIRED and not taken.judgments.exists()
    assert hit.open_places == 1
    assert figures.batch_progress(batch)["left"] == 1
    assert handout.next_assignment(next_worker).hit_id == hit.pk
    with pytest.raises(handout.NoWork):  # the late worker does not get the same HIT again
        handout.next_assignment(late)


def test_a_handout_releases_only_the_batches_it_hands_out():
    dataset = demo_dataset()
    inhouse, inhouse_hit = one_place_batch(dataset, name="in-house")
    other = published_batch(dataset, name="other", assignments=1, assignment_minutes=1)
    holder, other_holder, asker = make_workers(3, prefix="scope")
    mine = handout.next_assignment(holder, inhouse)
    theirs = handout.next_assignment(other_holder, other)
    overdue(mine)
    overdue(theirs)
    assert handout.next_assignment(asker, inhouse).hit_id == inhouse_hit.pk
    theirs.refresh_from_db()
    assert theirs.status == Assignment.Status.ASSIGNED  # another batch's place: left to its own handouts
    assert handout.release_overdue(batch_id=other.pk) == 1
    theirs.refresh_from_db()
    assert theirs.status == Assignment.Status.EXPIRED


def test_release_is_bounded_per_call():
    batch = published_batch(assignments=1, assignment_minutes=1)
    hits = list(batch.hits.order_by("pk")[:3])
    batch.hits.exclude(pk__in=[h.pk for h in hits]).delete()
    workers = make_workers(3, prefix="bound")
    for w in workers:
        overdue(handout.next_assignment(w, batch))
    assert handout.release_overdue(batch_id=batch.pk, limit=2) == 2
    assert handout.release_overdue(batch_id=batch.pk, limit=2) == 1
    assert sorted(HIT.objects.filter(batch=batch).values_list("open_places", flat=True)) == [1, 1, 1]


def test_a_refusal_a_retry_can_mend_is_not_final():
    batch, hit = one_place_batch()
    (worker,) = make_workers(1, prefix="mend")
    taken = handout.next_assignment(worker)
    answers = all_answers(taken)
    answers.pop(next(iter(answers)))
    with pytest.raises(SubmissionRefused) as refused:
        submit_assignment(assignment_id=taken.pk, worker_id=worker.pk, answers=answers)
    assert not refused.value.final
