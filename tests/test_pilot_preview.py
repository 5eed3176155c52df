"""Issue 47, dead end: before publishing, the lead previews one of a draft batch's tasks as a worker
will see it (the summary, the reference, every fact with its answer buttons), and nothing is stored."""

import re

import pytest

from hits.models import Assignment, Batch

from .crowd_data import batch_of, demo_dataset

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def test_a_draft_batch_offers_a_preview_of_its_task(client, lead, worker):
    batch = batch_of(demo_dataset(), assignments=3)
    before = Assignment.objects.count()  # the imported labels' own
    assert batch.status == Batch.Status.DRAFT
    client.force_login(lead)
    page = client.get(f"/batches/{batch.pk}/").content.decode()
    link = re.search(r'id="pilot-preview" href="([^"]+)"', page)
    assert link, "the draft batch page links a preview"

    preview = client.get(link.group(1)).content.decode()
    hit = batch.hits.order_by("pk").first()
    assert hit.summary.text[:40] in preview
    acus = list(hit.summary.document.reference.acus.all())
    assert acus and all(acu.text in preview for acu in acus)
    assert preview.count('class="choice yes"') == len(acus)  # the answer buttons a worker gets
    assert 'id="submit-task"' not in preview and "Answers cannot be submitted" in preview
    assert Assignment.objects.count() == before and not batch.hits.filter(assignments__isnull=False).exists()
    batch.refresh_from_db()
    assert batch.status == Batch.Status.DRAFT

    client.force_login(worker)
    assert client.get(link.group(1)).status_code in (302, 403)  # leads only
