"""Walk 62: a draft batch (made to see what a batch would cost) counted in the dataset dashboard's
progress and spend: its places as work left and its budget as money to spend, so three drafts made
to compare costs turned "all done" into "92 of 484 assignments (19.0%), 392 left" and a $5 budget
into $56. The dataset's figures are its published batches'; a draft's own round still shows its own."""

from decimal import Decimal

import pytest
from django.urls import reverse

from hits.models import Batch

from .crowd_data import batch_of, simulated_round

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def test_drafts_are_not_work_left_nor_budget_on_the_dataset_dashboard(client, lead):
    dataset, published = simulated_round()
    Batch.objects.filter(pk=published.pk).update(budget=Decimal("40.00"))
    draft = batch_of(dataset, assignments=3)
    Batch.objects.filter(pk=draft.pk).update(budget=Decimal("50.00"))
    client.force_login(lead)

    data = client.get(reverse("dashboard_live", args=[dataset.pk])).json()["progress"]
    places = published.hits.count() * 3
    assert (data["places"], data["left"], data["batches"]) == (places, 0, 1)

    page = client.get(reverse("dashboard", args=[dataset.pk]))
    progress, (spend,) = page.context["progress"], page.context["spends"]
    assert (progress["places"], progress["percent"]) == (places, 100.0)
    assert spend["budget"] == Decimal("40.00")

    own = client.get(reverse("dashboard", args=[dataset.pk]) + f"?round={draft.pk}")
    assert own.context["progress"]["places"] == draft.hits.count() * 3  # the draft's round: its own places
    assert own.context["spends"][0]["budget"] == Decimal("50.00")
