"""Every money box names the batch's currency (walkthrough of a Prolific batch in GBP): the batch page
said "spent £0.00 of £13.56 estimated (budget £50.00…)" beside a box labelled "Budget ($)", a bonus
"Amount ($)", and the new batch form's help "Dollars; ..."; a budget of 999999999999.99 got Django's
"Ensure that there are no more than 10 digits in total." instead of the app's message; and a
Prolific session paying less an hour than the batch's "Calibration to £12.00/hour" target said
nothing of it."""

import re
from decimal import Decimal

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from hits.api.batches import BatchCreateInput
from hits.calibration import MIN_TIMED_HITS, too_few_timed
from hits.models import Assignment, Batch, Worker
from hits.providers.prolific.config import config
from hits.providers.prolific.plans import session_plan
from hits.services.money_budget import BudgetError, set_budget

from .crowd_data import BATCH_FORM, batch_of, demo_dataset, scored, simulated_round
from .test_calibration_minimum import timed
from .test_prolific_sessions import open_batch

pytestmark = [pytest.mark.django_db, pytest.mark.portable]

FORM = {**BATCH_FORM, "gold_share": 0}
PROLIFIC_GBP = {
    "provider": "prolific",
    "prolific_currency": "GBP",
    "prolific_session_minutes": 10,
    "prolific_min_approval_rate": 95,
    "prolific_languages": "19",
    "prolific_devices": "desktop",
    "prolific_group_mode": "allow",
    "prolific_screening_minutes": 5,
}
TOO_LARGE = "999999999999.99"


def labels(page: str) -> dict[str, str]:
    """{for: text} of the page's labels."""
    return {m[0]: re.sub(r"<[^>]+>", "", m[1]).strip() for m in re.findall(r'<label for="([^"]+)">(.*?)</label>', page)}


def gbp_draft(client, lead) -> Batch:
    """The walkthrough's batch: a Prolific draft in GBP with a £50 budget, made on the new batch form."""
    dataset = demo_dataset()
    client.force_login(lead)
    response = client.post(reverse("batch_new", args=[dataset.pk]), {**FORM, **PROLIFIC_GBP, "budget": "50"})
    assert response.status_code == 302, response.context["form"].errors
    return Batch.objects.get(pk=int(response["Location"].strip("/").rsplit("/", 1)[1]))


def submitted(batch) -> Assignment:
    worker = Worker.objects.create(provider=batch.provider, external_id="5ab000000000000000000001")
    return Assignment.objects.create(hit=batch.hits.order_by("pk").first(), worker=worker, status="submitted")


def test_a_gbp_prolific_batchs_money_boxes_say_pounds(client, lead):
    batch = gbp_draft(client, lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert "budget £50.00" in page  # the figures were already in pounds
    shown = labels(page)
    assert shown["id_budget"] == "Budget (£)"
    assert shown["bonus-amount"] == "Amount (£)"
    assert shown["id_buckets"].startswith("Pay buckets, rewards in £")
    assert "($)" not in page and "Dollars" not in page
    review = client.get(reverse("assignment_review", args=[submitted(batch).pk])).content.decode()
    assert labels(review)["bonus-amount"] == "Amount (£)" and "($)" not in review


def test_a_usd_inhouse_batchs_money_boxes_say_dollars(client, lead):
    batch = batch_of(demo_dataset(), budget=Decimal("20.00"))
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    shown = labels(page)
    assert shown["id_budget"] == "Budget ($)" and shown["bonus-amount"] == "Amount ($)"
    assert shown["id_buckets"].startswith("Pay buckets, rewards in $")
    assert "£" not in page
    review = client.get(reverse("assignment_review", args=[submitted(batch).pk])).content.decode()
    assert labels(review)["bonus-amount"] == "Amount ($)"


def test_the_new_batch_form_and_the_api_name_no_currency_before_it_is_chosen(client, lead):
    """The provider (and a Prolific account's currency) is chosen on the same form: its budget box
    names the batch's currency without a sign, and so does the API's field help."""
    dataset = demo_dataset()
    client.force_login(lead)
    page = client.get(reverse("batch_new", args=[dataset.pk])).content.decode()
    assert labels(page)["id_budget"] == "Budget (in the batch&#x27;s currency)"
    assert "Dollars" not in page and "($)" not in page
    budget_help = BatchCreateInput().fields["budget"].help_text
    assert "currency" in budget_help and "ollar" not in budget_help
    schema = client.get("/api/schema/?format=json")
    assert schema.status_code == 200 and "Dollars;" not in schema.content.decode()


def test_a_bucket_reward_out_of_bounds_is_refused_in_the_batchs_currency(client, lead):
    batch = gbp_draft(client, lead)
    response = client.post(
        reverse("batch_action", args=[batch.pk, "buckets"]), {"buckets": "1-5 0\n6+ 0.30"}, follow=True
    )
    text = " ".join(str(m) for m in response.context["messages"])
    assert "at least £0.01" in text and "a bucket pays £0.01 to £100.00 per HIT" in text
    assert "$" not in text


def _api(lead) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=lead)[0].key}")
    return api


