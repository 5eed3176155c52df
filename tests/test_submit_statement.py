"""Submissions in one statement (PostgreSQL): the same rows as the general path, nothing
written when a check fails (the general path then says why), one round trip."""

from datetime import timedelta
from unittest import mock

import pytest
from django.db import connection
from django.utils import timezone

from hits import signals, versions
from hits.models import HIT, Assignment, Judgment
from hits.services import submission
from hits.services.submission import SubmissionRefused, submit_assignment

from .crowd_data import all_answers, published_batch
from .test_handout import make_workers

pytestmark = pytest.mark.django_db

COMPARED = ("status", "submitted_at", "comment", "active_seconds", "gold_total", "gold_correct", "confirmed")


def general(**kwargs):
    """`submit_assignment` with the statement switched off: the general (ORM) path alone."""
    with mock.patch.object(submission, "_submit_in_one_statement", return_value=None):
        return submit_assignment(**kwargs)


def two_on_one_hit(batch, hit=None, **fields):
    """Two workers' open assignments of the same HIT (the same ACUs, the same gold)."""
    hit = hit or batch.hits.order_by("pk").first()
    deadline = timezone.now() + timedelta(hours=1)
    return [Assignment.objects.create(hit=hit, worker=w, deadline=deadline, **fields) for w in make_workers(2)]


def state(assignment):
    row = Assignment.objects.get(pk=assignment.pk)
    judged = dict(Judgment.objects.filter(assignment=row).values_list("acu_id", "present"))
    batch = row.hit.batch
    return {f: getattr(row, f) for f in COMPARED}, judged, versions.current(batch.dataset_id, batch.pk)


def mixed_answers(assignment):
    answers = all_answers(assignment)
    for key in list(answers)[::2]:
        answers[key] = False
    return answers


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the statement is PostgreSQL's")
@pytest.mark.parametrize("gold_share", [0.0, 0.5])
@pytest.mark.parametrize("confirmed", [True, False])
def test_the_statement_writes_what_the_general_path_writes(gold_share, confirmed):
    batch = published_batch(gold_share=gold_share)
    hit = batch.hits.exclude(gold_answers=None).first() if gold_share else None
    fast, slow = two_on_one_hit(batch, hit, confirmed=confirmed)
    answers, now = mixed_answers(fast), timezone.now()
    kwargs = {"answers": answers, "comment": "  clear enough  ", "active_seconds": 10**6, "now": now}
    before = versions.current(batch.dataset_id, batch.pk)

    stored = submission._submit_in_one_statement(
        fast.pk, fast.worker_id, submission._parse_answers(answers), kwargs["comment"], kwargs["active_seconds"], now
    )
    assert stored is not None and stored.pk == fast.pk and stored.status == Assignment.Status.SUBMITTED
    after_fast = versions.current(batch.dataset_id, batch.pk)
    general(assignment_id=slow.pk, worker_id=slow.worker_id, **kwargs)

    fast_row, fast_judged, _ = state(fast)
    slow_row, slow_judged, after_both = state(slow)
    assert fast_row == slow_row
    assert fast_row["active_seconds"] == batch.assignment_duration_seconds  # clamped to the time allowed
    assert fast_row["comment"] == "clear enough"
    assert fast_judged == slow_judged == {int(k): v for k, v in answers.items()}
    if gold_share:
        gold = fast.hit.gold_answers
        assert fast_row["gold_total"] == len(gold) > 0
        assert fast_row["gold_correct"] == sum(answers[k] is v for k, v in gold.items())
        assert 0 < fast_row["gold_correct"] < len(gold) or len(gold) == 1
    # Each submission bumps the round's version once, and only confirmed work counts.
    assert after_fast - before == after_both - after_fast == (1 if confirmed else 0)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the statement is PostgreSQL's")
