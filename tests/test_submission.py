"""Submissions: stored in one transaction before the reply, idempotent, refused clearly."""

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from hits.models import Assignment, Judgment
from hits.services import handout
from hits.services.submission import SubmissionRefused, read_token, submit_assignment, task_token

from .crowd_data import all_answers, published_batch
from .test_handout import make_workers

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture
def taken():
    batch = published_batch(gold_share=0.0)
    worker, other = make_workers(2)
    return handout.next_assignment(worker, batch), other


def post(client, token, body):
    return client.post(reverse("task_submit", args=[token]), json.dumps(body), content_type="application/json")


def test_submit_stores_everything_then_answers(client, taken):
    assignment, _ = taken
    answers = all_answers(assignment)
    first_key = next(iter(answers))
    answers[first_key] = False
    response = post(client, task_token(assignment), {"answers": answers, "comment": "clear", "active_seconds": 42})
    assert response.status_code == 200 and response.json()["ok"] is True
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED and assignment.active_seconds == 42
    assert assignment.comment == "clear"
    stored = dict(assignment.judgments.values_list("acu_id", "present"))
    assert stored == {int(k): v for k, v in answers.items()}


def test_same_submission_twice_is_idempotent(client, taken):
    assignment, _ = taken
    token, answers = task_token(assignment), all_answers(assignment)
    first = post(client, token, {"answers": answers})
    again = post(client, token, {"answers": answers})
    assert first.status_code == again.status_code == 200
    assert again.json()["repeated"] is True and again.json()["assignment"] == first.json()["assignment"]
    assert Judgment.objects.filter(assignment=assignment).count() == len(answers)


def test_different_answers_for_a_completed_assignment_are_refused(taken):
    assignment, _ = taken
    submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=all_answers(assignment))
    with pytest.raises(SubmissionRefused, match="already submitted"):
        submit_assignment(
            assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=all_answers(assignment, False)
        )


def test_someone_elses_assignment_is_refused(client, taken):
    assignment, other = taken
    with pytest.raises(SubmissionRefused, match="not yours"):
        submit_assignment(assignment_id=assignment.pk, worker_id=other.pk, answers=all_answers(assignment))
    forged = task_token(assignment)[:-3] + "abc"
    response = post(client, forged, {"answers": all_answers(assignment)})
    assert response.status_code == 409 and "not valid" in response.json()["error"]
    assert not Judgment.objects.filter(assignment=assignment).exists()


def test_expired_assignment_is_refused(client, taken):
    assignment, _ = taken
    Assignment.objects.filter(pk=assignment.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    response = post(client, task_token(assignment), {"answers": all_answers(assignment)})
    assert response.status_code == 409 and "time for this task ran out" in response.json()["error"]
    handout.expire_abandoned()
    with pytest.raises(SubmissionRefused, match="ran out"):
        submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=all_answers(assignment))
    assert not Judgment.objects.filter(assignment=assignment).exists()


def test_incomplete_or_foreign_answers_are_refused(client, taken):
    assignment, _ = taken
    answers = all_answers(assignment)
    answers.pop(next(iter(answers)))
    response = post(client, task_token(assignment), {"answers": answers})
    assert response.status_code == 409 and "no answer yet" in response.json()["error"]
    response = post(client, task_token(assignment), {"answers": {**all_answers(assignment), "999999": True}})
    assert "not part of this task" in response.json()["error"]
    response = client.post(
        reverse("task_submit", args=[task_token(assignment)]), b"not json", content_type="application/json"
    )
    assert response.status_code == 400
    assert not Judgment.objects.filter(assignment=assignment).exists()


def test_task_page_needs_no_session_and_cannot_be_framed(client, taken):
    assignment, _ = taken
    response = client.get(reverse("task", args=[task_token(assignment)]))
    assert response.status_code == 200
    assert response["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in response["Content-Security-Policy"]
    assert assignment.hit.summary.text[:40] in response.content.decode()
    assert read_token(task_token(assignment)) == (assignment.pk, assignment.worker_id)
    assert client.get(reverse("task", args=["garbage"])).status_code == 404


def test_gold_hits_are_scored_per_assignment():
    batch = published_batch(gold_share=0.5, seed=1)
    (worker,) = make_workers(1, prefix="g")
    hit = batch.hits.exclude(gold_answers=None).first()
    batch.hits.exclude(pk=hit.pk).delete()
    assignment = handout.next_assignment(worker, batch)
    truth = dict(hit.gold_answers.items())
    wrong_key = next(iter(truth))
    answers = {**truth, wrong_key: not truth[wrong_key]}
    submit_assignment(assignment_id=assignment.pk, worker_id=worker.pk, answers=answers)
    assignment.refresh_from_db()
    assert (assignment.gold_correct, assignment.gold_total) == (len(truth) - 1, len(truth))