@pytest.mark.parametrize(
    "provider, options, want",
    [
        ("inhouse", {}, "The budget is between $0.00 and $99,999,999.99."),
        ("prolific", {"currency": "GBP"}, "The budget is between £0.00 and £99,999,999.99."),
    ],
)
def test_a_very_large_budget_gets_the_apps_message_on_the_form_and_the_api(client, lead, provider, options, want):
    dataset = demo_dataset()
    client.force_login(lead)
    form = {**FORM, "budget": TOO_LARGE, **(PROLIFIC_GBP if provider == "prolific" else {})}
    response = client.post(reverse("batch_new", args=[dataset.pk]), form)
    assert response.status_code == 400
    assert list(response.context["form"].errors["budget"]) == [want]
    assert "digits" not in response.content.decode()
    body = {"dataset": dataset.pk, "provider": provider, "budget": TOO_LARGE}
    if options:
        body[provider] = options
    api = _api(lead).post("/api/batches/", body, format="json")
    assert api.status_code == 400
    assert api.json()["fields"]["budget"] == [want]
    negative = _api(lead).post("/api/batches/", {**body, "budget": "-1"}, format="json")
    assert negative.status_code == 400 and negative.json()["fields"]["budget"] == [want]
    assert not Batch.objects.filter(kind=Batch.Kind.CROWD).exists()


def test_the_largest_budget_is_taken(client, lead):
    dataset = demo_dataset()
    client.force_login(lead)
    response = client.post(reverse("batch_new", args=[dataset.pk]), {**FORM, "budget": "99,999,999.99"})
    assert response.status_code == 302
    assert Batch.objects.get(kind=Batch.Kind.CROWD).budget == Decimal("99999999.99")


def test_a_session_paying_below_the_batchs_target_rate_says_so_beside_it(client, lead):
    """The walkthrough's draft: its session (timed by the first guess, the minutes Prolific shows the
    participants) pays less an hour than the £12.00 the calibration aims at."""
    batch = gbp_draft(client, lead)
    plan = session_plan(batch, config(batch))
    assert too_few_timed(plan.timed) and plan.hourly < batch.target_hourly_rate  # the case of the walkthrough
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    warning = re.search(r'<p class="notice warn" id="below-target">(.*?)</p>', page, re.S)
    assert warning, "no warning beside the target rate"
    said = re.sub(r"<[^>]+>", "", warning[1])
    assert f"£{plan.hourly}/hour" in said and "below this batch's target of £12.00/hour" in said
    assert "first guess" in said
    assert page.index("Calibration to £12.00/hour") < page.index('id="below-target"')


