"""Authors are told about an expert round where they start, its task page has a way back, and the
lead's review page is no author's "My ACU work" (issue 47, item 11)."""

import pytest
from django.urls import reverse

from annotation.models import Reference
from annotation.services import authoring
from hits.services import expert

from .authoring_data import unauthored_dataset, unlabelled_dataset

pytestmark = pytest.mark.django_db


def test_an_author_learns_of_an_open_expert_round_on_the_home_page_and_can_go_back(client, author, tmp_path):
    client.force_login(author)
    assert 'id="expert-rounds"' not in client.get(reverse("home")).content.decode()
    batch = expert.create_round(unlabelled_dataset(tmp_path, documents=3), count=3, seed=0)
    home = client.get(reverse("home")).content.decode()
    assert 'id="expert-rounds"' in home and reverse("expert_round", args=[batch.pk]) in home
    assert "3 of 3 summaries still need an expert" in home

    opened = client.post(reverse("expert_next", args=[batch.pk]))
    task = client.get(opened.url).content.decode()
    assert 'id="expert-back"' in task and f'href="{reverse("expert_round", args=[batch.pk])}" id="expert-back"' in task


def test_the_lead_review_page_breadcrumb_leads_to_the_dataset_authoring(client, lead, author, make_user, tmp_path):
    dataset = unauthored_dataset(tmp_path, documents=2)
    authoring.assign_references(dataset=dataset, author_ids=[author.pk])
    reference = Reference.objects.filter(writer=author).first()
    sentences = [{"id": s.pk, "acus": []} for s in reference.sentences.all()]
    sentences[0]["acus"] = [{"id": None, "text": "A fact."}]
    authoring.save_reference(reference_id=reference.pk, user=author, base_version=0, sentences=sentences)
    authoring.submit_for_review(reference_id=reference.pk, user=author)
    client.force_login(lead)
    page = client.get(reverse("authoring_review", args=[reference.pk])).content.decode()
    crumbs = page.split('class="crumbs"')[1].split("</p>")[0]
    assert "My ACU work" not in crumbs and f"Authoring of {dataset.name}" in crumbs


def test_the_panel_page_says_a_local_study_link_is_unreachable_and_counts_ids_on_lists(client, lead):
    """Issue 47 item 12: the study link showed 127.0.0.1 with no word; "2 to approve" right after
    approving meant 2 ids on the list."""
    from .test_panel import open_panel

    batch = open_panel()
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk]), HTTP_HOST="127.0.0.1").content.decode()
    assert 'id="link-unreachable"' in page and "PUBLIC_BASE_URL" in page
    assert "to approve" not in page and "on the approval list" in page
