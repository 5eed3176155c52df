"""Participant-supplied Prolific ids (issue 26, items 4, 7 and 8): SESSION_ID must be Prolific's id
format and every id is quoted whole in API paths (never urljoined); PROLIFIC_PID over the length
or with control characters is a 400 with a message, writing nothing; the participant-group push
continues past a member Prolific refuses, shows them to the lead, and the sync keeps working."""

import pytest
from django.urls import reverse
from responses import matchers

from hits.models import Worker
from hits.provider_interface import ProviderError
from hits.providers.prolific import sync as prolific_sync
from hits.providers.prolific.client import ProlificClient
from hits.providers.prolific.models import ProlificGroupMember, ProlificSession, ProlificStudy

from .test_prolific_contract import API, AUTH, TOKEN, api, published, study_json  # noqa: F401 - the api fixture
from .test_prolific_sessions import open_batch

pytestmark = pytest.mark.django_db
STEERING = "../../../../internal/admin/export?all=1&x="


def test_a_session_id_that_is_not_prolifics_format_is_refused_before_anything(client):
    batch = open_batch(k=2)
    start = f"/prolific/batch/{batch.pk}/"
    for bad in (STEERING, "S1", "0" * 23, "g" * 24, "0" * 25):
        page = client.get(start, {"PROLIFIC_PID": "P1", "STUDY_ID": "STUDY1", "SESSION_ID": bad})
        assert page.status_code == 400 and "not a Prolific submission id" in page.content.decode()
    assert not ProlificSession.objects.exists() and not Worker.objects.filter(provider="prolific").exists()
    good = client.get(start, {"PROLIFIC_PID": "P1", "STUDY_ID": "STUDY1", "SESSION_ID": "5f" * 12})
    assert good.status_code == 302


def test_ids_are_quoted_whole_in_api_paths(api):  # noqa: F811
    """Even an id that reached the client unchecked stays one path segment under submissions/."""
    client = ProlificClient(token=TOKEN, base_url=API, retries=0)
    quoted = API + "submissions/..%2F..%2F..%2F..%2Finternal%2Fadmin%2Fexport%3Fall%3D1%26x%3D/"
    api.get(quoted, status=404, json={"error": {"detail": "Not found."}}, match=[AUTH])
    with pytest.raises(ProviderError, match=r"\(404\)"):
        client.get_submission(STEERING)
    assert api.calls[-1].request.url == quoted
    for dots in ("..", "."):
        with pytest.raises(ProviderError, match="nothing was sent"):
            client.get_submission(dots)
    # A "next page" link Prolific gives is followed only inside its API.
    api.get(
        API + "submissions/",
        json={"results": [], "_links": {"next": {"href": "https://elsewhere.example/steal"}}},
        match=[matchers.query_param_matcher({"study": "STUDY1", "page_size": "100"})],
    )
    with pytest.raises(ProviderError, match="outside its API"):
        list(client.list_submissions("STUDY1"))


@pytest.mark.parametrize(
    "pid, words",
    [("P" * 300, "not a Prolific id"), ("P1\x00", "control characters"), ("P1\x07x", "control characters")],
    ids=["300-characters", "NUL", "BEL"],
)
def test_a_bad_prolific_pid_is_a_400_with_a_message(client, settings, pid, words):
    batch = open_batch(k=2)
    session_id = "5f" * 12
    page = client.get(
        f"/prolific/batch/{batch.pk}/", {"PROLIFIC_PID": pid, "STUDY_ID": "STUDY1", "SESSION_ID": session_id}
    )
    assert page.status_code == 400 and words in page.content.decode()
    ProlificStudy.objects.create(batch=batch, kind="screening", study_id="SCREEN1", completion_code="C")
    from hits.services.qualification import build_test

    batch.qualification_test = build_test(dataset=batch.dataset, name="q", items=1)
    batch.save(update_fields=["qualification_test"])
    screen = client.get(
        f"/prolific/screening/{batch.pk}/", {"PROLIFIC_PID": pid, "STUDY_ID": "SCREEN1", "SESSION_ID": session_id}
    )
    assert screen.status_code == 400 and words in screen.content.decode()
    assert not Worker.objects.filter(provider="prolific").exists()


def test_the_group_push_continues_past_a_refused_member_and_the_sync_keeps_working(api, client, lead):  # noqa: F811
    batch = published(api)
    ProlificStudy.objects.create(
        batch=batch, kind="screening", study_id="SCREEN1", completion_code="C", participant_group_id="GROUP1"
    )
    members = {}
    for pid, sub in (("MADEUP", "0a" * 12), ("PID2", "0b" * 12), ("PID3", "0c" * 12)):
        worker = Worker.objects.create(provider="prolific", external_id=pid)
        members[pid] = ProlificGroupMember.objects.create(
            group_id="GROUP1", worker=worker, batch=batch, submission_id=sub
        )
    # The made-up pass comes first: Prolific does not know its submission.
    api.get(API + f"submissions/{'0a' * 12}/", status=404, json={"error": {"detail": "Not found."}})
    for pid, sub in (("PID2", "0b" * 12), ("PID3", "0c" * 12)):
        api.get(API + f"submissions/{sub}/", json={"id": sub, "study_id": "SCREEN1", "participant": pid})
    api.post(
        API + "participant-groups/GROUP1/participants/",
        json={"results": []},
        match=[matchers.json_params_matcher({"participant_ids": ["PID2", "PID3"]}, strict_match=True)],
    )
    api.get(API + "studies/STUDY1/", json=study_json("STUDY1", "ACTIVE"))
    api.get(
        API + "submissions/",
        json={"results": [], "_links": {"next": {"href": None}}},
        match=[matchers.query_param_matcher({"study": "STUDY1", "page_size": "100"})],
    )
    api.get(  # the screening study's submissions (paid ones go to the ledger), at each sync
        API + "submissions/",
        json={"results": [], "_links": {"next": {"href": None}}},
        match=[matchers.query_param_matcher({"study": "SCREEN1", "page_size": "100"})],
    )
    counts = prolific_sync.sync_batch(batch)  # does not raise
    assert counts["group failures"] == 1
    for pid in ("PID2", "PID3"):
        members[pid].refresh_from_db()
        assert members[pid].added_at is not None  # the real participants are in the group
    members["MADEUP"].refresh_from_db()
    assert members["MADEUP"].added_at is None and "404" in members["MADEUP"].error

    # The next sync does not ask about the refused member again, and does not fail.
    api.get(API + "studies/STUDY1/", json=study_json("STUDY1", "ACTIVE"))
    api.get(
        API + "submissions/",
        json={"results": [], "_links": {"next": {"href": None}}},
        match=[matchers.query_param_matcher({"study": "STUDY1", "page_size": "100"})],
    )
    assert "group failures" not in prolific_sync.sync_batch(batch)

    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert "not added to the participant group" in page and "MADEUP" in page
