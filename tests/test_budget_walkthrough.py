"""A lead's walkthrough of budgets and the money pages: a budget set below what the batch already
spent or owes was confirmed as "Budget set to $1.00." with nothing of what it blocks; the dataset
overview read "$1.80 of $61.00 budget" with the spend of every batch against the budget of only the
batches that have one; "Extend 24 h" on a stopped batch reopened it without saying so; the ledger's
breadcrumb had no way back to the dataset."""

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from hits.batch_fields import BatchSpec
from hits.ledger import record
from hits.models import Assignment, Batch, Worker
from hits.selectors import figures
from hits.services import batches, money_budget

from .crowd_data import demo_dataset, published_batch
from .test_money_input import submitted_assignments

pytestmark = [pytest.mark.django_db, pytest.mark.portable]


def _paid(batch, amount: Decimal, n: int) -> None:
    worker = Worker.objects.create(provider=batch.provider, external_id=f"walk-{batch.pk}-{n}")
    paid = Assignment.objects.create(hit=batch.hits.order_by("pk").first(), worker=worker, status="approved")
    record(
        key=f"reward:walk:{batch.pk}:{n}",
        kind="reward",
        assignment=paid,
        worker=worker,
        batch=batch,
        amount=amount,
        by=None,
    )


def _said(client, batch, action, data) -> str:
    response = client.post(reverse("batch_action", args=[batch.pk, action]), data, follow=True)
    return [str(m) for m in response.context["messages"]][-1]


def test_a_budget_below_the_spend_and_owed_is_kept_and_says_what_it_blocks(client, lead):
    batch = published_batch(assignments=3)
    _paid(batch, Decimal("20.00"), 1)
    submitted_assignments(batch, 2)
    spent = money_budget.bonus_spend(batch)["total"]
    assert spent > Decimal("20.00")  # the ledger and the rewards owed
    client.force_login(lead)

    said = _said(client, batch, "budget", {"budget": "1.00"})
    assert said == (
        f"Budget set to $1.00: below the {money_budget.batch_money(batch, spent)} already spent or owed, so every "
        "bonus is refused unless “Pay over the budget” is ticked; approving work still pays its reward."
    )
    assert Batch.objects.get(pk=batch.pk).budget == Decimal("1.00")  # kept: a lead may stop bonuses so
    batch.refresh_from_db()
    assert money_budget.bonus_passes_budget(batch, "0.01") is not None  # what the message says it blocks
    assert _said(client, batch, "budget", {"budget": "500"}) == "Budget set to $500.00."


def test_a_draft_budget_below_its_estimate_says_publishing_is_refused(client, lead):
    draft = batches.create_batch(dataset=demo_dataset(), spec=BatchSpec(name="draft", assignments=3))
    estimate = batches.cost_estimate(draft)["total"]
    client.force_login(lead)
    said = _said(client, draft, "budget", {"budget": "0.01"})
    assert said == (
        f"Budget set to $0.01: below the estimated cost {money_budget.batch_money(draft, estimate)}, "
        "so publishing is refused until the budget is raised."
    )
    assert batches.publish_refusal(Batch.objects.get(pk=draft.pk))  # it is


def test_the_dataset_budget_is_held_against_the_spend_of_the_budgeted_batches_only(client, lead):
    dataset = demo_dataset()
    systems = list(dataset.systems.order_by("name"))
    budgeted = batches.create_batch(
        dataset=dataset, spec=BatchSpec(name="b", budget=Decimal("61.00")), systems=systems[:1]
    )
    free = batches.create_batch(dataset=dataset, spec=BatchSpec(name="f"), systems=systems[1:2])
    Batch.objects.filter(pk__in=[budgeted.pk, free.pk]).update(status=Batch.Status.PUBLISHED)
    _paid(budgeted, Decimal("0.60"), 1)
    _paid(free, Decimal("1.20"), 2)

    spend = figures.spend(Batch.objects.filter(pk__in=[budgeted.pk, free.pk]))
    assert (spend["total"], spend["budget"], spend["budgeted"], spend["unbudgeted"]) == (
        Decimal("1.80"),
        Decimal("61.00"),
        Decimal("0.60"),
        Decimal("1.20"),
    )
    assert spend["budget_left"] == Decimal("60.40") and spend["share"] == 1.0

    client.force_login(lead)
    page = client.get(reverse("dashboard", args=[dataset.pk])).content.decode()
    text = re.sub(r"<[^>]+>", "", page)
    assert "$1.80 of $61.00 budget" not in text
    assert "$0.60 of $61.00 budget (1.0%) by the batches with a budget; $1.20 by the batches with none" in text
    assert re.search(r'id="budget-left">\$60\.40<', page)


def test_extend_on_a_stopped_batch_is_labelled_reopen_and_reopens_it(client, lead):
    batch = batches.stop_batch(published_batch(assignments=3))
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert '<button type="submit" id="extend">Reopen for 24 h</button>' in page
    said = _said(client, batch, "extend", {"hours": "24"})
    assert said.startswith("Reopened for 24 hours: open until ")
    batch.refresh_from_db()
    assert batch.status == Batch.Status.PUBLISHED and batch.expires_at > timezone.now() + timedelta(hours=23)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert '<button type="submit" id="extend">Extend 24 h</button>' in page


def test_a_run_out_batch_is_labelled_reopen(client, lead):
    batch = published_batch(assignments=3)
    Batch.objects.filter(pk=batch.pk).update(expires_at=timezone.now() - timedelta(hours=1))
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert '<button type="submit" id="extend">Reopen for 24 h</button>' in page


def test_the_ledger_breadcrumb_leads_back_to_the_dataset(client, lead):
    batch = published_batch(assignments=3)
    client.force_login(lead)
    page = client.get(reverse("batch_ledger", args=[batch.pk])).content.decode()
    crumbs = re.search(r'<p class="crumbs">(.*?)</p>', page, re.S).group(1)
    assert f'href="{reverse("dataset_detail", args=[batch.dataset_id])}"' in crumbs
    assert f'href="{reverse("batch_list", args=[batch.dataset_id])}"' in crumbs
    assert f'href="{reverse("batch_detail", args=[batch.pk])}"' in crumbs
