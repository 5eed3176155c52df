"""A lead's stop and extend on a batch in a state they do not apply to: a clear message, nothing
changed, never "Stopped" or "Extended" for a batch that was not (hits.services.batches)."""

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from hits.models import Batch

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
    assert "Extended by 24 hours" in said(act(client, batch, "extend", hours="24"))
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
