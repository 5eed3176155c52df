"""Prolific places cannot be hoarded and hooks cannot be replayed (issue 15, item 3)."""

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from hits.models import Assignment
from hits.providers.prolific import sessions
from hits.providers.prolific.models import ProlificSession
from hits.providers.prolific.sync import handle_hook, verify_signature

from .test_prolific_contract import SECRET, api, published, sign, worked_session  # noqa: F401
from .test_prolific_sessions import open_batch

pytestmark = pytest.mark.django_db


def test_made_up_participants_from_one_address_cannot_take_every_place(client, settings, still_ratelimit_clock):
    settings.PROLIFIC_SESSIONS_PER_ADDRESS = 3
    batch = open_batch(k=3, assignments=3)  # 9 HITs x 3 places = 27 places
    taken = []
    for i in range(13):
        r = client.get(
            f"/prolific/batch/{batch.pk}/",
            {"PROLIFIC_PID": f"FAKE{i}", "STUDY_ID": "STUDY1", "SESSION_ID": f"5{i:023d}"},
        )
        taken.append(r.status_code)
    assert taken[:3] == [302] * 3 and set(taken[3:]) == {409}
    assert ProlificSession.objects.filter(batch=batch).count() == 3
    assert (
        "Too many sessions of this study"
        in client.get(
            f"/prolific/batch/{batch.pk}/",
            {"PROLIFIC_PID": "FAKE99", "STUDY_ID": "STUDY1", "SESSION_ID": "500000000000000000000099"},
        ).content.decode()
    )
    # A real participant elsewhere still gets a session.
    real = client.get(
        f"/prolific/batch/{batch.pk}/",
        {"PROLIFIC_PID": "REAL", "STUDY_ID": "STUDY1", "SESSION_ID": "8cb2010d27e13509d3644362"},
        REMOTE_ADDR="10.1.2.3",
    )
    assert real.status_code == 302
    # Resuming one's own session is not a new session.
    again = client.get(
        f"/prolific/batch/{batch.pk}/",
        {"PROLIFIC_PID": "FAKE0", "STUDY_ID": "STUDY1", "SESSION_ID": "500000000000000000000000"},
    )
    assert again.status_code == 302


def test_idle_sessions_give_their_places_back(settings):
    settings.PROLIFIC_IDLE_SECONDS = 600
    batch = open_batch(k=3)
    idle = sessions.start_session(
        batch=batch, participant_id="IDLE", study_id="STUDY1", session_id="ce774d9cab3ae0bdf522cd08"
    )
    busy = sessions.start_session(
        batch=batch, participant_id="BUSY", study_id="STUDY1", session_id="a06b33d1ea28e90733617ec8"
    )
    assert sessions.release_idle() == 0  # both just started
    past = timezone.now() - timedelta(seconds=700)
    ProlificSession.objects.filter(pk__in=[idle.pk, busy.pk]).update(created_at=past)
    first = busy.assignments().order_by("pk").first()
    Assignment.objects.filter(pk=first.pk).update(status=Assignment.Status.SUBMITTED, submitted_at=timezone.now())
    assert sessions.release_idle() == 3
    assert not idle.assignments().filter(status__in=Assignment.ACTIVE).exists()
    assert ProlificSession.objects.get(pk=idle.pk).status == ProlificSession.Status.ABANDONED
    assert ProlificSession.objects.get(pk=busy.pk).status == ProlificSession.Status.ACTIVE


def test_a_signed_hook_counts_once_however_often_it_is_replayed(api, client):  # noqa: F811
    batch = published(api)
    worked_session(batch, "PID1", "5ab000000000000000000001")
    payload = json.dumps(
        {
            "resource_id": "5ab000000000000000000001",
            "event_type": "submission.status.change",
            "participant_id": "PID1",
            "status": "AWAITING REVIEW",
        }
    ).encode()
    headers = sign(payload)
    outcomes = [
        client.post("/prolific/hooks/", payload, content_type="application/json", **headers).json()["outcome"]
        for _ in range(20)
    ]
    assert outcomes[0] == "confirmed" and outcomes[1:] == ["replayed"] * 19


def test_timestamps_must_be_finite_and_bodies_small_and_flat(api, client, settings):  # noqa: F811
    now = time.time()
    for bad in ("nan", "NaN", "inf", "-inf", "1e999"):
        assert not verify_signature(
            b"{}", bad, sign(b"{}", timestamp=bad)["HTTP_X_PROLIFIC_REQUEST_SIGNATURE"], SECRET, now=now
        )
    deep = b'{"event_type": "x", "resource_id": "y", "a": ' + b"[" * 100000 + b"]" * 100000 + b"}"
    settings.PROLIFIC_HOOK_MAX_BYTES = 10**6
    response = client.post("/prolific/hooks/", deep, content_type="application/json", **sign(deep))
    assert response.status_code == 400 and response.json()["outcome"] == "not a Prolific hook"
    settings.PROLIFIC_HOOK_MAX_BYTES = 1000
    big = json.dumps({"event_type": "x", "resource_id": "y", "pad": "z" * 5000}).encode()
    assert (
        handle_hook(
            big,
            **{
                "timestamp": sign(big)["HTTP_X_PROLIFIC_REQUEST_TIMESTAMP"],
                "signature": sign(big)["HTTP_X_PROLIFIC_REQUEST_SIGNATURE"],
            },
        )[0]
        == 413
    )
