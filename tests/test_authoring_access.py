"""Who may open and change authoring pages."""

import json

import pytest
from django.urls import reverse

from annotation import lead_review
from annotation.models import ACU, Reference
from annotation.services import authoring

from .authoring_data import unauthored_dataset

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


@pytest.fixture
def setup(tmp_path, author, make_user):
    dataset = unauthored_dataset(tmp_path, documents=2)
    other = make_user("bea-author", "author")
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    return dataset, Reference.objects.get(writer=author), other


def client_for(client, user):
    client.force_login(user)
    return client


def save_payload(reference, version=0, text="A fact."):
    sentences = [{"id": s.pk, "acus": []} for s in reference.sentences.all()]
    sentences[0]["acus"] = [{"id": None, "text": text}]
    return json.dumps({"version": version, "sentences": sentences})


def test_worker_cannot_open_authoring_pages(client, worker, setup):
    dataset, reference, _ = setup
    client_for(client, worker)
    for url in [
        reverse("authoring_queue"),
        reverse("authoring_write", args=[reference.pk]),
        reverse("authoring_review", args=[reference.pk]),
        reverse("authoring_overview", args=[dataset.pk]),
    ]:
        assert client.get(url).status_code == 403, url
    response = client.post(
        reverse("authoring_save", args=[reference.pk]), save_payload(reference), content_type="application/json"
    )
    assert response.status_code == 403
    assert not reference.acus.exists()


def test_anonymous_goes_to_login(client, setup):
    _, reference, _ = setup
    response = client.get(reverse("authoring_write", args=[reference.pk]))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_writer_saves_other_author_cannot(client, author, setup):
    _, reference, other = setup
    url = reverse("authoring_save", args=[reference.pk])
    client_for(client, other)
    response = client.post(url, save_payload(reference), content_type="application/json")
    assert response.status_code == 400 and "another author" in response.json()["error"]
    page = client.get(reverse("authoring_write", args=[reference.pk]))
    assert page.status_code == 200 and b'data-editable="false"' in page.content
    client_for(client, author)
    response = client.post(url, save_payload(reference), content_type="application/json")
    assert response.status_code == 200 and response.json()["version"] == 1
    conflict = client.post(url, save_payload(reference, version=0, text="Stale."), content_type="application/json")
    assert conflict.status_code == 409 and conflict.json()["conflict"] is True
    bad = client.post(url, b"{not json", content_type="application/json")
    assert bad.status_code == 400 and "JSON" in bad.json()["error"]


def test_author_cannot_review_own_reference(client, author, setup):
    dataset, reference, other = setup
    authoring.assign_references(dataset=dataset, author_ids=[other.pk], count=1)  # the dataset's second author
    authoring.save_reference(
        reference_id=reference.pk,
        user=author,
        base_version=0,
        sentences=json.loads(save_payload(reference))["sentences"],
    )
    authoring.submit_for_review(reference_id=reference.pk, user=author)
    client_for(client, author)
    page = client.get(reverse("authoring_review", args=[reference.pk]))
    assert page.status_code == 302  # sent back to the queue with a message
    response = client.post(reverse("authoring_review_action", args=[reference.pk, "approve"]), follow=True)
    assert "another author must review" in response.content.decode()
    reference.refresh_from_db()
    assert reference.status == Reference.Status.IN_REVIEW
    client_for(client, other)
    client.post(reverse("authoring_review_action", args=[reference.pk, "approve"]))
    reference.refresh_from_db()
    assert reference.status == Reference.Status.APPROVED


def test_only_leads_assign_work_and_edit_guidelines(client, lead, author, setup):
    dataset, _, other = setup
    url = reverse("authoring_overview", args=[dataset.pk])
    client_for(client, author)
    assert client.post(url, {"authors": [other.pk], "count": 1}).status_code == 403
    assert not Reference.objects.filter(writer=other).exists()
    client_for(client, lead)
    assert client.get(url).status_code == 200
    client.post(url, {"authors": [other.pk], "count": 1})
    assert Reference.objects.filter(writer=other).count() == 1
    client.post(url, {"guidelines": "Write short facts."})
    dataset.refresh_from_db()
    assert dataset.guidelines == "Write short facts."
    page = client.get(reverse("authoring_write", args=[Reference.objects.get(writer=other).pk]))
    assert "Write short facts." in page.content.decode()


