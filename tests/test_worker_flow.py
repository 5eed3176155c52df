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
