"""Every page that names a batch's stage or finish reads one figure of its waiting places
(`hits.selectors.waiting.waiting_summary`, kept WAITING_SECONDS in the pages cache): the batch
list counts them neither per batch nor per load, and says "Short of workers" when the dashboard
says the batch cannot finish; the batch page counts afresh and the others follow it."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from .crowd_data import demo_dataset, published_batch
from .test_handout import make_workers

pytestmark = [pytest.mark.portable, pytest.mark.django_db]


def list_page(client, dataset) -> tuple[int, str]:
    """(queries, page) of the batch list, read a second time: the first fills the pages cache."""
    url = reverse("batch_list", args=[dataset.pk])
    client.get(url)
    with CaptureQueriesContext(connection) as read:
        page = client.get(url).content.decode()
    return len(read), page


def test_the_batch_list_reads_as_many_queries_for_four_published_batches_as_for_one(client, lead):
    dataset = demo_dataset()
    make_workers(1, prefix="solo")  # one worker for three places a HIT: every batch is short of workers
    published_batch(dataset)
    client.force_login(lead)
    one, page = list_page(client, dataset)
    assert page.count("Short of workers") == 1
    for _ in range(3):
        published_batch(dataset)
    four, page = list_page(client, dataset)
    assert page.count("Short of workers") == 4  # the stage is still each batch's own
    assert four <= one, (one, four)


def test_the_list_the_dataset_page_and_the_dashboard_say_the_same_and_follow_the_batch_page(client, lead):
    dataset = demo_dataset()
    make_workers(1, prefix="solo")
    batch = published_batch(dataset)
    client.force_login(lead)
    dashboard = client.get(reverse("dashboard", args=[dataset.pk])).content.decode()
    assert 'id="cannot-finish"' in dashboard
    assert "Short of workers" in client.get(reverse("batch_list", args=[dataset.pk])).content.decode()
    assert "Short of workers" in client.get(reverse("dataset_detail", args=[dataset.pk])).content.decode()

    make_workers(2, prefix="more")  # now every open place has a worker who may take it
    # within the minute the pages keep the figure, the list says what the dashboard says
    assert "Short of workers" in client.get(reverse("batch_list", args=[dataset.pk])).content.decode()
    assert 'id="cannot-finish"' in client.get(reverse("dashboard", args=[dataset.pk])).content.decode()
    # the batch page counts afresh (it names the reasons) and every page follows it
    batch_page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert 'id="waiting-places"' not in batch_page and "Short of workers" not in batch_page
    assert "Short of workers" not in client.get(reverse("batch_list", args=[dataset.pk])).content.decode()
    assert "Short of workers" not in client.get(reverse("dataset_detail", args=[dataset.pk])).content.decode()
    assert 'id="cannot-finish"' not in client.get(reverse("dashboard", args=[dataset.pk])).content.decode()
