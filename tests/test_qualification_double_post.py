"""A double click on a qualification sheet's Submit: the second post of the same sheet lands on
the first one's result (told once), never graded against the next sheet ("no answer yet")."""

import re

import pytest
from django.urls import reverse

from hits.models import QualificationAttempt
from hits.services import qualification
from hits.services.people import inhouse_worker

from .crowd_data import at_once, demo_dataset, published_batch

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture
def offered():
    """An in-house test of sheets of 3 from a pool of 9, tried again at once after a failure."""
    dataset = demo_dataset()
    test = qualification.build_test(dataset=dataset, name="q", items=3, max_attempts=3, retry_after_hours=0)
    published_batch(dataset, qualification_test=test)
    return test


def _sheet_form(client, test, worker, *, right: bool) -> dict:
    """The sheet's form as the page sends it: every fact answered (right or wrong), its number."""
    page = client.get(reverse("take_test", args=[test.pk])).content.decode()
    (number,) = re.findall(r'<input type="hidden" name="sheet" value="(\d+)">', page)
    sheet = qualification.worker_sheet(test, inhouse_worker(worker))
    form = {
        f"ans-{qualification.answer_key(item.pk, acu)}": "1" if truth == right else "0"
        for item in sheet
        for acu, truth in item.answers.items()
    }
    return {**form, "sheet": number}


def _shown(client) -> list[str]:
    response = client.get(reverse("work"))
    return [str(m) for m in response.context["messages"]]


def test_a_failed_sheet_posted_twice_shows_its_result_and_uses_one_attempt(client, worker, offered):
    client.force_login(worker)
    url = reverse("take_test", args=[offered.pk])
    form = _sheet_form(client, offered, worker, right=False)
    first = client.post(url, form)
    second = client.post(url, form)  # the double click: the same sheet, the next one drawn meanwhile
    assert first.status_code == second.status_code == 302 and second["Location"] == reverse("work")
    (attempt,) = QualificationAttempt.objects.filter(test=offered)
    assert attempt.decided and not attempt.passed
    shown = _shown(client)
    assert len(shown) == 1 and shown[0].startswith("Not passed: 0%")  # once, not "no answer yet"
    # The next sheet is a new one with its own number, and posting it grades it.
    again = _sheet_form(client, offered, worker, right=True)
    assert again["sheet"] == "1" and client.post(url, again)["Location"] == reverse("work")
    assert QualificationAttempt.objects.filter(test=offered).count() == 2


def test_a_passed_sheet_posted_twice_says_passed_once(client, worker, offered):
    client.force_login(worker)
    url = reverse("take_test", args=[offered.pk])
    form = _sheet_form(client, offered, worker, right=True)
    client.post(url, form)
    client.post(url, form)
    assert QualificationAttempt.objects.filter(test=offered, passed=True).count() == 1
    shown = _shown(client)
    assert len(shown) == 1 and shown[0].startswith("You passed the qualification test")
    # The second post's answer when the first one's message was shown already: the result again.
    client.post(url, form)
    assert _shown(client) == shown


def test_the_service_refuses_a_graded_sheet_with_its_attempt(worker, offered):
    me = inhouse_worker(worker)
    wrong = {
        qualification.answer_key(i.pk, acu): not truth
        for i in qualification.worker_sheet(offered, me)
        for acu, truth in i.answers.items()
    }
    first = qualification.submit_attempt(test=offered, worker=me, answers=wrong, sheet=0)
    with pytest.raises(qualification.AlreadyGraded) as refused:
        qualification.submit_attempt(test=offered, worker=me, answers=wrong, sheet=0)
    assert refused.value.attempt == first and QualificationAttempt.objects.count() == 1


@pytest.mark.postgres_only("two connections at once: the worker's row lock orders the posts")
@pytest.mark.django_db(transaction=True)
def test_two_posts_of_one_sheet_at_the_same_moment_grade_it_once(worker, offered):
    me = inhouse_worker(worker)
    wrong = {
        qualification.answer_key(i.pk, acu): not truth
        for i in qualification.worker_sheet(offered, me)
        for acu, truth in i.answers.items()
    }

    def post():
        return qualification.submit_attempt(test=offered, worker=me, answers=wrong, sheet=0)

    results, errors = at_once(post, post)
    assert len(results) == 1 and len(errors) == 1 and errors[0].startswith("AlreadyGraded"), errors
    assert QualificationAttempt.objects.filter(test=offered).count() == 1
