"""Measured work time: the active seconds a page reports are stored at most as the wall-clock time
since the worker got the task (the handout, or MTurk's AcceptTime), so a page or a script cannot
claim the whole time allowed a minute after the handout; the pay calibration and the hourly figures
read what is stored."""

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from hits.calibration import calibration
from hits.models import Assignment
from hits.providers.mturk.models import MTurkHeldSubmission
from hits.services import handout
from hits.services.submission import submit_assignment, task_token

from .crowd_data import all_answers, published_batch
from .test_handout import make_workers
from .test_mturk import published, stub, sync_one  # noqa: F401 - stub is a fixture
from .test_mturk_identity import answers_for, listed, open_task, post_answers

pytestmark = pytest.mark.django_db


def handed_out(seconds_ago: float) -> Assignment:
    """An in-house assignment handed out `seconds_ago` (its creation moved back)."""
    batch = published_batch(gold_share=0.0)
    (worker,) = make_workers(1)
    assignment = handout.next_assignment(worker, batch)
    Assignment.objects.filter(pk=assignment.pk).update(created_at=timezone.now() - timedelta(seconds=seconds_ago))
    assignment.refresh_from_db()
    return assignment


@pytest.mark.portable
def test_active_seconds_are_at_most_the_time_since_the_handout():
    assignment = handed_out(0)
    allowed = assignment.hit.batch.assignment_duration_seconds
    submit_assignment(
        assignment_id=assignment.pk,
        worker_id=assignment.worker_id,
        answers=all_answers(assignment),
        active_seconds=allowed,  # the whole time allowed, claimed a minute after the handout
        now=assignment.created_at + timedelta(seconds=60),
    )
    assert Assignment.objects.get(pk=assignment.pk).active_seconds == 60


@pytest.mark.portable
def test_a_claim_within_the_time_since_the_handout_is_stored_as_sent():
    assignment = handed_out(0)
    submit_assignment(
        assignment_id=assignment.pk,
        worker_id=assignment.worker_id,
        answers=all_answers(assignment),
        active_seconds=45.5,
        now=assignment.created_at + timedelta(seconds=60),
    )
    assert Assignment.objects.get(pk=assignment.pk).active_seconds == 45.5


@pytest.mark.portable
def test_a_posted_claim_of_the_whole_time_allowed_is_capped_and_the_calibration_reads_the_cap(client):
    """The task page's post: an assignment handed out 90 s ago cannot report the hour allowed."""
    assignment = handed_out(90)
    batch = assignment.hit.batch
    body = json.dumps({"answers": all_answers(assignment), "active_seconds": batch.assignment_duration_seconds})
    response = client.post(reverse("task_submit", args=[task_token(assignment)]), body, content_type="application/json")
    assert response.status_code == 200 and response.json()["ok"] is True
    stored = Assignment.objects.get(pk=assignment.pk)
    # at least the 90 s since the handout, at most the time since then to the submission
    assert 90 <= stored.active_seconds <= (stored.submitted_at - stored.created_at).total_seconds()
    measured = [row for row in calibration(batch) if row["measured"]]
    assert [row["median_seconds"] for row in measured] == [stored.active_seconds]


def test_mturk_held_time_is_capped_by_mturks_accept_and_submit_times(stub, client):  # noqa: F811
    """The MTurk page's answers are held before any Assignment exists (our row is written by the
    sync, after the work): the held time is capped at the sync by MTurk's AcceptTime to SubmitTime."""
    batch = published(stub)
    hit = batch.hits.order_by("pk").first()
    page = open_task(client, hit, "REAL1", "W1")
    posted = client.post(
        page.context["submit_url"],
        {"answers": answers_for(hit, True), "active_seconds": 3000},
        content_type="application/json",
    )
    assert posted.json()["ok"]
    assert MTurkHeldSubmission.objects.get(assignment_id="REAL1").active_seconds == 3000  # no handout known yet
    accepted = timezone.now() - timedelta(minutes=10)
    record = {**listed("REAL1", "W1", hit), "AcceptTime": accepted, "SubmitTime": accepted + timedelta(seconds=150)}
    assert sync_one(stub, batch, hit, [record])["confirmed"] == 1
    assert Assignment.objects.get(hit=hit, external_id="REAL1").active_seconds == 150


def test_mturk_held_time_without_an_accept_time_keeps_the_time_allowed_as_its_bound(stub, client):  # noqa: F811
    """Our Assignment row is written by the sync, after the submission: its creation is no handout
    time, so without MTurk's AcceptTime the held time is kept (already at most the time allowed)."""
    batch = published(stub)
    hit = batch.hits.order_by("pk").first()
    page = open_task(client, hit, "REAL2", "W2")
    assert post_answers(client, page, answers_for(hit, True)).json()["ok"]
    MTurkHeldSubmission.objects.filter(assignment_id="REAL2").update(active_seconds=200)
    record = {**listed("REAL2", "W2", hit), "SubmitTime": timezone.now() - timedelta(minutes=5)}
    assert sync_one(stub, batch, hit, [record])["confirmed"] == 1
    assert Assignment.objects.get(hit=hit, external_id="REAL2").active_seconds == 200
