"""A double click on a Prolific or panel screening sheet's Submit: the second post of the same
sheet lands on the first one's result (pass, fail, or one more sheet), one attempt stored; it is
never graded against the next sheet ('no answer yet') nor refused as a second attempt. The sheet's
form carries its number, as the in-house sheet's (tests/test_qualification_double_post.py)."""

import re

import pytest
from django.urls import reverse

from hits.models import QualificationAttempt, QualificationTest
from hits.providers.panel.views import session_url
from hits.providers.prolific.models import ProlificGroupMember
from hits.services import qualification
from hits.sheets import network
from hits.sheets import sheet as sheet_of

from .crowd_data import demo_dataset, just_short
from .test_panel import link_parts, open_panel
from .test_qualification_attack import screenings

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

ADDRESS = "198.51.100.23"


def _number(page) -> str:
    (number,) = re.findall(r'<input type="hidden" name="sheet" value="(\d+)">', page.content.decode())
    return number


def _answers(sheet, how: str) -> dict:
    """The sheet's form answers: every fact right, wrong, or one wrong a hair under the mark
    ("unsure": the test's pass mark is moved there, so the sheet is not decided yet)."""
    truth = {qualification.answer_key(i.pk, acu): value for i in sheet for acu, value in i.answers.items()}
    if how == "unsure":
        given, mark = just_short(sheet)
        QualificationTest.objects.filter(pk=sheet[0].test_id).update(pass_score=mark)
    else:
        given = {key: value == (how == "right") for key, value in truth.items()}
    return {f"ans-{key}": "1" if value else "0" for key, value in given.items()}


# ---- Prolific ---------------------------------------------------------------------------------


def _prolific(client, how: str):
    """A participant's sheet posted twice with the number its page carried: the two bodies."""
    test, batch, _ = screenings(failure_budget=0)
    params = {"PROLIFIC_PID": "TWICE0000001", "STUDY_ID": "SCREEN-A", "SESSION_ID": f"{7:024x}"}
    url = reverse("prolific_screening", args=[batch.pk])
    number = _number(client.get(url, params, REMOTE_ADDR=ADDRESS))
    sheet = sheet_of(test, "prolific", params["PROLIFIC_PID"], network(ADDRESS))
    form = {**params, **_answers(sheet, how), "sheet": number}
    first = client.post(url, form, REMOTE_ADDR=ADDRESS)
    second = client.post(url, form, REMOTE_ADDR=ADDRESS)  # the double click
    return test, first, second


def test_a_failed_prolific_sheet_posted_twice_shows_not_passed_again(client):
    test, first, second = _prolific(client, "wrong")
    assert first.status_code == second.status_code == 200
    for response in (first, second):
        body = response.content.decode()
        assert "Not passed. Thank you for taking part." in body and "Return to Prolific" in body
    assert "You have taken this test" not in second.content.decode()  # the first result, not the revisit's
    (attempt,) = test.attempts.all()
    assert attempt.decided and not attempt.passed


def test_a_passed_prolific_sheet_posted_twice_shows_passed_and_joins_once(client):
    test, first, second = _prolific(client, "right")
    for response in (first, second):
        assert "Passed: you will be invited to the paid tasks." in response.content.decode()
    assert test.attempts.filter(passed=True).count() == 1 == test.attempts.count()
    assert ProlificGroupMember.objects.filter(worker__external_id="TWICE0000001").count() == 1


def test_an_undecided_prolific_sheet_posted_twice_shows_one_more_sheet(client):
    test, first, second = _prolific(client, "unsure")
    assert first.status_code == second.status_code == 200  # before: 400, graded against the next sheet
    for response in (first, second):
        body = response.content.decode()
        assert qualification.UNDECIDED in body and "Submit the test" in body and "no answer yet" not in body
        assert _number(response) == "1"  # the next sheet's number
    (attempt,) = test.attempts.all()
    assert not attempt.decided


# ---- panel ------------------------------------------------------------------------------------


def _panel(client, how: str, pid: str = "TWICE"):
    """A panel participant's sheet posted twice with the number its page carried: the two bodies."""
    dataset = demo_dataset()
    test = qualification.build_test(dataset=dataset, name="screen", items=2, failure_budget=0, seed=5)
    batch = open_panel(test=test, dataset=dataset, screened_out_url="https://panel.example/screened-out")
    url = reverse("panel_session", args=[batch.pk])
    number = _number(client.get(session_url(batch, pid), REMOTE_ADDR=ADDRESS))
    sheet = sheet_of(test, "panel", pid, network(ADDRESS))
    form = {**link_parts(session_url(batch, pid)), "action": "screen", **_answers(sheet, how), "sheet": number}
    first = client.post(url, form, REMOTE_ADDR=ADDRESS)
    second = client.post(url, form, REMOTE_ADDR=ADDRESS)  # the double click
    return test, first, second


def test_a_failed_panel_sheet_posted_twice_shows_not_passed_again(client):
    test, first, second = _panel(client, "wrong")
    assert first.status_code == second.status_code == 200  # before: 409 'used all attempts'
    for response in (first, second):
        body = response.content.decode()
        assert "Not passed. Thank you for taking part." in body and "https://panel.example/screened-out" in body
    (attempt,) = test.attempts.all()
    assert attempt.decided and not attempt.passed


def test_a_passed_panel_sheet_posted_twice_shows_passed(client):
    test, first, second = _panel(client, "right")
    assert first.status_code == second.status_code == 200  # before: 409 'You passed this test.'
    for response in (first, second):
        assert "Passed: you can start the tasks." in response.content.decode()
    assert QualificationAttempt.objects.filter(test=test, passed=True).count() == 1 == test.attempts.count()


def test_an_undecided_panel_sheet_posted_twice_shows_one_more_sheet(client):
    test, first, second = _panel(client, "unsure")
    assert first.status_code == second.status_code == 200  # before: 400, graded against the next sheet
    for response in (first, second):
        body = response.content.decode()
        assert qualification.UNDECIDED in body and "Submit the test" in body
        assert _number(response) == "1"
    (attempt,) = test.attempts.all()
    assert not attempt.decided
    # The next sheet, posted with its own number, is graded (here: all right, passed).
    sheet = sheet_of(test, "panel", "TWICE", network(ADDRESS))
    batch = test.batches.get()
    form = {**link_parts(session_url(batch, "TWICE")), "action": "screen", **_answers(sheet, "right"), "sheet": "1"}
    passed = client.post(reverse("panel_session", args=[batch.pk]), form, REMOTE_ADDR=ADDRESS)
    assert "Passed: you can start the tasks." in passed.content.decode()
    assert [a.decided for a in test.attempts.order_by("pk")] == [False, True]
