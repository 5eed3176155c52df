"""Submissions: stored in one transaction before the reply, idempotent (retries and parallel
sends store once), refused clearly with nothing written, gold counted, active seconds clamped,
the round's version bumped once per counted submission."""

import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from hits import signals, versions
from hits.models import HIT, Assignment, Judgment
from hits.services import handout
from hits.services.submission import SubmissionRefused, read_token, submit_assignment, task_token

from .crowd_data import all_answers, at_once, published_batch
from .test_handout import make_workers

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture
def taken():
    """A worker's assignment handed out ten minutes ago (the time stored is at most the time since)."""
    batch = published_batch(gold_share=0.0)
    worker, other = make_workers(2)
    assignment = handout.next_assignment(worker, batch)
    Assignment.objects.filter(pk=assignment.pk).update(created_at=timezone.now() - timedelta(minutes=10))
    assignment.refresh_from_db()
    return assignment, other


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
    handout.release_overdue()
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


def two_on_one_hit(batch, hit=None, **fields):
    """Two workers' open assignments of the same HIT (the same ACUs, the same gold)."""
    hit = hit or batch.hits.order_by("pk").first()
    deadline = timezone.now() + timedelta(hours=1)
    return [Assignment.objects.create(hit=hit, worker=w, deadline=deadline, **fields) for w in make_workers(2)]


def mixed_answers(assignment):
    answers = all_answers(assignment)
    for key in list(answers)[::2]:
        answers[key] = False
    return answers


def judged(assignment):
    return dict(Judgment.objects.filter(assignment=assignment).values_list("acu_id", "present"))


@pytest.mark.parametrize("gold_share", [0.0, 0.5])
@pytest.mark.parametrize("confirmed", [True, False])
def test_a_submission_stores_answers_comment_time_gold_and_bumps_the_version_once(gold_share, confirmed):
    batch = published_batch(gold_share=gold_share)
    hit = batch.hits.exclude(gold_answers=None).first() if gold_share else None
    (assignment, _) = two_on_one_hit(batch, hit, confirmed=confirmed)
    answers, now = mixed_answers(assignment), timezone.now()
    # handed out longer ago than the time allowed: that is the bound of the time stored
    handed_out = now - timedelta(seconds=2 * batch.assignment_duration_seconds)
    Assignment.objects.filter(pk=assignment.pk).update(created_at=handed_out)
    before = versions.current(batch.dataset_id, batch.pk)

    result = submit_assignment(
        assignment_id=assignment.pk,
        worker_id=assignment.worker_id,
        answers=answers,
        comment="  clear enough  ",
        active_seconds=10**6,
        now=now,
    )
    assert result.created and result.assignment.pk == assignment.pk
    row = Assignment.objects.get(pk=assignment.pk)
    assert row.status == Assignment.Status.SUBMITTED and row.submitted_at == now
    assert row.active_seconds == batch.assignment_duration_seconds  # clamped to the time allowed
    assert row.comment == "clear enough"
    assert judged(assignment) == {int(k): v for k, v in answers.items()}
    if gold_share:
        gold = assignment.hit.gold_answers
        assert row.gold_total == len(gold) > 0
        assert row.gold_correct == sum(answers[k] is v for k, v in gold.items())
        assert 0 < row.gold_correct < len(gold) or len(gold) == 1
    else:
        assert (row.gold_total, row.gold_correct) == (None, None)
    # Each submission bumps the round's version once, and only confirmed work counts.
    assert versions.current(batch.dataset_id, batch.pk) - before == (1 if confirmed else 0)
    submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=answers)  # a retry
    assert versions.current(batch.dataset_id, batch.pk) - before == (1 if confirmed else 0)


