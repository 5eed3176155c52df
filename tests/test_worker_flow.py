"""The in-house worker's way through tasks and the qualification sheet, as a lab's workers meet
it: a session that ended mid-task, and what a screen reader hears on the sheet."""

import pytest
from django.urls import reverse

from hits.models import Assignment
from hits.services import handout
from hits.services.submission import submit_assignment, task_token
from hits.views.worker import inhouse_worker

from .crowd_data import all_answers, published_batch

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def test_next_task_pressed_after_the_session_ended_comes_back_to_the_work_page(client, worker):
    """The task page needs no session, so a worker whose session ended mid-task still stores the
    answers; its *Next task* button then went to the sign-in page, which sent them on to
    /work/next with a GET: an empty 405 page. Now it is the work page, with a message, and no
    task is handed out by the GET."""
    batch = published_batch()
    assignment = handout.next_assignment(inhouse_worker(worker), batch)
    submit_assignment(assignment_id=assignment.pk, worker_id=assignment.worker_id, answers=all_answers(assignment))
    pressed = client.post(reverse("work_next"))  # signed out: to the sign-in page, back to /work/next
    assert pressed.status_code == 302 and pressed["Location"].startswith(reverse("login"))
    client.force_login(worker)
    back = client.get(reverse("work_next"), follow=True)
    assert back.status_code == 200 and back.redirect_chain[-1][0] == reverse("work")
    assert "No task was handed out yet" in back.content.decode()
    assert Assignment.objects.filter(worker=assignment.worker).count() == 1  # the GET handed out nothing
    started = client.post(reverse("work_next"))  # the button on that page goes on
    assert started.status_code == 302 and started["Location"].startswith("/task/")
    assert started["Location"] != reverse("task", args=[task_token(assignment)])


def test_every_answer_on_the_qualification_sheet_is_named_by_its_fact(client, worker):
    """Each radio was labelled only "Present" or "Not present": a screen reader said which choice,
    never which fact. Each pair is now a radio group named by its fact's text."""
    from html.parser import HTMLParser

    from hits.services.qualification import build_test

    from .crowd_data import demo_dataset

    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="Screening", items=2)
    published_batch(dataset, qualification_test=test)
    client.force_login(worker)
    html = client.get(reverse("take_test", args=[test.pk])).content.decode()

    class Sheet(HTMLParser):
        def __init__(self):
            super().__init__()
            self.texts, self.groups, self.radios, self.inside, self.group_of = {}, [], [], None, None

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if "id" in a:
                self.inside = a["id"]
                self.texts[a["id"]] = ""
            if a.get("role") == "radiogroup":
                self.group_of = a.get("aria-labelledby")
                self.groups.append(self.group_of)
            if tag == "input" and a.get("type") == "radio":
                self.radios.append(self.group_of)

        def handle_endtag(self, tag):
            if tag == "span":
                self.inside = None

        def handle_data(self, data):
            if self.inside:
                self.texts[self.inside] += data

    sheet = Sheet()
    sheet.feed(html)
    assert sheet.radios and None not in sheet.radios  # every radio inside a named group
    assert len(sheet.groups) == len(sheet.radios) // 2 == len(set(sheet.groups))
    from annotation.models import ACU

    summaries = test.items.values_list("summary_id", flat=True)
    facts = set(ACU.objects.filter(reference__document__summaries__in=summaries).values_list("text", flat=True))
    named = [sheet.texts[group].strip() for group in sheet.groups]
    assert all(name in facts for name in named), named  # each group is named by its fact's text