@pytest.mark.parametrize("seconds, below", [(150, True), (20, False)])
def test_a_session_timed_on_enough_hits_is_compared_with_the_target(client, lead, seconds, below):
    batch = open_batch(k=3, assignments=9, currency="GBP")
    timed(batch, [seconds] * MIN_TIMED_HITS)
    plan = session_plan(batch, config(batch))
    assert not too_few_timed(plan.timed) and (plan.hourly < batch.target_hourly_rate) is below
    client.force_login(lead)
    page = client.get(reverse("batch_detail", args=[batch.pk])).content.decode()
    assert ('id="below-target"' in page) is below
    if below:
        assert f"£{plan.hourly}/hour" in page and "first guess" not in page.split('id="below-target"')[1][:400]


def test_an_inhouse_batch_has_no_session_to_warn_of(client, lead):
    batch = batch_of(demo_dataset())
    client.force_login(lead)
    assert 'id="below-target"' not in client.get(reverse("batch_detail", args=[batch.pk])).content.decode()


def test_the_workers_page_bonus_box_names_the_rounds_currency(client, lead):
    dataset, batch = simulated_round()
    Batch.objects.filter(pk=batch.pk).update(provider="prolific", provider_config={"currency": "GBP"})
    Worker.objects.filter(assignments__hit__batch=batch).update(provider="prolific")
    scored(dataset, batch)
    client.force_login(lead)
    page = client.get(reverse("dashboard_workers", args=[dataset.pk]) + f"?round={batch.pk}").content.decode()
    boxes = re.findall(r'<input name="amount"[^>]*>', page)
    assert boxes and all('placeholder="Amount (£)"' in b and "Bonus amount (£) for" in b for b in boxes)


def _budget_box(client, batch, value) -> str:
    """What the batch page says after its budget box is sent with `value` (its last message)."""
    response = client.post(reverse("batch_action", args=[batch.pk, "budget"]), {"budget": value}, follow=True)
    return [str(m) for m in response.context["messages"]][-1]


@pytest.mark.parametrize("value", ["100000000", TOO_LARGE, "-1", "-0.01"])
def test_the_batch_pages_budget_box_refuses_out_of_bounds_as_the_api_does(client, lead, value):
    """Code review: the budget box added its own words to the parser's ("The budget must be at most
    £99,999,999.99. A budget is between £0.00 and £99,999,999.99."); it now says what the new batch
    form and the API say of the same amount (`money_refusal`), and keeps the budget it had."""
    batch = gbp_draft(client, lead)
    said = _budget_box(client, batch, value)
    assert said == "The budget is between £0.00 and £99,999,999.99."
    api = _api(lead).post(
        "/api/batches/",
        {"dataset": batch.dataset_id, "provider": "prolific", "prolific": {"currency": "GBP"}, "budget": value},
        format="json",
    )
    assert api.status_code == 400 and api.json()["fields"]["budget"] == [said]
    with pytest.raises(BudgetError) as refused:
        set_budget(batch, value)
    assert str(refused.value) == said
    assert Batch.objects.get(pk=batch.pk).budget == Decimal("50.00")


@pytest.mark.parametrize(
    "value, want",
    [
        ("lots", "The budget “lots” is not an amount of money: write it with a point for the cents, as 1.50."),
        ("12,50", "The budget “12,50” has a decimal comma: write the amount with a point for the cents, as 12.50."),
        ("12.505", "The budget “12.505” has a fraction of a cent; amounts are whole cents, never rounded."),
    ],
)
def test_the_budget_box_says_what_is_wrong_with_a_typed_budget(client, lead, value, want):
    batch = gbp_draft(client, lead)
    assert _budget_box(client, batch, value) == want
    assert Batch.objects.get(pk=batch.pk).budget == Decimal("50.00")


def test_the_budget_box_takes_the_bounds_and_clears(client, lead):
    batch = gbp_draft(client, lead)
    assert _budget_box(client, batch, "£99,999,999.99") == "Budget set to £99,999,999.99."
    # Below the draft's estimate: kept, and said what it blocks (tests/test_budget_walkthrough.py).
    assert _budget_box(client, batch, "0").startswith("Budget set to £0.00: below the estimated cost £")
    assert _budget_box(client, batch, "") == "Budget removed."
    assert Batch.objects.get(pk=batch.pk).budget is None
