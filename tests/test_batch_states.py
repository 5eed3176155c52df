"""A lead's stop and extend on a batch in a state they do not apply to: a clear message, nothing
changed, never "Stopped" or "Extended" for a batch that was not (hits.services.batches); and the
batch's times (open until, auto-approval, the ledger's rows) written with their time zone."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse
from django.utils import timezone

from hits.models import Batch, LedgerEntry

from .crowd_data import batch_of, demo_dataset, published_batch

pytestmark = pytest.mark.django_db


def said(response) -> str:
    """The messages the batch page showed after the action (showing them clears them)."""
    return " ".join(str(m) for m in get_messages(response.wsgi_request))


def act(client, batch, action, **data):
    response = client.post(reverse("batch_action", args=[batch.pk, action]), data, follow=True)
    assert response.redirect_chain == [(reverse("batch_detail", args=[batch.pk]), 302)]
    return response


def test_a_draft_is_neither_stopped_nor_extended(client, lead):
    draft = batch_of(demo_dataset())
    client.force_login(lead)
    stop = act(client, draft, "stop")
    assert "no new HITs" not in said(
        stop
    ) and "state “Draft”: only a published or publishing batch can be stopped" in said(stop)
    extend = act(client, draft, "extend", hours="24")
    assert "Extended by" not in said(
        extend
    ) and "state “Draft”: only a published or stopped batch can be extended" in said(extend)
    draft.refresh_from_db()
    assert draft.status == Batch.Status.DRAFT and draft.expires_at is None


def test_a_stopped_batch_is_not_stopped_again_but_can_be_extended(client, lead):
    batch = published_batch(demo_dataset())
    client.force_login(lead)
    assert said(act(client, batch, "stop")) == "Stopped: no new HITs are handed out."
    again = act(client, batch, "stop")
    assert said(again) == "This batch is in state “Stopped”: only a published or publishing batch can be stopped."
    assert "Reopened for 24 hours" in said(act(client, batch, "extend", hours="24"))
    batch.refresh_from_db()
    assert batch.status == Batch.Status.PUBLISHED


@pytest.mark.parametrize("hours", ["abc", "nan", "0", "-3"])
def test_extend_by_something_not_hours_says_what_to_give(client, lead, hours):
    batch = published_batch(demo_dataset())
    before = batch.expires_at
    client.force_login(lead)
    response = act(client, batch, "extend", hours=hours)
    assert said(response) == "Extend by 1 hour to 1 year."
    batch.refresh_from_db()
    assert batch.expires_at == before


# --- times: each with its time zone -----------------------------------------------------------


def submitted_work(worker):
    from hits.services import handout
    from hits.services.submission import submit_assignment
    from hits.views.worker import inhouse_worker

    from .crowd_data import all_answers

    batch = published_batch(demo_dataset())
    w = inhouse_worker(worker)
    assignment = handout.next_assignment(w, batch)
    submit_assignment(assignment_id=assignment.pk, worker_id=w.pk, answers=all_answers(assignment))
    assignment.refresh_from_db()
    return batch, assignment


def test_the_batch_page_says_until_when_it_is_open_and_when_work_approves_itself(client, lead, settings):
    settings.TIME_ZONE = "Europe/Berlin"
    batch = published_batch(demo_dataset(), auto_approve_hours=48)
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    local = timezone.localtime(batch.expires_at)
    assert f'open until <b><time datetime="{local.isoformat()}">{local:%Y-%m-%d %H:%M} {local.tzname()}</time>' in page
    assert "approves itself 48 h after submission" in page

    extended = act(client, batch, "extend", hours="24")
    batch.refresh_from_db()
    local = timezone.localtime(batch.expires_at)
    assert said(extended) == f"Extended by 24 hours: open until {local:%Y-%m-%d %H:%M} {local.tzname()}."


def test_submitted_work_says_when_it_approves_itself_and_the_ledger_names_its_zone(client, lead, worker, settings):
    settings.TIME_ZONE = "America/New_York"
    batch, assignment = submitted_work(worker)
    client.force_login(lead)
    page = client.get(reverse("assignment_review", args=[assignment.pk])).content.decode()
    due = timezone.localtime(assignment.submitted_at + timedelta(seconds=batch.auto_approve_seconds))
    assert f"{due:%Y-%m-%d %H:%M} {due.tzname()}</time>" in page and 'id="auto-approve-at"' in page

    client.post(reverse("batch_review", args=[batch.pk]), {"assignment": [assignment.pk], "action": "approve"})
    page = client.get(reverse("assignment_review", args=[assignment.pk])).content.decode()
    assert 'id="auto-approve-at"' not in page  # decided: nothing waits
    ledger = client.get(reverse("batch_ledger", args=[batch.pk])).content.decode()
    entry = LedgerEntry.objects.get(batch=batch, kind="reward")
    when = timezone.localtime(entry.created_at)
    assert f"{when:%Y-%m-%d %H:%M:%S} {when.tzname()}</time>" in ledger
    assert '<div class="table-scroll" tabindex="0"><table class="data" id="ledger">' in ledger  # scrolls at 390 px


# --- publish with a broker: a refusal is told at once, never "publishing" that never comes ------------


def test_publishing_a_draft_over_its_budget_with_a_broker_is_refused_at_once(
    client, lead, django_capture_on_commit_callbacks
):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    draft = batch_of(demo_dataset(), budget=Decimal("0.01"))
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api.post(f"/api/batches/{draft.pk}/publish/")
    assert response.status_code == 422 and response.json()["code"] == "refused", response.content
    assert "exceeds the budget $0.01" in response.json()["error"] and not callbacks

    client.force_login(lead)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        page = act(client, draft, "publish")
    assert "exceeds the budget $0.01" in said(page) and "background" not in said(page) and not callbacks
    draft.refresh_from_db()
    assert draft.status == Batch.Status.DRAFT


def test_publishing_a_published_batch_again_with_a_broker_says_so(client, lead, django_capture_on_commit_callbacks):
    batch = published_batch(demo_dataset())
    client.force_login(lead)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        page = act(client, batch, "publish")
    assert said(page) == "The batch is already published." and not callbacks


def test_a_batch_stopped_before_its_end_does_not_say_it_was_open_until_next_week(client, lead):
    """Walk: a batch stopped today read "was open until 2026-12-14" (its end time, a week on);
    it now says it closed early and when it was to close."""
    batch = published_batch(demo_dataset())
    client.force_login(lead)
    act(client, batch, "stop")
    batch.refresh_from_db()
    assert batch.status == Batch.Status.STOPPED and batch.expires_at > timezone.now()
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    local = timezone.localtime(batch.expires_at)
    assert f'closed early; it was to stay open until <b><time datetime="{local.isoformat()}">' in page
    assert "was open until" not in page
    Batch.objects.filter(pk=batch.pk).update(expires_at=timezone.now() - timedelta(hours=1))
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert "was open until" in page and "closed early" not in page