def test_a_refused_submission_writes_nothing_and_says_why():
    batch = published_batch(gold_share=0.0)
    assignment, other = two_on_one_hit(batch)
    answers = all_answers(assignment)
    missing = dict(list(answers.items())[1:])
    foreign_hit = batch.hits.exclude(summary__document=assignment.hit.summary.document).first()
    foreign = {**answers, str(foreign_hit.summary.document.reference.acus.first().pk): True}
    cases = [
        (missing, assignment.worker_id, "1 of .* facts has no answer yet"),
        (foreign, assignment.worker_id, "not part of this task"),
        (answers, other.worker_id, "not yours"),
        ({"x": True}, assignment.worker_id, "Unknown fact 'x'"),
        ({next(iter(answers)): "maybe"}, assignment.worker_id, "must be present or not present"),
        ([True], assignment.worker_id, "answers are missing"),
    ]
    version = versions.current(batch.dataset_id, batch.pk)
    for given, worker_id, message in cases:
        with pytest.raises(SubmissionRefused, match=message):
            submit_assignment(assignment_id=assignment.pk, worker_id=worker_id, answers=given)
    assert not Judgment.objects.filter(assignment__hit=assignment.hit).exists()
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.ASSIGNED
    assert versions.current(batch.dataset_id, batch.pk) == version

    Assignment.objects.filter(pk=other.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    with pytest.raises(SubmissionRefused, match="ran out"):
        submit_assignment(assignment_id=other.pk, worker_id=other.worker_id, answers=answers)
    assert not judged(other) and versions.current(batch.dataset_id, batch.pk) == version


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        (30, 30.0),
        ("12.5", 12.5),
        (-5, 0.0),
        (float("inf"), None),
        (float("-inf"), None),
        (float("nan"), None),
        ("soon", None),
        ([1], None),
        ({"s": 1}, None),
        (True, None),
        (None, None),
    ],
)
def test_active_seconds_are_clamped_and_anything_not_a_finite_number_is_not_stored(given, stored):
    """The browser's measurement: a bad one costs the worker nothing (the answers are stored)."""
    batch = published_batch(gold_share=0.0)
    assignment, _ = two_on_one_hit(batch)
    answers = all_answers(assignment)
    result = submit_assignment(
        assignment_id=assignment.pk,
        worker_id=assignment.worker_id,
        answers=answers,
        active_seconds=given,
        now=assignment.created_at + timedelta(minutes=1),
    )
    assert result.created
    row = Assignment.objects.get(pk=assignment.pk)
    assert row.status == Assignment.Status.SUBMITTED and row.active_seconds == stored
    assert len(judged(assignment)) == len(answers)


def test_nan_in_the_posted_json_is_not_stored(client, taken):
    """Python's JSON reader accepts NaN and Infinity: the page's reply is still a success."""
    assignment, _ = taken
    body = json.dumps({"answers": all_answers(assignment), "active_seconds": float("nan")})
    assert "NaN" in body
    response = client.post(reverse("task_submit", args=[task_token(assignment)]), body, content_type="application/json")
    assert response.status_code == 200 and response.json()["ok"] is True
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED and assignment.active_seconds is None


def test_a_triage_hit_takes_exactly_its_own_acus():
    batch = published_batch(gold_share=0.0)
    assignment, _ = two_on_one_hit(batch)
    answers = all_answers(assignment)
    some = [int(k) for k in list(answers)[:2]]
    HIT.objects.filter(pk=assignment.hit_id).update(acu_ids=some)
    with pytest.raises(SubmissionRefused, match="not part of this task"):
        submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=answers)
    with pytest.raises(SubmissionRefused, match="1 of 2 facts has no answer yet"):
        submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers={str(some[0]): True})
    subset = {str(k): True for k in some}
    assert submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=subset).created
    assert judged(assignment) == dict.fromkeys(some, True)


@pytest.mark.django_db(transaction=True)
def test_parallel_identical_submissions_store_once():
    """Retries racing each other (a double click, a resent request): one stores, the others
    wait for its lock and find the same answers stored."""
    batch = published_batch(gold_share=0.0)
    assignment, _ = two_on_one_hit(batch)
    answers = all_answers(assignment)
    before = versions.current(batch.dataset_id, batch.pk)
    results, errors = at_once(
        *[lambda: submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=answers)] * 6
    )
    created = [result.created for result in results]
    assert errors == []
    assert sorted(created) == [False] * 5 + [True]
    assert Judgment.objects.filter(assignment=assignment).count() == len(answers)
    assert versions.current(batch.dataset_id, batch.pk) - before == 1


@pytest.mark.django_db(transaction=True)
def test_a_stored_submission_asks_for_scores_after_commit():
    batch = published_batch(gold_share=0.0)
    assignment, _ = two_on_one_hit(batch)
    heard = []

    def receiver(sender, batch_id, dataset_id=None, **kwargs):
        heard.append((batch_id, dataset_id, Assignment.objects.get(pk=assignment.pk).status))

    signals.submission_stored.connect(receiver, dispatch_uid="test-submission-signal")
    try:
        submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=all_answers(assignment))
        submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=all_answers(assignment))
    finally:
        signals.submission_stored.disconnect(dispatch_uid="test-submission-signal")
    assert heard == [(batch.pk, batch.dataset_id, Assignment.Status.SUBMITTED)]  # once: the retry stores nothing
