"""`POST /api/batches/` retried by a lab's script: an `Idempotency-Key` makes one draft, whatever
the number of retries; the same key with another body is refused (docs/api.md). And the amounts
the API gives for a batch say their currency."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from hits.models import Batch

from .crowd_data import demo_dataset

pytestmark = pytest.mark.django_db


def client_of(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


@pytest.fixture
def demo(db):
    return demo_dataset()


def body(demo, **changes) -> dict:
    return {"dataset": demo.pk, "name": "retried", "assignments": 2, "systems": ["abs_bart_out"], **changes}


def test_a_retry_with_the_same_key_gets_the_first_batch(demo, lead):
    client = client_of(lead)
    first = client.post("/api/batches/", body(demo), format="json", HTTP_IDEMPOTENCY_KEY="job-7f3a")
    again = client.post("/api/batches/", body(demo), format="json", HTTP_IDEMPOTENCY_KEY="job-7f3a")
    assert first.status_code == again.status_code == 201, again.content
    assert again.json()["id"] == first.json()["id"]
    assert again.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers
    assert Batch.objects.filter(dataset=demo, kind=Batch.Kind.CROWD).count() == 1

    other = client.post("/api/batches/", body(demo), format="json", HTTP_IDEMPOTENCY_KEY="job-8b21")
    assert other.status_code == 201 and other.json()["id"] != first.json()["id"]


def test_the_same_key_with_another_body_is_refused_and_makes_nothing(demo, lead):
    client = client_of(lead)
    client.post("/api/batches/", body(demo), format="json", HTTP_IDEMPOTENCY_KEY="job-1")
    changed = client.post("/api/batches/", body(demo, assignments=3), format="json", HTTP_IDEMPOTENCY_KEY="job-1")
    assert changed.status_code == 422
    assert changed.json()["code"] == "idempotency_key_reused" and "job-1" in changed.json()["error"]
    assert Batch.objects.filter(dataset=demo, kind=Batch.Kind.CROWD).count() == 1


def test_keys_are_each_leads_own_and_a_failed_request_leaves_no_key(demo, lead, make_user):
    refused = client_of(lead).post(
        "/api/batches/", body(demo, systems=["no_such_system"]), format="json", HTTP_IDEMPOTENCY_KEY="k"
    )
    assert refused.status_code == 422
    made = client_of(lead).post("/api/batches/", body(demo), format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert made.status_code == 201, made.content
    other_lead = make_user("other-lead", "lead")
    theirs = client_of(other_lead).post("/api/batches/", body(demo), format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert theirs.status_code == 201 and theirs.json()["id"] != made.json()["id"]


@pytest.mark.parametrize("key", ["", "has space", "x" * 256, "naïve"])
def test_a_malformed_key_is_a_400_naming_the_header(demo, lead, key):
    response = client_of(lead).post("/api/batches/", body(demo), format="json", HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code == 400 and "Idempotency-Key" in response.json()["fields"]
    assert not Batch.objects.filter(dataset=demo, kind=Batch.Kind.CROWD).exists()


@pytest.mark.parametrize(
    "options, currency", [({}, "USD"), ({"provider": "prolific", "prolific": {"currency": "GBP"}}, "GBP")]
)
def test_the_batch_and_its_cost_say_their_currency(demo, lead, options, currency):
    client = client_of(lead)
    made = client.post("/api/batches/", body(demo, budget="20.00", **options), format="json")
    assert made.status_code == 201, made.content
    assert made.json()["currency"] == made.json()["spend"]["currency"] == currency
    cost = client.get(f"/api/batches/{made.json()['id']}/cost/").json()
    assert cost["currency"] == currency and cost["total"].count(".") == 1 and len(cost["total"].split(".")[1]) == 2
