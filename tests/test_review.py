"""Review and pay: every money action recorded once, never paid twice."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from hits.models import Assignment, LedgerEntry
from hits.selectors import counted_judgments
from hits.selectors.figures import batch_spend
from hits.services import handout, review
from hits.services.submission import submit_assignment

from .crowd_data import all_answers, published_batch
from .test_handout import make_workers
from .test_prolific_contract import API, api, published, reviewable, worked_session  # noqa: F401 (api: the fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture
def submitted():
    batch = published_batch()
    (worker,) = make_workers(1)
    a = handout.next_assignment(worker, batch)
    submit_assignment(assignment_id=a.pk, worker_id=worker.pk, answers=all_answers(a))
    a.refresh_from_db()
    return a


def test_approving_twice_pays_once(submitted, lead):
    review.approve(assignment_id=submitted.pk, by=lead)
    review.approve(assignment_id=submitted.pk, by=lead)
    entries = LedgerEntry.objects.filter(assignment=submitted)
    assert list(entries.values_list("kind", "amount")) == [("reward", submitted.hit.reward)]
    assert entries.get().created_by == lead
    submitted.refresh_from_db()
    assert submitted.status == "approved" and submitted.reviewed_by == lead


def test_reject_needs_feedback_and_pays_nothing(submitted):
    with pytest.raises(review.ReviewError, match="feedback"):
        review.reject(assignment_id=submitted.pk, feedback="  ")
    with pytest.raises(review.ReviewError, match="1024"):
        review.reject(assignment_id=submitted.pk, feedback="x" * 1025)
    review.reject(assignment_id=submitted.pk, feedback="You marked every fact present.")
    submitted.refresh_from_db()
    assert submitted.status == "rejected" and not LedgerEntry.objects.exists()
    assert not counted_judgments(submitted.hit.batch.dataset, submitted.hit.batch).exists()
    with pytest.raises(review.ReviewError, match="Only submitted"):
        review.approve(assignment_id=submitted.pk)


def test_bonus_with_the_same_form_token_is_paid_once(submitted):
    entry, created = review.send_bonus(assignment_id=submitted.pk, amount="0.5", reason="careful work", token="t1")
    again, created_again = review.send_bonus(
        assignment_id=submitted.pk, amount="0.5", reason="careful work", token="t1"
    )
    assert created and not created_again and entry == again
    assert LedgerEntry.objects.filter(kind="bonus").count() == 1 and entry.amount == Decimal("0.50")
    review.send_bonus(assignment_id=submitted.pk, amount="0.25", reason="another", token="t2")
    assert batch_spend(submitted.hit.batch)["bonus"] == Decimal("0.75")
    with pytest.raises(review.ReviewError, match="between"):
        review.send_bonus(assignment_id=submitted.pk, amount="0", reason="x", token="t3")


def test_block_releases_open_work_and_can_exclude_judgments(submitted):
    batch = submitted.hit.batch
    worker = submitted.worker
    open_one = handout.next_assignment(worker, batch)
    review.block_worker(worker_id=worker.pk, reason="random answers", exclude_pending=True)
    open_one.refresh_from_db()
    worker.refresh_from_db()
    assert open_one.status == Assignment.Status.EXPIRED and worker.blocked and worker.excluded
    assert not counted_judgments(batch.dataset, batch).exists()
    with pytest.raises(handout.NoWork):
        handout.next_assignment(worker, batch)


def test_auto_approval_after_the_delay(submitted):
    assert review.auto_approve_due(now=timezone.now()) == 0
    assert review.auto_approve_due(now=timezone.now() + timedelta(hours=73)) == 1
    submitted.refresh_from_db()
    assert submitted.status == "approved" and LedgerEntry.objects.filter(kind="reward").count() == 1


def test_a_second_bulk_approve_from_a_stale_page_says_nothing_was_paid_twice(submitted, client, lead):
    """Lab review: a second press of Approve (a stale page, a double click) said "Approved 1
    assignment(s)." again, as if it had paid again; a reject of it all refused said nothing done."""
    from django.urls import reverse

    client.force_login(lead)
    url = reverse("batch_review", args=[submitted.hit.batch_id])
    form = {"assignment": [submitted.pk], "action": "approve"}

    def said(response) -> list[str]:
        return [str(m) for m in response.context["messages"]]

    first = said(client.post(url, form, follow=True))
    assert len(first) == 1 and first[0].startswith("Approved 1 assignment")
    again = said(client.post(url, form, follow=True))
    assert again == ["1 assignment was approved already: nothing changed and nothing was paid or recorded twice."]
    assert LedgerEntry.objects.filter(assignment=submitted, kind="reward").count() == 1
    refused = said(client.post(url, {**form, "action": "reject", "feedback": "late"}, follow=True))
    assert len(refused) == 1 and "Only submitted work can be rejected" in refused[0]
    assert not any(m.startswith("Approved") for m in refused)


