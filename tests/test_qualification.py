"""Qualification test: built from gold items, graded, retry policy, gate for HITs."""

from datetime import timedelta

import pytest
from django.utils import timezone

from hits.models import QualificationAttempt
from hits.services import handout, qualification

from .crowd_data import demo_dataset, published_batch
from .test_handout import make_workers

pytestmark = pytest.mark.django_db


def perfect(test):
    return {
        qualification.answer_key(item.pk, acu): value
        for item in test.items.all()
        for acu, value in item.answers.items()
    }


def test_worker_must_pass_before_getting_hits_and_retry_waits():
    dataset = demo_dataset()
    test = qualification.build_test(
        dataset=dataset, name="q", items=3, pass_score=0.8, max_attempts=2, retry_after_hours=1
    )
    # A pool of three sheets, one summary per document as far as the documents go; a sheet of 3.
    documents = dataset.documents.count()
    assert test.items.count() == 9 and test.sheet_items == 3
    assert test.items.values("summary__document").distinct().count() == min(9, documents)
    batch = published_batch(dataset, qualification_test=test)
    (worker,) = make_workers(1)
    assert len(qualification.worker_sheet(test, worker)) == 3
    with pytest.raises(handout.NoWork, match="qualification"):
        handout.next_assignment(worker, batch)

    wrong = {k: not v for k, v in perfect(test).items()}
    attempt = qualification.submit_attempt(test=test, worker=worker, answers=wrong)
    assert not attempt.passed and attempt.score == 0 and attempt.total < len(wrong)  # the sheet's facts only
    assert len(attempt.items) == 3 and set(attempt.items) <= set(test.items.values_list("pk", flat=True))
    status = qualification.attempt_status(worker, test)
    assert not status["can_try"] and "try again after" in status["message"]
    with pytest.raises(qualification.QualificationError):
        qualification.submit_attempt(test=test, worker=worker, answers=perfect(test))

    QualificationAttempt.objects.filter(pk=attempt.pk).update(submitted_at=timezone.now() - timedelta(hours=2))
    assert qualification.submit_attempt(test=test, worker=worker, answers=perfect(test)).passed
    assert handout.next_assignment(worker, batch).hit.batch == batch


def test_attempts_run_out():
    dataset = demo_dataset()
    test = qualification.build_test(dataset=dataset, name="q", items=2, max_attempts=1)
    (worker,) = make_workers(1)
    wrong = {k: not v for k, v in perfect(test).items()}
    qualification.submit_attempt(test=test, worker=worker, answers=wrong)
    status = qualification.attempt_status(worker, test)
    assert not status["can_try"] and "all attempts" in status["message"]


def test_dataset_without_known_answers_cannot_build_a_test(tmp_path):
    from .authoring_data import unauthored_dataset

    with pytest.raises(qualification.QualificationError, match="known answers"):
        qualification.build_test(dataset=unauthored_dataset(tmp_path), name="q")
