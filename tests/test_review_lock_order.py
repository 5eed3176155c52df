"""A lead's decision and the Prolific sync take their locks in one order: the session, then its
assignments. The sync (`apply_submission`) locks a session and then confirms or releases its
assignments; a lead's approval locked the assignment and then wrote the session's decision and
reckoned its fee under the session's lock, so the two could wait for each other and PostgreSQL
aborted one (DeadlockDetected). Here the sync holds the session until the approval waits for a lock;
no timing decides it (WAIT only guards against a hang)."""

import threading

import pytest
from responses import matchers

from hits.models import Assignment, LedgerEntry
from hits.providers.prolific import sync as prolific_sync
from hits.providers.prolific.models import ProlificSession
from hits.providers.prolific.sessions import start_session
from hits.services import review
from hits.services.submission import submit_assignment

from .crowd_data import WAIT, all_answers, at_once, waiting_on_a_lock
from .test_prolific_contract import API, api, published  # noqa: F401 (api: the fixture)

pytestmark = [
    pytest.mark.postgres_only("two connections at once: the session's row lock orders a decision and the sync"),
    pytest.mark.django_db(transaction=True),
]

SID = "5ab000000000000000000001"


def late_answer(batch) -> Assignment:
    """A session Prolific reports completed (mirrored: its answers confirmed) whose last HIT's answer
    was stored after that report, so it waits for the next sync to be confirmed."""
    session = start_session(batch=batch, participant_id="PID1", study_id="STUDY1", session_id=SID)
    *first, last = session.assignments().order_by("pk")
    for a in first:
        submit_assignment(assignment_id=a.pk, worker_id=a.worker_id, answers=all_answers(a))
    prolific_sync.apply_submission(batch, SID, "PID1", "AWAITING REVIEW")
    submit_assignment(assignment_id=last.pk, worker_id=last.worker_id, answers=all_answers(last))
    last.refresh_from_db()
    assert last.status == Assignment.Status.SUBMITTED and not last.confirmed
    return last


def test_a_lead_approval_and_the_sync_on_one_session_never_deadlock(api, monkeypatch, lead):  # noqa: F811
    batch = published(api)
    late = late_answer(batch)
    api.post(
        API + f"submissions/{SID}/transition/",
        json={"id": SID, "status": "APPROVED"},
        match=[matchers.json_params_matcher({"action": "APPROVE"}, strict_match=True)],
    )
    holding, syncing = threading.Event(), threading.local()
    assignments = ProlificSession.assignments

    def held(self):
        """The sync's first look at the session's assignments, its session locked: it goes on once
        the lead's approval waits for a lock."""
        if getattr(syncing, "on", False) and not holding.is_set():
            holding.set()
            assert waiting_on_a_lock(), "the lead's approval never waited for the sync"
        return assignments(self)

    monkeypatch.setattr(ProlificSession, "assignments", held)

    def sync():
        syncing.on = True
        return prolific_sync.apply_submission(batch, SID, "PID1", "AWAITING REVIEW")

    def approve():
        assert holding.wait(WAIT), "the sync never locked the session"
        return review.approve(assignment_id=late.pk, by=lead).status

    results, errors = at_once(sync, approve)
    assert errors == [], errors  # before: one of them aborted, "deadlock detected"
    assert sorted(results) == ["approved", "confirmed"]
    late.refresh_from_db()
    assert late.status == Assignment.Status.APPROVED and late.confirmed
    assert LedgerEntry.objects.filter(assignment=late, kind="reward").count() == 1
    assert ProlificSession.objects.get(session_id=SID).decision == "approved"