def test_a_refused_statement_writes_nothing_and_the_general_path_says_why():
    batch = published_batch(gold_share=0.0)
    assignment, other = two_on_one_hit(batch)
    answers = all_answers(assignment)
    missing = dict(list(answers.items())[1:])
    foreign_hit = batch.hits.exclude(summary__document=assignment.hit.summary.document).first()
    foreign = {**answers, str(foreign_hit.summary.document.reference.acus.first().pk): True}
    cases = [
        (missing, assignment.worker_id, "have no answer yet"),
        (foreign, assignment.worker_id, "not part of this task"),
        (answers, other.worker_id, "not yours"),
    ]
    version = versions.current(batch.dataset_id, batch.pk)
    for given, worker_id, message in cases:
        parsed = submission._parse_answers(given)
        assert submission._submit_in_one_statement(assignment.pk, worker_id, parsed, "", None, timezone.now()) is None
        with pytest.raises(SubmissionRefused, match=message):
            submit_assignment(assignment_id=assignment.pk, worker_id=worker_id, answers=given)
    assert not Judgment.objects.filter(assignment__hit=assignment.hit).exists()
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.ASSIGNED
    assert versions.current(batch.dataset_id, batch.pk) == version

    # Past its deadline: refused, and nothing written.
    Assignment.objects.filter(pk=other.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    parsed = submission._parse_answers(answers)
    assert submission._submit_in_one_statement(other.pk, other.worker_id, parsed, "", None, timezone.now()) is None
    with pytest.raises(SubmissionRefused, match="ran out"):
        submit_assignment(assignment_id=other.pk, worker_id=other.worker_id, answers=answers)

    # A time that is not a number takes the general path (which stores it as it always did, or refuses).
    assert (
        submission._submit_in_one_statement(assignment.pk, assignment.worker_id, parsed, "", "soon", timezone.now())
        is None
    )
    assert (
        submission._submit_in_one_statement(
            assignment.pk, assignment.worker_id, parsed, "", float("nan"), timezone.now()
        )
        is None
    )
    assert not Judgment.objects.filter(assignment=assignment).exists()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the statement is PostgreSQL's")
def test_a_repeat_and_a_triage_hit_take_the_general_path():
    batch = published_batch(gold_share=0.0)
    assignment, triaged = two_on_one_hit(batch)
    answers = all_answers(assignment)
    assert submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=answers).created
    parsed = submission._parse_answers(answers)
    assert (
        submission._submit_in_one_statement(assignment.pk, assignment.worker_id, parsed, "", None, timezone.now())
        is None
    )
    again = submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=answers)
    assert again.created is False and Judgment.objects.filter(assignment=assignment).count() == len(answers)

    # A triage HIT asks about some ACUs only: the statement leaves it to the general path.
    some = list(answers)[:2]
    HIT.objects.filter(pk=triaged.hit_id).update(acu_ids=[int(k) for k in some])
    subset = dict.fromkeys(some, True)
    assert (
        submission._submit_in_one_statement(
            triaged.pk, triaged.worker_id, submission._parse_answers(subset), "", None, timezone.now()
        )
        is None
    )
    assert submit_assignment(assignment_id=triaged.pk, worker_id=triaged.worker_id, answers=subset).created
    assert Judgment.objects.filter(assignment=triaged).count() == 2


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the statement is PostgreSQL's")
@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_one_statement_commits_and_then_asks_for_scores(django_assert_num_queries):
    """As under gunicorn: no BEGIN or COMMIT, one round trip, then the submission signal."""
    batch = published_batch(gold_share=0.0)
    (assignment,) = two_on_one_hit(batch)[:1]
    answers = all_answers(assignment)
    heard = []

    def receiver(sender, batch_id, dataset_id=None, **kwargs):
        heard.append((batch_id, dataset_id))

    from scoring.runs.recompute import on_submission

    # Only this test's receiver listens: the scoring app's recompute request is a query of its own.
    signals.submission_stored.disconnect(dispatch_uid="scoring.runs.recompute")
    signals.submission_stored.connect(receiver, dispatch_uid="test-submit-statement")
    try:
        with django_assert_num_queries(1):
            stored = submission._submit_in_one_statement(
                assignment.pk, assignment.worker_id, submission._parse_answers(answers), "", 30, timezone.now()
            )
    finally:
        signals.submission_stored.disconnect(dispatch_uid="test-submit-statement")
        signals.submission_stored.connect(on_submission, dispatch_uid="scoring.runs.recompute")
    assert stored is not None
    assert heard == [(batch.pk, batch.dataset_id)]
    row, judged, _ = state(assignment)
    assert row["status"] == Assignment.Status.SUBMITTED and row["active_seconds"] == 30
    assert judged == {int(k): True for k in answers}
