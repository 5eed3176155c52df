"""Who may use the Prolific pages: lead actions for leads only (POST), participant pages for
anyone Prolific sends, with nothing changed by a link that is not theirs."""

import pytest
from django.urls import reverse

from hits.providers.prolific.models import ProlificSession
from hits.providers.prolific.sessions import session_token
from hits.services.submission import submit_assignment

from .crowd_data import all_answers
from .test_access import ROLES
from .test_prolific_sessions import open_batch

pytestmark = pytest.mark.django_db


def login(client, request, role):
    if role != "anonymous":
        client.force_login(request.getfixturevalue(role))
    return client


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name, kwargs", [("prolific_action", {"action": "pause"}), ("prolific_review", {})])
def test_lead_actions_are_for_leads_and_posts_only(role, name, kwargs, client, request, settings):
    settings.PROLIFIC_API_TOKEN = ""  # a lead's action reaches the provider and fails there, harmlessly
    batch = open_batch()
    url = reverse(name, kwargs={"batch_id": batch.pk, **kwargs})
    client = login(client, request, role)
    response = client.post(url)
    if role == "lead":
        assert response.status_code == 302 and response["Location"] == reverse("batch_detail", args=[batch.pk])
        assert client.get(url).status_code == 405
    elif role == "anonymous":
        assert response.status_code == 302 and "login" in response["Location"]
    else:
        assert response.status_code == 403


def test_participant_pages_need_no_login_and_refuse_foreign_links(client):
    batch = open_batch(k=2)
    start = reverse("prolific_start", args=[batch.pk])
    response = client.get(start, {"PROLIFIC_PID": "P1", "STUDY_ID": "STUDY1", "SESSION_ID": "500000000000000000000001"})
    assert response.status_code == 302 and "sessionid" not in response.cookies
    session = ProlificSession.objects.get(session_id="500000000000000000000001")
    assert client.get(response["Location"]).status_code == 302  # on to the first task
    # Someone else's session id, a forged token, an unknown batch: refused, nothing created.
    assert (
        client.get(
            start, {"PROLIFIC_PID": "P2", "STUDY_ID": "STUDY1", "SESSION_ID": "500000000000000000000001"}
        ).status_code
        == 409
    )
    assert client.get(reverse("prolific_next", args=[session_token(session) + "x"])).status_code == 404
    assert client.get(reverse("prolific_task", args=["forged"])).status_code == 404
    assert client.get(reverse("prolific_start", args=[batch.pk + 999]), {"PROLIFIC_PID": "P3"}).status_code == 404
    assert ProlificSession.objects.count() == 1


def test_hook_is_post_only_and_needs_a_signature(client, settings):
    settings.PROLIFIC_WEBHOOK_SECRET = "s"
    assert client.get(reverse("prolific_hook")).status_code == 405
    assert client.post(reverse("prolific_hook"), b"{}", content_type="application/json").status_code == 403


def test_a_session_whose_tasks_were_taken_back_ends_with_a_message(client):
    from django.utils import timezone

    from hits.models import Assignment
    from hits.services import review

    batch = open_batch(k=2)
    start = reverse("prolific_start", args=[batch.pk])
    next_url = client.get(
        start, {"PROLIFIC_PID": "P1", "STUDY_ID": "STUDY1", "SESSION_ID": "500000000000000000000001"}
    )["Location"]
    session = ProlificSession.objects.get(session_id="500000000000000000000001")
    review.block_worker(worker_id=session.worker_id, reason="Automated answers")
    response = client.get(next_url)
    # Blocked long before the session's deadline: told so, not that the time ran out.
    shown = response.content.decode()
    assert response.status_code == 410 and "cannot take these tasks" in shown and "ran out" not in shown
    params = {"PROLIFIC_PID": "P1", "STUDY_ID": "STUDY1", "SESSION_ID": "500000000000000000000001"}
    again = client.get(start, params, follow=True)  # opening the study again: the same
    assert again.status_code == 409 and "cannot take these tasks" in again.content.decode()
    assert not Assignment.objects.filter(external_id="500000000000000000000001", status="assigned").exists()
    assert ProlificSession.objects.get(pk=session.pk).status == "abandoned"
    assert session.deadline > timezone.now()


def test_a_participant_blocked_after_finishing_still_gets_the_completion_code(client):
    from hits.services import review

    batch = open_batch(k=1)
    start = reverse("prolific_start", args=[batch.pk])
    params = {"PROLIFIC_PID": "P1", "STUDY_ID": "STUDY1", "SESSION_ID": "500000000000000000000002"}
    client.get(start, params)
    session = ProlificSession.objects.get(session_id=params["SESSION_ID"])
    (assignment,) = session.assignments()
    submit_assignment(assignment_id=assignment.pk, worker_id=session.worker_id, answers=all_answers(assignment))
    review.block_worker(worker_id=session.worker_id, reason="Too fast later")
    page = client.get(start, params, follow=True)
    assert page.status_code == 200 and "completion code" in page.content.decode()
