"""Every HIT is paid by a pay bucket: buckets that leave some HITs without one are refused with a
message, on the API, the batch page and in the service, never a server error or a stale reward."""

from decimal import Decimal

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from hits.models import HIT, Batch
from hits.money import Bucket, check_buckets
from hits.services import batches

from .crowd_data import batch_of, demo_dataset

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def api_for(lead):
    api = APIClient(raise_request_exception=False)
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    return api


@pytest.mark.parametrize(
    "buckets, message",
    [
        ([{"min_acus": 6, "max_acus": None, "reward": "0.40"}], "the first bucket starts at 1 ACU, not 6"),
        ([{"min_acus": 1, "max_acus": 8, "reward": "0.20"}], "no bucket pays the HITs of 9, 10, 11, 12, 13 ACUs"),
    ],
)
def test_the_api_refuses_buckets_that_leave_hits_unpaid(lead, buckets, message):
    """Was a 500 ("no pay bucket covers 5 ACUs" raised as a ValueError)."""
    dataset = demo_dataset()
    before = Batch.objects.count()
    response = api_for(lead).post("/api/batches/", {"dataset": dataset.pk, "buckets": buckets}, format="json")
    assert response.status_code == 422, response.content
    body = response.json()
    assert body["code"] == "refused" and f"Pay buckets: {message}" in body["error"]
    assert Batch.objects.count() == before


def test_editing_buckets_cannot_leave_hits_at_their_old_reward(client, lead):
    """Rewards "1-8 0.20" on a batch with HITs of up to 13 ACUs were saved: the HITs of 9 to 13
    ACUs kept the old $0.35 with no bucket listing them (and an MTurk publish failed later)."""
    batch = batch_of(demo_dataset(), provider="inhouse")
    before = dict(HIT.objects.filter(batch=batch).values_list("pk", "reward"))
    with pytest.raises(batches.BatchError, match="no bucket pays the HITs of 9, 10, 11, 12, 13 ACUs"):
        batches.set_buckets(batch, [Bucket(1, 8, Decimal("0.20"))])
    client.force_login(lead)
    page = client.post(
        reverse("batch_action", args=[batch.pk, "buckets"]), {"buckets": "1-8 0.20"}, follow=True
    ).content.decode()
    assert "no bucket pays the HITs of 9, 10, 11, 12, 13 ACUs" in page
    assert dict(HIT.objects.filter(batch=batch).values_list("pk", "reward")) == before
    assert batch.buckets.count() == 5  # the buckets it had


def test_the_first_bucket_starts_at_one_acu():
    """Adaptive follow-ups and triage make HITs of as few ACUs as are left open (one)."""
    with pytest.raises(ValueError, match="starts at 1 ACU"):
        check_buckets([Bucket(2, None, Decimal("0.30"))])
    check_buckets([Bucket(1, None, Decimal("0.30"))])