@pytest.mark.postgres_only("two connections at once: the assignment's row lock orders the approvals")
@pytest.mark.django_db(transaction=True)
def test_a_lead_approval_racing_the_auto_approval_pays_once(monkeypatch, lead):
    """The lead approves while the auto-approval task picks the same work: the lead's approval is at
    the provider (the assignment held) until the task waits for that row; one reward row, by the lead."""
    import threading

    from hits.providers.inhouse import InHouseProvider

    from .crowd_data import WAIT, at_once, waiting_on_a_lock

    batch = published_batch()
    (worker,) = make_workers(1)
    a = handout.next_assignment(worker, batch)
    submit_assignment(assignment_id=a.pk, worker_id=worker.pk, answers=all_answers(a))
    holding, calls = threading.Event(), []

    def held_approve(self, assignment):
        calls.append(assignment.pk)
        if not holding.is_set():
            holding.set()
            assert waiting_on_a_lock(), "the auto-approval never waited for the lead's approval"

    monkeypatch.setattr(InHouseProvider, "approve", held_approve)

    def task():
        assert holding.wait(WAIT), "the lead's approval never reached the provider"
        return review.auto_approve_due(now=timezone.now() + timedelta(days=30))

    results, errors = at_once(lambda: review.approve(assignment_id=a.pk, by=lead), task)
    assert errors == [] and calls == [a.pk]
    entries = LedgerEntry.objects.filter(assignment=a)
    assert list(entries.values_list("kind", flat=True)) == ["reward"] and entries.get().created_by == lead


def test_a_database_error_on_one_decision_is_said_and_leaves_it_undecided(client, lead, monkeypatch):
    """A decision whose transaction the database aborts (a deadlock, a lock timeout, a lost
    connection) was a 500 page, after the decisions before it in the same bulk action were made. It is
    one message now; its assignment is left as it was, nothing of it written, and the others are made."""
    from django.db import OperationalError
    from django.urls import reverse

    batch = published_batch()
    first, second = (handout.next_assignment(w, batch) for w in make_workers(2))
    for a in (first, second):
        submit_assignment(assignment_id=a.pk, worker_id=a.worker_id, answers=all_answers(a))
    record = review._record_reward

    def aborted(a, provider, by=None):
        if a.pk == first.pk:  # after its status was written, in the same transaction
            raise OperationalError("deadlock detected")
        return record(a, provider, by)

    monkeypatch.setattr(review, "_record_reward", aborted)
    client.force_login(lead)
    form = {"assignment": [first.pk, second.pk], "action": "approve"}
    response = client.post(reverse("batch_review", args=[batch.pk]), form, follow=True)
    assert response.status_code == 200
    said = [str(m) for m in response.context["messages"]]
    assert said == [
        "Approved 1 assignment.",
        f"Assignment {first.pk}: the database could not record this decision just now, so nothing of it "
        "was saved here; try again.",
    ]
    first.refresh_from_db()
    assert first.status == Assignment.Status.SUBMITTED and first.reviewed_by is None
    assert not LedgerEntry.objects.filter(assignment=first).exists()
    assert LedgerEntry.objects.filter(assignment=second, kind="reward").count() == 1


def test_a_database_error_approving_a_prolific_session_is_said_and_its_other_hits_are_paid(
    client,
    lead,
    monkeypatch,
    api,  # noqa: F811
):
    """The sessions' Approve (one bulk call at Prolific, then each HIT paid here) was a 500 page when the
    database aborted one HIT's approval; it is that HIT's message now, the session's other HITs are paid
    and the one left submitted is approved by the next try (or the sync) once, as ever."""
    from django.db import OperationalError
    from django.urls import reverse

    batch = published(api)
    session = worked_session(batch, "PID1", "5ab000000000000000000001")
    reviewable(api, batch, session)
    api.post(API + "submissions/bulk-approve/", json={"message": "The request has been scheduled."})
    first = session.assignments().order_by("pk").first()
    record = review._record_reward

    def aborted(a, provider, by=None):
        if a.pk == first.pk:
            raise OperationalError("deadlock detected")
        return record(a, provider, by)

    monkeypatch.setattr(review, "_record_reward", aborted)
    client.force_login(lead)
    form = {"session": [session.pk], "action": "approve"}
    response = client.post(reverse("prolific_review", args=[batch.pk]), form, follow=True)
    assert response.status_code == 200
    said = [str(m) for m in response.context["messages"]]
    assert f"Assignment {first.pk}: {review.NOT_RECORDED}" in said
    first.refresh_from_db()
    assert first.status == Assignment.Status.SUBMITTED
    assert not LedgerEntry.objects.filter(assignment=first).exists()
    paid = LedgerEntry.objects.filter(batch=batch, kind="reward").values_list("assignment_id", flat=True)
    assert sorted(paid) == sorted(session.assignments().exclude(pk=first.pk).values_list("pk", flat=True))
