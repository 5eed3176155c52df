"""Two copies of one `POST /api/batches/` with the same Idempotency-Key at the same moment (a
client's retry fired while the first request still runs): PostgreSQL's unique key on
(lead, key) holds the second until the first commits; then it answers with the first's batch."""

import threading

import pytest
from django.db import connection

from hits.models import Batch, BatchRequest
from hits.services import batches

from .crowd_data import WAIT, demo_dataset, waiting_on_a_lock
from .test_batch_create_retry import body, client_of

pytestmark = pytest.mark.django_db(transaction=True)


def _two_at_once(lead, demo, monkeypatch, key: str, first_then=None):
    """Send two copies of one request with `key`: the first stops inside its transaction (its
    key's row written, not committed) until the second waits on that row, then goes on (or, with
    `first_then`, raises what it returns). Returns (replies by name, whether the second waited,
    the threads that called create_batch, in order)."""
    inside, release = threading.Event(), threading.Event()
    original = batches.create_batch
    calls = []

    def held_create_batch(**kwargs):
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            inside.set()
            assert release.wait(WAIT), "the test never let the first request go"
            if first_then is not None:
                raise first_then()
        return original(**kwargs)

    monkeypatch.setattr(batches, "create_batch", held_create_batch)
    replies = {}

    def send(name):
        try:
            replies[name] = client_of(lead).post("/api/batches/", body(demo), format="json", HTTP_IDEMPOTENCY_KEY=key)
        finally:
            connection.close()

    first = threading.Thread(target=send, args=("first",), name="first")
    first.start()
    assert inside.wait(WAIT)
    second = threading.Thread(target=send, args=("second",), name="second")
    second.start()
    overlapped = waiting_on_a_lock(WAIT)  # the second request blocks on the first's key row
    release.set()
    first.join(WAIT)
    second.join(WAIT)
    return replies, overlapped, calls


def test_two_requests_with_one_key_at_once_make_one_batch(lead, monkeypatch):
    demo = demo_dataset()
    replies, overlapped, calls = _two_at_once(lead, demo, monkeypatch, "job-at-once")

    assert overlapped, "the second request never waited for the first"
    assert calls == ["first"]  # the second made nothing
    a, b = replies["first"], replies["second"]
    assert a.status_code == b.status_code == 201, (a.content, b.content)
    assert a.json()["id"] == b.json()["id"] and a.json() == b.json()
    assert b.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in a.headers
    assert Batch.objects.filter(dataset=demo, kind=Batch.Kind.CROWD).count() == 1
    assert BatchRequest.objects.get(key="job-at-once").batch_id == a.json()["id"]


def test_a_second_request_waiting_on_a_first_that_fails_makes_the_batch(lead, monkeypatch):
    """The first request fails after writing its key (its transaction rolls back, leaving no key):
    the one waiting behind it makes the batch, once."""
    demo = demo_dataset()
    replies, overlapped, calls = _two_at_once(
        lead,
        demo,
        monkeypatch,
        "job-fails-first",
        first_then=lambda: batches.BatchError("No approved summary with ACUs to make HITs of."),
    )

    assert overlapped and calls == ["first", "second"]
    assert replies["first"].status_code == 422 and replies["second"].status_code == 201
    assert "Idempotent-Replayed" not in replies["second"].headers
    assert Batch.objects.filter(dataset=demo, kind=Batch.Kind.CROWD).count() == 1
    assert BatchRequest.objects.get(key="job-fails-first").batch_id == replies["second"].json()["id"]
