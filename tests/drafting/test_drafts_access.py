"""Who may ask for drafts, pre-draft a dataset, read a job's progress and apply a budget."""

import json

import pytest
from django.urls import reverse

from annotation.models import DraftACU, DraftJob, Reference, ReferenceSentence
from annotation.services import authoring

from ..authoring_data import unauthored_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(tmp_path, author):
    dataset = unauthored_dataset(tmp_path, documents=2)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk], count=1)
    job = DraftJob.objects.create(dataset=dataset, drafter="rules")
    return dataset, Reference.objects.get(writer=author), job


def test_workers_and_authors_cannot_use_the_lead_tools(client, worker, author, setup):
    dataset, reference, job = setup
    for user in (worker, author):
        client.force_login(user)
        assert client.get(reverse("authoring_draft_job", args=[dataset.pk, job.pk])).status_code == 403
        assert client.post(reverse("authoring_budget", args=[dataset.pk]), {"percent": "50"}).status_code == 403
        assert client.post(reverse("authoring_overview", args=[dataset.pk]), {"predraft": "1"}).status_code == 403
    client.force_login(worker)
    resp = client.post(
        reverse("authoring_suggest", args=[reference.pk]), json.dumps({}), content_type="application/json"
    )
    assert resp.status_code == 403
    assert DraftJob.objects.count() == 1 and not DraftACU.objects.exists()
    assert not ReferenceSentence.objects.exclude(budget="").exists()


def test_leads_cannot_suggest_and_a_job_of_another_dataset_is_not_found(client, lead, setup, tmp_path):
    dataset, reference, job = setup
    client.force_login(lead)
    resp = client.post(
        reverse("authoring_suggest", args=[reference.pk]), json.dumps({}), content_type="application/json"
    )
    assert resp.status_code == 403  # suggesting is the writer's (authors only)
    other = unauthored_dataset(tmp_path, name="other", documents=1)
    assert client.get(reverse("authoring_draft_job", args=[other.pk, job.pk])).status_code == 404
    assert client.get(reverse("authoring_draft_job", args=[dataset.pk, job.pk])).json()["status"] == "queued"
    assert client.get(reverse("authoring_budget", args=[dataset.pk])).status_code == 405
