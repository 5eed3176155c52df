"""The Prolific sessions' Approve and Reject on the batch page when the database fails at a session
step (the log row of Prolific's call, the sessions' decision, the rest of a session's reward): the lead
gets a message, not a 500 page; nothing of the step is half-written; and what Prolific did is recorded
once, by the next sync or by deciding again."""

from decimal import Decimal

import pytest
from django.db import DatabaseError, OperationalError
from django.db.models import QuerySet
from django.urls import reverse

from hits.models import Assignment, LedgerEntry, ProviderCall
from hits.providers.prolific import sync as prolific_sync
from hits.providers.prolific.models import ProlificSession, ProlificStudy
from hits.providers.prolific.rewards import rest_key

from .test_prolific_contract import API, api, published, reviewable, worked_session  # noqa: F401 (api: the fixture)

pytestmark = pytest.mark.django_db

SID = "5ab000000000000000000001"
REJECTION = "Your answers marked every fact as present, including facts the summary plainly does not state. " * 2


def fail_log_of(monkeypatch, action: str):
    """ProviderCall rows of `action` cannot be written (after Prolific's call went through)."""
    create = ProviderCall.objects.create

    def failing(**kwargs):
        if kwargs.get("action") == action:
            raise OperationalError("the connection was lost")
        return create(**kwargs)

    monkeypatch.setattr(ProviderCall.objects, "create", failing)


def post(client, batch, **form):
    return client.post(reverse("prolific_review", args=[batch.pk]), {"session": [form.pop("session")], **form})


def said(client, batch) -> list[str]:
    page = client.get(reverse("batch_detail", args=[batch.pk]))
    return [str(m) for m in page.context["messages"]]


def test_a_lost_log_row_of_the_bulk_approval_is_said_and_the_sync_pays_once(client, lead, monkeypatch, api):  # noqa: F811
    batch = published(api)
    session = worked_session(batch, "PID1", SID)
    reviewable(api, batch, session)
    api.post(API + "submissions/bulk-approve/", json={"message": "The request has been scheduled."})
    fail_log_of(monkeypatch, "bulk approve")
    client.force_login(lead)
    response = post(client, batch, session=session.pk, action="approve")
    assert response.status_code == 302  # was a 500 page
    messages = said(client, batch)
    assert any("Prolific may have approved session(s) " + SID in m and "next sync" in m for m in messages), messages
    session.refresh_from_db()
    assert session.decision == ""  # nothing half-written
    assert not LedgerEntry.objects.filter(batch=batch).exists()
    monkeypatch.undo()
    # Prolific approved it: the sync (or its hook) records it, once, however often it runs.
    for _ in range(2):
        prolific_sync.apply_submission(batch, SID, "PID1", "APPROVED")
    session.refresh_from_db()
    assert session.decision == "approved"
    rewards = LedgerEntry.objects.filter(batch=batch, kind="reward")
    study = ProlificStudy.objects.get(batch=batch, kind="main")
    assert sum(rewards.values_list("amount", flat=True)) == Decimal(study.reward_cents) / 100
    assert rewards.count() == len(set(rewards.values_list("key", flat=True)))
    assert set(session.assignments().values_list("status", flat=True)) == {Assignment.Status.APPROVED}


def test_a_failed_decision_write_is_said_and_approving_again_pays_once(client, lead, monkeypatch, api):  # noqa: F811
    batch = published(api)
    session = worked_session(batch, "PID1", SID)
    reviewable(api, batch, session)
    api.post(API + "submissions/bulk-approve/", json={"message": "The request has been scheduled."})

    update = QuerySet.update

    def failing(queryset, **kwargs):  # the write of a session's decision
        if queryset.model is ProlificSession and "decision" in kwargs:
            raise DatabaseError("could not serialize access")
        return update(queryset, **kwargs)

    monkeypatch.setattr(QuerySet, "update", failing)
    client.force_login(lead)
    assert post(client, batch, session=session.pk, action="approve").status_code == 302
    assert any("Prolific may have approved" in m for m in said(client, batch))
    assert ProlificSession.objects.get(pk=session.pk).decision == ""
    assert not LedgerEntry.objects.filter(batch=batch).exists()
    monkeypatch.undo()
    api.post(API + "submissions/bulk-approve/", json={"message": "The request has been scheduled."})
    assert post(client, batch, session=session.pk, action="approve").status_code == 302
    assert post(client, batch, session=session.pk, action="approve").status_code == 302  # a double click: no call
    study = ProlificStudy.objects.get(batch=batch, kind="main")
    paid = LedgerEntry.objects.filter(batch=batch, kind="reward").values_list("amount", flat=True)
    assert sum(paid) == Decimal(study.reward_cents) / 100