def test_a_task_link_past_its_time_says_it_expired_and_submit_stops(client, worker, settings):
    """A worker who left the task open past its deadline (and the link's margin) got "This task
    link is not valid. It may have been copied incompletely." (a 404) on reload, and a Submit
    that kept offering a retry that could never succeed, the answers kept in the browser for good.
    Now the page says the link expired and what happened to the work (410), and the refusal is
    final: the page stops offering Submit and offers the next task."""
    from datetime import timedelta

    from django.utils import timezone

    settings.TASK_TOKEN_MARGIN = 0
    batch = published_batch()
    assignment = handout.next_assignment(inhouse_worker(worker), batch)
    Assignment.objects.filter(pk=assignment.pk).update(deadline=timezone.now() - timedelta(minutes=5))
    assignment.refresh_from_db()
    token = task_token(assignment)
    page = client.get(reverse("task", args=[token]))
    assert page.status_code == 410
    text = page.content.decode()
    assert "This task link has expired" in text and "copied incompletely" not in text
    assert "Answers submitted before then are saved" in text
    sent = client.post(
        reverse("task_submit", args=[token]), {"answers": all_answers(assignment)}, content_type="application/json"
    )
    assert sent.status_code == 409 and sent.json()["final"] is True and "expired" in sent.json()["error"]
    # A link that is not one of ours still says so.
    assert "copied incompletely" in client.get(reverse("task", args=[token[:-3] + "xyz"])).content.decode()


def test_a_sheet_posted_with_other_fields_is_graded_and_stores_only_its_answers(client, worker):
    """A qualification sheet posted with a field the sheet does not have (a NUL in its name, as a
    bad proxy or a hand-made post sends) was a 500: the attempt stored every posted 'ans-' field
    and the database refused the NUL. Only the answers to the sheet's facts are graded and stored."""
    from hits.models import QualificationAttempt
    from hits.services import qualification

    from .crowd_data import demo_dataset

    dataset = demo_dataset()
    test = qualification.build_test(dataset=dataset, name="Screening", items=2)
    published_batch(dataset, qualification_test=test)
    client.force_login(worker)
    sheet = qualification.worker_sheet(test, inhouse_worker(worker))
    right = {qualification.answer_key(i.pk, acu): truth for i in sheet for acu, truth in i.answers.items()}
    posted = {f"ans-{key}": "1" if truth else "0" for key, truth in right.items()}
    response = client.post(reverse("take_test", args=[test.pk]), {**posted, "ans-\x00": "1", "ans-9999:1": "0"})
    assert response.status_code == 302 and response["Location"] == reverse("work")
    attempt = QualificationAttempt.objects.get(test=test)
    assert attempt.passed and attempt.answers == right  # the sheet's answers, nothing else


def test_a_form_from_before_signing_in_again_says_what_happened(worker):
    """Signing in again (another tab, after the session ended) renews the form token, so *Next task*
    on a page opened before answered Django's bare "Forbidden (403) CSRF verification failed.
    Request aborted.". The page now says the form expired, that nothing was sent and what to do."""
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(worker)
    response = client.post(reverse("work_next"), {"csrfmiddlewaretoken": "stale" * 8})
    assert response.status_code == 403
    text = response.content.decode()
    assert "This form has expired" in text and "Nothing was sent" in text
    assert "CSRF verification failed" not in text


def test_a_comment_holding_a_nul_does_not_lose_the_answers(client, worker):
    """A comment with a NUL in it (pasted from a PDF) made the database refuse the submission: the
    page said "The submission was not understood; try again", and every retry failed alike, so the
    answers were never stored. The NUL is dropped and the answers are stored."""
    import json

    batch = published_batch()
    assignment = handout.next_assignment(inhouse_worker(worker), batch)
    body = json.dumps({"answers": all_answers(assignment), "comment": "Fact 3 is\x00 unclear"})
    sent = client.post(reverse("task_submit", args=[task_token(assignment)]), body, content_type="application/json")
    assert sent.status_code == 200 and sent.json()["ok"], sent.content
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED and assignment.comment == "Fact 3 is unclear"


def test_a_rating_task_says_how_long_the_worker_has(client, worker):
    """The in-house ACU task says by when to submit; a rating task's head (hits.ratings) did not,
    so a rater learned the deadline only when a late submission was refused."""
    from hits.batch_fields import BatchSpec
    from hits.services.batches import create_batch, publish_batch

    from .crowd_data import demo_dataset

    publish_batch(create_batch(dataset=demo_dataset(), spec=BatchSpec(protocol="prior")))
    assignment = handout.next_assignment(inhouse_worker(worker))
    html = client.get(reverse("task", args=[task_token(assignment)])).content.decode()
    assert 'id="rating-instructions"' in html  # the rating task's page
    assert f'>Submit by <time datetime="{assignment.deadline.isoformat()}">' in html and 'id="task-deadline"' in html