def test_time_reports_only_for_own_work(client, author, setup):
    _, reference, other = setup
    url = reverse("authoring_time", args=[reference.pk])
    client_for(client, other)
    assert client.post(url, {"seconds": 10}).status_code == 403
    client_for(client, author)
    assert client.post(url, {"seconds": 10}).status_code == 200
    assert reference.times.get().seconds == 10
    gone = client.post(reverse("authoring_time", args=[reference.pk + 1000]), {"seconds": 10})
    assert gone.status_code == 404 and gone.json() == {"error": "No such reference."}  # JSON, as `save` answers


def _resubmitted_after_a_lead_sent_it_back(client, lead, author, setup):
    """A reference in review whose reviewer's page is from before a lead sent it back and the
    writer revised and resubmitted it: (reference, reviewer, the page's version)."""
    dataset, reference, other = setup
    authoring.assign_references(dataset=dataset, author_ids=[other.pk], count=1)
    sentences = json.loads(save_payload(reference))["sentences"]
    authoring.save_reference(reference_id=reference.pk, user=author, base_version=0, sentences=sentences)
    authoring.submit_for_review(reference_id=reference.pk, user=author)
    client_for(client, other)
    page = client.get(reverse("authoring_review", args=[reference.pk]))
    reference.refresh_from_db()
    shown = reference.version
    assert f'name="version" value="{shown}"' in page.content.decode()
    lead_review.lead_send_back(reference_id=reference.pk, by=lead, text="Split the first ACU.")
    reference.refresh_from_db()
    sentences[0]["acus"] = [{"id": None, "text": "A fact the reviewer never read."}]
    authoring.save_reference(
        reference_id=reference.pk, user=author, base_version=reference.version, sentences=sentences
    )
    authoring.submit_for_review(reference_id=reference.pk, user=author)
    reference.refresh_from_db()
    assert reference.reviewer == other and reference.status == Reference.Status.IN_REVIEW
    return reference, other, shown


def test_a_decision_from_a_review_page_opened_before_a_revision_is_refused(client, lead, author, setup):
    """The reviewer's Approve from a page opened before the revision approved ACUs nobody proofread
    and sent them to the crowd."""
    reference, reviewer, shown = _resubmitted_after_a_lead_sent_it_back(client, lead, author, setup)
    url = reverse("authoring_review_action", args=[reference.pk, "approve"])
    response = client.post(url, {"version": shown}, follow=True)
    assert "changed since you opened it" in response.content.decode()
    reference.refresh_from_db()
    assert reference.status == Reference.Status.IN_REVIEW
    assert not ACU.objects.filter(reference=reference, status=ACU.Status.APPROVED).exists()
    page = client.get(reverse("authoring_review", args=[reference.pk]))  # read it again, then decide
    assert "A fact the reviewer never read." in page.content.decode()
    client.post(url, {"version": reference.version})
    reference.refresh_from_db()
    assert reference.status == Reference.Status.APPROVED


def test_the_lead_approving_from_a_stale_review_page_is_refused(client, lead, author, setup):
    reference, _, shown = _resubmitted_after_a_lead_sent_it_back(client, lead, author, setup)
    client_for(client, lead)
    response = client.post(
        reverse("authoring_lead_action", args=[reference.pk, "approve"]), {"version": shown}, follow=True
    )
    assert "changed since you opened it" in response.content.decode()
    reference.refresh_from_db()
    assert reference.status == Reference.Status.IN_REVIEW


def test_a_refused_acu_is_named_by_its_place_and_nothing_is_stored(client, author, setup):
    """The editor marks the ACU a save refuses: the message says which one ("ACU 2 of sentence 2"), and
    the answer gives its sentence and its index in that sentence's list as sent."""
    _, reference, _ = setup
    sentences = [{"id": s.pk, "acus": []} for s in reference.sentences.all()]
    sentences[0]["acus"] = [{"id": None, "text": "A fact."}]
    sentences[1]["acus"] = [{"id": None, "text": "Another fact."}, {"id": None, "text": "x" * 1004}]
    client_for(client, author)
    response = client.post(
        reverse("authoring_save", args=[reference.pk]),
        json.dumps({"version": 0, "sentences": sentences}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json() == {
        "error": "ACU 2 of sentence 2 is 1,004 characters long; at most 1,000 are allowed. Split it into shorter facts.",
        "sentence": sentences[1]["id"],
        "acu": 1,
    }
    assert not reference.acus.exists()
    sentences[1]["acus"][1]["text"] = "Fact\x07 with a bell."
    response = client.post(
        reverse("authoring_save", args=[reference.pk]),
        json.dumps({"version": 0, "sentences": sentences}),
        content_type="application/json",
    )
    assert response.json()["error"].startswith("ACU 2 of sentence 2 “Fact\x07 with a bell.” holds a control character")