def test_a_failed_rest_of_session_write_is_said_and_written_once_later(client, lead, monkeypatch, api):  # noqa: F811
    """A session that left a HIT unanswered is paid its HITs and the rest of its reward; the rest's
    row failing is a message, and the sync writes it once."""
    batch = published(api)
    session = worked_session(batch, "PID1", SID)
    last = session.assignments().order_by("pk").last()
    Assignment.objects.filter(pk=last.pk).update(status=Assignment.Status.EXPIRED)
    reviewable(api, batch, session)
    api.post(API + "submissions/bulk-approve/", json={"message": "The request has been scheduled."})
    record = prolific_sync.record_with_fee

    def failing(**kwargs):
        if kwargs["key"] == rest_key(session.pk):
            raise OperationalError("deadlock detected")
        return record(**kwargs)

    monkeypatch.setattr(prolific_sync, "record_with_fee", failing)
    client.force_login(lead)
    assert post(client, batch, session=session.pk, action="approve").status_code == 302
    assert any(m.startswith(f"Session {SID}: approved at Prolific") for m in said(client, batch))
    assert not LedgerEntry.objects.filter(key=rest_key(session.pk)).exists()
    monkeypatch.undo()
    for _ in range(2):
        prolific_sync.apply_submission(batch, SID, "PID1", "APPROVED")
    assert LedgerEntry.objects.filter(key=rest_key(session.pk)).count() == 1
    study = ProlificStudy.objects.get(batch=batch, kind="main")
    paid = LedgerEntry.objects.filter(batch=batch, kind="reward").values_list("amount", flat=True)
    assert sum(paid) == Decimal(study.reward_cents) / 100


def test_a_lost_log_row_of_a_rejection_is_said_and_nothing_is_written(client, lead, monkeypatch, api):  # noqa: F811
    batch = published(api)
    session = worked_session(batch, "PID1", SID)
    reviewable(api, batch, session)
    api.post(API + f"submissions/{SID}/transition/", json={"id": SID, "status": "REJECTED"})
    fail_log_of(monkeypatch, "reject submission")
    client.force_login(lead)
    form = {"session": session.pk, "action": "reject", "category": "LOW_EFFORT", "message": REJECTION}
    assert post(client, batch, **form).status_code == 302
    assert any("Prolific may have rejected session(s) " + SID in m for m in said(client, batch))
    session.refresh_from_db()
    assert session.decision == ""
    assert set(session.assignments().values_list("status", flat=True)) == {Assignment.Status.SUBMITTED}
    monkeypatch.undo()
    prolific_sync.apply_submission(batch, SID, "PID1", "REJECTED")
    session.refresh_from_db()
    assert session.decision == "rejected"
    assert set(session.assignments().values_list("status", flat=True)) == {Assignment.Status.REJECTED}
    assert not LedgerEntry.objects.filter(batch=batch).exists()


def test_a_database_failure_reading_the_sessions_is_a_message(client, lead, monkeypatch, api):  # noqa: F811
    batch = published(api)
    session = worked_session(batch, "PID1", SID)

    def down(*args, **kwargs):
        raise OperationalError("the connection was lost")

    monkeypatch.setattr(prolific_sync, "approve_sessions", down)
    client.force_login(lead)
    assert post(client, batch, session=session.pk, action="approve").status_code == 302
    monkeypatch.undo()
    assert any(m.startswith("The database could not record this just now") for m in said(client, batch))
